"""Several workloads on one configuration (consolidation): per-workload results obey Little's
law and conservation, match multi-class queueing theory (open M/M/1 with the total load, exact
multi-class MVA), are the single-workload results when there is one, and a placement keeps a
workload on its members."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from models import scenario_from_data
from models.loading import format_validation_error
from models.scenario import Scenario
from sim import simulate
from sim.analytic import evaluate
from sim.analytic.classes import mixed_mva
from sim.cli.flashplan import main
from tests.theory import mm1_response

SERVICE_US = 10.0
ONE_STATION = {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": SERVICE_US,
                                                "distribution": "exponential"}]}


def two_class(workloads: list[dict[str, Any]], max_ios: int = 120_000, seed: int = 3) -> Scenario:
    return scenario_from_data({"name": "two classes", "topology": ONE_STATION, "workloads": workloads,
                               "run": {"seed": seed, "max_ios": max_ios, "warmup_ios": 3_000}})


OPEN_TWO = [{"name": "reads", "kind": "open", "rate_iops": 30_000, "read_fraction": 1.0},
            {"name": "writes", "kind": "open", "rate_iops": 40_000, "read_fraction": 0.0}]
CLOSED_TWO = [{"name": "a", "kind": "closed", "jobs": 2, "think_time_us": 20, "think_distribution": "exponential", "read_fraction": 1.0},
              {"name": "b", "kind": "closed", "jobs": 3, "think_time_us": 40, "think_distribution": "exponential", "read_fraction": 0.0}]


def exact_two_class_mva(service: float, populations: tuple[int, int], think: tuple[float, float]) -> tuple[list[float], list[float]]:
    """Exact two-class MVA at one FCFS exponential station (Reiser and Lavenberg), written out here
    independently of sim/analytic/classes.py: (throughput per us, response us) per class."""
    queue: dict[tuple[int, int], float] = {(0, 0): 0.0}
    x, r = [0.0, 0.0], [0.0, 0.0]
    for total in range(1, sum(populations) + 1):
        for n0 in range(max(0, total - populations[1]), min(populations[0], total) + 1):
            n = (n0, total - n0)
            x, r = [0.0, 0.0], [0.0, 0.0]
            for c in (0, 1):
                if n[c]:
                    below = (n[0] - (c == 0), n[1] - (c == 1))
                    r[c] = service * (1 + queue[below])
                    x[c] = n[c] / (think[c] + r[c])
            queue[n] = x[0] * r[0] + x[1] * r[1]
    return x, r


def test_per_workload_results_obey_littles_law_and_conservation() -> None:
    result = simulate(two_class(OPEN_TWO))
    assert result.workloads is not None and list(result.workloads) == ["reads", "writes"]
    assert sum(w.measured_ios for w in result.workloads.values()) == result.measured_ios
    total = sum(w.iops.value for w in result.workloads.values())
    assert total == pytest.approx(result.iops.value, rel=1e-9)
    assert sum(w.mbps.value for w in result.workloads.values()) == pytest.approx(result.mbps.value, rel=1e-9)
    in_flight = sum(w.mean_outstanding_ios.value for w in result.workloads.values())
    assert in_flight == pytest.approx(result.mean_outstanding_ios.value, rel=0.01)
    for name, w in result.workloads.items():
        little = w.iops.value * w.latency_mean_us.value * 1e-6
        assert w.mean_outstanding_ios.value == pytest.approx(little, rel=0.03), name
    reads, writes = result.workloads["reads"], result.workloads["writes"]
    assert reads.write_iops.value == 0 and writes.read_iops.value == 0  # each class's own mix


def test_two_open_classes_at_one_mm1_station_each_see_the_total_load() -> None:
    """Exponential FCFS: every class's response is 1 / (mu - lambda_total), whatever its own rate."""
    expected = mm1_response(70_000e-6, SERVICE_US)
    result = simulate(two_class(OPEN_TWO, max_ios=300_000))
    assert result.workloads is not None
    for name, w in result.workloads.items():
        assert abs(w.latency_mean_us.value - expected) <= max(2 * w.latency_mean_us.half_width, 0.05 * expected), name
        assert w.offered_iops == pytest.approx(w.iops.value, rel=0.03)
    fast = evaluate(two_class(OPEN_TWO))
    assert fast.workloads is not None
    for w in fast.workloads.values():
        assert w.latency_mean_us == pytest.approx(expected, rel=1e-9)
    assert fast.utilization["server"] == pytest.approx(0.7, rel=1e-9)


