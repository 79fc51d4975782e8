"""Engine building blocks: stations, concurrency limits, pure delays, fork and split.

An I/O is a ``Job`` that walks a *route*: a tuple of hops, each a callable
``hop(job)``. A hop either passes the job on at once (``advance``) or parks it and
passes it on later from a SimPy event callback. There is no SimPy process per I/O
and no Request object per queue visit: a station visit costs at most one SimPy event
(its service completion; a ``FifoStation`` knows it on arrival, so ``sim.des.model.Fusion``
folds the hops after it that nothing else can disturb into the same event, a ``Chain``),
a concurrency limit costs none. Jobs are recycled from a
free list, so a long run allocates almost nothing per I/O (DESIGN.md section 7).

Time is in microseconds of simulated time throughout the engine.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from heapq import heappop, heappush, heapreplace
from typing import Any, Final, cast

import simpy
from simpy.core import StopSimulation
from simpy.events import NORMAL, EventPriority

READ = 0
WRITE = 1

SERVICE_CALL: Final = 0
"""A ``FifoStation``'s service time is ``service(job)``."""
SERVICE_BYTES: Final = 1
"""... is ``job.size * per_byte`` (a link or a channel: the same product its ``service`` computes, without the call)."""
SERVICE_COST: Final = 2
"""... is ``job.cost`` (the host CPU: the charge a ``HostCharge`` set)."""

Hop = Callable[["Job"], None]
Child = tuple[Sequence[Hop], int, int, int]
"""A device I/O of a split: (route, bytes, READ or WRITE, member index)."""


class Job:
    """One logical I/O or one device-level piece of it (a child of a split)."""

    __slots__ = (
        "cost",
        "member",
        "offset",
        "op",
        "parent",
        "pending",
        "phase",
        "phases",
        "route",
        "size",
        "slot",
        "step",
        "t0",
        "t_done",
        "token",
        "workload",
    )

    def __init__(self) -> None:
        self.route: Sequence[Hop] = ()
        self.step = -1
        self.op = READ
        self.size = 0
        self.t0 = 0.0
        self.t_done = 0.0
        """When the current phase of a split's children is done (the latest of the times they join at)."""
        self.parent: Job | None = None
        self.member = 0
        self.slot = 0
        self.offset = 0
        self.pending = 0
        self.phases: list[list[Child]] = []
        self.phase = 0
        self.token = 0
        self.cost = 0.0
        self.workload = 0
        """Which of the scenario's workloads issued this I/O (its index in ``Scenario.all_workloads()``)."""


def advance(job: Job) -> None:
    """Send ``job`` to the next hop of its route."""
    step = job.step + 1
    job.step = step
    job.route[step](job)


RESUMED = EventPriority(-1)
"""The priority ``Environment.step`` reschedules a stopped event's remaining callbacks with (before URGENT)."""


class Clock:
    """The simulated time in us and the engine's own events, in a compiled object.

    ``now`` is SimPy's ``env.now``, mirrored: SimPy keeps the time in the environment's ``__dict__``
    (``env._now``), where each read is a dictionary lookup and a boxed float; here it is a field.

    ``events`` is a binary heap of the engine's events (``Ev``), ordered as SimPy orders its queue: by time,
    then priority (an ``Ev`` is always SimPy's ``NORMAL``), then event id, drawn from SimPy's own counter
    (``env._eid``). That order is total (ids are unique), so the events leave in the order they would leave
    SimPy's queue, whatever the heap's layout; the heap only compares two floats and two ints where SimPy's
    compares tuples of Python objects. SimPy's queue keeps everything else (the run's stop event, a test's
    timeouts), and both loops take whichever is first: ``sim.des.engine.run_until`` (the engine's) and
    ``sim.des.environment.Environment.step`` (SimPy's own, which ``Environment.run`` calls)."""

    __slots__ = ("eid", "env", "events", "now")

    def __init__(self, env: simpy.Environment, now: float) -> None:
        self.env = env
        self.now = now
        self.events: list[Ev] = []
        self.eid = env._eid
        """SimPy's event ids (``env._eid``: one counter for both queues)."""

    def push(self, ev: Ev, at: float) -> None:
        """Schedule ``ev`` at ``at`` (with the next event id: ``heapq.heappush``'s sift on (time, id))."""
        ev.t = at
        eid = next(self.eid)
        ev.eid = eid
        heap = self.events
        heap.append(ev)
        self._sift_up(ev, len(heap) - 1)

    def _sift_up(self, ev: Ev, pos: int) -> None:
        """Put ``ev`` in the hole at ``pos``, moving the events above it that come after it down (heapq's ``_siftdown``)."""
        heap = self.events
        t = ev.t
        eid = ev.eid
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if t < parent.t or (t == parent.t and eid < parent.eid):
                heap[pos] = parent
                pos = parent_pos
            else:
                break
        heap[pos] = ev

    def pop(self) -> Ev:
        """Take the first event off ``events`` (``heapq.heappop``'s sift: down to a leaf, then up)."""
        heap = self.events
        last = heap.pop()
        if not heap:
            return last
        first = heap[0]
        n = len(heap)
        pos = 0
        child = 1
        while child < n:
            right = child + 1
            if right < n:
                a = heap[child]
                b = heap[right]
                if not (a.t < b.t or (a.t == b.t and a.eid < b.eid)):
                    child = right
            heap[pos] = heap[child]
            pos = child
            child = 2 * pos + 1
        self._sift_up(last, pos)
        return first

    def fire_first(self) -> None:
        """Process the first of ``events`` as ``simpy.Environment.step`` processes an event: the time set (here and in
        SimPy's ``env._now``), the callbacks taken off and called; a ``StopSimulation`` from one puts the event back on
        SimPy's queue with the callbacks left, first at this time (SimPy's resume). An ``Ev`` never fails."""
        ev = self.pop()
        now = ev.t
        env = self.env
        env._now = now
        self.now = now
        callbacks = ev.callbacks
        ev.callbacks = None
        assert callbacks is not None
        try:
            for callback in callbacks:
                callback(ev)
        except StopSimulation:
            ev.callbacks = callbacks[callbacks.index(callback) + 1:]
            heappush(cast("list[Any]", env._queue), (now, RESUMED, next(self.eid), ev))
            raise

    def first_is_mine(self, entry: tuple[float, int, int, Any]) -> bool:
        """Whether ``events``' first (there is one) comes before ``entry``, the first of SimPy's queue."""
        ev = self.events[0]
        t = float(entry[0])
        if ev.t != t:
            return ev.t < t
        priority = int(entry[1])
        if priority != NORMAL:
            return priority > NORMAL
        return ev.eid < int(entry[2])

    def pending(self) -> int:
        """Events scheduled and not processed: the engine's and SimPy's."""
        return len(self.events) + len(self.env._queue)


