"""Fewer events, same queues: a ``FifoStation`` (Lindley's recursion) and a fused ``Chain`` give the
departures and occupancy an event-driven ``Station`` walk gives, and the compilation step only fuses what
nothing else can disturb."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import simpy

from sim.des.components import Chain, Delay, FifoStation, Job, JobFactory, Station, make_route
from sim.des.environment import Environment
from sim.des.model import Fusion
from sim.route.elements import instance_of
from tests.des.walk import start_at

ROOT = Path(__file__).resolve().parents[2]


def _walk(route_of: object, arrivals: list[tuple[float, float]], env: simpy.Environment) -> list[float]:
    """Send one job per (arrival time, service time) down the route and return each job's completion time."""
    done: list[float] = [0.0] * len(arrivals)

    def finish(job: Job) -> None:
        done[job.slot] = env.now

    for i, (t, s) in enumerate(arrivals):
        job = Job()
        job.slot = i
        job.cost = s
        job.route = (*route_of, finish)  # type: ignore[misc]

        start_at(env, job, t)
    env.run()
    return done


def _arrivals(n: int, seed: int) -> list[tuple[float, float]]:
    rnd = random.Random(seed)
    t, out = 0.0, []
    for _ in range(n):
        t += rnd.expovariate(1 / 10.0)
        out.append((t, rnd.expovariate(1 / 9.0)))  # utilization 0.9 per server: long queues
    return out


@pytest.mark.parametrize("servers", [1, 3])
def test_fifo_station_departs_and_books_as_the_event_station(servers: int) -> None:
    """Lindley's recursion is FCFS: same departures; the occupancy booked ahead is taken off when read."""
    arrivals = _arrivals(2_000, 7)
    per_server = [(t / servers, s) for t, s in arrivals]  # the same utilization whatever the servers
    marks = [per_server[k][0] + 0.5 for k in (100, 700, 1_500)]

    def run(cls: type[Station]) -> tuple[list[float], list[tuple[float, float]]]:
        env = Environment()
        st = cls(env, "st", servers, lambda job: job.cost)
        seen: list[tuple[float, float]] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: seen.append((st.unit_time(), st.busy_area)))
        return _walk((st,), per_server, env), seen

    fcfs, fcfs_seen = run(Station)
    lindley, lindley_seen = run(FifoStation)
    assert lindley == pytest.approx(fcfs, abs=1e-9)
    assert [x for pair in lindley_seen for x in pair] == pytest.approx([x for pair in fcfs_seen for x in pair], abs=1e-6)


def test_a_tandem_fed_by_one_single_server_station_is_one_chain_with_the_same_departures() -> None:
    """Port -> constant delay -> port: the second port's arrivals all come from the first in time order, so
    the compilation folds both and the delay into one event per job and the departures do not change."""
    arrivals = _arrivals(1_000, 11)

    def build(env: simpy.Environment, cls: type[Station]) -> tuple[Station, Delay, Station]:
        a = cls(env, "a", 1, lambda job: job.cost)
        b = cls(env, "b", 1, lambda job: 0.8 * job.cost)
        return a, Delay(env, lambda job: 3.0, "fabric", fixed=True), b

    env = Environment()
    events_route = make_route(*build(env, Station))
    expected = _walk(events_route, arrivals, env)

    env = Environment()
    jobs = JobFactory()
    raw = make_route(*build(env, FifoStation))
    fusion = Fusion(env, jobs, {(0, 0, 0, False): raw})
    fused = fusion.route(raw, None)
    assert len(fused) == 1 and isinstance(fused[0], Chain) and len(fused[0].parts) == 3
    assert _walk(tuple(fused), arrivals, env) == pytest.approx(expected, abs=1e-9)


def test_a_station_with_two_feeders_is_not_reached_ahead() -> None:
    """Two ports feeding one controller: the controller's arrivals can come out of time order from two
    chains, so each route's chain stops before it."""
    env = Environment()
    p0, p1 = (FifoStation(env, f"p{i}", 1, lambda job: 1.0) for i in range(2))
    ctl = FifoStation(env, "ctl", 1, lambda job: 1.0)
    routes = {(0, 0, 0, False): (p0, ctl), (1, 0, 0, False): (p1, ctl)}
    fusion = Fusion(env, JobFactory(), routes)
    assert fusion.route(routes[(0, 0, 0, False)], None) == [p0, ctl]


