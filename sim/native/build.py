"""Compile the engine and the fast path with mypyc: ``python -m sim.native.build [build|rebuild|clean|status]``.

``make run`` and ``make test`` run ``build``, which compiles only when a source of ``sim.native.guard.COMPILED``
differs from the last build's record (``rebuild`` compiles anyway). Why and how the build is guarded
against going stale: ``sim/native/guard.py``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from sim.native.guard import GROUP, RECORD, ROOT, built_modules, digests, sources, stale_reason


def clean() -> None:
    """Remove the compiled modules (the shared library among them) and their record."""
    for p in [*built_modules(), RECORD]:
        p.unlink(missing_ok=True)


def build() -> None:
    """Compile ``sim.native.guard.COMPILED`` in place with mypyc and record their sources' digests."""
    from mypyc.build import mypycify
    from setuptools import setup

    clean()
    files = sources()
    before = digests(files)
    cwd = Path.cwd()
    os.chdir(ROOT)  # mypycify derives module names from paths relative to the project root
    try:
        setup(
            name="flashplan-native",
            ext_modules=mypycify([str(f.relative_to(ROOT)) for f in files], opt_level="3", group_name=GROUP, target_dir="build/mypyc"),
            script_args=["--quiet", "build_ext", "--inplace", "--build-temp", "build/mypyc-temp"],
        )
    finally:
        os.chdir(cwd)
    if digests(files) != before:
        clean()
        raise SystemExit("flashplan: a compiled module's source changed during the build; run it again")
    RECORD.write_text(json.dumps({"python": sys.implementation.cache_tag, "sources": before}, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sim.native.build [build|rebuild|clean|status]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else "build"
    if command in ("build", "rebuild"):
        if command == "build" and built_modules() and stale_reason() is None:
            print("flashplan: engine and fast path compiled with mypyc, up to date")
            return 0
        try:
            build()
        except Exception as exc:  # a machine without a C compiler runs the interpreted modules
            clean()
            print(f"flashplan: the engine and the fast path stay interpreted, the mypyc build failed: {exc}", file=sys.stderr)
            return 1
        print(f"flashplan: engine and fast path compiled with mypyc ({len(sources())} modules)")
        return 0
    if command == "clean":
        clean()
        return 0
    if command == "status":
        reason = stale_reason() if built_modules() else "not built (python -m sim.native.build)"
        print("compiled with mypyc, current" if reason is None else f"interpreted: {reason}")
        return 0
    print("usage: python -m sim.native.build [build|rebuild|clean|status]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
