"""Latency axes a customer reads at a glance: ticks labelled in us or ms ("500 us", "2 ms"), never plotly's bare
"2 ... 9" minor labels of a log axis, and an objective line labelled with its value in the same words.

A log axis gets explicit ticks on the 1-2-5 series (one decade holds at most three labels); a linear axis is
drawn in us or ms, whichever keeps its figures short, with the unit on every tick.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

STEPS = (1.0, 2.0, 5.0)
"""The mantissas of a log axis's ticks (1-2-5: at most three labels a decade, none crowding the next)."""
PAD_DECADES = 0.08
"""Room beyond the first and last tick (in decades), for an objective line's label at the last."""
MAX_TICKS = 10
"""Above this many 1-2-5 ticks the axis keeps one a decade."""


def us_words(us: float) -> str:
    """A latency as a reader says it: 850 -> "850 us", 2000 -> "2 ms", 1500 -> "1.5 ms", 2.5e6 -> "2.5 s"."""
    if not math.isfinite(us):
        return "-"
    a = abs(us)
    if a >= 1e6:
        return f"{us / 1e6:,.3g} s"
    if a >= 1e3:
        return f"{us / 1e3:,.3g} ms"
    if a >= 1:
        return f"{us:,.3g} us"
    return f"{us:.2g} us"


def _finite_positive(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v) and v > 0]


def log_ticks(values: Iterable[float | None]) -> tuple[list[float], list[str]]:
    """Tick positions (1-2-5 series, one beyond the data at each end) and their labels for a log latency axis that
    shows ``values`` (us); a single decade a tick per mantissa, a wide span one tick per decade."""
    data = _finite_positive(values)
    if not data:
        return [], []
    low, high = min(data), max(data)
    first = math.floor(math.log10(low))
    first -= 10.0 ** first > low  # log10 rounds a value just below a power of ten up to it
    last = math.ceil(math.log10(high))
    last += 10.0 ** last < high
    ticks = [m * 10.0 ** e for e in range(first, last + 1) for m in STEPS]
    below = [t for t in ticks if t <= low]
    above = [t for t in ticks if t >= high]
    lo_tick = below[-1] if below else ticks[0]
    hi_tick = above[0] if above else ticks[-1]
    shown = [t for t in ticks if lo_tick <= t <= hi_tick]
    if len(shown) > MAX_TICKS:
        shown = [10.0 ** e for e in range(first, last + 1)]
    return shown, [us_words(t) for t in shown]


def log_latency_axis(values: Iterable[float | None]) -> dict[str, Any]:
    """Plotly axis settings for a log latency axis over ``values`` (us): explicit us / ms ticks, no minor labels,
    the range from the first tick to the last."""
    vals, text = log_ticks(values)
    if not vals:
        return {"type": "log"}
    return {"type": "log", "tickmode": "array", "tickvals": vals, "ticktext": text, "minor": {"showgrid": False},
            "range": [math.log10(vals[0]) - PAD_DECADES, math.log10(vals[-1]) + PAD_DECADES]}


def linear_unit(values: Iterable[float | None]) -> tuple[str, float]:
    """("ms", 1e-3) when the largest of ``values`` (us) is at least 2 ms, else ("us", 1.0): the unit of a linear axis."""
    data = _finite_positive(values)
    return ("ms", 1e-3) if data and max(data) >= 2_000 else ("us", 1.0)


def objective_words(statistic: str, bound_us: float) -> str:
    """An objective line's label: "objective: p99 <= 2 ms"."""
    return f"objective: {statistic} <= {us_words(bound_us)}"


def objective_line(fig: Any, y_us: float, text: str, *, log: bool, xref: str = "x domain", yref: str = "y",
                   colour: str = "crimson", row: int | None = None, col: int | None = None) -> None:
    """A dashed objective line across a latency axis, labelled above it at the left. The label is an annotation of
    its own: plotly places an ``add_hline`` label at the raw value on a log axis (off the chart), where an
    annotation's y is the axis's log10."""
    if row is not None:
        fig.add_hline(y=y_us, line_dash="dash", line_color=colour, row=row, col=col)
    else:
        fig.add_hline(y=y_us, line_dash="dash", line_color=colour)
    fig.add_annotation(x=0.01, xref=xref, y=math.log10(y_us) if log else y_us, yref=yref, text=text, showarrow=False,
                       xanchor="left", yanchor="bottom", font={"color": colour})