def clock_of(env: simpy.Environment) -> Clock:
    """The ``Clock`` of an engine environment (``sim.des.environment.Environment``)."""
    clock = getattr(env, "clock", None)
    if not isinstance(clock, Clock):
        raise TypeError(f"the engine needs sim.des.environment.Environment (which keeps a Clock), got {type(env).__name__}")
    return clock


class Ev:
    """An event of the engine's own: the attributes ``simpy.Environment.step`` reads of an event, its time and its id.

    Scheduled on the ``Clock``'s heap (``Clock.push``) and processed by either loop (``sim.des.engine.run_until``,
    ``sim.des.environment.Environment.step``) as SimPy processes its events: the callbacks are taken off and called
    with the event; ``_value`` is what it carries, ``_ok`` is always true. A compiled class, so that the hot path sets
    and reads these attributes in the object itself rather than through a SimPy event's ``__dict__``."""

    __slots__ = ("_ok", "_value", "callbacks", "eid", "env", "t")

    def __init__(self, env: simpy.Environment) -> None:
        self.env = env
        self._ok = True
        self._value: Any = None
        self.callbacks: list[Callable[[Ev], None]] | None = None
        self.t = 0.0
        """When it is scheduled (``Clock.push``)."""
        self.eid = 0
        """Its event id, from SimPy's counter (``Clock.push``)."""


def schedule(env: simpy.Environment, delay: float, value: Any, callback: Callable[[Ev], None]) -> None:
    """Fire ``callback(event)`` after ``delay`` us, ``event._value`` being ``value``.

    The same as ``Timeout(env, delay, value).callbacks.append(callback)`` (the same time, priority and
    event id, so the same place in the order of events) without the constructor's checks and method calls:
    an ``Ev`` on the engine's heap (``Clock.push``).
    """
    clock = clock_of(env)
    ev = Ev(env)
    ev._value = value
    ev.callbacks = [callback]
    clock.push(ev, clock.now + delay)


def _advance_event(event: Ev) -> None:
    advance(event._value)


def _push(clock: Clock, spare: list[Ev], at: float, job: Job, callbacks: list[Callable[[Ev], None]]) -> None:
    """``schedule`` at absolute time ``at`` with an event from ``spare`` (events the callback gave back).

    ``callbacks`` is the hop's one list ``[callback]``, shared by all its events: SimPy takes an event's list
    off it before calling it (``Environment.step``) and never changes the list, so no list is made per event."""
    ev = spare.pop() if spare else Ev(clock.env)
    ev._value = job
    ev.callbacks = callbacks
    clock.push(ev, at)


class Meter:
    """Time-average occupancy of something with ``capacity`` units (servers or slots).

    ``area`` integrates units in use over time (utilization = area / capacity / window),
    ``busy_area`` the time with at least one unit in use; the engine reads both at batch
    boundaries. ``Station`` inlines the same accounting in its hot path.
    """

    __slots__ = ("area", "busy_area", "capacity", "clock", "env", "in_use", "name", "t_last", "waited")

    def __init__(self, env: simpy.Environment, name: str, capacity: int):
        self.env = env
        self.clock = clock_of(env)
        self.name = name
        self.capacity = capacity
        self.in_use = 0
        self.area = 0.0
        self.busy_area = 0.0
        self.t_last = 0.0
        self.waited = 0

    def _account(self) -> None:
        now = self.clock.now
        dt = now - self.t_last
        if dt:
            u = self.in_use
            if u:
                self.area += u * dt
                self.busy_area += dt
            self.t_last = now

    def __call__(self, job: Job) -> None:
        """Only a ``Station`` is a hop. (Declared here because mypyc gives a subclass's ``__call__``
        a working fast call only when the base class has one: sim/native/guard.py.)"""
        raise TypeError(f"{self.name} is not a hop")

    def reset(self) -> None:
        self._account()
        self.area = 0.0
        self.busy_area = 0.0
        self.waited = 0

    def unit_time(self) -> float:
        """Unit-microseconds of occupancy since the last reset (e.g. CPU-busy us)."""
        self._account()
        return self.area


class Station(Meter):
    """A FCFS service centre with ``servers`` identical servers.

    ``service(job)`` returns the job's service time in microseconds. Models a CPU
    (servers = cores), the parallel units of a flash device, a link direction
    (one server, time = bytes / bandwidth) or a textbook queue.

    A service completion is a plain SimPy event pushed straight onto the event queue;
    the event objects are recycled once SimPy has processed them, so a long run
    creates no event per I/O (the hot path of the engine, see bench/).
    """

    __slots__ = ("_finish_cbs", "_spare", "queue", "service")

    def __init__(self, env: simpy.Environment, name: str, servers: int, service: Callable[[Job], float]):
        super().__init__(env, name, servers)
        self.service = service
        self.queue: deque[Job] = deque()
        self._finish_cbs: list[Callable[[Ev], None]] = [self._finish]
        """Every service completion's callbacks (one list, shared: ``_push``)."""
        self._spare: list[Ev] = []

    def __call__(self, job: Job) -> None:
        if self.in_use < self.capacity:
            self._start(job)
        else:
            self.queue.append(job)

    def _start(self, job: Job) -> None:
        now = self.clock.now
        dt = now - self.t_last
        if dt:
            u = self.in_use
            if u:
                self.area += u * dt
                self.busy_area += dt
            self.t_last = now
        self.in_use += 1
        spare = self._spare
        if spare:
            ev = spare.pop()
        else:
            ev = Ev(self.env)
        ev._value = job
        ev.callbacks = self._finish_cbs
        self.clock.push(ev, now + self.service(job))

    def _finish(self, event: Ev) -> None:
        job = event._value
        now = self.clock.now
        dt = now - self.t_last
        if dt:
            self.area += self.in_use * dt
            self.busy_area += dt
            self.t_last = now
        self.in_use -= 1
        if self.queue:
            self._start(self.queue.popleft())
        advance(job)
        self._spare.append(event)


