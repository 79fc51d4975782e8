"""The read channel and link of a z/VM read SSCH booked at its last page's start (``sim.des.model.Backfill``):
a single-server FCFS queue whose arrivals are booked before they happen, out of time order."""

from __future__ import annotations

import random
from itertools import pairwise

import pytest

from sim.des.components import FifoStation, Job
from sim.des.environment import Environment
from sim.des.model import Backfill


def _queue() -> tuple[Backfill, FifoStation]:
    st = FifoStation(Environment(), "channel", 1, lambda job: job.cost)
    return Backfill(st), st


def _job(service: float) -> Job:
    job = Job()
    job.cost = service
    return job


def test_a_block_booked_late_that_fits_before_a_later_arrival_leaves_as_fcfs_by_arrival() -> None:
    q, _ = _queue()
    a = q.book(_job(5.0), 10.0, 0.0)  # A arrives at 10, booked first
    b = q.book(_job(3.0), 2.0, 1.0)  # B arrives at 2, booked later: served 2..5, before A arrives
    assert (a, b, q.late) == (15.0, 5.0, 0)


def test_a_block_waits_for_those_that_arrived_before_it_whatever_the_booking_order() -> None:
    q, _ = _queue()
    a = q.book(_job(5.0), 2.0, 0.0)
    b = q.book(_job(1.0), 3.0, 0.0)
    c = q.book(_job(2.0), 1.0, 0.5)  # arrived first, booked last: the channel is busy with A from 2, so it would
    # have started at 1 and pushed A: it cannot (A is booked), it takes the first gap that holds it, behind B
    assert (a, b, c, q.late) == (7.0, 8.0, 10.0, 1)


def test_a_block_that_does_not_fit_before_the_next_booked_start_is_served_behind_it_and_counted_late() -> None:
    q, st = _queue()
    a = q.book(_job(5.0), 10.0, 0.0)
    b = q.book(_job(4.0), 8.0, 1.0)  # FCFS by arrival: 8..12, then A 12..17; A is booked: B goes 15..19
    assert (a, b, q.late) == (15.0, 19.0, 1)
    assert st.c_area == pytest.approx(9.0)


def _lindley(arrivals: list[tuple[float, float]]) -> list[float]:
    free, out = 0.0, []
    for t, s in arrivals:
        free = max(t, free) + s
        out.append(free)
    return out


@pytest.mark.parametrize(("rate", "lookahead"), [(0.5, 0.0), (0.1, 3.0), (0.5, 4.0)])
def test_random_bookings_keep_fcfs_by_arrival_when_none_is_late_and_never_overlap(rate: float, lookahead: float) -> None:
    """Arrivals at load ``rate`` (mean service 1), each booked up to ``lookahead`` before it happens (a last page's
    media stage), in booking order. With none late the departures are Lindley's in arrival order, bit for bit, also
    when bookings came out of arrival order; in every case the services never overlap, none starts before its
    arrival and the booked busy time is their sum."""
    exact = reordered = late = 0
    for seed in range(40):
        rng = random.Random(seed)
        t, arrivals = 0.0, []
        for _ in range(40):
            t += rng.expovariate(rate)
            arrivals.append((t, rng.expovariate(1.0)))
        booked_at = [at - rng.uniform(0.0, lookahead) for at, _ in arrivals]
        order = sorted(range(len(arrivals)), key=lambda k: booked_at[k])  # the clock's order
        q, st = _queue()
        done = [0.0] * len(arrivals)
        for k in order:
            done[k] = q.book(_job(arrivals[k][1]), arrivals[k][0], booked_at[k])
        starts = [done[k] - s for k, (_, s) in enumerate(arrivals)]
        assert all(start >= at - 1e-9 for start, (at, _) in zip(starts, arrivals, strict=True))
        spans = sorted(zip(starts, done, strict=True))
        assert all(e0 <= s1 + 1e-9 for (_, e0), (s1, _) in pairwise(spans))
        assert st.c_area == pytest.approx(sum(s for _, s in arrivals))
        if q.late == 0:
            exact += 1
            reordered += order != sorted(order)
            assert done == _lindley(arrivals)
        else:
            late += 1
    if lookahead == 0.0:
        assert (exact, late) == (40, 0)  # booked in arrival order: the plain Lindley queue
    elif rate < 0.5:
        assert reordered > 0 and late > 0  # bookings out of arrival order that all fit: the event walk's times
    else:
        assert late > 0  # bookings that do not fit do occur (and are counted)


def test_a_zvm_read_sschs_last_page_carries_its_block_and_the_split_ends_at_the_turnaround() -> None:
    """S4's read SSCH (seed 003): the page split is followed by the turnaround (no read channel or link hop of its
    own); each page but the last is its media stage alone, the last its media stage then the block's channel and
    link (``LastPageBlock``), the block of the SSCH's whole size."""
    from models.scenario import load_scenario
    from sim.des.components import Chain, Delay, JobFactory, Split
    from sim.des.model import LastPageBlock, build
    from sim.des.rng import Streams
    from sim.route.steps import READ

    env = Environment()
    paging = load_scenario("calibration/scenarios/s4_paging.yaml").model_copy(update={"device_model": "pooled"})  # its read units
    model = build(env, paging, Streams(1), JobFactory())
    assert model.device_routes is not None
    route = list(model.device_routes(0, READ))
    split = next(h for h in route if isinstance(h, Split))
    after = route[route.index(split) + 1]
    assert isinstance(after, Delay) and after.fixed  # the turnaround straight after the pages
    assert not any(isinstance(h, FifoStation) and ("read_bw" in h.name or "to_host" in h.name) for h in route)
    pages, last = split.inner
    assert isinstance(last[0], Chain) and isinstance(getattr(last[0].parts[0], "__self__", None), LastPageBlock)
    assert not any(isinstance(getattr(p, "__self__", None), LastPageBlock) for p in pages[0].parts)  # type: ignore[union-attr]
    parent = JobFactory().new()
    parent.size, parent.op, parent.member = 28 * 1024, READ, 0
    phases = split.planner(parent)
    assert [len(p) for p in phases] == [1] * 7 and [p[0][1] for p in phases] == [4096] * 7
    assert [p[0][0] is last for p in phases] == [False] * 6 + [True]
    block: LastPageBlock = last[0].parts[0].__self__  # type: ignore[attr-defined]
    child = JobFactory().new()
    child.size, child.parent = 4096, parent
    d = block.visit(child, 0.0)
    assert child.size == 4096 and block.channel.station.c_area > 0.0  # the block moved the parent's 28 KiB
    link = block.link.station
    assert link.c_area == pytest.approx(28 * 1024 * link.per_byte) and d >= link.c_area
