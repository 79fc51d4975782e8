"""A profile as one of several workloads: the profile's intervals drive its own I/Os while
steady workloads run beside it on the one route, and every workload is measured over the profile's
intervals.

Checked against the all-steady two-workload run and queueing theory (open classes at one exponential
FCFS server each see 1 / (mu - lambda_total)), against conservation (per workload and interval:
backlog_start + arrived - completed = backlog_end; the workloads add up to the whole run) and Little's
law per workload, and for determinism and bad input (exit 2 naming ``workloads.N....``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.scenario import scenario_from_data
from sim.cli.flashplan import main
from sim.des.engine import simulate
from tests.conftest import EXAMPLES
from tests.theory import mm1_response

S_US = 10.0
ONE_STATION = {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                "distribution": "exponential"}]}
PROFILE_RATE = 30_000.0
STEADY_RATE = 40_000.0


def mixed(intervals: list[dict[str, Any]], steady: dict[str, Any] | None = None, seed: int = 7, **profile: Any) -> dict[str, Any]:
    """One exponential 10 us server; a read profile of ``intervals`` next to a steady write workload."""
    return {
        "name": "profile next to a steady load",
        "topology": ONE_STATION,
        "workloads": [
            {"name": "batch", "kind": "profile", "read_fraction": 1.0, "intervals": intervals, **profile},
            steady or {"name": "oltp", "kind": "open", "rate_iops": STEADY_RATE, "read_fraction": 0.0},
        ],
        "run": {"seed": seed},
    }


@pytest.fixture(scope="module")
def equal() -> Any:
    """Three equal open intervals of the profile beside the steady open workload (70% load in total)."""
    return simulate(scenario_from_data(mixed([{"duration_s": 0.3, "rate_iops": PROFILE_RATE}] * 3, warmup_s=0.03)))


def test_equal_intervals_next_to_a_steady_load_give_the_all_steady_result(equal: Any) -> None:
    steady = simulate(scenario_from_data({
        "topology": ONE_STATION, "run": {"seed": 7, "max_ios": 150_000, "warmup_ios": 3_000},
        "workloads": [{"name": "batch", "kind": "open", "rate_iops": PROFILE_RATE, "read_fraction": 1.0},
                      {"name": "oltp", "kind": "open", "rate_iops": STEADY_RATE, "read_fraction": 0.0}]}))
    assert equal.workloads is not None and steady.workloads is not None
    assert list(equal.workloads) == ["batch", "oltp"]
    theory = mm1_response((PROFILE_RATE + STEADY_RATE) * 1e-6, S_US)  # every class sees the total load
    for name, rate in (("batch", PROFILE_RATE), ("oltp", STEADY_RATE)):
        w, s = equal.workloads[name], steady.workloads[name]
        assert w.intervals is not None and len(w.intervals) == 3
        for iv in w.intervals:
            for key, expected in (("iops", rate), ("latency_mean_us", theory)):
                m, ref = iv.metrics[key], getattr(s, key)
                assert m.has_ci, (name, iv.index, key)
                assert abs(m.value - ref.value) <= m.half_width + ref.half_width + 0.01 * ref.value, (name, iv.index, key, m, ref)
                assert abs(m.value - expected) <= 2 * m.half_width + 0.03 * expected, (name, iv.index, key, m, expected)
        # run-wide over the three intervals: within the all-steady interval
        assert abs(w.latency_mean_us.value - s.latency_mean_us.value) <= 2 * s.latency_mean_us.half_width + 0.03 * theory, name
        assert w.iops.value == pytest.approx(rate, rel=0.03)
    assert equal.workloads["batch"].kind == "profile" and equal.workloads["oltp"].kind == "open"
    assert equal.workloads["batch"].write_iops.value == 0 and equal.workloads["oltp"].read_iops.value == 0  # each its own mix


def test_conservation_per_workload_and_the_workloads_add_up(equal: Any) -> None:
    assert equal.intervals is not None and equal.workloads is not None
    for k, whole in enumerate(equal.intervals):
        parts = [w.intervals[k] for w in equal.workloads.values()]
        for iv in (whole, *parts):
            assert iv.backlog_start + iv.arrived_ios - iv.completed_ios == iv.backlog_end, iv
            assert iv.arrived_ios > 0 and iv.completed_ios > 0
        for field in ("arrived_ios", "completed_ios", "backlog_start", "backlog_end"):
            assert sum(getattr(p, field) for p in parts) == getattr(whole, field), (k, field)
        assert whole.offered_iops == PROFILE_RATE + STEADY_RATE
        assert [p.offered_iops for p in parts] == [PROFILE_RATE, STEADY_RATE]
        total = sum(p.metrics["iops"].value for p in parts)
        assert total == pytest.approx(whole.metrics["iops"].value, rel=1e-9)
    assert sum(w.measured_ios for w in equal.workloads.values()) == equal.measured_ios


def test_littles_law_per_workload(equal: Any) -> None:
    assert equal.workloads is not None
    for name, w in equal.workloads.items():
        little = w.iops.value * w.latency_mean_us.value * 1e-6
        assert w.mean_outstanding_ios.value == pytest.approx(little, rel=0.03), name
    in_flight = sum(w.mean_outstanding_ios.value for w in equal.workloads.values())
    assert in_flight == pytest.approx(equal.mean_outstanding_ios.value, rel=1e-6)


def test_the_steady_workload_feels_the_burst_and_the_peak_is_named() -> None:
    """A closed steady loop (4 I/Os, 40 us think) beside a quiet - burst - quiet profile: its latency in the
    burst interval is higher and its peak interval is the burst; the profile's closed interval keeps its depth."""
    closed = {"name": "oltp", "kind": "closed", "jobs": 4, "think_time_us": 40, "read_fraction": 0.0}
    data = mixed([{"duration_s": 0.1, "rate_iops": 5_000, "label": "quiet"}, {"duration_s": 0.1, "rate_iops": 50_000, "label": "burst"},
                  {"duration_s": 0.1, "queue_depth": 2, "label": "closed"}], steady=closed, seed=3)
    result = simulate(scenario_from_data(data))
    assert result.workloads is not None and result.peak_interval is not None
    oltp, batch = result.workloads["oltp"], result.workloads["batch"]
    assert oltp.intervals is not None and batch.intervals is not None and oltp.peak_interval is not None
    lat = [iv.metrics["latency_mean_us"].value for iv in oltp.intervals]
    assert lat[1] > lat[0] * 1.5, lat
    assert oltp.peak_interval.index == 1
    assert [iv.offered_iops for iv in oltp.intervals] == [None, None, None]  # closed: its rate is the system's answer
    assert result.intervals is not None and result.intervals[1].offered_iops is None
    assert batch.intervals[2].offered_iops is None
    # the profile's closed interval: 2 in flight, about 2 / (R) per second; its own backlog at the end is its depth
    assert batch.intervals[2].backlog_end == 2
    assert result.stop_reason.startswith("profile replayed: 3 interval(s)")
    assert result.validity == "precise"