class FifoStation(Station):
    """A FCFS station with ``servers`` identical servers, computed by Lindley's recursion.

    The same queue as ``Station``: a job that arrives at ``t`` starts at the later of ``t`` and the
    earliest time a server is free, and leaves ``service(job)`` later. Jobs arrive in time order (the
    event loop's, or ``Chain``'s for a station only ever fed by one single-server station), so the
    departure is known on arrival and a visit costs one event, the departure itself, or none when the
    job's next hops are folded into the same event (``Chain``). The service time is drawn on arrival
    (a ``Station`` draws it at the start of service): the same law, another draw order.

    Occupancy is booked on arrival for the whole service (``c_area``, ``c_busy``); what lies beyond
    ``now`` is taken off when the meter is read. A job that arrives now leaves no gap (every server is
    busy without one from now until it is free: a job booked after a gap starts at its own arrival,
    which is not in the future); a station a ``Chain`` reaches ahead of time (an arrival in the future)
    can have one, so it keeps its bookings still to come (``booked``) and takes off exactly those.
    """

    __slots__ = ("_depart_cbs", "b_end", "b_start", "booked", "busy_to", "c_area", "c_busy", "free", "free1", "law",
                 "on_start", "per_byte", "settler", "union_end", "unordered")

    def __init__(self, env: simpy.Environment, name: str, servers: int, service: Callable[[Job], float],
                 on_start: Callable[[float, float], None] | None = None):
        super().__init__(env, name, servers, service)
        self._depart_cbs: list[Callable[[Ev], None]] = [self._depart]
        self.on_start = on_start
        """Told ``(start, service)`` of every service as it is booked (at the job's arrival, in the order the
        services start: FCFS starts never go back in time), e.g. ``sim.des.model.DieProgramLocks.book``."""
        self.free = [0.0] * servers
        """When each server is next free (a heap; ``free1`` for a single server)."""
        self.free1 = 0.0
        self.c_area = 0.0
        self.c_busy = 0.0
        self.union_end = 0.0
        """When the last booked busy period ends (the time at least one server is busy, booked up to it)."""
        self.booked = False
        """Whether the station keeps its bookings (``reached_ahead``): ``b_start`` and ``b_end`` hold the (start, end)
        of the services booked and not over when the meter was last read (in start order; one over behind one
        that is not stays until those before it are over). Two lists of floats trimmed in place: no tuple per
        service (a deep station holds thousands: GC work) and no list rebuilt per meter read."""
        self.b_start: list[float] = []
        self.b_end: list[float] = []
        self.unordered = False
        """Whether arrivals may be booked out of time order (``reached_out_of_order``)."""
        self.busy_to = 0.0
        """With ``unordered``: the time up to which ``c_busy`` holds the busy time (settled when the meter is read)."""
        self.law = SERVICE_CALL
        self.per_byte = 0.0
        self.settler: Callable[[float], None] | None = None
        """Books, before the meter is read at ``now``, the services that arrive by then and are still held back
        (``sim.des.dies.BookedOperations.settle``: a write's later NAND operations)."""

    def service_law(self, law: int, per_byte: float = 0.0) -> None:
        """Compute the service time inline (``SERVICE_BYTES``, ``SERVICE_COST``): the hot path's commonest laws,
        the same number ``service`` gives (which stays the station's service for anything else that reads it)."""
        self.law = law
        self.per_byte = per_byte

    def reached_ahead(self) -> None:
        """Arrivals may be booked before they happen (a ``Chain`` part after the first): keep the bookings, so
        that the meter takes off what lies beyond ``now`` exactly, gaps included."""
        self.booked = True

    def reached_out_of_order(self) -> None:
        """Arrivals may be booked out of time order (``sim.des.model.DieThenUnit``: a read booked from when its die is
        free, others booked meanwhile for earlier times). The queue is FCFS by booking; the bookings are kept in start
        order and the busy time (at least one server busy) is settled from them when the meter is read."""
        self.booked = True
        self.unordered = True

    def commit(self, job: Job, t: float) -> float:
        """Book ``job`` arriving at ``t`` (no earlier than any arrival booked before) and return when it leaves."""
        law = self.law
        if law == SERVICE_BYTES:
            s = job.size * self.per_byte
        elif law == SERVICE_COST:
            s = job.cost
        else:
            s = self.service(job)
        on_start = self.on_start
        if self.capacity == 1:
            f = self.free1
            start = t if t > f else f
            d = start + s
            if on_start is not None:
                on_start(start, s)
            if self.booked:
                if self.unordered:
                    self._book_unordered(start, d, s)
                    self.free1 = d
                    return d
                self.b_start.append(start)
                self.b_end.append(d)
            self.c_area += s
            self.free1 = d
            self.c_busy += s
            self.union_end = d
            return d
        heap = self.free
        f = heap[0]
        start = t if t > f else f
        d = start + s
        if on_start is not None:
            on_start(start, s)
        if self.booked:
            if self.unordered:
                self._book_unordered(start, d, s)
                heapreplace(heap, d)
                return d
            self.b_start.append(start)
            self.b_end.append(d)
        self.c_area += s
        heapreplace(heap, d)
        u = self.union_end
        if d > u:
            self.c_busy += d - (start if start > u else u)
            self.union_end = d
        return d

    def _book_unordered(self, start: float, d: float, s: float) -> None:
        """Keep a booking in start order (``unordered``); its busy time is settled by ``_account``."""
        i = bisect_right(self.b_start, start)
        self.b_start.insert(i, start)
        self.b_end.insert(i, d)
        self.c_area += s

    def __call__(self, job: Job) -> None:
        now = self.clock.now
        d = self.commit(job, now)
        if d > now:
            spare = self._spare  # _push, inlined (a visit of the hot path)
            if spare:
                ev = spare.pop()
            else:
                ev = Ev(self.env)
            ev._value = job
            ev.callbacks = self._depart_cbs
            self.clock.push(ev, d)
        else:
            advance(job)

    def _depart(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)

    def _account(self) -> None:
        now = self.clock.now
        if self.booked:
            if self.settler is not None:
                self.settler(now)
            self._account_booked(now)
            return
        if self.capacity == 1:
            ahead = self.free1 - now
            self.area = self.c_area - (ahead if ahead > 0.0 else 0.0)
        else:
            ahead = 0.0
            for f in self.free:
                if f > now:
                    ahead += f - now
            self.area = self.c_area - ahead
        u = self.union_end - now
        self.busy_area = self.c_busy - (u if u > 0.0 else 0.0)
        self.t_last = now

    def _account_booked(self, now: float) -> None:
        """``_account`` of a station that keeps its bookings (``reached_ahead``)."""
        # exactly what the bookings still to come hold beyond now (starts never go back in time)
        starts, ends = self.b_start, self.b_end
        if self.unordered:
            self._settle_busy(now)
        n = len(ends)
        i = 0
        while i < n and ends[i] <= now:
            i += 1
        if i:
            del starts[:i]
            del ends[:i]
        area_ahead = 0.0
        busy_ahead = 0.0
        cur = now  # never below now: a booking's part beyond now starts at the later of its start and now
        k = bisect_right(starts, now)
        for j, end in enumerate(ends):
            if j < k:
                # started by now: the part beyond now runs from now (and from cur for the busy time)
                if end > now:
                    area_ahead += end - now
                    if end > cur:
                        busy_ahead += end - cur
                        cur = end
            else:
                # still to start (the long queue of a deep station): all of it lies beyond now
                start = starts[j]
                area_ahead += end - start
                if end > cur:
                    busy_ahead += end - (start if start > cur else cur)
                    cur = end
        self.area = self.c_area - area_ahead
        self.busy_area = self.c_busy if self.unordered else self.c_busy - busy_ahead
        self.t_last = now

    def _settle_busy(self, now: float) -> None:
        """``unordered``: add the time from ``busy_to`` to ``now`` at least one booking covers (before the bookings over
        by now are dropped: every one that covers part of it is still kept, in start order)."""
        cur = self.busy_to
        add = 0.0
        for start, end in zip(self.b_start, self.b_end, strict=True):
            if start >= now:
                break
            if end <= cur:
                continue
            e = end if end < now else now
            add += e - (start if start > cur else cur)
            cur = e
        self.c_busy += add
        self.busy_to = now

    def reset(self) -> None:
        self._account()
        self.c_area -= self.area
        self.c_busy -= self.busy_area
        self.area = 0.0
        self.busy_area = 0.0
        self.waited = 0

    def unit_time(self) -> float:
        self._account()
        return self.area


