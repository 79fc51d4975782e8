"""Sweeps: expansion, per-run seeds, results, failures, the journal and --resume, bad input.

The runs are M/M/1 and M/M/c queues with small I/O budgets, so the sweeps are quick and
their utilization has a closed form (rho = lambda x S / c) to check the rows against.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest
import yaml

from bench.sweep import free_port
from models import load_scenario
from sim.cli.flashplan import main
from sim.plan.sweep import (
    FactorRange,
    SweepInputError,
    SweepSpec,
    journal_path,
    load_sweep,
    plan_sweep,
    read_journal,
    run_seed,
    run_sweep,
    sweep_frame,
)
from tests.conftest import EXAMPLES, ROOT
from tests.plan.processes import kill_and_find_survivors, nothing_left_behind

SMALL_RUN = {"run.max_ios": 6_000, "run.warmup_ios": 1_000, "run.min_batches": 5, "run.target_rel_ci": 0.05}
MM1_SERVICE_US = 10.0  # examples/mm1.yaml
RATES = [10_000, 30_000, 50_000, 70_000]


def write_sweep(path: Path, **fields: Any) -> Path:
    data = {"base": str(EXAMPLES / "mm1.yaml"), "set": dict(SMALL_RUN), **fields}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column but wall time, which is the machine's and not the prediction's."""
    return frame.drop(columns=["wall_seconds"]).reset_index(drop=True)


# --- ranges and expansion ----------------------------------------------------------------------


def test_ranges_include_stop_and_keep_integers() -> None:
    assert FactorRange(start=0, stop=11).values() == list(range(12))
    assert FactorRange(start=0.0, stop=1.0, step=0.25).values() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert FactorRange(start=0.0, stop=1.0, step=0.1).values()[-1] == 1.0
    assert FactorRange(start=1, stop=128, ratio=2).values() == [1, 2, 4, 8, 16, 32, 64, 128]
    assert FactorRange(start=2, stop=10, num=5).values() == [2, 4, 6, 8, 10]
    assert FactorRange(start=10, stop=4, step=-3).values() == [10, 7, 4]
    for bad in ({"start": 1, "stop": 5, "step": 0}, {"start": 1, "stop": 5, "step": -1}, {"start": 5, "stop": 1},
                {"start": 1, "stop": 5, "step": 1, "num": 3}, {"start": 0, "stop": 8, "ratio": 2}):
        with pytest.raises(ValueError):
            FactorRange.model_validate(bad)


def test_grid_is_every_combination_zip_pairs_them() -> None:
    factors = {"workload.rate_iops": [10_000, 20_000, 30_000], "topology.stations.0.service_time_us": [5, 8, 12]}
    base = str(EXAMPLES / "mm1.yaml")
    grid = plan_sweep(SweepSpec(base=base, factors=factors, replications=2))
    assert len(grid.runs) == 3 * 3 * 2 and grid.points == 9
    assert [r.factors for r in grid.runs[:4:2]] == [
        {"workload.rate_iops": 10_000, "topology.stations.0.service_time_us": 5},
        {"workload.rate_iops": 10_000, "topology.stations.0.service_time_us": 8},
    ]
    zipped = plan_sweep(SweepSpec(base=base, factors=factors, mode="zip"))
    assert [tuple(r.factors.values()) for r in zipped.runs] == [(10_000, 5), (20_000, 8), (30_000, 12)]
    for run in zipped.runs:
        assert run.scenario["workload"]["rate_iops"] == run.factors["workload.rate_iops"]
        assert run.scenario["topology"]["stations"][0]["service_time_us"] == run.factors["topology.stations.0.service_time_us"]
        assert run.scenario["run"]["seed"] == run.seed


