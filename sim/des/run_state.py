"""What the parts of a run (arrivals, batch means, result assembly) see of it: the ``RunState`` protocol.

``sim.des.engine.Run`` owns the state and satisfies this protocol; its parts are typed against the protocol
rather than against ``Run``, so the engine imports its parts and no part imports the engine (not even
for a type). The protocol sits below the parts: it names what the result assembly reads of the batch
means and of a rebuild as the small protocols ``BatchWindow`` and ``RebuildProgress``, so it imports
neither ``sim.des.batching`` nor ``sim.des.arrivals`` (which import it). Only type checkers read this module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import simpy

from models.scenario import Scenario
from sim.des.components import Job, JobFactory
from sim.des.model import Model
from sim.des.rng import Streams
from sim.des.stats import Batch, WorkloadTally
from sim.route.elements import RebuildStream


class BatchWindow(Protocol):
    """What the result assembly reads of the batch means (``sim.des.batching.BatchMeans``)."""

    batches: list[Batch]
    marks: list[tuple[float, list[float], list[float]]]
    """The meters at each batch boundary: (time, occupancy area, busy area of every meter)."""

    def steady_workload_batches(self) -> list[list[Batch]]:
        """Each workload's batches over the steady window."""


class RebuildProgress(Protocol):
    """What the result assembly reads of a rebuild in progress (``sim.des.arrivals.RebuildArrivals``)."""

    stream: RebuildStream
    done_at: list[float]
    """When each rebuild unit finished (us)."""


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
    pause_min_batches: int
    """Above 0: the batch means also follow the precision rule with this many batches at least, and ``pause`` the
    run when it is met (``sim.des.engine.ScreenedRun``); 0: no such rule."""

    @property
    def batching(self) -> BatchWindow:
        """The batch means (read-only here, so ``Run``'s ``BatchMeans`` satisfies it)."""

    @property
    def rebuild(self) -> RebuildProgress | None:
        """A rebuild in progress (the scenario's ``faults.rebuild``)."""

    def set_completer(self, index: int, completer: Callable[[Job], None]) -> None:
        """What a completed I/O of workload ``index`` does next."""

    def issue(self, job: Job) -> None:
        """Start ``job`` down the route."""

    def pause(self, reason: str) -> None:
        """The ``pause_min_batches`` rule is met (``sim.des.engine.ScreenedRun``)."""

    def stop(self, reason: str) -> None:
        """End the run (the first reason is kept)."""

    def check_budgets(self) -> None:
        """Stop when an I/O or wall-clock budget is spent."""

    def out_area_now(self) -> float:
        """The time integral of the I/Os outstanding, up to now."""