@pytest.mark.parametrize("servers", [1, 4])
def test_programs_booked_on_arrival_make_reads_wait_as_programs_marked_at_their_start(servers: int) -> None:
    """A flash device's program units as a ``FifoStation`` book each program's die on the job's arrival
    (``DieProgramLocks.book``, before the program starts); reads must still find their die programming
    exactly when the event-driven station, which marks the die when the program starts, says so."""
    from sim.des.components import advance
    from sim.des.model import DieProgramLocks

    programs = [(t / servers, s) for t, s in _arrivals(1_500, 5)]  # long queues: most programs booked ahead
    rnd = random.Random(9)
    reads = sorted(rnd.uniform(0.0, programs[-1][0]) for _ in range(3_000))
    picks = [rnd.random() for _ in reads]

    def run(fifo: bool) -> tuple[list[float], list[float]]:
        env = Environment()
        it = iter(picks)
        locks = DieProgramLocks(env, servers + 2, lambda: next(it))
        if fifo:
            units: Station = FifoStation(env, "program_units", servers, lambda job: job.cost, locks.book)
        else:
            def timed(job: Job) -> float:
                locks.start_program(job.cost)
                return job.cost
            units = Station(env, "program_units", servers, timed)
        waits: list[float] = []
        done: list[float] = []
        for t, s in programs:
            job = Job()
            job.cost = s
            job.route = (units, lambda j: done.append(env.now))
            env.timeout(t).callbacks.append(lambda e, job=job: advance(job))  # type: ignore[misc]
        for t in reads:
            job = Job()
            job.route = (locks.wait_for_own_die, lambda j, t=t: waits.append(env.now - t))  # type: ignore[misc]
            env.timeout(t).callbacks.append(lambda e, job=job: advance(job))  # type: ignore[misc]
        env.run()
        return waits, done

    event_waits, event_done = run(False)
    booked_waits, booked_done = run(True)
    assert sum(1 for w in event_waits if w > 0.0) > len(reads) // 10  # reads do meet programs
    assert booked_done == pytest.approx(event_done, abs=1e-9)
    assert booked_waits == pytest.approx(event_waits, abs=1e-9)


@pytest.mark.parametrize("load", [0.6, 1.4])
@pytest.mark.parametrize("servers", [1, 2])
def test_a_station_reached_ahead_meters_what_the_event_station_meters(servers: int, load: float) -> None:
    """Port -> constant delay -> controller, fused: the controller's services are booked before they start,
    some after an idle gap (load 0.6) or behind a queue that only grows (1.4: most bookings still to start when
    the meter is read); read at any time, its busy unit-time and busy time are the event-driven ones."""
    arrivals = _arrivals(1_500, 13)
    marks = [arrivals[k][0] + 0.25 for k in range(50, 1_500, 97)]

    def run(cls: type[Station], fused: bool) -> tuple[list[float], list[float]]:
        env = Environment()
        a = cls(env, "a", 1, lambda job: job.cost)
        b = cls(env, "b", servers, lambda job: load * servers * job.cost)
        raw = make_route(a, Delay(env, lambda job: 40.0, "fabric", fixed=True), b)
        route = Fusion(env, JobFactory(), {(0, 0, 0, False): raw}).route(raw, None) if fused else raw
        if fused:
            assert len(route) == 1 and isinstance(route[0], Chain)
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: seen.extend((b.unit_time(), b.busy_area)))
        return _walk(tuple(route), arrivals, env), seen

    events_done, events_seen = run(Station, False)
    fused_done, fused_seen = run(FifoStation, True)
    assert fused_done == pytest.approx(events_done, abs=1e-9)
    assert fused_seen == pytest.approx(events_seen, abs=1e-6)


