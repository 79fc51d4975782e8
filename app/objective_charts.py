"""Charts that judge objectives, and throughput a small workload can be seen in.

* ``objective_chart``: one panel per objective of a scenario's ``slos`` (models/slo.py): the workload's figure
  with its 95% interval (the DES's) or the fast path's estimate (no interval), against the objective's line,
  labelled with its value. A figure from a run that is not final is hollow and its verdict says so.
* ``workload_throughput_chart``: each workload's IOPS and MB/s in panels of their own (one column per
  workload, each with its own axis), so a 500-IOPS backup next to a 100,000-IOPS database is as readable as it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from app.axes import linear_unit, us_words

MET = "#2ca02c"
MISSED = "crimson"
UNSURE = "#e69f00"
NOT_FINAL = "#7f7f7f"
ESTIMATE = "#636efa"
BAR = "steelblue"

METRIC_WORDS = {"latency_mean_us": "mean latency", "latency_p50_us": "p50 latency", "latency_p95_us": "p95 latency",
                "latency_p99_us": "p99 latency", "latency_p999_us": "p99.9 latency", "mbps": "MB/s", "iops": "IOPS"}


def metric_words(key: str) -> str:
    return METRIC_WORDS.get(key, key.replace("_", " "))


def is_latency(key: str) -> bool:
    return key.startswith("latency_")


def bound_words(key: str, kind: str, bound: float) -> str:
    """"p99 latency <= 1 ms", "MB/s >= 500"."""
    sign = "<=" if kind == "max" else ">="
    value = us_words(bound) if is_latency(key) else f"{bound:,.6g}"
    return f"{metric_words(key)} {sign} {value}"


def verdict_words(verdict: str, validity: str) -> str:
    """A verdict as the page prints it: a run that is not final is never a plain "met" ("not final: cut short")."""
    if validity == "precise":
        return verdict
    state = {"cut_short": "cut short", "unstable": "unstable", "unknown": "validity unknown"}.get(validity, validity)
    return f"not final: {state} (so far: {verdict})"


@dataclass(frozen=True)
class ObjectivePoint:
    """One objective of one workload with the figure that judges it."""

    workload: str
    metric: str
    """A Result metric key: ``latency_p99_us``, ``mbps``, ``iops`` ..."""
    kind: str
    """"max" (a ceiling) or "min" (a floor)."""
    bound: float
    value: float | None = None
    low: float | None = None
    high: float | None = None
    verdict: str = "unknown"
    validity: str = "precise"
    estimate: float | None = None
    """The fast path's figure (no interval), drawn beside the DES's or alone before a simulation."""

    @property
    def final(self) -> bool:
        return self.validity == "precise"


def _colour(point: ObjectivePoint) -> str:
    if not point.final:
        return NOT_FINAL
    return {"met": MET, "missed": MISSED}.get(point.verdict, UNSURE)


def _error(point: ObjectivePoint, scale: float) -> dict[str, Any] | None:
    if point.value is None or point.low is None or point.high is None:
        return None
    return {"type": "data", "symmetric": False, "visible": True, "array": [(point.high - point.value) * scale],
            "arrayminus": [(point.value - point.low) * scale], "thickness": 2, "width": 10}


def _panel(fig: go.Figure, point: ObjectivePoint, col: int, shown: set[str]) -> None:
    latency = is_latency(point.metric)
    unit, scale = linear_unit([point.bound, point.value, point.high, point.estimate]) if latency else ("", 1.0)
    x = [point.workload]
    if point.estimate is not None and math.isfinite(point.estimate):
        name = "fast path (estimate, no interval)"
        fig.add_trace(go.Scatter(x=x, y=[point.estimate * scale], mode="markers", name=name, showlegend=name not in shown,
                                 marker={"symbol": "circle-open", "size": 12, "color": ESTIMATE, "line": {"width": 2}},
                                 hovertemplate=f"fast path: %{{y:,.4g}} {unit}<extra></extra>"), row=1, col=col)
        shown.add(name)
    if point.value is not None:
        name = "simulation (DES, 95% interval)" if point.final else f"simulation, {verdict_words(point.verdict, point.validity)}"
        fig.add_trace(go.Scatter(x=x, y=[point.value * scale], mode="markers", name=name, showlegend=name not in shown,
                                 error_y=_error(point, scale),
                                 marker={"symbol": "diamond" if point.final else "diamond-open", "size": 14,
                                         "color": _colour(point), "line": {"width": 2, "color": _colour(point)}},
                                 hovertemplate=f"%{{y:,.4g}} {unit} ({verdict_words(point.verdict, point.validity)})<extra></extra>"),
                      row=1, col=col)
        shown.add(name)
    fig.add_hline(y=point.bound * scale, line_dash="dash", line_color=MISSED, row=1, col=col,
                  annotation_text=f"objective {bound_words(point.metric, point.kind, point.bound)}",
                  annotation_position="top left" if point.kind == "max" else "bottom left")
    top = max(v for v in (point.bound, point.high, point.value, point.estimate, 0.0) if v is not None and math.isfinite(v))
    fig.update_yaxes(title_text=f"{metric_words(point.metric)}{f' ({unit})' if unit else ''}", range=[0, top * scale * 1.3],
                     ticksuffix=f" {unit}" if unit else "", rangemode="tozero", row=1, col=col)


def objective_chart(points: Sequence[ObjectivePoint], title: str = "") -> go.Figure:
    """One panel per objective: the figure (with its 95% interval) against the objective's line."""
    from plotly.subplots import make_subplots

    titles = [f"{p.workload}: {bound_words(p.metric, p.kind, p.bound)}" for p in points]
    fig = make_subplots(rows=1, cols=max(1, len(points)), subplot_titles=titles or [""], horizontal_spacing=0.12)
    shown: set[str] = set()
    for col, point in enumerate(points, start=1):
        _panel(fig, point, col, shown)
    text = title or "Objectives per workload"
    if any(not p.final for p in points if p.value is not None):
        text += " (hollow: the run is not final)"
    fig.update_layout(title=text, height=400, legend={"orientation": "h", "y": -0.15},
                      margin={"l": 10, "r": 10, "t": 80, "b": 40}, xaxis_automargin=True, yaxis_automargin=True)
    return fig


