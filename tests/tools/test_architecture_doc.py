"""ARCHITECTURE.md's "mechanism -> file" tables point at what exists, and so do the file pointers of README.md and of
the documentation pages in docs/.

Every table cell is read: a path (``sim/route/host.py``, ``calibration/importers/``) must exist; a name after a
path in the same cell (``sim/route/host.py`` ``resolve_host``, ``DEFAULT_STACK``) must be defined in that file; a
name with no path before it in its cell (``Compiler.pools``) must be defined somewhere in the project. A dotted
name is checked by its last part (``ResolvedHost.charges``: ``charges``); a defined name is a ``def``, a
``class``, an assignment or an annotated field (or a key of a YAML file, for parameters.yaml's keys).
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("models", "sim", "calibration", "app", "bench", "tools")
TOKEN = re.compile(r"`([^`]+)`")
PATH = re.compile(r"^[\w.-]+(/[\w.*-]+)*/?$")
NAME = re.compile(r"^[A-Za-z_][\w.]*$")


def _defines(text: str, name: str) -> bool:
    n = re.escape(name)
    return re.search(rf"^\s*(?:async\s+def|def|class)\s+{n}\b|^\s*(?:self\.)?{n}\s*(?::|=[^=])|^\s*{n}:", text, re.M) is not None


@cache
def _project_sources() -> tuple[str, ...]:
    files = [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]
    files += list((ROOT / "models").rglob("*.yaml"))
    return tuple(p.read_text(encoding="utf-8") for p in files)


def _is_path(token: str) -> bool:
    return ("/" in token and PATH.match(token) is not None) or token.endswith((".py", ".md", ".yaml", ".json"))


def _table_cells(text: str) -> list[tuple[int, str]]:
    cells = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("|") and not set(line) <= set("|-: "):
            cells += [(lineno, cell) for cell in line.strip().strip("|").split("|")]
    return cells


def check_cell(cell: str) -> list[str]:
    """What a table cell names that does not exist."""
    problems = []
    current: Path | None = None
    for token in TOKEN.findall(cell):
        token = token.split("(")[0].strip()
        if _is_path(token):
            path = ROOT / token
            if not path.exists():
                problems.append(f"no file {token}")
                current = None
            else:
                current = path if path.is_file() and path.suffix == ".py" else None
            continue
        if not NAME.match(token):
            continue  # a command line, a value: not a name
        problems += _check_name(token, current)
    return problems


@cache
def _modules() -> dict[str, list[Path]]:
    """Module file stem -> its files (``describe`` -> sim/route/describe.py)."""
    out: dict[str, list[Path]] = {}
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            out.setdefault(p.stem, []).append(p)
    return out


def _check_name(token: str, current: Path | None) -> list[str]:
    """``name`` in ``current``; ``module.name`` in that module (``steps._san``, ``models.faults.rebuild_sources``);
    ``Class.name`` in the file of ``current`` or the file that defines the class; anywhere with no file."""
    parts = token.split(".")
    name = parts[-1]
    if len(parts) > 1:
        module_files = [p for p in _modules().get(parts[-2], []) if p.with_suffix("").as_posix().endswith("/".join(parts[:-1]))]
        if module_files:
            ok = any(_defines(p.read_text(encoding="utf-8"), name) for p in module_files)
            return [] if ok else [f"{module_files[0].relative_to(ROOT)} defines no {name}"]
        if current is not None and _defines(current.read_text(encoding="utf-8"), name):
            return []
        owners = [src for src in _project_sources() if _defines(src, parts[0]) and re.search(rf"^class {parts[0]}\b", src, re.M)]
        if not owners:
            return [f"nothing defines the class {parts[0]} ({token})"]
        return [] if any(_defines(src, name) for src in owners) else [f"{parts[0]} defines no {name}"]
    if current is not None:
        return [] if _defines(current.read_text(encoding="utf-8"), name) else [f"{current.relative_to(ROOT)} defines no {token}"]
    return [] if any(_defines(src, name) for src in _project_sources()) else [f"nothing defines {token}"]


def test_the_checker_finds_a_missing_file_and_a_missing_name() -> None:
    assert check_cell("`sim/route/host.py` `resolve_host`, `DEFAULT_STACK`") == []
    assert check_cell("`sim/route/nowhere.py`") == ["no file sim/route/nowhere.py"]
    assert check_cell("`sim/route/host.py` `no_such_function`") == ["sim/route/host.py defines no no_such_function"]
    assert check_cell("`sim/route/host.py` `steps._direct`, `describe.no_such`") == ["sim/route/describe.py defines no no_such"]
    assert check_cell("`Compiler.no_such_method`") == ["Compiler defines no no_such_method"]
    assert check_cell("`NoSuchClass.pools`") == ["nothing defines the class NoSuchClass (NoSuchClass.pools)"]


def test_every_path_and_name_in_the_architecture_tables_exists() -> None:
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    cells = _table_cells(text)
    assert len(cells) > 50, "ARCHITECTURE.md has lost its mechanism -> file tables"
    problems = [f"line {lineno}: {p}" for lineno, cell in cells for p in check_cell(cell)]
    assert not problems, "ARCHITECTURE.md names what does not exist:\n" + "\n".join(problems)


def _ignored(path: str) -> bool:
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False).returncode == 0


def _pointed(text: str) -> list[str]:
    """The repository paths a page names: a path, not a pattern (``s1..s5.yaml``, ``s1_ycsb_*.yaml``); a Markdown link's
    target is relative to its page (the site's strict build checks those)."""
    text = re.sub(r"\]\([^)]*\)", "]", text)
    pointed = set(re.findall(r"(?<![\w/.-])((?:models|sim|calibration|app|bench|tools|tests|notebooks|docs|examples)/[\w./-]*\w/?)(?![*\w])",
                             text))
    return sorted(p for p in pointed if ".." not in p)


def _missing(paths: list[str]) -> list[str]:
    """Files a run writes (git-ignored) are not in the tree."""
    return [p for p in paths if not (ROOT / p).exists() and not _ignored(p)]


def test_every_file_the_readme_points_at_exists() -> None:
    paths = _pointed((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(paths) > 20
    missing = _missing(paths)
    assert not missing, f"README.md points at files that do not exist: {missing}"


def test_every_file_the_documentation_points_at_exists() -> None:
    pages = [p for p in sorted((ROOT / "docs").rglob("*.md")) if not _ignored(p.relative_to(ROOT).as_posix())]
    pointed = {page.relative_to(ROOT).as_posix(): _pointed(page.read_text(encoding="utf-8")) for page in pages}
    assert sum(len(paths) for paths in pointed.values()) > 50
    missing = [f"{page}: {p}" for page, paths in pointed.items() for p in _missing(paths)]
    assert not missing, f"docs/ points at files that do not exist: {missing}"
