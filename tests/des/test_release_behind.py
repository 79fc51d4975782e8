"""A SAN write-back cache in fewer events.

A slot given back behind a background route (``ReleaseBehind``: a destage) costs no event when the route fuses
into a chain: the release is booked at the chain's end (``BookedRelease``, ``BookedPool.release_at``), and every
write is granted its slot and acknowledged at the times of the event walk. A write's controller, cache slot and
acknowledgement are one event while the cache surely has a slot free (``CacheEntry``)."""

from __future__ import annotations

import random

import pytest
import simpy

from sim.des.components import (
    CHAIN_DROP,
    WRITE,
    BookedPool,
    BookedRelease,
    Chain,
    Delay,
    FifoStation,
    Fork,
    Job,
    JobFactory,
    Pool,
    Split,
    advance,
)
from sim.des.environment import Environment
from sim.des.model import Fusion
from tests.des.walk import start_at


def _arrivals(n: int, seed: int) -> list[tuple[float, float]]:
    rnd = random.Random(seed)
    t, out = 0.0, []
    for _ in range(n):
        t += rnd.expovariate(1 / 10.0)
        out.append((t, rnd.expovariate(1 / 9.0)))
    return out


def _done(job: Job) -> None:
    """The end of a test route."""


def _walk(route: tuple[object, ...], arrivals: list[tuple[float, float]], env: simpy.Environment) -> None:
    for i, (t, s) in enumerate(arrivals):
        job = Job()
        job.slot = i
        job.cost = s
        job.size = round(s * 1000)  # what a fork's child inherits: the destage's service reads it
        job.route = route  # type: ignore[assignment]

        start_at(env, job, t)
    env.run()


@pytest.mark.parametrize("slots", [2, 64])
def test_a_destage_fused_with_its_release_grants_and_meters_as_the_event_walk(slots: int) -> None:
    """Write cache slot -> acknowledgement (a random draw per write) -> destage through a single-server channel
    in the background, then the slot given back: with the release booked at the destage's end (one chain, no
    event) every write gets its slot and is acknowledged at the same time (the same floats) as when the release
    is a hop after the destage's event, and the cache and the channel meter the same. With 2 slots the cache
    fills (writes wait: the booked pool's wakes hand the slots on), with 64 it never does, and then each destage
    costs exactly one event fewer."""
    arrivals = _arrivals(1_500, 43)
    marks = [arrivals[k][0] + 0.5 for k in range(40, 1_500, 83)]

    def run(booked: bool) -> tuple[list[float], list[float], int, int]:
        env = Environment()
        jobs = JobFactory()
        rnd = random.Random(47)
        cache = BookedPool(env, "write_cache", slots) if booked else Pool(env, "write_cache", slots)
        channel = FifoStation(env, "destage", 1, lambda job: 1.05e-3 * job.size)  # a little overloaded: a queue
        ack = Delay(env, lambda job: rnd.expovariate(1 / 4.0), "ack")
        acked: list[float] = [0.0] * len(arrivals)

        def acknowledged(job: Job) -> None:
            acked[job.slot] = env.now
            advance(job)

        def done(job: Job) -> None:
            """The route's last hop: the write is through (nothing more to record)."""

        if isinstance(cache, BookedPool):
            raw = (cache.acquire, ack, acknowledged, Fork((channel, BookedRelease(cache)), jobs), done)
            route = tuple(Fusion(env, jobs, {(0, WRITE, 0, False): raw}).route(raw, None))
            fork = route[3]
            assert isinstance(fork, Fork) and len(fork.route) == 1  # one chain that drops the child
            chain = fork.route[0]
            assert isinstance(chain, Chain) and chain.end == CHAIN_DROP and len(chain.parts) == 2
        else:
            route = (cache.acquire, ack, acknowledged, Fork((channel, cache.release), jobs), done)
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(
                lambda e: seen.extend((channel.unit_time(), channel.busy_area, cache.unit_time(), cache.busy_area,
                                       float(cache.load))))
        _walk(route, arrivals, env)
        return acked, seen, cache.waited, int(next(env._eid))

    event_acked, event_seen, event_waited, event_events = run(False)
    booked_acked, booked_seen, booked_waited, booked_events = run(True)
    assert (event_waited > 100) == (slots == 2)  # the small cache does fill
    assert booked_waited == event_waited
    assert booked_acked == event_acked  # the same floats: same times, same draws in the same order
    assert booked_seen == event_seen
    if slots == 64:
        assert booked_events == event_events - len(arrivals)  # no event at any destage's end
    else:
        assert booked_events < event_events