def test_two_closed_classes_match_exact_multiclass_mva_in_the_des_and_the_fast_path() -> None:
    x, r = exact_two_class_mva(SERVICE_US, (2, 3), (20.0, 40.0))
    fast = evaluate(two_class(CLOSED_TWO))
    result = simulate(two_class(CLOSED_TWO, max_ios=200_000))
    assert fast.workloads is not None and result.workloads is not None
    for c, name in enumerate(("a", "b")):
        assert fast.workloads[name].iops == pytest.approx(x[c] * 1e6, rel=1e-6)
        assert fast.workloads[name].latency_mean_us == pytest.approx(r[c], rel=1e-6)
        des = result.workloads[name]
        assert des.iops.value == pytest.approx(x[c] * 1e6, rel=0.03), name
        assert des.latency_mean_us.value == pytest.approx(r[c], rel=0.04), name


def test_one_workload_as_a_list_gives_the_result_of_the_single_workload() -> None:
    data = {"name": "s", "topology": ONE_STATION, "run": {"seed": 5, "max_ios": 30_000, "warmup_ios": 2_000},
            "workload": {"kind": "open", "rate_iops": 60_000, "read_fraction": 0.7}}
    single = simulate(scenario_from_data(data))
    listed_data = {k: v for k, v in data.items() if k != "workload"} | {"workloads": [data["workload"] | {"name": "only"}]}
    listed = simulate(scenario_from_data(listed_data))
    a, b = single.summary(), listed.summary()
    for key in ("scenario", "workloads"):
        a.pop(key, None)
        b.pop(key, None)
    assert json.dumps(a) == json.dumps(b)
    assert listed.workloads is not None
    only = listed.workloads["only"]
    for key in ("iops", "latency_mean_us", "latency_p99_us", "read_latency_mean_us"):
        assert getattr(only, key).value == pytest.approx(getattr(single, key).value, rel=1e-12), key
    assert evaluate(scenario_from_data(listed_data)).iops == pytest.approx(evaluate(scenario_from_data(data)).iops, rel=1e-12)


def test_a_placed_workload_uses_only_its_members() -> None:
    data = {"name": "placed", "run": {"seed": 2, "max_ios": 20_000, "warmup_ios": 1_000},
            "topology": {"kind": "direct_nvme", "drives": 4, "namespaces": {"per_drive": 2}, "layout": "raid10"},
            "workloads": [{"name": "oltp", "kind": "open", "rate_iops": 20_000, "placement": [0, 1, 2, 3]},
                          {"name": "backup", "kind": "open", "rate_iops": 500, "block_size_kib": 256, "read_fraction": 1.0,
                           "access": "sequential", "placement": [4, 5, 6, 7]}]}
    result = simulate(scenario_from_data(data))
    assert result.workloads is not None
    # members 0-3 are namespace 0 of drives 0-3 and members 4-7 namespace 1 (member m on drive m % 4)
    first = [result.utilization[f"drive{d}.ns0"] for d in range(4)]
    second = [result.utilization[f"drive{d}.ns1"] for d in range(4)]
    alone = dict(data, workloads=[data["workloads"][0]])
    only_oltp = simulate(scenario_from_data(alone))
    assert all(u > 0 for u in first) and any(u > 0 for u in second)  # backup reads take the first copy of an idle pair (md)
    assert [only_oltp.utilization[f"drive{d}.ns1"] for d in range(4)] == [0.0] * 4
    assert all(only_oltp.utilization[f"drive{d}.ns0"] > 0 for d in range(4))


