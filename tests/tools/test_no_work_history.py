"""What users read describes the tool, not how it was built: no work-tracker issue or session numbers, commit
hashes of this project, dates of work or paths on a developer's machine in the README, the docs, the CLI's help,
the web app's text, the catalog, the calibration evidence, the examples or the code's comments and docstrings.

Citations of other projects stay (``spdk issue #415``, ``github.com/... issue #62``, a Linux commit): the check skips
a match preceded by another project's name or an address. Dates are checked in prose and code comments only: a
calibration record's ``declared`` date or a source's publication date is data.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORK_TRACKER = re.compile(r"(?<![\w/#.-])(?:[Ii]ssues?|[Ss]essions?) #?\d+\b(?!\s*(?:KiB|MiB|GiB|KB|MB|kB|B|x)\b)")
"""``issue 18``, ``issues 21, 22``, ``session 19``, ``Issue 23's``."""
MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|home|root)/[\w.-]+")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
OWN_HASH = re.compile(r"\b(?:commit|rev(?:ision)?|main at|before|after|base(?:line)?)[ _-]*(?:main_)?[0-9a-f]{7}\b")
"""A short hash of this project's history next to the word that introduces one."""

EXTERNAL = re.compile(r"(?:github\.com/\S+|gitlab\.\S+|spdk|ezfio|linux(?:-\w+)?|kernel|fio|simpy|streamlit|mkdocs|mypyc?|"
                      r"pydantic|numpy|scipy|dask|playwright|chromium|raspberry-pi-pcie-devices)\s+(?:issues?|pull|commit)\b",
                      re.IGNORECASE)

PROSE = ("README.md", "ARCHITECTURE.md", "mkdocs.yml", "docs", "notebooks", "examples", "calibration", "models/catalog")
DATED_PROSE = ("README.md", "ARCHITECTURE.md", "mkdocs.yml", "docs", "notebooks", "examples")
"""Where a date in prose is a date of work; the calibration evidence and the catalog cite sources with their dates."""
CODE = ("sim", "models", "app", "calibration", "bench", "notebooks", "tests", "tools")
SKIP_PARTS = {"site", ".venv", "fixtures", "__pycache__", "build"}


def _files(roots: tuple[str, ...], suffixes: tuple[str, ...]) -> Iterator[Path]:
    for root in roots:
        path = ROOT / root
        candidates = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for f in candidates:
            if f.is_file() and f.suffix in suffixes and not SKIP_PARTS.intersection(f.relative_to(ROOT).parts):
                yield f


def _findings(text: str, dates: bool) -> list[str]:
    found = []
    for pattern in (WORK_TRACKER, MACHINE_PATH, OWN_HASH, *((DATE,) if dates else ())):
        for m in pattern.finditer(text):
            before = text[max(0, m.start() - 60):m.start() + len(m.group(0))]
            if pattern in (WORK_TRACKER, OWN_HASH) and EXTERNAL.search(before):
                continue
            found.append(m.group(0))
    return found


def _python_prose(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, text, whether dates count) of a Python file's comments (dates count) and string literals (dates in
    docstrings and help texts count too; other literals may hold data such as a test's --start date)."""
    source = path.read_text(encoding="utf-8")
    previous = tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string, True
        elif tok.type == tokenize.STRING:
            docstring = previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) and tok.string.lstrip("rbuRBU").startswith(('"""', "'''"))
            yield tok.start[0], tok.string, docstring
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.type


def _generated_pages() -> dict[str, str]:
    """The documentation pages ``make docs`` generates (docs/reference, calibration and benchmark results), as the
    generator writes them now."""
    from tools import docs_gen

    return {f"docs/{name}": make() for name, make in docs_gen.PAGES.items()}


def _offences() -> list[str]:
    out: list[str] = []
    generated = _generated_pages()
    for name, text in generated.items():  # dates there are the sources' (a record's measurement, a citation)
        out.extend(f"{name} (generated):{n}: {hit}" for n, line in enumerate(text.splitlines(), 1) for hit in _findings(line, False))
    for f in _files(PROSE, (".md", ".yaml", ".yml", ".txt")):
        rel = f.relative_to(ROOT)
        if rel.as_posix() in generated:
            continue
        dated = rel.parts[0] in DATED_PROSE
        fenced = False  # a command's output shown in a fenced block quotes the catalog's sources with their dates
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if f.suffix == ".md" and line.lstrip().startswith("```"):
                fenced = not fenced
            if dated and f.suffix != ".md":
                line_dates = line.lstrip().startswith("#")
            else:
                line_dates = dated and not fenced
            out.extend(f"{rel}:{n}: {hit}" for hit in _findings(line, line_dates))
    for f in _files(CODE, (".py",)):
        if f == Path(__file__).resolve():
            continue
        rel = f.relative_to(ROOT)
        for n, text, dates in _python_prose(f):
            out.extend(f"{rel}:{n}: {hit}" for hit in _findings(text, dates))
    return out


def test_no_issue_session_hash_date_or_machine_path_in_what_users_read() -> None:
    offences = _offences()
    assert not offences, f"{len(offences)} mentions of the work's history:\n" + "\n".join(offences[:80])


def test_cli_help_tells_no_work_history() -> None:
    from sim.cli.flashplan import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:
            choices = getattr(action, "choices", None)
            if isinstance(choices, dict):
                for child in choices.values():
                    texts.append(child.format_help())
                    stack.append(child)
    offences = [hit for text in texts for hit in _findings(text, dates=True)]
    assert not offences, offences
    assert not re.search(r"shared 2-core machine|this machine's|a developer", "\n".join(texts))


@pytest.mark.parametrize("text, found", [
    ("the die-level model (issue 18)", True), ("since session 19", True), ("Issue 23's target", True),
    ("see /work/notes/x.py", True), ("compare --rev REV -o base.json", False), ("before 9a0dc95", True),
    ("spdk issue #415 says", False), ("github.com/earlephilhower/ezfio issue #62", False),
    ("the loop issues 4 KiB reads", False), ("measured 2026-11-25", True),
])
def test_the_patterns_catch_work_history_and_spare_citations(text: str, found: bool) -> None:
    assert bool(_findings(text, dates=True)) is found
