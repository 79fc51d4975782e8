"""Run a scenario: generate the workload, walk every I/O through the model, stop on precision.

The run discards ``run.warmup_ios`` completions, then cuts the measured window into
batches of completions. Batches start at ``run.batch_ios`` completions (or 1,000)
and, when 64 have accumulated, adjacent pairs are merged, so batches grow with the run
and stay long compared with the system's correlation time. After ``run.min_batches``
batches the run stops once the relative 95% half-width of both IOPS and mean latency is
at most ``run.target_rel_ci`` and still is after a further quarter of the run
("precision reached"; the confirmation counters sequential-stopping bias), or when ``run.max_ios``
completions or ``run.max_wall_s`` seconds are spent ("budget: ..."). Leading batches
that still drift (a write cache filling up, a backlog building) are dropped by MSER
truncation before any estimate is made. An open workload
whose backlog keeps growing past what any queue could hold stops as "unstable".
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate

import numpy as np
import simpy

from models.result import METRIC_KEYS, Metric, Result
from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload
from sim.components import READ, WRITE, Job, JobFactory, Station, advance, schedule
from sim.model import Model, build
from sim.rng import Streams, UnitSampler
from sim.stats import BATCH_METRICS, Batch, estimate, histogram, mser_truncation
from sim.volume import STREAM_ALIGN_BYTES

MAX_BATCHES = 32
CONFIRM_FACTOR = 1.25
DEFAULT_BATCH_IOS = 1_000
UNSTABLE_BACKLOG = 2_000_000
STREAMS_SPREAD = 64
"""Sequential streams start at one of this many evenly spaced places in the volume."""


def stream_spacing(capacity: int) -> int:
    """Distance between the places sequential streams start: capacity / 64, rounded down to
    1 MiB (to 4 KiB on volumes under 64 MiB)."""
    step = capacity // STREAMS_SPREAD
    align = STREAM_ALIGN_BYTES if step >= STREAM_ALIGN_BYTES else 4096
    return step // align * align


def default_batch_ios(scenario: Scenario) -> int:
    """Completions per batch at the start of a run: 1,000, or 8 per I/O slot of a closed workload.

    A closed system's completions are correlated over about one cycle of its N slots, so
    batches of several N completions keep the batch means close to independent. A bursty
    workload's completions are correlated over its on/off cycle, so a batch starts at the
    I/Os of two mean cycles (the batches then grow by merging).
    """
    wl = scenario.workload
    if isinstance(wl, ClosedWorkload):
        return min(100_000, max(DEFAULT_BATCH_IOS, 8 * wl.jobs * wl.queue_depth))
    if isinstance(wl, BurstyWorkload):
        cycle_ios = wl.mean_rate_iops * (wl.mean_on_ms + wl.mean_off_ms) / 1e3
        return int(min(1_000_000, max(DEFAULT_BATCH_IOS, 2 * cycle_ios)))
    return DEFAULT_BATCH_IOS


class _SizeChooser:
    """Draws a transfer size for reads or writes from the workload's size mix."""

    def __init__(self, table: list[tuple[int, float]], unit: UnitSampler):
        self.sizes = [b for b, _ in table]
        self.cum = list(accumulate(p for _, p in table))
        self.cum[-1] = 1.0
        self.fixed = self.sizes[0] if len(self.sizes) == 1 else 0
        self.unit = unit

    def __call__(self) -> int:
        if self.fixed:
            return self.fixed
        return self.sizes[bisect_left(self.cum, self.unit())]


