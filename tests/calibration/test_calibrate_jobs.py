"""``flashplan calibrate --jobs N``: the records' results do not depend on how many processes ran them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _calibrate(tmp_path: Path, jobs: int) -> bytes:
    results = tmp_path / f"jobs{jobs}.json"
    done = subprocess.run(
        [sys.executable, "-m", "sim.cli", "calibrate", "--only", "S3", "--quick", "--jobs", str(jobs), "--json",
         "--results", str(results), "--parity", str(tmp_path / f"parity{jobs}.html")],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=900)
    assert done.returncode in (0, 1), done.stderr  # 1 is the gate's verdict, not a failure to run
    return results.read_bytes()


def test_results_are_byte_identical_with_one_and_two_jobs(tmp_path: Path) -> None:
    """S3's quick subset (6 distinct eXFlash scenarios) in one process and in two: the same results file, byte for byte."""
    serial = _calibrate(tmp_path, 1)
    parallel = _calibrate(tmp_path, 2)
    assert parallel == serial
    assert b'"id"' in serial and b"NaN" not in serial


def test_jobs_out_of_range_is_bad_input() -> None:
    done = subprocess.run([sys.executable, "-m", "sim.cli", "calibrate", "--jobs", "0"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert "--jobs" in done.stderr and "got 0" in done.stderr and "Traceback" not in done.stderr


def test_schedule_starts_the_longest_runs_first() -> None:
    """The previous run's costs order the pool's queue: unknown scenarios first, then the most expensive; ties keep
    the records' order."""
    from calibration.evaluate import Schedule

    schedule = Schedule(hints={"a": 1.0, "b": 6.0, "c": 1.0, "d": 3.0})
    assert schedule.order(["a", "b", "c", "new", "d"]) == ["new", "b", "d", "a", "c"]
    assert Schedule().order(["x", "y"]) == ["x", "y"]


TINY_RUN = {"run.max_ios": 1_500, "run.warmup_ios": 0, "run.min_batches": 5, "run.batch_ios": 100}


def test_references_that_load_to_the_same_scenario_share_one_run() -> None:
    """An override equal to the file's own value (s4_minidisk.yaml says aliases: 0) names the same scenario: one
    simulation, its result under both keys, both keys reported done; a different value is its own run."""
    from calibration.evaluate import Schedule, simulate_refs
    from calibration.records import ScenarioRef

    plain = ScenarioRef(file="s4_minidisk.yaml", set={"workload.read_fraction": 0.0})
    spelled = ScenarioRef(file="s4_minidisk.yaml", set={"topology.aliases": 0, "workload.read_fraction": 0.0})
    other = ScenarioRef(file="s4_minidisk.yaml", set={"topology.aliases": 3, "workload.read_fraction": 0.0})
    assert plain.key() != spelled.key()
    schedule = Schedule()
    done: list[str] = []
    out = simulate_refs([plain, spelled, other, plain], TINY_RUN, workers=1, on_done=done.append, schedule=schedule)
    assert list(out) == [plain.key(), spelled.key(), other.key()]
    assert out[plain.key()] is out[spelled.key()]
    assert out[other.key()] is not out[plain.key()]
    assert sorted(done) == sorted(out)  # every key once, the shared one too
    assert set(schedule.costs) == {plain.key(), other.key()}  # what ran, under the first key of each scenario


def test_the_shared_run_gives_what_each_reference_gives_alone() -> None:
    """Sharing changes no value: the spelled-out reference simulated on its own gives the shared result's figures."""
    from calibration.evaluate import simulate_refs
    from calibration.records import ScenarioRef
    from models.result import Result

    plain = ScenarioRef(file="s4_minidisk.yaml", set={"workload.read_fraction": 0.0})
    spelled = ScenarioRef(file="s4_minidisk.yaml", set={"topology.aliases": 0, "workload.read_fraction": 0.0})
    shared = simulate_refs([plain, spelled], TINY_RUN, workers=1)[spelled.key()]
    alone = simulate_refs([spelled], TINY_RUN, workers=1)[spelled.key()]
    assert isinstance(shared, Result) and isinstance(alone, Result)
    assert shared.summary() == alone.summary() and shared.simulated_ios == alone.simulated_ios


def test_each_scenario_file_and_fitted_value_is_read_once_per_evaluation(monkeypatch: object) -> None:
    """Loading many references to one file reads (parses) it once; an unreadable file fails each of its references."""
    import pytest

    import calibration.evaluate as ev
    from calibration.records import ScenarioRef

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    reads: list[str] = []
    real = ev.read_scenario_data

    def counting(path: str) -> dict[str, object]:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(ev, "read_scenario_data", counting)
    refs = [ScenarioRef(file="s4_minidisk.yaml", set={"topology.aliases": n}) for n in range(4)]
    refs += [ScenarioRef(file="no_such_file.yaml"), ScenarioRef(file="no_such_file.yaml", set={"run.seed": 2})]
    loaded = ev._load_all(refs, TINY_RUN, ev.SCENARIO_DIR)
    assert len(reads) == 2  # s4_minidisk.yaml and the missing file, once each
    assert [s.topology.aliases for s in loaded.values() if not isinstance(s, Exception)] == [0, 1, 2, 3]  # type: ignore[union-attr]
    missing = [s for s in loaded.values() if isinstance(s, Exception)]
    assert len(missing) == 2 and all("no_such_file.yaml" in str(e) for e in missing)


def test_schedule_takes_a_hint_from_another_key_of_the_same_scenario() -> None:
    from calibration.evaluate import Schedule

    schedule = Schedule(hints={"a": 1.0, "b2": 5.0})
    assert schedule.order(["a", "b"], same={"a": [], "b": ["b2"]}) == ["b", "a"]


def test_a_calibration_killed_while_its_workers_run_leaves_no_worker_behind(tmp_path: Path) -> None:
    """`flashplan calibrate --jobs 2` is SIGKILLed while its forked workers simulate: they end with it (the kernel's
    parent-death signal, ``sim.plan.parent_watch``) instead of simulating for nobody and then waiting for ever."""
    from tests.plan.processes import killed_while_working

    cmd = [sys.executable, "-m", "sim.cli", "calibrate", "--only", "S1", "--jobs", "2", "--results",
           str(tmp_path / "r.json"), "--parity", str(tmp_path / "p.html")]
    killed_while_working(cmd, "calibrate", cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
