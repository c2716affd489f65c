#!/usr/bin/env python3
"""Regenerate the ``*_pb2.py`` / ``*_pb2.pyi`` modules of ``tensorweave/protos``.

Usage::

    python scripts/gen_protos.py           # regenerate in place
    python scripts/gen_protos.py --check   # exit 1 if committed files are stale

The ``.proto`` files are compiled with ``grpc_tools.protoc`` using the
repository root as the import path, so ``tensorweave/protos/foo.proto`` becomes
``tensorweave/protos/foo_pb2.py`` and generated modules import each other as
``from tensorweave.protos import foo_pb2``. Well-known types
(``google/protobuf/any.proto``) come from the include directory bundled with
grpcio-tools.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = REPO_ROOT / "tensorweave" / "protos"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi")


def proto_files() -> list[Path]:
    """All ``.proto`` files under ``tensorweave/protos``, sorted."""
    return sorted(PROTO_DIR.glob("*.proto"))


def expected_outputs(protos: list[Path]) -> list[str]:
    """Paths (relative to the repo root) of the files generated from ``protos``."""
    out = []
    for proto in protos:
        rel = proto.relative_to(REPO_ROOT).with_suffix("")
        for suffix in GENERATED_SUFFIXES:
            out.append(rel.as_posix() + suffix)
    return sorted(out)


def run_protoc(out_dir: Path, protos: list[Path]) -> None:
    """Compile ``protos`` into ``out_dir`` (which mirrors the repo layout)."""
    try:
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - depends on environment
        raise SystemExit(
            "grpcio-tools is required to generate protos (pip install grpcio-tools)"
        ) from exc
    import grpc_tools

    include_dir = Path(grpc_tools.__file__).resolve().parent / "_proto"
    args = [
        "grpc_tools.protoc",
        f"--proto_path={REPO_ROOT}",
        f"--proto_path={include_dir}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
    ]
    # Paths relative to the proto_path keep descriptor names stable
    # ("tensorweave/protos/foo.proto") regardless of where the repo lives.
    args += [p.relative_to(REPO_ROOT).as_posix() for p in protos]
    rc = protoc.main(args)
    if rc != 0:
        raise SystemExit(f"protoc failed with exit code {rc}")


def committed_outputs() -> list[str]:
    """Generated-looking files currently present in ``tensorweave/protos``."""
    found = []
    for suffix in GENERATED_SUFFIXES:
        for path in PROTO_DIR.glob("*" + suffix):
            found.append(path.relative_to(REPO_ROOT).as_posix())
    return sorted(found)


def find_stale(tmp_root: Path, protos: list[Path]) -> list[str]:
    """Compare files generated under ``tmp_root`` with the committed ones."""
    stale = []
    expected = expected_outputs(protos)
    for rel in expected:
        fresh = tmp_root / rel
        current = REPO_ROOT / rel
        if not fresh.is_file():
            stale.append(f"{rel} (not produced by protoc)")
        elif not current.is_file():
            stale.append(f"{rel} (missing)")
        elif fresh.read_bytes() != current.read_bytes():
            stale.append(f"{rel} (out of date)")
    for rel in committed_outputs():
        if rel not in expected:
            stale.append(f"{rel} (no matching .proto)")
    return stale


def check() -> int:
    """Generate into a temp dir and report stale committed files."""
    protos = proto_files()
    with tempfile.TemporaryDirectory(prefix="tw_protos_") as tmp:
        tmp_root = Path(tmp)
        run_protoc(tmp_root, protos)
        stale = find_stale(tmp_root, protos)
    if stale:
        print("Generated proto modules are stale; run `python scripts/gen_protos.py`:")
        for entry in stale:
            print(f"  {entry}")
        return 1
    print(f"{len(protos)} proto files: generated modules are up to date.")
    return 0


def generate() -> int:
    """Regenerate every module in place, removing orphans."""
    protos = proto_files()
    with tempfile.TemporaryDirectory(prefix="tw_protos_") as tmp:
        tmp_root = Path(tmp)
        run_protoc(tmp_root, protos)
        expected = expected_outputs(protos)
        for rel in committed_outputs():
            if rel not in expected:
                (REPO_ROOT / rel).unlink()
                print(f"removed {rel}")
        for rel in expected:
            fresh = tmp_root / rel
            current = REPO_ROOT / rel
            if current.is_file() and current.read_bytes() == fresh.read_bytes():
                continue
            shutil.copyfile(fresh, current)
            print(f"wrote {rel}")
    init = PROTO_DIR / "__init__.py"
    if not init.exists():
        init.write_text('"""Generated protocol buffer modules."""\n')
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write anything; exit 1 and list stale files if regeneration "
        "would change the committed modules",
    )
    args = parser.parse_args(argv)
    return check() if args.check else generate()


if __name__ == "__main__":
    sys.exit(main())