def test_seeds_are_distinct_stable_and_keyed_to_the_point() -> None:
    base = str(EXAMPLES / "mm1.yaml")
    plan = plan_sweep(SweepSpec(base=base, factors={"workload.rate_iops": RATES}, replications=3, seed=42))
    seeds = [r.seed for r in plan.runs]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s <= 2**63 - 1 for s in seeds)
    assert seeds == [r.seed for r in plan_sweep(SweepSpec(base=base, factors={"workload.rate_iops": RATES}, replications=3, seed=42)).runs]
    assert seeds[0] == run_seed(42, {"workload.rate_iops": RATES[0]}, 0)
    # the same point keeps its seed when the factor list grows or is reordered
    extended = plan_sweep(SweepSpec(base=base, factors={"workload.rate_iops": [5_000, *reversed(RATES)]}, replications=3, seed=42))
    old = {(r.factors["workload.rate_iops"], r.replication): r.seed for r in plan.runs}
    new = {(r.factors["workload.rate_iops"], r.replication): r.seed for r in extended.runs}
    assert all(new[k] == v for k, v in old.items())
    # a different root changes every seed; common random numbers share one seed per replication
    other = plan_sweep(SweepSpec(base=base, factors={"workload.rate_iops": RATES}, replications=3, seed=43))
    assert not set(seeds) & {r.seed for r in other.runs}
    crn = plan_sweep(SweepSpec(base=base, factors={"workload.rate_iops": RATES}, replications=3, seed=42, common_random_numbers=True))
    assert {r.replication: r.seed for r in crn.runs} == {r.replication: r.seed for r in crn.runs if r.point == 0}
    assert len({r.seed for r in crn.runs}) == 3


def test_the_default_root_seed_is_the_base_scenarios() -> None:
    base = load_scenario(EXAMPLES / "mm1.yaml")
    plan = plan_sweep(SweepSpec(base=str(EXAMPLES / "mm1.yaml"), factors={"workload.rate_iops": RATES[:1]}))
    assert plan.runs[0].seed == run_seed(base.run.seed, {"workload.rate_iops": RATES[0]}, 0)


# --- running ----------------------------------------------------------------------------------


def test_rows_carry_factors_metrics_with_ci_and_match_queueing_theory() -> None:
    """M/M/1 utilization is lambda x S at every point; every metric's CI brackets its value."""
    base = load_scenario(EXAMPLES / "mm1.yaml", SMALL_RUN)
    frame = sweep_frame(base, {"workload.rate_iops": RATES}, replications=2)
    assert len(frame) == len(RATES) * 2
    assert list(frame["workload.rate_iops"]) == [r for r in RATES for _ in range(2)]
    assert (frame["status"] == "ok").all() and frame["error"].isna().all()
    for key in ("iops", "latency_mean_us", "latency_p99_us", "mbps", "cpu_us_per_io"):
        assert (frame[f"{key}_ci95_lo"] <= frame[key]).all() and (frame[key] <= frame[f"{key}_ci95_hi"]).all(), key
    rho = frame["workload.rate_iops"] * MM1_SERVICE_US * 1e-6
    assert ((frame["bottleneck_utilization"] - rho).abs() < 0.05).all()
    assert (frame["iops"] / frame["workload.rate_iops"] - 1).abs().max() < 0.1
    assert frame.groupby("point")["latency_mean_us"].mean().is_monotonic_increasing  # M/M/1: S / (1 - rho)
    assert frame["stop_reason"].str.len().min() > 0 and (frame["bottleneck"] == "server").all()
    assert frame["seed"].nunique() == len(frame)


def test_an_overloaded_point_is_marked_unstable_and_the_sweep_goes_on() -> None:
    """M/M/1 at 50% and at 130% of the station's capacity: the second row says unstable, naming the station."""
    base = load_scenario(EXAMPLES / "mm1.yaml", {**SMALL_RUN, "run.max_ios": 30_000})
    frame = sweep_frame(base, {"workload.rate_iops": [50_000, 130_000]})
    assert (frame["status"] == "ok").all()
    assert frame.loc[0, "validity"] != "unstable"
    assert frame.loc[1, "validity"] == "unstable" and "server" in frame.loc[1, "validity_note"]


