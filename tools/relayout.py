"""Move sim/'s flat modules into one-purpose packages and rewrite every reference to them (issue 17, item 2).

Run from the repository root, on a clean tree (it uses ``git mv``)::

    python tools/relayout.py --dry-run     # print the plan, change nothing
    python tools/relayout.py               # move, rewrite, fix import order (ruff --select I), stage it all
    python tools/relayout.py --loc [REV]   # lines of Python per package, in the work tree or at REV

Idempotent: a second run finds nothing to move, and every rewrite leaves an already rewritten name alone.

Where a module goes: ``MODULES`` (sim/<name>.py -> its new path), then ``RULES`` (the default, printed for
each file it places, e.g. ``cli_<x>.py`` -> ``sim/cli/<x>.py``); a sim/*.py that neither places stops the
run before anything moves (add it to ``MODULES``). ``--strict`` refuses the default rules too.
Tests go to folders mirroring the packages (``TESTS``, else by what they import, printed).
"""

from __future__ import annotations

import argparse
import keyword
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

# -- the new layout ---------------------------------------------------------------------------------------

PACKAGES: dict[str, str] = {
    "sim/des": "The SimPy discrete-event simulation: a route description as SimPy components, the run "
               "(arrivals, batch means and the stop rule, result assembly), random streams and statistics.",
    "sim/plan": "Planning on top of both solvers: the planner (rank candidates on the fast path, confirm "
                "finalists with the DES), its wide candidate space, and parameter sweeps.",
    "sim/cli": "The ``flashplan`` command (``flashplan`` module: parser, ``main``, simulate / schema / "
               "catalog / app) and its subcommands, one module each; the notebooks' shared settings.",
    "sim/native": "The mypyc build of the DES, the fast path and the route descriptions: ``guard`` keeps a "
                  "stale build out (``COMPILED``), ``build`` compiles (``python -m sim.native.build``).",
}
"""New packages (folder -> its one purpose, the docstring of its ``__init__``, which only documents)."""

MODULES: dict[str, str] = {
    # the DES
    "engine": "sim/des/engine.py", "arrivals": "sim/des/arrivals.py", "batching": "sim/des/batching.py",
    "assembly": "sim/des/assembly.py", "components": "sim/des/components.py", "model": "sim/des/model.py",
    "rng": "sim/des/rng.py", "stats": "sim/des/stats.py", "run_state": "sim/des/run_state.py",
    # read by both solvers (sim.analytic.paths plans with Volume too): beside the route description
    "volume": "sim/route/volume.py",
    # plain result data of the fast path (kept out of the compiled set so it pickles): with the other results
    "fast_result": "models/fast_result.py",
    # planner and sweeps
    "planner": "sim/plan/planner.py", "plan_space": "sim/plan/space.py", "sweep": "sim/plan/sweep.py",
    # commands (cli_<x>.py by RULES); the notebooks' budget switch and PNG export
    "cli": "sim/cli/flashplan.py", "notebook": "sim/cli/notebook.py",
    # the compiled build
    "native": "sim/native/guard.py", "build_native": "sim/native/build.py",
    # expected from work in progress (session 9); checked against what they import by lint-imports
    "profile": "sim/des/profile.py", "growth": "sim/plan/growth.py", "qd_sweep": "sim/plan/qd_sweep.py",
    # both solvers per fault state, SLO verdicts on either solver's figures, a profile on the fast path,
    # consolidation planning and the forked candidate screen (issues 21, 22, 23): on top of both solvers
    "faults": "sim/plan/faults.py", "slo_check": "sim/plan/slo_check.py", "profile_fast": "sim/plan/profile_fast.py",
    "plan_consolidated": "sim/plan/consolidated.py", "plan_screen": "sim/plan/screen.py",
}
"""sim/<name>.py -> new path. Names not present in the tree are skipped."""

STAYS = {"__init__", "errors"}
"""sim/<name>.py that stay: the package entry (``simulate``) and the exit codes (shared by sim.cli and
calibration.cli, which sits below sim.cli in the layers)."""

DIRECTORIES: dict[str, str] = {"sim/importers": "calibration/importers"}
"""Whole folders: the fio / iostat importers build calibration records, so they live with calibration."""

RENAMED_FILES: dict[str, str] = {"sim/_native.json": "sim/native/_native.json"}
"""Untracked build products whose path is written in code and docs."""

