"""What a sizing shows beside the simulated metrics: price, price-performance and the latency-against-load curve.

No Streamlit here, so the pages, the HTML report and the tests share one calculation.

* Price: ``models.cost.capex`` of the topology (catalog list-price assumptions), $/KIOPS
  by the SPC-1 convention (``usd_per_kiops``) with the interval that the IOPS interval gives.
* The hockey stick: the fast path (``sim.analytic.evaluate``, a queueing approximation
  that answers in milliseconds) at a range of loads, with DES points on it. The load is
  what a customer would turn up: concurrency (jobs, or queue depth with one job) for a
  closed workload, the arrival rate for an open one, both burst rates for a bursty one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from models.cost import Capex, CostError, capex, usd_per_kiops
from models.result import Result
from models.scenario import Scenario, with_overrides
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload

CURVE_POINTS = 24
MAX_OUTSTANDING = 1_000_000


@dataclass(frozen=True)
class PriceFigures:
    """The purchase price of a configuration and its price-performance at the simulated IOPS."""

    capex: Capex
    usd_per_kiops: float
    usd_per_kiops_ci95: tuple[float, float]

    @property
    def total_usd(self) -> float:
        return self.capex.total_usd


def price_of(scenario: Scenario, result: Result | None = None, storage_server_share: float = 1.0) -> PriceFigures | None:
    """Catalog price and $/KIOPS of a scenario (None for a textbook topology or an unpriced catalog entry)."""
    try:
        cost = capex(scenario.topology, storage_server_share=storage_server_share)  # type: ignore[arg-type]
    except (CostError, KeyError, ValueError):
        return None
    if result is None:
        return PriceFigures(cost, math.nan, (math.nan, math.nan))
    lo, hi = result.iops.ci95
    per = usd_per_kiops(cost.total_usd, result.iops.value)
    # more IOPS = fewer dollars per KIOPS, so the interval's ends swap
    ci = (usd_per_kiops(cost.total_usd, hi), usd_per_kiops(cost.total_usd, lo) if lo > 0 else math.inf)
    return PriceFigures(cost, per, ci)


def price_at_bound(scenario: Scenario, x_max_iops: float | None, storage_server_share: float = 1.0) -> float | None:
    """$/KIOPS at the configuration's throughput bound (the fast path's Xmax): the figure the Plan page ranks by and the
    Size page quotes beside its simulated $/KIOPS (None when unpriced or without a finite bound)."""
    if x_max_iops is None or not math.isfinite(x_max_iops) or x_max_iops <= 0:
        return None
    price = price_of(scenario, None, storage_server_share)
    return None if price is None else usd_per_kiops(price.total_usd, x_max_iops)


# -- latency against load --------------------------------------------------------------------

@dataclass(frozen=True)
class LoadKnob:
    """What is turned up along the curve: the dotted paths, their current values, and how to label a level."""

    paths: tuple[str, ...]
    current: tuple[float, ...]
    label: str

    def overrides(self, factor: float) -> dict[str, Any]:
        """The fields at ``factor`` x the current load (whole numbers for counts)."""
        out: dict[str, Any] = {}
        for path, value in zip(self.paths, self.current, strict=True):
            if path.endswith(("jobs", "queue_depth")):
                out[path] = max(1, round(value * factor))
            else:
                out[path] = value * factor
        return out

    def describe(self, overrides: dict[str, Any]) -> str:
        first = self.paths[0]
        v = overrides[first]
        return f"{self.label} = {v:,}" if isinstance(v, int) else f"{self.label} = {v:,.0f}"


def load_knob(scenario: Scenario) -> LoadKnob:
    wl = scenario.workload
    if isinstance(wl, ClosedWorkload):
        if wl.jobs > 1 or wl.queue_depth == 1:
            return LoadKnob(("workload.jobs",), (float(wl.jobs),), "jobs")
        return LoadKnob(("workload.queue_depth",), (float(wl.queue_depth),), "queue depth")
    if isinstance(wl, OpenWorkload):
        return LoadKnob(("workload.rate_iops",), (wl.rate_iops,), "arrival rate (IOPS)")
    assert isinstance(wl, BurstyWorkload)
    return LoadKnob(("workload.on_rate_iops", "workload.off_rate_iops"), (wl.on_rate_iops, wl.off_rate_iops), "burst rate (IOPS)")


def _fast(scenario: Scenario) -> Any:
    from sim.analytic import evaluate

    return evaluate(scenario)


def _p99_estimate(fast: Any) -> float:
    """The planner's screening estimate of p99 from the fast path (``sim.plan.planner.p99_estimate_us``); nan if it has none."""
    try:
        from sim.plan.planner import p99_estimate_us

        return float(p99_estimate_us(fast))
    except Exception:
        return math.nan


