"""How far a figure on screen can be trusted, in one place for every page, table, chart and cache.

``models.result.Result.validity`` says whether a run reached its precision (``precise``), was
ended by a budget first (``cut_short``: its values are indicative, CIs wide or unknown) or ran
an offered load above a component's capacity (``unstable``). The app adds:

* ``unknown`` for results saved in the library before the field existed;
* ``unstable`` when the fast path's throughput bound shows an open load above capacity, even
  if the engine did not mark the run (``overload``).

Only ``precise`` results are a final answer: they alone are cached for good, ranked "best"
and used in cost ratios. Everything else carries a badge and is drawn with hollow markers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from models.result import Result
from models.scenario import Scenario
from models.workload import BurstyWorkload, OpenWorkload

PRECISE = "precise"
CUT_SHORT = "cut_short"
UNSTABLE = "unstable"
UNKNOWN = "unknown"
LEGACY_NOTE = "saved before flashplan recorded whether a run reached its precision: validity unknown"

BADGES = {PRECISE: "✓ precise", CUT_SHORT: "⚠ cut short", UNSTABLE: "⛔ unstable", UNKNOWN: "? unknown"}
MARKER_SYMBOLS = {PRECISE: "circle", CUT_SHORT: "circle-open", UNSTABLE: "x-open", UNKNOWN: "circle-open"}


def validity_of(result: Result | dict[str, Any] | None) -> str:
    """``precise``, ``cut_short``, ``unstable`` or ``unknown`` (a legacy result, or none)."""
    if result is None:
        return UNKNOWN
    if isinstance(result, dict):
        v = result.get("validity")
        return v if v in BADGES else UNKNOWN
    if result.validity_note == LEGACY_NOTE:
        return UNKNOWN
    return result.validity


def is_final(validity: str) -> bool:
    """Whether a figure of this validity may be cached as final, ranked best or used in a cost ratio."""
    return validity == PRECISE


def badge(validity: str) -> str:
    return BADGES.get(validity, BADGES[UNKNOWN])


def note_of(result: Result) -> str:
    """Why a result is not precise, in the user's words ("" when it is)."""
    v = validity_of(result)
    if v == PRECISE:
        return ""
    if v == CUT_SHORT:
        widest = max((getattr(result, k) for k in ("iops", "latency_mean_us", "latency_p99_us")),
                     key=lambda m: m.rel_half_width if m.has_ci else float("inf"))
        width = f"widest 95% CI ±{widest.rel_half_width:.0%}" if widest.has_ci else "a confidence interval still unknown"
        why = f" ({result.validity_note})" if result.validity_note else ""
        return (f"cut short after {result.simulated_ios:,} I/Os{why}, {width} against a target of "
                f"±{result.scenario.run.target_rel_ci:.0%}: the figures are indicative only; run it with a larger budget "
                "(Precision) for a final answer")
    return result.validity_note or v


def result_from_json(text: str | bytes) -> Result:
    """A Result from its JSON, also one saved before ``validity`` existed (read as unknown, never as precise)."""
    data = json.loads(text)
    if isinstance(data, dict) and "validity" not in data:
        data["validity"] = CUT_SHORT
        data["validity_note"] = LEGACY_NOTE
    return Result.model_validate(data)


def validity_of_stop(stop_reason: Any) -> str:
    """A sweep row's validity from its stop reason (a sweep row without a ``validity`` column)."""
    if not isinstance(stop_reason, str) or not stop_reason:
        return UNKNOWN
    return PRECISE if stop_reason.startswith("precision") else CUT_SHORT


# -- overload ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Overload:
    """An open load above what the configuration sustains: the offered rate, the capacity and which part limits it."""

    offered_iops: float
    capacity_iops: float
    component: str

    def sentence(self) -> str:
        from app.words import component_words

        return (f"unstable: offered {self.offered_iops:,.0f} IOPS > capacity {self.capacity_iops:,.0f} IOPS of "
                f"{component_words(self.component)}")


def offered_iops(scenario: Scenario) -> float | None:
    """The mean offered rate of an open or bursty workload (None for a closed one: it cannot overload)."""
    wl = scenario.workload
    if isinstance(wl, OpenWorkload):
        return float(wl.rate_iops)
    if isinstance(wl, BurstyWorkload):
        return float(wl.mean_rate_iops)
    return None


def overload(scenario: Scenario, capacity_iops: float | None, component: str) -> Overload | None:
    """The overload of an open load above the fast path's throughput bound (``capacity_iops``), or None."""
    offered = offered_iops(scenario)
    if offered is None or capacity_iops is None or not math.isfinite(capacity_iops) or capacity_iops <= 0:
        return None
    if offered <= capacity_iops:
        return None
    return Overload(offered, capacity_iops, component)


def with_overload(result: Result, over: Overload | None) -> Result:
    """The result marked unstable when the fast path shows its load above capacity (the engine may not have)."""
    if over is None or result.validity == UNSTABLE:
        return result
    return result.model_copy(update={"validity": UNSTABLE, "validity_note": over.sentence()})
