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
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, Workload
from sim.des.components import Meter, Station
from sim.des.dies import DieArray
from sim.des.stats import BATCH_METRICS, NBUCKETS, TREND_Z, Batch, estimate, histogram, mann_kendall_z, mser_truncation, sen_slope

if TYPE_CHECKING:
    from sim.des.run_state import RunState

MAX_BATCHES = 32
CONFIRM_FACTOR = 1.25
DEFAULT_BATCH_IOS = 1_000
RELAXATION_TIMES = 10.0
"""Relaxation times of the most loaded resource the steady window of an open workload covers before the run may
say precise: the initial state's weight falls as exp(-t / tau), under 1% after 5 tau; 10 leave room for the
error in the rho the run estimates."""
SATURATED_RHO = 0.99
"""Offered load (fraction of a resource's capacity) from which a run is reported unstable (``sim.des.assembly``)."""
RISE = 0.5
"""How much the in-flight count must rise over the steady window (a fraction of its mean, on the Theil-Sen line)
for a significant upward trend (``TREND_Z``) to count as a growing queue: a stable queue near capacity wanders,
it does not climb by half its own mean in one run."""
STOP_TREND_Z = 2.33
"""Mann-Kendall z (one-sided p = 0.01) of the in-flight batch means above which the stop rule waits for more batches."""


def workload_rate(wl: Workload) -> float:
    """A workload's mean arrival rate (I/O per second); 0 for a closed workload."""
    if isinstance(wl, OpenWorkload):
        return float(wl.rate_iops)
    if isinstance(wl, BurstyWorkload):
        return float(wl.mean_rate_iops)
    return 0.0


def offered_rate(run: RunState) -> float:
    """The workloads' mean arrival rate (I/O per second, summed); 0 when every workload is closed."""
    return sum(workload_rate(wl) for wl in run.scenario.all_workloads())


def offered_load(utilization: float, lam: float, x: float) -> float:
    """The load an open workload of rate ``lam`` offers a resource the run measured at ``utilization`` with
    throughput ``x``: rho = U x lambda / X by the utilization law (U = X x D, rho = lambda x D) where the run fell
    behind its arrivals (X < lambda), and U itself where it kept up (X >= lambda: a write cache draining, or closed
    workloads beside the open one adding to X)."""
    if not x > 0:
        return math.inf
    return utilization * max(1.0, lam / x)


def serves(meter: Meter) -> bool:
    """Whether ``meter`` is a pool of servers whose busy time is work (a station, a drive's dies), rather than a
    concurrency limit whose slots are held while the work is done elsewhere."""
    return isinstance(meter, (Station, DieArray))


