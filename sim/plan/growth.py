"""How far load can grow before a p99 SLO breaks, and when that is at a yearly growth rate (issue 21).

``breaking_point(scenario, slo_p99_us)``:

1. Fast path: the load multiplier g (every arrival rate x g; a closed workload's jobs, a profile
   interval's queue depth x g, rounded; with several workloads, every one x g and the SLO judged on the
   p99 of all their I/Os) is bracketed by doubling (or halving, when the SLO is
   already broken today), then bisected until the bracket is 0.1% wide, on the fast path's p99 estimate
   as the planner screens with it (``sim.plan.planner.p99_estimate_us``: ``FastResult.latency_p99_us``, the
   die-level mechanism under ``device_model: dies``, the pooled model's heuristic otherwise; a profile:
   the worst interval's, ``sim.plan.profile_fast``). An overloaded point has an infinite p99.
2. DES: the scenario at g is simulated and its p99 (a profile: the worst interval's) with its
   95% interval is compared with the SLO: "confirmed" when the interval holds the SLO. When it
   does not, up to ``des_steps`` more DES runs walk and bisect a bracket around g (the DES is the
   reference; the fast-path p99 is a screening estimate) and the DES bracket is reported.
3. Date: with a growth rate r per year the load is (1 + r)^t times today's after t years, so the
   SLO breaks after t = ln(g) / ln(1 + r) years.

For an M/M/1 queue the p99 of the response time is ln(100) / (mu - lambda), so the breaking rate
is mu - ln(100) / SLO: tests/plan/test_growth.py checks the search against it.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from models.loading import BadInput, format_validation_error
from models.result import Metric, Result
from models.scenario import Scenario
from sim.analytic import evaluate
from sim.plan.planner import p99_estimate_us
from sim.plan.profile_fast import evaluate_profile

REL_TOL = 1e-3
"""Bisection stops when the bracket is this fraction of its low end wide."""
MIN_FACTOR = 1.0 / 1024
DAYS_PER_YEAR = 365.25


def _scaled_workload(data: dict[str, Any], factor: float) -> dict[str, Any]:
    """One workload's dump with its load multiplied by ``factor`` (in place; returned)."""
    kind = data["kind"]
    if kind == "open":
        data["rate_iops"] *= factor
    elif kind == "bursty":
        data["on_rate_iops"] *= factor
        data["off_rate_iops"] = data.get("off_rate_iops", 0.0) * factor
    elif kind == "closed":
        data["jobs"] = max(1, round(data["jobs"] * factor))
    else:
        for iv in data["intervals"]:
            if "rate_iops" in iv:
                iv["rate_iops"] *= factor
            else:
                iv["queue_depth"] = max(1, round(iv["queue_depth"] * factor))
    return data


def scaled(scenario: Scenario, factor: float) -> Scenario:
    """``scenario`` with its load multiplied by ``factor`` (see the module docstring); with several workloads
    (a consolidation) every one grows by the same factor. BadInput when a scaled value leaves its range."""
    from pydantic import ValidationError

    dump = scenario.model_dump(mode="json", exclude_none=True)
    if scenario.workloads is not None:
        dump["workloads"] = [_scaled_workload(w, factor) for w in dump["workloads"]]
    else:
        dump["workload"] = _scaled_workload(dump["workload"], factor)
    try:
        return Scenario.model_validate(dump)
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc)) from None


def fast_p99_us(scenario: Scenario) -> float:
    """The fast path's p99 estimate (infinite when overloaded); a profile: its worst interval's."""
    if scenario.profile_index() is not None:
        return evaluate_profile(scenario).worst_p99_us
    fast = evaluate(scenario)
    return p99_estimate_us(fast) if fast.stable else math.inf


def des_p99(result: Result) -> Metric:
    """The p99 the SLO is judged on: the run's, or a profile's worst interval's."""
    if result.intervals is not None and result.peak_interval is not None:
        return result.intervals[result.peak_interval.index].metrics["latency_p99_us"]
    return result.latency_p99_us


