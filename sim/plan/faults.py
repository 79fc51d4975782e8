"""A scenario with ``faults`` (models/faults.py) as the states a sizing must survive: healthy, degraded, rebuilding.

``state_scenarios`` splits a faulted scenario into the scenario of each state: *healthy* (the
faults removed), *degraded* (the failed hardware gone: mirrors read their survivors, RAID-5/6
reconstruct, traffic moves to the surviving adapters and ports; no rebuild) and *rebuilding*
(degraded plus the rebuild stream onto the replacements, when ``faults.rebuild`` is set; mirrors then write
the replacements too, md and IBM i write a recovering copy; RAID-5/6 stay degraded). Each state
is simulated (``simulate_states``, the DES) or evaluated (``evaluate_states``, the fast path) on its
own, in steady state: the rebuild's figures (achieved rate, time to rebuild a drive at that rate)
come from the rebuilding state. ``FaultStates.summary`` is the JSON of ``flashplan simulate`` for
such a scenario: every state with the usual metrics, the rebuild, and the lowest SLO margin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from models.fast_result import FastResult
from models.result import Result
from models.scenario import Scenario
from models.workload import ClosedWorkload

STATES = ("healthy", "degraded", "rebuilding")
SLO_METRIC = {"mean": "latency_mean_us", "p50": "latency_p50_us", "p95": "latency_p95_us", "p99": "latency_p99_us",
              "p999": "latency_p999_us"}
"""faults.slo_statistic -> the Result metric it bounds."""


def state_scenarios(scenario: Scenario) -> list[tuple[str, Scenario]]:
    """(state, scenario) for every state a faulted scenario has (just ("healthy", scenario) without faults)."""
    faults = scenario.faults
    if faults is None:
        return [("healthy", scenario)]
    out = [("healthy", scenario.model_copy(update={"faults": None}))]
    if faults.any_failed:
        out.append(("degraded", scenario.model_copy(update={"faults": faults.model_copy(update={"rebuild": None})})))
    if faults.rebuild is not None:
        out.append(("rebuilding", scenario))
    return out


def margin_pct(slo_us: float | None, latency_us: float) -> float | None:
    """How far a latency stays under the SLO, in % of the SLO (negative: missed); None without an SLO or a value."""
    if slo_us is None or not math.isfinite(latency_us):
        return None
    return (slo_us - latency_us) / slo_us * 100.0


@dataclass
class FaultStates:
    """The DES results of each state of a faulted scenario."""

    scenario: Scenario
    results: dict[str, Result] = field(default_factory=dict)

    @property
    def slo(self) -> tuple[str, float | None]:
        f = self.scenario.faults
        return (f.slo_statistic, f.slo_us) if f is not None else ("p99", None)

    def margins(self) -> dict[str, float | None]:
        statistic, slo_us = self.slo
        return {name: margin_pct(slo_us, getattr(r, SLO_METRIC[statistic]).value) for name, r in self.results.items()}

    def lowest_margin(self) -> tuple[str, float] | None:
        """(state, margin %) of the state closest to (or furthest past) the SLO."""
        known = [(m, name) for name, m in self.margins().items() if m is not None]
        if not known:
            return None
        m, name = min(known)
        return name, m

    @property
    def worst_validity(self) -> str:
        order = ("precise", "cut_short", "unstable")
        return max((r.validity for r in self.results.values()), key=order.index)

    def summary(self) -> dict[str, Any]:
        """Strict JSON: each state's ``Result.summary`` (without the scenario, given once), the rebuild, the SLO margins."""
        statistic, slo_us = self.slo
        states = {}
        for name, r in self.results.items():
            out = r.summary()
            out.pop("scenario")
            states[name] = out
        rebuilding = self.results.get("rebuilding")
        lowest = self.lowest_margin()
        margins = self.margins()
        return {
            "states": states,
            "rebuild": rebuilding.rebuild.summary() if rebuilding is not None and rebuilding.rebuild is not None else None,
            "slo": {"statistic": statistic, "us": slo_us, "margin_pct": margins,
                    "lowest": {"state": lowest[0], "margin_pct": lowest[1]} if lowest else None},
            "scenario": self.scenario.model_dump(mode="json", exclude_none=True),
        }


def simulate_states(scenario: Scenario) -> FaultStates:
    """Simulate every state of ``scenario`` with the DES (same seed and budgets in each)."""
    from sim.des.engine import simulate
    from sim.plan.capacity_check import cross_checked

    out = FaultStates(scenario)
    for name, s in state_scenarios(scenario):
        out.results[name] = cross_checked(s, simulate(s))
    return out


