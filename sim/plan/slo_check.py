"""Objectives per workload (models/slo.py) against a solver's figures: the DES's (with intervals) or the
fast path's (means; p99 by its own estimate, ``FastResult.latency_p99_us``). Used by ``simulate``, ``analyze``,
the Consolidation page and the consolidated planner (sim/plan/consolidated.py).

The fast path's p99 is the die-level mechanism under ``device_model: dies``, the pooled devices' own law for one
workload on pooled devices, and the screening heuristic otherwise (``sim.analytic.TAIL_METHODS``); its p99.9 is
offered only from a mechanism (``FastResult.tails_from_mechanism``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from models.fast_result import FastResult
from models.result import Metric, Result
from models.scenario import Scenario
from models.slo import verdict

Figure = Callable[[str, str], tuple[float | None, float | None, float | None]]
"""(workload name, metric key) -> (value, 95% low, 95% high): a solver's figures for the check."""


def slo_verdicts(scenario: Scenario, figure: Figure) -> list[dict[str, Any]]:
    """Every bound of the scenario's objectives (``slos``) against a solver's per-workload figures."""
    rows: list[dict[str, Any]] = []
    for slo in scenario.slos or ():
        for key, kind, bound in slo.checks():
            value, low, high = figure(slo.workload, key)
            rows.append({"workload": slo.workload, "metric": key, "bound": bound, "kind": kind, "value": value,
                         "verdict": verdict(kind, bound, value, low, high)})
    return rows


def des_figure(result: Result) -> Figure:
    """The DES's figures: a workload's metric with its interval (a one-workload scenario: the Result's own)."""
    def figure(name: str, key: str) -> tuple[float | None, float | None, float | None]:
        source = result.workloads.get(name) if result.workloads is not None else result
        if source is None:
            return None, None, None
        m: Metric = getattr(source, key)
        if not math.isfinite(m.value):
            return None, None, None
        return (m.value, m.ci95[0], m.ci95[1]) if m.has_ci else (m.value, None, None)
    return figure


def fast_figure(fast: FastResult) -> Figure:
    """The fast path's figures: means, and p99 by its own estimate (the planner's ``p99_estimate_us``, no interval);
    p99.9 where a mechanism gave it (``FastResult.tails_from_mechanism``); other percentiles unknown."""
    from sim.plan.planner import p99_estimate_us

    def figure(name: str, key: str) -> tuple[float | None, float | None, float | None]:
        source = fast.workloads.get(name) if fast.workloads is not None else fast
        if source is None:
            return None, None, None
        if key == "latency_p99_us":
            value: float | None = p99_estimate_us(source)
        elif key == "latency_p999_us":
            value = source.latency_p999_us if source.tails_from_mechanism else None
        else:
            value = getattr(source, key, None)
        return (value if value is not None and math.isfinite(value) else None), None, None
    return figure
