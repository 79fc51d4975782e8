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

from app.axes import log_latency_axis, objective_line, objective_words
from app.validity import MARKER_SYMBOLS, badge

BOTTLENECK = "crimson"
AUTOMARGIN = {"xaxis_automargin": True, "yaxis_automargin": True}
"""Room for long component names and axis titles, in the app and in the standalone HTML report."""
OTHER = "steelblue"
FAST_PATH = "#636efa"
DES = "#ef553b"
P99 = "#e69f00"


def utilization_chart(utilization: dict[str, float], bottleneck: str, top: int = 15, title: str = "") -> go.Figure:
    """Horizontal bars of the busiest components in the user's words, the bottleneck in red when it is near
    saturation (``app.words.BOTTLENECK_UTILIZATION``), a dashed line at 100%."""
    from app.words import component_words, is_bottleneck

    rows = sorted(utilization.items(), key=lambda kv: -kv[1])[:top]
    saturated = is_bottleneck(utilization.get(bottleneck, math.nan))
    fig = go.Figure(go.Bar(
        x=[v for _, v in rows], y=[component_words(k) for k, _ in rows], orientation="h",
        marker_color=[BOTTLENECK if k == bottleneck and saturated else OTHER for k, _ in rows],
        text=[f"{v:.0%}" for _, v in rows], textposition="auto", customdata=[k for k, _ in rows],
        hovertemplate="%{y}: %{x:.1%}<br>(model component %{customdata})<extra></extra>",
    ))
    fig.add_vline(x=1.0, line_dash="dash", line_color="grey")
    default_title = (f"Utilization (bottleneck: {component_words(bottleneck)})" if saturated
                     else "Utilization (no component near saturation: the load limits throughput)")
    fig.update_layout(title=title or default_title, xaxis_tickformat=".0%",
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
    tail = [r for r in stable if math.isfinite(r.get("latency_p99_estimate_us", math.nan))]
    if tail:
        fig.add_trace(go.Scatter(
            x=[r["iops"] for r in tail], y=[r["latency_p99_estimate_us"] for r in tail], mode="lines",
            name="fast path p99 (screening estimate)", line={"color": P99, "dash": "dash"},
            text=[str(r.get("load", "")) for r in tail], hovertemplate="%{text}<br>%{x:,.0f} IOPS, p99 ~%{y:,.1f} us<extra></extra>",
        ))
    for validity in ("precise", "cut_short", "unstable", "unknown"):
        pts = [p for p in des_points if p.get("validity", "precise") == validity]
        if not pts:
            continue
        hollow = validity != "precise"
        suffix = "" if not hollow else f", {badge(validity)}: not final"
        fig.add_trace(go.Scatter(
            x=[p["iops"] for p in pts], y=[p["latency_mean_us"] for p in pts], mode="markers",
            name=f"simulation mean (DES, 95% CI){suffix}",
            marker={"color": DES, "size": 10, "symbol": "diamond-open" if hollow else "diamond", "line": {"width": 2, "color": DES}},
            text=[str(p.get("label", "")) for p in pts],
            error_x={"type": "data", "symmetric": False, "array": [p["iops_hi"] - p["iops"] for p in pts],
                     "arrayminus": [p["iops"] - p["iops_lo"] for p in pts]},
            error_y={"type": "data", "symmetric": False, "array": [p["lat_hi"] - p["latency_mean_us"] for p in pts],
                     "arrayminus": [p["latency_mean_us"] - p["lat_lo"] for p in pts]},
            hovertemplate="%{text}<br>%{x:,.0f} IOPS, mean %{y:,.1f} us<extra></extra>",
        ))
        p99 = [p for p in pts if p.get("latency_p99_us") is not None]
        if p99:
            fig.add_trace(go.Scatter(
                x=[p["iops"] for p in p99], y=[p["latency_p99_us"] for p in p99], mode="markers",
                name=f"simulation p99 (DES){suffix}",
                marker={"color": P99, "size": 10, "symbol": "triangle-up-open" if hollow else "triangle-up",
                        "line": {"width": 2, "color": P99}},
                text=[str(p.get("label", "")) for p in p99],
                error_y={"type": "data", "symmetric": False, "array": [p["p99_hi"] - p["latency_p99_us"] for p in p99],
                         "arrayminus": [p["latency_p99_us"] - p["p99_lo"] for p in p99]},
                hovertemplate="%{text}<br>%{x:,.0f} IOPS, p99 %{y:,.1f} us<extra></extra>",
            ))
    if x_max_iops and math.isfinite(x_max_iops):
        fig.add_vline(x=x_max_iops, line_dash="dot", line_color="grey",
                      annotation_text=f"throughput bound {x_max_iops:,.0f}", annotation_position="top left")
    fig.update_layout(title=title or "Latency against load (mean and p99)", xaxis_title="IOPS", yaxis_title="latency (us)",
                      height=420, legend={"orientation": "h", "y": -0.2}, margin={"l": 10, "r": 10, "t": 50, "b": 40}, **AUTOMARGIN)
    return fig


def comparison_chart(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """IOPS (with 95% CI), mean and p99 latency and $/KIOPS of each configuration, side by side, in the table's order.

    A row that is not a final answer (``validity`` not precise) is drawn hatched and named with its badge;
    its $/KIOPS is left out.
    """
    from plotly.subplots import make_subplots

    names = [f"#{r['#']} {r['name']}" if "#" in r else r["name"] for r in rows]
    final = [r.get("validity", "precise") == "precise" for r in rows]
    names = [n if ok else f"{n} ({badge(r.get('validity', 'unknown'))})" for n, ok, r in zip(names, final, rows, strict=True)]
    pattern = {"shape": ["" if ok else "/" for ok in final]}
    fig = make_subplots(rows=1, cols=3, subplot_titles=("IOPS (95% CI)", "latency (us): mean and p99", "$ per KIOPS"))
    fig.add_trace(go.Bar(x=names, y=[r["iops"] for r in rows], marker={"color": OTHER, "pattern": pattern}, name="IOPS",
                         error_y={"type": "data", "symmetric": False, "array": [r["iops_hi"] - r["iops"] for r in rows],
                                  "arrayminus": [r["iops"] - r["iops_lo"] for r in rows]}), row=1, col=1)
    fig.add_trace(go.Bar(x=names, y=[r["latency_mean_us"] for r in rows], name="mean latency",
                         marker={"color": "#00a2a2", "pattern": pattern}), row=1, col=2)
    fig.add_trace(go.Bar(x=names, y=[r["latency_p99_us"] for r in rows], name="p99 latency",
                         marker={"color": P99, "pattern": pattern}), row=1, col=2)
    fig.add_trace(go.Bar(x=names, y=[r.get("usd_per_kiops") if ok else None for r, ok in zip(rows, final, strict=True)],
                         name="$ per KIOPS", marker_color="#7f7f7f"), row=1, col=3)
    fig.update_xaxes(categoryorder="array", categoryarray=names)
    fig.update_layout(height=440, barmode="group", showlegend=True, legend={"orientation": "h", "y": -0.25},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, **AUTOMARGIN)
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
        validity = part["validity"].fillna("unknown").tolist() if "validity" in part.columns else ["precise"] * len(part)
        symbols = [MARKER_SYMBOLS.get(v, MARKER_SYMBOLS["unknown"]) for v in validity]
        fig.add_trace(go.Scatter(x=part[factor].tolist(), y=part[metric].tolist(), mode="lines+markers", error_y=err,
                                 marker={"symbol": symbols, "size": [8 if v == "precise" else 12 for v in validity],
                                         "line": {"width": 2}},
                                 text=[badge(v) for v in validity],
                                 hovertemplate=f"{factor} %{{x}}<br>{metric_label} %{{y:,.1f}}<br>%{{text}}<extra></extra>",
                                 name=metric_label if g is None else f"{group} = {g}"))
    title = f"{metric_label} against {factor}"
    if "validity" in frame.columns and (frame["validity"].fillna("unknown") != "precise").any():
        title += " (hollow markers: cut short or unstable, not final)"
    fig.update_layout(xaxis_title=factor, yaxis_title=metric_label, height=440, margin={"l": 10, "r": 10, "t": 40, "b": 40},
                      title=title)
    return fig


def sweep_heatmap(frame: Any, x: str, y: str, metric: str, metric_label: str) -> go.Figure:
    """A metric over two factors as a heatmap (cells: mean over replications); a cell holding a result that is not
    precise is marked with its badge's sign (⚠ cut short, ⛔ unstable, ? unknown)."""
    table = frame.pivot_table(index=y, columns=x, values=metric, aggfunc="mean")
    marks = [["" for _ in table.columns] for _ in table.index]
    if "validity" in frame.columns:
        for _, row in frame.iterrows():
            v = row["validity"] if isinstance(row["validity"], str) else "unknown"
            if v != "precise" and row[y] in table.index and row[x] in table.columns:
                marks[list(table.index).index(row[y])][list(table.columns).index(row[x])] = badge(v).split()[0]
    fig = go.Figure(go.Heatmap(z=table.values.tolist(), x=[str(c) for c in table.columns], y=[str(i) for i in table.index],
                               text=marks, texttemplate="%{text}", colorscale="Viridis", colorbar={"title": metric_label},
                               hovertemplate=f"{x}=%{{x}}<br>{y}=%{{y}}<br>{metric_label}=%{{z:,.1f}} %{{text}}<extra></extra>"))
    title = f"{metric_label} over {x} and {y}"
    if any(m for row in marks for m in row):
        title += " (marked cells: cut short or unstable, not final)"
    fig.update_layout(xaxis_title=x, yaxis_title=y, height=460, title=title,
                      xaxis_type="category", yaxis_type="category", margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig


def number_columns(*names: str) -> dict[str, Any]:
    """``st.dataframe`` column settings that show figures whole, with thousands separators (803,103.3), never clipped
    to their trailing digits as a bare float in a narrow column is."""
    import streamlit as st

    return {n: st.column_config.NumberColumn(n, format="localized", width="medium") for n in names}


QD_LATENCY_SERIES = (("latency_mean_us", "mean", "#00a2a2"), ("latency_p50_us", "p50", "#7f7f7f"),
                     ("latency_p99_us", "p99", P99), ("latency_p999_us", "p99.9", BOTTLENECK))
QD_IOPS_COLOUR = OTHER


def _finite_number(v: Any) -> bool:
    return isinstance(v, int | float) and math.isfinite(v)


def _qd_error_bars(points: Sequence[dict[str, Any]], metric: str) -> dict[str, Any] | None:
    """Asymmetric error bars from each point's ``ci95[metric]`` (None when no point has one)."""
    cis = [p.get("ci95", {}).get(metric) for p in points]
    if not any(cis):
        return None
    return {"type": "data", "symmetric": False,
            "array": [ci[1] - p[metric] if ci and p[metric] is not None else 0 for p, ci in zip(points, cis, strict=True)],
            "arrayminus": [p[metric] - ci[0] if ci and p[metric] is not None else 0 for p, ci in zip(points, cis, strict=True)]}


def _qd_trace(points: Sequence[dict[str, Any]], metric: str, name: str, colour: str, dash: str = "solid") -> go.Scatter:
    """One metric against QD: hollow markers (and no latency) where a point is not precise (app.validity)."""
    validity = [p.get("validity", "unknown") for p in points]
    # an unstable point's latency only says how long the run lasted: left out, its IOPS kept with an x marker
    ys = [None if (v == "unstable" and metric != "iops") or not _finite_number(p.get(metric)) else p.get(metric)
          for p, v in zip(points, validity, strict=True)]
    return go.Scatter(
        x=[p["qd"] for p in points], y=ys, mode="lines+markers", name=name, line={"color": colour, "dash": dash},
        marker={"color": colour, "symbol": [MARKER_SYMBOLS.get(v, MARKER_SYMBOLS["unknown"]) for v in validity],
                "size": [7 if v == "precise" else 12 for v in validity], "line": {"width": 2, "color": colour}},
        error_y=_qd_error_bars(points, metric), text=[badge(v) for v in validity],
        hovertemplate=f"QD %{{x}}<br>{name}: %{{y:,.1f}}<br>%{{text}}<extra></extra>")


def qd_sweep_chart(points: Sequence[dict[str, Any]], published: Sequence[dict[str, Any]] = (), title: str = "") -> go.Figure:
    """IOPS and latency (mean, p50, p99, p99.9) against queue depth (log2 axis), published points as stars.

    ``points``: ``sim.plan.qd_sweep.QdPoint.as_dict()`` rows (``qd``, the metrics, ``validity``, ``tail``, ``ci95``);
    ``published``: ``calibration.ext.published.PublishedPoint.as_dict()`` rows (``qd``, ``metric``, ``value``,
    ``sweep``, ``record``). A fast-path tail estimate is dashed; a point that is not precise has a hollow marker.
    """
    from plotly.subplots import make_subplots

    points = sorted(points, key=lambda p: p["qd"])
    fig = make_subplots(rows=1, cols=2, subplot_titles=("IOPS", "latency (us)"), horizontal_spacing=0.1)
    fig.add_trace(_qd_trace(points, "iops", "IOPS", QD_IOPS_COLOUR), row=1, col=1)
    estimate = any(p.get("tail") == "estimate" for p in points)
    for metric, label, colour in QD_LATENCY_SERIES:
        if not any(p.get(metric) is not None for p in points):
            continue
        tail = metric != "latency_mean_us"
        name = f"{label} (fast-path estimate)" if tail and estimate else label
        fig.add_trace(_qd_trace(points, metric, name, colour, "dash" if tail and estimate else "solid"), row=1, col=2)
    colours = {"iops": QD_IOPS_COLOUR, **{m: c for m, _, c in QD_LATENCY_SERIES}}
    labels = {"iops": "IOPS", **{m: lbl for m, lbl, _ in QD_LATENCY_SERIES}}
    for metric in colours:
        pub = [p for p in published if p["metric"] == metric]
        if pub:
            fig.add_trace(go.Scatter(
                x=[p["qd"] for p in pub], y=[p["value"] for p in pub], mode="markers", name=f"published {labels[metric]}",
                marker={"symbol": "star", "size": 15, "color": colours[metric], "line": {"width": 1.5, "color": "black"}},
                text=[f"{p['sweep']}<br>record {p['record']}" for p in pub],
                hovertemplate=f"QD %{{x}}<br>published {labels[metric]}: %{{y:,.1f}}<br>%{{text}}<extra></extra>"),
                row=1, col=1 if metric == "iops" else 2)
    depths = [p["qd"] for p in points] or [1]
    fig.update_xaxes(type="log", tickvals=depths, ticktext=[str(d) for d in depths], title_text="queue depth (log2)")
    fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(title_text="latency (us)", rangemode="tozero", row=1, col=2)
    text = title or "Queue-depth sweep"
    if any(p.get("validity", "unknown") != "precise" for p in points):
        text += " (hollow markers: cut short, unstable or unknown, not final)"
    fig.update_layout(title=text, height=440, legend={"orientation": "h", "y": -0.25},
                      margin={"l": 10, "r": 10, "t": 60, "b": 40}, **AUTOMARGIN)
    return fig


def latency_over_time_chart(intervals: Sequence[dict[str, Any]], slo_us: float | None = None, peak_index: int | None = None,
                            title: str = "") -> go.Figure:
    """A replayed profile over time: each interval's p99 (with its 95% interval where it has one) and mean
    latency above, the load each interval offered below (reads and writes stacked), the SLO as a dashed
    line and the peak interval marked. ``intervals``: ``Result.summary()["intervals"]`` rows."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.06)
    mid = [iv["start_s"] + iv["duration_s"] / 2 for iv in intervals]
    width = [iv["duration_s"] for iv in intervals]

    def values(key: str) -> list[float | None]:
        return [iv[key]["value"] for iv in intervals]

    p99 = values("latency_p99_us")
    err_hi = [iv["latency_p99_us"]["ci95"][1] - v if iv["latency_p99_us"]["ci95"] and v is not None else None
              for iv, v in zip(intervals, p99, strict=True)]
    err_lo = [v - iv["latency_p99_us"]["ci95"][0] if iv["latency_p99_us"]["ci95"] and v is not None else None
              for iv, v in zip(intervals, p99, strict=True)]
    labels = [f"interval {iv['index']}" + (f" ({iv['label']})" if iv.get("label") else "") for iv in intervals]
    fig.add_trace(go.Scatter(x=mid, y=p99, mode="lines+markers", name="p99", line_color=P99, line_shape="hvh",
                             error_y={"type": "data", "array": err_hi, "arrayminus": err_lo, "visible": True},
                             text=labels, hovertemplate="%{text}<br>p99 %{y:,.0f} us<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=mid, y=values("latency_mean_us"), mode="lines", name="mean", line_color=DES, line_dash="dot",
                             line_shape="hvh", text=labels, hovertemplate="%{text}<br>mean %{y:,.0f} us<extra></extra>"), row=1, col=1)
    if slo_us:
        objective_line(fig, slo_us, objective_words("p99", slo_us), log=True, colour=BOTTLENECK, row=1, col=1)
    if peak_index is not None and 0 <= peak_index < len(intervals) and p99[peak_index] is not None:
        fig.add_trace(go.Scatter(x=[mid[peak_index]], y=[p99[peak_index]], mode="markers+text", name="peak interval",
                                 marker={"symbol": "star", "size": 16, "color": BOTTLENECK}, text=["peak"],
                                 textposition="top center", hoverinfo="skip"), row=1, col=1)
    offered = [iv["offered_iops"] if iv["offered_iops"] is not None else iv["arrived_ios"] / iv["duration_s"] for iv in intervals]
    reads = [iv["read_iops"]["value"] or 0.0 for iv in intervals]
    served = [iv["iops"]["value"] or 0.0 for iv in intervals]
    read_share = [r / s if s else 0.0 for r, s in zip(reads, served, strict=True)]
    fig.add_trace(go.Bar(x=mid, y=[o * f for o, f in zip(offered, read_share, strict=True)], width=width, name="offered reads",
                         marker_color=OTHER, hovertemplate="reads %{y:,.0f} IOPS<extra></extra>"), row=2, col=1)
    fig.add_trace(go.Bar(x=mid, y=[o * (1 - f) for o, f in zip(offered, read_share, strict=True)], width=width,
                         name="offered writes", marker_color=FAST_PATH, hovertemplate="writes %{y:,.0f} IOPS<extra></extra>"),
                  row=2, col=1)
    fig.update_layout(barmode="stack", title=title or "Latency over time (DES replay of the profile)", height=560,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40}, legend={"orientation": "h", "y": -0.12}, **AUTOMARGIN)
    shown = [*p99, *values("latency_mean_us"), *(iv["latency_p99_us"]["ci95"][1] for iv in intervals if iv["latency_p99_us"]["ci95"]),
             slo_us]
    fig.update_yaxes(title_text="latency", **log_latency_axis(shown), row=1, col=1)
    fig.update_yaxes(title_text="offered IOPS", row=2, col=1)
    fig.update_xaxes(title_text="time (s)", row=2, col=1)
    return fig


def growth_chart(curve: Sequence[Sequence[float | None]], slo_us: float, breaking_factor: float | None,
                 des_points: Sequence[dict[str, Any]] = (), title: str = "") -> go.Figure:
    """p99 against the load multiplier: the fast path's estimates, the DES checks with their 95% intervals,
    the SLO line and where it breaks. ``curve``: (factor, p99 estimate or None) pairs; ``des_points``:
    ``Growth.as_dict()["des"]`` rows."""
    fig = go.Figure()
    pts = sorted((g, p) for g, p in curve if g is not None and p is not None and math.isfinite(p) and p < slo_us * 20)
    fig.add_trace(go.Scatter(x=[g for g, _ in pts], y=[p for _, p in pts], mode="lines+markers", name="fast path (p99 estimate)",
                             line_color=FAST_PATH, hovertemplate="x%{x:.3f}: p99 ~%{y:,.0f} us<extra></extra>"))
    des = [d for d in des_points if d["p99_us"]["value"] is not None]
    if des:
        fig.add_trace(go.Scatter(
            x=[d["factor"] for d in des], y=[d["p99_us"]["value"] for d in des], mode="markers", name="DES p99 (95% CI)",
            marker={"color": DES, "size": 10},
            error_y={"type": "data", "visible": True,
                     "array": [(d["p99_us"]["ci95"] or [0, d["p99_us"]["value"]])[1] - d["p99_us"]["value"] for d in des],
                     "arrayminus": [d["p99_us"]["value"] - (d["p99_us"]["ci95"] or [d["p99_us"]["value"], 0])[0] for d in des]},
            text=[d["verdict"] for d in des], hovertemplate="x%{x:.3f}: DES p99 %{y:,.0f} us (%{text})<extra></extra>"))
    objective_line(fig, slo_us, objective_words("p99", slo_us), log=True, colour=BOTTLENECK)
    if breaking_factor is not None:
        fig.add_vline(x=breaking_factor, line_dash="dot", line_color="grey",
                      annotation_text=f"breaks at x{breaking_factor:.3g}", annotation_position="bottom right")
    fig.update_layout(title=title or "p99 latency as the load grows", xaxis_title="load multiplier (x today's)",
                      yaxis_title="p99 latency", height=420, margin={"l": 10, "r": 10, "t": 50, "b": 40}, **AUTOMARGIN)
    fig.update_yaxes(**log_latency_axis([p for _, p in pts] + [slo_us] + [v for d in des for v in
                                                                    (d["p99_us"]["value"], *(d["p99_us"]["ci95"] or ()))]))
    return fig
