"""Where a run's I/Os come from: a closed population of jobs x queue depth, or an open
Poisson (or bursty on/off Poisson) stream. The arrivals half of ``sim.des.engine.Run``.

A scenario with several workloads has one source per workload (``arrivals_of``); each I/O
carries its workload's index (``Job.workload``), which picks its shape (``sim.des.engine.Traffic``),
its volume (its placement) and its tally. A source only needs ``start()``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from models.faults import rebuild_sources, volume_rebuild_sources
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

    Each unit reads ``io_bytes`` from its sources (``models.faults.rebuild_sources``: the surviving copy, or
    the rest of the stripe), then writes them to the rebuilt member's replacement, through the same device
    routes as host I/O (queues, links, drives). Units take the rebuilt members in turn and walk the stripes,
    so parity sources rotate; under placement a member is rebuilt within the workloads' volumes that hold it
    (``RebuildStream.volumes``: their layout over their own members), taking them in turn. Completion times are kept to measure the rate.

    Units are issued as md_do_sync (drivers/md/md.c) issues sync I/O: back to back, and once per window of
    ``window_units`` md looks. Above the floor (speed_limit_min; the rate so far) with host I/O issued or in
    flight since its last look (``is_mddev_idle``), md waits until every unit in flight has finished before
    it issues more: always ("legacy"), or once ``sync_io_depth`` units are in flight ("sync_io_depth").
    Otherwise (an idle array, below the floor, or ``throttle`` "none") at most ``depth`` units run at once.
    The cap (speed_limit_max, or an explicit rate) is a token bucket of one unit per ``io_bytes / cap``
    holding up to a burst of max(depth, window) units: the long-run rate never passes it, a window still
    leaves at once.
    """

    def __init__(self, run: RunState, volume: VolumeSplit, stream: RebuildStream, routes: Callable[[int, int], Sequence[Hop]],
                 jobs: JobFactory):
        self.run = run
        self.volume = volume
        self.stream = stream
        self.routes = routes
        self.unit_us = stream.io_bytes / stream.cap_bytes_per_s * 1e6
        self.burst_us = (max(stream.depth, stream.window_units) - 1) * self.unit_us
        self.tat = 0.0
        """The cap's theoretical arrival time (GCRA): a unit may start once ``tat - burst_us`` is reached."""
        self.units = 0
        self.in_flight = 0
        self.last_check = 0
        self.draining = False
        self.timer = False
        self.t0 = 0.0
        self.host_seen = -1
        self.free: list[Job] = []
        self.done_at: list[float] = []
        self.split = Split(self.plan, jobs)
        self.route = (self.split, self.finished)

    def plan(self, job: Job) -> list[list[Child]]:
        v, s = self.volume, self.stream
        k = job.offset
        rebuilt = s.rebuilt[k % len(s.rebuilt)]
        turn = k // len(s.rebuilt)
        if s.volumes:  # the volumes that hold the member in turn, then their stripes
            holders = s.volumes[k % len(s.rebuilt)]
            volume = holders[turn % len(holders)]
            sources = volume_rebuild_sources(v.layout, v.failed, rebuilt, turn // len(holders), volume)
        else:
            sources = rebuild_sources(v.layout, v.members, v.failed, rebuilt, turn % v.members)
        n = s.io_bytes
        reads: list[Child] = [(self.routes(m, READ), n, READ, m) for m in sources]
        return [reads, [(self.routes(rebuilt, WRITE), n, WRITE, rebuilt)]]

    def launch(self, now: float) -> None:
        job = self.free.pop() if self.free else Job()
        job.slot = -2
        job.offset = self.units
        self.units += 1
        self.in_flight += 1
        self.tat = max(self.tat, now) + self.unit_us
        job.t0 = now
        job.route = self.route
        job.step = -1
        advance(job)

    def busy(self) -> bool:
        """md's ``is_mddev_idle`` negated: host I/O issued since the last look, or still in flight."""
        run = self.run
        seen, self.host_seen = self.host_seen, run.issued
        return run.issued != seen or run.outstanding > 0

    def throttled(self, now: float) -> bool:
        """md's look once per window: wait for the units in flight to drain before issuing more?"""
        s = self.stream
        if s.throttle == "none" or self.in_flight == 0:
            return False
        elapsed = now - self.t0
        if elapsed > 0 and len(self.done_at) * s.io_bytes / elapsed * 1e6 <= s.floor_bytes_per_s:
            return False  # below speed_limit_min: md does not hold back
        if s.throttle == "sync_io_depth" and self.in_flight < s.sync_io_depth:
            return False
        return self.busy()

    def pump(self) -> None:
        run, s = self.run, self.stream
        while not run.stopped and not self.draining and self.in_flight < s.depth:
            now = run.env.now
            start = self.tat - self.burst_us
            if start > now:  # the cap
                if not self.timer:
                    self.timer = True
                    schedule(run.env, start - now, None, self.resume)
                return
            self.launch(now)
            if self.units - self.last_check < s.window_units:
                continue
            self.last_check = self.units
            if self.throttled(now):
                self.draining = True

    def resume(self, event: Ev) -> None:
        self.timer = False
        self.pump()

    def finished(self, job: Job) -> None:
        self.done_at.append(self.run.env.now)
        self.in_flight -= 1
        self.free.append(job)
        if self.draining and self.in_flight == 0:
            self.draining = False
        self.pump()

    def start(self) -> None:
        self.t0 = self.run.env.now
        self.pump()