@dataclass(frozen=True)
class Throughput:
    """A workload's IOPS and MB/s, with their 95% intervals when a simulation gave them."""

    workload: str
    iops: float
    mbps: float
    iops_ci: tuple[float, float] | None = None
    mbps_ci: tuple[float, float] | None = None


def _bar(value: float, ci: tuple[float, float] | None, name: str, colour: str, text: str) -> go.Bar:
    error = None
    if ci is not None and all(math.isfinite(c) for c in ci):
        error = {"type": "data", "symmetric": False, "visible": True, "array": [max(0.0, ci[1] - value)],
                 "arrayminus": [max(0.0, value - ci[0])]}
    return go.Bar(x=[name], y=[value], error_y=error, marker_color=colour, showlegend=False, text=[text],
                  textposition="auto", hovertemplate=f"{name}: {text}<extra></extra>")


def workload_throughput_chart(rows: Sequence[Throughput], title: str = "") -> go.Figure:
    """IOPS (top) and MB/s (bottom) of each workload, one column of panels per workload, each with its own axis."""
    from plotly.subplots import make_subplots

    n = max(1, len(rows))
    titles = [f"{r.workload}: IOPS" for r in rows] + [f"{r.workload}: MB/s" for r in rows]
    fig = make_subplots(rows=2, cols=n, subplot_titles=titles or ["", ""], vertical_spacing=0.18, horizontal_spacing=0.08)
    for col, r in enumerate(rows, start=1):
        fig.add_trace(_bar(r.iops, r.iops_ci, r.workload, BAR, f"{r.iops:,.0f} IOPS"), row=1, col=col)
        fig.add_trace(_bar(r.mbps, r.mbps_ci, r.workload, "#00a2a2", f"{r.mbps:,.1f} MB/s"), row=2, col=col)
        fig.update_yaxes(rangemode="tozero", row=1, col=col)
        fig.update_yaxes(rangemode="tozero", row=2, col=col)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(title=title or "Throughput per workload (each panel its own scale)", height=460,
                      margin={"l": 10, "r": 10, "t": 80, "b": 20})
    return fig


