"""The package layering of design.md section 1, checked on the source text.

`framework/op_defs` (op definitions as data) imports only `framework`; `ops` and `kernels`
never import each other; and no module of `framework`, `ops` or `kernels` imports
tensorweave modules inside functions (the way import cycles get papered over).
"""

from __future__ import annotations

import ast
import pathlib

import tensorweave

_ROOT = pathlib.Path(tensorweave.__file__).parent

# Function-level imports that are not cycles: an optional module another change adds.
_ALLOWED_LOCAL_IMPORTS = {("ops/init_ops.py", "tensorweave.ops")}


def _modules(package: str) -> list[pathlib.Path]:
    return sorted((_ROOT / package).rglob("*.py"))


def _imports(tree: ast.AST, top_level_only: bool) -> list[tuple[str, int]]:
    """(imported tensorweave module, line) of the tree's imports."""
    nodes = tree.body if top_level_only else ast.walk(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(m, line) for m, line in found if m.startswith("tensorweave")]


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, child.end_lineno + 1))
    return lines


def test_op_defs_import_only_framework():
    bad = [
        f"{path.name}:{line} imports {module}"
        for path in _modules("framework/op_defs")
        for module, line in _imports(ast.parse(path.read_text()), top_level_only=False)
        if not module.startswith("tensorweave.framework")
    ]
    assert not bad, bad


def test_ops_and_kernels_never_import_each_other():
    bad = [
        f"{path.relative_to(_ROOT)}:{line} imports {module}"
        for package, other in (("ops", "tensorweave.kernels"), ("kernels", "tensorweave.ops"))
        for path in _modules(package)
        for module, line in _imports(ast.parse(path.read_text()), top_level_only=False)
        if module.startswith(other)
    ]
    assert not bad, bad


def test_no_function_level_tensorweave_imports():
    bad = []
    for package in ("framework", "ops", "kernels"):
        for path in _modules(package):
            tree = ast.parse(path.read_text())
            top = {line for _, line in _imports(tree, top_level_only=True)}
            guarded = _type_checking_lines(tree)
            rel = str(path.relative_to(_ROOT))
            for module, line in _imports(tree, top_level_only=False):
                if line in top or line in guarded:
                    continue
                if (rel, module) in _ALLOWED_LOCAL_IMPORTS:
                    continue
                bad.append(f"{rel}:{line} imports {module} inside a function")
    assert not bad, bad


def _imported_names(tree: ast.AST) -> list[tuple[str, int]]:
    """Fully qualified tensorweave names the tree imports (`from a import b` gives `a.b`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.extend((f"{node.module}.{alias.name}", node.lineno) for alias in node.names)
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
    return [(m, line) for m, line in found if m.startswith("tensorweave.ops.")]


def _is_gradient_rule_module(name: str) -> bool:
    return name.endswith("_grad") or "_grad_" in name or name.startswith("math_grad")


def test_op_modules_never_import_their_gradient_rules():
    """Gradient modules import the op modules; `ops/__init__` imports both (no cycles)."""
    bad = []
    for path in _modules("ops"):
        if path.name == "__init__.py" or _is_gradient_rule_module(path.stem):
            continue
        for name, line in _imported_names(ast.parse(path.read_text())):
            leaf = name.split(".")[2]
            if _is_gradient_rule_module(leaf):
                bad.append(f"ops/{path.name}:{line} imports {name}")
    assert not bad, bad