REEXPORTS: dict[str, tuple[str, str]] = {"sim/cli": ("sim.cli.flashplan", "main")}
"""Names a new package's ``__init__`` re-exports: ``flashplan = "sim.cli:main"`` in an older install keeps working."""

KEEP_NAMES: dict[str, set[str]] = {"sim.native": {"_native"}}
"""Names under a new package that are not attributes of its old module (the mypyc shared library)."""

NATIVE_GUARD = "sim/native/guard.py"
NATIVE_GROUP = ("sim._native", "sim.native._native")
"""The mypyc shared library moves into sim/native/ with the guard that records the build."""

LAYERS = ["app", "sim.cli", "calibration", "sim.plan", "sim.des | sim.analytic", "sim.route", "models"]
"""import-linter layers after the move (``|``: independent siblings: the solvers never import each other)."""

TESTS: dict[str, str] = {
    "test_theory": "des", "test_mechanisms": "des", "test_degraded_theory": "des", "test_properties": "des",
    "test_determinism": "des",
    "test_analytic": "analytic", "test_device_dies": "analytic",
    "test_route": "route",
    "test_planner": "plan", "test_plan_space": "plan", "test_sweep": "plan", "test_sweep_dask": "plan",
    "test_cli": "cli", "test_bad_input": "cli",
    "test_app": "app", "test_app_trust": "app", "test_app_browser": "app", "test_app_browser_trust": "app",
    "test_calibration": "calibration", "test_ext_records": "calibration", "test_import_fio": "calibration",
    "test_import_iostat": "calibration",
    "test_models": "models", "test_catalog": "models", "test_cost": "models",
    "test_native": "native", "test_notebooks": "notebooks",
    "test_identical": "bench", "test_bench_smoke": "bench", "test_relayout": "tools",
    "test_app_browser_qd": "app", "test_app_consolidation": "app", "test_app_profile": "app", "test_faults_app": "app",
    "test_faults_solvers": "plan", "test_growth": "plan", "test_qd_sweep": "plan", "test_plan_screen": "plan",
    "test_profile": "des", "test_workloads": "des", "test_calibrate_jobs": "calibration",
}
"""tests/<name>.py -> tests/<folder>/. Helpers (conftest, theory, browser/, fixtures/) stay in tests/."""

TEST_BY_IMPORT = [("sim.cli", "cli"), ("app", "app"), ("calibration", "calibration"), ("sim.importers", "calibration"),
                  ("sim.plan", "plan"), ("sim.planner", "plan"), ("sim.sweep", "plan"), ("sim.analytic", "analytic"),
                  ("sim.route", "route"), ("sim.des", "des"), ("sim.engine", "des"), ("sim", "des"), ("bench", "bench"),
                  ("models", "models")]
"""Default for a test not in TESTS: the folder of the first of these it imports."""

RULES: list[tuple[str, Callable[[str, set[str]], str | None]]] = [
    ("cli_<x>.py is a subcommand (a keyword gets a trailing _)",
     lambda name, imports: f"sim/cli/{name[4:]}{'_' * keyword.iskeyword(name[4:])}.py" if name.startswith("cli_") else None),
    ("imports a command module", lambda name, imports: f"sim/cli/{name}.py" if any(i.startswith("sim.cli") for i in imports) else None),
    ("sweep / plan in its name, or imports the planner or sweeps",
     lambda name, imports: f"sim/plan/{name}.py" if ("sweep" in name or "plan" in name
                                                     or imports & {"sim.planner", "sim.plan_space", "sim.sweep"}) else None),
    ("imports simpy or a DES module",
     lambda name, imports: f"sim/des/{name}.py" if imports & ({"simpy"} | {f"sim.{m}" for m, p in MODULES.items() if p.startswith("sim/des/")})
     else None),
]
"""The default rule for a sim/*.py not in MODULES, in order; the first that answers places it (printed)."""

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".txt", ".sh", ""}
SKIP_DIRS = ("tests/fixtures/", "calibration/results/", "calibration/data/", "tools/relayout.py", "tests/tools/",
             "tests/test_relayout.py")
"""Recorded data is not rewritten (its provenance lines name commands, which keep working), nor this script and
its test (they spell the old names on purpose)."""


# -- the plan ---------------------------------------------------------------------------------------------

