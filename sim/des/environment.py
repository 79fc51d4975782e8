"""The SimPy environment the engine runs in: SimPy's own, with its time mirrored in a ``Clock``.

Every hop of the engine reads the time; ``Clock.now`` is a field of a compiled object, where SimPy's
``env._now`` is an entry of the environment's ``__dict__``. The environment sets the clock to the time of
the next event before SimPy processes it, so SimPy's own loop (``Environment.run``, ``step``, a counting
wrapper around ``step``) and the engine's (``sim.des.engine.run_until``, which sets it itself) see the same
time. Not compiled: a subclass of ``simpy.Environment``, an interpreted class.
"""

from __future__ import annotations

import simpy

from sim.des.components import Clock


class Environment(simpy.Environment):
    """``simpy.Environment`` with a ``Clock`` (``clock``) that holds ``now`` while each event is processed."""

    def __init__(self, initial_time: float = 0) -> None:
        super().__init__(initial_time)
        self.clock = Clock(self, float(initial_time))

    def step(self) -> None:
        queue = self._queue
        if queue:
            self.clock.now = queue[0][0]  # the time of the event SimPy takes off next
        super().step()