class Run:
    """One simulation of one scenario (use ``simulate``)."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        settings = scenario.run
        self.env = simpy.Environment()
        self.streams = Streams(settings.seed)
        self.jobs = JobFactory()
        self.model: Model = build(self.env, scenario, self.streams, self.jobs)
        self.route = (*self.model.route, self._complete)
        wl = scenario.workload
        self.read_fraction = wl.read_fraction
        self.op_unit = self.streams.uniform()
        self.addr_unit = self.streams.uniform()
        self.read_size = _SizeChooser(wl.size_table("read"), self.streams.uniform()) if wl.read_fraction > 0 else None
        self.write_size = _SizeChooser(wl.size_table("write"), self.streams.uniform()) if wl.read_fraction < 1 else None
        self.sequential = wl.access == "sequential"
        self.capacity = max(4096, self.model.capacity_bytes)
        self.stream_spacing = stream_spacing(self.capacity) if self.sequential else 0
        self.blocks = self.capacity // 4096
        self.cursors: dict[int, int] = {}
        # counters
        self.issued = 0
        self.completed = 0
        self.on_complete: Callable[[Job], None] = self._recycle
        """What a completed I/O does next (the workload's generator replaces it: reissue, recycle)."""
        self.outstanding = 0
        self.out_area = 0.0
        self.out_t = 0.0
        self.warm = settings.warmup_ios == 0
        self.warmup_ios = settings.warmup_ios
        self.batch_target = settings.batch_ios or default_batch_ios(scenario)
        self.batch_fixed = settings.batch_ios is not None
        self.batches: list[Batch] = []
        self.marks: list[tuple[float, list[float], list[float]]] = []
        self._cut: tuple[tuple[int, int], int] = ((-1, -1), 0)
        self._precision_met_at: int | None = None
        self.stop_reason = ""
        self.stop_event = self.env.event()
        self.stopped = False
        self.wall_start = 0.0
        self._new_batch()

    # -- batches -----------------------------------------------------------------
    def _new_batch(self) -> None:
        self.b_ios = 0
        self.b_rlats: list[float] = []
        self.b_wlats: list[float] = []
        self.b_bytes = 0
        self.b_start = self.env.now
        self.b_out_area = self._out_area_now()
        self.b_cpu = self.model.cpu.unit_time() if self.model.cpu else 0.0
        self.marks.append(self._meter_mark())

    def _meter_mark(self) -> tuple[float, list[float], list[float]]:
        """(time, occupancy area, busy area) of every meter: taken at each batch boundary."""
        meters = self.model.meters
        return self.env.now, [m.unit_time() for m in meters], [m.busy_area for m in meters]

    def _out_area_now(self) -> float:
        now = self.env.now
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        return self.out_area

    def _close_batch(self, check: bool = True) -> None:
        now = self.env.now
        cpu_now = self.model.cpu.unit_time() if self.model.cpu else 0.0
        reads = np.asarray(self.b_rlats)
        writes = np.asarray(self.b_wlats)
        self.batches.append(Batch(
            duration_s=(now - self.b_start) * 1e-6,
            ios=self.b_ios, reads=len(reads), writes=len(writes),
            latency_sum_us=float(reads.sum() + writes.sum()),
            read_latency_sum_us=float(reads.sum()), write_latency_sum_us=float(writes.sum()),
            bytes=self.b_bytes, cpu_busy_us=cpu_now - self.b_cpu,
            outstanding_area_s=(self._out_area_now() - self.b_out_area) * 1e-6,
            histogram=histogram(reads) + histogram(writes),
        ))
        if len(self.batches) >= MAX_BATCHES and not self.batch_fixed:
            self.batches = [a.merged(b) for a, b in zip(self.batches[::2], self.batches[1::2], strict=True)]
            self.marks = self.marks[::2]
            self.batch_target *= 2
        if check:
            self._check_stop()
        self._new_batch()

    def truncation(self) -> int:
        """Leading batches to drop: MSER warm-up truncation on the IOPS and latency batch means."""
        key = (len(self.batches), self.batch_target)
        if self._cut[0] != key:
            cut = max(mser_truncation([BATCH_METRICS[m](b) for b in self.batches]) for m in ("iops", "latency_mean_us"))
            self._cut = (key, cut)
        return self._cut[1]

    def steady_batches(self) -> list[Batch]:
        return self.batches[self.truncation():]

    def _occupancy(self) -> tuple[dict[str, float], dict[str, float]]:
        """Utilization and busy fraction of every meter over the steady batches."""
        cut = self.truncation()
        t0, area0, busy0 = self.marks[cut]
        t1, area1, busy1 = self.marks[len(self.batches)] if len(self.marks) > len(self.batches) else self._meter_mark()
        window = t1 - t0
        util: dict[str, float] = {}
        busy: dict[str, float] = {}
        for i, m in enumerate(self.model.meters):
            util[m.name] = min(1.0, (area1[i] - area0[i]) / (m.capacity * window)) if window > 0 else 0.0
            busy[m.name] = min(1.0, (busy1[i] - busy0[i]) / window) if window > 0 else 0.0
        return util, busy

    def _check_stop(self) -> None:
        s = self.scenario.run
        steady = self.steady_batches()
        if len(steady) >= s.min_batches:
            rel = []
            for key in ("iops", "latency_mean_us"):
                v, lo, hi = estimate(steady, key)
                rel.append((hi - lo) / 2 / abs(v) if v else math.inf)
            if max(rel) <= s.target_rel_ci:
                # Stopping the first time the interval looks narrow enough favours runs whose
                # variance estimate happens to be low (sequential-stopping bias): confirm the
                # precision after a further quarter of the run before stopping.
                if self._precision_met_at is None:
                    self._precision_met_at = self.completed
                elif self.completed >= CONFIRM_FACTOR * self._precision_met_at:
                    self._stop(f"precision reached: relative 95% half-width <= {s.target_rel_ci:g}")
                    return
            else:
                self._precision_met_at = None
        if self.completed >= s.max_ios:
            self._stop(f"budget: max_ios={s.max_ios} completions")
        elif time.perf_counter() - self.wall_start >= s.max_wall_s:
            self._stop(f"budget: max_wall_s={s.max_wall_s:g} s")

    def _stop(self, reason: str) -> None:
        if not self.stopped:
            self.stopped = True
            self.stop_reason = reason
            self.stop_event.succeed()

    # -- issuing and completing ----------------------------------------------------
    def _issue(self, job: Job) -> None:
        rf = self.read_fraction
        if rf >= 1.0 or (rf > 0.0 and self.op_unit() < rf):
            job.op = READ
            size = self.read_size()  # type: ignore[misc]
        else:
            job.op = WRITE
            size = self.write_size()  # type: ignore[misc]
        job.size = size
        if self.sequential:
            key = job.slot
            start = self.cursors.get(key)
            if start is None:
                start = (abs(key) * 7919 % STREAMS_SPREAD) * self.stream_spacing
            if start + size > self.capacity:
                start = 0
            job.offset = start
            self.cursors[key] = start + size
        elif self.model.uses_offsets:
            off = int(self.addr_unit() * self.blocks) * 4096
            job.offset = off if off + size <= self.capacity else max(0, self.capacity - size)
        now = self.env._now
        job.t0 = now
        job.route = self.route
        job.step = -1
        self.issued += 1
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding += 1
        if self.outstanding > UNSTABLE_BACKLOG:
            self._stop(f"unstable: more than {UNSTABLE_BACKLOG} I/Os outstanding; the offered load exceeds what the path can serve")
        advance(job)

    def _complete(self, job: Job) -> None:
        now = self.env._now
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding -= 1
        self.completed += 1
        if self.warm:
            if job.op == READ:
                self.b_rlats.append(now - job.t0)
            else:
                self.b_wlats.append(now - job.t0)
            self.b_bytes += job.size
            self.b_ios += 1
            if self.b_ios >= self.batch_target and not self.stopped:
                self._close_batch()
        elif self.completed >= self.warmup_ios:
            self._end_warmup()
        self.on_complete(job)

    def _end_warmup(self) -> None:
        self.warm = True
        for meter in self.model.meters:
            meter.reset()
        self.marks = []
        self._new_batch()

    # -- workload generators ----------------------------------------------------------
    def _recycle(self, job: Job) -> None:
        self.jobs.recycle(job)

    def _start_closed(self, wl: ClosedWorkload) -> None:
        think = wl.think_time_us
        app = wl.app_us_per_io
        think_unit = self.streams.unit("exponential" if wl.think_distribution == "exponential" else "deterministic")
        env = self.env

        def reissue_event(event: simpy.Event) -> None:
            if not self.stopped:
                self._issue(event._value)

        if think > 0 or app > 0:
            def on_complete(job: Job) -> None:
                if not self.stopped:
                    schedule(env, app + think * think_unit(), job, reissue_event)
        else:
            def on_complete(job: Job) -> None:
                if not self.stopped:
                    self._issue(job)

        self.on_complete = on_complete
        for j in range(wl.jobs):
            for _ in range(wl.queue_depth):
                job = Job()
                job.slot = j
                self._issue(job)

    def _start_open(self, wl: OpenWorkload | BurstyWorkload) -> None:
        """Poisson arrivals; for bursty workloads the rate switches at exponential on/off epochs.

        A rate switch restarts the arrival chain (exact, as exponential gaps are memoryless);
        an arrival scheduled under an older epoch is dropped.
        """
        env = self.env
        gap_unit = self.streams.unit("exponential")
        jobs = self.jobs
        state = {"epoch": 0}
        rate = [wl.on_rate_iops if isinstance(wl, BurstyWorkload) else wl.rate_iops]

        def next_arrival(epoch: int) -> None:
            if rate[0] > 0:
                schedule(env, 1e6 / rate[0] * gap_unit(), epoch, arrive)

        def arrive(event: simpy.Event) -> None:
            epoch = event._value
            if self.stopped or epoch != state["epoch"]:
                return
            job = jobs.new()
            job.slot = -1
            self._issue(job)
            next_arrival(epoch)

        if isinstance(wl, BurstyWorkload):
            period_unit = self.streams.unit("exponential")

            def toggle(event: simpy.Event) -> None:
                if self.stopped:
                    return
                on = not event._value
                rate[0] = wl.on_rate_iops if on else wl.off_rate_iops
                state["epoch"] += 1
                next_arrival(state["epoch"])
                mean_ms = wl.mean_on_ms if on else wl.mean_off_ms
                schedule(env, mean_ms * 1e3 * period_unit(), on, toggle)

            schedule(env, wl.mean_on_ms * 1e3 * period_unit(), True, toggle)
        next_arrival(0)

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> Result:
        wl = self.scenario.workload
        self.wall_start = time.perf_counter()
        if isinstance(wl, ClosedWorkload):
            self._start_closed(wl)
        else:
            self._start_open(wl)
        try:
            self.env.run(until=self.stop_event)
        except RuntimeError:
            # no events left before the stop event: nothing can complete any more
            self.stop_reason = self.stop_reason or "stalled: no I/O can make progress"
        wall = time.perf_counter() - self.wall_start
        return self._result(wall)

    def _result(self, wall: float) -> Result:
        if not self.batches:
            if self.b_ios:
                self.stopped = True
                self._close_batch(check=False)
            else:
                raise RuntimeError(
                    f"the run ended ({self.stop_reason or 'no completions'}) before any I/O was measured; "
                    f"raise run.max_ios / run.max_wall_s or lower run.warmup_ios"
                )
        batches = self.steady_batches()
        metrics = {}
        for key in METRIC_KEYS:
            v, lo, hi = estimate(batches, key)
            metrics[key] = Metric(value=v, ci95=(lo, hi))
        utilization, busy = self._occupancy()
        # stations always compete; a concurrency limit only if an I/O ever waited for it
        candidates = {m.name: utilization[m.name] for m in self.model.meters
                      if isinstance(m, Station) or m.waited}
        bottleneck = max(candidates, key=lambda k: candidates[k]) if candidates else "none"
        return Result(
            **metrics,
            utilization=utilization,
            busy=busy,
            bottleneck=bottleneck,
            stop_reason=self.stop_reason,
            validity="precise" if self.stop_reason.startswith("precision") else "cut_short",
            validity_note="" if self.stop_reason.startswith("precision") else self.stop_reason,
            simulated_ios=self.completed,
            measured_ios=sum(b.ios for b in batches),
            issued_ios=self.issued,
            in_flight_ios=self.outstanding,
            batches=len(batches),
            simulated_seconds=self.env.now * 1e-6,
            wall_seconds=wall,
            seed=self.scenario.run.seed,
            scenario=self.scenario,
        )

def simulate(scenario: Scenario) -> Result:
    """Simulate ``scenario`` with the discrete-event engine and return its Result."""
    return Run(scenario).run()
