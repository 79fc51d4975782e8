"""Where a run's I/Os come from: a closed population of jobs x queue depth, or an open
Poisson (or bursty on/off Poisson) stream. The arrivals half of ``sim.des.engine.Run``.

A scenario with several workloads has one source per workload (``arrivals_of``); each I/O
carries its workload's index (``Job.workload``), which picks its shape (``sim.des.engine.Traffic``),
its volume (its placement) and its tally. A source only needs ``start()``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from models.faults import rebuild_sources
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, ProfileWorkload, Workload
from sim.des.components import READ, WRITE, Child, Ev, Hop, Job, JobFactory, Split, advance, schedule
from sim.des.rng import UnitSampler
from sim.route.elements import RebuildStream, VolumeSplit

if TYPE_CHECKING:
    from sim.des.run_state import RunState


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

    def reissue_event(self, event: Ev) -> None:
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

    def arrive(self, event: Ev) -> None:
        run = self.run
        epoch = event._value
        if run.stopped or epoch != self.epoch:
            return
        job = run.jobs.new()
        job.slot = -1
        job.workload = self.index
        run.issue(job)
        self.next_arrival(epoch)

    def toggle(self, event: Ev) -> None:
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
    if isinstance(wl, ProfileWorkload):
        raise TypeError("a profile workload is replayed by sim.des.profile, not by a steady arrival source")
    return OpenArrivals(run, wl, index)


class RebuildArrivals:
    """A rebuild in progress as a second source of I/O (md recovery, IBM i mirror resume).

    ``depth`` workers each run one rebuild unit at a time: read ``io_bytes`` from the unit's sources
    (``models.faults.rebuild_sources``: the surviving copy, or the rest of the stripe), then write them to
    the rebuilt member's replacement, through the same device routes as host I/O (queues, links, drives).
    A worker starts its next unit no sooner than ``depth x io_bytes / cap`` after the last one, so the
    rebuild never passes its cap; when host I/O slows the units, the rate falls below it (md keeps
    ``sync_io_depth`` rebuild I/Os in flight under load, MD_DEFAULTS.md). Units take the rebuilt members
    in turn and walk the stripes, so parity sources rotate. Completion times are kept to measure the rate.
    """

    def __init__(self, run: RunState, volume: VolumeSplit, stream: RebuildStream, routes: Callable[[int, int], Sequence[Hop]],
                 jobs: JobFactory):
        self.run = run
        self.volume = volume
        self.stream = stream
        self.routes = routes
        self.spacing_us = stream.depth * stream.io_bytes / stream.cap_bytes_per_s * 1e6
        self.units = 0
        self.done_at: list[float] = []
        self.split = Split(self.plan, jobs)
        self.route = (self.split, self.finished)

    def plan(self, job: Job) -> list[list[Child]]:
        v, s = self.volume, self.stream
        k = job.offset
        rebuilt = s.rebuilt[k % len(s.rebuilt)]
        stripe = (k // len(s.rebuilt)) % v.members
        n = s.io_bytes
        reads: list[Child] = [(self.routes(m, READ), n, READ, m) for m in rebuild_sources(v.layout, v.members, v.failed, rebuilt, stripe)]
        return [reads, [(self.routes(rebuilt, WRITE), n, WRITE, rebuilt)]]

    def launch(self, job: Job) -> None:
        if self.run.stopped:
            return
        job.offset = self.units
        self.units += 1
        job.t0 = self.run.env.now
        job.route = self.route
        job.step = -1
        advance(job)

    def relaunch(self, event: Ev) -> None:
        self.launch(event._value)

    def finished(self, job: Job) -> None:
        now = self.run.env.now
        self.done_at.append(now)
        wait = job.t0 + self.spacing_us - now
        if wait > 0.0:
            schedule(self.run.env, wait, job, self.relaunch)
        else:
            self.launch(job)

    def start(self) -> None:
        for w in range(self.stream.depth):
            job = Job()
            job.slot = -2
            schedule(self.run.env, w * self.spacing_us / self.stream.depth, job, self.relaunch)