@pytest.mark.parametrize(("workloads", "field"), [
    ([{"name": "a", "kind": "open", "rate_iops": 10}, {"name": "b", "kind": "open", "rate_iops": -1}], "workloads.1.rate_iops"),
    ([{"name": "a", "kind": "open", "rate_iops": 10}, {"name": "a", "kind": "open", "rate_iops": 10}], "workloads.1.name"),
    ([{"kind": "open", "rate_iops": 10}], "workloads.0.name"),
    ([{"name": "a", "kind": "open", "rate_iops": 10, "placement": [0, 9]}], "workloads.0.placement"),
    ([{"name": "a", "kind": "open", "rate_iops": 10, "placement": [0, 1, 2]}], "workloads.0.placement"),
])
def test_a_bad_workload_is_named_by_its_place_in_the_list(workloads: list[dict[str, Any]], field: str) -> None:
    data = {"topology": {"kind": "direct_nvme", "drives": 4, "layout": "raid10"}, "workloads": workloads}
    with pytest.raises(ValidationError) as info:
        scenario_from_data(data)
    paths = [path for path, _ in format_validation_error(info.value)]
    assert field in paths


def test_workload_and_workloads_together_is_refused_with_exit_code_2(tmp_path, capsys) -> None:
    path = tmp_path / "both.json"
    path.write_text(json.dumps({"topology": ONE_STATION, "workload": {"kind": "open", "rate_iops": 10},
                                "workloads": [{"name": "a", "kind": "open", "rate_iops": 10}]}))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "workloads" in err and "Traceback" not in err


