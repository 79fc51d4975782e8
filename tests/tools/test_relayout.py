"""tools/relayout.py: the package move of issue 17 rewrites every kind of reference, and a second run changes nothing."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("relayout", ROOT / "tools" / "relayout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["relayout"] = module
    spec.loader.exec_module(module)
    return module


relayout = _load()


def _plan():
    plan = relayout.Plan()
    plan.dotted = {"sim.engine": "sim.des.engine", "sim.build_native": "sim.native.build", "sim.cli_plan": "sim.cli.plan",
                   "sim.importers": "calibration.importers", "tests.test_app": "tests.app.test_app"}
    plan.packaged = {"sim.cli": "sim.cli.flashplan", "sim.native": "sim.native.guard"}
    plan.paths = {"sim/engine.py": "sim/des/engine.py", "sim/cli.py": "sim/cli/flashplan.py", "sim/importers": "calibration/importers",
                  "tests/test_app.py": "tests/app/test_app.py"}
    return plan


BEFORE = """from sim import native, simulate
from sim.cli import main
from sim.engine import Run
import sim.cli
from sim.importers.fio import parse_fio
from tests.test_app import MAIN
x = sim.cli.main(["simulate"])
code = "import json; from sim import native; print(native.status())"
entry = "sim.cli:main"
cmd = [sys.executable, "-m", "sim.cli", "simulate"]
modules = ("sim.cli_plan",)
# see sim/engine.py, sim/cli.py and sim/importers/fio.py; tests/test_app.py; python -m sim.build_native
"""

AFTER = """from sim import simulate
from sim.native import guard as native
from sim.cli.flashplan import main
from sim.des.engine import Run
import sim.cli.flashplan
from calibration.importers.fio import parse_fio
from tests.app.test_app import MAIN
x = sim.cli.flashplan.main(["simulate"])
code = "import json; from sim.native import guard as native; print(native.status())"
entry = "sim.cli.flashplan:main"
cmd = [sys.executable, "-m", "sim.cli", "simulate"]
modules = ("sim.cli.plan",)
# see sim/des/engine.py, sim/cli/flashplan.py and calibration/importers/fio.py; tests/app/test_app.py; python -m sim.native.build
"""


def test_every_kind_of_reference_is_rewritten_and_python_m_keeps_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relayout, "submodules_of", lambda package: {"sim.cli": {"flashplan", "plan"},
                                                                   "sim.native": {"guard", "build", "_native"}}[package])
    once = relayout.rewrite_text(BEFORE, _plan())
    assert once == AFTER
    assert relayout.rewrite_text(once, _plan()) == once  # idempotent: a second run changes nothing


@pytest.mark.parametrize(("before", "levels", "after"), [
    ("ROOT = Path(__file__).resolve().parent.parent.parent", 1, "ROOT = Path(__file__).resolve().parent.parent.parent.parent"),
    ('BASE = Path(__file__).parent.parent / "fixtures"', 1, 'BASE = Path(__file__).parent.parent.parent / "fixtures"'),
    ("ROOT = Path(__file__).resolve().parents[2]", 2, "ROOT = Path(__file__).resolve().parents[4]"),
    ("text = Path(__file__).read_text()", 1, "text = Path(__file__).read_text()"),
    ("ROOT = Path(__file__).resolve().parent.parent", 0, "ROOT = Path(__file__).resolve().parent.parent"),
])
def test_a_file_moved_down_still_finds_the_repository(before: str, levels: int, after: str) -> None:
    assert relayout.depth_fix(before, levels) == after


def test_the_compiled_list_follows_the_modules() -> None:
    plan = relayout.Plan(paths={"sim/engine.py": "sim/des/engine.py", "sim/volume.py": "sim/route/volume.py"})
    text = 'COMPILED = ("engine.py", "volume.py",\n            "analytic/network.py")\nRECORD = 1\n'
    assert relayout.compiled_list(text, plan) == 'COMPILED = ("des/engine.py", "route/volume.py",\n            "analytic/network.py")\nRECORD = 1\n'


def test_every_module_in_sim_has_a_place_or_the_run_stops(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    plan = relayout.make_plan(strict=False)  # raises SystemExit naming any sim/*.py nothing places
    assert all(not Path(new).exists() for _, new in plan.moves)
    assert {old for old, _ in plan.moves} <= {str(p.relative_to(ROOT)) for p in [*ROOT.glob("sim/*"), *ROOT.glob("tests/test_*.py")]}
    monkeypatch.setattr(relayout, "tracked", lambda pattern: ["sim/brand_new.py"] if pattern == "sim/*.py" else [])
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "brand_new.py").write_text("import math\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match=r"sim/brand_new\.py: no rule places it"):
        relayout.make_plan(strict=False)
