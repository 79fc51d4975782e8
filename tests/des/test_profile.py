"""Load over time: the profile workload, its DES replay, its fast path, its importers.

Checked against queueing theory (M/M/1: mean response S / (1 - rho), p99 ln(100) S / (1 - rho);
a closed loop of N I/Os on one exponential server keeps it busy: X = mu, R = N / mu), against
conservation (backlog_start + arrived - completed = backlog_end in every interval), against the
steady DES (a profile of equal intervals gives the steady result), and by round trips through
``flashplan import iostat --profile`` and ``flashplan import csv``.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from calibration.importers.iostat import parse_iostat
from models.profile import profile_from_csv
from models.scenario import load_scenario, scenario_from_data
from models.workload import ProfileWorkload
from sim.cli.flashplan import main
from sim.des.engine import simulate
from sim.plan.profile_fast import SETTLING_FACTOR, evaluate_profile, relaxation_us
from tests.conftest import EXAMPLES, ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "iostat"
S_US = 10.0
MU = 1e6 / S_US


def mm1(intervals: list[dict[str, Any]], seed: int = 5, **workload: Any) -> dict[str, Any]:
    """An exponential single server (10 us) under a profile of ``intervals``."""
    return {
        "name": "M/M/1 profile",
        "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                      "distribution": "exponential"}]},
        "workload": {"kind": "profile", "read_fraction": 1.0, "intervals": intervals, **workload},
        "run": {"seed": seed},
    }


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- the model -------------------------------------------------------------------------------------


def test_bad_interval_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = mm1([{"duration_s": 1, "rate_iops": 10}] * 3 + [{"duration_s": 0, "rate_iops": 10}])
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    code, _, err = run_cli(["simulate", str(path)], capsys)
    assert code == 2
    assert "workload.intervals.3.duration_s: Input should be greater than 0, got 0" in err
    assert "Traceback" not in err
    data = mm1([{"duration_s": 1}])
    path.write_text(yaml.safe_dump(data))
    code, _, err = run_cli(["simulate", str(path)], capsys)
    assert code == 2 and "workload.intervals.0.rate_iops: give exactly one of rate_iops" in err
    data = mm1([{"duration_s": 1, "rate_iops": 5, "read_fraction": 0.5, "sizes": [{"kib": 4, "op": "read"}]}])
    path.write_text(yaml.safe_dump(data))
    code, _, err = run_cli(["simulate", str(path)], capsys)
    assert code == 2 and "workload.intervals.0.sizes: no size entry applies to writes" in err


def test_interval_workload_fills_in_the_profile_mix() -> None:
    wl = scenario_from_data(mm1([{"duration_s": 1, "rate_iops": 100}, {"duration_s": 2, "queue_depth": 3, "read_fraction": 0.25,
                                                                       "block_size_kib": 64}], block_size_kib=8)).workload
    assert isinstance(wl, ProfileWorkload)
    first, second = wl.interval_workload(0), wl.interval_workload(1)
    assert first.kind == "open" and first.rate_iops == 100 and first.read_fraction == 1.0 and first.block_size_kib == 8
    assert second.kind == "closed" and second.jobs == 3 and second.queue_depth == 1
    assert second.read_fraction == 0.25 and second.block_size_kib == 64
    assert wl.duration_s == 3


# -- the DES replay ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed() -> Any:
    """Light, heavy, closed, idle and overloaded intervals, one after another (seeded)."""
    return simulate(scenario_from_data(mm1([
        {"duration_s": 0.4, "rate_iops": 50_000},
        {"duration_s": 0.2, "rate_iops": 95_000},
        {"duration_s": 0.3, "queue_depth": 4},
        {"duration_s": 0.2, "rate_iops": 0},
        {"duration_s": 0.05, "rate_iops": 130_000},
        {"duration_s": 0.1, "rate_iops": 20_000},
    ])))


def test_conservation_in_every_interval(mixed: Any) -> None:
    ivs = mixed.intervals
    for iv in ivs:
        assert iv.backlog_start + iv.arrived_ios - iv.completed_ios == iv.backlog_end, iv.index
    for a, b in itertools.pairwise(ivs):
        assert a.backlog_end == b.backlog_start
    # everything offered was served: the replay drains the last backlog
    assert sum(iv.arrived_ios for iv in ivs) == mixed.issued_ios == mixed.simulated_ios
    assert mixed.in_flight_ios == 0
    assert ivs[-1].backlog_end == mixed.simulated_ios - sum(iv.completed_ios for iv in ivs)
    assert ivs[3].arrived_ios == 0 and ivs[4].backlog_end > 0  # idle, then overloaded: a backlog builds


def test_replay_runs_for_the_sum_of_the_durations(mixed: Any) -> None:
    assert mixed.stop_reason.startswith("profile replayed: 6 interval(s), 1.25 s of simulated time")
    assert 1.25 <= mixed.simulated_seconds < 1.3  # plus the drain of the last I/Os
    assert [iv.start_s for iv in mixed.intervals] == pytest.approx([0, 0.4, 0.6, 0.9, 1.1, 1.15])


def test_closed_interval_keeps_its_depth(mixed: Any) -> None:
    closed = mixed.intervals[2]
    # N = 4 in flight on one exponential server: it never idles, X = mu, R = N / mu (Little)
    assert closed.metrics["iops"].contains(MU) or abs(closed.metrics["iops"].value / MU - 1) < 0.02
    assert closed.metrics["latency_mean_us"].value == pytest.approx(4 * S_US, rel=0.05)
    assert closed.offered_iops is None and not closed.saturated


def test_overloaded_interval_is_the_peak(mixed: Any) -> None:
    over = mixed.intervals[4]
    assert over.saturated and over.busiest == "server"
    assert mixed.peak_interval.index == 4 and mixed.peak_interval.highest_load_index == 4
    assert "worst p99" in mixed.peak_interval.reason
    # 0.05 s at 130K on a 100K server: ~1,500 I/Os behind at the end
    assert 800 < over.backlog_end < 2_500


def test_short_intervals_have_no_ci_and_say_why(mixed: Any) -> None:
    summary = mixed.summary()
    idle = summary["intervals"][3]
    assert idle["latency_p99_us"] == {"value": None, "ci95": None, "ci95_note": "nothing was measured in this interval"}
    short = summary["intervals"][4]["latency_p999_us"]
    assert short["ci95"] is None and "in each of its 10 time slices" in short["ci95_note"]
    json.dumps(summary, allow_nan=False)  # strict JSON
    assert summary["iops"]["ci95_note"].startswith("run-wide over a changing load")


def test_equal_intervals_give_the_steady_result() -> None:
    rate = 50_000.0
    profile = simulate(scenario_from_data(mm1([{"duration_s": 0.6, "rate_iops": rate}] * 3, seed=11, warmup_s=0.05)))
    steady = simulate(scenario_from_data({**mm1([]), "workload": {"kind": "open", "rate_iops": rate, "read_fraction": 1.0},
                                          "run": {"seed": 11, "max_ios": 120_000, "warmup_ios": 2_000}}))
    rho = rate / MU
    theory = {"latency_mean_us": S_US / (1 - rho), "latency_p99_us": math.log(100) * S_US / (1 - rho), "iops": rate}
    for iv in profile.intervals:
        for key, expected in theory.items():
            m, s = iv.metrics[key], getattr(steady, key)
            assert m.has_ci, (iv.index, key)
            assert abs(m.value - s.value) <= m.half_width + s.half_width, (iv.index, key, m, s)
            assert abs(m.value - expected) <= 2 * m.half_width + 0.03 * expected, (iv.index, key, m, expected)


def test_same_seed_same_replay() -> None:
    data = mm1([{"duration_s": 0.1, "rate_iops": 40_000}, {"duration_s": 0.1, "queue_depth": 2}], seed=9)
    a, b = (simulate(scenario_from_data(data)).summary() for _ in range(2))
    assert json.dumps(a) == json.dumps(b)


# -- the fast path --------------------------------------------------------------------------------


def test_fast_path_flags_unsettled_and_overloaded_intervals() -> None:
    rho = 0.95
    tau_s = relaxation_us(S_US, rho) * 1e-6  # M/M/1 relaxation time: 10 us / (1 - sqrt(0.95))^2 ~ 15.6 ms
    assert tau_s == pytest.approx(S_US / (1 - math.sqrt(rho)) ** 2 * 1e-6)
    est = evaluate_profile(scenario_from_data(mm1([
        {"duration_s": 1.0, "rate_iops": rho * MU},
        {"duration_s": 0.5 * SETTLING_FACTOR * tau_s, "rate_iops": rho * MU},
        {"duration_s": 1.0, "rate_iops": 1.2 * MU},
        {"duration_s": 1.0, "rate_iops": 0},
    ])))
    long, short, over, idle = est.intervals
    assert long.reliable and long.settling_s == pytest.approx(SETTLING_FACTOR * tau_s)
    assert long.fast is not None and long.fast.latency_mean_us == pytest.approx(S_US / (1 - rho))
    assert not short.reliable and "shorter than the queue's settling time" in short.note
    assert not over.reliable and "overloaded" in over.note and math.isinf(over.p99_estimate_us)
    assert idle.reliable and idle.fast is None
    assert est.peak_index == 2


def test_analyze_of_a_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["analyze", str(EXAMPLES / "linuxone_bdi_batch_profile.yaml"), "--json"], capsys)
    assert code == 0
    doc = json.loads(out)["fast_profile"]
    assert len(doc["intervals"]) == 5 and doc["intervals"][1]["fast"]["iops"] == pytest.approx(100_708)


# -- importers --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_iostat_profile_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = FIXTURES / "iostat_x_t_vda_loop0.txt"
    report = parse_iostat(source.read_bytes(), devices=["vda", "loop0"])
    out = tmp_path / "profile.yaml"
    code, _text, err = run_cli(["import", "iostat", str(source), "--profile", "--device", "vda", "--device", "loop0",
                               "--scenario", str(EXAMPLES / "mm1.yaml"), "--out", str(out)], capsys)
    assert code == 0, err
    scenario = load_scenario(out)
    wl = scenario.workload
    assert isinstance(wl, ProfileWorkload)
    assert len(wl.intervals) == len(report.candidates) == 9
    for iv, rep in zip(wl.intervals, report.candidates, strict=True):
        assert iv.duration_s == 1.0  # from the -t timestamps, one second apart
        assert iv.rate_iops == pytest.approx(rep.iops, abs=0.01)
        if rep.iops:
            assert iv.read_fraction == pytest.approx(rep.read_fraction, abs=1e-6)
            steady = wl.interval_workload(wl.intervals.index(iv))
            assert steady.rate_iops * steady.mean_bytes() / 1e6 == pytest.approx(rep.mbps, rel=0.01)
    # and it replays: the DES result has one entry per report
    result = simulate(scenario)
    assert len(result.intervals or []) == 9 and result.peak_interval is not None


def test_iostat_profile_needs_an_interval_without_timestamps(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_m_d.txt"), "--profile"], capsys)
    assert code == 2 and err.startswith("--interval-s: the reports carry no timestamps")
    code, out, _ = run_cli(["import", "iostat", str(FIXTURES / "iostat_x_m_d.txt"), "--profile", "--interval-s", "2", "--json"], capsys)
    assert code == 0 and json.loads(out)["duration_s"] == 18


def test_csv_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "load.csv"
    path.write_text("label,iops,mbps,read_pct,duration_s\n09:00,1000,8.192,70,60\n09:01,0,0,0,60\n09:02,2000,262.144,0,30\n")
    wl = profile_from_csv(path.read_bytes(), "load.csv")
    assert [iv.rate_iops for iv in wl.intervals] == [1000, 0, 2000]
    assert wl.intervals[0].block_size_kib == 8 and wl.intervals[2].block_size_kib == 128
    assert wl.intervals[0].read_fraction == 0.7 and wl.intervals[0].label == "09:00"
    path.write_text("iops,mbps,read_pct\n1000,8,70\n1000,8,170\n")
    code, _, err = run_cli(["import", "csv", str(path), "--interval-s", "60"], capsys)
    assert code == 2 and "load.csv: row 2.read_pct: a percentage must be 0 .. 100, got 170" in err
    path.write_text("iops,mbps\n1,2\n")
    code, _, err = run_cli(["import", "csv", str(path)], capsys)
    assert code == 2 and "missing column(s) read_pct" in err
    path.write_text("iops,mbps,read_pct\n1000,8,70\n")
    code, _, err = run_cli(["import", "csv", str(path)], capsys)
    assert code == 2 and "row 1.duration_s: empty: give a duration_s column or --interval-s" in err


def test_profile_example_replays(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["simulate", str(EXAMPLES / "linuxone_bdi_batch_profile.yaml"), "--json",
                            "--set", "workload.intervals.1.duration_s=0.05", "--set", "workload.intervals.3.duration_s=0.05",
                            "--set", "workload.intervals.0.duration_s=0.3", "--set", "workload.intervals.2.duration_s=0.3",
                            "--set", "workload.intervals.4.duration_s=0.3"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert len(doc["intervals"]) == 5 and doc["peak_interval"]["index"] in range(5)
    burst = doc["intervals"][1]
    assert burst["mbps"]["value"] == pytest.approx(3_300, rel=0.1)  # 100,708 x 32 KiB: seed 000's 3.3 GB/s
