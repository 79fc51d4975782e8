"""Where a run's I/Os come from: a closed population of jobs x queue depth, or an open
Poisson (or bursty on/off Poisson) stream. The arrivals half of ``sim.engine.Run``.

A scenario with several workloads has one source per workload (``arrivals_of``); each I/O
carries its workload's index (``Job.workload``), which picks its shape (``sim.engine.Traffic``),
its volume (its placement) and its tally. A source only needs ``start()``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import simpy

from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, Workload
from sim.components import Job, schedule
from sim.rng import UnitSampler

if TYPE_CHECKING:
    from sim.run_state import RunState


class ClosedArrivals:
    """``jobs`` x ``queue_depth`` I/O slots; a completed I/O is reissued after the think time
    (plus the application's time per I/O)."""

    def __init__(self, run: RunState, wl: ClosedWorkload, index: int = 0):
        self.run = run
        self.wl = wl
        self.index = index
        self.think = wl.think_time_us
        self.app = wl.app_us_per_io
        self.think_unit: UnitSampler = run.streams.unit("exponential" if wl.think_distribution == "exponential" else "deterministic")

    def reissue_event(self, event: simpy.Event) -> None:
        if not self.run.stopped:
            self.run.issue(event._value)

    def reissue_after_think(self, job: Job) -> None:
        run = self.run
        if not run.stopped:
            schedule(run.env, self.app + self.think * self.think_unit(), job, self.reissue_event)

    def reissue_now(self, job: Job) -> None:
        run = self.run
        if not run.stopped:
            run.issue(job)

    def start(self) -> None:
        run = self.run
        wl = self.wl
        run.set_completer(self.index, self.reissue_after_think if (self.think > 0 or self.app > 0) else self.reissue_now)
        for j in range(wl.jobs):
            for _ in range(wl.queue_depth):
                job = Job()
                job.slot = j
                job.workload = self.index
                run.issue(job)


class OpenArrivals:
    """Poisson arrivals; for bursty workloads the rate switches at exponential on/off epochs.

    A rate switch restarts the arrival chain (exact, as exponential gaps are memoryless);
    an arrival scheduled under an older epoch is dropped.
    """

    def __init__(self, run: RunState, wl: OpenWorkload | BurstyWorkload, index: int = 0):
        self.run = run
        self.wl = wl
        self.index = index
        self.epoch = 0
        self.rate = wl.on_rate_iops if isinstance(wl, BurstyWorkload) else wl.rate_iops
        self.gap_unit: UnitSampler = run.streams.unit("exponential")
        self.period_unit: UnitSampler | None = run.streams.unit("exponential") if isinstance(wl, BurstyWorkload) else None

    def next_arrival(self, epoch: int) -> None:
        if self.rate > 0:
            schedule(self.run.env, 1e6 / self.rate * self.gap_unit(), epoch, self.arrive)

    def arrive(self, event: simpy.Event) -> None:
        run = self.run
        epoch = event._value
        if run.stopped or epoch != self.epoch:
            return
        job = run.jobs.new()
        job.slot = -1
        job.workload = self.index
        run.issue(job)
        self.next_arrival(epoch)

    def toggle(self, event: simpy.Event) -> None:
        wl = self.wl
        assert isinstance(wl, BurstyWorkload)
        if self.run.stopped:
            return
        on = not event._value
        self.rate = wl.on_rate_iops if on else wl.off_rate_iops
        self.epoch += 1
        self.next_arrival(self.epoch)
        mean_ms = wl.mean_on_ms if on else wl.mean_off_ms
        assert self.period_unit is not None
        schedule(self.run.env, mean_ms * 1e3 * self.period_unit(), on, self.toggle)

    def start(self) -> None:
        run = self.run
        wl = self.wl
        if isinstance(wl, BurstyWorkload):
            assert self.period_unit is not None
            schedule(run.env, wl.mean_on_ms * 1e3 * self.period_unit(), True, self.toggle)
        self.next_arrival(0)


class Source(Protocol):
    """An arrival source: it starts issuing its workload's I/Os when the run starts."""

    def start(self) -> None: ...


def arrivals_of(run: RunState, wl: Workload, index: int) -> Source:
    """The arrival source of workload ``index`` of the run's scenario (by its kind)."""
    if isinstance(wl, ClosedWorkload):
        return ClosedArrivals(run, wl, index)
    return OpenArrivals(run, wl, index)
