"""How far load can grow before a p99 SLO breaks, and when that is at a yearly growth rate.

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
   Each DES run is run to its verdict (``sim.des.batching``: near capacity it covers the queue's
   relaxation time or says it could not; a saturated load is ``unstable``, a sure "breaks"), and an
   open load the fast path finds past the route's capacity is unstable too (``sim.plan.capacity_check``).
3. Which answer is trusted: both breaking points are shown side by side (``Growth.des_factor`` beside
   ``Growth.factor``). The DES is the reference when it confirmed the fast path's point, or when its
   bracket is closed by runs that reached a verdict (the low end precise, the high end precise or
   unstable); otherwise (the bracket left open, or bounded by a run cut short) the fast path's point
   is used, and ``Growth.trusted_because`` says why.
4. Date: with a growth rate r per year the load is (1 + r)^t times today's after t years, so the
   SLO breaks after t = ln(g) / ln(1 + r) years; a date past the calendar's last (9999-12-31) is
   given as years only (``Growth.breaks_on`` is None, ``date_words`` says "beyond year 9999").

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
from sim.plan.capacity_check import cross_checked
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
    note: str = ""
    """The run's validity note (why it was cut short or is unstable)."""

    @property
    def reached_verdict(self) -> bool:
        """Whether the run answered for its load: precise, or unstable (a sure "breaks")."""
        return self.validity in ("precise", "unstable")

    def verdict(self, slo: float) -> str:
        v, (lo, hi) = self.p99.value, self.p99.ci95
        if self.validity == "unstable" or not math.isfinite(v):
            return "breaks (unstable)"
        if self.p99.has_ci and lo <= slo <= hi:
            return "at the SLO"
        return "breaks" if v > slo else "holds"

    def as_dict(self, slo: float) -> dict[str, Any]:
        return {"factor": self.factor, "p99_us": self.p99.summary(), "validity": self.validity, "verdict": self.verdict(slo),
                "validity_note": self.note}


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
        return bool(self.des) and self.des[0].verdict(self.slo_p99_us) == "at the SLO" and self.des[0].validity == "precise"

    @property
    def des_factor(self) -> float | None:
        """The DES's breaking multiplier: the fast-path factor when the DES confirmed it, the geometric middle of the
        DES bracket when it is closed, else None (no DES run, or the bracket left open)."""
        if self.confirmed:
            return self.factor
        lo, hi = self.des_bracket
        if self.des and lo is not None and hi is not None:
            return math.sqrt(lo * hi)
        return None

    def _bounding(self) -> list[DesCheck]:
        """The DES runs at the ends of the DES bracket."""
        lo, hi = self.des_bracket
        return [d for d in self.des if d.factor in (lo, hi)]

    @property
    def trusted(self) -> str:
        """"des" or "fast": whose breaking point the answer (``best_factor``, the date) takes (module docstring)."""
        if self.des_factor is None:
            return "fast"
        return "des" if all(d.reached_verdict for d in self._bounding()) else "fast"

    @property
    def trusted_because(self) -> str:
        """Why the answer takes ``trusted``'s breaking point."""
        if self.factor is None:
            return self.note
        if not self.des:
            return "fast path only: no DES run (--no-verify, or nothing to verify)"
        if self.confirmed:
            return "the DES confirms the fast path: the SLO lies within the 95% interval of its p99 at the fast path's point"
        if self.des_factor is None:
            return "the DES bracket is still open (raise --des-steps to close it): the fast path's point is used"
        short = [d for d in self._bounding() if not d.reached_verdict]
        if short:
            d = short[0]
            return (f"the DES run at x{d.factor:.4g} was {d.validity.replace('_', ' ')} ({d.note or 'no verdict'}): "
                    f"the fast path's point is used")
        return "the DES is the reference, and its bracket is closed by runs that reached a verdict"

    @property
    def best_factor(self) -> float | None:
        """The trusted breaking multiplier: the DES's when ``trusted`` is "des", else the fast path's."""
        return self.des_factor if self.trusted == "des" else self.factor

    def years(self, rate_per_year: float) -> float | None:
        f = self.best_factor
        if f is None:
            return None
        return math.log(f) / math.log1p(rate_per_year)

    def breaks_on(self, rate_per_year: float, start: dt.date) -> dt.date | None:
        """The date the SLO breaks; None when there is no breaking point or the date lies outside the calendar
        (years 1 .. 9999: ``date_words``)."""
        years = self.years(rate_per_year)
        if years is None:
            return None
        return date_after(start, years)

    def date_words(self, rate_per_year: float, start: dt.date) -> str:
        """The breaking date as text: ISO, or "beyond year 9999" (before year 1: "before year 1")."""
        date = self.breaks_on(rate_per_year, start)
        if date is not None:
            return date.isoformat()
        years = self.years(rate_per_year)
        return "before year 1" if years is not None and years < 0 else "beyond year 9999"

    def as_dict(self, rate_per_year: float | None = None, start: dt.date | None = None) -> dict[str, Any]:
        def num(v: float | None) -> float | None:
            return v if v is not None and math.isfinite(v) else None

        out: dict[str, Any] = {
            "slo_p99_us": self.slo_p99_us, "today_p99_estimate_us": num(self.today_p99_us),
            "breaking_factor_fast": self.factor, "max_factor": self.max_factor,
            "growth_pct": (self.best_factor - 1) * 100 if self.best_factor is not None else None,
            "breaking_factor": self.best_factor, "breaking_factor_des": self.des_factor, "trusted": self.trusted,
            "trusted_because": self.trusted_because, "des_confirmed": self.confirmed,
            "des": [d.as_dict(self.slo_p99_us) for d in self.des],
            "des_bracket": list(self.des_bracket), "fast_curve": [[g, num(p)] for g, p in sorted(self.evaluations)],
            "note": self.note,
        }
        if rate_per_year is not None and start is not None:
            date = self.breaks_on(rate_per_year, start)
            years = self.years(rate_per_year)
            out.update(rate_per_year=rate_per_year, start=start.isoformat(), years=num(years),
                       breaks_on=date.isoformat() if date else None,
                       breaks_on_words=self.date_words(rate_per_year, start) if years is not None else None)
        return out


def date_after(start: dt.date, years: float) -> dt.date | None:
    """``start`` plus ``years`` (of 365.25 days); None when that leaves the calendar (before year 1, after 9999)."""
    days = years * DAYS_PER_YEAR
    if not math.isfinite(days) or abs(days) > (dt.date.max - dt.date.min).days:
        return None
    try:
        return start + dt.timedelta(days=days)
    except OverflowError:
        return None


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
        grown = scaled(scenario, g)
        result = cross_checked(grown, simulate(grown))
        d = DesCheck(g, des_p99(result), result.validity, result.validity_note)
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