@dataclass
class DesCheck:
    """One DES run at a load multiplier."""

    factor: float
    p99: Metric
    validity: str

    def verdict(self, slo: float) -> str:
        v, (lo, hi) = self.p99.value, self.p99.ci95
        if self.validity == "unstable" or not math.isfinite(v):
            return "breaks (unstable)"
        if self.p99.has_ci and lo <= slo <= hi:
            return "at the SLO"
        return "breaks" if v > slo else "holds"

    def as_dict(self, slo: float) -> dict[str, Any]:
        return {"factor": self.factor, "p99_us": self.p99.summary(), "validity": self.validity, "verdict": self.verdict(slo)}


@dataclass
class Growth:
    """The answer of a growth query."""

    slo_p99_us: float
    today_p99_us: float
    factor: float | None
    """Fast-path breaking multiplier; None when the SLO holds up to ``max_factor``."""
    max_factor: float
    evaluations: list[tuple[float, float]] = field(default_factory=list)
    des: list[DesCheck] = field(default_factory=list)
    des_bracket: tuple[float | None, float | None] = (None, None)
    note: str = ""

    @property
    def confirmed(self) -> bool:
        return bool(self.des) and self.des[0].verdict(self.slo_p99_us) == "at the SLO"

    @property
    def best_factor(self) -> float | None:
        """The DES bracket's geometric middle when the DES moved the answer, else the fast-path factor."""
        lo, hi = self.des_bracket
        if self.des and not self.confirmed and lo is not None and hi is not None:
            return math.sqrt(lo * hi)
        return self.factor

    def years(self, rate_per_year: float) -> float | None:
        f = self.best_factor
        if f is None:
            return None
        return math.log(f) / math.log1p(rate_per_year)

    def breaks_on(self, rate_per_year: float, start: dt.date) -> dt.date | None:
        years = self.years(rate_per_year)
        if years is None:
            return None
        return start + dt.timedelta(days=years * DAYS_PER_YEAR)

    def as_dict(self, rate_per_year: float | None = None, start: dt.date | None = None) -> dict[str, Any]:
        def num(v: float | None) -> float | None:
            return v if v is not None and math.isfinite(v) else None

        out: dict[str, Any] = {
            "slo_p99_us": self.slo_p99_us, "today_p99_estimate_us": num(self.today_p99_us),
            "breaking_factor_fast": self.factor, "max_factor": self.max_factor,
            "growth_pct": (self.best_factor - 1) * 100 if self.best_factor is not None else None,
            "breaking_factor": self.best_factor, "des_confirmed": self.confirmed,
            "des": [d.as_dict(self.slo_p99_us) for d in self.des],
            "des_bracket": list(self.des_bracket), "fast_curve": [[g, num(p)] for g, p in sorted(self.evaluations)],
            "note": self.note,
        }
        if rate_per_year is not None and start is not None:
            date = self.breaks_on(rate_per_year, start)
            out.update(rate_per_year=rate_per_year, start=start.isoformat(), years=self.years(rate_per_year),
                       breaks_on=date.isoformat() if date else None)
        return out


def _bracket(p99: Callable[[float], float], slo: float, max_factor: float) -> tuple[float, float] | None:
    """(lo, hi) with p99(lo) <= slo < p99(hi), by doubling up from 1 or halving down; None if it holds to max_factor."""
    if p99(1.0) > slo:
        hi, lo = 1.0, 0.5
        while p99(lo) > slo:
            if lo <= MIN_FACTOR:
                return 0.0, lo
            hi, lo = lo, lo / 2
        return lo, hi
    lo, hi = 1.0, 2.0
    while p99(min(hi, max_factor)) <= slo:
        if hi >= max_factor:
            return None
        lo, hi = hi, hi * 2
    return lo, min(hi, max_factor)