@dataclass
class Plan:
    moves: list[tuple[str, str]] = field(default_factory=list)
    """(old, new) paths for git mv, in order."""
    dotted: dict[str, str] = field(default_factory=dict)
    """old module -> new module (for modules that keep no package of their old name)."""
    packaged: dict[str, str] = field(default_factory=dict)
    """old module whose name becomes a package -> its module in that package (sim.cli -> sim.cli.flashplan)."""
    paths: dict[str, str] = field(default_factory=dict)
    """old file or folder path -> new path, for text."""
    notes: list[str] = field(default_factory=list)


def run_git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked(pattern: str) -> list[str]:
    return [p for p in run_git("ls-files", "--", pattern).splitlines() if p]


def dotted_of(path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    text = path.read_text()
    found = set(re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, re.M))
    return found | {f"sim.{n}" for n in re.findall(r"^\s*from sim import ([\w]+)", text, re.M)}


def place_module(name: str, strict: bool) -> tuple[str | None, str]:
    """The new path of sim/<name>.py and how it was chosen."""
    if name in MODULES:
        return MODULES[name], "table"
    if strict:
        return None, "not in MODULES (--strict)"
    imports = imports_of(Path("sim") / f"{name}.py")
    for why, rule in RULES:
        target = rule(name, imports)
        if target:
            return target, f"default rule: {why}"
    return None, "no rule places it"


def plan_modules(plan: Plan, strict: bool) -> list[str]:
    """Fill the plan from sim/*.py; return the files nothing places."""
    unplaced = []
    for path in sorted(tracked("sim/*.py")):
        name = Path(path).stem
        if "/" in path[len("sim/"):] or name in STAYS:
            continue
        target, why = place_module(name, strict)
        if target is None:
            unplaced.append(f"{path}: {why}; add it to MODULES in tools/relayout.py")
            continue
        if why != "table":
            plan.notes.append(f"{path} -> {target} ({why})")
        plan.moves.append((path, target))
    return unplaced


def module_renames(plan: Plan) -> None:
    """Dotted and path renames for every module in MODULES and RULES' output, moved now or earlier."""
    targets = dict(MODULES)
    targets.update({Path(old).stem: new for old, new in plan.moves})
    for name, new in targets.items():
        old_dotted, new_dotted = f"sim.{name}", dotted_of(new)
        if old_dotted.replace(".", "/") in PACKAGES:
            plan.packaged[old_dotted] = new_dotted
        else:
            plan.dotted[old_dotted] = new_dotted
        plan.paths[f"sim/{name}.py"] = new
    for old, new in DIRECTORIES.items():
        plan.dotted[old.replace("/", ".")] = new.replace("/", ".")
        plan.paths[old] = new
        if Path(old).is_dir():
            plan.moves.append((old, new))
    plan.paths.update(RENAMED_FILES)


def test_folder(path: Path) -> tuple[str, str]:
    if path.stem in TESTS:
        return TESTS[path.stem], "table"
    imports = imports_of(path)
    for prefix, folder in TEST_BY_IMPORT:
        if any(i == prefix or i.startswith(prefix + ".") for i in imports):
            return folder, f"imports {prefix}"
    return "misc", "imports nothing it knows"


def plan_tests(plan: Plan) -> None:
    for name in sorted(set(TESTS) | {Path(p).stem for p in tracked("tests/test_*.py")}):
        old = f"tests/{name}.py"
        folder, why = test_folder(Path(old)) if Path(old).exists() else (TESTS[name], "table")
        new = f"tests/{folder}/{name}.py"
        plan.dotted[f"tests.{name}"] = f"tests.{folder}.{name}"
        plan.paths[old] = new
        if Path(old).exists():
            plan.moves.append((old, new))
            if why != "table":
                plan.notes.append(f"{old} -> {new} ({why})")


def make_plan(strict: bool) -> Plan:
    plan = Plan()
    unplaced = plan_modules(plan, strict)
    if unplaced:
        raise SystemExit("relayout: stopped before moving anything; unplaced modules:\n  " + "\n  ".join(unplaced))
    module_renames(plan)
    plan_tests(plan)
    for old, new in plan.moves:
        if Path(new).exists():
            raise SystemExit(f"relayout: {old} and {new} both exist; merge them by hand first")
    return plan


