"""Run a scenario: generate the workload, walk every I/O through the model, stop on precision.

A run has three parts, each in its own module: where the I/Os come from (``sim.des.arrivals``:
a closed population or an open Poisson / bursty stream), the measured window and when to stop
(``sim.des.batching``: warm-up, batch means, MSER truncation, the precision rule), and the Result
made from it (``sim.des.assembly``). ``Run`` here wires them to the model and walks each I/O:
it draws the operation, size and address, sends the I/O down the route and counts it back.

The run stops when the precision rule is met, or when ``run.max_ios`` completions or
``run.max_wall_s`` seconds are spent ("budget: ..."). An open workload whose backlog keeps
growing past what any queue could hold stops as "unstable", and so does one whose busiest resource
is offered its capacity or whose I/Os in flight climb across the batches, once that has held for a
quarter of the run (``sim.des.batching.BatchMeans.overload``). Near capacity the precision rule waits
for the queue's relaxation time (``sim.des.batching``).
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate

import simpy
from simpy.core import StopSimulation
from simpy.events import Event

from models.result import Result
from models.scenario import Scenario
from models.workload import ProfileWorkload, Workload
from sim.des.arrivals import RebuildArrivals, arrivals_of
from sim.des.assembly import assemble
from sim.des.batching import BatchMeans
from sim.des.batching import default_batch_ios as default_batch_ios  # re-exported
from sim.des.components import READ, WRITE, Job, JobFactory, advance, clock_of
from sim.des.environment import Environment
from sim.des.model import Model, build
from sim.des.rng import Streams, UnitSampler
from sim.des.stats import FLUSH_MASK, WorkloadTally
from sim.route.volume import STREAM_ALIGN_BYTES

UNSTABLE_BACKLOG = 200_000
"""I/Os outstanding at which an open workload is stopped as unstable: far beyond any real queue
(64K NVMe queues x 64K entries are never all full), and it bounds the run's memory (~100 MB)."""
WALL_CHECK_MASK = 1023
"""The clock is read every 1,024 completions (about a millisecond of wall time)."""
WALL_BUDGET_REASON = "budget: max_wall_s"
STREAMS_SPREAD = 64
"""Sequential streams start at one of this many evenly spaced places in the volume."""


def stream_spacing(capacity: int) -> int:
    """Distance between the places sequential streams start: capacity / 64, rounded down to
    1 MiB (to 4 KiB on volumes under 64 MiB)."""
    step = capacity // STREAMS_SPREAD
    align = STREAM_ALIGN_BYTES if step >= STREAM_ALIGN_BYTES else 4096
    return step // align * align


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


class Traffic:
    """What one workload's I/Os look like: its read fraction, size mix, access pattern and the
    address space it uses (its placement's volume), with its own random streams and stream cursors."""

    def __init__(self, streams: Streams, wl: Workload, capacity: int, uses_offsets: bool):
        self.read_fraction = wl.read_fraction
        self.op_unit = streams.uniform()
        self.addr_unit = streams.uniform()
        self.read_size = _SizeChooser(wl.size_table("read"), streams.uniform()) if wl.read_fraction > 0 else None
        self.write_size = _SizeChooser(wl.size_table("write"), streams.uniform()) if wl.read_fraction < 1 else None
        self.sequential = wl.access == "sequential"
        self.capacity = max(4096, capacity)
        self.stream_spacing = stream_spacing(self.capacity) if self.sequential else 0
        self.blocks = self.capacity // 4096
        self.cursors: dict[int, int] = {}
        self.uses_offsets = uses_offsets

    def shape(self, job: Job) -> None:
        """Draw ``job``'s operation, size and (where the volume reads it) its address."""
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
        elif self.uses_offsets:
            off = int(self.addr_unit() * self.blocks) * 4096
            job.offset = off if off + size <= self.capacity else max(0, self.capacity - size)


