"""Warm-up, batch means and the stop rule of one run (the statistics half of ``sim.des.engine.Run``).

The run discards ``run.warmup_ios`` completions, then cuts the measured window into batches
of completions. Batches start at ``run.batch_ios`` completions (or ``default_batch_ios``) and,
when ``MAX_BATCHES`` have accumulated, adjacent pairs are merged, so batches grow with the run
and stay long compared with the system's correlation time. After ``run.min_batches`` batches
the run stops once the relative 95% half-width of both IOPS and mean latency is at most
``run.target_rel_ci`` and still is after a further quarter of the run ("precision reached";
the confirmation counters sequential-stopping bias); with several workloads, each workload's own
IOPS and mean latency too. Leading batches that still drift (a write
cache filling up, a backlog building) are dropped by MSER truncation before any estimate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, Workload
from sim.des.stats import BATCH_METRICS, NBUCKETS, Batch, estimate, histogram, mser_truncation

if TYPE_CHECKING:
    from sim.des.run_state import RunState

MAX_BATCHES = 32
CONFIRM_FACTOR = 1.25
DEFAULT_BATCH_IOS = 1_000


def default_batch_ios(scenario: Scenario) -> int:
    """Completions per batch at the start of a run: 1,000, or 8 per I/O slot of a closed workload.

    A closed system's completions are correlated over about one cycle of its N slots, so
    batches of several N completions keep the batch means close to independent. A bursty
    workload's completions are correlated over its on/off cycle, so a batch starts at the
    I/Os of two mean cycles (the batches then grow by merging). Several workloads: the largest
    of these, with the I/O slots of all closed workloads counted together.
    """
    workloads = scenario.all_workloads()
    if len(workloads) > 1:
        slots = sum(wl.jobs * wl.queue_depth for wl in workloads if isinstance(wl, ClosedWorkload))
        closed = min(100_000, 8 * slots)
        return max([closed, DEFAULT_BATCH_IOS, *[_bursty_batch_ios(wl) for wl in workloads]])
    wl = scenario.workload
    if isinstance(wl, ClosedWorkload):
        return min(100_000, max(DEFAULT_BATCH_IOS, 8 * wl.jobs * wl.queue_depth))
    return _bursty_batch_ios(wl)


def _bursty_batch_ios(wl: Workload) -> int:
    if isinstance(wl, BurstyWorkload):
        cycle_ios = wl.mean_rate_iops * (wl.mean_on_ms + wl.mean_off_ms) / 1e3
        return int(min(1_000_000, max(DEFAULT_BATCH_IOS, 2 * cycle_ios)))
    return DEFAULT_BATCH_IOS


class BatchMeans:
    """The measured window of one run: the batch being filled, the closed batches, the meter
    marks at batch boundaries, MSER truncation and the precision stop rule."""

    def __init__(self, run: RunState):
        self.run = run
        settings = run.scenario.run
        self.warm = settings.warmup_ios == 0
        self.warmup_ios = settings.warmup_ios
        self.batch_target = settings.batch_ios or default_batch_ios(run.scenario)
        self.batch_fixed = settings.batch_ios is not None
        self.batches: list[Batch] = []
        self.workload_batches: list[list[Batch]] = [[] for _ in run.tallies]
        """Per workload (a scenario with several): its batches, over the same windows as ``batches``."""
        self.marks: list[tuple[float, list[float], list[float]]] = []
        self._cut: tuple[tuple[int, int], int] = ((-1, -1), 0)
        self._precision_met_at: int | None = None
        self._pause_met_at: int | None = None
        """The precision rule's state for ``run.pause_min_batches`` (``check_stop``)."""
        self.b_ios = 0
        self.b_rlats: list[float] = []
        self.b_wlats: list[float] = []
        self.b_reads = 0
        self.b_writes = 0
        self.b_rsum = 0.0
        self.b_wsum = 0.0
        self.b_hist = np.zeros(NBUCKETS, dtype=np.int64)
        self.b_bytes = 0
        self.b_start = 0.0
        self.b_out_area = 0.0
        self.b_cpu = 0.0
        self.new_batch()

    # -- batches -----------------------------------------------------------------
    def new_batch(self) -> None:
        run = self.run
        self.b_ios = 0
        self.b_rlats = []
        self.b_wlats = []
        self.b_reads = 0
        self.b_writes = 0
        self.b_rsum = 0.0
        self.b_wsum = 0.0
        self.b_hist = np.zeros(NBUCKETS, dtype=np.int64)
        self.b_bytes = 0
        self.b_start = run.env.now
        self.b_out_area = run.out_area_now()
        self.b_cpu = run.model.cpu.unit_time() if run.model.cpu else 0.0
        for tally in run.tallies:
            tally.start(self.b_start)
        self.marks.append(self.meter_mark())

    def meter_mark(self) -> tuple[float, list[float], list[float]]:
        """(time, occupancy area, busy area) of every meter: taken at each batch boundary."""
        run = self.run
        meters = run.model.meters
        return run.env.now, [m.unit_time() for m in meters], [m.busy_area for m in meters]

    def flush(self) -> None:
        """Move the held latencies into the batch's counts, sums and histogram."""
        if self.b_rlats:
            reads = np.asarray(self.b_rlats)
            self.b_reads += len(reads)
            self.b_rsum += float(reads.sum())
            self.b_hist += histogram(reads)
            self.b_rlats = []
        if self.b_wlats:
            writes = np.asarray(self.b_wlats)
            self.b_writes += len(writes)
            self.b_wsum += float(writes.sum())
            self.b_hist += histogram(writes)
            self.b_wlats = []

    def close_batch(self, check: bool = True) -> None:
        run = self.run
        now = run.env.now
        cpu_now = run.model.cpu.unit_time() if run.model.cpu else 0.0
        self.flush()
        self.batches.append(Batch(
            duration_s=(now - self.b_start) * 1e-6,
            ios=self.b_ios, reads=self.b_reads, writes=self.b_writes,
            latency_sum_us=self.b_rsum + self.b_wsum,
            read_latency_sum_us=self.b_rsum, write_latency_sum_us=self.b_wsum,
            bytes=self.b_bytes, cpu_busy_us=cpu_now - self.b_cpu,
            outstanding_area_s=(run.out_area_now() - self.b_out_area) * 1e-6,
            histogram=self.b_hist,
        ))
        if run.tallies:
            self._close_workload_batches(now, self.batches[-1])
        if len(self.batches) >= MAX_BATCHES and not self.batch_fixed:
            self.batches = [a.merged(b) for a, b in zip(self.batches[::2], self.batches[1::2], strict=True)]
            self.workload_batches = [[a.merged(b) for a, b in zip(own[::2], own[1::2], strict=True)] for own in self.workload_batches]
            self.marks = self.marks[::2]
            self.batch_target *= 2
        if check:
            self.check_stop()
        self.new_batch()

    def _close_workload_batches(self, now: float, whole: Batch) -> None:
        """Each workload's batch of the window ``whole`` covers; the host CPU's busy time is shared
        by I/O count (the CPU is one, and not metered per workload)."""
        for tally, own in zip(self.run.tallies, self.workload_batches, strict=True):
            share = whole.cpu_busy_us * tally.ios / whole.ios if whole.ios else 0.0
            own.append(tally.close(now, whole.duration_s, share))

    def end_warmup(self) -> None:
        self.warm = True
        for meter in self.run.model.meters:
            meter.reset()
        self.marks = []
        self.new_batch()

    # -- estimates ---------------------------------------------------------------
    def truncation(self) -> int:
        """Leading batches to drop: MSER warm-up truncation on the IOPS and latency batch means."""
        key = (len(self.batches), self.batch_target)
        if self._cut[0] != key:
            cut = max(mser_truncation([BATCH_METRICS[m](b) for b in self.batches]) for m in ("iops", "latency_mean_us"))
            self._cut = (key, cut)
        return self._cut[1]

    def steady_batches(self) -> list[Batch]:
        return self.batches[self.truncation():]

    def steady_workload_batches(self) -> list[list[Batch]]:
        """Each workload's batches over the steady window (the whole run's MSER cut)."""
        cut = self.truncation()
        return [own[cut:] for own in self.workload_batches]

    def occupancy(self) -> tuple[dict[str, float], dict[str, float]]:
        """Utilization and busy fraction of every meter over the steady batches."""
        cut = self.truncation()
        t0, area0, busy0 = self.marks[cut]
        t1, area1, busy1 = self.marks[len(self.batches)] if len(self.marks) > len(self.batches) else self.meter_mark()
        window = t1 - t0
        util: dict[str, float] = {}
        busy: dict[str, float] = {}
        for i, m in enumerate(self.run.model.meters):
            util[m.name] = min(1.0, (area1[i] - area0[i]) / (m.capacity * window)) if window > 0 else 0.0
            busy[m.name] = min(1.0, (busy1[i] - busy0[i]) / window) if window > 0 else 0.0
        return util, busy

    # -- the stop rule -------------------------------------------------------------
    def precise(self) -> bool:
        """Whether the steady batches (at least ``min_batches``) give IOPS and mean latency to
        ``target_rel_ci``: a run that a budget stopped is still precise when this holds."""
        s = self.run.scenario.run
        steady = self.steady_batches()
        if len(steady) < s.min_batches:
            return False
        for key in ("iops", "latency_mean_us"):
            v, lo, hi = estimate(steady, key)
            if not v or not math.isfinite(lo) or (hi - lo) / 2 / abs(v) > s.target_rel_ci:
                return False
        return self.workloads_precise(s.target_rel_ci)

    def workloads_precise(self, target: float) -> bool:
        """Whether every workload of a consolidated run has its own IOPS and mean latency to ``target``
        (a rare workload, a backup or a burst, keeps the run going until it has; True with one workload)."""
        for own in self.steady_workload_batches():
            for key in ("iops", "latency_mean_us"):
                v, lo, hi = estimate(own, key)
                if not v or not math.isfinite(lo) or (hi - lo) / 2 / abs(v) > target:
                    return False
        return True

    def check_stop(self) -> None:
        run = self.run
        s = run.scenario.run
        steady = self.steady_batches()
        pause = run.pause_min_batches
        if len(steady) >= s.min_batches or 0 < pause <= len(steady):
            rel = []
            for key in ("iops", "latency_mean_us"):
                v, lo, hi = estimate(steady, key)
                rel.append((hi - lo) / 2 / abs(v) if v else math.inf)
            met = max(rel) <= s.target_rel_ci and self.workloads_precise(s.target_rel_ci)
            # Stopping the first time the interval looks narrow enough favours runs whose variance estimate
            # happens to be low (sequential-stopping bias): the precision is confirmed after a further quarter
            # of the run (``_confirmed``) before the run stops.
            if 0 < pause <= len(steady):
                # the rule of the same run with ``pause`` batches at least (sim.des.engine.ScreenedRun), followed
                # beside this run's own: when it would stop that run, this one pauses instead
                self._pause_met_at, held = _confirmed(self._pause_met_at, met, run.completed)
                if held:
                    run.pause(f"precision reached: relative 95% half-width <= {s.target_rel_ci:g}")
            if len(steady) >= s.min_batches:
                self._precision_met_at, held = _confirmed(self._precision_met_at, met, run.completed)
                if held:
                    run.stop(f"precision reached: relative 95% half-width <= {s.target_rel_ci:g}")
                    return
        run.check_budgets()


def _confirmed(met_at: int | None, met: bool, completed: int) -> tuple[int | None, bool]:
    """The precision rule's confirmation: (the completed I/Os when the precision was first met since it last
    failed, or None; whether it has held from there to ``CONFIRM_FACTOR`` times as many I/Os)."""
    if not met:
        return None, False
    if met_at is None:
        return completed, False
    return met_at, completed >= CONFIRM_FACTOR * met_at
