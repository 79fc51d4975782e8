"""The consolidated planner: the cheapest configuration on which several workloads each meet their objectives.

``plan_consolidated(req)`` walks the planner's candidate grid for the platform (``sim.plan.planner``: drives,
counts, layouts, namespaces, adapters; SAN where the platform has it), prices each candidate, screens it
with the multi-class fast path against every objective (capacity and budget first; a p99 ceiling is
screened with the planner's p99 estimate and its slack ``P99_SCREEN_SLACK``), and verifies the cheapest
survivors with the DES, whose per-workload figures must keep every bound (a latency ceiling by the point
estimate, a throughput floor unless its whole 95% interval is below; the verdict on the interval is
reported beside each).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from models.cost import Capex, CostError, capex
from models.requirements import ConsolidationRequirements
from models.result import Result
from models.scenario import Scenario
from models.slo import verdict
from sim.analytic import FastResult, evaluate
from sim.des.engine import simulate
from sim.plan.candidate import scenario_data
from sim.plan.capacity_check import cross_checked
from sim.plan.planner import EXTRA_DES_RUNS, P99_SCREEN_SLACK, NoFeasiblePlan, _topologies
from sim.plan.slo_check import des_figure, fast_figure, slo_verdicts


@dataclass
class ConsolidatedCandidate:
    """One configuration with every workload on it: its price, the fast path's and the DES's verdicts."""

    label: str
    scenario: Scenario
    capex: Capex
    fast: FastResult | None = None
    des: Result | None = None
    fast_verdicts: list[dict[str, Any]] = field(default_factory=list)
    des_verdicts: list[dict[str, Any]] = field(default_factory=list)
    stage: str = "enumerated"
    rejection: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "capex_usd": self.capex.total_usd, "usable_tb": self.capex.usable_tb,
                               "stage": self.stage, "rejection": self.rejection, "fast_objectives": self.fast_verdicts}
        if self.fast is not None:
            out["fast_bottleneck"] = self.fast.bottleneck
        if self.des is not None:
            out.update(des_objectives=self.des_verdicts, des_bottleneck=self.des.bottleneck, des_validity=self.des.validity,
                       des_workloads={n: w.summary() for n, w in (self.des.workloads or {}).items()})
        return out


@dataclass
class ConsolidatedPlan:
    requirements: ConsolidationRequirements
    ranked: list[ConsolidatedCandidate]
    rejected: list[ConsolidatedCandidate]
    des_runs: int
    wall_s: float

    @property
    def winner(self) -> ConsolidatedCandidate:
        return self.ranked[0]

    def as_dict(self) -> dict[str, Any]:
        reasons: dict[str, int] = {}
        for c in self.rejected:
            reasons[c.stage] = reasons.get(c.stage, 0) + 1
        return {"name": self.requirements.name, "winner": self.winner.as_dict(), "ranked": [c.as_dict() for c in self.ranked],
                "rejected_by_stage": reasons, "des_runs": self.des_runs}


def candidates_of(req: ConsolidationRequirements) -> list[ConsolidatedCandidate]:
    """Every configuration of the platform's grid the topology rules allow, with all the workloads, priced."""
    grid = req.grid()
    run = req.verify.model_dump()
    workloads = [wl.model_dump(mode="json", exclude_none=True) for wl in req.workloads]
    slos = [slo.model_dump(mode="json", exclude_none=True) for slo in req.slos]
    out: list[ConsolidatedCandidate] = []
    seen: set[str] = set()
    for label, topo in _topologies(grid):
        if label in seen:
            continue
        seen.add(label)
        try:
            scenario = Scenario.model_validate(scenario_data(label, topo, req.device_model, workloads=workloads, slos=slos, run=run))
        except ValidationError:
            continue
        try:
            cost = capex(scenario.topology, storage_server_share=req.storage_server_share)  # type: ignore[arg-type]
        except CostError as exc:
            raise NoFeasiblePlan([("platform", str(exc))]) from None
        out.append(ConsolidatedCandidate(label=label, scenario=scenario, capex=cost))
    return out


def _missed(rows: list[dict[str, Any]], p99_slack: float = 1.0, measured: bool = False) -> list[str]:
    """The bounds the figures miss (a p99 ceiling with ``p99_slack``). A latency ceiling by the point
    estimate; a throughput floor ``measured`` by the DES only when its whole 95% interval is below (an
    open workload that the path keeps up with delivers its offered rate, give or take the run's noise)."""
    out = []
    for r in rows:
        bound = r["bound"] * (p99_slack if r["metric"] == "latency_p99_us" else 1.0)
        if measured and r["kind"] == "min" and r["verdict"] != "missed" and r["value"] is not None:
            continue
        if verdict(r["kind"], bound, r["value"]) != "met":
            sign = "<=" if r["kind"] == "max" else ">="
            value = "unknown" if r["value"] is None else f"{r['value']:,.1f}"
            out.append(f"{r['workload']} {r['metric']} {value} (needs {sign} {r['bound']:g})")
    return out


def screen(c: ConsolidatedCandidate, req: ConsolidationRequirements) -> None:
    """Capacity, budget, then the fast path against every objective; sets ``stage`` and ``rejection``."""
    if req.usable_tb is not None and c.capex.usable_tb < req.usable_tb * (1 - 1e-9):
        c.stage, c.rejection = "capacity", f"usable {c.capex.usable_tb:.2f} TB < {req.usable_tb:g} TB required"
        return
    if req.budget_usd is not None and c.capex.total_usd > req.budget_usd:
        c.stage, c.rejection = "budget", f"capex ${c.capex.total_usd:,.0f} > budget ${req.budget_usd:,.0f}"
        return
    c.fast = evaluate(c.scenario)
    c.fast_verdicts = slo_verdicts(c.scenario, fast_figure(c.fast))
    missed = _missed(c.fast_verdicts, P99_SCREEN_SLACK)
    if not c.fast.stable:
        c.stage, c.rejection = "throughput", f"the workloads saturate {c.fast.bottleneck} (fast path)"
    elif missed:
        c.stage, c.rejection = "objectives", "fast path: " + "; ".join(missed)
    else:
        c.stage = "screened"