def test_local_processes_give_the_same_rows_as_this_process() -> None:
    base = load_scenario(EXAMPLES / "mm1.yaml", SMALL_RUN)
    here = sweep_frame(base, {"workload.rate_iops": RATES}, workers=1)
    pool = sweep_frame(base, {"workload.rate_iops": RATES}, workers=2)
    pd.testing.assert_frame_equal(comparable(here), comparable(pool))


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """An invalid combination and an engine error each become a row with its error; the other points run."""
    import sim.des.engine

    real = sim.des.engine.simulate

    def flaky(scenario: Any) -> Any:
        if scenario.workload.rate_iops == 30_000:
            raise RuntimeError("destage queue corrupted")
        return real(scenario)

    monkeypatch.setattr(sim.des.engine, "simulate", flaky)
    base = load_scenario(EXAMPLES / "mm1.yaml", SMALL_RUN)
    frame = sweep_frame(base, {"workload.rate_iops": [10_000, 30_000], "topology.stations.0.service_time_us": [-1.0, 5.0]})
    by_status = frame.groupby("status").size().to_dict()
    assert by_status == {"invalid": 2, "error": 1, "ok": 1}
    invalid = frame[frame["status"] == "invalid"]
    assert invalid["error"].str.contains("service_time_us").all() and invalid["iops"].isna().all()
    error = frame[frame["status"] == "error"].iloc[0]
    assert error["error"] == "RuntimeError: destage queue corrupted" and math.isnan(error["iops"])
    ok = frame[frame["status"] == "ok"].iloc[0]
    assert ok["workload.rate_iops"] == 10_000 and ok["iops"] > 0


# --- output, journal, resume --------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_output_file_holds_the_frame_and_the_journal_is_removed(tmp_path: Path, suffix: str) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES[:3]})
    out = tmp_path / f"results{suffix}"
    frame = run_sweep(sweep, out=out, workers=1, progress=False)
    assert out.exists() and not journal_path(out).exists()
    assert not list(tmp_path.glob(".*tmp"))
    back = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert list(back.columns) == list(frame.columns)
    assert back["iops"].tolist() == pytest.approx(frame["iops"].tolist(), rel=1e-12)
    assert back["seed"].tolist() == frame["seed"].tolist()
    # resuming a finished sweep recomputes nothing
    again = run_sweep(sweep, out=out, workers=1, resume=True, progress=False)
    assert again.attrs["ran"] == 0 and again.attrs["reused"] == 3
    assert again["wall_seconds"].tolist() == pytest.approx(frame["wall_seconds"].tolist(), rel=1e-12)


def test_resume_reuses_journalled_runs_and_skips_a_torn_last_line(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES})
    full = run_sweep(sweep, out=tmp_path / "full.parquet", workers=1, progress=False)
    out = tmp_path / "results.parquet"
    journal = journal_path(out)
    # the journal a killed sweep leaves: two finished runs and half a line
    rows = full.astype(object).where(full.notna(), None).to_dict("records")
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows[:2]) + '{"point": 2, "repl', encoding="utf-8")
    assert len(read_journal(journal)) == 2
    resumed = run_sweep(sweep, out=out, workers=1, resume=True, progress=False)
    assert resumed.attrs["ran"] == 2 and resumed.attrs["reused"] == 2
    pd.testing.assert_frame_equal(comparable(resumed), comparable(full))
    # the journalled runs were not recomputed: their wall times are the journal's
    assert resumed["wall_seconds"].tolist()[:2] == [r["wall_seconds"] for r in rows[:2]]
    assert not journal.exists()


def test_extending_a_factor_reruns_only_the_new_points(tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    run_sweep(write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES[:2]}), out=out, workers=1, progress=False)
    wider = run_sweep(write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES}), out=out, workers=1,
                      resume=True, progress=False)
    assert wider.attrs["ran"] == 2 and wider.attrs["reused"] == 2 and len(wider) == 4