class HostCharge:
    """A hop that occupies one core of the host CPU station for ``us`` + bytes x ``per_byte`` microseconds
    (``job.cost``, which the CPU station's service time reads)."""

    __slots__ = ("cpu", "per_byte", "us")

    def __init__(self, cpu: Station, us: float, per_byte: float):
        self.cpu = cpu
        self.us = us
        self.per_byte = per_byte

    def __call__(self, job: Job) -> None:
        job.cost = self.us + job.size * self.per_byte if self.per_byte > 0.0 else self.us
        self.cpu(job)

    def visit(self, job: Job, t: float) -> float:
        """As a chain part (``host_visit``): set the job's cost and book it on the CPU station (a ``FifoStation``)."""
        per_byte = self.per_byte
        job.cost = self.us + job.size * per_byte if per_byte > 0.0 else self.us
        return cast(FifoStation, self.cpu).commit(job, t)


class Delay:
    """A pure delay with unlimited parallelism (fabric latency, cache acknowledgement, think time);
    ``name`` is its place in the route (``fabric``, ``turnaround``, ``drive3.write_ack``)."""

    __slots__ = ("_cbs", "_spare", "clock", "delay", "env", "fixed", "name")

    def __init__(self, env: simpy.Environment, delay: Callable[[Job], float], name: str = "", fixed: bool = False):
        self.env = env
        self.clock = clock_of(env)
        self.delay = delay
        self.name = name
        self.fixed = fixed
        """Whether every job waits the same time (a constant: jobs leave in the order they came)."""
        self._spare: list[Ev] = []
        self._cbs: list[Callable[[Ev], None]] = [self._leave]

    def __call__(self, job: Job) -> None:
        d = self.delay(job)
        if d <= 0.0:
            advance(job)
        else:
            spare = self._spare  # _push, inlined
            if spare:
                ev = spare.pop()
            else:
                ev = Ev(self.env)
            ev._value = job
            ev.callbacks = self._cbs
            self.clock.push(ev, self.clock.now + d)

    def _leave(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)

    def visit(self, job: Job, t: float) -> float:
        """When ``job``, arriving at ``t``, leaves (its delay is drawn now)."""
        d = self.delay(job)
        return t + d if d > 0.0 else t


class Pool(Meter):
    """A concurrency limit: at most ``slots`` jobs between ``acquire`` and ``release``.

    Models a namespace's queue depth (an IBM i disk arm), an NVMe queue set, a SCSI
    LUN queue depth, a driver thread or a write cache. Waiters are served FIFO.
    """

    __slots__ = ("waiting",)

    def __init__(self, env: simpy.Environment, name: str, slots: int):
        super().__init__(env, name, slots)
        self.waiting: deque[Job] = deque()

    def acquire(self, job: Job) -> None:
        u = self.in_use
        if u < self.capacity:
            now = self.clock.now
            dt = now - self.t_last
            if dt:  # Meter._account, inlined (a pool is visited twice per device I/O)
                if u:
                    self.area += u * dt
                    self.busy_area += dt
                self.t_last = now
            self.in_use = u + 1
            advance(job)
        else:
            self.waited += 1
            self.waiting.append(job)

    def release(self, job: Job) -> None:
        if self.waiting:
            advance(self.waiting.popleft())  # the slot passes straight to the next waiter
        else:
            u = self.in_use
            now = self.clock.now
            dt = now - self.t_last
            if dt:
                self.area += u * dt
                self.busy_area += dt
                self.t_last = now
            self.in_use = u - 1
        advance(job)

    @property
    def load(self) -> int:
        return self.in_use + len(self.waiting)


class SubchannelPool(Meter):
    """z/VM HyperPAV: each base EDEV runs one I/O at a time; a shared pool of alias
    EDEVs lets an I/O start while its base is busy (seed 003, Tables 2 and 3).

    ``job.member`` names the base device; ``job.token`` records what the I/O holds
    (the base, or -1 for an alias). Utilization counts bases and aliases together.
    """

    __slots__ = ("alias_fails", "alias_tries", "aliases", "aliases_free", "bases_busy", "waiting")

    def __init__(self, env: simpy.Environment, name: str, bases: int, aliases: int):
        super().__init__(env, name, bases + aliases)
        self.bases_busy = [False] * bases
        self.aliases = aliases
        self.aliases_free = aliases
        self.waiting: deque[Job] = deque()
        self.alias_tries = 0
        self.alias_fails = 0

    def acquire(self, job: Job) -> None:
        b = job.member
        if not self.bases_busy[b]:
            self.bases_busy[b] = True
            job.token = b
        elif self.aliases_free:
            self.alias_tries += 1
            self.aliases_free -= 1
            job.token = -1
        else:
            if self.aliases:
                self.alias_tries += 1
                self.alias_fails += 1
            self.waited += 1
            self.waiting.append(job)
            return
        self._account()
        self.in_use += 1
        advance(job)

    def release(self, job: Job) -> None:
        token = job.token
        nxt: Job | None = None
        if token >= 0:
            for i, w in enumerate(self.waiting):
                if w.member == token:
                    nxt = w
                    del self.waiting[i]
                    break
            if nxt is None:
                self.bases_busy[token] = False
        elif self.waiting:
            nxt = self.waiting.popleft()
        else:
            self.aliases_free += 1
        if nxt is None:
            self._account()
            self.in_use -= 1
        else:
            nxt.token = token
            advance(nxt)
        advance(job)