class Run:
    """One simulation of one scenario (use ``simulate``)."""

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        settings = scenario.run
        self.env: simpy.Environment = Environment()
        self.clock = clock_of(self.env)
        self.streams = Streams(settings.seed)
        self.jobs = JobFactory()
        self.model: Model = build(self.env, scenario, self.streams, self.jobs)
        self.route = (*self.model.route, self.complete)
        workloads = scenario.all_workloads()
        capacity = self.model.workload_capacity or [self.model.capacity_bytes] * len(workloads)
        self.traffic = [Traffic(self.streams, wl, capacity[i], self.model.uses_offsets) for i, wl in enumerate(workloads)]
        """Each workload's I/O shape, by the index an I/O carries (``Job.workload``)."""
        self.first = self.traffic[0]
        self.per_workload = scenario.consolidated
        """Whether completions are also counted per workload (a scenario with a ``workloads`` list)."""
        self.tallies: list[WorkloadTally] = [WorkloadTally() for _ in workloads] if self.per_workload else []
        self.completers: list[Callable[[Job], None]] = [self._recycle for _ in workloads]
        # counters
        self.issued = 0
        self.completed = 0
        self.on_complete: Callable[[Job], None] = self._recycle
        """What a completed I/O does next (the workload's generator replaces it: reissue, recycle)."""
        self.outstanding = 0
        self.out_area = 0.0
        self.out_t = 0.0
        self.max_ios = settings.max_ios
        self.stop_reason = ""
        self.stop_event = self.env.event()
        self.stopped = False
        self.wall_start = 0.0
        self.batching = BatchMeans(self)
        self.rebuild: RebuildArrivals | None = None
        """A rebuild in progress (the scenario's ``faults.rebuild``): a second source of device I/O."""
        self.pause_min_batches = 0
        """Above 0 (``ScreenedRun``): the batch means also follow the precision rule of a run with this many batches at
        least (``pause_scenario``); when it is met, that run's Result is taken (``paused``) and the run pauses."""
        self.pause_scenario: Scenario | None = None
        self.paused: Result | None = None
        self.paused_at = 0.0

    def set_completer(self, index: int, completer: Callable[[Job], None]) -> None:
        """What a completed I/O of workload ``index`` does next (its arrivals' reissue, or recycling)."""
        if len(self.traffic) == 1:
            self.on_complete = completer
            return
        self.completers[index] = completer
        self.on_complete = self._dispatch

    def _dispatch(self, job: Job) -> None:
        self.completers[job.workload](job)

    def out_area_now(self) -> float:
        """The time integral of the I/Os outstanding, brought up to now."""
        now = self.clock.now
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        return self.out_area

    def check_budgets(self) -> None:
        """Stop when ``run.max_ios`` completions or ``run.max_wall_s`` seconds are spent. Called on
        every completion for the I/O budget and every ``WALL_CHECK_MASK + 1`` completions for the
        clock, in the warm-up as in the batches; the reason says how many I/Os were simulated."""
        s = self.scenario.run
        if self.completed >= s.max_ios:
            self.stop(f"budget: max_ios={s.max_ios} completions reached ({self.completed:,} I/Os simulated)")
        elif time.perf_counter() - self.wall_start >= s.max_wall_s:
            self.stop(f"{WALL_BUDGET_REASON}={s.max_wall_s:g} s reached after {self.completed:,} I/Os")

    def pause(self, reason: str) -> None:
        """The pause rule (``pause_min_batches``) is met at this batch boundary: take the Result the run of
        ``pause_scenario`` gives when it stops here for ``reason``, and leave ``env.run`` once the events due now and
        queued before this one are done. Nothing of the run changes: it goes on (``advance``) as if never paused."""
        assert self.pause_scenario is not None
        self.pause_min_batches = 0
        scenario = self.scenario
        self.scenario, self.stop_reason = self.pause_scenario, reason
        try:
            self.paused = assemble(self, self.batching, time.perf_counter() - self.wall_start)
        finally:
            self.scenario, self.stop_reason = scenario, ""
        self.paused_at = time.perf_counter()
        # one more event (its queue id only moves the later events' ids up by one: their order is the same)
        event = self.env.event()
        event.callbacks.append(StopSimulation.callback)  # type: ignore[union-attr]
        event.succeed()

    def stop(self, reason: str) -> None:
        if not self.stopped:
            self.stopped = True
            self.stop_reason = reason
            self.stop_event.succeed()

    # -- issuing and completing ----------------------------------------------------
    def issue(self, job: Job) -> None:
        self.traffic[job.workload].shape(job)
        now = self.clock.now
        job.t0 = now
        job.route = self.route
        job.step = -1
        self.issued += 1
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding += 1
        if self.per_workload:
            self.tallies[job.workload].issued(now)
        if self.outstanding > UNSTABLE_BACKLOG:
            self.stop(f"unstable: more than {UNSTABLE_BACKLOG} I/Os outstanding; the offered load exceeds what the path can serve")
        elif not self.issued & WALL_CHECK_MASK and not self.stopped:
            self.check_budgets()  # the clock also runs while nothing completes
        advance(job)

    def complete(self, job: Job) -> None:
        now = self.clock.now
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding -= 1
        self.completed += 1
        b = self.batching
        if self.per_workload:
            self.tallies[job.workload].completed(job, now, b.warm)
        if b.warm:
            if job.op == READ:
                b.b_rlats.append(now - job.t0)
            else:
                b.b_wlats.append(now - job.t0)
            b.b_bytes += job.size
            b.b_ios += 1
            if b.b_ios >= b.batch_target and not self.stopped:
                b.close_batch()
            elif not b.b_ios & FLUSH_MASK:
                b.flush()
        elif self.completed >= b.warmup_ios and self.completed < self.max_ios:
            b.end_warmup()  # (a budget spent by the warm-up ends the run in it: its occupancy is all there is)
        if not self.stopped and (self.completed >= self.max_ios or not self.completed & WALL_CHECK_MASK):
            self.check_budgets()
        self.on_complete(job)

    def _recycle(self, job: Job) -> None:
        self.jobs.recycle(job)

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> Result:
        self.start()
        self.advance()
        return self.result()

    def start(self) -> None:
        """Start the arrival sources (and a rebuild) and the wall clock."""
        wl = self.scenario.workload
        assert not isinstance(wl, ProfileWorkload), "a profile is replayed by sim.des.profile.ProfileRun"
        self.wall_start = time.perf_counter()
        sources = [arrivals_of(self, wl, i) for i, wl in enumerate(self.scenario.all_workloads())]
        for source in sources:
            source.start()
        volume, routes = self.model.volume, self.model.device_routes
        if volume is not None and volume.rebuild is not None and routes is not None:
            self.rebuild = RebuildArrivals(self, volume, volume.rebuild, routes, self.jobs)
            self.rebuild.start()

    def advance(self) -> None:
        """Run the events until the run stops (or pauses: ``pause``)."""
        if self.stop_event.processed:
            return
        try:
            run_until(self.env, self.stop_event)
        except RuntimeError:
            # no events left before the stop event: nothing can complete any more
            self.stop_reason = self.stop_reason or "stalled: no I/O can make progress"

    def result(self) -> Result:
        """The Result of the stopped run."""
        return assemble(self, self.batching, time.perf_counter() - self.wall_start)