def test_a_sweep_killed_mid_way_resumes_without_recomputing(tmp_path: Path) -> None:
    """A real `flashplan sweep` (two worker processes) is SIGKILLed part-way; the rerun with --resume completes it.

    Only the sweep process is killed: its worker processes must notice and exit by themselves.
    """
    rates = [5_000 * (i + 1) for i in range(12)]
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({
        "base": str(EXAMPLES / "mm8.yaml"), "set": {"run.max_ios": 60_000, "run.warmup_ios": 2_000, "run.target_rel_ci": 1e-4},
        "factors": {"workload.rate_iops": rates},
    }), encoding="utf-8")
    out = tmp_path / "results.parquet"
    journal = journal_path(out)
    cmd = [sys.executable, "-c", "import sys; from sim.cli.flashplan import main; sys.exit(main(sys.argv[1:]))",
           "sweep", str(sweep), "--out", str(out), "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    workers: list[psutil.Process] = []
    with nothing_left_behind(proc, workers):
        deadline = time.monotonic() + 600
        while len(read_journal(journal)) < 3:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the sweep journalled fewer than 3 runs in 600 s"
            time.sleep(0.02)
        workers[:] = psutil.Process(proc.pid).children(recursive=True)
        alive = kill_and_find_survivors(proc, workers)
        assert not alive, f"worker processes outlived the killed sweep: {alive}"
    assert proc.returncode == -signal.SIGKILL
    assert len(workers) >= 2
    before = {r["scenario_digest"]: r for r in read_journal(journal)}
    assert 3 <= len(before) < len(rates), "the kill must land mid-way"
    assert not out.exists()

    rerun = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(rates) - len(before)} run now, {len(before)} reused" in " ".join(rerun.stdout.split())
    final = pd.read_parquet(out)
    assert len(final) == len(rates) and (final["status"] == "ok").all() and final["scenario_digest"].is_unique
    assert final["workload.rate_iops"].tolist() == rates
    for row in final.to_dict("records"):
        if row["scenario_digest"] in before:  # kept, not recomputed: the same wall time to the last bit
            assert row["wall_seconds"] == before[row["scenario_digest"]]["wall_seconds"]
            assert row["iops"] == before[row["scenario_digest"]]["iops"]
    assert not journal.exists()


HELD_WORKER_START = """\
import os, sys, time
if "--multiprocessing-fork" in sys.argv:  # a spawned worker (not the sweep, not multiprocessing's resource tracker)
    def parent_is_the_sweep():  # once the sweep is killed, the worker's parent is a reaper (init or a subreaper)
        try:
            with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
                return b"sim.cli.flashplan" in f.read()
        except OSError:
            return False
    deadline = time.monotonic() + 600
    while parent_is_the_sweep() and time.monotonic() < deadline:  # held until the sweep that spawned it is gone
        time.sleep(0.005)
"""


def test_a_sweep_killed_while_its_workers_start_leaves_no_worker_behind(tmp_path: Path) -> None:
    """The sweep is SIGKILLed the moment its worker processes exist, while they are still starting up.

    A ``sitecustomize`` on the sweep's PYTHONPATH holds every spawned worker at interpreter start,
    before it unpickles its job or runs the pool's initializer, until the sweep that spawned it is gone
    (its parent changes), so the kill lands in that window every time however loaded the machine is:
    the workers must still notice their parent is gone and exit.
    """
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(HELD_WORKER_START, encoding="utf-8")
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES})
    out = tmp_path / "results.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hook), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-c", "import sys; from sim.cli.flashplan import main; sys.exit(main(sys.argv[1:]))",
           "sweep", str(sweep), "--out", str(out), "--workers", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    children: list[psutil.Process] = []
    with nothing_left_behind(proc, children):
        deadline = time.monotonic() + 600
        sweep_process = psutil.Process(proc.pid)
        while True:
            assert proc.poll() is None, "the sweep ended before starting its workers"
            assert time.monotonic() < deadline, "the sweep started no 2 workers in 600 s"
            with contextlib.suppress(psutil.Error):
                children[:] = sweep_process.children(recursive=True)
                if sum("--multiprocessing-fork" in c.cmdline() for c in children) >= 2:
                    break
            time.sleep(0.005)
        alive = kill_and_find_survivors(proc, children)
        assert not alive, f"worker processes outlived the sweep killed while they started: {alive}"
    assert proc.returncode == -signal.SIGKILL
    assert read_journal(journal_path(out)) == [], "the kill must land before any run finished"
    assert not out.exists()


