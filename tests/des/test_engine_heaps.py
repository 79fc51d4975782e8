"""The engine's own event heap (sim.des.components.Clock) against SimPy's queue: the same order of events, and both
queues taken in that order by SimPy's own loop (sim.des.environment.Environment)."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st
from simpy.events import URGENT

from sim.des.components import Ev
from sim.des.environment import Environment

times = st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False)
# a few distinct values, so that ties (equal times) are common
tied = st.sampled_from([0.0, 1.0, 1.0, 2.5, 7.0, 1e6])


@given(st.lists(st.one_of(times, tied), max_size=300), st.integers(min_value=0, max_value=300))
@settings(max_examples=200, deadline=None)
def test_clock_gives_events_in_simpys_order(at: list[float], pops: int) -> None:
    """Pushed at the given times (ids from one counter), interleaved with pops: each pop is the first by (time, id), the
    order SimPy's queue of (time, NORMAL, id, event) tuples gives."""
    env = Environment()
    clock = env.clock
    reference: list[tuple[float, int]] = []
    for i, t in enumerate(at):
        ev = Ev(env)
        clock.push(ev, t)
        heapq.heappush(reference, (t, ev.eid))
        if i % 3 == 2 and pops:
            pops -= 1
            got = clock.pop()
            assert (got.t, got.eid) == heapq.heappop(reference)
    while reference:
        got = clock.pop()
        assert (got.t, got.eid) == heapq.heappop(reference)
    assert not clock.events


def test_simpy_events_and_engine_events_interleave_by_time_priority_and_id() -> None:
    """SimPy's own loop (Environment.run) takes the engine's events in their place among its own: by time, then
    priority (an urgent SimPy event first at a tie), then id."""
    env = Environment()
    seen: list[str] = []
    a = Ev(env)
    a.callbacks = [lambda e: seen.append("engine@5, id 0")]
    env.clock.push(a, 5.0)
    env.timeout(5.0).callbacks.append(lambda e: seen.append("simpy@5, id 1"))
    b = Ev(env)
    b.callbacks = [lambda e: seen.append("engine@3")]
    env.clock.push(b, 3.0)
    urgent = env.event()
    urgent.callbacks.append(lambda e: seen.append("simpy urgent@5, id 3"))
    urgent._ok = True
    env.schedule(urgent, URGENT, 5.0)
    assert env.pending() == 4
    assert env.peek() == 3.0
    env.run()
    assert seen == ["engine@3", "simpy urgent@5, id 3", "engine@5, id 0", "simpy@5, id 1"]
    assert env.now == 5.0
    assert env.pending() == 0
