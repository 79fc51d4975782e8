"""Replay a load profile with the DES: the arrivals change rate, depth and mix at interval
boundaries, and every interval is measured on its own (load over time).

* Run length: the sum of the interval durations in simulated time (plus ``warmup_s`` of the first
  interval's load before it, not measured), not the precision rule: a replay is the same length
  on any machine and for any seed. Arrivals stop at the end; the I/Os still in flight are drained
  so the last intervals' latencies are not cut off. ``run.max_ios`` and ``run.max_wall_s`` still
  bound the run (the result then says which intervals it did not reach), and a backlog beyond
  ``sim.des.engine.UNSTABLE_BACKLOG`` stops it as unstable.
* Arrivals (``ProfileArrivals``): an open interval is Poisson at its rate (the chain restarts at
  the boundary, exact since exponential gaps are memoryless; a pending arrival of the old rate is
  dropped); a closed interval keeps ``queue_depth`` I/Os in flight: at its start the missing ones
  are issued, and a completion is reissued only while fewer are in flight (I/Os left from a busier
  interval drain first). The read fraction and size mix switch at the boundary too.
* Throughput of an interval counts the completions inside it (what the path carried); latency
  counts the I/Os that arrived in it, whenever they complete (what they waited). So per interval:
  backlog_start + arrived - completed = backlog_end (conservation, tests/des/test_profile.py).
* Confidence intervals: each interval is cut into ``SLICES`` equal time slices, and a metric's 95%
  interval is the Student t interval over the slices (batch means inside the interval). It is given
  only when every slice holds enough I/Os: ``MIN_SLICE_IOS`` for means and rates, and for a
  percentile q at least ``TAIL_SAMPLES`` I/Os beyond it (10 / (1 - q): 1,000 per slice for p99).
  Otherwise the interval is null with a note saying how many the interval had.
* A profile among several workloads (a scenario's ``workloads`` list holding one profile next to
  closed, open or bursty workloads): the profile's intervals drive its own I/Os while the steady
  workloads run their own arrival sources alongside from time 0 (``sim.des.arrivals``, through a
  ``_SteadyPort`` that counts their arrivals and records their completions), all on the one route.
  Every workload is measured over the same interval windows by the same rules (a log per workload
  and interval, besides the whole run's), so a steady workload has its per-interval figures too:
  "OLTP latency during the batch peak". The replay ends when the profile has ended and every I/O
  that arrived in an interval (of any workload) has completed; the steady workloads keep running
  while those drain, and what they issue after the end is not measured. The result's ``intervals``
  and ``peak_interval`` are the whole run's (every workload's I/Os pooled), ``workloads`` has each
  workload's run-wide values and its own ``intervals`` and ``peak_interval``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

import numpy as np

from models.profile import peak_interval
from models.result import INTERVAL_METRICS, METRIC_KEYS, IntervalResult, Metric, Result, WorkloadResult
from models.scenario import Scenario
from models.workload import ClosedWorkload, ProfileWorkload, Workload
from sim.des.arrivals import arrivals_of
from sim.des.assembly import workload_rate
from sim.des.components import READ, Ev, Job, Station, schedule
from sim.des.engine import Run, _SizeChooser, run_until
from sim.des.stats import BATCH_METRICS, NBUCKETS, PERCENTILES, Batch, add_latencies, estimate, percentile

if TYPE_CHECKING:
    from sim.des.run_state import RunState

SLICES = 10
"""Time slices per interval: the batches of its confidence intervals."""
MIN_SLICE_IOS = 30
"""I/Os every slice needs before a mean or rate gets a confidence interval."""
TAIL_SAMPLES = 10
"""I/Os beyond a percentile every slice needs before that percentile gets a confidence interval."""
SATURATED_BUSY = 0.99
"""A station busy this fraction of an interval marks the interval saturated (sim.des.assembly's rule)."""
HOLD = 4096
"""Latencies held in a list before they go into the slice's histogram."""
_NAN = (math.nan, math.nan)
NO_HISTOGRAM = np.zeros(0, dtype=np.int64)
NO_HISTOGRAM.flags.writeable = False
"""The histogram of a batch that has none: a served batch (throughput only), a response batch before its first
latency and after its interval is summarized. A full histogram is ``NBUCKETS`` counters (13.6 KB): ten per
interval would cost a day of 1-second intervals over a gigabyte."""
NO_BATCHES = 10**9
"""The engine Run's own warm-up length in a replay: its batch means never start (the intervals are measured here)."""
Mark = tuple[float, list[float], list[float], float, float, list[float]]
"""(time, occupancy area and busy area of every meter, CPU-busy us, outstanding-I/O area, and each
workload's outstanding-I/O area in a replay of several workloads) at an instant."""
POOLED = 0
"""The set of interval logs of every I/O (``ProfileRun.sets``); set 1 + w is workload w's."""


def needed_per_slice(metric: str) -> int:
    """I/Os each slice must hold for ``metric`` to get a confidence interval (see the module docstring)."""
    q = PERCENTILES.get(metric)
    return MIN_SLICE_IOS if q is None else max(MIN_SLICE_IOS, math.ceil(TAIL_SAMPLES / (1.0 - q) - 1e-9))


@dataclass
class _IntervalLog:
    """What one interval collects while the profile runs."""

    index: int
    start: float
    length: float
    series: int
    """Which set of logs: ``POOLED`` (every I/O), or 1 + the workload's index."""
    served: list[Batch]
    response: list[Batch]
    held: list[tuple[list[float], list[float]]]
    arrived: int = 0
    pending: int = 0
    completed: int = 0
    backlog_start: int = 0
    backlog_end: int = 0
    busiest: tuple[str, float, bool] = ("none", 0.0, False)
    done: bool = False
    result: IntervalResult | None = field(default=None)

    @classmethod
    def new(cls, index: int, start: float, length: float, series: int = POOLED) -> _IntervalLog:
        width = length / SLICES * 1e-6
        return cls(index, start, length, series, served=[Batch(duration_s=width, histogram=NO_HISTOGRAM) for _ in range(SLICES)],
                   response=[Batch(duration_s=width, histogram=NO_HISTOGRAM) for _ in range(SLICES)],
                   held=[([], []) for _ in range(SLICES)])

    def slice_of(self, t: float) -> int:
        s = int((t - self.start) / self.length * SLICES)
        return SLICES - 1 if s >= SLICES else max(0, s)

    def flush(self, s: int) -> None:
        """Move slice ``s``'s held latencies into its counts, sums and histogram."""
        reads, writes = self.held[s]
        b = self.response[s]
        if not b.histogram.size:
            b.histogram = np.zeros(NBUCKETS, dtype=np.int64)
        b.ios += len(reads) + len(writes)
        add_latencies(b, reads, True)
        add_latencies(b, writes, False)
        reads.clear()
        writes.clear()


class ProfileRun:
    """A replay of a ProfileWorkload: a ``sim.des.engine.Run`` (the model, the I/O walk, the budgets)
    driven by ``ProfileArrivals``, with one log per interval.

    It holds a Run rather than extending it: the engine is compiled (sim/native/guard.py), and a compiled
    class is not subclassed from interpreted code. The Run is built from
    ``ProfileWorkload.steady_workload()`` (the route needs one mix to lay out a volume: open unless
    every interval is closed) with its own warm-up and batches switched off; the arrivals and the
    mix then follow the intervals, and every completion comes back through ``Run.on_complete``."""

    def __init__(self, scenario: Scenario):
        index = scenario.profile_index()
        assert index is not None
        profile = scenario.all_workloads()[index]
        assert isinstance(profile, ProfileWorkload)
        self.index = index
        """The profile's index among the scenario's workloads (its I/Os' ``Job.workload``)."""
        self.mixed = scenario.consolidated
        """A profile among several workloads (a ``workloads`` list): each workload also has its own logs."""
        update: dict[str, object] = {"run": scenario.run.model_copy(update={"warmup_ios": NO_BATCHES})}  # the Run's batches never start
        if self.mixed:
            stand_in = profile.steady_workload().model_copy(update={"name": profile.name, "placement": profile.placement})
            workloads = [stand_in if i == index else wl for i, wl in enumerate(scenario.all_workloads())]
            update.update(workloads=workloads, workload=workloads[0])
        else:
            update["workload"] = profile.steady_workload()
        self.run = Run(scenario.model_copy(update=update))
        self.original = scenario
        self.profile = profile
        self.warmup_us = profile.warmup_s * 1e6
        starts, t = [], self.warmup_us
        for iv in profile.intervals:
            starts.append(t)
            t += iv.duration_s * 1e6
        self.starts = starts
        self.end_us = t
        workloads = scenario.all_workloads() if self.mixed else []
        self.sets = [[_IntervalLog.new(i, s, iv.duration_s * 1e6, series) for i, (s, iv) in enumerate(zip(starts, profile.intervals, strict=True))]
                     for series in range(1 + len(workloads))]
        """The interval logs: ``sets[POOLED]`` of every I/O, ``sets[1 + w]`` of workload w's (a mixed replay)."""
        self.logs = self.sets[POOLED]
        self.steady: list[tuple[int, Workload]] = [(w, wl) for w, wl in enumerate(workloads) if w != index]
        self.unsettled = 0
        """I/Os counted into an interval and not yet completed (every workload's)."""
        self.current = -1
        self.ended = False
        self.read_unit = self.run.streams.uniform()
        self.write_unit = self.run.streams.uniform()
        self.mixes = [self._mix(i) for i in range(len(profile.intervals))]
        self.window_start: Mark | None = None
        self.interval_mark: Mark | None = None
        self.window_end: Mark | None = None
        self.hists = [np.zeros(NBUCKETS, dtype=np.int64) for _ in self.sets]
        self.run_hist = self.hists[POOLED]

    def _mix(self, index: int) -> tuple[float, _SizeChooser | None, _SizeChooser | None]:
        wl = self.profile.interval_workload(index)
        rf = wl.read_fraction
        return (rf, _SizeChooser(wl.size_table("read"), self.read_unit) if rf > 0 else None,
                _SizeChooser(wl.size_table("write"), self.write_unit) if rf < 1 else None)

    def use_mix(self, index: int) -> None:
        traffic = self.run.traffic[self.index]
        traffic.read_fraction, traffic.read_size, traffic.write_size = self.mixes[index]

    def outstanding(self, series: int) -> int:
        """I/Os in flight now: every workload's (``POOLED``), or workload ``series - 1``'s."""
        return self.run.outstanding if series == POOLED else self.run.tallies[series - 1].outstanding

    def profile_outstanding(self) -> int:
        """The profile's own I/Os in flight (what a closed interval's depth counts)."""
        return self.outstanding(1 + self.index if self.mixed else POOLED)

    def drained(self) -> bool:
        """Whether the replay may stop after the profile's end: nothing of the profile in flight, and
        every I/O counted into an interval completed."""
        return not self.profile_outstanding() and (not self.mixed or not self.unsettled)

    def mark(self) -> Mark:
        """(time, occupancy area and busy area of every meter, CPU-busy us, outstanding areas) now."""
        run = self.run
        meters = run.model.meters
        cpu = run.model.cpu.unit_time() if run.model.cpu else 0.0
        now = run.env.now
        own = [t.area_now(now) for t in run.tallies] if self.mixed else []
        return now, [m.unit_time() for m in meters], [m.busy_area for m in meters], cpu, run.out_area_now(), own

    # -- boundaries --------------------------------------------------------------------------
    def enter(self, index: int) -> None:
        """Interval ``index`` starts (``len(intervals)``: the profile ends)."""
        now_mark = self.mark()
        if self.current >= 0:
            busiest = self._busiest(self.interval_mark, now_mark)
            for series, logs in enumerate(self.sets):
                log = logs[self.current]
                log.backlog_end = self.outstanding(series)
                log.busiest = busiest
                self._maybe_finish(log)
        else:
            self.window_start = now_mark  # the measured window starts
        self.interval_mark = now_mark
        if index == len(self.logs):
            self.window_end = now_mark
        self.current = index
        if index < len(self.logs):
            for series, logs in enumerate(self.sets):
                logs[index].backlog_start = self.outstanding(series)

    def _busiest(self, a: Mark | None, b: Mark) -> tuple[str, float, bool]:
        best, best_u, saturated = "none", 0.0, False
        window = b[0] - a[0] if a is not None else 0.0
        if a is None or window <= 0:
            return best, best_u, saturated
        for i, m in enumerate(self.run.model.meters):
            if not isinstance(m, Station) and not m.waited:
                continue
            u = min(1.0, (b[1][i] - a[1][i]) / (m.capacity * window))
            if u > best_u:
                best, best_u = m.name, u
            saturated = saturated or (isinstance(m, Station) and u >= SATURATED_BUSY)
        return best, best_u, saturated

    # -- arrivals and completions ------------------------------------------------------------
    def count(self, workload: int) -> None:
        """An I/O of workload ``workload`` arrives now: the interval it arrives in counts it (not one
        of the warm-up, nor one after the profile's end)."""
        now = self.run.env._now
        if self.ended or now >= self.end_us:
            return
        a = bisect_right(self.starts, now) - 1
        if a < 0:
            return
        log = self.logs[a]
        log.arrived += 1
        log.pending += 1
        self.unsettled += 1
        if self.mixed:
            own = self.sets[1 + workload][a]
            own.arrived += 1
            own.pending += 1

    def record(self, job: Job) -> None:
        """A completion (``Run.complete`` has counted it and checked the budgets): the interval it
        completes in carries it, the interval it arrived in gets its latency."""
        now = self.run.env._now
        k = self.current
        own = self.sets[1 + job.workload] if self.mixed else None
        if 0 <= k < len(self.logs):
            _served(self.logs[k], job, now)
            if own is not None:
                _served(own[k], job, now)
        if job.t0 >= self.end_us:
            return  # issued after the profile's end: not counted
        a = bisect_right(self.starts, job.t0) - 1
        if a >= 0:
            self.unsettled -= 1
            self._record(self.logs[a], job, now)
            if own is not None:
                self._record(own[a], job, now)

    def _record(self, log: _IntervalLog, job: Job, now: float) -> None:
        s = log.slice_of(job.t0)
        held = log.held[s][0 if job.op == READ else 1]
        held.append(now - job.t0)
        if len(held) >= HOLD:
            log.flush(s)
        log.pending -= 1
        if not log.pending and log.index < self.current:
            self._maybe_finish(log)

    def _maybe_finish(self, log: _IntervalLog) -> None:
        """Summarize an interval once it has ended and every I/O it issued has completed (its
        histograms are then dropped: memory stays bounded on a day of 1-second intervals)."""
        if log.done or log.pending:
            return
        hist = self.hists[log.series]
        for s in range(SLICES):
            log.flush(s)
            hist += log.response[s].histogram if log.response[s].histogram.size else 0
        log.result = self.interval_result(log)
        log.response = [Batch(duration_s=b.duration_s, ios=b.ios, reads=b.reads, writes=b.writes, latency_sum_us=b.latency_sum_us,
                              read_latency_sum_us=b.read_latency_sum_us, write_latency_sum_us=b.write_latency_sum_us,
                              histogram=NO_HISTOGRAM) for b in log.response]
        log.done = True

    def offered(self, log: _IntervalLog) -> tuple[float | None, bool]:
        """(the arrival rate offered in ``log``'s interval, None where a closed load takes part; whether
        an open load takes part: then a saturated station means a growing queue)."""
        iv = self.profile.intervals[log.index]
        if not self.mixed:
            return iv.rate_iops, iv.rate_iops is not None
        rates: list[float | None] = []
        for w, wl in enumerate(self.original.all_workloads()):
            if log.series != POOLED and log.series != 1 + w:
                continue
            rates.append(iv.rate_iops if w == self.index else (None if isinstance(wl, ClosedWorkload) else workload_rate(wl)))
        known = [r for r in rates if r is not None]
        return (sum(known, 0.0) if len(known) == len(rates) else None), bool(known)

    def interval_result(self, log: _IntervalLog) -> IntervalResult:
        offered, is_open = self.offered(log)
        return interval_result(self.profile, log, offered, is_open)

    def replay(self) -> Result:
        import time

        run = self.run
        run.wall_start = time.perf_counter()
        ProfileArrivals(self).start()
        if self.steady:
            port = _SteadyPort(self)
            for w, _ in self.steady:  # an open source sets no completer: its completions are recorded, then recycled
                run.set_completer(w, _Recorded(self, run.jobs.recycle).done)
            sources = [arrivals_of(cast("RunState", port), wl, w) for w, wl in self.steady]
            # started at time 0 after the boundary events there: the first interval's backlog is taken first
            schedule(run.env, 0.0, sources, _start_sources)
        try:
            run_until(run.env, run.stop_event)
        except RuntimeError:
            run.stop_reason = run.stop_reason or "stalled: no I/O can make progress"
        wall = time.perf_counter() - run.wall_start
        return assemble_profile(self, wall)


class ProfileArrivals:
    """The arrival source of a profile: switches rate, depth and mix at every interval boundary."""

    def __init__(self, replay: ProfileRun):
        self.replay = replay
        self.run = replay.run
        self.index = replay.index
        self.epoch = 0
        self.rate = 0.0
        self.depth = 0
        self.slots = 0
        self.gap_unit = replay.run.streams.unit("exponential")

    def start(self) -> None:
        p, env = self.replay, self.run.env
        if p.mixed:
            self.run.set_completer(self.index, self.completed)
        else:
            self.run.on_complete = self.completed
        if p.warmup_us > 0:
            self.switch(0)
        for i, t in enumerate(p.starts):
            schedule(env, t, i, self.boundary)
        schedule(env, p.end_us, len(p.starts), self.boundary)

    def boundary(self, event: Ev) -> None:
        index = event._value
        if self.run.stopped:
            return
        self.replay.enter(index)
        if index == len(self.replay.starts):
            self.finish()
        else:
            self.switch(index)

    def switch(self, index: int) -> None:
        iv = self.replay.profile.intervals[index]
        self.replay.use_mix(index)
        self.epoch += 1
        self.rate = iv.rate_iops or 0.0
        self.depth = iv.queue_depth or 0
        if self.depth:
            for _ in range(self.depth - self.replay.profile_outstanding()):
                self.issue_new(self.slots % self.depth)
                self.slots += 1
        else:
            self.next_arrival(self.epoch)

    def finish(self) -> None:
        """The profile ended: no more arrivals; stop once the I/Os in flight have drained."""
        self.replay.ended = True
        self.epoch += 1
        self.depth = 0
        self.rate = 0.0
        if self.replay.drained():
            self.run.stop(drained_reason(self.replay))

    def issue_new(self, slot: int) -> None:
        run = self.run
        job = run.jobs.new()
        job.slot = slot
        job.workload = self.index
        self.replay.count(self.index)
        run.issue(job)

    def next_arrival(self, epoch: int) -> None:
        if self.rate > 0:
            schedule(self.run.env, 1e6 / self.rate * self.gap_unit(), epoch, self.arrive)

    def arrive(self, event: Ev) -> None:
        epoch = event._value
        if self.run.stopped or epoch != self.epoch:
            return
        self.issue_new(-1)
        self.next_arrival(epoch)

    def completed(self, job: Job) -> None:
        """``Run.on_complete``: record the completion, then reissue it (a closed interval short of its
        depth), or let it go and stop once the ended profile has drained."""
        run = self.run
        self.replay.record(job)
        if run.stopped:
            return
        if self.depth and self.replay.profile_outstanding() < self.depth:
            self.replay.count(self.index)
            run.issue(job)
            return
        run.jobs.recycle(job)
        if self.replay.ended and self.replay.drained():
            run.stop(drained_reason(self.replay))


class _SteadyPort:
    """The run as a steady workload's arrival source (``sim.des.arrivals``) sees it in a mixed replay:
    ``ProfileRun.run``, except that every I/O it issues is first counted into the interval it arrives
    in, and every completion is first recorded (``_Recorded``). The sources use ``env``, ``streams``,
    ``jobs``, ``stopped``, ``issue`` and ``set_completer`` of ``sim.des.run_state.RunState``."""

    def __init__(self, replay: ProfileRun):
        self.replay = replay
        self.run = replay.run
        self.env = replay.run.env
        self.streams = replay.run.streams
        self.jobs = replay.run.jobs
        self.scenario = replay.run.scenario
        self.model = replay.run.model

    @property
    def stopped(self) -> bool:
        return self.run.stopped

    def issue(self, job: Job) -> None:
        self.replay.count(job.workload)
        self.run.issue(job)

    def set_completer(self, index: int, completer: Callable[[Job], None]) -> None:
        self.run.set_completer(index, _Recorded(self.replay, completer).done)


class _Recorded:
    """A steady workload's completer in a mixed replay: record the completion, then what the source does
    (reissue, recycle); stop once the ended profile has drained."""

    def __init__(self, replay: ProfileRun, then: Callable[[Job], None]):
        self.replay = replay
        self.then = then

    def done(self, job: Job) -> None:
        replay = self.replay
        replay.record(job)
        if replay.run.stopped:
            return
        self.then(job)
        if replay.ended and replay.drained():
            replay.run.stop(drained_reason(replay))


def _start_sources(event: Ev) -> None:
    for source in event._value:
        source.start()


def _served(log: _IntervalLog, job: Job, now: float) -> None:
    """``job`` completed now, inside ``log``'s interval: it counts in that interval's throughput."""
    b = log.served[log.slice_of(now)]
    b.ios += 1
    b.bytes += job.size
    if job.op == READ:
        b.reads += 1
    else:
        b.writes += 1
    log.completed += 1


def drained_reason(p: ProfileRun) -> str:
    """The stop reason of a replay that reached its end."""
    n = len(p.starts)
    drain_ms = (p.run.env.now - p.end_us) / 1e3
    return (f"profile replayed: {n} interval(s), {(p.end_us - p.warmup_us) / 1e6:g} s of simulated time (the sum of "
            f"the durations, not the precision rule)" + (f" after a {p.warmup_us / 1e6:g} s warm-up" if p.warmup_us else "")
            + (f"; the I/Os in flight at the end drained in {drain_ms:.3f} ms" if drain_ms > 0 else ""))


# -- the result ----------------------------------------------------------------------------------


def _metric(batches: list[Batch], key: str, count: int) -> tuple[Metric, str | None]:
    """A metric of one interval with its interval (or none, and why)."""
    if not count:
        return Metric(value=math.nan, ci95=_NAN), "nothing was measured in this interval"
    value, lo, hi = estimate(batches, key)
    need = needed_per_slice(key)
    fewest = min(_slice_count(b, key) for b in batches)
    if fewest < need:
        note = (f"{count:,} I/Os in the interval: a 95% interval needs >= {need:,} in each of its {SLICES} time slices "
                f"(the fewest had {fewest:,})")
        return Metric(value=value, ci95=_NAN), note
    return Metric(value=value, ci95=(lo, hi)), None


def _slice_count(b: Batch, key: str) -> int:
    if key.startswith("read_"):
        return b.reads
    if key.startswith("write_"):
        return b.writes
    return b.ios


def interval_result(profile: ProfileWorkload, log: _IntervalLog, offered: float | None, is_open: bool) -> IntervalResult:
    """The IntervalResult of a finished interval log (``offered``: the rate offered in it, None where a
    closed load takes part; ``is_open``: an open load takes part, so a saturated station marks it saturated)."""
    metrics: dict[str, Metric] = {}
    notes: dict[str, str] = {}
    served_total = sum(b.ios for b in log.served)
    response_total = sum(b.ios for b in log.response)
    for key in INTERVAL_METRICS:
        throughput = key in ("iops", "read_iops", "write_iops", "mbps")
        batches = log.served if throughput else log.response
        count = sum(_slice_count(b, key) for b in batches) if key.startswith(("read_", "write_")) else (
            served_total if throughput else response_total)
        if throughput and not count and log.arrived == 0 and log.backlog_start == 0:
            metrics[key], note = Metric(value=0.0, ci95=(0.0, 0.0)), None
        else:
            metrics[key], note = _metric(batches, key, count)
        if note:
            notes[key] = note
    iv = profile.intervals[log.index]
    return IntervalResult(
        index=log.index, label=iv.label, start_s=(log.start - profile.warmup_s * 1e6) * 1e-6, duration_s=iv.duration_s,
        offered_iops=offered, arrived_ios=log.arrived, completed_ios=log.completed, backlog_start=log.backlog_start,
        backlog_end=log.backlog_end, metrics=metrics, ci_notes=notes, busiest=log.busiest[0],
        busiest_utilization=log.busiest[1], saturated=log.busiest[2] and is_open,
    )


def _run_wide(run: ProfileRun, first: Mark, last: Mark, series: int = POOLED) -> dict[str, Metric]:
    """Run-wide metrics pooled over the measured intervals (values only: the load changes, so there
    is no steady-state interval to give; ``Result.summary`` says so): every I/O's, or one workload's
    (``series``; its CPU per I/O is the whole run's, as in ``WorkloadResult``)."""
    logs = [log for log in run.sets[series] if log.done]
    served = [b for log in logs for b in log.served]
    response = [b for log in logs for b in log.response]
    window_s = (last[0] - first[0]) * 1e-6
    measured = sum(b.ios for b in served)
    out: dict[str, Metric] = {}
    for key in METRIC_KEYS:
        if key == "cpu_us_per_io":
            everything = sum(log.completed for log in run.logs if log.done)
            value = (last[3] - first[3]) / everything if everything else math.nan
        elif key == "mean_outstanding_ios":
            area = last[4] - first[4] if series == POOLED else last[5][series - 1] - first[5][series - 1]
            value = area * 1e-6 / window_s if window_s > 0 else math.nan
        elif key in PERCENTILES:
            value = percentile(run.hists[series], PERCENTILES[key])
        elif key in ("iops", "read_iops", "write_iops", "mbps"):
            value = BATCH_METRICS[key](Batch(duration_s=window_s, ios=measured, reads=sum(b.reads for b in served),
                                             writes=sum(b.writes for b in served), bytes=sum(b.bytes for b in served)))
        else:
            total = sum(_slice_count(b, key) for b in response)
            pooled = Batch(ios=sum(b.ios for b in response), reads=sum(b.reads for b in response),
                           writes=sum(b.writes for b in response), latency_sum_us=sum(b.latency_sum_us for b in response),
                           read_latency_sum_us=sum(b.read_latency_sum_us for b in response),
                           write_latency_sum_us=sum(b.write_latency_sum_us for b in response))
            value = BATCH_METRICS[key](pooled) if total else math.nan
        out[key] = Metric(value=value, ci95=_NAN)
    return out


def _validity(run: ProfileRun) -> tuple[str, str]:
    reason = run.run.stop_reason
    missing = [log.index for log in run.logs if log.result is None]
    if reason.startswith("unstable"):
        return "unstable", f"{reason} (at {run.run.env.now / 1e6:g} s of the replay)"
    if missing:
        return "cut_short", (f"{reason}: the replay stopped at {run.run.env.now / 1e6:g} s of {run.end_us / 1e6:g} s; "
                             f"interval(s) {missing[0]}..{missing[-1]} not (fully) measured")
    short = [log.index for log in run.logs if log.result and log.arrived and "latency_p99_us" in log.result.ci_notes]
    saturated = [log.index for log in run.logs if log.result and log.result.saturated]
    notes = []
    if saturated:
        notes.append(f"interval(s) {', '.join(map(str, saturated[:10]))} saturate a station: their latency grows with their length")
    if short:
        notes.append(f"{len(short)} interval(s) too short for a p99 interval (first: {short[0]})")
    return "precise", "; ".join(notes)


def assemble_profile(run: ProfileRun, wall: float) -> Result:
    """The Result of a replayed profile: run-wide values, one IntervalResult per interval, the peak."""
    now = run.mark()
    first = run.window_start or now
    last = run.window_end or now
    if 0 <= run.current < len(run.logs):  # stopped inside an interval
        busiest = run._busiest(run.interval_mark, now)
        for series, logs in enumerate(run.sets):
            logs[run.current].backlog_end = run.outstanding(series)
            logs[run.current].busiest = busiest
    for logs in run.sets:
        for log in logs:
            if log.result is None and log.index < run.current:
                run._maybe_finish(log)
    utilization, busy = _occupancy(run, first, last)
    engine = run.run
    candidates = {m.name: utilization[m.name] for m in engine.model.meters if isinstance(m, Station) or m.waited}
    intervals = [log.result or _unreached(run, log) for log in run.logs]
    per_workload: dict[str, WorkloadResult] | None = None
    if run.mixed:
        per_workload = {}
        for w, (name, wl) in enumerate(run.original.named_workloads()):
            own = [log.result or _unreached(run, log) for log in run.sets[1 + w]]
            rate = workload_rate(wl) if w != run.index else _mean_rate(run.profile)
            per_workload[name] = WorkloadResult(
                kind=wl.kind, **_run_wide(run, first, last, 1 + w), offered_iops=rate if rate and rate > 0 else None,
                measured_ios=sum(log.completed for log in run.sets[1 + w]), intervals=own, peak_interval=peak_interval(own))
    validity, note = _validity(run)
    return Result(
        **_run_wide(run, first, last), utilization=utilization, busy=busy,
        bottleneck=max(candidates, key=lambda k: candidates[k]) if candidates else "none",
        stop_reason=engine.stop_reason, validity=validity, validity_note=note,  # type: ignore[arg-type]
        simulated_ios=engine.completed, measured_ios=sum(log.completed for log in run.logs), issued_ios=engine.issued,
        in_flight_ios=engine.outstanding, batches=sum(SLICES for log in run.logs if log.result is not None),
        simulated_seconds=engine.env.now * 1e-6, wall_seconds=wall, seed=run.original.run.seed, scenario=run.original,
        intervals=intervals, peak_interval=peak_interval(intervals), workloads=per_workload,
    )


def _mean_rate(profile: ProfileWorkload) -> float | None:
    """A profile's time-average arrival rate when every interval is open, else None."""
    if any(iv.rate_iops is None for iv in profile.intervals):
        return None
    return sum((iv.duration_s * (iv.rate_iops or 0.0) for iv in profile.intervals), 0.0) / profile.duration_s


def _unreached(run: ProfileRun, log: _IntervalLog) -> IntervalResult:
    """An interval the run did not finish (a budget or an unstable backlog stopped it)."""
    for s in range(SLICES):
        log.flush(s)
    result = run.interval_result(log)
    log.response = [replace(b, histogram=NO_HISTOGRAM) for b in log.response]
    note = f"not fully replayed: {run.run.stop_reason}"
    return result.model_copy(update={"ci_notes": {k: note for k in INTERVAL_METRICS},
                                     "metrics": {k: Metric(value=m.value, ci95=_NAN) for k, m in result.metrics.items()}})


def _occupancy(run: ProfileRun, first: Mark, last: Mark) -> tuple[dict[str, float], dict[str, float]]:
    """Utilization and busy fraction of every meter over the replay (warm-up and drain left out)."""
    window = last[0] - first[0]
    util: dict[str, float] = {}
    busy: dict[str, float] = {}
    for i, m in enumerate(run.run.model.meters):
        util[m.name] = min(1.0, (last[1][i] - first[1][i]) / (m.capacity * window)) if window > 0 else 0.0
        busy[m.name] = min(1.0, (last[2][i] - first[2][i]) / window) if window > 0 else 0.0
    return util, busy


def simulate_profile(scenario: Scenario) -> Result:
    """Replay ``scenario``'s profile workload with the DES (see the module docstring)."""
    return ProfileRun(scenario).replay()
