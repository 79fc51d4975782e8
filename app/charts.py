"""The web app's plotly figures: utilization with the bottleneck, latency against load, comparisons, sweeps.

Each function takes plain numbers (a Result, rows of a table, a sweep DataFrame) and
returns a ``plotly.graph_objects.Figure``; the pages show them and the HTML report
embeds the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

BOTTLENECK = "crimson"
AUTOMARGIN = {"xaxis_automargin": True, "yaxis_automargin": True}
"""Room for long component names and axis titles, in the app and in the standalone HTML report."""
OTHER = "steelblue"
FAST_PATH = "#636efa"
DES = "#ef553b"


def utilization_chart(utilization: dict[str, float], bottleneck: str, top: int = 15, title: str = "") -> go.Figure:
    """Horizontal bars of the busiest components, the bottleneck in red, a dashed line at 100%."""
    rows = sorted(utilization.items(), key=lambda kv: -kv[1])[:top]
    fig = go.Figure(go.Bar(
        x=[v for _, v in rows], y=[k for k, _ in rows], orientation="h",
        marker_color=[BOTTLENECK if k == bottleneck else OTHER for k, _ in rows],
        text=[f"{v:.0%}" for _, v in rows], textposition="auto",
        hovertemplate="%{y}: %{x:.1%}<extra></extra>",
    ))
    fig.add_vline(x=1.0, line_dash="dash", line_color="grey")
    fig.update_layout(title=title or f"Utilization (bottleneck: {bottleneck})", xaxis_tickformat=".0%",
                      xaxis_title="time-average utilization", yaxis_autorange="reversed",
                      height=max(280, 28 * len(rows) + 120), margin={"l": 10, "r": 10, "t": 50, "b": 40}, **AUTOMARGIN)
    return fig


def hockey_stick_chart(curve: Sequence[dict[str, Any]], des_points: Sequence[dict[str, Any]], title: str = "",
                       x_max_iops: float | None = None) -> go.Figure:
    """Mean latency against throughput: the fast path's curve and DES points with their 95% intervals.

    ``curve`` rows: ``iops``, ``latency_mean_us``, ``load`` (what was varied), ``stable``.
    ``des_points`` rows: ``iops``, ``iops_lo``, ``iops_hi``, ``latency_mean_us``, ``lat_lo``, ``lat_hi``, ``label``.
    """
    fig = go.Figure()
    stable = [r for r in curve if r.get("stable", True) and math.isfinite(r["latency_mean_us"])]
    if stable:
        fig.add_trace(go.Scatter(
            x=[r["iops"] for r in stable], y=[r["latency_mean_us"] for r in stable], mode="lines+markers",
            name="fast path (queueing model)", line={"color": FAST_PATH}, marker={"size": 5},
            text=[str(r.get("load", "")) for r in stable], hovertemplate="%{text}<br>%{x:,.0f} IOPS, %{y:,.1f} us<extra></extra>",
        ))
    if des_points:
        fig.add_trace(go.Scatter(
            x=[p["iops"] for p in des_points], y=[p["latency_mean_us"] for p in des_points], mode="markers",
            name="simulation (DES, 95% CI)", marker={"color": DES, "size": 10, "symbol": "diamond"},
            text=[str(p.get("label", "")) for p in des_points],
            error_x={"type": "data", "symmetric": False, "array": [p["iops_hi"] - p["iops"] for p in des_points],
                     "arrayminus": [p["iops"] - p["iops_lo"] for p in des_points]},
            error_y={"type": "data", "symmetric": False, "array": [p["lat_hi"] - p["latency_mean_us"] for p in des_points],
                     "arrayminus": [p["latency_mean_us"] - p["lat_lo"] for p in des_points]},
            hovertemplate="%{text}<br>%{x:,.0f} IOPS, %{y:,.1f} us<extra></extra>",
        ))
    if x_max_iops and math.isfinite(x_max_iops):
        fig.add_vline(x=x_max_iops, line_dash="dot", line_color="grey",
                      annotation_text=f"throughput bound {x_max_iops:,.0f}", annotation_position="top left")
    fig.update_layout(title=title or "Latency against load", xaxis_title="IOPS", yaxis_title="mean latency (us)",
                      height=420, legend={"orientation": "h", "y": -0.2}, margin={"l": 10, "r": 10, "t": 50, "b": 40}, **AUTOMARGIN)
    return fig


def comparison_chart(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """IOPS (with 95% CI) and $/KIOPS of each configuration, side by side."""
    from plotly.subplots import make_subplots

    names = [r["name"] for r in rows]
    fig = make_subplots(rows=1, cols=3, subplot_titles=("IOPS", "mean / p99 latency (us)", "$ per KIOPS"))
    fig.add_trace(go.Bar(x=names, y=[r["iops"] for r in rows], marker_color=OTHER, name="IOPS",
                         error_y={"type": "data", "symmetric": False, "array": [r["iops_hi"] - r["iops"] for r in rows],
                                  "arrayminus": [r["iops"] - r["iops_lo"] for r in rows]}), row=1, col=1)
    fig.add_trace(go.Bar(x=names, y=[r["latency_mean_us"] for r in rows], name="mean", marker_color="#00a2a2"), row=1, col=2)
    fig.add_trace(go.Bar(x=names, y=[r["latency_p99_us"] for r in rows], name="p99", marker_color="#e69f00"), row=1, col=2)
    fig.add_trace(go.Bar(x=names, y=[r.get("usd_per_kiops") for r in rows], name="$/KIOPS", marker_color="#7f7f7f"), row=1, col=3)
    fig.update_layout(height=400, barmode="group", showlegend=False, margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def sweep_line_chart(frame: Any, factor: str, metric: str, metric_label: str, group: str | None = None) -> go.Figure:
    """A metric against one factor (one line per value of ``group``), with the 95% CI as error bars."""
    fig = go.Figure()
    groups = [(None, frame)] if group is None else [(g, frame[frame[group] == g]) for g in sorted(frame[group].dropna().unique())]
    for g, part in groups:
        part = part.sort_values(factor)
        has_ci = f"{metric}_ci95_lo" in part.columns
        err = None
        if has_ci:
            err = {"type": "data", "symmetric": False, "array": (part[f"{metric}_ci95_hi"] - part[metric]).tolist(),
                   "arrayminus": (part[metric] - part[f"{metric}_ci95_lo"]).tolist()}
        fig.add_trace(go.Scatter(x=part[factor].tolist(), y=part[metric].tolist(), mode="lines+markers", error_y=err,
                                 name=metric_label if g is None else f"{group} = {g}"))
    fig.update_layout(xaxis_title=factor, yaxis_title=metric_label, height=440, margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      title=f"{metric_label} against {factor}")
    return fig


def sweep_heatmap(frame: Any, x: str, y: str, metric: str, metric_label: str) -> go.Figure:
    """A metric over two factors as a heatmap (cells: mean over replications)."""
    table = frame.pivot_table(index=y, columns=x, values=metric, aggfunc="mean")
    fig = go.Figure(go.Heatmap(z=table.values.tolist(), x=[str(c) for c in table.columns], y=[str(i) for i in table.index],
                               colorscale="Viridis", colorbar={"title": metric_label},
                               hovertemplate=f"{x}=%{{x}}<br>{y}=%{{y}}<br>{metric_label}=%{{z:,.1f}}<extra></extra>"))
    fig.update_layout(xaxis_title=x, yaxis_title=y, height=460, title=f"{metric_label} over {x} and {y}",
                      xaxis_type="category", yaxis_type="category", margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig
