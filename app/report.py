"""The HTML sizing report a pre-sales engineer hands to the customer.

One self-contained file (plotly.js inlined once, no network needed to open it): the
configuration and workload, every predicted metric with its 95% confidence interval,
the utilization chart with the bottleneck and the latency-against-load curve, the
purchase cost line by line with the source of each price, and the assumptions behind
the numbers: catalog prices are list-price assumptions, how far the model has been from
measurements of the same kind of system (the stored calibration run), and how precise
this run was and why it stopped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go
import yaml

from app.sizing import PriceFigures
from models.catalog import load_catalog
from models.faults import throttle_words
from models.numbers import format_number as _fmt
from models.result import RebuildFigures, Result
from models.scenario import Scenario

METRIC_ROWS = (
    ("iops", "IOPS", ""), ("read_iops", "read IOPS", ""), ("write_iops", "write IOPS", ""), ("mbps", "throughput", "MB/s"),
    ("latency_mean_us", "latency mean", "us"), ("latency_p50_us", "latency p50", "us"), ("latency_p95_us", "latency p95", "us"),
    ("latency_p99_us", "latency p99", "us"), ("latency_p999_us", "latency p99.9", "us"),
    ("read_latency_mean_us", "read latency mean", "us"), ("write_latency_mean_us", "write latency mean", "us"),
    ("cpu_us_per_io", "host CPU per I/O", "us"), ("mean_outstanding_ios", "I/Os in flight (mean)", ""),
)

STYLE = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #eee; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } .muted { color: #666; font-size: 0.9em; }
.headline { display: flex; gap: 2em; flex-wrap: wrap; margin: 1em 0; } .headline div { min-width: 9em; }
.headline b { display: block; font-size: 1.5em; } pre { background: #f6f6f6; padding: 1em; overflow-x: auto; font-size: 0.85em; }
"""




def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td{' class=num' if i in numeric else ''}>{_e(c)}</td>" for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        out: list[tuple[str, Any]] = []
        for k, v in data.items():
            out.extend(_flatten(v, f"{prefix}{k}."))
        return [(k.rstrip("."), v) for k, v in out]
    return [(prefix, data if not isinstance(data, list) else yaml.safe_dump(data, default_flow_style=True).strip())]


def _price_rows(price: PriceFigures) -> tuple[str, list[str]]:
    cat = load_catalog()
    rows, assumptions = [], []
    for line in price.capex.lines:
        entry = None
        for section in ("drives", "dimms", "adapters", "san_adapters", "storage_servers"):
            if line.model in cat.section(section):
                entry = cat.section(section)[line.model]
                break
        kind = as_of = ""
        if entry is not None and entry.price is not None:
            kind = entry.price.kind.replace("_", " ")
            as_of = entry.price.as_of
        rows.append((line.item, line.model, f"{line.quantity:g}", f"${line.unit_usd:,.0f}", f"${line.total_usd:,.0f}",
                     f"{kind}{', ' + as_of if as_of else ''}"))
        assumptions.append(f"{line.model}: {line.source}")
    table = _table(("item", "model", "qty", "unit price", "total", "price basis"), rows, numeric=(2, 3, 4))
    return table, assumptions


def _headline(m: Result, price: PriceFigures | None, final: bool) -> list[tuple[str, str]]:
    """The report's headline figures: throughput, latency and CPU; the price, and $ per KIOPS of a final result."""
    headline = [("IOPS", _fmt(m.iops.value)), ("MB/s", _fmt(m.mbps.value)), ("mean latency", f"{_fmt(m.latency_mean_us.value)} us"),
                ("p99 latency", f"{_fmt(m.latency_p99_us.value)} us"), ("host CPU per I/O", f"{_fmt(m.cpu_us_per_io.value)} us")]
    if price is not None:
        headline += [("purchase cost", f"${price.total_usd:,.0f}")]
        if final:
            headline += [("$ per KIOPS", f"${price.usd_per_kiops:,.2f}")]
    return headline


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if math.isfinite(seconds) else "never (no progress)"


