"""The DES backend: turn a route description (sim/route/) into engine components (DESIGN.md section 3).

``build`` is one interpreter for every attachment: it creates the elements of the route's layout
(``sim.route.steps.layout``) in the layout's DES order (random streams are handed out in that order,
sim/des/rng.py ``Streams``), and turns each device I/O's steps into hops (``_Hops``), per volume member,
op and variant; the volume layer splits a logical I/O into those device I/Os. Every number comes
from the description (``sim.route.describe``); nothing numeric is derived here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any

import simpy

from models.scenario import Scenario
from sim.des.components import (
    CHAIN_DROP,
    CHAIN_JOIN,
    CHAIN_NEXT,
    READ,
    SERVICE_BYTES,
    SERVICE_COST,
    WRITE,
    BookedPool,
    BookedRelease,
    CacheEntry,
    Chain,
    Child,
    Delay,
    FifoStation,
    Fork,
    Hop,
    HostCharge,
    Job,
    JobFactory,
    Meter,
    Pool,
    Split,
    Station,
    SubchannelPool,
    WriteEntry,
    _advance_event,
    advance,
    clock_of,
    host_visit,
    make_route,
    schedule,
)
from sim.des.dies import DieDevice, DieWriteEntry
from sim.des.rng import Streams, UnitSampler
from sim.route.describe import describe
from sim.route.elements import Channel, DeviceBank, LinkBank, PoolBank, PortBank, ServiceLaw, StationBank, VolumeSplit, instance_of
from sim.route.flash import FlashParameters
from sim.route.host import Charge, ResolvedHost
from sim.route.links import us_per_byte
from sim.route.steps import (
    CHANNEL,
    MEDIA,
    TO_HOST,
    WHOLE,
    Acquire,
    Complete,
    Cross,
    Device,
    Pages,
    PerInstance,
    Release,
    ReleaseBehind,
    RouteLayout,
    Serve,
    Step,
    SubchannelBank,
    Submit,
    Transfer,
    Wait,
    layout,
)
from sim.route.steps import Delay as DelayElement
from sim.route.volume import Volume


@dataclass
class Model:
    """A built I/O path: the logical route, every meter, the host CPU and the capacity."""

    route: tuple[Hop, ...]
    meters: list[Meter]
    cpu: Station | None
    capacity_bytes: int
    closed_affinity: bool
    uses_offsets: bool = True
    notes: dict[str, Any] = field(default_factory=dict)
    workload_capacity: list[int] = field(default_factory=list)
    """Bytes each workload addresses (its placement's own volume; the whole volume without one)."""
    volume: VolumeSplit | None = None
    """The volume layer's description (its failed members and rebuild stream, ``sim.des.arrivals.RebuildArrivals``)."""
    device_routes: Callable[[int, int], Sequence[Hop]] | None = None
    """The route of a device I/O of (member, op), for I/O the volume layer does not plan (a rebuild)."""


def _bytes_time(gbs: float) -> Callable[[Job], float]:
    """Transfer time in us of job.size bytes at ``gbs`` GB/s."""
    per_byte = us_per_byte(gbs)
    return lambda job: job.size * per_byte


def _constant(us: float) -> Callable[[Job], float]:
    return lambda job: us


def _scaled(mean_us: float, unit: UnitSampler) -> Callable[[Job], float]:
    return lambda job: mean_us * unit()


def _varied(service: Callable[[Job], float], b: Builder, cv: float) -> Callable[[Job], float]:
    """``service`` times a lognormal unit of coefficient of variation ``cv`` (unchanged when cv is 0)."""
    if cv <= 0:
        return service
    unit = b.streams.unit("lognormal", cv)
    return lambda job: service(job) * unit()


class Builder:
    """Creates components, registers their meters and hands out random streams in a fixed order."""

    def __init__(self, env: simpy.Environment, streams: Streams, jobs: JobFactory, reads_meet_programs: bool = True):
        self.env = env
        self.streams = streams
        self.jobs = jobs
        self.reads_meet_programs = reads_meet_programs
        """Whether flash devices see reads and writes together (``reads_meet_programs``): else no die locks."""
        self.writes_only = False
        """Whether no read ever reaches a flash device (``DieDevice`` ``writes_only``)."""
        self.meters: list[Meter] = []
        self.released_behind: set[int] = set()
        """The pool banks (by ``id``) whose slots a background route gives back (``ReleaseBehind``): made
        ``BookedPool``, so that a background route fused into a chain books the release at its end."""

    def station(self, name: str, servers: int, service: Callable[[Job], float],
                on_start: Callable[[float, float], None] | None = None) -> Station:
        """A ``FifoStation``: its service is drawn on arrival, so ``service(job)`` may not read the clock; what
        must happen when a service starts is ``on_start(start, service)`` (``DieProgramLocks.book``)."""
        st = FifoStation(self.env, name, servers, service, on_start)
        self.meters.append(st)
        return st

    def pool(self, name: str, slots: int) -> Pool:
        p = Pool(self.env, name, slots)
        self.meters.append(p)
        return p

    def booked_pool(self, name: str, slots: int) -> BookedPool:
        """A pool whose releases a ``Chain`` may book ahead of time (``BookedPool.release_at``)."""
        p = BookedPool(self.env, name, slots)
        self.meters.append(p)
        return p

    def link(self, name: str, gbs: float) -> tuple[Station, Station]:
        """A full-duplex link: (towards the host, towards the device) stations, one transfer at a time each."""
        return self.bytes_station(f"{name}.to_host", gbs), self.bytes_station(f"{name}.to_device", gbs)

    def bytes_station(self, name: str, gbs: float) -> Station:
        """One server moving job.size bytes at ``gbs`` GB/s (a link direction, a channel)."""
        st = self.station(name, 1, _bytes_time(gbs))
        assert isinstance(st, FifoStation)
        st.service_law(SERVICE_BYTES, us_per_byte(gbs))
        return st

    def links(self, bank: LinkBank | None, i: int) -> tuple[Station, Station] | None:
        """Instance ``i`` of a bank of links (None when the bank is absent)."""
        return self.link(bank.names[i], bank.gbs) if bank is not None else None

    def service(self, name: str, servers: int, law: ServiceLaw) -> Station:
        """A station whose service is ``law`` (its random stream is handed out now)."""
        return self.station(name, servers, _scaled(law.mean_us, self.streams.unit(law.law, law.cv)))

    def cpu(self, host: ResolvedHost) -> tuple[Station | None, Hop | None, Hop | None]:
        """The host CPU element (``ResolvedHost.charges``): its station and the submit / completion hops
        that charge it (None when it costs nothing)."""
        charges = host.charges()
        if charges is None:
            return None, None, None
        st = self.station("host_cpu", charges.cores, lambda job: job.cost)
        assert isinstance(st, FifoStation)
        st.service_law(SERVICE_COST)
        submit = _charge(st, charges.submit)
        if charges.serial_us > 0:
            serial_us = charges.serial_us
            serial = self.station("host_stack.serial", 1, lambda job: serial_us)
            submit = make_route(submit, serial)  # type: ignore[assignment]  # spliced by make_route
        complete = _charge(st, charges.complete)
        beside = _charge(st, charges.beside)
        if beside is not None:
            # completion work on another core, overlapping the next I/O: a background child
            complete = make_route(complete, Fork((beside,), self.jobs))  # type: ignore[assignment]  # spliced
        return st, submit, complete


def _charge(cpu: Station, charge: Charge | None) -> Hop | None:
    """A hop that occupies one core of the host CPU for ``charge.us`` + bytes x ``charge.us_per_byte`` microseconds."""
    if charge is None:
        return None
    return HostCharge(cpu, charge.us, charge.us_per_byte if charge.us_per_byte > 0 else 0.0)


class DieProgramLocks:
    """Which NAND dies of a flash device are programming, and the reads that must wait for one.

    A die does one operation at a time: a page program (hundreds of us) keeps it until done.
    The device's units (read units, program units, or eXFlash's shared die pool) stand for its
    parallelism; on top of them a read's data sit on one die (uniformly random over ``dies``),
    and when that die is programming the read waits for the program to end before it can
    read. Writes are programmed wherever a die is free (the flash translation layer places new
    data), so pure reads and pure writes are unaffected: the share of dies programming is the
    program units' utilization, and a read that finds one waits for the rest of its program.
    Evidence: seed 002 Table 5, the eXFlash QD1 67/33 mix at 101.2 us while reads alone take
    119.0 us and writes between reads are acknowledged in about 5 us: the mix's reads take about
    148 us. Seed 003 Table 3, CP paging on one P4510 (146K page reads and 157K page writes per
    second): 1.28 ms per paging SSCH against 0.9 ms with reads that never meet a program.

    Programs are booked when they are known, which may be before they start: a ``FifoStation`` of program
    units knows when each service starts on the job's arrival (``book``, its ``on_start``). Bookings come in
    the order the programs start, so each die is picked as it would be at the start itself; a read looks at
    the program its die runs at the read's own time (``programs``: each die's booked programs, in order).
    """

    __slots__ = ("busy", "clock", "env", "idle", "pick", "programs")

    def __init__(self, env: simpy.Environment, dies: int, uniform: Callable[[], float]):
        self.env = env
        self.clock = clock_of(env)
        self.programs: list[list[float]] = [[] for _ in range(dies)]
        """Each die's programs as start, end, start, end, ... (floats, no tuple per program), in start order: the
        first is the last one started by now (or the first to come), the rest start later."""
        self.idle = list(range(dies))
        self.busy: list[tuple[float, int]] = []
        self.pick = uniform

    def start_program(self, duration: float) -> None:
        """A program of ``duration`` us starts now on a die that is not programming."""
        self.book(self.clock.now, duration)

    def book(self, start: float, duration: float) -> None:
        """A program of ``duration`` us starts at ``start`` (now or later, no earlier than any booked before)
        on a die that is not programming then."""
        busy, idle = self.busy, self.idle
        while busy and busy[0][0] <= start:
            idle.append(heappop(busy)[1])
        if not idle:  # every die programming: the caller's own limit allows no more (not reached)
            idle.append(heappop(busy)[1])
        k = idle.pop()
        end = start + duration
        programs = self.programs[k]
        _started(programs, self.clock.now)
        programs.append(start)
        programs.append(end)
        heappush(busy, (end, k))

    def programmer(self, program_time: Callable[[Job], float]) -> Hop:
        """A hop that programs a write (``program_time``) on a free die and moves on when it is done."""
        env = self.env
        clock = self.clock

        def program(job: Job) -> None:
            d = program_time(job)
            self.book(clock.now, d)
            schedule(env, d, job, _advance_event)

        return program

    def wait_at(self, now: float) -> float:
        """How long a read arriving at ``now`` (the clock's now) waits for its die (uniformly random) to finish programming:
        ``wait_for_own_die``'s wait, for a chain part (``DieThenUnit``)."""
        dies = self.programs
        programs = dies[int(self.pick() * len(dies))]
        _started(programs, now)
        if programs and programs[0] <= now:
            wait = programs[1] - now
            if wait > 0.0:
                return wait
        return 0.0

    def wait_for_own_die(self, job: Job) -> None:
        """Hold a read until its die (uniformly random) has finished programming."""
        dies = self.programs
        now = self.clock.now
        programs = dies[int(self.pick() * len(dies))]
        _started(programs, now)
        wait = programs[1] - now if programs and programs[0] <= now else 0.0
        if wait > 0.0:
            schedule(self.env, wait, job, _advance_event)
        else:
            advance(job)


class DieThenUnit:
    """A read's media stage in one go: the wait for its own die (``DieProgramLocks``, looked at on the read's arrival,
    the clock's now) and then a read unit (a ``FifoStation`` of P_r units), booked on arrival from when the die is free.

    A chain's first part (``Fusion``: the job reaches it now, so the die is looked at when the read arrives, as
    ``DieProgramLocks.wait_for_own_die`` does, and no event marks the die's end). The units are booked out of time
    order (``FifoStation.reached_out_of_order``: their meters stay exact): the unit the read takes is the one free
    first when it arrives, kept through the die wait, so reads that arrive meanwhile find one unit fewer. The
    departures are the event walk's whenever a unit is free for every read, which is all of S4's: at the paging
    load 0 of 128,271 page reads found all 49 units taken (19.7 taken on average at a read's arrival; seed 1,
    20,000 SSCHs). Used for a z/VM channel program's read pages (``Device`` MEDIA, sim/route/steps.py ``_zvm``): one
    event per page instead of one more for each page that finds its die programming."""

    __slots__ = ("clock", "env", "locks", "units")

    def __init__(self, locks: DieProgramLocks, units: FifoStation):
        self.env = locks.env
        self.clock = locks.clock
        self.locks = locks
        self.units = units
        units.reached_out_of_order()

    def visit(self, job: Job, t: float) -> float:
        """Look at the read's die at ``t`` (the clock's now), book its read unit from when the die is free."""
        return self.units.commit(job, t + self.locks.wait_at(t))

    def __call__(self, job: Job) -> None:  # a hop of its own (not folded into a chain): one event at the unit's end
        now = self.clock.now
        d = self.visit(job, now)
        if d > now:
            schedule(self.env, d - now, job, _advance_event)
        else:
            advance(job)


class Backfill:
    """A single-server FCFS queue whose arrivals are booked out of time order but each before it happens (the read
    channel and link of ``LastPageBlock``). A job arriving at ``t`` starts no earlier than the end of every service
    booked for a job that arrived by ``t`` (FCFS); it takes the first idle gap from then that holds its service, so
    the services booked before it stay as they are. When that gap is the first one (it ends service before the next
    booked start) its times are the event walk's (a job arriving later, booked earlier, is served after it either
    way); otherwise it is served behind jobs that arrived after it (``late`` counts those)."""

    __slots__ = ("arrive", "end", "late", "start", "station")

    def __init__(self, station: FifoStation):
        station.reached_out_of_order()
        self.station = station
        self.arrive: list[float] = []
        self.start: list[float] = []
        self.end: list[float] = []
        """The services booked and not over (in start order: the order served)."""
        self.late = 0

    def book(self, job: Job, t: float, now: float) -> float:
        """Book ``job`` arriving at ``t`` (no earlier than ``now``, the clock); return when it leaves."""
        st = self.station
        law = st.law  # the station's service, as ``FifoStation.commit`` computes it
        s = job.size * st.per_byte if law == SERVICE_BYTES else job.cost if law == SERVICE_COST else st.service(job)
        arrive, start, end = self.arrive, self.start, self.end
        n = 0
        while n < len(end) and end[n] <= now:
            n += 1
        if n:
            del arrive[:n], start[:n], end[:n]
        lo = t
        for k in range(len(end)):
            if arrive[k] <= t and end[k] > lo:
                lo = end[k]
        k = bisect_right(start, lo)
        first = True
        if k > 0 and end[k - 1] > lo:  # in service then: it arrived after t (those before ended by lo)
            lo = end[k - 1]
            first = False
        while k < len(start) and lo + s > start[k]:
            first = False
            if end[k] > lo:
                lo = end[k]
            k += 1
        if not first:
            self.late += 1
        d = lo + s
        arrive.insert(k, t)
        start.insert(k, lo)
        end.insert(k, d)
        st._book_unordered(lo, d, s)
        return d


class LastPageBlock:
    """The last page of a z/VM read SSCH with the SSCH's block booked at the page's start: the page's media
    stage (``DieThenUnit``, or read units reached now), then the block of all the SSCH's pages (the parent's size)
    through the single-server read channel and the drive link (each a ``Backfill``), from the time the page leaves
    its read unit; the block's end is the split's join (then the turnaround's end): one event per read SSCH fewer.
    The channel and the link must be reached by nothing else (``_Hops.check_entries``)."""

    __slots__ = ("channel", "env", "link", "media")

    def __init__(self, env: simpy.Environment, media: Callable[[Job, float], float], channel: FifoStation,
                 link: FifoStation):
        self.env = env
        self.media = media
        self.channel = Backfill(channel)
        self.link = Backfill(link)

    def visit(self, job: Job, t: float) -> float:
        """The page's media stage from ``t`` (the clock's now), then its SSCH's block through the channel and link."""
        d = self.media(job, t)
        parent = job.parent
        assert parent is not None
        size = job.size
        job.size = parent.size
        d = self.link.book(job, self.channel.book(job, d, t), t)
        job.size = size
        return d


def _started(programs: list[float], now: float) -> None:
    """Drop a die's programs (start, end pairs) that a later one started by ``now`` has replaced."""
    n = 0
    last = len(programs) - 2
    while n < last and programs[n + 2] <= now:
        n += 2
    if n:
        del programs[:n]


class FlashDevice:
    """A flash drive or DIMM (seeds 001, 002, 003).

    Reads occupy one of P_r parallel NAND read units for the QD1 read latency
    (P_r = read IOPS x read latency, so the IOPS limit and the QD1 latency are both
    honoured), then the read-bandwidth channel for size / bandwidth on average (lognormal,
    ``device_behaviour.read_channel_cv``: a large read's pages come off several dies and
    channels, and it is done when the last has arrived). Writes take a
    slot of the power-protected write cache, are acknowledged after the cache
    acknowledgement time, and are destaged in the background through the
    write-bandwidth channel and one of P_w program units (P_w = write IOPS x program
    time); when the cache is full, writes wait for a destage, so sustained write
    IOPS and bandwidth obey the datasheet and latency grows past the knee. A write
    cache of one slot reproduces eXFlash WriteNow: back-to-back writes wait for the
    previous destage, writes separated by think time do not (seed 002, Figure 11).
    The numbers come from ``sim.route.flash.flash_parameters`` (``DeviceBank.params``).
    """

    def __init__(self, b: Builder, name: str, p: FlashParameters):
        self.locks: DieProgramLocks | None = None
        """The die locks reads wait at, where the device has read units and program units (``read_media``)."""
        self.read_units: Hop | None = None
        law, cv, ack = p.law, p.service_cv, p.write_ack_us
        read_time = _scaled(p.read_latency_us, b.streams.unit(law, cv))
        if p.shared_dies:
            dies = b.pool(f"{name}.nand_dies", p.read_units)
            die_unit = b.streams.unit(law, cv)
            read_on_die = Delay(b.env, lambda job: p.die_read_time_us(job.size) * die_unit(), f"{name}.read_on_die")
            read_stage: tuple[Hop, ...] = make_route(dies.acquire, read_on_die, dies.release)
        else:
            read_stage = (b.station(f"{name}.read_units", p.read_units, read_time),)
        self.read_bw = b.station(f"{name}.read_bw", 1, _varied(_bytes_time(p.read_channel_gbs), b, p.read_channel_cv))
        self.write_cache = b.booked_pool(f"{name}.write_cache", p.write_cache_slots)
        ack_unit = b.streams.unit(law, cv)
        self.ack = Delay(b.env, lambda job: ack * ack_unit(), f"{name}.write_ack")
        if p.shared_dies:
            # a cached write goes to the next free die, which frees its cache slot and stays busy
            # programming (in the background) for the time that makes the dies alone give the datasheet
            # write IOPS and bandwidth: the dies are the whole write path (no separate channel in tandem)
            program_unit = b.streams.unit(law, cv)
            die_program_time = lambda job: p.die_program_time_us(job.size) * program_unit()  # noqa: E731
            if b.reads_meet_programs:
                locks = DieProgramLocks(b.env, p.read_units, b.streams.uniform())
                program_on_die: Hop = locks.programmer(die_program_time)
                read_stage = (locks.wait_for_own_die, *read_stage)
            else:
                program_on_die = Delay(b.env, die_program_time, f"{name}.program_on_die")
            destage = make_route(dies.acquire, self.write_cache.release, Fork((program_on_die, dies.release), b.jobs))
        else:
            self.write_bw = b.bytes_station(f"{name}.write_bw", p.write_bw_gbs)
            program_time = _scaled(p.program_time_us, b.streams.unit(law, cv))
            on_start: Callable[[float, float], None] | None = None
            if b.reads_meet_programs:
                locks = DieProgramLocks(b.env, p.program_units, b.streams.uniform())
                on_start = locks.book
                read_stage = (locks.wait_for_own_die, *read_stage)
            self.program_units = b.station(f"{name}.program_units", p.program_units, program_time, on_start)
            if b.reads_meet_programs:
                self.locks = locks
                self.read_units = read_stage[-1]
            # a destage is one chain with no event at all: the write channel (reached now: a fork's child starts at
            # once), the program units (fed by nothing but the channel, one server: reached ahead in time order)
            # and its cache slot's release booked at the program's end (``BookedPool.release_at``); a full cache's
            # worth of destages can queue at the program units (2,048 per drive in S2) without any event queued
            channel, units = self.write_bw, self.program_units
            assert isinstance(channel, FifoStation) and isinstance(units, FifoStation)
            units.reached_ahead()
            self.write_cache.releases_after(units)
            destage = (Chain(b.env, [channel.commit, units.commit, self.write_cache.release_at],
                             CHAIN_DROP, jobs=b.jobs),)
        self.read_stage = read_stage
        self.media: tuple[Hop, ...] | None = None
        self.read_hops: tuple[Hop, ...] = (*read_stage, self.read_bw)
        destaging = Fork(destage, b.jobs)
        destaging.set_body(destage)
        self.write_hops: tuple[Hop, ...] = (self.write_cache.acquire, self.ack, destaging)
        self.parallelism = ({"nand_dies": p.read_units} if p.shared_dies else {"read_units": p.read_units, "program_units": p.program_units}
                            ) | {"write_cache_slots": p.write_cache_slots}

    def read_media(self) -> tuple[Hop, ...]:
        """A read's media stage alone (die wait, read unit): a page of a z/VM channel program (``Device`` MEDIA).
        With die locks and read units, one ``DieThenUnit`` (made on first use: its units are then booked ahead)."""
        if self.media is None:
            if self.locks is not None and self.read_units is not None:
                assert isinstance(self.read_units, FifoStation)
                self.media = (DieThenUnit(self.locks, self.read_units),)
            else:
                self.media = self.read_stage
        return self.media


class MemberRoutes:
    """The device route of each (member, op), built on first use: the route chooser of a model with one route per
    (member, op) (a ``RouteTable`` keyed by both, as a list indexed by ``2 * member + op``: no tuple, no hash)."""

    def __init__(self, make: Callable[[int, int], Sequence[Hop]]):
        self.make = make
        self.table: list[tuple[Hop, ...] | None] = []

    def __call__(self, member: int, op: int) -> Sequence[Hop]:
        i = 2 * member + op
        table = self.table
        if i < len(table):
            route = table[i]
            if route is not None:
                return route
        else:
            table.extend([None] * (i + 1 - len(table)))
        made = tuple(self.make(member, op))
        table[i] = made
        return made


class RouteTable:
    """Device routes per (member, op[, variant]), built on first use."""

    def __init__(self, make: Callable[..., Sequence[Hop]]):
        self.make = make
        self.cache: dict[tuple[Any, ...], Sequence[Hop]] = {}

    def get(self, *key: Any) -> Sequence[Hop]:
        route = self.cache.get(key)
        if route is None:
            route = self.cache[key] = tuple(self.make(*key))
        return route


def _volume_planner(volume: Volume, routes: Callable[[int, int], Sequence[Hop]]) -> Callable[[Job], list[list[Child]]]:
    def plan(job: Job) -> list[list[Child]]:
        phases = volume.plan(job.op, job.offset, job.size, job.slot)
        return [[(routes(m, op), n, op, m) for m, op, n in phase] for phase in phases]

    return plan


def _placed_planner(volumes: list[tuple[Volume, list[int]]],
                    routes: Callable[[int, int], Sequence[Hop]]) -> Callable[[Job], list[list[Child]]]:
    """The volume layer of several workloads: each I/O is planned on its workload's own volume
    (its placement: the members it uses), whose member i is the whole volume's member ``placed[i]``."""
    def plan(job: Job) -> list[list[Child]]:
        volume, placed = volumes[job.workload]
        phases = volume.plan(job.op, job.offset, job.size, job.slot)
        return [[(routes(placed[m], op), n, op, placed[m]) for m, op, n in phase] for phase in phases]

    return plan


def _placed_load(load: Callable[[int], int], placed: list[int]) -> Callable[[int], int]:
    """I/Os outstanding on a workload's member i: on the whole volume's member ``placed[i]``."""
    return lambda m: load(placed[m])


def _placements(scenario: Scenario, whole: Volume, load: Callable[[int], int]) -> list[tuple[Volume, list[int]]] | None:
    """Each workload's volume and the members it maps to, or None when every workload uses the whole volume.

    A placed volume loses the members of the whole volume's ``failed`` that it holds (its member i is the
    whole volume's member ``placed[i]``): mirrors read and write their survivors, RAID-5/6 reconstruct, as
    the whole volume does (``Volume._plan_degraded``)."""
    workloads = scenario.all_workloads()
    if all(wl.placement is None for wl in workloads):
        return None
    out = []
    for wl in workloads:
        if wl.placement is None:
            out.append((whole, list(range(whole.members))))
            continue
        placed = list(wl.placement)
        failed = frozenset(i for i, m in enumerate(placed) if m in whole.failed)
        own = Volume(whole.layout, len(placed), whole.chunk, whole.member_bytes, _placed_load(load, placed), whole.closed_affinity,
                     failed, whole.rebuilding and bool(failed))
        out.append((own, placed))
    return out




def _ports(b: Builder, bank: PortBank) -> list[tuple[Station, Station]]:
    """SAN ports: towards the host the read payload, towards the device the handling plus the write payload."""
    per_byte, handling = bank.us_per_byte, bank.handling_us
    out = []
    for name in bank.names:
        to_host = b.station(f"{name}.to_host", 1, lambda job: (job.size * per_byte) if job.op == READ else 0.0)
        to_dev = b.station(f"{name}.to_device", 1,
                           lambda job: handling + (job.size * per_byte if job.op == WRITE else 0.0))
        out.append((to_host, to_dev))
    return out


def components(b: Builder, lay: RouteLayout) -> dict[int, list[Any]]:
    """The DES components of every element of ``lay`` (by ``id`` of the element), made in the layout's DES order
    (a pool some step gives back behind a destage made a ``BookedPool``: ``_released_behind``)."""
    b.released_behind = _released_behind([s for steps in lay.steps.values() for s in steps])
    made: dict[int, list[Any]] = {}
    for item in lay.des_order:
        banks = item.banks if isinstance(item, PerInstance) else (item,)
        present = [bank for bank in banks if bank is not None]
        for bank in present:
            made[id(bank)] = []
        for i in range(len(_instances(present[0])) if isinstance(item, PerInstance) else 1):
            for bank in present:
                made[id(bank)].extend(_make(b, bank, i if isinstance(item, PerInstance) else None))
    return made


def build(env: simpy.Environment, scenario: Scenario, streams: Streams, jobs: JobFactory) -> Model:
    """Build the model of ``scenario``: its route description's layout (``sim.route.steps``) as components."""
    route = describe(scenario)
    lay = layout(route)
    b = Builder(env, streams, jobs, route.reads_meet_programs)
    # no read ever reaches a flash device (a write-only workload, no rebuild): a die-level device's dies program alone
    b.writes_only = (not route.reads_meet_programs and route.volume.rebuild is None
                     and all(w.read_fraction <= 0.0 for w in scenario.all_workloads()))
    cpu, submit, complete = b.cpu(route.host)
    made = components(b, lay)
    split = Split(_unplanned, b.jobs, env)
    rr = [0]
    hops = _Hops(b, made, submit, complete, lambda: split.join)
    raw = hops.route_of(lay)
    paths, draw = lay.paths, lay.hit_draw
    v = route.volume
    keys = [(m, op, path, hit) for m in range(v.members) for op in (READ, WRITE) for path in range(paths if draw is not None else 1)
            for hit in ((False, True) if draw is not None and op == READ else (False,))] if lay.uses_volume else []
    fusion = Fusion(env, b.jobs, {key: raw(*key) for key in keys})
    hops.check_entries(fusion)
    hops.check_cache_entries()
    fused: dict[tuple[int, int, int, bool], Sequence[Hop]] = {key: fusion.route(r, split) for key, r in fusion.raw.items()}

    def make(member: int, op: int, path: int, hit: bool) -> Sequence[Hop]:
        got = fused.get((member, op, path, hit))
        if got is not None:
            return got
        late = fusion.late(raw(member, op, path, hit), split)
        hops.check_entries(fusion)
        hops.check_cache_entries()
        return late

    routes: Callable[..., Sequence[Hop]]
    if draw is not None:
        table = RouteTable(make)
        choose, hit_ratio = made[id(draw)][0], draw.ratio

        def routes(member: int, op: int) -> Sequence[Hop]:
            rr[0] += 1
            return table.get(member, op, rr[0] % paths, op == READ and choose() < hit_ratio)
    else:  # one route per (member, op): the table's own lookup is the route chooser
        routes = MemberRoutes(lambda member, op: make(member, op, 0, False))

    load_bank = lay.load
    if load_bank is None:
        load: Callable[[int], int] = lambda m: 0  # noqa: E731
    else:
        pools, load_of = made[id(load_bank)], load_bank.of
        load = lambda m: pools[instance_of(load_of, m)].load  # noqa: E731
    volume = Volume(v.layout, v.members, v.chunk_bytes, v.member_bytes, load, v.closed_affinity, v.failed, v.rebuild is not None)
    if not lay.uses_volume:
        single = Fusion(env, b.jobs, {(0, READ, 0, False): make_route(*hops.hops(lay.steps[(READ, False)], 0, READ, 0))})
        return Model(route=tuple(single.route(single.raw[(0, READ, 0, False)], None)), meters=b.meters, cpu=cpu,
                     capacity_bytes=v.member_bytes, closed_affinity=False, uses_offsets=False,
                     workload_capacity=[v.member_bytes] * len(scenario.all_workloads()))
    placements = _placements(scenario, volume, load)
    split.planner = _volume_planner(volume, routes) if placements is None else _placed_planner(placements, routes)
    devices = [x for x in made.values() if x and isinstance(x[0], (FlashDevice, DieDevice))]
    capacity = [volume.capacity] * len(scenario.all_workloads()) if placements is None else [own.capacity for own, _ in placements]
    return Model(route=(split,), meters=b.meters, cpu=cpu, capacity_bytes=volume.capacity,
                 closed_affinity=v.closed_affinity,
                 notes={"members": v.members} | ({"device": devices[0][0].parallelism} if devices else {}),
                 workload_capacity=capacity,
                 volume=v, device_routes=routes)


def _released_behind(steps: Sequence[Step]) -> set[int]:
    """The pool banks (by ``id``) a ``ReleaseBehind`` among ``steps`` (or inside them) gives back."""
    out: set[int] = set()
    for step in steps:
        if isinstance(step, ReleaseBehind):
            out.add(id(step.bank))
            out |= _released_behind(step.steps)
        elif isinstance(step, Pages):
            out |= _released_behind(step.steps)
    return out


def _unplanned(job: Job) -> list[list[Child]]:
    raise RuntimeError("the volume split was used before its planner was set")


START = -1
"""The predecessor of a route's first hop."""


class Fusion:
    """Fold consecutive hops that nothing else can disturb into one event (``sim.des.components.Chain``).

    A compilation step over every device route of the model (``raw``: each (member, op, path, hit)'s
    hops, ending in the volume split's join), the background routes they fork and the channel programs
    of a page split. Timed hops are ``FifoStation`` (the departure is known on arrival, Lindley's
    recursion), ``Delay`` and the host CPU charges (``HostCharge``). A chain starts at any timed hop,
    which the job reaches now, and extends over

    * pure delays (no queue: any time is fine), and
    * stations whose every arrival comes straight from one single-server ``FifoStation`` (through
      constant delays at most), in every route: that station's departures are booked in time order and
      leave in time order, so the next station's arrivals are booked in time order too and Lindley's
      recursion holds there as well (``ahead``).

    A ``WriteEntry`` (a write's channel, cache slot and acknowledgement) is a hop of its own: its channel's
    stations count as reached one after another (``_scan``), which ``_Hops.check_entries`` reads. A pool, a
    fork, a split or a die lock ends a chain (they act on what other I/Os do meanwhile); a flash
    device's stations are ``FifoStation`` too (its program units book their die when the program will
    start, ``DieProgramLocks.book``), so a destage's program units fold behind its write channel.
    A chain that ends a split's child joins at its end time (``CHAIN_JOIN``), one that ends a background
    child books its work and needs no event (``CHAIN_DROP``); that includes the release of the slot a background
    child holds (``BookedRelease``, a ``ReleaseBehind``: a SAN write-back destage), booked at the chain's end time
    (``BookedPool.release_at``). Where a background child's release cannot join a chain it stays a hop (an event
    path of its own).
    """

    def __init__(self, env: simpy.Environment, jobs: JobFactory, raw: dict[tuple[int, int, int, bool], Sequence[Hop]]):
        self.env = env
        self.jobs = jobs
        self.raw = raw
        self.preds: dict[int, set[int]] = {}
        self.objects: dict[int, Any] = {}
        self.seen: set[int] = set()
        for r in raw.values():
            self._scan(r)
        self.ahead: set[int] = {k for k, ps in self.preds.items() if len(ps) == 1 and self._single(next(iter(ps)))}
        self.done: set[int] = set()

    def _single(self, pred: int) -> bool:
        hop = self.objects.get(pred)
        return isinstance(hop, FifoStation) and hop.capacity == 1

    def _scan(self, route: Sequence[Hop]) -> None:
        """Record each station's predecessors in ``route`` (constant delays skipped) and scan what it forks."""
        prev = START
        for hop in route:
            if isinstance(hop, (WriteEntry, DieWriteEntry)):  # its channel's stations, one after another (``_Hops.check_entries``)
                for st in hop.channel:
                    self.objects[id(st)] = st
                    self.preds.setdefault(id(st), set()).add(prev)
                    prev = id(st)
            self.objects[id(hop)] = hop
            if isinstance(hop, FifoStation):
                self.preds.setdefault(id(hop), set()).add(prev)
            elif isinstance(hop, CacheEntry):  # its station is entered now, never reached ahead
                self.preds.setdefault(id(hop.station), set()).add(id(hop))
            if not (isinstance(hop, Delay) and hop.fixed):
                prev = id(hop)
            if id(hop) in self.seen:
                continue
            if isinstance(hop, Fork):
                self.seen.add(id(hop))
                self._scan(hop.body)
            elif isinstance(hop, Split):
                self.seen.add(id(hop))
                for inner in hop.inner:
                    self._scan(inner)

    def late(self, route: Sequence[Hop], split: Split) -> Sequence[Hop]:
        """A route not built up front: fused without reaching ahead, when that keeps every proof."""
        before = {k: set(v) for k, v in self.preds.items()}
        self._scan(route)
        if any(self.preds[k] != before[k] for k in self.ahead):
            raise RuntimeError("a device route built during the run feeds a station fused ahead of time")
        return self.route(route, split)

    def route(self, route: Sequence[Hop], split: Split | None) -> list[Hop]:
        """``route`` with its chains folded; its last hop is ``split``'s join when ``split`` is given."""
        body = list(route)
        end = CHAIN_NEXT
        if split is not None and body:
            body.pop()  # the join: a final chain joins at its end time instead
            end = CHAIN_JOIN
        return self._fold(body, end, split)

    def _fold(self, body: list[Hop], end: int, split: Split | None) -> list[Hop]:
        out: list[Hop] = []
        chain: list[Hop] = []

        def close(final: bool) -> None:
            if not chain:
                return
            last = chain[-1]
            if final and end != CHAIN_NEXT:
                out.append(Chain(self.env, [self._part(h) for h in chain], end, split, self.jobs))
            elif len(chain) == 1:
                out.append(last)
            else:
                out.append(Chain(self.env, [self._part(h) for h in chain]))
            chain.clear()

        for hop in body:
            self._inner(hop)
            if isinstance(hop, BookedRelease) and chain and end == CHAIN_DROP:
                chain.append(hop)  # a background child's release, booked at its chain's end time
                continue
            timed = isinstance(hop, (FifoStation, Delay, HostCharge, DieThenUnit, LastPageBlock))  # the last two only start one
            if timed and chain and (isinstance(hop, Delay) or id(hop) in self.ahead):
                if isinstance(hop, FifoStation):
                    hop.reached_ahead()
                chain.append(hop)
            else:
                close(False)
                if timed:
                    chain.append(hop)
                else:
                    out.append(hop)
        close(True)
        if end == CHAIN_JOIN and (not out or not isinstance(out[-1], Chain) or out[-1].end != CHAIN_JOIN):
            assert split is not None
            out.append(split.join)
        return out

    def _inner(self, hop: Hop) -> None:
        """Fold what ``hop`` forks or splits into, once per object."""
        if id(hop) in self.done:
            return
        if isinstance(hop, Fork):
            self.done.add(id(hop))
            hop.set_body(self._fold(list(hop.body), CHAIN_DROP, None))
        elif isinstance(hop, Split) and hop.inner:
            self.done.add(id(hop))
            hop.inner[:] = [self.route(r, hop) for r in hop.inner]

    def _part(self, hop: Hop) -> Callable[[Job, float], float]:
        if isinstance(hop, FifoStation):
            return hop.commit
        if isinstance(hop, Delay):
            return hop.visit
        if isinstance(hop, BookedRelease):
            return hop.pool.release_at
        if isinstance(hop, DieThenUnit):
            return hop.visit
        if isinstance(hop, LastPageBlock):  # its own branch: compiled with mypyc, one for the two fails
            return hop.visit
        assert isinstance(hop, HostCharge)
        return host_visit(hop)


def _instances(bank: Any) -> tuple[str, ...]:
    names: tuple[str, ...] = bank.names
    return names


def _make(b: Builder, element: Any, i: int | None) -> list[Any]:
    """The DES components of ``element`` (its instance ``i``, or all of them when ``i`` is None)."""
    if isinstance(element, (PoolBank, LinkBank, DeviceBank, StationBank, PortBank)):
        names = element.names if i is None else (element.names[i],)
        if isinstance(element, PoolBank):
            if id(element) in b.released_behind:
                return [b.booked_pool(name, element.slots) for name in names]
            return [b.pool(name, element.slots) for name in names]
        if isinstance(element, LinkBank):
            return [b.link(name, element.gbs) for name in names]
        if isinstance(element, DeviceBank):
            dies = element.dies
            if dies is not None:
                return [DieDevice(b.env, b.streams, b.jobs, b.meters, name, element.params, dies, b.writes_only)
                        for name in names]
            return [FlashDevice(b, name, element.params) for name in names]
        if isinstance(element, StationBank):
            return [b.service(name, element.servers, element.law) for name in names]
        return _ports(b, element)
    if isinstance(element, Channel):
        return [b.bytes_station(element.name, element.gbs)]
    if isinstance(element, DelayElement):
        law = element.law
        if law.law == "deterministic":
            return [Delay(b.env, _constant(law.mean_us), element.name, fixed=True)]
        return [Delay(b.env, _scaled(law.mean_us, b.streams.unit(law.law, law.cv)), element.name)]
    if isinstance(element, SubchannelBank):
        pool = SubchannelPool(b.env, element.name, element.bases, element.aliases)
        b.meters.append(pool)
        return [pool]
    return [b.streams.uniform()]  # ReadHitDraw


def _single_server(hop: Hop) -> bool:
    return isinstance(hop, FifoStation) and hop.capacity == 1


class _Hops:
    """Turns a layout's steps into hops for one member, op, path and cache outcome."""

    def __init__(self, b: Builder, made: dict[int, list[Any]], submit: Hop | None, complete: Hop | None,
                 join: Callable[[], Hop]):
        self.b, self.made, self.submit, self.complete, self.join = b, made, submit, complete, join
        self.entries: dict[int, WriteEntry | DieWriteEntry] = {}
        """The ``WriteEntry`` of each flash device written across single-server links (by ``id`` of the device)."""
        self.plain_writes: set[int] = set()
        """The write caches (``id``) written by plain hops."""
        self.cache_entries: dict[int, CacheEntry] = {}
        """The ``CacheEntry`` of each write-back cache entered from a station (by ``id`` of the cache's pool)."""
        self.plain_acquires: set[int] = set()
        """The pools (``id``) whose slots a plain ``Acquire`` hop takes."""
        self.blocks: dict[tuple[int, int], LastPageBlock] = {}
        """The ``LastPageBlock`` of each (flash device, link) a z/VM read SSCH's block leaves through (by ``id``)."""

    def route_of(self, lay: RouteLayout) -> Callable[[int, int, int, bool], list[Hop]]:
        def make(member: int, op: int, path: int, hit: bool) -> list[Hop]:
            return list(make_route(*self.hops(lay.steps[(op, hit)], member, op, path), self.join()))
        return make

    def one(self, bank: Any, member: int, path: int) -> Any:
        made = self.made[id(bank)]
        if isinstance(bank, PortBank):
            return made[bank.port_of(path)]
        if isinstance(bank, SubchannelBank):
            return made[0]
        return made[instance_of(bank.of, member)]

    def entered(self, steps: Sequence[Step], i: int, member: int, path: int) -> tuple[tuple[Hop, ...], int] | None:
        """A write crossing single-server links into a flash device's write cache (``steps[i:]`` a run of ``Cross``
        then a ``Device`` WRITE: S2's uplink and drive link, z/VM's page across its link, seed 003): the links (the
        run's longest tail of single-server ``FifoStation``), the cache slot and the acknowledgement as one
        ``WriteEntry``, with the index of the step after the device (None when ``steps[i:]`` is no such write). The
        device is a pooled ``FlashDevice``, or a ``DieDevice`` no read reaches (``writes_only``), whose controller
        then ends the channel.
        Every route gets it where its steps read so; ``check_entries`` proves the entry's order holds."""
        j = i
        while j < len(steps) and isinstance(steps[j], Cross):
            j += 1
        write = steps[j] if j < len(steps) else None
        if j == i or not isinstance(write, Device) or write.op != WRITE:
            return None
        dev = self.one(write.bank, member, path)
        if not isinstance(dev, (FlashDevice, DieDevice)):
            return None
        links = [self.cross(step, member, path) for step in steps[i:j] if isinstance(step, Cross)]
        k = len(links)
        while k > 0 and _single_server(links[k - 1]):
            k -= 1
        channel: list[FifoStation] = [st for st in links[k:] if isinstance(st, FifoStation)]
        if not channel:
            return None
        if isinstance(dev, DieDevice) and not dev.writes_only:
            # reads reach the controller too: the links, then the controller, slot and acknowledgement (``DieWriteEntry``)
            die_entry = self.entries.get(id(dev))
            if die_entry is None:
                die_entry = self.entries[id(dev)] = DieWriteEntry(self.b.env, channel, dev)
            elif list(die_entry.channel) != channel:
                raise RuntimeError(f"{dev.write_cache.name} is written through more than one channel")
            return (*links[:k], die_entry, *dev.write_hops), j + 1
        if isinstance(dev, DieDevice):
            # the controller is the channel's last station (fed by the link alone: no read reaches the device)
            assert isinstance(dev.controller, FifoStation)
            channel.append(dev.controller)
        after = dev.write_hops[dev.write_hops.index(dev.ack) + 1:]  # the destage: the hops past the acknowledgement
        entry = self.entries.get(id(dev))
        assert not isinstance(entry, DieWriteEntry)
        if entry is None:
            assert isinstance(dev.write_cache, BookedPool)
            entry = self.entries[id(dev)] = WriteEntry(self.b.env, channel, dev.write_cache, dev.ack)
        elif list(entry.channel) != channel:  # the order of the slots taken is the order of one channel's arrivals
            raise RuntimeError(f"{dev.write_cache.name} is written through more than one channel: "
                               f"{[st.name for st in entry.channel]} and {[st.name for st in channel]}")
        return (*links[:k], entry, dev.write_cache.acquire, entry.acknowledge, *after), j + 1

    def check_entries(self, fusion: Fusion) -> None:
        """The proof a ``WriteEntry`` rests on, from every route built so far (``fusion``'s predecessors): its device
        is written through nothing else (its slots and acknowledgement draws are taken in the order of the entry's
        channel), its first station is reached at the time a job enters it (never ahead of time by a ``Chain``),
        and every station after the first is fed by nothing but the one before it (single-server, FIFO: arrivals in
        time order, departures in arrival order). Raises when a route breaks it."""
        for block in self.blocks.values():
            for st in (block.channel.station, block.link.station):
                if id(st) in fusion.objects:
                    raise RuntimeError(f"{st.name} is reached by a read SSCH's last page and another way")
        for entry in self.entries.values():
            if id(entry.cache) in self.plain_writes:
                raise RuntimeError(f"{entry.cache.name} is written through a WriteEntry and another way")
            first = entry.channel[0]
            if id(first) in fusion.ahead:
                raise RuntimeError(f"{first.name} starts the write entry of {entry.cache.name} and is reached ahead of time")
            for before, st in zip(entry.channel, entry.channel[1:], strict=False):
                if id(st) not in fusion.ahead or fusion.preds[id(st)] != {id(before)}:
                    raise RuntimeError(f"{st.name} in the write entry of {entry.cache.name} is fed by more than {before.name}")

    def cache_entered(self, steps: Sequence[Step], member: int, path: int) -> tuple[Hop, ...] | None:
        """A station, then a slot of a write-back cache (a pool given back behind a destage: a ``BookedPool``),
        then a delay (the SAN's controller, write cache and cache-hit acknowledgement): the three as one
        ``CacheEntry`` (None for other steps)."""
        if len(steps) < 3 or not isinstance(steps[0], Serve) or not isinstance(steps[1], Acquire) \
                or not isinstance(steps[2], Wait) or steps[1].least_of != 1:
            return None
        station = self.one(steps[0].bank, member, path)
        cache = self.one(steps[1].bank, member, path)
        if not isinstance(station, FifoStation) or not isinstance(cache, BookedPool):
            return None
        ack = self.made[id(steps[2].delay)][0]
        entry = self.cache_entries.get(id(cache))
        if entry is None:
            entry = self.cache_entries[id(cache)] = CacheEntry(self.b.env, station, cache, ack)
        elif entry.station is not station or entry.ack is not ack:  # one entry counts every slot taken
            raise RuntimeError(f"{cache.name} is entered from more than one station or acknowledged by more than one delay")
        return (entry, entry.acquire, entry.acknowledge)

    def check_cache_entries(self) -> None:
        """A cache entered through a ``CacheEntry`` has no slot taken another way (``can_book`` counts the slots
        in use and booked: a plain acquire meanwhile could take the one it counted on)."""
        for entry in self.cache_entries.values():
            if id(entry.cache) in self.plain_acquires:
                raise RuntimeError(f"{entry.cache.name} is entered through a CacheEntry and acquired another way")

    def cross(self, step: Cross, member: int, path: int) -> Hop:
        link: Hop = self.one(step.bank, member, path)[step.toward]
        return link

    def device(self, step: Device, member: int, path: int) -> tuple[Hop, ...]:
        dev = self.one(step.bank, member, path)
        if step.op == WRITE and isinstance(dev, (FlashDevice, DieDevice)):
            self.plain_writes.add(id(dev.write_cache))
        if step.op == READ and step.part != WHOLE:
            assert isinstance(dev, FlashDevice)  # a read in parts: a pooled flash device (``sim.route.steps._zvm``)
            return dev.read_media() if step.part == MEDIA else (dev.read_bw,)
        hops: tuple[Hop, ...] = dev.read_hops if step.op == READ else dev.write_hops
        return hops

    def hops(self, steps: Sequence[Step], member: int, op: int, path: int) -> list[Hop | None]:
        """The hops of ``steps``: a write into a flash device's cache across single-server links as a ``WriteEntry``
        (``entered``), every other step as its own hops (``step``)."""
        out: list[Hop | None] = []
        i = 0
        while i < len(steps):
            step = steps[i]
            entered = self.entered(steps, i, member, path) if isinstance(step, Cross) else None
            if entered is not None:
                out.extend(entered[0])
                i = entered[1]
                continue
            block = self.read_block(steps, i, member, op, path) if isinstance(step, Pages) else None
            if block is not None:
                out.append(block)
                i += 3  # the pages, the read channel and the link are in the split
                continue
            cache = self.cache_entered(steps[i:], member, path) if isinstance(step, Serve) else None
            if cache is not None:
                out.extend(cache)
                i += 3  # the station, the acquire and the delay are in the entry
            else:
                out.extend(self.step(steps[i], member, op, path))
                i += 1
        return out

    def acquire(self, step: Acquire, member: int, path: int) -> Hop:
        pool = self.one(step.bank, member, path)
        self.plain_acquires.add(id(pool))
        hop: Hop = pool.acquire
        return hop

    def behind(self, step: ReleaseBehind, member: int, op: int, path: int) -> Hop:
        """A background child on ``step.steps`` that gives the slot back at its end (``BookedRelease``: booked at the
        end of the chain ``Fusion`` folds the child into)."""
        pool = self.one(step.bank, member, path)
        assert isinstance(pool, BookedPool)  # ``_released_behind``
        return Fork(make_route(*self.hops(step.steps, member, op, path), BookedRelease(pool)), self.b.jobs)

    def step(self, step: Step, member: int, op: int, path: int) -> Sequence[Hop | None]:
        if isinstance(step, Submit):
            return (self.submit,)
        if isinstance(step, Complete):
            return (self.complete,)
        if isinstance(step, Acquire):
            return (self.acquire(step, member, path),)
        if isinstance(step, Release):
            return (self.one(step.bank, member, path).release,)
        if isinstance(step, ReleaseBehind):
            return (self.behind(step, member, op, path),)
        if isinstance(step, Cross):
            return (self.cross(step, member, path),)
        if isinstance(step, Device):
            return self.device(step, member, path)
        if isinstance(step, Serve):
            return (self.one(step.bank, member, path),)
        if isinstance(step, Transfer):
            return (self.made[id(step.channel)][0],)
        if isinstance(step, Wait):
            return (self.made[id(step.delay)][0],)
        assert isinstance(step, Pages)
        return (self.pages(step, member, op, path),)

    def pages(self, step: Pages, member: int, op: int, path: int, last: LastPageBlock | None = None) -> Hop:
        """A split into one child per page, run one after another (CP's channel program, seed 003); with ``last``,
        the last page runs it (its media stage, then the SSCH's block: ``read_block``)."""
        page_bytes = step.page_bytes
        inner: list[Sequence[Hop]] = []

        def page_commands(job: Job) -> list[list[Child]]:
            whole, rest = divmod(job.size, page_bytes)
            sizes = [page_bytes] * whole + ([rest] if rest else [])
            out = [[(inner[0], n, job.op, job.member)] for n in sizes]
            if last is not None and sizes:
                out[-1] = [(inner[1], sizes[-1], job.op, job.member)]
            return out

        pages = Split(page_commands, self.b.jobs, self.b.env)
        inner.append(make_route(*self.hops(step.steps, member, op, path), pages.join))
        if last is not None:
            inner.append(make_route(last, pages.join))
        pages.inner = inner
        return pages

    def read_block(self, steps: Sequence[Step], i: int, member: int, op: int, path: int) -> Hop | None:
        """A z/VM read SSCH (``steps[i:]``: its pages' media stage, then its block through the device's read channel
        and the link toward the host, ``sim.route.steps._zvm``) as a page split whose last page books the block at
        its start (``LastPageBlock``); None for other steps, or a media stage not one hop reached now."""
        if len(steps) < i + 3:
            return None
        page, channel, cross = steps[i], steps[i + 1], steps[i + 2]
        assert isinstance(page, Pages)
        media = page.steps[0] if len(page.steps) == 1 else None
        if not isinstance(media, Device) or media.part != MEDIA or not isinstance(channel, Device) \
                or channel.part != CHANNEL or channel.bank is not media.bank or not isinstance(cross, Cross) \
                or cross.toward != TO_HOST:
            return None
        dev = self.one(media.bank, member, path)
        link = self.cross(cross, member, path)
        assert isinstance(dev, FlashDevice)
        stage = dev.read_media()
        if len(stage) != 1 or not isinstance(dev.read_bw, FifoStation) or not isinstance(link, FifoStation) \
                or dev.read_bw.capacity != 1 or link.capacity != 1:
            return None
        hop = stage[0]
        part: Callable[[Job, float], float]
        if isinstance(hop, DieThenUnit):
            part = hop.visit
        elif isinstance(hop, FifoStation):
            part = hop.commit
        else:
            return None
        key = (id(dev), id(link))
        block = self.blocks.get(key)
        if block is None:
            block = self.blocks[key] = LastPageBlock(self.b.env, part, dev.read_bw, link)
        return self.pages(page, member, op, path, block)