@pytest.mark.parametrize("slots", [1, 4])
def test_a_pool_with_releases_booked_ahead_grants_and_meters_as_released_by_events(slots: int) -> None:
    """A write cache whose slots are freed at a destage's known end (``BookedPool.release_at``, no event per
    release) grants its slots at the same times, in the same order, and meters the same occupancy as a
    ``Pool`` released by an event at each end; jobs do wait (the pool fills), so the waiters' wakes are tested."""
    from sim.des.components import BookedPool, Pool

    arrivals = [(t, s * slots * 1.3) for t, s in _arrivals(1_500, 23)]  # holds longer than the pool drains
    marks = [arrivals[k][0] + 0.5 for k in range(40, 1_500, 83)]

    def run(booked: bool) -> tuple[list[float], list[float], int]:
        env = Environment()
        pool = BookedPool(env, "write_cache", slots) if booked else Pool(env, "write_cache", slots)
        granted: list[float] = [0.0] * len(arrivals)

        def grant(job: Job) -> None:
            granted[job.slot] = env.now
            if isinstance(pool, BookedPool):
                pool.release_at(job, env.now + job.cost)

        def grant_then_advance(job: Job) -> None:
            grant(job)
            from sim.des.components import advance
            advance(job)

        if booked:
            route: tuple[object, ...] = (pool.acquire, grant_then_advance)
        else:
            route = (pool.acquire, grant_then_advance, Delay(env, lambda job: job.cost, "hold"), pool.release)
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: seen.extend((pool.unit_time(), pool.busy_area, float(pool.load))))
        _walk(route, arrivals, env)
        return granted, seen, pool.waited

    event_granted, event_seen, event_waited = run(False)
    booked_granted, booked_seen, booked_waited = run(True)
    assert event_waited > len(arrivals) // 4  # the pool was full often
    assert booked_waited == event_waited
    assert booked_granted == event_granted  # the same floats: releases at their own times, in time order
    assert booked_seen == event_seen


@pytest.mark.parametrize("slots", [2, 64])
def test_a_write_entry_takes_slots_and_acknowledgements_as_the_event_walk(slots: int) -> None:
    """Link -> write cache slot -> acknowledgement (a random draw per write) -> a destage that frees the slot
    later: through a ``WriteEntry`` (one event per write while the cache surely has a free slot), every write
    is acknowledged at the same time with the same draw as walked hop by hop with events, and the link and the
    cache meter the same; with 2 slots the cache fills (the event way and the waiters' wakes are taken), with
    64 it never does (the one-event way throughout)."""
    from sim.des.components import BookedPool, Fork, Pool, WriteEntry, advance

    arrivals = _arrivals(1_500, 29)
    holds = [random.Random(31).expovariate(1 / 25.0) for _ in arrivals]
    marks = [arrivals[k][0] + 0.5 for k in range(40, 1_500, 83)]

    def run(entered: bool) -> tuple[list[float], list[float], int]:
        env = Environment()
        jobs = JobFactory()
        rnd = random.Random(37)
        link = FifoStation(env, "link", 1, lambda job: 0.5 * job.cost)
        cache = BookedPool(env, "write_cache", slots) if entered else Pool(env, "write_cache", slots)
        ack = Delay(env, lambda job: rnd.expovariate(1 / 4.0), "ack")
        acked: list[float] = [0.0] * len(arrivals)

        def mark(job: Job) -> None:
            job.member = job.slot
            advance(job)

        def acknowledged(job: Job) -> None:
            acked[job.slot] = env.now
            advance(job)

        if isinstance(cache, BookedPool):
            entry = WriteEntry(env, (link,), cache, ack)

            def destage(job: Job) -> None:
                cache.release_at(job, env.now + holds[job.slot])
                advance(job)

            route: tuple[object, ...] = (mark, entry, cache.acquire, entry.acknowledge, acknowledged, destage)
        else:
            behind = Fork((Delay(env, lambda job: holds[job.member], "hold"), cache.release), jobs)
            route = (mark, link, cache.acquire, ack, acknowledged, behind)
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(
                lambda e: seen.extend((link.unit_time(), link.busy_area, cache.unit_time(), cache.busy_area)))
        _walk(route, arrivals, env)
        return acked, seen, cache.waited

    event_acked, event_seen, event_waited = run(False)
    entry_acked, entry_seen, entry_waited = run(True)
    assert (event_waited > 100) == (slots == 2)  # the small cache does fill
    assert entry_waited == event_waited
    assert entry_acked == event_acked  # the same floats: same times, same draws in the same order
    assert entry_seen == event_seen