def _fewer_by(heap: list[float], t: float, k: int) -> bool:
    """Whether fewer than ``k`` times of ``heap`` (a heap) are ``t`` or earlier: a walk down the heap from its root
    through those times only, stopped at the ``k``-th (not a sort of the whole heap: a write cache books thousands)."""
    n = len(heap)
    if k > n:
        return True
    if k <= 0:
        return False
    stack = [0] if heap[0] <= t else []
    found = 0
    while stack:
        i = stack.pop()
        found += 1
        if found >= k:
            return False
        c = 2 * i + 1
        if c < n and heap[c] <= t:
            stack.append(c)
        if c + 1 < n and heap[c + 1] <= t:
            stack.append(c + 1)
    return True


class BookedPool(Pool):
    """A ``Pool`` whose releases may be booked ahead of time (``release_at``): a flash device's write cache,
    whose slot is freed when a destage's program ends, a time its ``Chain`` knows when the destage starts.

    A booked release costs no event: the releases due by now are done, in time order and at their own times,
    before anything else looks at the pool (an acquire, a release, a meter read, ``load``), so the occupancy
    integrates exactly as it does when each release is an event at its time (the same operations on the same
    floats, in the same order: time order; two at the same time add nothing to the area in either order).
    A slot must pass to a waiter at the release's own time, so while jobs wait an event is kept on the queue
    at the earliest booked release (``_wake``); a release at that time hands its slot on as ``Pool.release``.
    """

    __slots__ = ("_wake_cb", "due", "due_in", "feeder", "held_from", "on_wait", "settler", "wait_at", "wakes")

    def __init__(self, env: simpy.Environment, name: str, slots: int):
        super().__init__(env, name, slots)
        self.feeder: FifoStation | None = None
        """The station whose departures book every release of the pool, each at a departure (``releases_after``)."""
        self.wait_at: deque[float] = deque()
        """When the jobs that joined the waiters ahead of their arrival arrive (``wait_from``; counted in ``waited``
        then)."""
        self.due: list[float] = []
        """The booked releases still to do (a heap of times)."""
        self.due_in: list[float] = []
        """The booked acquires still to do (a heap of times: a ``WriteEntry`` books them in time order, a
        ``CacheEntry`` behind a station of several servers in the order its jobs enter it)."""
        self.wakes: list[float] = []
        """The times of the wake events on the queue (a heap)."""
        self._wake_cb = self._wake
        self.settler: Callable[[float], None] | None = None
        """Books the releases of the work that arrives by ``now`` and is still held back, before anything looks at the
        pool (``settles_with``)."""
        self.on_wait: Callable[[], None] | None = None
        """Told whenever jobs wait, so that the held-back work comes by events while they do (``settles_with``)."""
        self.held_from = math.inf
        """When the earliest held-back work arrives (the settler keeps it): before then there is nothing to book."""

    def settles_with(self, settler: Callable[[float], None], on_wait: Callable[[], None]) -> None:
        """The pool's releases are booked by work that may be held back until something looks (``sim.des.dies.
        BookedOperations``: a write's later NAND operations): ``settler(now)`` books what arrives by ``now``, called
        before every look (an acquire, a release, a booking question, a meter read, a wake); ``on_wait()`` is told
        while jobs wait (a slot must then pass at the release's own time, so the held-back work comes by events)."""
        self.settler = settler
        self.on_wait = on_wait

    def _catch_up(self, now: float) -> None:
        if now >= self.held_from and self.settler is not None:
            self.settler(now)

    def releases_after(self, feeder: FifoStation) -> None:
        """Every release of the pool is booked at a departure of ``feeder`` (a flash device's program units, whose
        ``Chain`` books the slot's release at the program's end), which is reached in time order: no release
        booked later comes before the time its next server is free (``wait_from``'s proof)."""
        self.feeder = feeder

    def _settle(self, now: float) -> None:
        """Do the booked acquires and releases due by ``now`` (as ``Pool.acquire`` and ``Pool.release`` at their
        times, in time order; a release before an acquire at the same time)."""
        due, ins = self.due, self.due_in
        at = self.wait_at
        while at and at[0] <= now:
            at.popleft()
            self.waited += 1
        while True:
            if ins and ins[0] <= now and not (due and due[0] <= ins[0]):
                a = heappop(ins)
                u = self.in_use
                dt = a - self.t_last
                if dt:
                    if u:
                        self.area += u * dt
                        self.busy_area += dt
                    self.t_last = a
                self.in_use = u + 1
                continue
            if not (due and due[0] <= now):
                return
            r = heappop(due)
            if self.waiting:  # only at a wake (r is now): the slot passes straight to the next waiter
                advance(self.waiting.popleft())
                continue
            u = self.in_use
            dt = r - self.t_last
            if dt:
                self.area += u * dt
                self.busy_area += dt
                self.t_last = r
            self.in_use = u - 1

    def settle_now(self) -> None:
        """Do the booked acquires and releases due by now."""
        now = self.clock.now
        self._catch_up(now)
        if self.due or self.due_in:
            self._settle(now)

    def wake_for_waiters(self) -> None:
        """Keep a wake event at the earliest booked release while jobs wait (``_wake_for_waiters``)."""
        self._wake_for_waiters()

    def _wake_for_waiters(self) -> None:
        """Jobs wait: keep an event at the earliest booked release (one is enough: each wake books the next)."""
        due = self.due
        if self.waiting and self.on_wait is not None:
            self.on_wait()
        if due and self.waiting and not (self.wakes and self.wakes[0] <= due[0]):
            t = due[0]
            heappush(self.wakes, t)
            ev = Ev(self.env)
            ev._value = None
            ev.callbacks = [self._wake_cb]
            self.clock.push(ev, t)  # at t itself: the release's own time

    def _wake(self, event: Ev) -> None:
        now = self.clock.now
        wakes = self.wakes
        while wakes and wakes[0] <= now:
            heappop(wakes)
        self._catch_up(now)
        self._settle(now)
        self._wake_for_waiters()

    def release_at(self, job: Job, t: float) -> float:
        """Book the release of ``job``'s slot at ``t`` (now or later; a ``Chain`` part) and return ``t``."""
        heappush(self.due, t)
        if self.waiting:
            self._wake_for_waiters()
        return t

    def can_book(self, now: float, t: float) -> bool:
        """Whether a slot taken at ``t`` (now or later, after every acquire booked before) surely finds one free: no
        job waits, and the slots in use by now with the acquires booked still to come, less the releases booked by
        ``t`` (done before an acquire at the same time), leave one; a release booked meanwhile only frees more."""
        self._catch_up(now)
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        if self.waiting:
            return False
        need = self.in_use + len(self.due_in) - self.capacity + 1  # how many booked releases must come by t
        if need <= 0:
            return True
        return not _fewer_by(self.due, t, need)

    def surely_waits(self, now: float, t: float) -> bool:
        """Whether a job acquiring at ``t`` (now or later, after every acquire booked before and every job waiting
        now) surely waits, with every release by ``t`` passing to a job that waits now: the releases booked by
        ``t`` are fewer than the slots it needs freed and no more than the jobs waiting, and none booked later comes
        by ``t`` (``releases_after``: the feeder's servers are all busy beyond ``t``)."""
        self._catch_up(now)
        feeder = self.feeder
        if feeder is None or not (feeder.free1 if feeder.capacity == 1 else feeder.free[0]) > t:
            return False
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        w = len(self.waiting)
        need = self.in_use + len(self.due_in) + w - self.capacity + 1  # releases by t for a slot left at t
        if need <= 0:
            return False
        k = need if need <= w else w + 1  # fewer than k releases by t: fewer than need, no more than w
        return _fewer_by(self.due, t, k)

    def wait_from(self, job: Job, t: float) -> None:
        """``job`` acquires at ``t`` and waits (``surely_waits``): it joins the waiters now, behind every job waiting
        (the slots that come by ``t`` all pass to them), and counts as waited at ``t``."""
        self.waiting.append(job)
        self.wait_at.append(t)
        self._wake_for_waiters()

    def acquire_at(self, t: float) -> None:
        """Book the acquire of a slot at ``t`` (now or later; ``can_book`` said one is free)."""
        heappush(self.due_in, t)

    def acquire(self, job: Job) -> None:
        now = self.clock.now
        self._catch_up(now)
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        Pool.acquire(self, job)
        if self.waiting:
            self._wake_for_waiters()

    def release(self, job: Job) -> None:
        now = self.clock.now
        self._catch_up(now)
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        Pool.release(self, job)

    def _account(self) -> None:
        now = self.clock.now
        self._catch_up(now)
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        Meter._account(self)

    @property
    def load(self) -> int:
        now = self.clock.now
        self._catch_up(now)
        if self.due or self.due_in or self.wait_at:
            self._settle(now)
        return self.in_use + len(self.waiting) - len(self.wait_at)  # a waiter that joined ahead counts from its arrival