# -- moving -----------------------------------------------------------------------------------------------

def depth_fix(text: str, levels: int) -> str:
    """``Path(__file__)[.resolve()].parent`` / ``.parents[n]`` climb ``levels`` more (the file moved down)."""
    if levels <= 0:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group("n") is not None:
            return f"{m.group('base')}.parents[{int(m.group('n')) + levels}]"
        return m.group("base") + ".parent" * (levels + 1)

    return re.sub(r"(?P<base>Path\(__file__\)(?:\.resolve\(\))?)(?:\.parents\[(?P<n>\d+)\]|\.parent)", one, text)


def package_init(folder: str) -> str:
    """An ``__init__`` that documents its package: its purpose and each module's first docstring line."""
    lines = [*textwrap.wrap(f'"""{PACKAGES[folder]}', 110), ""]
    for module in sorted(Path(folder).glob("*.py")):
        if module.name in ("__init__.py", "__main__.py"):
            continue
        first = re.match(r'\s*r?"""(.*?)(?:\n\s*\n|""")', module.read_text(), re.S)
        summary = " ".join(first.group(1).split()) if first else ""
        lines += textwrap.wrap(f"* ``{module.stem}``: {summary}" if summary else f"* ``{module.stem}``", 110, subsequent_indent="  ")
    text = "\n".join(lines) + '\n"""\n'
    if folder in REEXPORTS:
        source, name = REEXPORTS[folder]
        text += f'\nfrom {source} import {name}\n\n__all__ = ["{name}"]\n'
    return text


def new_files(plan: Plan) -> list[Path]:
    """Package ``__init__`` files, ``python -m sim.cli``, test folder ``__init__`` files."""
    written = []
    for folder in PACKAGES:
        init = Path(folder) / "__init__.py"
        if Path(folder).is_dir() and not init.exists():
            init.write_text(package_init(folder))
            written.append(init)
    entry = Path("sim/cli/__main__.py")
    if Path("sim/cli/flashplan.py").exists() and not entry.exists():
        entry.write_text('"""``python -m sim.cli``: the ``flashplan`` command."""\n\nimport sys\n\n'
                        "from sim.cli.flashplan import main\n\nsys.exit(main())\n")
        written.append(entry)
    for tests in sorted({Path(new).parent for old, new in plan.moves if new.startswith("tests/")}):
        init = tests / "__init__.py"
        if not init.exists():
            init.write_text("")
            written.append(init)
    return written


def move(plan: Plan) -> list[Path]:
    for old, new in plan.moves:
        Path(new).parent.mkdir(parents=True, exist_ok=True)
        run_git("mv", old, new)
        levels = len(Path(new).parts) - len(Path(old).parts)
        files = [Path(new)] if Path(new).is_file() else sorted(Path(new).rglob("*.py"))
        for f in files:
            f.write_text(depth_fix(f.read_text(), levels))
        print(f"moved  {old} -> {new}")
    written = new_files(plan)
    for f in written:
        print(f"wrote  {f}")
    return written


def remove_stale_build() -> None:
    """The old build's products at the old places (they are rebuilt by ``make native``)."""
    for p in [*Path("sim").glob("*.so"), Path("sim/_native.json")]:
        if p.exists():
            p.unlink()
            print(f"removed stale build product {p}")


# -- rewriting references ---------------------------------------------------------------------------------

def rename_dotted(text: str, old: str, new: str) -> str:
    """``sim.planner`` -> ``sim.plan.planner`` wherever it is a whole dotted name."""
    return re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)


def rename_packaged(text: str, old: str, new: str, submodules: set[str]) -> str:
    """Old module ``sim.cli`` is now package ``sim.cli`` with the code in ``new`` (``sim.cli.flashplan``):
    rewrite imports of it, attributes of it, quoted names and entry points; keep ``python -m sim.cli`` and
    names of the package's own modules."""
    o = re.escape(old)
    keep = "|".join(sorted(submodules))
    text = re.sub(rf"(?<![\w.])from {o} import (?!(?:{keep})\b)", f"from {new} import ", text)
    text = re.sub(rf"(?<![\w.])import {o}(?![\w.])", f"import {new}", text)
    text = re.sub(rf"(?<![\w.-]){o}\.(?!(?:{keep})\b)(?=[A-Za-z_])", f"{new}.", text)
    return re.sub(rf"(?<=[\"']){o}(?=:)", new, text)  # entry points "sim.cli:main"