def fast_breaking_factor(scenario: Scenario, slo_p99_us: float, max_factor: float = 100.0,
                         p99_of: Callable[[Scenario], float] = fast_p99_us) -> Growth:
    """Step 1 of the module docstring: the breaking multiplier of ``p99_of`` (the fast path's estimate)."""
    seen: dict[float, float] = {}

    def p99(g: float) -> float:
        if g not in seen:
            try:
                seen[g] = p99_of(scaled(scenario, g))
            except BadInput:
                seen[g] = math.inf  # beyond a field's range (a rate above 1e9 IOPS): past any SLO
        return seen[g]

    today = p99(1.0)
    found = _bracket(p99, slo_p99_us, max_factor)
    if found is None:
        return Growth(slo_p99_us, today, None, max_factor, list(seen.items()),
                      note=f"the SLO holds up to {max_factor:g} x today's load (fast path)")
    lo, hi = found
    if lo == 0.0:
        return Growth(slo_p99_us, today, hi, max_factor, list(seen.items()),
                      note=f"the SLO is broken even at {hi:g} x today's load: below the unloaded latency")
    while (hi - lo) > REL_TOL * lo and (scaled_differs(scenario, lo, hi)):
        mid = math.sqrt(lo * hi)
        if p99(mid) > slo_p99_us:
            hi = mid
        else:
            lo = mid
    return Growth(slo_p99_us, today, lo, max_factor, list(seen.items()))


def scaled_differs(scenario: Scenario, a: float, b: float) -> bool:
    """Whether two multipliers give different loads (a closed workload's jobs are whole numbers)."""
    def jobs(wl: Any, g: float) -> int:
        return max(1, round(wl.jobs * g))

    return any(wl.kind != "closed" or jobs(wl, a) != jobs(wl, b) for wl in scenario.all_workloads())


def breaking_point(scenario: Scenario, slo_p99_us: float, max_factor: float = 100.0, verify: bool = True,
                   des_steps: int = 4, simulate: Callable[[Scenario], Result] | None = None) -> Growth:
    """The growth query: fast-path bisection, then DES verification (module docstring)."""
    if not slo_p99_us > 0:
        raise BadInput([("--slo-p99-us", f"must be > 0, got {slo_p99_us:g}")])
    growth = fast_breaking_factor(scenario, slo_p99_us, max_factor)
    if not verify or growth.factor is None:
        return growth
    if simulate is None:
        from sim.des.engine import simulate as run_des

        simulate = run_des

    def check(g: float) -> DesCheck:
        result = simulate(scaled(scenario, g))
        d = DesCheck(g, des_p99(result), result.validity)
        growth.des.append(d)
        return d

    first = check(growth.factor)
    verdict = first.verdict(slo_p99_us)
    if verdict == "at the SLO":
        growth.des_bracket = (growth.factor, growth.factor)
        return growth
    _refine(growth, check, first, des_steps)
    return growth


def _refine(growth: Growth, check: Callable[[float], DesCheck], first: DesCheck, steps: int) -> None:
    """Walk away from the fast-path factor (5%, 10%, 20% ...) until the DES crosses the SLO, then bisect."""
    slo = growth.slo_p99_us
    lo: float | None = None
    hi: float | None = None
    if first.verdict(slo) == "holds":
        lo = first.factor
    else:
        hi = first.factor
    step = 0.05
    while steps > 0 and (lo is None or hi is None):
        g = hi * (1 - step) if lo is None and hi is not None else (lo or 1.0) * (1 + step)
        d = check(g)
        steps -= 1
        step *= 2
        v = d.verdict(slo)
        if v == "at the SLO":
            lo = hi = g
        elif v == "holds":
            lo = g
        else:
            hi = g
    while steps > 0 and lo is not None and hi is not None and hi > lo * (1 + REL_TOL):
        g = math.sqrt(lo * hi)
        v = check(g).verdict(slo)
        steps -= 1
        if v == "at the SLO":
            lo = hi = g
        elif v == "holds":
            lo = g
        else:
            hi = g
    growth.des_bracket = (lo, hi)
