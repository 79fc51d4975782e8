"""What the parts of a run (arrivals, batch means, result assembly) see of it: the ``RunState`` protocol.

``sim.des.engine.Run`` owns the state and satisfies this protocol; its parts are typed against the protocol
rather than against ``Run``, so the engine imports its parts and no part imports the engine (not even
for a type). Only type checkers read this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import simpy

from models.scenario import Scenario
from sim.des.arrivals import RebuildArrivals
from sim.des.batching import BatchMeans, WorkloadTally
from sim.des.components import Job, JobFactory
from sim.des.model import Model
from sim.des.rng import Streams


class RunState(Protocol):
    """The run as its arrivals, batch means and assembly use it."""

    scenario: Scenario
    env: simpy.Environment
    streams: Streams
    jobs: JobFactory
    model: Model
    issued: int
    completed: int
    outstanding: int
    stopped: bool
    stop_reason: str
    on_complete: Callable[[Job], None]
    """What a completed I/O does next (the workload's arrivals set it)."""
    tallies: list[WorkloadTally]
    """Per-workload batch tallies (empty with a single workload)."""
    batching: BatchMeans
    rebuild: RebuildArrivals | None
    """A rebuild in progress (the scenario's ``faults.rebuild``)."""

    def set_completer(self, index: int, completer: Callable[[Job], None]) -> None:
        """What a completed I/O of workload ``index`` does next."""

    def issue(self, job: Job) -> None:
        """Start ``job`` down the route."""

    def stop(self, reason: str) -> None:
        """End the run (the first reason is kept)."""

    def check_budgets(self) -> None:
        """Stop when an I/O or wall-clock budget is spent."""

    def out_area_now(self) -> float:
        """The time integral of the I/Os outstanding, up to now."""