class BookedRelease:
    """The release of a ``BookedPool`` slot that ends a background child (``ReleaseBehind``: a write-back
    destage). As a hop it releases now (``BookedPool.release``); ``sim.des.model.Fusion`` folds it into the
    ``Chain`` of timed hops before it, which then books the release at its own end time (``BookedPool.release_at``)
    and drops the child: no event for the release."""

    __slots__ = ("pool",)

    def __init__(self, pool: BookedPool):
        self.pool = pool

    def __call__(self, job: Job) -> None:
        self.pool.release(job)


class WriteEntry:
    """A cached write's way in: a channel of single-server stations (``FifoStation``: S2's adapter uplink then drive
    link, z/VM's link), then a slot of the device's write cache (a ``BookedPool``), then the write acknowledgement
    (a ``Delay``), with one event instead of two.

    The route reads ``(entry, cache.acquire, entry.acknowledge, ...)``. Every write to the cache comes through
    the one channel, and each of its stations after the first is fed by nothing but the one before it
    (``sim.des.model._Hops.check_entries`` proves both from the routes), so its departures keep the order of its
    arrivals and the slots are taken and the acknowledgements drawn in the order the channel is entered. Entering
    it now, a write learns when it leaves (Lindley's recursion, station by station as a ``Chain`` does: the stations
    after the first are reached ahead of time); when the cache surely has a slot free then
    (``BookedPool.can_book``) and no write before it is still on the way to its acknowledgement by events, the slot
    is booked at that time, the acknowledgement drawn and the write moves on, past the acquire and the
    acknowledgement, with one event at the acknowledgement's end: the times, the draws and their order are those
    of the event walk. Otherwise the write leaves the channel by an event and takes the acquire and
    ``acknowledge`` hops.
    """

    __slots__ = ("_cb", "_pass_cb", "_spare", "ack", "cache", "channel", "clock", "env", "parts", "passing", "slow")

    def __init__(self, env: simpy.Environment, channel: Sequence[FifoStation], cache: BookedPool, ack: Delay):
        if not channel or any(st.capacity != 1 for st in channel):
            raise ValueError(f"{cache.name}: a write entry's channel is one or more single-server stations")
        self.env = env
        self.clock = clock_of(env)
        self.channel: tuple[FifoStation, ...] = tuple(channel)
        self.parts: tuple[Callable[[Job, float], float], ...] = tuple(st.commit for st in channel)
        """Each station's ``commit``, in channel order (a ``Chain``'s parts)."""
        for st in self.channel[1:]:
            st.reached_ahead()
        self.cache = cache
        self.ack = ack
        self.slow = 0
        """Writes between the channel and their acknowledgement's draw on the way by events."""
        self.passing = 0
        """Of those, the writes still in the channel (an event at their departure)."""
        self._spare: list[Ev] = []
        self._cb: list[Callable[[Ev], None]] = [self._leave]
        self._pass_cb: list[Callable[[Ev], None]] = [self._pass]

    def __call__(self, job: Job) -> None:
        now = self.clock.now
        t = now
        for st in self.channel:
            t = st.commit(job, t)
        cache = self.cache
        if self.slow == 0 and cache.can_book(now, t):
            cache.acquire_at(t)
            t = self.ack.visit(job, t)
            job.step += 2  # the acquire and the acknowledgement are done
        elif self.passing == 0 and cache.surely_waits(now, t):
            # behind every write waiting (none is in the channel): it waits from t, its slot's grant takes it to
            # the acknowledgement, with no event at its departure
            self.slow += 1
            job.step += 1
            cache.wait_from(job, t)
            return
        elif t > now:
            self.slow += 1
            self.passing += 1
            _push(self.clock, self._spare, t, job, self._pass_cb)
            return
        else:
            self.slow += 1
        if t > now:
            _push(self.clock, self._spare, t, job, self._cb)
        else:
            advance(job)

    def _leave(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)

    def _pass(self, event: Ev) -> None:
        """A write that came by events leaves the channel."""
        self.passing -= 1
        self._spare.append(event)
        advance(event._value)

    def acknowledge(self, job: Job) -> None:
        """The acknowledgement of a write that came by events (its slot taken)."""
        self.slow -= 1
        self.ack(job)


