"""The fast path of a profile among several workloads (sim/plan/profile_fast.py): each interval is
the steady scenario with the profile's interval in its place and the steady workloads as the other classes.

Checked against queueing theory (open classes at one exponential FCFS server: every class's response is
S / (1 - rho_total)), the settling rule taken at the mix's bottleneck, and against the DES replay of
examples/linuxone_bdi_batch_and_ycsb.yaml interval by interval and workload by workload.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from models.scenario import load_scenario, scenario_from_data
from sim.cli.flashplan import main
from sim.des.engine import simulate
from sim.plan.profile_fast import SETTLING_FACTOR, evaluate_profile, relaxation_us
from tests.conftest import EXAMPLES

S_US = 10.0
MU = 1e6 / S_US
ONE_STATION = {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                "distribution": "exponential"}]}


def mixed(intervals: list[dict[str, Any]], steady_rate: float = 40_000.0) -> dict[str, Any]:
    return {"topology": ONE_STATION, "run": {"seed": 2},
            "workloads": [{"name": "batch", "kind": "profile", "read_fraction": 1.0, "intervals": intervals},
                          {"name": "oltp", "kind": "open", "rate_iops": steady_rate, "read_fraction": 0.0}]}


def test_every_interval_is_the_multiclass_steady_state() -> None:
    rates = [10_000.0, 50_000.0, 0.0]
    est = evaluate_profile(scenario_from_data(mixed([{"duration_s": 1.0, "rate_iops": r} for r in rates])))
    for e, rate in zip(est.intervals, rates, strict=True):
        assert e.fast is not None and e.fast.workloads is not None and set(e.fast.workloads) == {"batch", "oltp"}
        rho = (rate + 40_000.0) / MU
        for name, own in (("batch", rate), ("oltp", 40_000.0)):
            w = e.fast.workloads[name]
            assert w.iops == pytest.approx(own, rel=1e-6, abs=1e-3), (e.index, name)
            if own > 0:
                assert w.latency_mean_us == pytest.approx(S_US / (1 - rho), rel=1e-6), (e.index, name)
            assert e.p99_by_workload[name] >= w.latency_mean_us
        assert e.fast.utilization["server"] == pytest.approx(rho, rel=1e-6)
    assert est.intervals[2].note.startswith("idle") and est.intervals[2].reliable  # the steady workload alone
    assert est.peak_index == 1
    doc = est.summary()
    json.dumps(doc, allow_nan=False)
    assert set(doc["intervals"][1]["latency_p99_estimate_us_by_workload"]) == {"batch", "oltp"}


def test_settling_rule_is_taken_at_the_mix_and_overload_is_flagged() -> None:
    rho = 0.95
    tau_s = relaxation_us(S_US, rho) * 1e-6
    profile_rate = rho * MU - 40_000.0  # with the steady 40K: 95% of the server in total
    est = evaluate_profile(scenario_from_data(mixed([
        {"duration_s": 2 * SETTLING_FACTOR * tau_s, "rate_iops": profile_rate},
        {"duration_s": 0.5 * SETTLING_FACTOR * tau_s, "rate_iops": profile_rate},
        {"duration_s": 1.0, "rate_iops": 0.8 * MU},
    ])))
    long, short, over = est.intervals
    assert long.reliable and long.settling_s == pytest.approx(SETTLING_FACTOR * tau_s, rel=1e-6)
    assert not short.reliable and "settling time" in short.note
    assert not over.reliable and "overloaded" in over.note and "120,000 IOPS offered" in over.note
    assert math.isinf(over.p99_estimate_us) and all(math.isinf(v) for v in over.p99_by_workload.values())
    assert est.peak_index == 2


def test_analyze_prints_each_workload_in_every_interval(capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(mixed([{"duration_s": 1.0, "rate_iops": 10_000}, {"duration_s": 1.0, "rate_iops": 50_000}])))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert "per workload and interval (fast path)" in out and "oltp" in out and "batch" in out
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["fast_profile"]
    assert doc["intervals"][1]["fast"]["workloads"]["oltp"]["iops"] == pytest.approx(40_000.0)


EXAMPLE = EXAMPLES / "linuxone_bdi_batch_and_ycsb.yaml"
SHORT = 0.03
"""Interval length of the example's replay here (0.1 s in the file): ~45,000 I/Os, a few seconds."""
IOPS_TOLERANCE = 0.03
"""Fast path vs DES per interval and workload: throughput within 3% (or 3 Poisson sd of the interval's I/Os)..."""
LATENCY_TOLERANCE = 0.15
"""... and mean latency within 15% (the batch's burst writes: 11% measured; YCSB within 3%)."""


def test_fast_path_agrees_with_the_des_on_the_example_interval_by_interval() -> None:
    """The point of the example: YCSB's latency rises during the batch's write burst (the burst programs the
    dies YCSB reads: sim/analytic/classes.py ``Dies``), and both solvers say by how much."""
    overrides: dict[str, Any] = {f"workloads.0.intervals.{i}.duration_s": SHORT for i in range(3)}
    scenario = load_scenario(EXAMPLE, overrides | {"workloads.0.warmup_s": 0.01})
    est = evaluate_profile(scenario)
    des = simulate(scenario)
    assert des.validity == "precise" and des.workloads is not None
    for name, w in des.workloads.items():
        assert w.intervals is not None
        for iv, e in zip(w.intervals, est.intervals, strict=True):
            assert e.fast is not None and e.fast.workloads is not None
            f = e.fast.workloads[name]
            x, r = iv.metrics["iops"], iv.metrics["latency_mean_us"]
            noise = 3 / math.sqrt(max(1, iv.completed_ios))
            assert f.iops == pytest.approx(x.value, rel=max(IOPS_TOLERANCE, noise)), (name, iv.index, f.iops, x)
            assert f.latency_mean_us == pytest.approx(r.value, rel=LATENCY_TOLERANCE), (name, iv.index, f.latency_mean_us, r)
    ycsb = des.workloads["ycsb"].intervals
    assert ycsb is not None
    quiet, burst = ycsb[0].metrics["latency_mean_us"].value, ycsb[1].metrics["latency_mean_us"].value
    assert burst > 1.3 * quiet  # the burst slows YCSB's reads ...
    fast = [e.fast.workloads["ycsb"].latency_mean_us for e in est.intervals if e.fast and e.fast.workloads]
    assert fast[1] > 1.3 * fast[0]  # ... in both solvers
    assert des.peak_interval is not None and des.peak_interval.index == 1 and est.peak_index == 1
