"""The engine and the analytic fast path compiled to C with mypyc, and the guard that keeps a stale build out.

``python -m sim.native.build`` compiles ``COMPILED`` (the DES engine's modules and ``sim/analytic``)
in place with mypyc (from mypy, a dev dependency) and gcc, and records the SHA-256 of each source
beside them (``sim/native/_native.json``). ``make run`` and ``make test`` build it when a source is newer.
The compiled modules are the same code (every test runs against them) and give the same answers to
the last bit (tests/native/test_native.py); they only run faster: the fast path 2.1x on a new scenario
and 2.3-2.5x on a cached network (``python -m bench.fastpath``), the simulation 1.46x on M/M/8
(``python -m bench.run``) and 1.6x on the flash examples. SimPy's own event loop stays interpreted.

Two things mypyc needs that plain Python does not: an attribute that holds a function is declared
as one (``Run.on_complete``), not a method replaced per instance; and a class whose subclass is
called (``Station(Meter)``) declares ``__call__`` itself, or the subclass's call fails.

When ``sim`` is imported, ``use_interpreted_if_stale`` compares the record with the sources. If a
source changed since the build, there is no build, or ``FLASHPLAN_INTERPRETED=1`` is set, every
compiled module is loaded from its ``.py`` file instead, so an edit is never shadowed by an old
build; ``status()`` says which is in use and why.
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

SIM_DIR = Path(__file__).resolve().parent.parent
ROOT = SIM_DIR.parent
COMPILED = ("des/components.py", "des/engine.py", "des/model.py", "des/rng.py", "des/stats.py", "route/volume.py", "analytic/__init__.py",
            "analytic/bursty.py", "analytic/cache.py", "analytic/demands.py", "analytic/solve.py", "analytic/tails.py",
            "des/arrivals.py", "des/dies.py", "des/assembly.py", "des/batching.py",
            "analytic/classes.py",
            "analytic/dies.py", "analytic/network.py", "analytic/paths.py", "analytic/queueing.py", "analytic/rebuild.py",
            "route/__init__.py", "route/derived.py",
            "route/describe.py", "route/elements.py", "route/flash.py", "route/host.py", "route/links.py", "route/san.py",
            "route/steps.py")
"""The modules mypyc compiles, relative to sim/: the DES hot path (engine, arrivals, batching, assembly,
components, model), the analytic fast path and the route descriptions both build from (the fast path
describes every new scenario it compiles)."""
RECORD = Path(__file__).resolve().parent / "_native.json"
GROUP = "sim.native._native"  # the shared library mypyc builds: sim/native/_native__mypyc.*.so
ENV_INTERPRETED = "FLASHPLAN_INTERPRETED"

_reason = "not checked yet"


def sources() -> list[Path]:
    """The compiled modules' source files, in a fixed order."""
    return [SIM_DIR / name for name in COMPILED]


def module_name(source: Path) -> str:
    """``sim/analytic/network.py`` -> ``sim.analytic.network``; a package's ``__init__`` -> the package."""
    parts = source.resolve().relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


_SOURCE_OF = {module_name(s): s for s in sources()}


def _key(f: Path) -> str:
    try:
        return f.resolve().relative_to(SIM_DIR).as_posix()
    except ValueError:
        return f.name


def digests(files: Sequence[Path]) -> dict[str, str]:
    """SHA-256 of each file, keyed by its path relative to sim/ (``analytic/network.py``)."""
    return {_key(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}


def built_modules() -> list[Path]:
    """The compiled extension modules beside the sources (and the shared library)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return [p for d in build_dirs() for p in d.iterdir() if p.name.endswith(suffixes)]


def build_dirs() -> list[Path]:
    """The folders the build writes to: each compiled module's and the shared library's (``GROUP``)."""
    group_dir = ROOT.joinpath(*GROUP.split(".")[:-1])
    return sorted({s.parent for s in sources()} | {group_dir})


def stale_reason(record: Path = RECORD, files: Sequence[Path] | None = None) -> str | None:
    """Why the compiled build must not be used (no build, a source changed), or None when it is current."""
    files = sources() if files is None else files
    if not record.exists():
        return "not built (python -m sim.native.build)"
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
    """Loads the compiled modules from their ``.py`` files, ahead of the extension modules."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        source = _SOURCE_OF.get(fullname)
        if source is None:
            return None
        if source.name == "__init__.py":
            return importlib.util.spec_from_file_location(fullname, source, submodule_search_locations=[str(source.parent)])
        return importlib.util.spec_from_file_location(fullname, source)


def use_interpreted_if_stale() -> None:
    """Called by ``sim/__init__``: keep a missing, stale or unwanted build out of every compiled module."""
    global _reason
    if os.environ.get(ENV_INTERPRETED, "") not in ("", "0"):
        _reason = f"{ENV_INTERPRETED} is set"
    elif not built_modules():
        _reason = "not built (python -m sim.native.build)"
    else:
        reason = stale_reason()
        if reason is None:
            _reason = ""
            return
        _reason = reason
    if not any(isinstance(f, _InterpretedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _InterpretedFinder())


def status() -> str:
    """'compiled with mypyc' or 'interpreted (<why>)': what the engine and the fast path run as in this process."""
    loaded = [sys.modules[name] for name in _SOURCE_OF if name in sys.modules]
    if loaded:
        compiled = not any(str(getattr(m, "__file__", "")).endswith(".py") for m in loaded)
        return "compiled with mypyc" if compiled else f"interpreted ({_reason or 'loaded from source'})"
    return "compiled with mypyc" if not _reason else f"interpreted ({_reason})"