def curve_factors(scenario: Scenario, fast: Any, points: int = CURVE_POINTS) -> list[float]:
    """Load factors (x the current load) from light load to past the knee; 1.0 (the sized point) is always one."""
    wl = scenario.workload
    knob = load_knob(scenario)
    if isinstance(wl, ClosedWorkload):
        per_unit = wl.queue_depth if knob.paths[0] == "workload.jobs" else wl.jobs
        current = knob.current[0]
        n_star = getattr(getattr(fast, "bounds", None), "n_star", None) or current * per_unit
        top_units = max(4 * current, 2.0 * float(n_star) / per_unit, 8.0)
        top_units = min(top_units, MAX_OUTSTANDING / per_unit)
        units = sorted({max(1, round(u)) for u in np.geomspace(1, top_units, points)} | {round(current)})
        return [u / current for u in units]
    mean_rate = wl.mean_rate_iops if isinstance(wl, BurstyWorkload) else wl.rate_iops  # type: ignore[union-attr]
    bound = getattr(getattr(fast, "bounds", None), "x_max_iops", None)
    if bound is None or not math.isfinite(bound) or bound <= 0:
        return sorted({*np.linspace(0.1, 2.0, points).tolist(), 1.0})
    top = 0.98 * bound / mean_rate
    return sorted({*(f * top for f in np.linspace(0.05, 1.0, points).tolist()), 1.0})


def fast_curve(scenario: Scenario, points: int = CURVE_POINTS) -> tuple[list[dict[str, Any]], Any]:
    """The fast path at each load level: rows of ``load``, ``factor``, ``iops``, ``latency_mean_us``,
    ``latency_p99_estimate_us`` (a screening estimate), ``stable``.

    Returns the rows and the fast-path answer at the sized load (for its throughput bound).
    """
    knob = load_knob(scenario)
    base = _fast(scenario)
    rows: list[dict[str, Any]] = []
    for factor in curve_factors(scenario, base, points):
        overrides = knob.overrides(factor)
        try:
            fr = base if factor == 1.0 else _fast(with_overrides(scenario, overrides))
        except Exception:  # a level the models refuse (e.g. above a limit) is left out of the curve
            continue
        rows.append({"load": knob.describe(overrides), "factor": factor, "iops": fr.iops,
                     "latency_mean_us": fr.latency_mean_us, "latency_p99_estimate_us": _p99_estimate(fr),
                     "stable": bool(fr.stable), "bottleneck": fr.bottleneck})
    return rows, base


def des_factors(scenario: Scenario, x_max_iops: float | None) -> list[float]:
    """Three more loads to simulate beside the sized one: light, half-way and heavy (open loads: 30/60/90% of the bound)."""
    wl = scenario.workload
    if isinstance(wl, ClosedWorkload):
        return [0.25, 0.5, 2.0]
    mean_rate = wl.mean_rate_iops if isinstance(wl, BurstyWorkload) else wl.rate_iops  # type: ignore[union-attr]
    bound = x_max_iops
    if bound is None or not math.isfinite(bound) or bound <= 0:
        return [0.25, 0.5, 1.5]
    return [f * bound / mean_rate for f in (0.3, 0.6, 0.9)]


def des_scenarios(scenario: Scenario, x_max_iops: float | None) -> list[tuple[str, Scenario]]:
    """The scenarios of the extra DES points, labelled by their load (levels the models refuse are skipped)."""
    knob = load_knob(scenario)
    out = []
    for factor in des_factors(scenario, x_max_iops):
        overrides = knob.overrides(factor)
        try:
            out.append((knob.describe(overrides), with_overrides(scenario, overrides)))
        except Exception:
            continue
    return out


def des_point(result: Result, label: str) -> dict[str, Any]:
    """A DES result as a point of the hockey stick (IOPS, mean and p99 latency with their intervals, its validity)."""
    from app.validity import validity_of

    return {"label": label, "iops": result.iops.value, "iops_lo": result.iops.ci95[0], "iops_hi": result.iops.ci95[1],
            "latency_mean_us": result.latency_mean_us.value, "lat_lo": result.latency_mean_us.ci95[0],
            "lat_hi": result.latency_mean_us.ci95[1], "latency_p99_us": result.latency_p99_us.value,
            "p99_lo": result.latency_p99_us.ci95[0], "p99_hi": result.latency_p99_us.ci95[1], "validity": validity_of(result)}