def run_until(env: simpy.Environment, until: Event) -> None:
    """``env.run(until=until)``: the same events in the same order, through the same queue, with the same ends (a
    ``StopSimulation`` from a callback, ``until``'s among them; a failed event nobody defused; no event left), but
    the loop is compiled with the engine and processes the engine's own events (nearly all) itself
    (``Clock.fire_first``); a SimPy event goes through ``Environment.step`` (SimPy's own loop is interpreted Python:
    a method call, a ``try`` and a tuple per event). An ``env.step`` shadowed on the instance (a counting wrapper,
    ``bench.events``) is honoured by SimPy's own loop."""
    if "step" in vars(env):
        env.run(until=until)
        return
    if until.callbacks is None:
        return  # already processed
    until.callbacks.append(StopSimulation.callback)
    queue = env._queue
    clock = clock_of(env)
    events = clock.events
    try:
        while True:
            if events and (not queue or clock.first_is_mine(queue[0])):
                clock.fire_first()  # the engine's own event (nearly all): a compiled heap, compiled attributes
                continue
            if not queue:
                break
            env.step()  # a SimPy event (the run's stop, a pause), or an Ev resumed after a stop: SimPy's own step
    except StopSimulation:
        return
    raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}')


class ScreenedRun:
    """One run of ``full`` that also gives the Result of ``screen``, the same scenario with fewer batches at least
    (``run.min_batches``), and goes on to ``full``'s Result only when asked (``extend``).

    Both runs draw the same numbers and see the same events until one of them stops: ``run.min_batches`` only decides
    when the precision rule may stop a run. So the run follows ``full``'s rule and ``screen``'s beside it
    (``BatchMeans.check_stop``): where ``screen``'s is met, ``screen``'s Result is taken and the run pauses without
    stopping; ``extend`` carries it on to where ``full`` stops, the Result a run of ``full`` from the start gives
    (the pause adds one event to SimPy's queue, which keeps the order of all the others). The screen Result has the
    metrics, utilization, busy, validity and stop reason of a run of ``screen``; its I/O counters (simulated, issued,
    in flight) are those of the moment its rule was met, where a stopped run also counts what ends at that instant.
    A budget, an unstable backlog or a stall ends both runs at one place: each Result is taken there. ``screen``
    returns None in the one case the run cannot give ``screen``'s Result: ``full``'s rule stopped the run before
    ``screen``'s was met (``min_batches`` also changes which checks count; ``extend`` still gives ``full``'s)."""

    def __init__(self, screen: Scenario, full: Scenario):
        if not screened_pair(screen, full):
            raise ValueError("ScreenedRun: screen must be full with fewer run.min_batches, not a profile workload")
        self.screen_scenario = screen
        self.run = Run(full)
        self.run.pause_min_batches = screen.run.min_batches
        self.run.pause_scenario = screen

    def screen(self) -> Result | None:
        """The Result of ``screen`` (None: ``full``'s rule stopped the run first; simulate ``screen`` on its own)."""
        run = self.run
        run.start()
        run.advance()
        if run.paused is not None:
            return run.paused
        run.pause_min_batches = 0
        if run.stop_reason.startswith("precision"):
            return None
        full = run.scenario
        run.scenario = self.screen_scenario
        try:
            return run.result()
        finally:
            run.scenario = full

    def extend(self) -> Result:
        """The Result of ``full``: the run carried on from the pause (call ``screen`` first)."""
        run = self.run
        if run.paused is not None:  # (else a budget, a backlog or a stall ended the run: it is where full stops)
            run.wall_start += time.perf_counter() - run.paused_at  # the pause is not the run's time
            run.advance()
        return run.result()


