"""The planner's screening and DES verification over worker processes.

``screen_all`` screens the candidates in contiguous chunks. With ``jobs > 1`` the workers are forked
from the planner's process after the candidates are built, so they inherit them (and the catalog,
the fast path's tables): only each candidate's outcome (``OUTCOME``: stage, rejection, fast-path
result, p99 estimate) comes back, and the parent writes it into its own candidate at the candidate's
index. A candidate's outcome depends only on the candidate and the requirements, so the plan is the
same, byte for byte, whatever the job count and whichever worker finishes first
(tests/plan/test_plan_screen.py).

``verify_in_order`` runs the planner's verification rule (in rank order, skip a purchase already
verified, stop at ``verify_top`` passes or the run cap) and, with ``jobs > 1``, runs the next
candidates the rule may need in the other workers while it waits for the current one. The rule
reads the runs' results in rank order, so it takes the same decisions as one process; a look-ahead
run the rule does not reach is discarded.

Where the platform cannot fork (Windows, macOS default), everything runs in the calling process.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import resource
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from models.catalog import pinned_catalog
from sim.plan.parent_watch import exit_with_parent

if TYPE_CHECKING:
    from sim.plan.candidate import Candidate

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``, called in the calling process: ``screen`` after each chunk (candidates),
``verify`` after each DES run the rule reads (runs so far, the run cap)."""

OUTCOME = ("stage", "rejection", "fast", "p99_estimate_us", "failure_states")
"""The candidate fields the screen sets: what a screening worker sends back per candidate."""
VERDICT = ("fast", "des", "stage", "rejection", "failure_states")
"""The candidate fields a DES verification sets."""

CHUNKS_PER_JOB = 8
"""Chunks per worker: small enough to balance the load and move the progress bar, large enough to amortise the hand-over."""
MIN_CHUNK = 64

_shared: tuple[Sequence[Candidate], Callable[[Candidate], None]] | None = None
"""The candidates and the per-candidate step (screen or verify), set just before the workers fork."""


def cpu_seconds() -> float:
    """CPU seconds of this process and of the workers it has reaped (every pool here reaps its workers)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def _can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def spans(n: int, jobs: int) -> list[tuple[int, int]]:
    """Contiguous [start, stop) chunks covering ``n`` candidates, about ``CHUNKS_PER_JOB`` per job."""
    size = max(MIN_CHUNK, math.ceil(n / max(1, jobs * CHUNKS_PER_JOB)))
    return [(i, min(n, i + size)) for i in range(0, n, size)]


def _pool(jobs: int) -> ProcessPoolExecutor:
    """Forked workers. The objects alive at the fork are moved out of the garbage collector's sight first
    (``gc.freeze``; ``_stop`` thaws them): otherwise each worker's first full collection writes into every
    inherited object's header, copying the parent's whole heap page by page (about 1.5x the screen's CPU
    time measured on ibmi_oltp's wide space).

    Each worker ignores Ctrl-C (it reaches the whole process group; the parent handles it and ends the
    workers) and ends with the planner's process, even if that is SIGKILLed (``exit_with_parent``):
    otherwise it would screen its chunks for nobody and then wait on the pool's queue for ever."""
    gc.freeze()
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=exit_with_parent, initargs=(os.getpid(),))


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool without waiting for queued or running work (an interrupted plan, look-ahead runs the
    rule did not reach), and reap the workers."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    for process in processes:
        process.join()
    gc.unfreeze()


def _fields(c: Candidate, names: Sequence[str]) -> tuple[Any, ...]:
    return tuple(getattr(c, name) for name in names)


def _apply(c: Candidate, names: Sequence[str], values: Sequence[Any]) -> None:
    for name, value in zip(names, values, strict=True):
        setattr(c, name, value)


def _screen_span(start: int, stop: int) -> list[tuple[Any, ...]]:
    """Worker: screen candidates [start, stop) of the inherited list; their outcomes, in order."""
    assert _shared is not None
    candidates, screen = _shared
    with pinned_catalog():
        for c in candidates[start:stop]:
            screen(c)
    return [_fields(c, OUTCOME) for c in candidates[start:stop]]


def _verify_one(index: int) -> tuple[Any, ...]:
    """Worker: verify candidate ``index`` of the inherited list; its verdict."""
    assert _shared is not None
    candidates, verify = _shared
    verify(candidates[index])
    return _fields(candidates[index], VERDICT)


