"""The planner over worker processes (sim/plan/screen.py) and the fast candidate builder (sim/plan/space.py):
the same plan, byte for byte, whatever the job count; the same candidates as whole-scenario validation; and a
progress bar that stays on stderr."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from models.common import dumps_json
from models.requirements import load_requirements
from sim.plan.planner import plan
from sim.plan.screen import CHUNKS_PER_JOB, MIN_CHUNK, spans
from sim.plan.space import hardware_key, wide_candidates
from tests.plan.processes import killed_while_working

ROOT = Path(__file__).resolve().parent.parent.parent
PLANS = ROOT / "examples" / "plan"
SHORT_DES = {"verify.max_ios": 8_000, "verify.warmup_ios": 1_000}
"""DES runs of a few thousand I/Os: the verdicts are what they are; the test compares them across job counts."""


def _plan_json(req: Any, jobs: int, verify_top: int) -> tuple[str, list[tuple[str, int, int]]]:
    """The plan's JSON without its wall times, and the progress reports it made."""
    reports: list[tuple[str, int, int]] = []
    result = plan(req, verify_top=verify_top, space=wide_candidates(req), distinct=hardware_key, jobs=jobs,
                  progress=lambda stage, done, total: reports.append((stage, done, total)))
    data = result.as_dict()
    del data["screen_wall_s"], data["des_wall_s"]
    return dumps_json(data, default=float), reports


@pytest.mark.slow
@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="workers are forked")
def test_the_plan_is_the_same_with_one_and_two_processes() -> None:
    """Screening in 2 forked processes (chunks finishing in any order) and verifying with look-ahead runs
    gives the plan of one process: every candidate's verdict, the ranking, the DES figures, the run count."""
    req = load_requirements(PLANS / "ibmi_oltp.yaml", {**SHORT_DES, "candidates.devices": ["ES5F"]})
    serial, serial_reports = _plan_json(req, jobs=1, verify_top=3)
    parallel, parallel_reports = _plan_json(req, jobs=2, verify_top=3)
    assert parallel == serial
    data = json.loads(serial)
    # enough candidates for CHUNKS_PER_JOB chunks on each process, each over the minimum chunk (1,860 here)
    assert data["screened"] >= 2 * CHUNKS_PER_JOB * MIN_CHUNK and data["des_runs"] >= 3
    # the progress reaches every candidate in both, whatever order the chunks finished in
    for reports in (serial_reports, parallel_reports):
        screen = [done for stage, done, _ in reports if stage == "screen"]
        assert screen == sorted(screen) and screen[-1] == data["screened"]
        assert [done for stage, done, _ in reports if stage == "verify"][-1] == data["des_runs"]


def test_spans_cover_every_candidate_once() -> None:
    for n in (0, 1, 63, 64, 65, 1_000, 14_892):
        for jobs in (1, 2, 3, 8):
            parts = spans(n, jobs)
            covered = [i for start, stop in parts for i in range(start, stop)]
            assert covered == list(range(n))
            assert all(stop > start for start, stop in parts)


def test_the_candidate_builder_gives_the_fully_validated_candidates() -> None:
    """``CandidateBuilder`` (one template scenario, topologies validated alone) gives the candidates and the
    refusals of validating each whole scenario: LinuxONE's wide space (direct NVMe with md chunks, both SAN servers)."""
    req = load_requirements(PLANS / "linuxone_ycsb.yaml")
    fast, fast_invalid = wide_candidates(req)
    full, full_invalid = wide_candidates(req, fast=False)
    assert fast_invalid == full_invalid > 0
    assert [c.label for c in fast] == [c.label for c in full]
    for a, b in zip(fast, full, strict=True):
        assert a.scenario == b.scenario
        assert a.scenario.model_dump_json() == b.scenario.model_dump_json()
        assert a.capex == b.capex
    assert {c.scenario.topology.kind for c in fast} == {"direct_nvme", "san"}


def test_progress_bar_stays_off_the_json_on_stdout() -> None:
    """On a terminal (forced with TTY_COMPATIBLE=1) the progress bar is drawn on stderr; stdout is the JSON alone.
    With --quiet nothing is drawn."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TTY_COMPATIBLE": "1"}
    cmd = [sys.executable, "-m", "sim.cli", "plan", str(PLANS / "ibmi_oltp.yaml"), "--set", "candidates.devices=[ES5F]",
           "--set", "verify.max_ios=5000", "--set", "verify.warmup_ios=1000", "--verify-top", "1", "--jobs", "2", "--json"]
    shown = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["winner"]["stage"] == "verified"
    assert "screening" in shown.stderr and "verifying" in shown.stderr
    quiet = subprocess.run([*cmd, "--quiet"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert json.loads(quiet.stdout) == json.loads(shown.stdout) | {k: json.loads(quiet.stdout)[k]
                                                                   for k in ("screen_wall_s", "des_wall_s")}


def test_jobs_out_of_range_is_bad_input() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "sim.cli", "plan", str(PLANS / "zvm_paging.toml"), "--jobs", "0"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 2
    assert "--jobs" in done.stderr and "1 .. 256" in done.stderr and "got 0" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(), reason="workers are forked")
def test_a_planner_killed_while_screening_leaves_no_worker_behind() -> None:
    """`flashplan plan --jobs 2` is SIGKILLed while its two forked workers screen: they must end with it, not
    screen their chunks for nobody and then wait on the pool's queue for ever."""
    cmd = [sys.executable, "-m", "sim.cli", "plan", str(PLANS / "ibmi_oltp.yaml"), "--space", "wide", "--jobs", "2",
           "--quiet", "--json", *(f"--set={k}={v}" for k, v in SHORT_DES.items())]
    proc = killed_while_working(cmd, "the planner", cwd=ROOT)
    assert proc.returncode == -signal.SIGKILL