def screened_pair(screen: Scenario, full: Scenario) -> bool:
    """Whether ``ScreenedRun`` can run the two: the same scenario but for fewer ``run.min_batches`` in ``screen``, and
    no profile workload (a profile is replayed interval by interval)."""
    if screen.profile_index() is not None or not screen.run.min_batches < full.run.min_batches:
        return False
    same = screen.model_copy(update={"run": screen.run.model_copy(update={"min_batches": full.run.min_batches})})
    return same == full


_profile_replay: list[Callable[[Scenario], Result]] = []
"""The replay of a profile workload (``sim.des.profile.simulate_profile``), set by the package ``sim.des``
when it is imported: the replay is built on ``Run``, so it sits above this module, which does not import it."""


def set_profile_replay(replay: Callable[[Scenario], Result]) -> None:
    """Register the replay ``simulate`` hands a profile workload to (``sim/des/__init__.py`` calls this)."""
    _profile_replay[:] = [replay]


def simulate(scenario: Scenario) -> Result:
    """Simulate ``scenario`` with the discrete-event engine and return its Result (a profile
    workload, alone or among several, is replayed interval by interval: ``sim.des.profile``, registered by
    ``set_profile_replay``)."""
    if scenario.profile_index() is not None:
        if not _profile_replay:
            raise RuntimeError("no profile replay registered: sim.des.profile.simulate_profile is set when the package sim.des is imported")
        return _profile_replay[0](scenario)
    return Run(scenario).run()