def evaluate_states(scenario: Scenario) -> dict[str, FastResult]:
    """The fast path's prediction of every state of ``scenario``."""
    from sim.analytic import evaluate

    return {name: evaluate(s) for name, s in state_scenarios(scenario)}


FIXED_POINT_ROUNDS = 6
"""Rounds of ``fast_rebuild_figures``'s fixed point (the rebuild's rate and the stations' load it adds)."""


def fast_rebuild_figures(scenario: Scenario) -> dict[str, float] | None:
    """The fast path's rebuild per replacement drive: ``idle_mbps`` (no host I/O: min(cap, the drives at the
    rebuild's depth)) and ``loaded_mbps`` (md's throttle behind the host's I/O, ``sim.analytic.rebuild``), with
    the times to rebuild a drive at each (hours). None without a rebuild.

    The loaded rate and the load the rebuild adds to the stations it shares depend on each other: the rebuilding
    state is evaluated with the rebuild at a fixed rate (``rate_mbps``: its load, no throttle), the rate under that
    load taken from the closed form, and the two brought together over ``FIXED_POINT_ROUNDS`` rounds (the mean of
    the last two rates, which bracket the point when the rounds alternate)."""
    from sim.analytic import evaluate, loaded_rebuild_rate
    from sim.analytic.paths import rebuild_rate
    from sim.route.describe import describe

    faults = scenario.faults
    route = describe(scenario)
    stream = route.volume.rebuild
    if stream is None or faults is None or faults.rebuild is None:
        return None
    n = stream.replacement_drives
    idle = rebuild_rate(route)
    wl = scenario.workload
    population = float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else math.inf
    rates = [idle]
    for _ in range(FIXED_POINT_ROUNDS):
        at = max(rates[-1], 1e3) / n / 1e6  # MB/s per drive, for the rate_mbps field (> 0)
        fixed = scenario.model_copy(update={"faults": faults.model_copy(update={
            "rebuild": faults.rebuild.model_copy(update={"rate_mbps": at, "priority": None, "depth": 4096})})})
        state = evaluate(fixed)
        rates.append(loaded_rebuild_rate(route, state.utilization, wl.mean_bytes(), population) if state.stable else 0.0)
    rate = min(idle, 0.5 * (rates[-1] + rates[-2]))
    return {"idle_mbps": idle / n / 1e6, "loaded_mbps": rate / n / 1e6,
            "idle_time_h": stream.drive_bytes / (idle / n) / 3600 if idle > 0 else math.inf,
            "loaded_time_h": stream.drive_bytes / (rate / n) / 3600 if rate > 0 else math.inf}


def fast_rebuild_rate_mbps(scenario: Scenario) -> float | None:
    """The fast path's rebuild rate under the scenario's host load per replacement drive (MB/s), None without a rebuild."""
    figures = fast_rebuild_figures(scenario)
    return None if figures is None else figures["loaded_mbps"]


def timeline(states: FaultStates, replace_after_h: float = 4.0, points: int = 50) -> list[dict[str, float | str]]:
    """A failure's course for a chart: healthy until the drive fails at t = 0, degraded until the replacement
    is in (``replace_after_h``, an operator's figure), rebuilding for the rebuild time at the achieved rate,
    then healthy again. Rows: time (h), state, host p99 and mean latency (us), IOPS and rebuild progress (%),
    each state at its steady-state figures (the DES results of ``states``)."""
    results = states.results
    rebuilding = results.get("rebuilding")
    rebuild_h = rebuilding.rebuild.time_s / 3600 if rebuilding is not None and rebuilding.rebuild is not None else 0.0
    if not math.isfinite(rebuild_h):
        rebuild_h = 0.0
    end = replace_after_h + rebuild_h
    span = max(end * 1.2, 1.0)
    rows: list[dict[str, float | str]] = []
    for k in range(points + 1):
        t = -0.1 * span + k * 1.1 * span / points
        if t < 0 or t >= end or "degraded" not in results:
            name, progress = "healthy", (100.0 if t >= end else 0.0)
        elif t < replace_after_h or rebuilding is None:
            name, progress = "degraded", 0.0
        else:
            name, progress = "rebuilding", 100.0 * (t - replace_after_h) / rebuild_h if rebuild_h else 100.0
        r = results[name]
        rows.append({"hours": t, "state": name, "p99_us": r.latency_p99_us.value, "mean_us": r.latency_mean_us.value,
                     "iops": r.iops.value, "rebuild_progress_pct": progress})
    return rows