def test_simulate_json_has_a_workloads_object_keyed_by_name(tmp_path, capsys) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"topology": ONE_STATION, "workloads": OPEN_TWO, "run": {"max_ios": 8_000, "warmup_ios": 1_000}}))
    main(["simulate", str(path), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert set(data["workloads"]) == {"reads", "writes"}
    assert set(data["workloads"]["reads"]) >= {"iops", "mbps", "latency_p99_us", "read_latency_mean_us", "write_latency_mean_us"}
    main(["simulate", str(path)])
    text = capsys.readouterr().out
    assert "per workload" in text and "reads" in text and "writes" in text


@settings(max_examples=40, deadline=None)
@given(d=st.lists(st.lists(st.floats(1.0, 50.0), min_size=2, max_size=2), min_size=2, max_size=3),
       n=st.lists(st.integers(1, 6), min_size=3, max_size=3), z=st.floats(0.0, 200.0))
def test_mixed_mva_closed_classes_obey_the_utilization_and_response_time_laws(d: list[list[float]], n: list[int], z: float) -> None:
    classes = len(d)
    x, r, stable = mixed_mva([1, 1], d, [0.0] * classes, [float(k) for k in n[:classes]], [z] * classes)
    assert stable
    for k in range(2):
        assert sum(x[c] * d[c][k] for c in range(classes)) < 1.0 + 1e-9  # no station busier than always
    for c in range(classes):
        assert r[c] >= sum(d[c]) - 1e-9  # never faster than the bare demands
        assert n[c] == pytest.approx(x[c] * (z + r[c]), rel=1e-9)  # response time law


def test_mixed_mva_open_classes_saturating_a_station_are_unstable() -> None:
    _, r, stable = mixed_mva([1], [[10.0], [10.0]], [0.05, 0.06], [0.0, 0.0], [0.0, 0.0])
    assert not stable and all(math.isinf(v) for v in r)


# -- objectives per workload --------------------------------------------------------------------

def test_an_objective_must_name_a_workload_and_bound_something() -> None:
    data = {"topology": ONE_STATION, "workloads": OPEN_TWO}
    with pytest.raises(ValidationError) as info:
        scenario_from_data(data | {"slos": [{"workload": "oltp", "us": 100}]})
    assert "slos.0.workload" in [path for path, _ in format_validation_error(info.value)]
    with pytest.raises(ValidationError) as info:
        scenario_from_data(data | {"slos": [{"workload": "reads"}]})
    assert "slos.0.us" in [path for path, _ in format_validation_error(info.value)]


def test_objectives_are_checked_against_each_workloads_interval(tmp_path, capsys) -> None:
    """The M/M/1 gives both classes 33.3 us: a 100 us mean ceiling is met, a 20 us one missed, and a
    throughput floor at the offered rate sits inside the interval (uncertain)."""
    slos = [{"workload": "reads", "statistic": "mean", "us": 100}, {"workload": "writes", "statistic": "mean", "us": 20},
            {"workload": "writes", "min_iops": 40_000}]
    path = tmp_path / "slo.json"
    path.write_text(json.dumps({"topology": ONE_STATION, "workloads": OPEN_TWO, "slos": slos,
                                "run": {"max_ios": 60_000, "warmup_ios": 2_000}}))
    main(["simulate", str(path), "--json"])
    verdicts = [row["verdict"] for row in json.loads(capsys.readouterr().out)["slos"]]
    assert verdicts == ["met", "missed", "uncertain"]
    main(["analyze", str(path), "--json"])
    fast = [row["verdict"] for row in json.loads(capsys.readouterr().out)["slos"]]
    assert fast == ["met", "missed", "met"]  # the fast path's throughput is the offered rate exactly


def test_a_consolidated_run_is_the_same_for_the_same_seed_and_differs_for_another() -> None:
    mixed = [CLOSED_TWO[0], OPEN_TWO[1] | {"rate_iops": 20_000}, {"name": "burst", "kind": "bursty", "on_rate_iops": 50_000,
                                                                  "mean_on_ms": 1, "mean_off_ms": 9, "read_fraction": 0.5}]
    first, again = (json.dumps(simulate(two_class(mixed, max_ios=15_000)).summary()) for _ in range(2))
    other = json.dumps(simulate(two_class(mixed, max_ios=15_000, seed=4)).summary())
    assert first == again and first != other


# -- the consolidated planner --------------------------------------------------------------------

def test_the_consolidated_planner_buys_the_cheapest_grid_point_that_keeps_every_objective() -> None:
    from models.requirements import consolidation_from_data
    from sim.plan.consolidated import plan_consolidated

    data = {"name": "two workloads", "platform": "linuxone", "usable_tb": 1, "protection": "mirror",
            "workloads": [{"name": "oltp", "kind": "open", "rate_iops": 450_000, "read_fraction": 0.9, "block_size_kib": 8},
                          {"name": "backup", "kind": "open", "rate_iops": 300, "read_fraction": 1.0, "block_size_kib": 1024,
                           "access": "sequential"}],
            "slos": [{"workload": "oltp", "statistic": "mean", "us": 125}, {"workload": "backup", "min_mbps": 300}],
            "candidates": {"devices": ["PM1733-1.92TB"], "device_counts": [2, 4], "layouts": ["raid10", "raid1"],
                           "namespaces": [1], "include_san": False},
            "verify": {"max_ios": 40_000, "warmup_ios": 2_000, "target_rel_ci": 0.05}}
    result = plan_consolidated(consolidation_from_data(data))
    winner = result.winner
    assert winner.stage == "verified" and winner.des is not None and winner.des.workloads is not None
    assert winner.des.workloads["oltp"].latency_mean_us.value <= 125
    assert winner.label.startswith("4 x")
    # two drives (raid1) cost half but queue the OLTP reads past the objective: rejected, saying why
    (cheaper,) = [c for c in result.rejected if c.capex.total_usd < winner.capex.total_usd]
    assert cheaper.label.startswith("2 x") and cheaper.stage == "objectives" and "oltp latency_mean_us" in (cheaper.rejection or "")
    with pytest.raises(ValidationError) as info:
        consolidation_from_data(data | {"slos": [{"workload": "nobody", "us": 1}]})
    assert "slos.0.workload" in [path for path, _ in format_validation_error(info.value)]