def test_a_split_then_a_constant_delay_is_one_event_at_the_delay_end() -> None:
    """A split whose children join ahead of time (a ``CHAIN_JOIN`` chain), then a constant delay (z/VM's
    turnaround after the channel program): each I/O moves on at the same time as with a phase event and a
    delay event, with one event fewer per I/O."""
    from sim.des.components import CHAIN_JOIN, Split

    arrivals = _arrivals(800, 41)

    def run(fixed: bool) -> tuple[list[float], int]:
        env = Environment()
        jobs = JobFactory()
        st = FifoStation(env, "channel", 1, lambda job: 0.2 * job.cost + 1.0)
        split = Split(lambda job: [], jobs, env)
        chain = Chain(env, [st.commit], CHAIN_JOIN, split, jobs)
        split.planner = lambda job: [[((chain,), 4096, 0, 0)], [((chain,), 4096, 0, 0), ((chain,), 4096, 0, 0)]]
        turnaround = Delay(env, lambda job: 152.9931, "turnaround", fixed=fixed)
        done = _walk((split, turnaround), arrivals, env)
        return done, int(next(env._eid)) - env.pending()

    event_done, event_events = run(False)
    folded_done, folded_events = run(True)
    assert folded_done == event_done
    assert folded_events == event_events - len(arrivals)


@pytest.mark.parametrize("servers", [1, 3])
def test_inline_service_laws_give_the_departures_of_the_service_they_stand_for(servers: int) -> None:
    """``SERVICE_BYTES`` (size x per byte, a link) and ``SERVICE_COST`` (the host CPU's job.cost) are computed in
    ``commit`` without calling ``service``: to the last bit the departures of the station that calls it."""
    from sim.des.components import SERVICE_BYTES, SERVICE_COST

    arrivals = _arrivals(1_500, 23)
    per_byte = 1.0 / (0.4 * 1e3)  # 0.4 GB/s in us per byte: about 9 us per job, a long queue

    def run(law: int, inline: bool) -> list[float]:
        env = Environment()
        service = (lambda job: job.size * per_byte) if law == SERVICE_BYTES else (lambda job: job.cost)
        st = FifoStation(env, "st", servers, service)
        if inline:
            st.service_law(law, per_byte)
        done: list[float] = []
        route = (st, lambda job: done.append(env.now))
        for i, (t, s) in enumerate(arrivals):
            job = Job()
            job.size = int(s * 400 * servers) + 1
            job.cost = s * servers
            job.slot = i
            job.route = route  # type: ignore[assignment]

            start_at(env, job, t)
        env.run()
        return done

    for law in (SERVICE_BYTES, SERVICE_COST):
        called = run(law, False)
        assert len(called) == len(arrivals) and called[-1] - arrivals[-1][0] > 50.0  # queued
        assert run(law, True) == called


def test_a_hop_with_many_events_in_flight_shares_one_callbacks_list() -> None:
    """Every event of a hop carries the hop's one callbacks list (SimPy takes it off the event and never
    changes it): hundreds of timeouts in flight at once each still take their own job on, at its own time."""
    env = Environment()
    rnd = random.Random(5)
    delays = [rnd.uniform(1.0, 100.0) for _ in range(400)]
    delay = Delay(env, lambda job: delays[job.slot], "wait")
    done: dict[int, float] = {}
    route = (delay, lambda job: done.__setitem__(job.slot, env.now))
    for i in range(len(delays)):
        job = Job()
        job.slot = i
        job.route = route  # type: ignore[assignment]
        job.step = -1
        from sim.des.components import advance
        advance(job)
    assert env.pending() == len(delays)
    assert len({id(e.callbacks) for e in env.clock.events}) == 1
    env.run()
    assert done == {i: d for i, d in enumerate(delays)}


