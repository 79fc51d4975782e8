"""The mypyc build of the analytic fast path (sim/native.py): same answers, never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models import load_scenario
from sim import native
from sim.analytic import evaluate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))

PREDICT = """
import json, sys
from pathlib import Path
from models import load_scenario
from sim import native
from sim.analytic import evaluate
from bench.scenario_space import random_scenarios
scenarios = [load_scenario(p) for p in sys.argv[1:]] + random_scenarios(7, 30)
print(json.dumps({"status": native.status(), "results": [evaluate(s).summary() for s in scenarios]}))
"""


def _predict_in_child(interpreted: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != native.ENV_INTERPRETED}
    if interpreted:
        env[native.ENV_INTERPRETED] = "1"
    out = subprocess.run([sys.executable, "-c", PREDICT, *map(str, EXAMPLES)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def test_the_compiled_fast_path_predicts_exactly_what_the_interpreted_one_does() -> None:
    compiled = _predict_in_child(interpreted=False)
    if not str(compiled["status"]).startswith("compiled"):
        if os.environ.get("CI"):
            pytest.fail(f"CI runs `make test`, which builds the fast path, but it is {compiled['status']}")
        # a machine without a C compiler runs the interpreted fast path: nothing compiled to compare
        pytest.skip(f"the fast path is {compiled['status']}")
    interpreted = _predict_in_child(interpreted=True)
    assert str(interpreted["status"]).startswith("interpreted")
    assert len(compiled["results"]) == len(EXAMPLES) + 30  # type: ignore[arg-type]
    # the same floating-point operations in the same order: equal, not merely close
    assert compiled["results"] == interpreted["results"]


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


def test_flashplan_interpreted_loads_the_sources_and_they_answer_like_this_process() -> None:
    code = ("import json; from sim import native; import sim.analytic.network as n; "
            "print(json.dumps([native.status(), n.__file__]))")
    env = {**os.environ, native.ENV_INTERPRETED: "1"}
    status, network_file = json.loads(subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                                                     capture_output=True, text=True, check=True).stdout)
    assert status == f"interpreted ({native.ENV_INTERPRETED} is set)"
    assert network_file.endswith("network.py")
    # and this process, compiled or not, says which it runs and why
    assert native.status().startswith(("compiled with mypyc", "interpreted ("))


def test_a_fast_result_pickles_whichever_way_the_fast_path_runs() -> None:
    import pickle

    result = evaluate(load_scenario(EXAMPLES[0]))
    assert pickle.loads(pickle.dumps(result)) == result