def test_same_seed_same_mixed_replay() -> None:
    data = mixed([{"duration_s": 0.05, "rate_iops": 20_000}, {"duration_s": 0.05, "queue_depth": 3}], seed=9)
    a, b = (json.dumps(simulate(scenario_from_data(data)).summary(), allow_nan=False) for _ in range(2))
    assert a == b
    other = json.dumps(simulate(scenario_from_data({**data, "run": {"seed": 10}})).summary(), allow_nan=False)
    assert other != a


def test_a_budget_cuts_the_mixed_replay_short() -> None:
    data = mixed([{"duration_s": 0.2, "rate_iops": 30_000}] * 2)
    data["run"]["max_ios"] = 5_000
    result = simulate(scenario_from_data(data))
    assert result.validity == "cut_short" and result.stop_reason.startswith("budget: max_ios")
    assert result.workloads is not None
    for w in result.workloads.values():
        assert w.intervals is not None and all("not fully replayed" in note for note in w.intervals[-1].ci_notes.values())


def test_simulate_json_and_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(mixed([{"duration_s": 0.05, "rate_iops": 20_000, "label": "a"},
                                          {"duration_s": 0.05, "rate_iops": 50_000, "label": "b"}])))
    assert main(["simulate", str(path), "--json"]) == 0
    text = capsys.readouterr().out
    data = json.loads(text, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert set(data["workloads"]) == {"batch", "oltp"}
    for name in ("batch", "oltp"):
        w = data["workloads"][name]
        assert len(w["intervals"]) == 2 and w["peak_interval"]["index"] in (0, 1)
        assert {"iops", "latency_p99_us", "backlog_end"} <= set(w["intervals"][0])
    assert len(data["intervals"]) == 2 and data["peak_interval"] is not None
    assert main(["simulate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "per workload" in out and "all workloads: intervals" in out
    assert "workload batch (profile): intervals" in out and "workload oltp (open): intervals" in out
    assert "workload oltp (open): peak interval (*)" in out


@pytest.mark.parametrize(("change", "field", "problem"), [
    (lambda d: d["workloads"][0]["intervals"].append({"duration_s": 0, "rate_iops": 5}),
     "workloads.0.intervals.1.duration_s", "greater than 0"),
    (lambda d: d["workloads"][0]["intervals"].append({"duration_s": 1}),
     "workloads.0.intervals.1.rate_iops", "give exactly one of rate_iops"),
    (lambda d: d["workloads"][0].update(placement=[0, 9]), "workloads.0.placement", "members are numbered 0..3"),
    (lambda d: d["workloads"][1].update(placement=[0, 1, 2]), "workloads.1.placement", "an even number"),
    (lambda d: d["workloads"].append({**d["workloads"][0], "name": "again"}), "workloads.2.kind", "at most one profile"),
])
def test_bad_input_in_the_list_exits_2_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any,
                                                        field: str, problem: str) -> None:
    data = mixed([{"duration_s": 0.05, "rate_iops": 20_000}])
    data["topology"] = {"kind": "direct_nvme", "drives": 4, "layout": "raid10"}
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    line = next((ln for ln in err.splitlines() if ln.startswith(field + ":")), "")
    assert problem in line, err
    assert "Traceback" not in err


def test_the_bdi_and_ycsb_example_replays(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/linuxone_bdi_batch_and_ycsb.yaml (short intervals here): the batch's burst carries seed 000's
    3.3 GB/s of writes, YCSB its >3 GB/s of reads (section 4.1.1), and YCSB is slowest during the burst."""
    shorter = [x for i in range(3) for x in ("--set", f"workloads.0.intervals.{i}.duration_s=0.015")]
    assert main(["simulate", str(EXAMPLES / "linuxone_bdi_batch_and_ycsb.yaml"), "--json", *shorter,
                 "--set", "workloads.0.warmup_s=0.005"]) == 0
    doc = json.loads(capsys.readouterr().out)
    batch, ycsb = doc["workloads"]["batch"], doc["workloads"]["ycsb"]
    assert batch["kind"] == "profile" and ycsb["kind"] == "closed"
    assert batch["intervals"][1]["mbps"]["value"] == pytest.approx(3_300, rel=0.1)  # 100,708 x 32 KiB
    assert all(iv["mbps"]["value"] > 3_000 for iv in ycsb["intervals"])
    assert ycsb["peak_interval"]["index"] == 1


def test_each_workload_keeps_to_its_placement() -> None:
    """The profile writes on members 0 and 1 only, the steady load reads 2 and 3: the program work of the
    profile's bursts is on drives 0 and 1, the reads on 2 and 3 (each its own RAID-10 over its members)."""
    data = mixed([{"duration_s": 0.02, "rate_iops": 20_000}] * 2, steady={
        "name": "oltp", "kind": "open", "rate_iops": 20_000, "read_fraction": 1.0, "placement": [2, 3]})
    data["topology"] = {"kind": "direct_nvme", "drives": 4, "layout": "raid10"}
    data["workloads"][0].update(read_fraction=0.0, placement=[0, 1])
    result = simulate(scenario_from_data(data))
    assert result.validity == "precise"
    u = result.utilization
    assert u["drive0.write_bw"] > 0 and u["drive1.write_bw"] > 0
    assert u["drive2.write_bw"] == 0 and u["drive3.write_bw"] == 0
    # the read data leaves drives 2 and 3 only (their links towards the host), the written data enters 0 and 1 only
    assert u["drive2.link.to_host"] > 0 and u["drive3.link.to_host"] > 0
    assert u["drive0.link.to_host"] == 0 and u["drive1.link.to_host"] == 0
    assert u["drive0.link.to_device"] > 0 and u["drive2.link.to_device"] == 0
