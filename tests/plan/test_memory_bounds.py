"""Requests that grow without bound are refused up front or kept small: each runs in a child process under a
1 GiB address-space limit (RLIMIT_AS), where building what the request names would run out of memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bench.memory import profile_scenario, sweep_file, topology_scenario
from models.requirements import consolidation_from_data
from models.scenario import read_scenario_data
from sim.plan.consolidated import plan_consolidated
from sim.plan.planner import NoFeasiblePlan
from sim.plan.sweep import MAX_RUNS, SweepInputError, SweepSpec, grid_points, plan_sweep

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          preexec_fn=_limited, check=False)


def test_a_sweep_of_a_trillion_points_is_refused_with_its_size(tmp_path: Path) -> None:
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(sweep_file(str(ROOT / "examples/s4_zvm_edev_aliases.yaml"), 12)))
    proc = _run("-m", "sim.cli.flashplan", "sweep", str(path), "--no-progress")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "1,000,000,000,000 points" in proc.stderr and f"allowed: <= {MAX_RUNS:,} runs" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_grid_size_is_the_product_of_the_factor_counts() -> None:
    spec = SweepSpec.model_validate({"base": {}, "factors": {"a.b": [1, 2, 3], "c.d": {"start": 1, "stop": 5}}})
    assert grid_points(spec, spec.factor_values()) == 15
    zipped = SweepSpec.model_validate({"base": {}, "mode": "zip", "factors": {"a.b": [1, 2, 3], "c.d": [4, 5, 6]}})
    assert grid_points(zipped, zipped.factor_values()) == 3


def test_a_missing_base_scenario_is_named_base_not_set(tmp_path: Path) -> None:
    spec = SweepSpec.model_validate({"base": str(tmp_path / "missing.yaml"), "factors": {"workload.read_fraction": [0.5]}})
    with pytest.raises(SweepInputError) as err:
        plan_sweep(spec)
    assert [f for f, _ in err.value.problems] == ["base"]


def test_the_largest_topology_the_schema_allows_is_refused_with_its_model_size(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(topology_scenario(256, 1024)))
    proc = _run("-m", "sim.cli.flashplan", "simulate", str(path))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "topology.namespaces.per_drive" in proc.stderr and "262,144 namespaces" in proc.stderr and "allowed: <=" in proc.stderr


def test_a_profile_of_ten_thousand_intervals_is_set_up_within_a_gibibyte(tmp_path: Path) -> None:
    """A replay holds every interval's log; a full latency histogram per slice would be 10 x 13.6 KB per interval."""
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile_scenario(10_000)))
    code = ("import sys\n"
            "from models.scenario import load_scenario\n"
            "from sim.des.profile import ProfileRun\n"
            "run = ProfileRun(load_scenario(sys.argv[1]))\n"
            "print(len(run.logs))\n")
    proc = _run("-c", code, str(path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "10000"


def test_an_impossible_objective_is_named_with_the_best_any_candidate_reached() -> None:
    data = read_scenario_data(ROOT / "examples/plan/linuxone_consolidation.yaml")
    req = consolidation_from_data(data, {"slos.0.us": 5, "candidates.devices": ["PM1733-1.92TB"], "candidates.max_devices": 4,
                                         "candidates.include_san": False})
    with pytest.raises(NoFeasiblePlan) as err:
        plan_consolidated(req)
    (field, message), = err.value.problems
    assert field == "slos.0"
    assert message.startswith("oltp: p99 latency <= 5 us is met by none of the")
    best = float(message.split("the best reaches ")[1].split(" us")[0].replace(",", ""))
    assert best > 5
