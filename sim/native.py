"""The analytic fast path compiled to C with mypyc, and the guard that keeps a stale build out.

``python -m sim.build_fastpath`` compiles the modules of ``sim/analytic`` in place with mypyc (from
mypy, a dev dependency) and gcc, and records the SHA-256 of each source beside them
(``sim/_fastpath.json``). ``make run`` and ``make test`` build it when a source is newer. The compiled
modules are the same code (every test runs against them): they only run faster: 2.0x on a new scenario and
2.3-2.5x on a cached network (``python -m bench.fastpath`` measures both builds; tests/test_native.py
checks that they answer alike, to the last bit).

When ``sim`` is imported, ``use_interpreted_if_stale`` compares the record with the sources. If a
source changed since the build, there is no build, or ``FLASHPLAN_INTERPRETED=1`` is set, the
``sim.analytic`` modules are loaded from their ``.py`` files instead, so an edit is never shadowed
by an old build; ``status()`` says which is in use and why.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

SIM_DIR = Path(__file__).resolve().parent
ROOT = SIM_DIR.parent
PACKAGE = "sim.analytic"
PACKAGE_DIR = SIM_DIR / "analytic"
RECORD = SIM_DIR / "_fastpath.json"
GROUP = "sim._fastpath"  # the shared library mypyc builds: sim/_fastpath__mypyc.*.so
ENV_INTERPRETED = "FLASHPLAN_INTERPRETED"

_reason = "not checked yet"


def sources() -> list[Path]:
    """The fast path's source files, in a fixed order."""
    return sorted(PACKAGE_DIR.glob("*.py"))


def module_name(source: Path) -> str:
    """``sim/analytic/network.py`` -> ``sim.analytic.network``; the package's ``__init__`` -> ``sim.analytic``."""
    return PACKAGE if source.stem == "__init__" else f"{PACKAGE}.{source.stem}"


def digests(files: Sequence[Path]) -> dict[str, str]:
    """SHA-256 of each file, keyed by its name."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def built_modules() -> list[Path]:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [p for p in PACKAGE_DIR.iterdir() if p.name.endswith(suffixes)]


def stale_reason(record: Path = RECORD, files: Sequence[Path] | None = None) -> str | None:
    """Why the compiled build must not be used (no build, a source changed), or None when it is current."""
    files = sources() if files is None else files
    if not record.exists():
        return "not built (python -m sim.build_fastpath)"
    try:
        built = json.loads(record.read_text())
    except (OSError, ValueError) as exc:
        return f"build record unreadable: {exc}"
    if built.get("python") != sys.implementation.cache_tag:
        return f"built for {built.get('python')}, running {sys.implementation.cache_tag}"
    now = digests(files)
    changed = sorted(name for name in set(now) | set(built.get("sources", {})) if now.get(name) != built["sources"].get(name))
    if changed:
        return "sources changed since the build: " + ", ".join(changed)
    return None


class _InterpretedFinder(importlib.abc.MetaPathFinder):
    """Loads the ``sim.analytic`` modules from their ``.py`` files, ahead of the compiled ones."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == PACKAGE:
            return importlib.util.spec_from_file_location(fullname, PACKAGE_DIR / "__init__.py", submodule_search_locations=[str(PACKAGE_DIR)])
        if fullname.startswith(PACKAGE + "."):
            source = PACKAGE_DIR / (fullname.rsplit(".", 1)[1] + ".py")
            if source.exists():
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def use_interpreted_if_stale() -> None:
    """Called by ``sim/__init__``: keep a missing, stale or unwanted build out of ``sim.analytic``."""
    global _reason
    if os.environ.get(ENV_INTERPRETED, "") not in ("", "0"):
        _reason = f"{ENV_INTERPRETED} is set"
    elif not built_modules():
        _reason = "not built (python -m sim.build_fastpath)"
    else:
        reason = stale_reason()
        if reason is None:
            _reason = ""
            return
        _reason = reason
    if not any(isinstance(f, _InterpretedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _InterpretedFinder())


def status() -> str:
    """'compiled with mypyc' or 'interpreted (<why>)': what ``sim.analytic`` runs as in this process."""
    module = sys.modules.get(PACKAGE)
    if module is not None:
        compiled = not str(getattr(module, "__file__", "")).endswith(".py")
        return "compiled with mypyc" if compiled else f"interpreted ({_reason or 'loaded from source'})"
    return "compiled with mypyc" if not _reason else f"interpreted ({_reason})"
