"""The documentation cannot go stale: every command output shown in README.md and docs/ is what the command prints
today, the generated reference pages cover every field and command, and no page tells the story of the work.

A shown output is a ``console`` block starting with ``$ flashplan ...`` (tools/docs_gen.py). Each command runs
once here, at its fixed seed and small I/O budget, and its output is compared with every block that shows it, less
elapsed seconds and line wrapping. A stale block fails with the command that refreshes it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import docs_gen

ROOT = Path(__file__).resolve().parents[2]
SHOWN = docs_gen.shown_outputs()
COMMANDS = sorted({s.command for s in SHOWN})
REFRESH = "python -m tools.docs_gen --outputs"


def test_every_page_with_a_command_shows_its_output() -> None:
    assert len(COMMANDS) >= 8, "README.md and docs/ have lost their shown outputs"
    shown_in = {s.path.relative_to(ROOT).as_posix() for s in SHOWN}
    assert {"README.md", "docs/getting-started.md", "docs/guides/plan.md"} <= shown_in
    empty = [f"{s.path.relative_to(ROOT)}: {s.command.strip()}" for s in SHOWN if not s.output.strip()]
    assert not empty, f"shown commands without their output (run `{REFRESH}`): {empty}"


def _param(command: str) -> object:
    """A command that runs the simulation to its precision target or verifies a plan takes seconds: marked slow, so
    the suite starts it first, beside the short tests."""
    slow = "target_rel_ci" in command or "--verify-top" in command
    name = " ".join(command.removeprefix("$ ").replace("\\\n", " ").split())
    return pytest.param(command, id=name, marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("command", [_param(c) for c in COMMANDS])
def test_a_shown_output_is_what_the_command_prints(command: str) -> None:
    printed = docs_gen.normalized(docs_gen.run_shown(command))
    stale = [s.path.relative_to(ROOT).as_posix() for s in SHOWN if s.command == command and docs_gen.normalized(s.output) != printed]
    assert not stale, f"{command.strip()} prints something else than {stale} show: run `{REFRESH}`"


def test_the_comparison_ignores_elapsed_seconds_and_wrapping_but_not_a_figure() -> None:
    a = "stop: 58,248 I/Os simulated, 0.041 s\nsimulated in 22.07 s wall\n│ IOPS │ 1,408,192 │"
    b = "stop: 58,248 I/Os simulated, 0.041 s simulated in\n3.05 s wall\n│ IOPS │ 1,408,192 │"
    assert docs_gen.normalized(a) == docs_gen.normalized(b)
    assert docs_gen.normalized(a) != docs_gen.normalized(a.replace("1,408,192", "1,408,193"))


def test_a_shown_command_is_parsed_with_its_environment_and_continuation() -> None:
    env, args = docs_gen.command_words("$ FLASHPLAN_CATALOG_DIR=my-catalog flashplan cost a.yaml \\\n      b.yaml --perf 1\n")
    assert env == {"FLASHPLAN_CATALOG_DIR": "my-catalog"}
    assert args == ["cost", "a.yaml", "b.yaml", "--perf", "1"]
    with pytest.raises(ValueError):
        docs_gen.command_words("$ rm -rf x\n")


def test_a_rewrite_puts_the_printed_output_in_the_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("intro\n\n```console\n$ flashplan simulate nowhere.yaml\nold output\n```\n\nafter\n", encoding="utf-8")
    assert docs_gen.rewrite_outputs([page]) == [page]
    text = page.read_text(encoding="utf-8")
    assert "old output" not in text
    assert "$ echo $?\n2\n```\n\nafter\n" in text
    assert docs_gen.rewrite_outputs([page]) == []  # a second run changes nothing


def test_the_scenario_reference_has_every_field_of_every_part() -> None:
    from models.scenario import Scenario

    page = docs_gen.scenario_reference()
    schema = Scenario.model_json_schema()
    for name, part in [("Scenario", schema), *schema["$defs"].items()]:
        assert f"### {name} {{#{name.lower()}}}" in page
        for field in part.get("properties", {}):
            assert f"| `{field}` |" in page, f"{name}.{field} is missing from the scenario reference"
    links = set(re.findall(r"\]\(#([a-z0-9_]+)\)", page))
    anchors = set(re.findall(r"\{#([a-z0-9_]+)\}", page))
    assert links <= anchors, f"links to parts the page does not have: {links - anchors}"


def test_the_requirements_reference_documents_the_candidates_block() -> None:
    page = docs_gen.requirements_reference()
    assert "| `candidates` | [CandidateSpace](#candidatespace)" in page
    for field in ("devices", "device_counts", "namespaces", "layouts", "adapters", "include_san"):
        assert f"| `{field}` |" in page


def test_the_cli_reference_has_every_command_and_option() -> None:
    from sim.cli.flashplan import build_parser

    page = docs_gen.cli_reference()
    for parser in docs_gen._parsers(build_parser()):
        assert f"## {parser.prog}\n" in page
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in page, f"{parser.prog} {flag} is missing from the CLI reference"


def test_the_calibration_page_has_every_record() -> None:
    import json

    data = json.loads((ROOT / "calibration/results/latest.json").read_text(encoding="utf-8"))
    page = docs_gen.calibration_page()
    missing = [r["id"] for r in data["records"] if f"| `{r['id']}` |" not in page]
    assert not missing, f"records missing from the calibration page: {missing[:5]}"


# --- no story of the work in what users read: tests/tools/test_no_work_history.py (generated pages included) ---


def test_the_readme_is_for_users() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for must in ("make run", "make test", "make docs", "## The examples", "think time"):
        assert must in text


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")]
    pages += list(docs_gen.PAGES)
    missing = sorted({p for p in pages if f" {p}\n" not in nav})
    assert not missing, f"pages not in mkdocs.yml's nav: {missing}"


def test_make_test_builds_the_site_strictly() -> None:
    """`make test` depends on `make docs`, whose build fails on a broken link or anchor: `--strict`, and not `--quiet`,
    under which mkdocs drops the warnings that strict mode counts."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_deps = re.search(r"^test:(.*)$", makefile, re.M)
    assert test_deps is not None and "docs" in test_deps.group(1).split()
    recipe = re.search(r"^docs:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe is not None
    build = [line for line in recipe.group(1).splitlines() if "mkdocs build" in line]
    assert build and "--strict" in build[0] and "--quiet" not in build[0] and "-q" not in build[0].split()
    assert "tools.docs_gen" in recipe.group(1)