def rename_from_parent(text: str, moved: dict[str, str]) -> str:
    """``from sim import native, simulate`` -> ``from sim import simulate`` + ``from sim.native import guard as native``."""
    def one(m: re.Match[str]) -> str:
        indent, names = m.group(1), [n.strip() for n in m.group(2).split(",")]
        keep, lines = [], []
        for n in names:
            name, _, alias = n.partition(" as ")
            target = moved.get(f"sim.{name.strip()}")
            if target is None:
                keep.append(n)
                continue
            parent, _, leaf = target.rpartition(".")
            bound = alias.strip() or name.strip()
            lines.append(f"{indent}from {parent} import {leaf}" + ("" if leaf == bound else f" as {bound}"))
        if keep:
            lines.insert(0, f"{indent}from sim import {', '.join(keep)}")
        return "\n".join(lines) + (m.group(3) or "")

    text = re.sub(r"^([ \t]*)from sim import ([\w, ]+?)([ \t]*#.*)?$", one, text, flags=re.M)

    def inline(m: re.Match[str]) -> str:  # in a string: "import json; from sim import native; ..."
        target = moved.get(f"sim.{m.group(1)}")
        if target is None:
            return m.group(0)
        parent, _, leaf = target.rpartition(".")
        return f"from {parent} import {leaf}" + ("" if leaf == m.group(1) else f" as {m.group(1)}")

    return re.sub(r"(?<![\w.])from sim import (\w+)(?=;)", inline, text)


def rename_paths(text: str, paths: dict[str, str]) -> str:
    for old, new in sorted(paths.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"(?<![\w/.]){re.escape(old)}(?![\w])", new, text)
    return text


def submodules_of(package: str) -> set[str]:
    folder = Path(package.replace(".", "/"))
    names = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()
    names |= {Path(new).stem for new in MODULES.values() if Path(new).parent == folder}
    return (names | KEEP_NAMES.get(package, set())) - {"__init__"}


def rewrite_text(text: str, plan: Plan) -> str:
    text = rename_from_parent(text, {**plan.dotted, **plan.packaged})
    for old, new in sorted(plan.dotted.items(), key=lambda kv: -len(kv[0])):
        text = rename_dotted(text, old, new)
    for old, new in plan.packaged.items():
        text = rename_packaged(text, old, new, submodules_of(old))
    return rename_paths(text, plan.paths)


def text_files() -> list[Path]:
    files = []
    for p in run_git("ls-files").splitlines():
        path = Path(p)
        if p.startswith(SKIP_DIRS) or path.suffix not in TEXT_SUFFIXES or not path.is_file():
            continue
        files.append(path)
    return files


def rewrite_all(plan: Plan, extra: Iterable[Path]) -> list[Path]:
    changed = []
    for path in sorted(set(text_files()) | set(extra)):
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite_text(text, plan)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


# -- files that say where things are ----------------------------------------------------------------------

def compiled_list(text: str, plan: Plan) -> str:
    """``COMPILED`` names files relative to sim/: ``"engine.py"`` -> ``"des/engine.py"``."""
    block = re.search(r"^COMPILED = \((.*?)\)\n", text, re.S | re.M)
    if block is None:
        raise SystemExit(f"relayout: {NATIVE_GUARD} has no COMPILED = (...) to update")

    def one(m: re.Match[str]) -> str:
        new = plan.paths.get(f"sim/{m.group(1)}")
        return f'"{new[len("sim/"):]}"' if new and new.startswith("sim/") else m.group(0)

    body = re.sub(r'"([\w/]+\.py)"', one, block.group(1))
    return text[: block.start(1)] + body + text[block.end(1):]


def native_guard(plan: Plan) -> None:
    guard = Path(NATIVE_GUARD)
    if not guard.exists():
        return
    text = compiled_list(guard.read_text(), plan)
    text = text.replace(f'GROUP = "{NATIVE_GROUP[0]}"', f'GROUP = "{NATIVE_GROUP[1]}"')
    text = text.replace("sim/_native__mypyc.*.so", "sim/native/_native__mypyc.*.so")
    text = text.replace('RECORD = SIM_DIR / "_native.json"', 'RECORD = Path(__file__).resolve().parent / "_native.json"')
    guard.write_text(text)