def _rebuild_section(rb: RebuildFigures | None) -> str:
    """A rebuild in progress (the scenario's ``faults.rebuild``): its rate and time under this load and on an idle
    array ("" without a rebuild)."""
    if rb is None:
        return ""
    ci = rb.rate_mbps.ci95
    rows = [("under this load", _fmt(rb.rate_mbps.value), f"{_fmt(ci[0])} .. {_fmt(ci[1])}", _hours(rb.time_s)),
            ("idle array", _fmt(rb.idle_rate_mbps), "", _hours(rb.idle_time_s))]
    return ("<h2>Rebuild</h2>"
            f"<p>{rb.drive_bytes / 1e12:g} TB to rebuild on each of {rb.replacement_drives} replacement drive(s); "
            f"{_e(throttle_words(rb.throttle))}; cap {rb.cap_mbps:g} MB/s, floor {rb.floor_mbps:g} MB/s per drive. The time "
            "under this load is the one a failure sizing should use; the idle time is the best case.</p>"
            + _table(("state", "MB/s per drive", "95% CI", "time to rebuild"), rows, numeric=(1, 2, 3)))


def _limiting_html(m: Result, fast_bottleneck: str | None) -> str:
    """The bottleneck sentence (the simulation's), and the fast path's bottleneck where it names another."""
    from app.words import component_words, limiting_sentence

    limiting = limiting_sentence(m.bottleneck, m.utilization.get(m.bottleneck, float("nan"))).replace("**", "")
    html = (f"<p>{_e(limiting)} <span class=muted>(model component {_e(m.bottleneck)}: "
            f"{_e(component_words(m.bottleneck))})</span></p>")
    if fast_bottleneck:
        html += (f"<p>The fast path (queueing model) finds another component busiest: {_e(component_words(fast_bottleneck))} "
                 f"<span class=muted>(model component {_e(fast_bottleneck)})</span>.</p>")
    return html


def _export_jobs_html(jobs: Sequence[dict[str, Any]]) -> str:
    """The exported fio jobs, one measured-vs-predicted table each ("" without them)."""
    if not jobs:
        return ""
    html = ["<h2>fio jobs: measured against the exported predictions</h2>",
            "<p class=muted>error = (predicted - measured) / measured; the 95% CI is the prediction's.</p>"]
    for job in jobs:
        html.append(f"<h3>{_e(job['title'])}</h3>")
        html.append(_table(("figure", "measured", "predicted", "predicted 95% CI", "error", "inside CI"),
                           [(r["figure"], _fmt(r["measured"]), "-" if r["predicted"] is None else _fmt(r["predicted"]),
                             r["predicted 95% CI"], r["error"], r["inside CI"]) for r in job["rows"]],
                           numeric=(1, 2, 3, 4)))
    return "".join(html)


