"""No module-level mutable state outside the runtime object and the registries (issue 10):
a static check of tensorweave/'s sources against the list in docs/internals.md
("Process state")."""

from __future__ import annotations

import ast
import pathlib

import tensorweave

ROOT = pathlib.Path(tensorweave.__file__).parent

# Module-level objects changed after import, each justified in docs/internals.md.
ALLOWED_MUTATED = {
    ("framework/tensor_conversion.py", "_CONVERSIONS"),  # registry (TF's API)
    ("ops/variables.py", "_VARIABLE_CLASSES"),  # registry of one entry, filled at import
    ("logging.py", "_counts"),  # log_every_n counters per call site (TF's API state)
}
# Module-level instances of classes that hold state.
ALLOWED_INSTANCES = {
    ("distributed/process_runtime.py", "_DEFAULT"),  # the runtime object
    ("framework/graph.py", "_GRAPH_STACK"),  # TF's default-graph stack (per thread)
    ("framework/graph.py", "_DEFAULTS"),  # the global default graph, use_resource default
    ("framework/session_stack.py", "_STACK"),  # TF's default-session stack
    ("framework/py_funcs.py", "py_funcs"),  # keyed registry, entries owned by graphs
    ("framework/op_def.py", "op_def_registry"),
    ("kernels/registry.py", "kernel_registry"),
    ("ops/gradient_registry.py", "gradient_registry"),
    ("framework/function_runtime.py", "function_runtimes"),
    ("training/meta_graph_collections.py", "_proto_functions"),
}
_MUTATORS = {"append", "add", "update", "setdefault", "pop", "clear", "extend", "insert",
             "remove", "discard", "popitem", "put", "appendleft"}
_STATEFUL_CALLS = ("threading.local", "queue.", "Queue", "Registry", "FuncRegistry",
                   "_GraphStack", "_SessionStack", "_ProcessDefaults", "ProcessRuntime",
                   "ThreadEventFds", "FdCloser", "HostLocality", "TransferStats",
                   "LocalServers", "Outbox(", "WeakValueDictionary", "WeakKeyDictionary")


def _modules():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith("protos/"):
            yield rel, ast.parse(path.read_text())


def _module_names(tree: ast.Module) -> dict[str, ast.expr]:
    names = {}
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) and node.value
                   else [])
        for t in targets:
            if isinstance(t, ast.Name):
                names[t.id] = node.value
    return names


def _mutated_in_functions(tree: ast.Module, names: set[str]) -> set[str]:
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id in names and node.func.attr in _MUTATORS):
                out.add(node.func.value.id)
            targets = (node.targets if isinstance(node, ast.Assign | ast.Delete)
                       else [node.target] if isinstance(node, ast.AugAssign) else [])
            for t in targets:
                if (isinstance(t, ast.Subscript | ast.Attribute)
                        and isinstance(t.value, ast.Name) and t.value.id in names):
                    out.add(t.value.id)
    return out


def test_no_global_statements():
    found = [f"{rel}:{node.lineno}" for rel, tree in _modules() for node in ast.walk(tree)
             if isinstance(node, ast.Global)]
    assert found == []


def test_module_level_containers_are_not_changed_after_import():
    found = set()
    for rel, tree in _modules():
        containers = {name for name, value in _module_names(tree).items()
                      if isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp
                                    | ast.ListComp | ast.SetComp)
                      or (isinstance(value, ast.Call)
                          and ast.unparse(value.func) in ("dict", "list", "set",
                                                          "collections.OrderedDict",
                                                          "collections.defaultdict"))}
        found |= {(rel, name) for name in _mutated_in_functions(tree, containers)}
    assert found - ALLOWED_MUTATED == set()


def test_stateful_module_level_objects_are_the_documented_ones():
    found = set()
    for rel, tree in _modules():
        if rel.startswith("testing/"):
            continue
        for name, value in _module_names(tree).items():
            if isinstance(value, ast.Call) and any(
                    s in ast.unparse(value.func) + "(" for s in _STATEFUL_CALLS):
                found.add((rel, name))
    assert found == ALLOWED_INSTANCES


def test_the_check_sees_a_mutated_module_dict():
    tree = ast.parse("_CACHE = {}\n\ndef f(k, v):\n    _CACHE[k] = v\n")
    assert _mutated_in_functions(tree, {"_CACHE"}) == {"_CACHE"}