def test_a_write_removes_the_temp_files_left_by_writes_killed_mid_way(tmp_path: Path) -> None:
    """A process killed while writing the results or the journal leaves its ``.NAME.PID.tmp`` behind; the next
    sweep writing the same files removes those of dead processes, and only those."""
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES[:2]})
    out = tmp_path / "results.csv"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        stale = [tmp_path / f".{name}.{gone.pid}.tmp" for name in (out.name, journal_path(out).name)]
        kept = [tmp_path / f".{out.name}.{running.pid}.tmp",  # a live writer's
                tmp_path / f".other.csv.{gone.pid}.tmp", tmp_path / f".{out.name}.notapid.tmp"]  # not this output's
        for leftover in [*stale, *kept]:
            leftover.write_text("point,replication\n0,", encoding="utf-8")
        frame = run_sweep(sweep, out=out, workers=1, progress=False)
    finally:
        running.kill()
        running.wait()
    assert [f.name for f in stale if f.exists()] == []
    assert all(f.exists() for f in kept)
    assert len(frame) == 2 and pd.read_csv(out)["status"].tolist() == ["ok", "ok"]
    assert not journal_path(out).exists()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names the fsynced files through /proc")
def test_the_results_are_on_disk_before_the_journal_is_deleted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The output is written to a temp file that is fsynced, renamed over the output, and the directory fsynced,
    all before the journal (until then the only durable copy of the runs) is deleted: a crash at any point
    leaves the runs in one of the two."""
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES[:2]})
    out = tmp_path / "results.parquet"
    journal = journal_path(out)
    events: list[tuple[str, str, bool]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), journal.exists()))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(("replace", f"{src} -> {dst}", journal.exists()))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    run_sweep(sweep, out=out, workers=1, progress=False)
    assert not journal.exists() and len(pd.read_parquet(out)) == 2
    tmp = str(tmp_path / f".{out.name}.{os.getpid()}.tmp")
    last = [e[:2] for e in events][-3:]
    assert last == [("fsync", tmp), ("replace", f"{tmp} -> {out}"), ("fsync", str(tmp_path))]
    assert events[-1][2], "the journal was deleted before the output was on disk"
    # the journal too: its rename is made durable, and every appended run is fsynced (2 runs)
    assert [e[1] for e in events].count(str(journal)) == 2
    assert ("fsync", str(tmp_path)) in [e[:2] for e in events[:-3]]


def test_without_resume_a_rerun_starts_afresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": RATES[:2]})
    out = tmp_path / "results.csv"
    journal_path(out).write_text(json.dumps({"scenario_digest": "from-an-old-run", "point": 0}) + "\n", encoding="utf-8")
    assert main(["sweep", str(sweep), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "1 runs journalled by an interrupted sweep are discarded" in captured.err
    assert "2 runs (2 run now, 0 reused" in captured.out
    assert len(pd.read_csv(out)) == 2


# --- bad input -------------------------------------------------------------------------------


def bad_input(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err
    return captured.err


@pytest.mark.parametrize(("fields", "expected"), [
    ({"factors": {"workload.rate_iopz": [1_000, 2_000]}}, "factors.workload.rate_iopz: unknown dotted path"),
    ({"factors": {"topology.stations.0.servers": [1], "workload.queue_depth": [1, 2]}}, "factors.workload.queue_depth: unknown dotted path"),
    ({"factors": {"workload.rate_iops": []}}, "factors.workload.rate_iops: needs at least one value"),
    ({"factors": {"workload.rate_iops": {"start": 1, "stop": 5, "step": 0}}}, "factors.workload.rate_iops.step: must not be 0"),
    ({"factors": {"workload.rate_iops": 1_000}}, "factors.workload.rate_iops: expected a list of values or a range"),
    ({"factors": {"run.seed": [1, 2]}}, "factors.run.seed: set by the sweep"),
    ({"factors": {"workload.rate_iops": [1_000, 1_000]}}, "value 1000 is listed twice"),
    ({"factors": {"workload.rate_iops": [1, 2], "workload.read_fraction": [0.5]}, "mode": "zip"}, "mode zip needs lists of equal length"),
    ({"factors": {"topology.stations.3.servers": [1]}}, "factors.topology.stations.3: list index must be 0..0"),
    ({"set": {"topology.colour": "red"}, "factors": {"workload.rate_iops": [1]}}, "set.topology.colour: unknown dotted path"),
    ({"base": "no_such_base.yaml", "factors": {"workload.rate_iops": [1]}}, "base: "),
    ({"factors": {"workload.rate_iops": [1]}, "replications": 0}, "replications: Input should be greater than or equal to 1"),
])
def test_bad_sweep_files_exit_2_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], fields: dict[str, Any],
                                                  expected: str) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", **fields)
    out = tmp_path / "results.parquet"
    err = bad_input(["sweep", str(sweep), "--out", str(out), "--no-progress"], capsys)
    assert expected in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": [1_000]})
    assert "--out: unknown format '.xlsx'" in bad_input(["sweep", str(sweep), "--out", str(tmp_path / "r.xlsx")], capsys)
    assert "--resume: needs --out" in bad_input(["sweep", str(sweep), "--resume"], capsys)
    assert "--workers: applies to local processes" in bad_input(
        ["sweep", str(sweep), "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], capsys)
    assert "--scheduler: expected tcp://HOST:PORT" in bad_input(["sweep", str(sweep), "--scheduler", "localhost"], capsys)
    assert "no such file" in bad_input(["sweep", str(tmp_path / "missing.yaml")], capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_an_unreachable_scheduler_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": [1_000]})
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    err = bad_input(["sweep", str(sweep), "--out", str(tmp_path / "r.parquet"), "--scheduler", address], capsys)
    assert f"--scheduler: cannot reach a Dask scheduler at {address}" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_a_port_that_is_no_dask_scheduler_exits_2_instead_of_hanging(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A listening socket that never answers (a web or dashboard port given by mistake) is bounded by the 5 s probe."""
    sweep = write_sweep(tmp_path / "s.yaml", factors={"workload.rate_iops": [1_000]})
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        err = bad_input(["sweep", str(sweep), "--out", str(tmp_path / "r.csv"), "--scheduler", address], capsys)
    assert f"--scheduler: nothing at {address} answered as a Dask scheduler" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_library_raises_sweep_input_error_naming_the_field() -> None:
    with pytest.raises(SweepInputError) as info:
        sweep_frame(load_scenario(EXAMPLES / "mm1.yaml"), {"workload.rate_iopz": [1_000]})
    assert info.value.problems[0][0] == "factors.workload.rate_iopz"