def so_patterns() -> list[str]:
    """Where the build writes: every compiled module's folder and the shared library's (sim/native)."""
    text = Path(NATIVE_GUARD).read_text() if Path(NATIVE_GUARD).exists() else ""
    block = re.search(r"^COMPILED = \((.*?)\)\n", text, re.S | re.M)
    dirs = {str(Path("sim") / Path(f).parent) for f in re.findall(r'"([\w/]+\.py)"', block.group(1))} if block else set()
    return [f"{d}/*.so" for d in sorted(dirs | {"sim", "sim/native"})]


def build_outputs() -> None:
    """.gitignore and ``make clean`` list the build's folders."""
    patterns = so_patterns()
    gitignore = Path(".gitignore")
    lines = gitignore.read_text().splitlines()
    first = next((i for i, line in enumerate(lines) if re.fullmatch(r"sim/[\w/]*\*\.so", line)), None)
    if first is not None:
        lines = [line for line in lines if not re.fullmatch(r"sim/[\w/]*\*\.so", line)]
        lines[first:first] = patterns
        gitignore.write_text("\n".join(lines) + "\n")
    makefile = Path("Makefile")
    text = makefile.read_text()
    makefile.write_text(re.sub(r"sim/[\w/]*\*\.so(?: sim/[\w/]*\*\.so)*", " ".join(patterns), text))


def import_layers() -> None:
    """Replace the layers of the first import-linter layers contract with ``LAYERS``."""
    pyproject = Path("pyproject.toml")
    text = pyproject.read_text()
    block = re.search(r'(type = "layers"\nlayers = \[\n)(.*?)(\n\])', text, re.S)
    if block is None:
        print("warning: pyproject.toml: no layers contract found; update [tool.importlinter] by hand")
        return
    body = "\n".join(f'  "{layer}",' for layer in LAYERS)
    pyproject.write_text(text[: block.start(2)] + body + text[block.end(2):])


# -- the docs that draw the layout ------------------------------------------------------------------------

LAYOUT_LINES = {
    "sim/": "sim/           `simulate` and the exit codes (errors.py); one package per purpose below",
    "sim/route/": "sim/route/     one route description per attachment, and the volume layer (both solvers read them)",
    "sim/des/": "sim/des/       the SimPy DES: components, model, the run (arrivals, batch means, assembly), statistics",
    "sim/analytic/": "sim/analytic/  the analytic fast path (queueing network, MVA, M/G/c, fork-join)",
    "sim/plan/": "sim/plan/      the planner, its candidate space, sweeps",
    "sim/cli/": "sim/cli/       the `flashplan` command and its subcommands; the notebooks' settings",
    "sim/native/": "sim/native/    the mypyc build of des, analytic and route (`python -m sim.native.build`)",
}

LAYERS_PICTURE = """    models/            Scenario, catalog, workload, results (Result, FastResult), cost (pydantic; no SimPy)
       |
    sim/route/         one route description per attachment, derived from a Scenario once
       |               (every catalog-derived number: flash, SAN, host stack, links, capacities),
       |               and the volume layer (sim/route/volume.py) both solvers split I/Os with
       +-----------------------------+
       |                             |
    sim/des/                      sim/analytic/   the analytic fast path: the same description
    the SimPy DES: the                            as a queueing network (MVA, M/G/c, fork-join)
    description as components,
    the run, statistics           (the two solvers never import each other)
       |                             |
       +-------------+---------------+
                     |
    sim/plan/                        rank candidates (fast path), confirm finalists (DES); sweeps
    calibration/                     measurements as records, checks and fits; importers/ (fio, iostat)
    sim/cli/, app/, notebooks/       commands, web UI, notebooks

    sim/native/ (the mypyc build) and sim/errors.py (exit codes) sit outside the layers.
"""


def readme_layout() -> None:
    readme = Path("README.md")
    if not readme.exists():
        return
    text = readme.read_text()
    old = re.search(r"^    sim/ {2,}the SimPy engine.*\n", text, re.M)
    if old is None:
        if "sim/des/" not in text:
            print("warning: README.md: the Layout section's sim/ line was not found; update it by hand")
        return
    block = "".join(f"    {line}\n" for line in LAYOUT_LINES.values())
    readme.write_text(text[: old.start()] + block + text[old.end():])