def test_a_release_behind_a_pool_stays_a_hop() -> None:
    """A background route that does not start with a timed hop (here a pool) has no chain for the release to
    join: it stays a hop, run when the route reaches it."""
    env = Environment()
    jobs = JobFactory()
    cache = BookedPool(env, "write_cache", 4)
    other = Pool(env, "other", 1)
    channel = FifoStation(env, "destage", 1, lambda job: 1.0)
    release = BookedRelease(cache)
    fork = Fork((other.acquire, release), jobs)
    Fusion(env, jobs, {(0, WRITE, 0, False): (channel, fork)}).route((channel, fork), None)
    assert fork.body[-1] is release


def test_a_late_route_feeding_a_station_of_a_fused_destage_raises() -> None:
    """A destage of two channels (the second fed by nothing but the first, one server: reached ahead) fuses with
    its release; a device route built during the run that feeds the second channel another way would let its
    arrivals come out of time order, so it is refused."""
    env = Environment()
    jobs = JobFactory()
    cache = BookedPool(env, "write_cache", 4)
    first, second, port = (FifoStation(env, name, 1, lambda job: 1.0) for name in ("first", "second", "port"))
    split = Split(lambda job: [], jobs, env)
    raw = (cache.acquire, Fork((first, second, BookedRelease(cache)), jobs), split.join)
    fusion = Fusion(env, jobs, {(0, WRITE, 0, False): raw})
    fork = fusion.route(raw, split)[1]
    assert isinstance(fork, Fork) and isinstance(fork.body[0], Chain) and len(fork.body[0].parts) == 3
    with pytest.raises(RuntimeError, match="fused ahead of time"):
        fusion.late((port, second, split.join), split)


def test_the_san_write_back_destage_is_one_chain_with_its_release_booked() -> None:
    """The SAN example's writes (``ReleaseBehind`` of the server's write cache) fork a destage that is one chain
    dropping the child, its last part the write cache's booked release."""
    from models.scenario import load_scenario
    from sim.des.model import build
    from sim.des.rng import Streams

    env = Environment()
    model = build(env, load_scenario("examples/s5_fs9100_nvmefc.yaml"), Streams(1), JobFactory())
    assert model.device_routes is not None
    forks = [h for h in model.device_routes(0, WRITE) if isinstance(h, Fork)]
    chains = [f.route[0] for f in forks if len(f.route) == 1 and isinstance(f.route[0], Chain)]
    destages = [c for c in chains if getattr(c.parts[-1], "__self__", None) is not None
                and isinstance(c.parts[-1].__self__, BookedPool)]
    assert len(destages) == 1
    pool = destages[0].parts[-1].__self__  # type: ignore[attr-defined]
    assert pool.name == "server.write_cache" and destages[0].end == CHAIN_DROP


@pytest.mark.parametrize("slots", [3, 200])
def test_a_cache_entry_behind_a_station_of_several_servers_grants_and_acknowledges_as_the_event_walk(slots: int) -> None:
    """Controller (3 servers: departures out of arrival order) -> write cache slot -> acknowledgement -> destage
    in the background that frees the slot, through a ``CacheEntry`` (the slot booked at the controller departure,
    one event per write while the cache surely has a slot free) and walked hop by hop with events. The
    acknowledgement is a draw per write (fixed per job here: the entry draws it when the write enters the
    controller, the event walk when it leaves; only the order of the draws differs).

    With 200 slots the cache never fills: every write is acknowledged at the same time, the controller and the
    cache meter the same, and each write costs exactly one event fewer. With 3 slots it fills most of the time:
    a write that booked its slot keeps it ahead of a later one that leaves the controller first (the event walk
    grants it to the first to leave), so single times differ, but the cache never holds more than its slots
    and the writes wait and are acknowledged as often and as late on average."""
    from sim.des.components import CacheEntry

    arrivals = [(t / 3, s) for t, s in _arrivals(1_500, 53)]  # 3 servers at utilization 0.9
    rnd = random.Random(59)
    acks = [rnd.expovariate(1 / 4.0) for _ in arrivals]
    holds = [rnd.expovariate(1 / 2.5) for _ in arrivals]  # destage: a little overloaded with 3 slots
    marks = [arrivals[k][0] + 0.5 for k in range(40, 1_500, 83)]

    def run(entered: bool) -> tuple[list[float], list[float], int, int, int]:
        env = Environment()
        jobs = JobFactory()
        controller = FifoStation(env, "controller", 3, lambda job: job.cost)
        cache = BookedPool(env, "write_cache", slots)
        ack = Delay(env, lambda job: acks[job.slot], "ack")
        acked: list[float] = [0.0] * len(arrivals)
        most = [0]

        def held() -> int:
            cache.settle_now()
            most[0] = max(most[0], cache.in_use)
            return cache.in_use

        def mark(job: Job) -> None:
            job.size = job.slot  # what a fork's child inherits: the destage finds its hold by it
            advance(job)

        def acknowledged(job: Job) -> None:
            acked[job.slot] = env.now
            held()
            advance(job)

        destage = FifoStation(env, "destage", 1, lambda job: holds[job.size])
        behind = Fork((destage, BookedRelease(cache)), jobs)
        if entered:
            entry = CacheEntry(env, controller, cache, ack)
            raw: tuple[object, ...] = (mark, entry, entry.acquire, entry.acknowledge, acknowledged, behind, _done)
        else:
            raw = (mark, controller, cache.acquire, ack, acknowledged, behind, _done)
        route = tuple(Fusion(env, jobs, {(0, WRITE, 0, False): raw}).route(raw, None))  # type: ignore[arg-type]
        seen: list[float] = []
        for m in marks:
            env.timeout(m).callbacks.append(
                lambda e: seen.extend((controller.unit_time(), controller.busy_area, cache.unit_time(),
                                       cache.busy_area, float(cache.load), float(held()))))
        _walk(route, arrivals, env)
        return acked, seen, cache.waited, int(next(env._eid)), most[0]

    event_acked, event_seen, event_waited, event_events, event_most = run(False)
    entry_acked, entry_seen, entry_waited, entry_events, entry_most = run(True)
    assert event_most <= slots and entry_most <= slots  # never more slots held than the cache has
    if slots == 200:
        assert event_waited == entry_waited == 0
        assert entry_acked == event_acked  # the same floats: same times
        assert entry_seen == pytest.approx(event_seen, rel=1e-12, abs=1e-9)
        assert entry_events == event_events - len(arrivals)  # no event at any controller departure
    else:
        assert event_waited > len(arrivals) // 2 and entry_most == slots  # the cache is full most of the time
        assert entry_waited == pytest.approx(event_waited, rel=0.05)
        t0 = [t for t, _ in arrivals]
        event_mean = sum(a - t for a, t in zip(event_acked, t0, strict=True)) / len(t0)
        entry_mean = sum(a - t for a, t in zip(entry_acked, t0, strict=True)) / len(t0)
        assert entry_mean == pytest.approx(event_mean, rel=0.02)