class CacheEntry:
    """A write's way into a write-back cache: a ``FifoStation`` of any number of servers (a storage server's
    controller), then a slot of the cache (a ``BookedPool``), then the cache's acknowledgement (a ``Delay``), with
    one event instead of two (``WriteEntry``'s pattern for a station whose departures need not keep the order of
    its arrivals; the two can merge).

    The route reads ``(entry, entry.acquire, entry.acknowledge, ...)``, and every slot of the cache is taken
    through the entry (``sim.des.model`` checks). Entering the station now, a write learns when it leaves
    (Lindley's recursion); when the cache surely has a slot free then (``BookedPool.can_book``: slots in use
    and booked leave one) and no write before it is still on the way to its slot by events, the slot is booked
    at that time (a heap: the departures of several servers come out of order), the acknowledgement drawn now,
    and the write moves on past the acquire and the acknowledgement with one event at the acknowledgement's end.
    Otherwise the write leaves the station by an event and takes the ``acquire`` and ``acknowledge`` hops; its
    ``acquire`` counts the slots booked and still to be taken as taken (a write that went by events can leave a
    station of several servers before one that booked its slot earlier: it waits rather than take that slot), so
    slots in use and booked never exceed the cache.

    While the cache does not fill, the times are those of the event walk; the acknowledgement is drawn when the
    write enters the station rather than when it leaves (the same law, another draw order: not byte-identical to
    the event walk where the delay's stream is shared, as a SAN cache hit's is with the reads'). Near a full
    cache, a write that booked its slot keeps it ahead of a later write that leaves the station first (the event
    walk grants the slot to the first to leave). With one server (``WriteEntry``'s case) no slot is ever booked
    ahead of a write that went by events, and ``acquire`` is ``BookedPool.acquire``.
    """

    __slots__ = ("_cb", "_spare", "ack", "cache", "clock", "env", "slow", "station")

    def __init__(self, env: simpy.Environment, station: FifoStation, cache: BookedPool, ack: Delay):
        self.env = env
        self.clock = clock_of(env)
        self.station = station
        self.cache = cache
        self.ack = ack
        self.slow = 0
        """Writes between the station and their slot on the way by events."""
        self._spare: list[Ev] = []
        self._cb: list[Callable[[Ev], None]] = [self._leave]

    def __call__(self, job: Job) -> None:
        self.enter_at(job, self.clock.now)

    def enter_at(self, job: Job, arrival: float) -> None:
        """Enter the station at ``arrival`` (now, or later when nothing can reach the station before then unbooked:
        ``sim.des.dies.DieWriteEntry``)."""
        now = self.clock.now
        t = self.station.commit(job, arrival)
        if self.slow == 0 and self.cache.can_book(now, t):
            self.cache.acquire_at(t)
            t = self.ack.visit(job, t)
            job.step += 2  # the acquire and the acknowledgement are done
        else:
            self.slow += 1
        if t > now:
            _push(self.clock, self._spare, t, job, self._cb)
        else:
            advance(job)

    def _leave(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)

    def acquire(self, job: Job) -> None:
        """The slot of a write that came by events: taken (``BookedPool.acquire``) when no job waits and the slots
        in use and those booked still to be taken leave one; else the write waits in line, woken by the releases."""
        cache = self.cache
        cache.settle_now()
        if cache.waiting or cache.in_use + len(cache.due_in) >= cache.capacity:
            cache.waited += 1
            cache.waiting.append(job)
            cache.wake_for_waiters()
            return
        cache.acquire(job)

    def acknowledge(self, job: Job) -> None:
        """The acknowledgement of a write that came by events (its slot taken)."""
        self.slow -= 1
        self.ack(job)


class JobFactory:
    """A free list of Job objects, so a long run does not allocate one per I/O."""

    __slots__ = ("free",)

    def __init__(self) -> None:
        self.free: list[Job] = []

    def new(self) -> Job:
        return self.free.pop() if self.free else Job()

    def recycle(self, job: Job) -> None:
        job.parent = None
        job.phases = []
        self.free.append(job)


class Fork:
    """Start a background child on ``route`` (e.g. destaging a cached write) and move on at once."""

    __slots__ = ("body", "jobs", "route")

    def __init__(self, route: Sequence[Hop], jobs: JobFactory):
        self.body: tuple[Hop, ...] = tuple(route)
        """The child's hops (its route without the final recycling)."""
        self.route: tuple[Hop, ...] = (*self.body, jobs.recycle)
        self.jobs = jobs

    def set_body(self, body: Sequence[Hop]) -> None:
        """Replace the child's hops (``sim.des.model`` fuses them); a body ending in a ``Chain`` that drops
        the child needs no recycling hop."""
        self.body = tuple(body)
        last = self.body[-1] if self.body else None
        done = isinstance(last, Chain) and last.end == CHAIN_DROP
        self.route = self.body if done else (*self.body, self.jobs.recycle)

    def __call__(self, job: Job) -> None:
        child = self.jobs.new()
        child.route = self.route
        child.step = -1
        child.op = job.op
        child.size = job.size
        child.member = job.member
        child.t0 = job.t0
        advance(child)
        advance(job)


Planner = Callable[[Job], list[list[Child]]]


class Split:
    """The volume layer: turn one I/O into device I/Os in phases and wait for them.

    ``planner(job)`` returns phases; each phase is a list of (route, bytes, op, member) children
    started together; the next phase starts when all children of the current one
    have finished (RAID-5/6 read-modify-write reads old data and parity, then writes).
    Child routes must end with ``split.join`` (or a ``Chain`` that joins at a known time,
    ``join_at``): the phase ends at the latest time a child joins at, with one event.
    """

    __slots__ = ("_after_cb", "_phase_cbs", "_spare", "clock", "env", "inner", "jobs", "planner")

    def __init__(self, planner: Planner, jobs: JobFactory, env: simpy.Environment | None = None):
        self.planner = planner
        self.jobs = jobs
        self.env = env
        self.clock: Clock | None = clock_of(env) if env is not None else None
        self.inner: list[Sequence[Hop]] = []
        """Child routes the planner alone knows (a page split's channel program), for ``sim.des.model`` to fuse."""
        self._phase_cbs: list[Callable[[Ev], None]] = [self._phase_event]
        """Every phase event's callbacks (one list, shared: ``_push``; the events are recycled through ``_spare``)."""
        self._after_cb: list[Callable[[Ev], None]] = [self._after_delay]
        self._spare: list[Ev] = []

    def __call__(self, job: Job) -> None:
        job.phases = self.planner(job)
        job.phase = 0
        self._start_phase(job)

    def _start_phase(self, job: Job) -> None:
        children = job.phases[job.phase]
        job.pending = len(children)
        job.t_done = self.clock.now if self.clock is not None else 0.0
        new = self.jobs.new
        for route, nbytes, op, member in children:
            child = new()
            child.route = route
            child.step = -1
            child.parent = job
            child.size = nbytes
            child.op = op
            child.member = member
            child.t0 = job.t0
            child.slot = job.slot
            advance(child)

    def join(self, child: Job) -> None:
        parent = child.parent
        self.jobs.recycle(child)
        assert parent is not None
        parent.pending -= 1
        if parent.pending == 0:
            clock = self.clock
            if clock is not None and parent.t_done > clock.now:
                now = clock.now
                if parent.phase + 1 == len(parent.phases):
                    after = parent.route[parent.step + 1] if parent.step + 1 < len(parent.route) else None
                    if isinstance(after, Delay) and after.fixed:
                        # the split's end, then a constant delay (z/VM's turnaround): one event at the delay's end,
                        # at the time the two events give (the phase event's time, then the delay's end)
                        t = now + (parent.t_done - now)
                        wait = after.delay(parent)
                        if wait > 0.0:
                            _push(clock, self._spare, t + wait, parent, self._after_cb)
                            return
                _push(clock, self._spare, now + (parent.t_done - now), parent, self._phase_cbs)  # schedule's time, bit for bit
            else:
                self._phase_done(parent)

    def join_at(self, child: Job, t: float) -> None:
        """``child`` is done at ``t`` (now or later): the phase ends when its last child is done."""
        parent = child.parent
        assert parent is not None
        if t > parent.t_done:
            parent.t_done = t
        self.join(child)

    def _phase_event(self, event: Ev) -> None:
        self._spare.append(event)
        self._phase_done(event._value)

    def _after_delay(self, event: Ev) -> None:
        """The split's last phase is over and the constant delay after it too: move on past the delay."""
        parent: Job = event._value
        self._spare.append(event)
        parent.phase += 1
        parent.phases = []
        parent.step += 1
        advance(parent)

    def _phase_done(self, parent: Job) -> None:
        parent.phase += 1
        if parent.phase < len(parent.phases):
            self._start_phase(parent)
        else:
            parent.phases = []
            advance(parent)


