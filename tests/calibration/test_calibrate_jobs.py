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
