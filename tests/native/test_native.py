"""The mypyc build of the engine and the analytic fast path (sim/native/guard.py): same answers, never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models import load_scenario
from sim.analytic import evaluate
from sim.native import guard as native
from tests.conftest import steady_examples

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = steady_examples()

PREDICT = """
import json, sys
from models import load_scenario, with_overrides
from sim import simulate
from sim.native import guard as native
from sim.analytic import evaluate
from tests.conftest import steady_examples
from bench.scenario_space import random_scenarios
examples = [load_scenario(p) for p in sys.argv[1:]]
scenarios = examples + random_scenarios(7, 30)
# the simulation stops on I/O counts only here (a wall-clock budget would stop it where the machine says); a few
# thousand I/Os per example run every compiled module (routes, dies, batching, the stop rules), bit for bit
budget = {"run.max_ios": 8000, "run.warmup_ios": 1000, "run.max_wall_s": 86400, "run.target_rel_ci": 1e-9}
print(json.dumps({"status": native.status(),
                  "results": [evaluate(s).summary() for s in scenarios],
                  "simulated": [simulate(with_overrides(s, budget)).summary() for s in examples]}))
"""


def _predict_in_child(interpreted: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != native.ENV_INTERPRETED}
    if interpreted:
        env[native.ENV_INTERPRETED] = "1"
    out = subprocess.run([sys.executable, "-c", PREDICT, *map(str, EXAMPLES)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


@pytest.mark.slow
def test_the_compiled_engine_and_fast_path_predict_exactly_what_the_interpreted_ones_do() -> None:
    compiled = _predict_in_child(interpreted=False)
    if not str(compiled["status"]).startswith("compiled"):
        if os.environ.get("CI"):
            pytest.fail(f"CI runs `make test`, which compiles the engine and the fast path, but they are {compiled['status']}")
        # a machine without a C compiler runs the interpreted fast path: nothing compiled to compare
        pytest.skip(f"the engine and the fast path are {compiled['status']}")
    interpreted = _predict_in_child(interpreted=True)
    assert str(interpreted["status"]).startswith("interpreted")
    assert len(compiled["results"]) == len(EXAMPLES) + 30  # type: ignore[arg-type]
    assert len(compiled["simulated"]) == len(EXAMPLES)  # type: ignore[arg-type]
    # the same floating-point operations in the same order: equal, not merely close
    assert compiled["results"] == interpreted["results"]
    assert compiled["simulated"] == interpreted["simulated"]


def test_a_source_edited_after_the_build_is_not_shadowed_by_it(tmp_path: Path) -> None:
    sources = [tmp_path / "__init__.py", tmp_path / "network.py"]
    for f in sources:
        f.write_text(f"# {f.name}\n")
    record = tmp_path / "record.json"
    assert "not built" in str(native.stale_reason(record, sources))
    record.write_text(json.dumps({"python": sys.implementation.cache_tag, "sources": native.digests(sources)}))
    assert native.stale_reason(record, sources) is None
    sources[1].write_text("# network.py, edited\n")
    assert native.stale_reason(record, sources) == "sources changed since the build: network.py"
    record.write_text(json.dumps({"python": "cpython-99", "sources": native.digests(sources)}))
    assert "built for cpython-99" in str(native.stale_reason(record, sources))
    record.write_text("{not json")
    assert "unreadable" in str(native.stale_reason(record, sources))


def test_flashplan_interpreted_loads_every_compiled_module_from_its_source() -> None:
    code = ("import json, sys; from sim.native import guard as native; import sim.analytic.network, sim.des.engine; "
            "print(json.dumps([native.status(), [sys.modules[native.module_name(s)].__file__ for s in native.sources()]]))")
    env = {**os.environ, native.ENV_INTERPRETED: "1"}
    status, files = json.loads(subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                                              capture_output=True, text=True, check=True).stdout)
    assert status == f"interpreted ({native.ENV_INTERPRETED} is set)"
    assert files == [str(s) for s in native.sources()]
    # and this process, compiled or not, says which it runs and why
    assert native.status().startswith(("compiled with mypyc", "interpreted ("))


def test_a_fast_result_pickles_whichever_way_the_fast_path_runs() -> None:
    import pickle

    result = evaluate(load_scenario(EXAMPLES[0]))
    assert pickle.loads(pickle.dumps(result)) == result
