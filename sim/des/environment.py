"""The SimPy environment the engine runs in: SimPy's own, with the engine's ``Clock`` beside its queue.

The engine keeps its own events in ``Clock.events`` (a compiled heap, ordered as SimPy's queue: by time,
priority, event id from SimPy's counter) and the time in ``Clock.now`` (a field of a compiled object, where
SimPy's ``env._now`` is an entry of the environment's ``__dict__``). This environment's ``step`` takes the
first of both queues and sets the clock, so SimPy's own loop (``Environment.run``, ``step``, a counting wrapper
around ``step``) processes the same events in the same order as the engine's (``sim.des.engine.run_until``).
Not compiled: a subclass of ``simpy.Environment``, an interpreted class.
"""

from __future__ import annotations

import simpy
from simpy.core import EmptySchedule, Infinity, SimTime

from sim.des.components import Clock


class Environment(simpy.Environment):
    """``simpy.Environment`` with a ``Clock`` (``clock``): the engine's events and the time."""

    def __init__(self, initial_time: SimTime = 0) -> None:
        super().__init__(initial_time)
        self.clock = Clock(self, float(initial_time))

    def peek(self) -> SimTime:
        """The time of the next event of either queue (``Infinity`` if none)."""
        events = self.clock.events
        first = self._queue[0][0] if self._queue else Infinity
        return min(events[0].t, first) if events else first

    def pending(self) -> int:
        """Events scheduled and not yet processed, in both queues."""
        return self.clock.pending()

    def next_event(self) -> object | None:
        """The event ``step`` processes next (an ``Ev`` or a SimPy event), or None."""
        clock = self.clock
        if clock.events and (not self._queue or clock.first_is_mine(self._queue[0])):
            return clock.events[0]
        return self._queue[0][3] if self._queue else None

    def step(self) -> None:
        """Process the first event of both queues (SimPy's ``step`` for its own; the same steps for an ``Ev``)."""
        clock = self.clock
        if clock.events and (not self._queue or clock.first_is_mine(self._queue[0])):
            clock.fire_first()
            return
        if not self._queue:
            raise EmptySchedule
        clock.now = float(self._queue[0][0])  # the time of the event SimPy takes off next
        super().step()