def test_toml_sweep_with_a_base_relative_to_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "mm1.yaml").write_text((EXAMPLES / "mm1.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "sweeps").mkdir()
    sweep = tmp_path / "sweeps" / "rates.toml"
    sweep.write_text('''
name = "M/M/1 load line"
base = "../scenarios/mm1.yaml"
mode = "zip"
replications = 2
[set]
"run.max_ios" = 6000
"run.warmup_ios" = 1000
[factors]
"workload.rate_iops" = { start = 20000, stop = 60000, num = 3 }
"workload.read_fraction" = [1.0, 0.5, 0.0]
''', encoding="utf-8")
    plan = plan_sweep(load_sweep(sweep))
    assert [r.factors for r in plan.runs[::2]] == [
        {"workload.rate_iops": 20_000, "workload.read_fraction": 1.0},
        {"workload.rate_iops": 40_000, "workload.read_fraction": 0.5},
        {"workload.rate_iops": 60_000, "workload.read_fraction": 0.0},
    ]
    assert all(r.scenario["run"]["max_ios"] == 6_000 for r in plan.runs)
    frame = run_sweep(sweep, workers=1, progress=False)
    assert frame.attrs["sweep"] == "M/M/1 load line" and len(frame) == 6
    assert (frame["write_iops"] / frame["iops"]).round(1).tolist() == [0.0, 0.0, 0.5, 0.5, 1.0, 1.0]


def test_example_sweeps_plan_cleanly() -> None:
    expected = {"ibmi_namespaces.yaml": 30, "zvm_aliases.yaml": 24, "qd_read_fraction.yaml": 40}
    for name, runs in expected.items():
        plan = plan_sweep(load_sweep(EXAMPLES / "sweeps" / name))
        assert len(plan.runs) == runs, name
        assert not [r.invalid for r in plan.runs if r.invalid], name
