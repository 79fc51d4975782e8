"""The two solvers' evidence of saturation combined: a DES Result checked against the fast path's capacity.

The DES decides ``unstable`` from its own run (``sim.des.assembly``: the busiest resource's utilization,
the backlog rising across batches). The fast path solves the same route (``sim.analytic.evaluate``), and
an open workload it finds unstable - the offered rate at or past its throughput bound Xmax, or past the
rate at which a concurrency limit's slots are all held - meets the route's capacity by the other
solver's evidence. ``cross_checked`` marks such a DES Result unstable too, naming the fast path's
bottleneck and both figures, so a run too short to see a slowly growing queue is not taken as an answer.

The check sits here, above both solvers: ``sim.des`` and ``sim.analytic`` never import each other.
It costs one fast-path evaluation (milliseconds). Every DES answer goes through it: ``flashplan simulate``
and ``analyze --compare``, sweeps, the planner's verification and failure states, consolidation, growth and
the web app's simulation jobs (``simulate_checked``).
"""

from __future__ import annotations

from models.fast_result import FastResult
from models.result import Result
from models.scenario import Scenario
from models.workload import BurstyWorkload, OpenWorkload
from sim.analytic import evaluate


def open_rate(scenario: Scenario) -> float:
    """The open and bursty workloads' mean arrival rate (I/O per second, summed); 0 when every workload is closed."""
    total = 0.0
    for wl in scenario.all_workloads():
        if isinstance(wl, OpenWorkload):
            total += float(wl.rate_iops)
        elif isinstance(wl, BurstyWorkload):
            total += float(wl.mean_rate_iops)
    return total


def fast_saturation(scenario: Scenario, fast: FastResult | None = None) -> str | None:
    """Why the fast path finds the scenario's open load at or past the route's capacity, or None (a closed or
    profile workload, or a stable one)."""
    if scenario.profile_index() is not None or open_rate(scenario) <= 0:
        return None
    fast = evaluate(scenario) if fast is None else fast
    if fast.stable:
        return None
    lam = open_rate(scenario)
    xmax = fast.bounds.x_max_iops
    where = fast.bounds.bottleneck if fast.iops >= xmax * (1 - 1e-6) else fast.bottleneck
    return (f"the fast path of the same route finds the offered {lam:,.0f} IOPS at or past its capacity "
            f"({fast.iops:,.0f} IOPS, bound at {where})")


def cross_checked(scenario: Scenario, result: Result, fast: FastResult | None = None) -> Result:
    """``result`` (the DES's, of ``scenario``) made unstable when the fast path finds the open load saturated and
    the run did not; unchanged otherwise."""
    if result.validity == "unstable":
        return result
    why = fast_saturation(scenario, fast)
    if why is None:
        return result
    own = f" (the DES run alone said {result.validity.replace('_', ' ')}: {result.stop_reason})"
    return result.model_copy(update={"validity": "unstable", "validity_note": why + own})


def simulate_checked(scenario: Scenario) -> Result:
    """``sim.des.engine.simulate`` followed by ``cross_checked``."""
    from sim.des.engine import simulate

    return cross_checked(scenario, simulate(scenario))