@pytest.mark.parametrize("slots", [2, 64])
def test_a_write_entry_across_a_shared_uplink_and_own_links_takes_slots_and_acks_as_the_event_walk(slots: int) -> None:
    """S2's way in: two devices behind one adapter uplink, each with its own drive link, write cache and
    acknowledgement draws. Through one ``WriteEntry`` per device (channel: the shared uplink, then the device's
    link, reached ahead of time), every write is acknowledged at the time and with the draw the event walk gives
    (the channel as one ``Chain``, as ``Fusion`` folds it, then the slot and the acknowledgement by events), and
    the uplink, the links and the caches meter the same floats; with 2 slots per cache the caches fill (the
    entries' event way and the waiters' wakes are taken), with 64 they never do."""
    from sim.des.components import BookedPool, Pool, WriteEntry, advance

    arrivals = _arrivals(2_000, 41)
    draws = random.Random(43)
    holds = [draws.expovariate(1 / 25.0) for _ in arrivals]
    marks = [arrivals[k][0] + 0.25 for k in range(30, 2_000, 71)]

    def run(entered: bool) -> tuple[list[float], list[float], int]:
        env = Environment()
        rnd = [random.Random(47), random.Random(53)]
        uplink = FifoStation(env, "uplink", 1, lambda job: 0.3 * job.cost)
        links = [FifoStation(env, f"link{d}", 1, lambda job: 0.4 * job.cost) for d in range(2)]
        caches = [BookedPool(env, f"cache{d}", slots) if entered else Pool(env, f"cache{d}", slots) for d in range(2)]
        acks = [Delay(env, lambda job, r=r: r.expovariate(1 / 4.0), "ack") for r in rnd]
        acked: list[float] = [0.0] * len(arrivals)

        def acknowledged(job: Job) -> None:
            acked[job.slot] = env.now
            advance(job)

        def destage(job: Job) -> None:  # the destage's chain books the slot's release (``BookedPool.release_at``)
            cache = caches[job.member]
            if isinstance(cache, BookedPool):
                cache.release_at(job, env.now + holds[job.slot])
            else:
                env.timeout(holds[job.slot]).callbacks.append(lambda e, c=cache: c.release(_done()))
            advance(job)

        routes = []
        for d in range(2):
            cache = caches[d]
            if isinstance(cache, BookedPool):
                entry = WriteEntry(env, (uplink, links[d]), cache, acks[d])
                routes.append((entry, cache.acquire, entry.acknowledge, acknowledged, destage))
            else:  # the channel as ``Fusion`` folds it, a chain reaching the link ahead of time, then events
                links[d].reached_ahead()
                routes.append((Chain(env, [uplink.commit, links[d].commit]), cache.acquire, acks[d], acknowledged, destage))

        def device(job: Job) -> None:  # writes alternate in runs of 1 to 3 between the two devices
            job.member = (job.slot // (1 + job.slot % 3)) % 2
            job.route = (*routes[job.member], lambda j: None)
            job.step = -1
            advance(job)

        seen: list[float] = []
        meters = [uplink, *links, *caches]
        for m in marks:
            env.timeout(m).callbacks.append(
                lambda e: seen.extend(x for meter in meters for x in (meter.unit_time(), meter.busy_area)))
        _walk((device,), arrivals, env)
        if entered:
            assert links[0].booked and not uplink.booked  # the links are reached ahead, the uplink at once
        return acked, seen, sum(c.waited for c in caches)

    event_acked, event_seen, event_waited = run(False)
    entry_acked, entry_seen, entry_waited = run(True)
    assert (event_waited > 100) == (slots == 2)
    assert entry_waited == event_waited
    assert entry_acked == event_acked
    assert entry_seen == event_seen


def _done() -> Job:
    """A job at the end of its route (what a destage releasing a slot is: ``Pool.release`` passes it on)."""
    stand_in = Job()
    stand_in.route = (lambda j: None,)
    stand_in.step = -1
    return stand_in


def test_a_booked_pool_counts_the_releases_booked_by_the_acquire_time() -> None:
    """``BookedPool.can_book(now, t)``: a full pool has a slot at ``t`` when a release is booked by then (a release
    at the acquire's own time comes first), none before it or while a job waits."""
    from sim.des.components import BookedPool

    env = Environment()
    pool = BookedPool(env, "cache", 2)
    pool.acquire_at(0.0)
    pool.acquire_at(0.0)
    assert not pool.can_book(0.0, 10.0)  # full, nothing booked to leave
    pool.release_at(Job(), 5.0)
    assert not pool.can_book(0.0, 4.0)
    assert pool.can_book(0.0, 5.0)
    assert pool.can_book(0.0, 6.0)
    pool.acquire_at(5.0)  # takes the slot the release at 5 frees
    assert not pool.can_book(0.0, 6.0)
    pool.release_at(Job(), 7.0)
    pool.release_at(Job(), 8.0)
    assert not pool.can_book(0.0, 6.0)
    assert pool.can_book(0.0, 7.0)  # the second release is needed only by a second acquire
    pool.acquire_at(7.0)
    assert not pool.can_book(0.0, 7.5) and pool.can_book(0.0, 8.0)
    pool.waiting.append(Job())
    assert not pool.can_book(0.0, 100.0)  # a waiter takes the next slot


def _s2_hops() -> tuple[Any, Any, Any]:
    """S2's route (examples/s2_ibmi_8x4_mirrored.yaml) under the pooled device model as DES components, and a ``_Hops``
    that turns steps into hops (under ``dies``, the default for its drives, tests/des/test_write_only_dies.py pins the
    entry: its controller is the entry's last channel station)."""
    from models.scenario import load_scenario
    from sim.des.model import Builder, _Hops, components
    from sim.des.rng import Streams
    from sim.route.describe import DirectRoute, describe
    from sim.route.steps import layout

    route = describe(load_scenario(ROOT / "examples" / "s2_ibmi_8x4_mirrored.yaml").model_copy(update={"device_model": "pooled"}))
    assert isinstance(route, DirectRoute)
    lay = layout(route)
    b = Builder(Environment(), Streams(1), JobFactory(), route.reads_meet_programs)
    made = components(b, lay)
    return route, lay, _Hops(b, made, None, None, lambda: _end)


def _end(job: Job) -> None:
    """A device route's last hop in these tests (the volume split's join in a model)."""


def _checked(hops: Any, routes: list[tuple[int, Sequence[Any]]]) -> list[list[Any]]:
    """Each (member, steps) as hops, scanned by ``Fusion`` and checked (``_Hops.check_entries``)."""
    from sim.des.components import WRITE

    raw = {(m, WRITE, k, False): make_route(*hops.hops(steps, m, WRITE, 0), _end) for k, (m, steps) in enumerate(routes)}
    hops.check_entries(Fusion(hops.b.env, hops.b.jobs, raw))
    return [list(r) for r in raw.values()]


def test_s2_writes_enter_each_drive_through_the_uplink_and_its_link_as_one_write_entry() -> None:
    """Every S2 write route takes one ``WriteEntry`` for the adapter uplink, the drive link, the cache slot and the
    acknowledgement (the route description's steps, not an S2 case): one entry per drive, whose channel is its
    adapter's uplink then its own link towards the device, the link reached ahead, the uplink not."""
    from sim.des.components import WRITE, WriteEntry

    route, lay, hops = _s2_hops()
    members = route.volume.members
    routes = _checked(hops, [(m, lay.steps[(WRITE, False)]) for m in range(members)])
    entries = [[h for h in r if isinstance(h, WriteEntry)] for r in routes]
    assert all(len(e) == 1 for e in entries)
    channels = [[st.name for st in e[0].channel] for e in entries]
    drive = [instance_of(route.devices.of, m) for m in range(members)]
    assert len({id(e[0]) for e in entries}) == len(route.devices.names) < members  # one per drive, its namespaces share it
    assert all((entries[m][0] is entries[n][0]) == (drive[m] == drive[n]) for m in range(members) for n in range(members))
    assert route.drive_links is not None
    for m, names in enumerate(channels):
        up = route.uplinks.names[instance_of(route.uplinks.of, m)]
        assert names == [f"{up}.to_device", f"{route.drive_links.names[instance_of(route.drive_links.of, m)]}.to_device"]
        assert names[1].startswith(route.devices.names[drive[m]])
        assert entries[m][0].channel[1].booked and not entries[m][0].channel[0].booked
    assert len({names[0] for names in channels}) == len(route.uplinks.names) < members  # drives share an uplink


def test_a_route_that_breaks_a_write_entrys_order_is_refused() -> None:
    """The proof a ``WriteEntry`` rests on fails, and the model is refused, when a drive is written through two
    channels, written without its entry, its link is fed by something else than the uplink, or the uplink
    itself is reached ahead of time behind another single-server station."""
    from sim.des.components import WRITE
    from sim.route.elements import Channel
    from sim.route.steps import TO_DEVICE, Cross, Device, Transfer

    def refused(extra: Callable[[Any], list[Any]], match: str) -> None:
        route, lay, hops = _s2_hops()  # new components each time: an entry belongs to one model
        with pytest.raises(RuntimeError, match=match):
            _checked(hops, [(0, lay.steps[(WRITE, False)]), (0, extra(route))])

    refused(lambda r: [Cross(r.drive_links, TO_DEVICE), Device(r.devices, WRITE)], "through more than one channel")
    refused(lambda r: [Device(r.devices, WRITE)], "through a WriteEntry and another way")
    refused(lambda r: [Cross(r.drive_links, TO_DEVICE)], "fed by more than")
    route, lay, hops = _s2_hops()
    before = Channel("before", 10.0)
    hops.made[id(before)] = [hops.b.bytes_station("before", 10.0)]
    with pytest.raises(RuntimeError, match="reached ahead of time"):
        _checked(hops, [(0, [Transfer(before), Cross(route.uplinks, TO_DEVICE), Cross(route.drive_links, TO_DEVICE),
                             Device(route.devices, WRITE)])])
    route, lay, hops = _s2_hops()
    write = lay.steps[(WRITE, False)]
    _checked(hops, [(0, write), (0, write)])  # the same way in twice: the one entry, nothing refused


@pytest.mark.parametrize("program_us", [20.0, 45.0])
def test_a_write_that_surely_waits_for_a_destage_joins_the_waiters_without_an_event_and_as_the_event_walk(
        program_us: float) -> None:
    """A flash device's write path, its cache's slots freed by destages through a write channel and three program
    units (random program times: destages end out of order). Through a ``WriteEntry`` whose cache knows its
    releases come from the program units (``BookedPool.releases_after``), a write that surely finds the cache full
    joins the waiters without an event at its channel departure; every write is acknowledged at the time and with
    the draw of the event walk (link, slot, acknowledgement, destage: each hop by events), the cache meters the
    same, holds and queues as many writes at any time (``load``) and as many writes waited; at 45 us per program
    (past the units' capacity: the cache stays full) most writes take that way: an event fewer per write than the
    same entry without ``releases_after``."""
    from sim.des.components import CHAIN_DROP, BookedPool, Fork, Pool, WriteEntry, advance

    arrivals = _arrivals(2_500, 59)
    marks = [arrivals[k][0] + 0.75 for k in range(25, 2_500, 89)]

    def run(entered: bool, feeder: bool = True) -> tuple[list[float], list[float], int, int]:
        env = Environment()
        jobs = JobFactory()
        acks, programs = random.Random(61), random.Random(67)
        link = FifoStation(env, "link", 1, lambda job: 0.5 * job.cost)
        write_bw = FifoStation(env, "write_bw", 1, lambda job: 0.2 * job.cost)
        units = FifoStation(env, "program_units", 3, lambda job: programs.expovariate(1 / program_us))
        cache = BookedPool(env, "write_cache", 4) if entered else Pool(env, "write_cache", 4)
        ack = Delay(env, lambda job: acks.expovariate(1 / 3.0), "ack")
        acked: list[float] = [0.0] * len(arrivals)

        def acknowledged(job: Job) -> None:
            acked[job.slot] = env.now
            advance(job)

        if isinstance(cache, BookedPool):
            units.reached_ahead()
            if feeder:
                cache.releases_after(units)
            destage = Fork((), jobs)
            destage.set_body((Chain(env, [write_bw.commit, units.commit, cache.release_at], CHAIN_DROP, jobs=jobs),))
            entry = WriteEntry(env, (link,), cache, ack)
            route: tuple[object, ...] = (entry, cache.acquire, entry.acknowledge, acknowledged, destage)
        else:
            route = (link, cache.acquire, ack, acknowledged, Fork((write_bw, units, cache.release), jobs))
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: seen.extend((cache.unit_time(), cache.busy_area, cache.load)))
        _walk(route, arrivals, env)  # type: ignore[arg-type]
        return acked, seen, cache.waited, next(env._eid)

    event_acked, event_seen, event_waited, event_events = run(False)
    entry_acked, entry_seen, entry_waited, entry_events = run(True)
    plain_events = run(True, feeder=False)[3]  # the entry without the proof: a full cache's writes by events
    assert entry_acked == event_acked
    assert entry_seen == event_seen
    assert entry_waited == event_waited
    if program_us > 40.0:
        assert event_waited > 0.9 * len(arrivals)  # the cache stays full
        assert entry_events < plain_events - 0.6 * len(arrivals)  # most without an event at the channel departure
    assert entry_events <= plain_events < event_events