def verify(c: ConsolidatedCandidate) -> None:
    """The DES on a screened candidate: every objective kept by the point estimate, and a stable run."""
    c.des = cross_checked(c.scenario, simulate(c.scenario))
    c.des_verdicts = slo_verdicts(c.scenario, des_figure(c.des))
    missed = _missed(c.des_verdicts, measured=True)
    if c.des.validity == "unstable":
        c.stage, c.rejection = "DES", f"DES: unstable ({c.des.validity_note})"
    elif missed:
        c.stage, c.rejection = "DES", "DES: " + "; ".join(missed)
    else:
        c.stage = "verified"


def _best_reached(candidates: list[ConsolidatedCandidate], index: int, check: int) -> tuple[float, ConsolidatedCandidate, str] | None:
    """The best value any candidate reached on bound ``check`` of objective ``index`` (the DES's figure where it ran,
    else the fast path's), with the candidate and the solver; None when no candidate has a figure for it."""
    best: tuple[float, ConsolidatedCandidate, str] | None = None
    for c in candidates:
        rows, how = (c.des_verdicts, "DES") if c.des is not None else (c.fast_verdicts, "fast path")
        row = _row_of(c, rows, index, check)
        if row is None or row["value"] is None:
            continue
        value = float(row["value"])
        better = best is None or (value < best[0] if row["kind"] == "max" else value > best[0])
        if better:
            best = (value, c, how)
    return best


def _row_of(c: ConsolidatedCandidate, rows: list[dict[str, Any]], index: int, check: int) -> dict[str, Any] | None:
    """The verdict row of bound ``check`` of objective ``index`` (rows follow ``scenario.slos`` and each one's checks)."""
    slos = c.scenario.slos or []
    position = sum(len(slo.checks()) for slo in slos[:index]) + check
    return rows[position] if position < len(rows) else None


def _infeasible(req: ConsolidationRequirements, candidates: list[ConsolidatedCandidate],
                screened: list[ConsolidatedCandidate]) -> NoFeasiblePlan:
    """Why no candidate was verified: each objective that no candidate within capacity and budget meets, with the
    best any of them reached; else (each is met somewhere, never all on one) the closest candidate's misses."""
    judged = [c for c in candidates if c.fast is not None]
    tried = f"no configuration of the {len(candidates)} tried"
    if not judged:
        rejected = [c for c in candidates if c.rejection]
        detail = f" (first: {rejected[0].label}: {rejected[0].rejection})" if rejected else ""
        return NoFeasiblePlan([("slos", f"{tried} passes capacity and budget, so no objective was evaluated{detail}")])
    problems: list[tuple[str, str]] = []
    for i, slo in enumerate(req.slos):
        for j, (key, kind, bound) in enumerate(slo.checks()):
            best = _best_reached(judged, i, j)
            sign = "<=" if kind == "max" else ">="
            if best is None:
                continue
            value, c, how = best
            if verdict(kind, bound, value) == "met" and how == "DES":
                continue
            if how == "fast path" and verdict(kind, bound * (P99_SCREEN_SLACK if key == "latency_p99_us" and kind == "max" else 1.0),
                                              value) == "met":
                continue
            unit = " us" if key.endswith("_us") else ""
            name = f"{key[len('latency_'):-len('_us')]} latency" if key.startswith("latency_") and unit else key
            problems.append((f"slos.{i}", f"{slo.workload}: {name} {sign} {bound:g}{unit} is met by none of the {len(judged)} "
                                          f"configurations within capacity and budget; the best reaches {value:,.1f}{unit} "
                                          f"({how}, {c.label})"))
    if problems:
        return NoFeasiblePlan(problems)
    first = next((c for c in screened if c.stage == "DES"), None) or min(
        (c for c in judged if c.rejection), key=lambda c: (len(_missed(c.fast_verdicts, P99_SCREEN_SLACK)), c.capex.total_usd, c.label),
        default=None)
    detail = f" (closest: {first.label}: {first.rejection})" if first is not None else ""
    return NoFeasiblePlan([("slos", f"{tried} keeps every objective at once, though each is met by some{detail}")])


def plan_consolidated(req: ConsolidationRequirements, verify_top: int = 1) -> ConsolidatedPlan:
    """Screen the grid, verify the cheapest survivors with the DES (``verify_top`` of them, at most
    ``EXTRA_DES_RUNS`` more runs); raise NoFeasiblePlan when none is verified."""
    t0 = time.perf_counter()
    candidates = candidates_of(req)
    for c in candidates:
        screen(c, req)
    screened = sorted((c for c in candidates if c.stage == "screened"),
                      key=lambda c: (c.capex.total_usd, c.fast.latency_mean_us if c.fast else 0.0, c.label))
    runs = passed = 0
    for c in screened:
        if passed >= verify_top or runs >= verify_top + EXTRA_DES_RUNS:
            break
        verify(c)
        runs += 1
        passed += c.stage == "verified"
    verified = [c for c in screened if c.stage == "verified"]
    if not verified:
        raise _infeasible(req, candidates, screened)
    ranked = verified + [c for c in screened if c.stage == "screened"]
    rejected = [c for c in candidates if c.rejection is not None]
    return ConsolidatedPlan(requirements=req, ranked=ranked, rejected=rejected, des_runs=runs, wall_s=time.perf_counter() - t0)