def architecture() -> None:
    doc = Path("ARCHITECTURE.md")
    if not doc.exists():
        return
    text = doc.read_text()
    picture = re.search(r"## Layers\n\n(.*?)\n(?=`sim\.route\.describe)", text, re.S)
    if picture is not None:
        text = text[: picture.start(1)] + LAYERS_PICTURE + text[picture.end(1):]
    elif "sim/des/" not in text:
        print("warning: ARCHITECTURE.md: the Layers picture was not found; update it by hand")
    text = re.sub(r"A draft written with the route-description step of issue 17\..*?when they are\.\n",
                  "Written with issue 17: the route description (sim/route/), one package per purpose "
                  "(moved by tools/relayout.py) and one-way dependencies.\n", text, flags=re.S)
    text = text.replace("sim.cli*", "sim.cli")
    doc.write_text(text)


def fix_import_order(files: list[Path]) -> None:
    py = [str(f) for f in files if f.suffix == ".py" and f.exists()]
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if py and Path(ruff).exists():
        subprocess.run([ruff, "check", "--quiet", "--select", "I", "--fix", *py], check=False)
    elif py:
        print("warning: ruff not found: run `ruff check --select I --fix .` for the import order")


# -- lines of code ----------------------------------------------------------------------------------------

def package_of(path: str) -> str:
    """``sim/des/engine.py`` -> ``sim/des``; a module directly in ``sim/`` -> ``sim (flat)``."""
    parts = Path(path).parts
    if len(parts) == 1:
        return "(root)"
    return f"{parts[0]}/{parts[1]}" if len(parts) > 2 else f"{parts[0]} (flat)"


def loc(rev: str | None) -> dict[str, int]:
    """Lines of Python per package at REV (or in the work tree)."""
    files = run_git("ls-tree", "-r", "--name-only", rev).splitlines() if rev else run_git("ls-files").splitlines()
    counts: dict[str, int] = {}
    for f in files:
        if not f.endswith(".py"):
            continue
        text = run_git("show", f"{rev}:{f}") if rev else Path(f).read_text() if Path(f).exists() else ""
        key = package_of(f)
        counts[key] = counts.get(key, 0) + len(text.splitlines())
    return counts


def print_loc(revs: list[str]) -> None:
    columns = [(rev or "work tree", loc(rev or None)) for rev in (revs or [""])]
    keys = sorted({k for _, c in columns for k in c})
    print("| package | " + " | ".join(name for name, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for k in keys:
        print(f"| {k} | " + " | ".join(str(c.get(k, "")) for _, c in columns) + " |")
    print("| total | " + " | ".join(str(sum(c.values())) for _, c in columns) + " |")


# -- main -------------------------------------------------------------------------------------------------

def show(plan: Plan) -> None:
    for old, new in plan.moves:
        print(f"move   {old} -> {new}")
    for note in plan.notes:
        print(f"placed {note}")


def apply(plan: Plan) -> None:
    written = move(plan)
    remove_stale_build()
    changed = rewrite_all(plan, written)
    native_guard(plan)
    build_outputs()
    import_layers()
    readme_layout()
    architecture()
    for folder in PACKAGES:  # now that every module is in place, list them
        init = Path(folder) / "__init__.py"
        if init in written:
            init.write_text(package_init(folder))
    fix_import_order([*changed, *written])
    run_git("add", "--update")
    run_git("add", "--", *(str(f) for f in written))
    print(f"rewrote references in {len(changed)} files, all staged; check: ruff check . && mypy && lint-imports && pytest")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    ap.add_argument("--strict", action="store_true", help="no default rules: every sim/*.py must be in MODULES")
    ap.add_argument("--loc", nargs="*", metavar="REV", help="lines of Python per package (work tree, or each REV)")
    args = ap.parse_args(argv)
    if not Path(".git").exists() or not Path("sim").is_dir():
        print("relayout: run from the repository root", file=sys.stderr)
        return 2
    if args.loc is not None:
        print_loc(args.loc)
        return 0
    if not args.dry_run and run_git("status", "--porcelain", "--untracked-files=no").strip():
        print("relayout: commit or stash your changes first (the moves and rewrites are staged for one commit)", file=sys.stderr)
        return 2
    plan = make_plan(args.strict)
    show(plan)
    if not args.dry_run:
        apply(plan)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
