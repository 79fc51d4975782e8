"""Calibration summaries and the parity plot (predicted vs measured, log axes, per system)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from calibration.evaluate import stale_known_gap
from calibration.records import GATE_SYSTEMS, SYSTEM_NAMES
from models.common import dumps_json, write_text_atomically

SYSTEM_COLOURS = {"S1": "#1f77b4", "S2": "#ff7f0e", "S3": "#2ca02c", "S4": "#d62728", "S5": "#9467bd", "EXT": "#8c564b", "user": "#7f7f7f"}


def numeric(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with a measured value and a prediction to compare (value and ratio records, not bounds)."""
    return [r for r in rows if r["kind"] != "bound" and r["rel_error"] is not None]


def summary(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per system (and overall): record counts, records within tolerance, settled by a documented
    conflict between sources, declared known gaps and outside, median and max |relative error|, and
    the known-gap declarations now within tolerance (stale: to be removed)."""
    out = []
    known = (*GATE_SYSTEMS, "user")
    systems = [*known, *sorted({r["system"] for r in rows} - set(known))]
    groups = [(s, [r for r in rows if r["system"] == s]) for s in systems]
    groups = [g for g in groups if g[1]] + [("all", list(rows))]
    for system, rs in groups:
        errs = [abs(r["rel_error"]) for r in numeric(rs)]
        out.append({
            "system": system,
            "records": len(rs),
            "within": sum(1 for r in rs if r["within"]),
            "settled_by_conflict": sum(1 for r in rs if r.get("status") == "conflict"),
            "known_gap": sum(1 for r in rs if r.get("status") == "known_gap"),
            "stale_known_gaps": sum(1 for r in rs if stale_known_gap(r)),
            "outside": sum(1 for r in rs if r.get("status", "within" if r["within"] else "outside") == "outside"),
            "numeric": len(errs),
            "median_abs_rel_error": statistics.median(errs) if errs else None,
            "max_abs_rel_error": max(errs) if errs else None,
            "bounds": sum(1 for r in rs if r["kind"] == "bound"),
            "bounds_held": sum(1 for r in rs if r["kind"] == "bound" and r["within"]),
        })
    return out


def parity_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """Predicted against measured on log axes, one colour per system, the 15% band shaded."""
    fig = go.Figure()
    pts = [r for r in numeric(rows) if r["measured"] > 0 and r["predicted"] and r["predicted"] > 0]
    if pts:
        lo = min(min(r["measured"], r["predicted"]) for r in pts) / 1.5
        hi = max(max(r["measured"], r["predicted"]) for r in pts) * 1.5
        fig.add_trace(go.Scatter(x=[lo, hi, hi, lo], y=[lo * 0.85, hi * 0.85, hi * 1.15, lo * 1.15], fill="toself",
                                 fillcolor="rgba(150,150,150,0.15)", line={"width": 0}, name="±15%", hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"color": "grey", "dash": "dash"}, name="parity"))
    for system in (*GATE_SYSTEMS, "user"):
        rs = [r for r in pts if r["system"] == system]
        if not rs:
            continue
        err_lo = [max(0.0, r["predicted"] - r["ci95"][0]) if r["ci95"] else 0.0 for r in rs]
        err_hi = [max(0.0, r["ci95"][1] - r["predicted"]) if r["ci95"] else 0.0 for r in rs]
        fig.add_trace(go.Scatter(
            x=[r["measured"] for r in rs], y=[r["predicted"] for r in rs], mode="markers",
            marker={"color": SYSTEM_COLOURS[system], "size": 8, "symbol": [_symbol(r) for r in rs]},
            error_y={"type": "data", "symmetric": False, "array": err_hi, "arrayminus": err_lo, "thickness": 1},
            name=f"{system}: {SYSTEM_NAMES[system]}",
            text=[f"{r['id']}<br>{r['metric']} [{r['unit']}]<br>error {r['rel_error']:+.1%}"
                  + (f"<br>sources conflict: {r['settled_by']} holds" if r.get("settled_by") else "")
                  + _gap_text(r) for r in rs],
            hovertemplate="%{text}<br>measured %{x:.4g}<br>predicted %{y:.4g}<extra></extra>"))
    fig.update_xaxes(type="log", title="measured (seed value, record unit)")
    fig.update_yaxes(type="log", title="predicted (flashplan, 95% CI)")
    fig.update_layout(title="flashplan calibration: predicted vs measured (x = outside tolerance, "
                            "diamond = outside, but a contradicting source's record holds, "
                            "square = declared known gap)",
                      legend={"orientation": "h", "y": -0.2}, height=700)
    return fig


def _symbol(row: dict[str, Any]) -> str:
    """Marker of a record: circle within tolerance, open diamond settled by a conflict of sources,
    open square a declared known gap, x outside."""
    if row["within"]:
        return "circle"
    if row.get("settled_by"):
        return "diamond-open"
    return "square-open" if row.get("status") == "known_gap" else "x"


def _gap_text(row: dict[str, Any]) -> str:
    """Hover text of a known-gap record: what data would settle it, or that the declaration is stale."""
    gap = row.get("known_gap")
    if not gap:
        return ""
    if stale_known_gap(row):
        return "<br>known gap now within tolerance: remove the declaration"
    return f"<br>known gap (declared {gap.get('declared', '?')}): needs {gap.get('missing_data', '?')[:120]}"


def write_parity(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    # plotly.min.js beside it: opens offline; the page is replaced in one step (an interrupt leaves the old one)
    script = path.parent / "plotly.min.js"
    if not script.exists():
        from plotly.offline import get_plotlyjs

        write_text_atomically(script, get_plotlyjs())
    write_text_atomically(path, parity_figure(rows).to_html(include_plotlyjs="directory"))
    return path


def write_results(rows: Sequence[dict[str, Any]], path: Path, meta: dict[str, Any]) -> Path:
    """The rows and summary as JSON (the web app's Calibration page reads the latest one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {**meta, "summary": summary(rows), "records": list(rows)}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(dumps_json(doc, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)
    return path


def write_run_info(path: Path, info: dict[str, Any]) -> Path:
    """When the calibration ran and how long it took (kept out of latest.json, which the commit alone determines)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(dumps_json(info, indent=1), encoding="utf-8")
    tmp.replace(path)
    return path