def sizing_report(scenario: Scenario, result: Result, *, price: PriceFigures | None = None,
                  figures: Sequence[go.Figure] = (), calibration: Sequence[dict[str, Any]] = (),
                  calibration_note: str = "", workload_text: str = "", generated: datetime | None = None,
                  baseline_rows: Sequence[dict[str, Any]] | None = None, baseline_source: str = "",
                  warnings: Sequence[str] = (), fast_bottleneck: str | None = None,
                  baseline_jobs: Sequence[dict[str, Any]] = ()) -> str:
    """The report as one HTML document (see the module docstring for what it holds).

    ``calibration`` rows are ``app.calibration_data.system_summary`` rows (``calibration.report.summary``)
    for the systems that measured this kind of attachment. ``baseline_rows`` (``app.baseline.comparison_rows``) set
    a measurement of this configuration beside the prediction; ``baseline_jobs`` (``app.baseline.export_tables``) each
    job of a ``flashplan export fio`` run beside the prediction it was exported with. A result that is not precise is
    marked as such.
    ``fast_bottleneck`` is the fast path's bottleneck where it is not the simulation's (both are then named).
    """
    from app.naming import display_name
    from app.validity import badge, is_final, note_of, validity_of

    when = (generated or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    title = display_name(scenario)
    parts: list[str] = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>",
                        f"<style>{STYLE}</style></head><body>",
                        f"<h1>{_e(title)}</h1><p class=muted>flashplan sizing report, {when}. "
                        "Predictions of a discrete-event simulation of the I/O path; every figure has a 95% confidence interval.</p>"]
    if scenario.description:
        parts.append(f"<p>{_e(scenario.description)}</p>")

    m = result
    validity = validity_of(result)
    if not is_final(validity):
        parts.append(f"<p><b>{_e(badge(validity))}</b>: {_e(note_of(result))}. These figures are not a final answer.</p>")
    headline = _headline(m, price, is_final(validity))
    parts.append("<div class=headline>" + "".join(f"<div><span class=muted>{_e(k)}</span><b>{_e(v)}</b></div>" for k, v in headline)
                 + "</div>")
    parts.append(_limiting_html(m, fast_bottleneck))
    if baseline_rows:
        parts.append("<h2>Baseline: measured against predicted</h2>")
        parts.append(f"<p class=muted>Measurement: {_e(baseline_source)}, taken on this configuration with this workload.</p>")
        parts.append(_table(("figure", "measured", "predicted", "predicted 95% CI", "gap", "unit"),
                            [(r["figure"], _fmt(r["measured"]), _fmt(r["predicted"]), r["predicted 95% CI"], r["gap"], r["unit"])
                             for r in baseline_rows], numeric=(1, 2, 3, 4)))
    parts.append(_export_jobs_html(baseline_jobs))

    parts.append("<h2>Configuration</h2>")
    for warning in warnings:
        parts.append(f"<p><b>Warning:</b> {_e(warning)}</p>")
    topo = scenario.topology.model_dump(mode="json", exclude_none=True)
    parts.append(_table(("setting", "value"), [(k, v) for k, v in _flatten(topo)]))
    parts.append("<h2>Workload</h2>")
    if workload_text:
        parts.append(f"<p>{_e(workload_text)}</p>")
    parts.append(_table(("setting", "value"), [(k, v) for k, v in _flatten(scenario.workload.model_dump(mode="json", exclude_none=True))]))

    parts.append("<h2>Predicted performance</h2>")
    parts.append(_table(("metric", "value", "95% CI", "unit"),
                        [(label, _fmt(getattr(m, key).value), f"{_fmt(getattr(m, key).ci95[0])} .. {_fmt(getattr(m, key).ci95[1])}", unit)
                         for key, label, unit in METRIC_ROWS], numeric=(1, 2)))
    for i, fig in enumerate(figures):
        parts.append(fig.to_html(full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False}))
    parts.append(_rebuild_section(m.rebuild))

    assumptions: list[str] = []
    if price is not None:
        parts.append("<h2>Purchase cost</h2>")
        table, price_sources = _price_rows(price)
        parts.append(table)
        ci = price.usd_per_kiops_ci95
        per = (f"${price.usd_per_kiops:,.2f} per KIOPS (95% CI ${ci[0]:,.2f} .. ${ci[1]:,.2f}; SPC-1 convention: price / "
               "thousands of IOPS)" if is_final(validity) else f"no $ per KIOPS: the result is {badge(validity)}")
        parts.append(f"<p>Total <b>${price.total_usd:,.0f}</b>; raw {price.capex.raw_tb:,.2f} TB, usable {price.capex.usable_tb:,.2f} TB; "
                     f"{per}. Hosts are not priced.</p>")
        for note in price.capex.notes:
            parts.append(f"<p class=muted>{_e(note)}</p>")
        assumptions.append("Prices are list-price assumptions from the flashplan catalog unless marked quoted; "
                           "replace them with the customer's quote for a binding offer. Sources:")
        assumptions.extend(f"&nbsp;&nbsp;{_e(s)}" for s in price_sources)
    else:
        assumptions.append("This configuration is not priced (a textbook topology, or a catalog entry without a price).")

    parts.append("<h2>Assumptions and accuracy</h2><ul>")
    for a in assumptions:
        parts.append(f"<li>{a}</li>" if a.startswith("&nbsp;") else f"<li>{_e(a)}</li>")
    run = scenario.run
    parts.append(f"<li>Simulation: seed {result.seed}, target ±{run.target_rel_ci:.0%} (95% CI relative half-width), "
                 f"{_e(result.stop_reason)}; {result.simulated_ios:,} I/Os simulated, {result.measured_ios:,} measured "
                 f"in {result.batches} batches (warm-up discarded).</li>")
    parts.append("</ul>")
    parts.append("<h3>How close the model has been to measurements</h3>")
    if calibration:
        rows = [(r["system"], r["what"], r["records"], r["within"],
                 "-" if r["median_abs_rel_error"] is None else f"{r['median_abs_rel_error']:.1%}",
                 "-" if r["max_abs_rel_error"] is None else f"{r['max_abs_rel_error']:.1%}") for r in calibration]
        parts.append(_table(("system", "measured configuration", "records", "within tolerance", "median |error|", "worst |error|"),
                            rows, numeric=(2, 3, 4, 5)))
    else:
        parts.append("<p>No stored calibration run covers this kind of attachment.</p>")
    if calibration_note:
        parts.append(f"<p class=muted>{_e(calibration_note)}</p>")

    parts.append("<h2>Scenario file</h2><p class=muted>Re-run it with <code>flashplan simulate FILE</code> or import it in the web app.</p>")
    parts.append(f"<pre>{_e(yaml.safe_dump(scenario.model_dump(mode='json', exclude_none=True), sort_keys=False))}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)