def test_fewer_by_counts_a_heap_s_times_up_to_t_as_a_sort_does() -> None:
    """``_fewer_by(heap, t, k)``, the walk down a heap ``can_book`` and ``surely_waits`` count releases with, says
    what counting the sorted times says, ties and bounds included."""
    from heapq import heapify

    from sim.des.components import _fewer_by

    rnd = random.Random(71)
    for n in (0, 1, 2, 7, 64, 300):
        heap = [float(rnd.randrange(50)) for _ in range(n)]
        heapify(heap)
        for t in (-1.0, 0.0, 10.0, 24.5, 25.0, 49.0, 60.0):
            up_to = sum(1 for x in heap if x <= t)
            for k in (0, 1, 2, 5, n, n + 1):
                assert _fewer_by(heap, t, k) == (up_to < k), (n, t, k)


def test_a_read_booked_from_when_its_die_is_free_departs_and_meters_as_the_event_walk() -> None:
    """A z/VM read page's media stage in one event (``DieThenUnit``): the die looked at on the read's arrival,
    its read unit booked from when the die is free, ahead of reads that arrive meanwhile (bookings out of time
    order: ``FifoStation.reached_out_of_order``). With units to spare (none ever waits for one) the departures
    are the event walk's (wait for the die by an event, then an event-driven unit), and so are the units'
    busy unit-time and busy time, read at any time."""
    from sim.des.components import advance
    from sim.des.model import DieProgramLocks, DieThenUnit

    programs = [(t / 4, s * 30.0) for t, s in _arrivals(600, 5)]  # four program units, long programs
    rnd = random.Random(11)
    reads = sorted(rnd.uniform(0.0, programs[-1][0]) for _ in range(2_000))
    services = [rnd.expovariate(1 / 9.0) for _ in reads]
    picks = [rnd.random() for _ in reads]
    marks = [reads[k] + 0.25 for k in range(40, 2_000, 77)]

    def run(one_event: bool) -> tuple[list[float], list[float], list[float]]:
        env = Environment()
        it = iter(picks)
        locks = DieProgramLocks(env, 6, lambda: next(it))
        program_units = FifoStation(env, "program_units", 4, lambda job: job.cost, locks.book)
        cls = FifoStation if one_event else Station
        units = cls(env, "read_units", len(reads), lambda job: job.cost)  # a unit for every read: none ever waits
        media: tuple[Any, ...] = (DieThenUnit(locks, units),) if one_event else (locks.wait_for_own_die, units)  # type: ignore[arg-type]
        done = [0.0] * len(reads)
        for t, s in programs:
            job = Job()
            job.cost = s
            job.route = (program_units, lambda j: None)
            env.timeout(t).callbacks.append(lambda e, job=job: advance(job))  # type: ignore[misc]
        for i, (t, s) in enumerate(zip(reads, services, strict=True)):
            job = Job()
            job.cost = s
            job.slot = i
            job.route = (*media, lambda j: done.__setitem__(j.slot, env.now))
            env.timeout(t).callbacks.append(lambda e, job=job: advance(job))  # type: ignore[misc]
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: seen.append(units.unit_time()))
        busy: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(lambda e: busy.append(units.busy_area))
        env.run()
        return done, seen, busy

    event_done, event_seen, event_busy = run(False)
    one_done, one_seen, one_busy = run(True)
    waited = sum(1 for d, t, s in zip(event_done, reads, services, strict=True) if d - t > s + 1e-9)
    assert waited > len(reads) // 10  # reads do wait for programs
    assert one_done == pytest.approx(event_done, abs=1e-9)
    assert one_seen == pytest.approx(event_seen, abs=1e-6)
    assert one_busy == pytest.approx(event_busy, abs=1e-6)