CHAIN_NEXT: Final = 0
"""A ``Chain`` that ends with one event taking the job to its next hop."""
CHAIN_JOIN: Final = 1
"""A ``Chain`` that ends a split's child: it joins at its end time."""
CHAIN_DROP: Final = 2
"""A ``Chain`` that ends a background child: its work is booked, the child dropped."""


class Chain:
    """Consecutive timed hops of a route walked in one go: a station (or a delay, a host CPU charge)
    the job reaches now, then pure delays and stations fed by nothing but the hop before them, so
    that nothing can arrive there out of time order (``sim.des.model.Fusion`` proves it from the
    routes). The job's time runs ahead through ``parts`` (each returns when the job leaves it) and
    one event takes it to the next hop (``end`` CHAIN_NEXT); a chain that ends a split's child joins at
    that time instead (CHAIN_JOIN: one event per phase, not per child), one that ends a background child
    books its work and drops it (CHAIN_DROP: no event at all).
    """

    __slots__ = ("_cbs", "_kinds", "_objs", "_spare", "clock", "end", "env", "jobs", "parts", "split")

    def __init__(self, env: simpy.Environment, parts: Sequence[Callable[[Job, float], float]], end: int = CHAIN_NEXT,
                 split: Split | None = None, jobs: JobFactory | None = None):
        self.env = env
        self.clock = clock_of(env)
        self.parts = tuple(parts)
        kinds = [part_kind(p) for p in self.parts]
        self._kinds: tuple[int, ...] = tuple(k for k, _ in kinds)
        """Each part's ``PART_*`` (how ``walk`` calls it)."""
        self._objs: tuple[object, ...] = tuple(o for _, o in kinds)
        """Each part's object (``part_kind``)."""
        self.end = end
        self.split = split
        self.jobs = jobs
        self._spare: list[Ev] = []
        self._cbs: list[Callable[[Ev], None]] = [self._leave]

    def _leave(self, event: Ev) -> None:
        self._spare.append(event)
        advance(event._value)

    def walk(self, job: Job, t: float) -> float:
        """Take ``job``, arriving at ``t``, through the parts; when it leaves the last."""
        kinds = self._kinds
        objs = self._objs
        for i in range(len(kinds)):
            k = kinds[i]
            o = objs[i]
            if k == PART_STATION:
                t = cast(FifoStation, o).commit(job, t)
            elif k == PART_DELAY:
                t = cast(Delay, o).visit(job, t)
            elif k == PART_RELEASE:
                t = cast(BookedPool, o).release_at(job, t)
            elif k == PART_HOST:
                t = cast(HostCharge, o).visit(job, t)
            else:
                t = cast(Callable[[Job, float], float], o)(job, t)
        return t

    def __call__(self, job: Job) -> None:
        now = self.clock.now
        t = self.walk(job, now)
        end = self.end
        if end == CHAIN_NEXT:
            if t > now:
                spare = self._spare  # _push, inlined
                if spare:
                    ev = spare.pop()
                else:
                    ev = Ev(self.env)
                ev._value = job
                ev.callbacks = self._cbs
                self.clock.push(ev, t)
            else:
                advance(job)
        elif end == CHAIN_JOIN:
            split = self.split
            assert split is not None
            split.join_at(job, t)
        else:
            jobs = self.jobs
            assert jobs is not None
            jobs.recycle(job)


def host_visit(charge: HostCharge) -> Callable[[Job, float], float]:
    """``charge`` as a chain part: set the job's cost and book it on the CPU station (a ``FifoStation``)."""
    assert isinstance(charge.cpu, FifoStation)
    return charge.visit


PART_CALL: Final = 0
"""A chain part called as it is (any ``(job, t) -> t``)."""
PART_STATION: Final = 1
"""... a ``FifoStation``'s ``commit``, called on the station (a compiled call: no bound method, no float boxed)."""
PART_DELAY: Final = 2
"""... a ``Delay``'s ``visit``."""
PART_RELEASE: Final = 3
"""... a ``BookedPool``'s ``release_at``."""
PART_HOST: Final = 4
"""... a ``HostCharge``'s ``visit``."""


def part_kind(part: Callable[[Job, float], float]) -> tuple[int, object]:
    """How a ``Chain`` calls ``part``: (``PART_*``, the object whose method it is, or the part itself for ``PART_CALL``).
    The same method on the same object: only the call is direct."""
    owner = getattr(part, "__self__", None)
    name = getattr(part, "__name__", "")
    if isinstance(owner, FifoStation) and name == "commit":
        return PART_STATION, owner
    if isinstance(owner, Delay) and name == "visit":
        return PART_DELAY, owner
    if isinstance(owner, BookedPool) and name == "release_at":
        return PART_RELEASE, owner
    if isinstance(owner, HostCharge) and name == "visit" and isinstance(owner.cpu, FifoStation):
        return PART_HOST, owner
    return PART_CALL, part


def make_route(*hops: Any) -> tuple[Hop, ...]:
    """A route from hops, skipping ``None`` (a hop a configuration does not have); a tuple of
    hops (a multi-hop stage, e.g. a CPU charge then a serialized section) is spliced in."""
    route: list[Hop] = []
    for h in hops:
        if h is None:
            continue
        if isinstance(h, tuple):
            route.extend(x for x in h if x is not None)
        else:
            route.append(h)
    return tuple(route)
