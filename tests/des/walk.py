"""Starting hand-built jobs on their routes at given times (the engine tests' event walks)."""

from __future__ import annotations

import simpy

from sim.des.components import Job, advance


def start_at(env: simpy.Environment, job: Job, t: float) -> None:
    """Start ``job`` on its route at time ``t`` (from its first hop)."""

    def start(event: simpy.Event) -> None:
        job.step = -1
        advance(job)

    env.timeout(t).callbacks.append(start)