def competing(meters: list[Meter], utilization: dict[str, float]) -> dict[str, float]:
    """The resources that compete for the bottleneck and the unstable rule, with their utilization: every pool of
    servers (``serves``), and a concurrency limit only if an I/O ever waited for it. A pool of c servers has
    utilization = busy server time / (c x window): ``BatchMeans.occupancy``."""
    return {m.name: utilization[m.name] for m in meters if serves(m) or m.waited}


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
        self._hot_at: int | None = None
        self._pause_hot_at: int | None = None
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
        """Utilization and busy fraction of every meter over the steady batches. Utilization is the busy server
        (or held slot) time over capacity x window: for a pool of c servers, busy server time / (c x window)."""
        cut = self.truncation()
        end = self.marks[len(self.batches)] if len(self.marks) > len(self.batches) else self.meter_mark()
        return self._between(self.marks[cut], end)

    def _between(self, start: tuple[float, list[float], list[float]],
                 end: tuple[float, list[float], list[float]]) -> tuple[dict[str, float], dict[str, float]]:
        (t0, area0, busy0), (t1, area1, busy1) = start, end
        window = t1 - t0
        util: dict[str, float] = {}
        busy: dict[str, float] = {}
        for i, m in enumerate(self.run.model.meters):
            util[m.name] = min(1.0, (area1[i] - area0[i]) / (m.capacity * window)) if window > 0 else 0.0
            busy[m.name] = min(1.0, (busy1[i] - busy0[i]) / window) if window > 0 else 0.0
        return util, busy

    # -- how near capacity ---------------------------------------------------------
    def _marked_window(self) -> tuple[float, list[Batch], dict[str, float], float] | None:
        """(offered rate, the steady batches whose closing marks are taken, the competing resources' utilization
        over them, their span in us), or None for a closed workload or before two such batches."""
        lam = offered_rate(self.run)
        cut = self.truncation()
        last = min(len(self.batches), len(self.marks) - 1)
        if lam <= 0 or last - cut < 2:
            return None
        util, _ = self._between(self.marks[cut], self.marks[last])
        pool = competing(self.run.model.meters, util) or util
        return lam, self.batches[cut:last], pool, self.marks[last][0] - self.marks[cut][0]

    def relaxation(self) -> tuple[str, float, float, float] | None:
        """(resource, the load offered to it rho, its relaxation time tau in us, the steady window in us) of the
        competing resource with the longest tau (module docstring), over the steady batches whose closing marks are
        taken (so no meter is read here); None for a closed workload or before two such batches. tau is infinite
        at rho >= 1."""
        measured = self._marked_window()
        if measured is None:
            return None
        lam, steady, pool, window = measured
        x = BATCH_METRICS["iops"](_total(steady))
        worst: tuple[str, float, float, float] | None = None
        for name, u in pool.items():
            rho = offered_load(u, lam, x)
            tau = (u / x * 1e6) / (1 - math.sqrt(rho)) ** 2 if rho < 1 else math.inf
            if worst is None or tau > worst[2]:
                worst = (name, rho, tau, window)
        return worst

    def relaxed(self) -> bool:
        """Whether the steady window covers ``RELAXATION_TIMES`` relaxation times (always, for a closed workload)."""
        r = self.relaxation()
        return r is None or r[3] >= RELAXATION_TIMES * r[2]

    def in_flight_trend(self) -> float:
        """Mann-Kendall z of the I/Os in flight over the steady batches (0 for a closed workload): positive when
        the backlog rises across the run."""
        if offered_rate(self.run) <= 0:
            return 0.0
        return mann_kendall_z([BATCH_METRICS["mean_outstanding_ios"](b) for b in self.steady_batches()])

    def rising(self) -> bool:
        """Whether the I/Os in flight rise across the steady batches (z >= ``STOP_TREND_Z``)."""
        return self.in_flight_trend() >= STOP_TREND_Z

    def backlog_rising(self) -> tuple[float, float, float] | None:
        """(Mann-Kendall z, in-flight at the start and at the end of the steady window on the Theil-Sen line) when
        the I/Os in flight of an open workload climb across the steady batches: z >= ``TREND_Z`` and a rise of at
        least ``RISE`` of their mean; else None."""
        z = self.in_flight_trend()
        if z < TREND_Z:
            return None
        steady = self.steady_batches()
        flight = [BATCH_METRICS["mean_outstanding_ios"](b) for b in steady]
        mids, t = [], 0.0
        for b in steady:
            mids.append(t + b.duration_s / 2)
            t += b.duration_s
        slope = sen_slope(mids, flight)
        mean = sum(flight) / len(flight)
        start, end = mean - slope * t / 2, mean + slope * t / 2
        if not end - start >= RISE * mean:
            return None
        return z, max(0.0, start), end

    def overload(self) -> str | None:
        """Why an open workload is past what the route can serve, by the steady batches whose closing marks are
        taken (no meter is read): a competing resource offered ``SATURATED_RHO`` of its capacity or more at the top
        of the throughput's 95% interval (``sim.des.assembly``), or the backlog rising; None when neither holds."""
        measured = self._marked_window()
        if measured is None:
            return None
        lam, steady, pool, _ = measured
        x, _, x_high = estimate(steady, "iops")
        name = max(pool, key=lambda k: pool[k])
        if offered_load(pool[name], lam, x_high if math.isfinite(x_high) else x) >= SATURATED_RHO:
            return (f"unstable: {name} is offered {offered_load(pool[name], lam, x):.0%} of its capacity "
                    f"({completions(steady):,} I/Os measured); the queue grows for as long as the run lasts")
        rise = self.backlog_rising()
        if rise is not None:
            z, start, end = rise
            return (f"unstable: the I/Os in flight rose from {start:,.0f} to {end:,.0f} across the measured window "
                    f"(Mann-Kendall z = {z:.1f}); the queue grows for as long as the run lasts")
        return None

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
        return self.workloads_precise(s.target_rel_ci) and self.settled()

    def settled(self) -> bool:
        """An open workload's run has covered its relaxation time and its backlog does not rise (module docstring)."""
        return self.relaxed() and not self.rising()

    def workloads_precise(self, target: float) -> bool:
        """Whether every workload of a consolidated run has its own IOPS and mean latency to ``target``
        (a rare workload, a backup or a burst, keeps the run going until it has; True with one workload)."""
        for own in self.steady_workload_batches():
            for key in ("iops", "latency_mean_us"):
                v, lo, hi = estimate(own, key)
                if not v or not math.isfinite(lo) or (hi - lo) / 2 / abs(v) > target:
                    return False
        return True

    def _stop_overloaded(self, batches: int) -> bool:
        """Stop (or pause, for ``ScreenedRun``) an open workload's run once ``overload`` has held from one check to
        a further quarter of the run: the verdict is unstable, and no length of run would make it precise."""
        run = self.run
        pause = run.pause_min_batches
        if batches < run.scenario.run.min_batches and not 0 < pause <= batches:
            return False
        why = self.overload()
        if 0 < pause <= batches:
            self._pause_hot_at, held = _confirmed(self._pause_hot_at, why is not None, run.completed)
            if held and why is not None:
                run.pause(why)
        if batches >= run.scenario.run.min_batches:
            self._hot_at, held = _confirmed(self._hot_at, why is not None, run.completed)
            if held and why is not None:
                run.stop(why)
                return True
        return False

    def check_stop(self) -> None:
        run = self.run
        s = run.scenario.run
        steady = self.steady_batches()
        pause = run.pause_min_batches
        # an overloaded run's leading batches drift, and MSER keeps cutting them: its verdict counts every batch
        if self._stop_overloaded(len(self.batches)):
            return
        if len(steady) >= s.min_batches or 0 < pause <= len(steady):
            rel = []
            for key in ("iops", "latency_mean_us"):
                v, lo, hi = estimate(steady, key)
                rel.append((hi - lo) / 2 / abs(v) if v else math.inf)
            met = max(rel) <= s.target_rel_ci and self.workloads_precise(s.target_rel_ci) and self.settled()
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


def completions(batches: list[Batch]) -> int:
    return sum(b.ios for b in batches)


def _total(batches: list[Batch]) -> Batch:
    """The completions and time of ``batches`` together (what the throughput needs)."""
    return Batch(duration_s=sum(b.duration_s for b in batches), ios=sum(b.ios for b in batches))


def _confirmed(met_at: int | None, met: bool, completed: int) -> tuple[int | None, bool]:
    """The precision rule's confirmation: (the completed I/Os when the precision was first met since it last
    failed, or None; whether it has held from there to ``CONFIRM_FACTOR`` times as many I/Os)."""
    if not met:
        return None, False
    if met_at is None:
        return completed, False
    return met_at, completed >= CONFIRM_FACTOR * met_at
