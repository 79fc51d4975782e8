"""Smoke test of the benchmark code (bench/): every benchmark function runs at a tiny size.

No timing assertions: rates only have to be positive. Accuracy is checked against
Erlang C at rho = 0.6, where 5,000 customers give a mean response time within a few
percent (at the benchmark's rho = 0.9 the mean of 5,000 customers still scatters by
~20% from seed to seed, so there only sanity of the output is checked).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.analytic import erlang_c, mmc_mean_response
from bench.memory import measure_peak
from bench.mm8 import ANALYTIC_MEAN_US, ENGINES, RATE_IOPS, mean_response_us
from bench.run import main as bench_main
from bench.s1 import run_s1

SMALL = 5_000
LIGHT_RATE_IOPS = 60_000.0  # rho = 0.6

SMOKE_SCENARIO = """\
name: bench smoke direct NVMe
topology: {kind: direct_nvme, drives: 4, layout: raid10}
workload: {kind: closed, jobs: 16, queue_depth: 1, read_fraction: 0.9, block_size_kib: 8, access: random}
run: {seed: 1, warmup_ios: 1000, max_ios: 50000}
"""


def test_erlang_c_reference_values() -> None:
    assert erlang_c(8, 0.09, 1 / 80) == pytest.approx(0.7015, abs=1e-4)
    assert mmc_mean_response(8, 0.09, 1 / 80) == pytest.approx(150.15, abs=0.01)
    assert mean_response_us() == ANALYTIC_MEAN_US
    assert mmc_mean_response(1, 0.09, 0.1) == pytest.approx(100.0)  # M/M/1: S / (1 - rho)
    assert math.isinf(mmc_mean_response(8, 0.1, 1 / 80))  # rho = 1


@pytest.mark.parametrize("engine", list(ENGINES))
def test_engine_mean_matches_erlang_c(engine: str) -> None:
    run = ENGINES[engine](SMALL, 1, LIGHT_RATE_IOPS)
    assert run.customers >= SMALL
    assert run.rate > 0 and run.cpu_rate > 0
    assert run.analytic_us == pytest.approx(mean_response_us(LIGHT_RATE_IOPS))
    assert run.mean_response_us == pytest.approx(run.analytic_us, rel=0.15)


@pytest.mark.parametrize("engine", list(ENGINES))
def test_engine_runs_at_benchmark_load(engine: str) -> None:
    run = ENGINES[engine](SMALL)
    assert run.customers >= SMALL
    assert run.rate > 0
    assert run.analytic_us == ANALYTIC_MEAN_US == mean_response_us(RATE_IOPS)
    assert 80.0 < run.mean_response_us < 10 * ANALYTIC_MEAN_US  # at least one service time, nowhere near unstable


def test_s1_row_missing_and_ok(tmp_path: Path) -> None:
    missing = run_s1(tmp_path / "absent.yaml")
    assert missing.status == "missing"
    path = tmp_path / "direct.yaml"
    path.write_text(SMOKE_SCENARIO)
    s1 = run_s1(path, target_rel_ci=0.1)
    assert s1.status == "ok", s1.detail
    assert s1.wall_s > 0 and s1.simulated_ios > 0 and s1.stop_reason


def test_memory_child() -> None:
    mem = measure_peak(2_000)
    assert mem.ios >= 2_000
    assert mem.peak_mb > 0 and mem.self_report_mb > 0
    assert mem.mean_response_us > 0


def test_run_prints_one_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "direct.yaml"
    path.write_text(SMOKE_SCENARIO)
    assert bench_main(["--customers", "2000", "--repeat", "1", "--memory-ios", "2000", "--s1", str(path)]) == 0
    out = capsys.readouterr().out
    for needle in ("Engine throughput", "naive SimPy", "Ciw", "S1 wall time", "Peak RSS", "Erlang C"):
        assert needle in out


def test_events_counts_are_exact_deterministic_and_positive() -> None:
    """Two scenarios at a tiny budget, twice: the event counts repeat exactly, agree with the number
    of ``Environment.step`` calls, and give at least one event per logical I/O (not timed)."""
    from bench.events import CALIBRATION, EXAMPLES, count_events

    for path in (EXAMPLES / "s2_ibmi_8x4_mirrored.yaml", CALIBRATION / "s4_paging.yaml"):
        first = count_events(path, 300, check_steps=True)
        again = count_events(path, 300, check_steps=True)
        assert first.steps == first.events == again.events > 0
        assert first.ios == again.ios >= 300
        assert first.events_per_io >= 1.0


def test_events_table_and_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    """The table names the scenarios and the M/M/8 reference; the breakdown attributes every event
    (its per-cause counts sum to the events processed, checked inside ``breakdown``)."""
    from bench.events import main as events_main

    assert events_main(["--ios", "300", "--calibration-ios", "300", "--only", "s3_exflash_4dimms", "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| s3_exflash_4dimms | example |" in out and "M/M/8 reference" in out and "geometric mean" in out
    assert events_main(["--breakdown", "--ios", "300", "--only", "s5_fs9100_scsi", "--json"]) == 0
    (b,) = __import__("json").loads(capsys.readouterr().out)
    assert sum(b["by_event"].values()) == b["events"] > 0
    assert b["by_hop"]["Delay SAN fabric latency"] >= 2 * 300  # there and back for every I/O
    assert events_main(["--only", "no-such-scenario"]) == 2


def test_events_baseline_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A saved --json run compared with a new one of the same engine: the same events (ratio 1.000), a
    speed-up printed for each scenario; a file that is not a saved run exits 2."""
    import json

    from bench.events import main as events_main

    args = ["--ios", "300", "--only", "s4_zvm_edev_aliases"]
    assert events_main([*args, "--json"]) == 0
    saved = tmp_path / "before.json"
    saved.write_text(capsys.readouterr().out)
    assert json.loads(saved.read_text())["runs"][0]["name"] == "s4_zvm_edev_aliases"
    assert events_main([*args, "--baseline", str(saved)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| s4_zvm_edev_aliases |"))
    assert "| 1.000 |" in row and row.rstrip(" |").endswith("x")
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    assert events_main([*args, "--baseline", str(bad)]) == 2


def test_device_model_cost_refuses_bad_budgets_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """``bench.device_model_cost``: an I/O budget out of range (CPU seconds or, with ``--instructions``, valgrind's
    counts) is refused with exit code 2 and a message naming the flag, before anything runs."""
    from bench.device_model_cost import main as cost_main

    assert cost_main(["--ios", "10"]) == 2
    assert "--ios" in capsys.readouterr().err
    assert cost_main(["--instructions", "--ios", "10"]) == 2
    err = capsys.readouterr().err
    assert "--ios" in err or "valgrind" in err