@dataclass(frozen=True)
class IntervalEstimateRow:
    """One interval of a profile as the fast path sees it (``sim.plan.profile_fast.IntervalEstimate``)."""

    index: int
    label: str
    start_s: float
    duration_s: float
    offered_iops: float
    p99_us: float | None
    """The fast path's p99 estimate; None where the interval is overloaded (no steady state)."""


def _time_axis(total_s: float) -> tuple[str, float]:
    return ("time (h)", 1 / 3600) if total_s >= 7_200 else ("time (s)", 1.0)


def interval_objective_chart(rows: Sequence[IntervalEstimateRow], slo_us: float, peak_index: int | None,
                             peak: ObjectivePoint | None = None, title: str = "") -> go.Figure:
    """Every interval's fast-path p99 estimate against the p99 objective (log axis in us / ms), the peak interval's
    simulation with its 95% interval where it ran, and the load each interval offered below."""
    from plotly.subplots import make_subplots

    from app.axes import log_latency_axis, objective_line, objective_words

    total = sum(r.duration_s for r in rows)
    axis_title, scale = _time_axis(total)
    mid = [(r.start_s + r.duration_s / 2) * scale for r in rows]
    labels = [f"interval {r.index}" + (f" ({r.label})" if r.label else "") for r in rows]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.06)
    fig.add_trace(go.Scatter(x=mid, y=[r.p99_us for r in rows], mode="lines+markers", line_shape="hvh", name="p99, fast path (estimate)",
                             line_color=ESTIMATE, text=labels, hovertemplate="%{text}<br>p99 ~%{y:,.0f} us<extra></extra>"),
                  row=1, col=1)
    over = [(m, lab) for m, lab, r in zip(mid, labels, rows, strict=True) if r.p99_us is None]
    shown = [r.p99_us for r in rows] + [slo_us]
    if peak is not None and peak.value is not None and peak_index is not None and 0 <= peak_index < len(rows):
        words = verdict_words(peak.verdict, peak.validity)
        fig.add_trace(go.Scatter(x=[mid[peak_index]], y=[peak.value], mode="markers", error_y=_error(peak, 1.0),
                                 name=f"p99, simulation of the peak interval (95% interval): {words}",
                                 marker={"symbol": "diamond" if peak.final else "diamond-open", "size": 14, "color": _colour(peak),
                                         "line": {"width": 2, "color": _colour(peak)}},
                                 hovertemplate=f"{labels[peak_index]}<br>DES p99 %{{y:,.0f}} us ({words})<extra></extra>"),
                      row=1, col=1)
        shown += [peak.value, peak.low, peak.high]
    elif peak_index is not None and 0 <= peak_index < len(rows) and rows[peak_index].p99_us is not None:
        fig.add_trace(go.Scatter(x=[mid[peak_index]], y=[rows[peak_index].p99_us], mode="markers+text", name="peak interval",
                                 marker={"symbol": "star", "size": 14, "color": MISSED}, text=["peak"],
                                 textposition="top center", hoverinfo="skip"), row=1, col=1)
    objective_line(fig, slo_us, objective_words("p99", slo_us), log=True, colour=MISSED, row=1, col=1)
    fig.add_trace(go.Bar(x=mid, y=[r.offered_iops for r in rows], width=[r.duration_s * scale for r in rows], name="offered IOPS",
                         marker_color=BAR, customdata=labels, hovertemplate="%{customdata}<br>%{y:,.0f} IOPS offered<extra></extra>"),
                  row=2, col=1)
    fig.update_yaxes(title_text="p99 latency", **log_latency_axis(shown), row=1, col=1)
    fig.update_yaxes(title_text="offered IOPS", rangemode="tozero", row=2, col=1)
    fig.update_xaxes(title_text=axis_title, row=2, col=1)
    text = title or "p99 per interval against the objective"
    if over:
        text += f" ({len(over)} interval(s) overloaded: no steady state, not drawn)"
    fig.update_layout(title=text, height=560, legend={"orientation": "h", "y": -0.12},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40}, xaxis_automargin=True, yaxis_automargin=True)
    return fig
