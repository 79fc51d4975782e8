"""The ``dies`` device model in the DES: a flash device as addressed NAND dies behind a controller.

Every number comes from the route description (``DeviceBank.dies``, a ``sim.route.flash.DieLayout``, and
``DeviceBank.params``); nothing is derived here.

* A read passes the controller (its fixed cost less its per-command time as a pure delay, then one
  server at the controller's command-rate ceiling), then its die: a random read's die is drawn
  uniformly from the run's seeded stream, a sequential stream's dies are taken in turn (striped);
  a read larger than a page spans one die per page (fork/join: it moves on when its last page is
  read). Each die is a FIFO queue serving one operation at a time (tR times a lognormal of the
  die's tight cv). Then the read channel carries the bytes beyond the first 4 KiB (those are in
  the QD1 latency the die read time was derived from) at the random-read bandwidth. On a device
  whose dies are shared (``FlashParameters.shared_dies``, eXFlash) a random read's die also holds it
  for its bytes beyond the first 4 KiB at 1 / N of the random-read bandwidth (the pooled model's
  rule, ``FlashParameters.die_read_time_us`` with the layout), and the read channel is the
  sequential read bandwidth (``read_channel_gbs``), so those bytes are not charged twice.
* A write passes the controller's server (for at most its acknowledgement time,
  ``sim.route.flash.write_command_us``), takes a write-cache slot and is acknowledged (the cache
  acknowledgement less the controller's time). Its destage goes through the write channel and programs
  on the die the FTL's write point picks (``sim.route.flash.WritePoint``: writes are out of place, so
  not address-bound: an idle die, the die idle longest; while every die is busy the program waits in the
  controller for the first die to fall idle), for random and sequential writes alike: a read whose die
  is programming waits for it (the die's FIFO queue).
  A write's NAND work is N / (the device's sustained write IOPS) of die time, in operations of tPROG
  (``sim.route.flash.ProgramOperations``: N / (W tPROG) per write, a whole count per write from a running
  total, ``OperationCount``; none while a page fills), one after another, each on the die the write point
  picks: the dies alone give the datasheet write IOPS when all are busy, and a read meets one operation,
  not a write's whole work; the slot is freed when the last operation ends. On a device whose reads and programs share the
  dies (``FlashParameters.shared_dies``, eXFlash) the destage waits for its die and frees its slot when
  the program starts there; the program holds the die ``die_program_time_us`` x N / read units (write
  IOPS and bandwidth from the dies alone). A program sent to a random die instead would wait there behind
  reads and programs, and with eXFlash's 2-slot cache a slot would wait with it (S3 random writes -67..-69%
  against seed 002).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from heapq import heappop, heappush

import simpy

from sim.des.components import (
    CHAIN_DROP,
    READ,
    BookedPool,
    CacheEntry,
    Chain,
    Delay,
    Ev,
    FifoStation,
    Fork,
    Hop,
    Job,
    JobFactory,
    Meter,
    Station,
    _push,
    advance,
    clock_of,
    make_route,
    schedule,
)
from sim.des.rng import Streams
from sim.route.flash import (
    FIRST_READ_BYTES,
    DieLayout,
    FlashParameters,
    OperationCount,
    ProgramOperations,
    WritePoint,
    program_operations,
    write_command_us,
)
from sim.route.links import us_per_byte


class DieArray(Meter):
    """``dies`` NAND dies, each a FIFO queue of one operation at a time; the meter's capacity is the die
    count, so its utilization is the mean die's. ``read`` and ``program`` are hops."""

    __slots__ = ("_done_cb", "_done_cbs", "busy", "current", "cursor", "die_read", "held", "held_job", "held_service", "pages",
                 "pick", "pieces", "queues", "random", "reservations", "reserved", "waiting", "write_point")

    def __init__(self, env: simpy.Environment, name: str, layout: DieLayout, die_read: Callable[[Job], float],
                 pick: Callable[[], float], random: bool):
        super().__init__(env, name, layout.dies)
        self.queues: list[deque[tuple[Job, float, bool, float]]] = [deque() for _ in range(layout.dies)]
        """Each die's FIFO queue: (job, service, behind, arrival); a read booked ahead (``read_at``) arrives later."""
        self.current: list[Job | None] = [None] * layout.dies
        """The job each die is serving (None while idle or programming behind a job that moved on)."""
        self.busy = [False] * layout.dies
        self.die_read = die_read
        self.pick = pick
        self.random = random
        self.cursor = 0
        self.pages = layout.page_bytes
        self.pieces: dict[Job, int] = {}
        """Reads spread over several dies: pages still being read."""
        self.write_point = WritePoint(layout.dies)
        """Where programs land (the FTL's rule, ``sim.route.flash.WritePoint``)."""
        self.waiting: deque[tuple[Job, float, bool]] = deque()
        """Programs waiting for a die to fall idle (every die was busy when they came)."""
        self._done_cb = self._done
        self._done_cbs: list[Callable[[Ev], None]] = [self._done]
        n = layout.dies
        self.reserved = [math.inf] * n
        """When the read booked on each idle die arrives there (``read_at``; inf: none): the die is idle until then."""
        self.held: list[Ev | None] = [None] * n
        """That read's service end, scheduled when it was booked (taken back when a program takes the die first)."""
        self.held_job: list[Job | None] = [None] * n
        self.held_service = [0.0] * n
        self.reservations: list[tuple[float, int]] = []
        """(arrival, die) of the reads booked on idle dies, a heap: each is put in service at its arrival (``_arrive``)."""

    def _die(self) -> int:
        n = len(self.queues)
        if self.random:
            k = int(self.pick() * n)
            return k if k < n else n - 1
        k = self.cursor
        self.cursor = (k + 1) % n
        return k

    def read(self, job: Job) -> None:
        """Read the job's pages on their dies; move on when the last is read."""
        self.read_at(job, self.clock.now)

    def read_at(self, job: Job, t: float) -> None:
        """Read the job's pages on their dies, arriving there at ``t`` (now or later: the controller's departure,
        booked when the read reached it); move on when the last is read.

        Reads reach the dies through the controller, a single FIFO server, so they arrive in the order they are
        booked, and the dies are picked and the die times drawn in that order, as when each arrives by an event.
        A read booked ahead on an idle die is reserved there (``_reserve``): the die stays idle until the read
        arrives (``_arrive``), and a program that the write point puts on that die meanwhile runs first, the read
        queued behind it (``_bump``): what happens when the read arrives by an event."""
        now = self.clock.now
        if self.reservations:
            self._arrive(now)
        n = len(self.queues)
        size = job.size
        k = 1 if size <= self.pages else min(n, -(-size // self.pages))
        if k > 1:
            self.pieces[job] = k
        for _ in range(k):
            self._enter_at(self._die(), job, self.die_read(job), t, now)

    def program(self, duration: Callable[[Job], float], behind: bool = False) -> Hop:
        """A hop that programs a destaged write for ``duration(job)`` us on the die the write point picks; with
        ``behind`` the job moves on when its program starts (the die stays busy for the rest)."""
        take, busy = self.write_point.take, self.busy

        waiting = self.waiting

        def hop(job: Job) -> None:
            if self.reservations:
                self._arrive(self.clock.now)
            k = take(busy)
            if k < 0:
                waiting.append((job, duration(job), behind))
            else:
                if self.reserved[k] < math.inf:
                    self._bump(k)
                self._start(k, job, duration(job), behind)
        return hop

    def _enter_at(self, k: int, job: Job, service: float, t: float, now: float) -> None:
        if self.busy[k] or self.reserved[k] < math.inf:
            self.queues[k].append((job, service, False, t))
        elif t <= now:
            self._start(k, job, service, False)
        else:
            self._reserve(k, job, service, t)

    def _reserve(self, k: int, job: Job, service: float, t: float) -> None:
        """Book a read arriving at ``t`` (later) on idle die ``k``: its end is scheduled now, the die idle until ``t``."""
        self.reserved[k] = t
        self.held_job[k] = job
        self.held_service[k] = service
        ev = Ev(self.env)
        ev._value = k
        ev.callbacks = self._done_cbs
        self.clock.push(ev, t + service)
        self.held[k] = ev
        heappush(self.reservations, (t, k))

    def _arrive(self, now: float) -> None:
        """Put in service, at their own arrival times and in time order, the reserved reads that arrive by ``now``."""
        reservations, reserved = self.reservations, self.reserved
        while reservations and reservations[0][0] <= now:
            t, k = heappop(reservations)
            if reserved[k] != t:  # taken back (``_bump``)
                continue
            reserved[k] = math.inf
            dt = t - self.t_last  # Meter._account at t
            if dt:
                u = self.in_use
                if u:
                    self.area += u * dt
                    self.busy_area += dt
                self.t_last = t
            self.in_use += 1
            self.busy[k] = True
            self.current[k] = self.held_job[k]
            self.held_job[k] = None
            self.held[k] = None

    def _bump(self, k: int) -> None:
        """A program takes die ``k`` before the read reserved there arrives: the read waits behind it."""
        ev = self.held[k]
        assert ev is not None
        ev.callbacks = [_ignore]
        job = self.held_job[k]
        assert job is not None
        self.queues[k].appendleft((job, self.held_service[k], False, self.reserved[k]))
        self.reserved[k] = math.inf
        self.held[k] = None
        self.held_job[k] = None

    def _account(self) -> None:
        if self.reservations:
            self._arrive(self.clock.now)
        Meter._account(self)

    def _start(self, k: int, job: Job, service: float, behind: bool) -> None:
        self._account()
        self.in_use += 1
        self.busy[k] = True
        schedule(self.env, service, k, self._done_cb)
        if behind:
            self.current[k] = None
            advance(job)
        else:
            self.current[k] = job

    def _done(self, event: Ev) -> None:
        k: int = event._value
        self._account()
        job = self.current[k]
        self.in_use -= 1
        self.busy[k] = False
        self.current[k] = None
        queue = self.queues[k]
        now = self.clock.now
        if queue and queue[0][3] <= now:
            nxt, service, behind, _ = queue.popleft()
            self._start(k, nxt, service, behind)
        elif self.waiting:
            nxt, service, behind = self.waiting.popleft()
            self._start(k, nxt, service, behind)
        else:
            self.write_point.idle(k)
            if queue:  # the next read was booked ahead and arrives later: the die is idle until then
                nxt, service, _, t = queue.popleft()
                self._reserve(k, nxt, service, t)
        if job is None:
            return
        pieces = self.pieces
        if pieces and job in pieces:
            left = pieces[job] - 1
            if left:
                pieces[job] = left
                return
            del pieces[job]
        advance(job)


def _ignore(event: Ev) -> None:
    """The callback of a reserved read's end taken back (``DieArray._bump``)."""


def operations_hop(dies: DieArray, ops: ProgramOperations, unit: Callable[[], float], count: OperationCount | None = None,
                   left: dict[Job, int] | None = None) -> Hop:
    """A hop that runs a destaged write's NAND operations (``ProgramOperations``) one after another, each for tPROG
    times ``unit()`` on the die the write point picks; the write moves on after the last (at once if it has none).
    A write whose count was drawn before it came (``left``, ``ChannelThenOperations``) runs that many."""
    count = OperationCount(ops.per_write) if count is None else count
    op_us = ops.operation_us
    operation = dies.program(lambda job: op_us * unit())
    left = {} if left is None else left

    def hop(job: Job) -> None:
        n = left.pop(job, -1)
        if n < 0:  # the write's first visit: its count
            n = count.next()
            if n == 0:
                advance(job)
                return
        if n > 1:  # come back to this hop when this operation ends
            left[job] = n - 1
            job.step -= 1
        operation(job)
    return hop


class ControllerFixed(Delay):
    """A die-level device's controller: its fixed cost less its per-command time, a constant delay every read takes
    before the controller's server. Keeps the arrival times at the server of the reads on their way (``arrivals``, in
    order: the delay is constant), which a write reads before it books the server ahead (``DieDevice.reads_arrive_after``)."""

    __slots__ = ("arrivals", "us")

    def __init__(self, env: simpy.Environment, us: float, name: str):
        super().__init__(env, lambda job: us, name)
        self.us = us
        self.arrivals: deque[float] = deque()

    def __call__(self, job: Job) -> None:
        t = self.clock.now + self.us
        self.arrivals.append(t)
        _push(self.clock, self._spare, t, job, self._cbs)

    def visit(self, job: Job, t: float) -> float:
        """As a chain part: the arrival at the server, kept as well."""
        t += self.us
        self.arrivals.append(t)
        return t


class DieWriteEntry:
    """A write's way into a die-level drive that reads also reach: the single-server links towards the device
    (``FifoStation``, fed by nothing else: ``sim.des.model._Hops.check_entries``), then the controller, its cache slot and
    acknowledgement (the device's ``CacheEntry``), with one event instead of two.

    The controller is one FIFO server that reads reach too, through the fixed delay. Leaving the links at ``t``, the
    write books the controller at ``t`` now when no read can reach it before then unbooked
    (``DieDevice.reads_arrive_after``) and no write before it is still on its way to it by an event; the times are then
    the event walk's. Otherwise it leaves the links by an event and enters the ``CacheEntry`` then. The route reads
    ``(entry, cache_entry, cache_entry.acquire, cache_entry.acknowledge, ...)``."""

    __slots__ = ("_cbs", "_spare", "cache", "channel", "clock", "device", "entry", "passing")

    def __init__(self, env: simpy.Environment, channel: Sequence[FifoStation], device: DieDevice):
        self.clock = clock_of(env)
        self.channel: tuple[FifoStation, ...] = tuple(channel)
        for st in self.channel[1:]:
            st.reached_ahead()
        self.device = device
        device.controller.reached_ahead()  # booked at the links' departure, perhaps after an idle gap
        assert device.cache_entry is not None
        self.entry: CacheEntry = device.cache_entry
        self.cache = device.write_cache
        self.passing = 0
        """Writes that leave the links by an event and have not reached the controller yet."""
        self._spare: list[Ev] = []
        self._cbs: list[Callable[[Ev], None]] = [self._leave]

    def __call__(self, job: Job) -> None:
        now = self.clock.now
        t = now
        for st in self.channel:
            t = st.commit(job, t)
        if t <= now or (self.passing == 0 and self.device.reads_arrive_after(t)):
            job.step += 1  # past the cache entry's own hop: it is entered here
            self.entry.enter_at(job, t)
            return
        self.passing += 1
        _push(self.clock, self._spare, t, job, self._cbs)

    def _leave(self, event: Ev) -> None:
        self.passing -= 1
        self._spare.append(event)
        advance(event._value)


class ChannelThenOperations:
    """A destaged write's way through the write channel (one FIFO server fed by the destages as they start, so its
    departure is known on arrival: Lindley's recursion) to its NAND operations. The write's operation count
    (``OperationCount``) is drawn on arrival, in the order the channel serves the writes, as when it is drawn at the
    departure; a write with none (a page still filling) frees its cache slot at its departure with no event
    (``BookedPool.release_at``) and is dropped; one with some leaves the channel by an event and runs them
    (``operations_hop``, the count handed over in ``left``)."""

    __slots__ = ("_cbs", "_spare", "cache", "channel", "clock", "count", "jobs", "left")

    def __init__(self, env: simpy.Environment, channel: FifoStation, cache: BookedPool, count: OperationCount,
                 left: dict[Job, int], jobs: JobFactory):
        self.clock = clock_of(env)
        self.channel = channel
        self.cache = cache
        self.count = count
        self.left = left
        self.jobs = jobs
        self._spare: list[Ev] = []
        self._cbs: list[Callable[[Ev], None]] = [self._leave]

    def __call__(self, job: Job) -> None:
        now = self.clock.now
        t = self.channel.commit(job, now)
        n = self.count.next()
        if n == 0:
            self.cache.release_at(job, t)
            self.jobs.recycle(job)
            return
        self.left[job] = n
        if t > now:
            _push(self.clock, self._spare, t, job, self._cbs)
        else:
            advance(job)

    def _leave(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)


def _no_reads(job: Job) -> None:
    raise RuntimeError("a read reached a flash device built for writes alone (DieDevice writes_only)")


class DieDevice:
    """A flash drive or DIMM under the ``dies`` device model (module docstring); read_hops and write_hops
    as ``FlashDevice``'s, parallelism for the result's notes.

    ``writes_only`` (no read ever reaches the device: a write-only workload, no rebuild; ``sim.des.model.build``) on
    a drive: the controller is a single server fed by the link alone, so it is a ``FifoStation`` and the cache a
    ``BookedPool``, and ``sim.des.model`` makes the link, the controller, the slot and the acknowledgement one
    ``WriteEntry`` (the same times and draws as the event walk, one event instead of three). The dies, seeing its
    programs alone, are an N-server FCFS queue (the write point: an idle die, else the first to fall idle), and a
    destage is one ``Chain`` (the write channel, then ``BookedOperations``: the write's operations on the dies as a
    ``FifoStation`` of N servers, the slot's release booked at the last one's end), as ``FlashDevice``'s; a write's
    later operations (ES5F random writes: 1.37 per write) cost one event each only while writes wait for a slot
    (``BookedOperations``), its first none.
    """

    def __init__(self, env: simpy.Environment, streams: Streams, jobs: JobFactory, meters: list[Meter], name: str,
                 p: FlashParameters, d: DieLayout, writes_only: bool = False):
        ctrl_s = d.controller_service_us
        ctrl_w = write_command_us(d, p)  # a write's time there: at most its acknowledgement
        self.writes_only = alone = writes_only and not p.shared_dies
        ops = None if p.shared_dies else program_operations(p, d)
        booked = alone and ops is not None
        # one FIFO server: a job's departure is known when it arrives (Lindley's recursion), so a read books its
        # die from then (``DieArray.read_at``) and a write its cache slot and acknowledgement (``CacheEntry``)
        self.controller: FifoStation = (FifoStation(env, f"{name}.controller", 1, lambda job: ctrl_w) if alone else
                                        FifoStation(env, f"{name}.controller", 1,
                                                    lambda job: ctrl_s if job.op == READ else ctrl_w))
        controller_delay = d.controller_delay_us
        fixed = ControllerFixed(env, controller_delay, f"{name}.controller_fixed")
        self.fixed: ControllerFixed | None = fixed if controller_delay > 0 else None
        read_unit = streams.unit("lognormal" if d.die_read_cv > 0 else "deterministic", d.die_read_cv)
        if p.shared_dies:
            # a page read holds its die for tR and its share of the bytes beyond the first 4 KiB at 1 / N of the
            # random-read bandwidth (``FlashParameters.die_read_time_us``, the pooled model's rule on N dies)
            hold = lru_cache(maxsize=256)(partial(p.die_read_time_us, layout=d))

            def die_read(job: Job) -> float:
                return hold(job.size) * read_unit()
        else:
            t_read = d.die_read_us

            def die_read(job: Job) -> float:
                return t_read * read_unit()
        self.dies = DieArray(env, f"{name}.dies", d, die_read, streams.uniform(), p.random_access)
        # the read channel: the random-read bandwidth, or with shared dies (whose reads hold the dies for those
        # bytes already) the sequential one, as in the pooled model (``FlashParameters.read_channel_gbs``)
        per_byte = us_per_byte(p.read_channel_gbs)
        channel_unit = streams.unit("lognormal", p.read_channel_cv) if p.read_channel_cv > 0 else None
        if channel_unit is None:
            def beyond(job: Job) -> float:
                return max(0, job.size - FIRST_READ_BYTES) * per_byte
        else:
            unit = channel_unit

            def beyond(job: Job) -> float:
                extra = job.size - FIRST_READ_BYTES
                return extra * per_byte * unit() if extra > 0 else 0.0
        self.read_bw = Station(env, f"{name}.read_bw", 1, beyond)
        self.write_cache: BookedPool = BookedPool(env, f"{name}.write_cache", p.write_cache_slots)
        law, cv = p.law, p.service_cv
        ack_unit = streams.unit(law, cv)
        ack = max(0.0, p.write_ack_us - ctrl_w)
        self.ack = Delay(env, lambda job: ack * ack_unit(), f"{name}.write_ack")
        write_per_byte = us_per_byte(p.write_bw_gbs)
        self.write_bw: Station = (FifoStation if booked or not p.shared_dies else Station)(
            env, f"{name}.write_bw", 1, lambda job: job.size * write_per_byte)
        program_unit = streams.unit(law, cv)
        dies_meter: Meter = self.dies
        destage: tuple[Hop, ...]
        if booked and ops is not None:
            dies_meter, destage = self._destage_booked(env, jobs, name, ops, d, program_unit)
        elif p.shared_dies:
            # reads and programs share the dies (eXFlash, FlashParameters.shared_dies): a destaged write frees its
            # cache slot when its program starts on a die, which it holds for the time that makes the N dies alone
            # give the datasheet write IOPS and bandwidth (the dies are the whole write path, as in FlashDevice)
            scale = d.dies / p.read_units
            program = self.dies.program(lambda job: p.die_program_time_us(job.size) * scale * program_unit(), behind=True)
            destage = (program, self.write_cache.release)
        else:
            # the write's NAND work, N / write IOPS of die time, in operations of tPROG (``ProgramOperations``): a
            # whole count per write (``OperationCount``, none while a page fills), one after another, each on the die
            # the write point picks; the dies alone give the datasheet write IOPS when all are busy; the slot is
            # freed when the last operation ends
            assert ops is not None
            count = OperationCount(ops.per_write)
            left: dict[Job, int] = {}
            channel = self.write_bw
            assert isinstance(channel, FifoStation)
            programs = operations_hop(self.dies, ops, program_unit, count, left)
            destage = make_route(ChannelThenOperations(env, channel, self.write_cache, count, left, jobs), programs,
                                 self.write_cache.release)
        meters.extend([self.controller, dies_meter, self.read_bw, self.write_cache, self.write_bw])
        self.read_hops: tuple[Hop, ...] = (_no_reads,) if alone else self._read_hops(env, fixed if controller_delay > 0 else None)
        destaging = Fork(destage, jobs)
        destaging.set_body(destage)  # a chain that drops its child recycles it itself
        self.clock = clock_of(env)
        self.cache_entry: CacheEntry | None = None
        """A write's controller, cache slot and acknowledgement (reads reach the controller too)."""
        if alone:
            self.write_hops: tuple[Hop, ...] = (self.controller, self.write_cache.acquire, self.ack, destaging)
        else:
            # the controller, the cache slot and the acknowledgement with one event (``CacheEntry``: the slot booked
            # at the controller's departure when one is surely free then, the acknowledgement drawn in the order
            # the writes leave the controller, a single FIFO server)
            entry = self.cache_entry = CacheEntry(env, self.controller, self.write_cache, self.ack)
            self.write_hops = (entry, entry.acquire, entry.acknowledge, destaging)
        self.parallelism = {"dies": d.dies, "write_cache_slots": p.write_cache_slots}

    def reads_arrive_after(self, t: float) -> bool:
        """Whether no read reaches the controller before ``t`` (now or later) unless it is booked there already: every
        read on its way (the fixed delay: its arrival known, in order) arrives after ``t``, and one that starts now
        would too (a write's entry, ``DieWriteEntry``, may then book the controller at ``t``)."""
        now = self.clock.now
        if t <= now:
            return True
        fixed = self.fixed
        if fixed is None:
            return False
        arrivals = fixed.arrivals
        return t < now + fixed.us and (not arrivals or arrivals[0] > t)

    def _read_hops(self, env: simpy.Environment, fixed: Delay | None) -> tuple[Hop, ...]:
        """A read's hops: the controller's fixed delay, its server and the dies from its departure in one go (the dies
        booked ahead, ``DieArray.read_at``: one event fewer than by events), then the read channel for the bytes beyond
        the first 4 KiB."""
        controller, dies, clock, read_bw = self.controller, self.dies, clock_of(env), self.read_bw
        arrivals = self.fixed.arrivals if self.fixed is not None else None

        def to_dies(job: Job) -> None:
            if arrivals is not None:
                arrivals.popleft()
            dies.read_at(job, controller.commit(job, clock.now))

        def channel(job: Job) -> None:
            if job.size > FIRST_READ_BYTES:
                read_bw(job)
            else:
                advance(job)

        return make_route(fixed, to_dies, channel)

    def _destage_booked(self, env: simpy.Environment, jobs: JobFactory, name: str, ops: ProgramOperations, d: DieLayout,
                        unit: Callable[[], float]) -> tuple[Meter, tuple[Hop, ...]]:
        """``writes_only``: the dies as N servers (an operation on the first free die, tPROG times ``unit()``) and the
        destage as one chain with no event: the write channel, then ``BookedOperations`` (a write's operations, none
        while a page fills, ``OperationCount``), which books the slot's release at the last one's end."""
        op_us = ops.operation_us
        dies = FifoStation(env, f"{name}.dies", d.dies, lambda job: op_us * unit())
        dies.reached_ahead()
        channel = self.write_bw
        cache = self.write_cache
        assert isinstance(channel, FifoStation) and isinstance(cache, BookedPool)
        # every release is booked at or after a departure of the dies (every write programs), else of the channel
        cache.releases_after(dies if ops.per_write >= 1.0 else channel)
        operations = BookedOperations(env, dies, cache, OperationCount(ops.per_write))
        return dies, (Chain(env, [channel.commit, operations.program], CHAIN_DROP, jobs=jobs),)


class BookedOperations:
    """A write-only drive's NAND operations booked on its dies (an N-server ``FifoStation``), no event for a write's
    first operation and one for each later one, with the event walk's times and draws (``operations_hop`` on a
    ``DieArray``: a write's operations one after another, each on the first die free after the one before ends).

    Every operation joins the dies' one FCFS queue at its arrival, and the dies' bookings must come in arrival order
    (Lindley's recursion over N servers). A write's first operation arrives when the write channel, fed in time order,
    lets it go: ``program`` books them in that order. A later operation arrives when the one before it ends, a time
    known when that one is booked but perhaps after first operations not booked yet, so it waits here (``pending``,
    by arrival) and is booked before any operation that arrives after it (the bookings' order, so their times and
    draws, are the event walk's whenever they are made): by ``program``, or by ``settle`` when the cache or the dies
    are looked at (``BookedPool.settles_with``, ``FifoStation.settler``: what arrives by then is booked before the
    pool does anything at that time, so every release is done at its own time, in time order), or, while writes
    wait for a slot (a release must then hand it on at its own time), by an event at its own arrival (one kept on
    the queue at the earliest such arrival: ``wakes``, as ``BookedPool`` keeps one for its waiters; an event per
    waiting operation would keep thousands on the queue while the caches are full). With no writes waiting, no
    event. The slot's release is booked when the write's last operation is. No release can come earlier than it
    would by events: an operation not booked yet starts no earlier than the dies' first free server now
    (``BookedPool.releases_after``'s proof holds).
    """

    __slots__ = ("_flush_cb", "cache", "clock", "count", "dies", "env", "pending", "placeholder", "seq", "wakes")

    def __init__(self, env: simpy.Environment, dies: FifoStation, cache: BookedPool, count: OperationCount):
        self.env = env
        self.clock = clock_of(env)
        self.dies = dies
        self.cache = cache
        self.count = count
        self.pending: list[tuple[float, int, int]] = []
        """Later operations not booked yet: (arrival, order made, operations the write has left), a heap."""
        self.seq = 0
        self.placeholder = Job()
        """The job a later operation is booked as (the dies' service time reads nothing of it; the write's own child
        has been recycled by then)."""
        self.wakes: list[float] = []
        """The times of the flush events on the queue (a heap)."""
        self._flush_cb = self._flush_event
        cache.settles_with(self.settle, self.jobs_wait)
        dies.settler = self.settle

    def settle(self, now: float) -> None:
        """Book every later operation arriving by ``now`` (the cache and the dies call it before they are looked at)."""
        pending = self.pending
        if pending and pending[0][0] <= now:
            self._flush(now)

    def jobs_wait(self) -> None:
        """Writes wait for a slot: keep a flush event at the earliest later operation (a release must then come at
        its own time)."""
        if self.pending:
            self._wake_for(self.pending[0][0])

    def program(self, job: Job, t: float) -> float:
        """Book the operations of a write whose first arrives at ``t`` (a ``Chain`` part) and return ``t``'s end."""
        if self.pending:
            self._flush(t)
        n = self.count.next()
        if n == 0:
            return self.cache.release_at(job, t)
        end = self.dies.commit(job, t)
        if n == 1:
            return self.cache.release_at(job, end)
        self._defer(end, n - 1)
        return end

    def _defer(self, arrival: float, left: int) -> None:
        pending = self.pending
        heappush(pending, (arrival, self.seq, left))
        self.seq += 1
        self.cache.held_from = pending[0][0]
        if self.cache.waiting:
            self._wake_for(arrival)

    def _wake_for(self, arrival: float) -> None:
        """Keep a flush event at or before ``arrival`` on the queue."""
        wakes = self.wakes
        if not (wakes and wakes[0] <= arrival):
            heappush(wakes, arrival)
            schedule(self.env, arrival - self.clock.now, None, self._flush_cb)

    def _flush(self, t: float) -> None:
        """Book every later operation arriving by ``t``, in arrival order."""
        pending, dies, cache, job = self.pending, self.dies, self.cache, self.placeholder
        while pending and pending[0][0] <= t:
            arrival, _, left = heappop(pending)
            end = dies.commit(job, arrival)
            if left == 1:
                cache.release_at(job, end)
            else:
                self._defer(end, left - 1)
        cache.held_from = pending[0][0] if pending else math.inf

    def _flush_event(self, event: Ev) -> None:
        now = self.clock.now
        wakes = self.wakes
        while wakes and wakes[0] <= now:
            heappop(wakes)
        pending = self.pending
        if pending:
            self._flush(now)
            if pending and self.cache.waiting:
                self._wake_for(pending[0][0])