def screen_all(candidates: Sequence[Candidate], screen: Callable[[Candidate], None], jobs: int = 1,
               progress: Progress | None = None) -> None:
    """Screen every candidate with ``screen`` (which sets ``OUTCOME``), in ``jobs`` processes."""
    global _shared
    parts = spans(len(candidates), jobs)
    if jobs <= 1 or len(parts) < 2 or not _can_fork():
        with pinned_catalog():
            for start, stop in parts:
                for c in candidates[start:stop]:
                    screen(c)
                if progress:
                    progress("screen", stop, len(candidates))
        return
    _shared = (candidates, screen)
    pool = _pool(jobs)
    try:
        futures = {pool.submit(_screen_span, start, stop): (start, stop) for start, stop in parts}
        done = 0
        for future in as_completed(futures):
            start, stop = futures[future]
            for c, outcome in zip(candidates[start:stop], future.result(), strict=True):
                _apply(c, OUTCOME, outcome)
            done += stop - start
            if progress:
                progress("screen", done, len(candidates))
    finally:
        _shared = None
        _stop(pool)


@dataclass
class Verification:
    """The verification rule's bookkeeping: runs the rule read, passes, purchases verified."""

    verify_top: int
    max_runs: int
    distinct: Callable[[Candidate], Hashable] | None
    runs: int = 0
    passed: int = 0
    bought: set[Hashable] = field(default_factory=set)

    def done(self) -> bool:
        return self.passed >= self.verify_top or self.runs >= self.max_runs

    def skips(self, c: Candidate) -> bool:
        """A setting of a purchase already verified: not verified again."""
        return self.distinct is not None and self.distinct(c) in self.bought

    def record(self, c: Candidate) -> None:
        self.runs += 1
        if c.stage == "verified":
            self.passed += 1
            if self.distinct is not None:
                self.bought.add(self.distinct(c))


def verify_in_order(ranked: Sequence[Candidate], verify: Callable[[Candidate], None], rule: Verification,
                    jobs: int = 1, progress: Progress | None = None) -> Verification:
    """Verify ``ranked`` candidates in order under ``rule``; the same verdicts and counts for any ``jobs``."""
    global _shared
    if jobs <= 1 or not _can_fork():
        for c in ranked:
            if rule.done():
                break
            if not rule.skips(c):
                verify(c)
                rule.record(c)
                if progress:
                    progress("verify", rule.runs, rule.max_runs)
        return rule
    _shared = (ranked, verify)
    pool = _pool(jobs)
    try:
        _verify_ahead(ranked, rule, pool, jobs, progress)
    finally:
        _shared = None
        _stop(pool)
    return rule


def _verify_ahead(ranked: Sequence[Candidate], rule: Verification, pool: ProcessPoolExecutor, jobs: int,
                  progress: Progress | None) -> None:
    """The rule in rank order, each run submitted with look-ahead runs of the next distinct purchases."""
    running: dict[int, Future[tuple[Any, ...]]] = {}
    for i, c in enumerate(ranked):
        if rule.done():
            break
        if rule.skips(c):
            continue
        if i not in running:
            running[i] = pool.submit(_verify_one, i)
        _look_ahead(ranked, i, rule, running, pool, jobs)
        _apply(c, VERDICT, running.pop(i).result())
        rule.record(c)
        if progress:
            progress("verify", rule.runs, rule.max_runs)


def _look_ahead(ranked: Sequence[Candidate], i: int, rule: Verification, running: dict[int, Future[tuple[Any, ...]]],
                pool: ProcessPoolExecutor, jobs: int) -> None:
    """Keep ``jobs`` runs submitted and not yet read (never more than the run cap leaves): the next candidates
    after ``i`` the rule would verify if the runs before them pass, one per purchase (a second setting of a
    purchase is only needed if the first fails)."""
    keys = {rule.distinct(ranked[j]) for j in running} if rule.distinct else set()
    limit = min(jobs, rule.max_runs - rule.runs)
    for j in range(i + 1, len(ranked)):
        if len(running) >= limit:
            return
        if j in running or rule.skips(ranked[j]):
            continue
        key = rule.distinct(ranked[j]) if rule.distinct else j
        if key in keys:
            continue
        keys.add(key)
        running[j] = pool.submit(_verify_one, j)