def _san_like_hops(env: simpy.Environment) -> tuple[object, object, object]:
    """A ``_Hops`` over a controller, a write-back cache given back behind a destage, and its acknowledgement."""
    from sim.des.model import Builder, _Hops, _make, _released_behind
    from sim.des.rng import Streams
    from sim.route.elements import Channel, PoolBank, ServiceLaw, StationBank
    from sim.route.steps import Acquire, ReleaseBehind, Serve, Transfer, Wait
    from sim.route.steps import Delay as DelayElement

    controller = StationBank(("controller",), 4, ServiceLaw(20.0, "lognormal", 0.5))
    cache = PoolBank(("write_cache",), 8)
    hit = DelayElement("cache_hit", ServiceLaw(100.0, "lognormal", 0.5))
    destage = Channel("destage", 10.0)
    write = (Serve(controller), Acquire(cache), Wait(hit), ReleaseBehind(cache, (Transfer(destage),)))
    b = Builder(env, Streams(1), JobFactory())
    b.released_behind = _released_behind(write)
    made = {id(e): _make(b, e, None) for e in (controller, cache, hit, destage)}
    hops = _Hops(b, made, None, None, lambda: None)  # type: ignore[arg-type,return-value]
    return hops, write, Acquire(cache)


def test_a_write_cache_entered_from_a_station_and_acquired_another_way_raises() -> None:
    """A ``CacheEntry`` books a slot when the cache surely has one free, counting the slots in use and booked: a
    slot taken meanwhile by a plain acquire elsewhere could be the one it counted on, so such a route is refused."""
    from sim.des.components import CacheEntry

    hops, write, plain = _san_like_hops(Environment())
    route = hops.hops(write, 0, WRITE, 0)  # type: ignore[attr-defined]
    assert isinstance(route[0], CacheEntry) and len(route) == 4
    hops.check_cache_entries()  # type: ignore[attr-defined]  # entered one way only: fine
    hops.hops((plain,), 0, WRITE, 0)  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match="acquired another way"):
        hops.check_cache_entries()  # type: ignore[attr-defined]


def test_the_san_write_enters_its_cache_through_the_controller_in_one_event() -> None:
    """The SAN example's writes: the controller, the write cache's slot and the cache-hit acknowledgement are one
    ``CacheEntry``; its reads keep their own chain through the controller."""
    from models.scenario import load_scenario
    from sim.des.components import CacheEntry
    from sim.des.model import build
    from sim.des.rng import Streams

    env = Environment()
    model = build(env, load_scenario("examples/s5_fs9100_nvmefc.yaml"), Streams(1), JobFactory())
    assert model.device_routes is not None
    entries = [h for h in model.device_routes(0, WRITE) if isinstance(h, CacheEntry)]
    assert len(entries) == 1
    entry = entries[0]
    assert entry.station.name == "server.controller" and entry.station.capacity > 1
    assert entry.cache.name == "server.write_cache"
