"""Consolidation page: several workloads on one configuration.

A scenario with a ``workloads`` list (an example, or an uploaded file): the fast path's per-workload
throughput and latency at once, then the DES's per-workload latency with 95% intervals on request,
with the shared bottleneck. The stacked bars show each workload's share of the load.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
import streamlit as st

from app import runner
from app.forms import EXAMPLES
from app.library import parse_scenario_file
from app.views.common import fmt, holds_profile, show_problems
from models.fast_result import FastResult
from models.result import Metric, Result
from models.scenario import Scenario, ScenarioFileError, load_scenario, read_scenario_data
from sim.analytic import evaluate

UPLOAD = "Upload a file"
MAX_UPLOAD_MB = 1


def value_ci(m: Metric) -> str:
    """A metric as value ± 95% half-width ("?" when the interval is unknown)."""
    if not m.has_ci:
        return f"{fmt(m.value)} ± ?"
    return f"{fmt(m.value)} ± {fmt(m.half_width)}"


@st.cache_data(show_spinner=False)
def consolidated_examples() -> dict[str, str]:
    """Example files (examples/*.yaml) with a ``workloads`` list -> their scenario names."""
    out = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        try:
            data = read_scenario_data(path)
        except ScenarioFileError:
            continue
        if data.get("workloads") and not holds_profile(data):  # a profile among them: the Load over time page
            out[path.name] = str(data.get("name") or path.stem)
    return out


def describe_workloads(scenario: Scenario) -> list[dict[str, Any]]:
    """One row per workload: what it issues and where."""
    rows = []
    for name, wl in scenario.named_workloads():
        load = {"closed": lambda w: f"{w.jobs} jobs x QD {w.queue_depth}", "open": lambda w: f"{fmt(w.rate_iops)} IOPS",
                "bursty": lambda w: f"{fmt(w.on_rate_iops)} IOPS for {fmt(w.mean_on_ms)} ms, every {fmt(w.mean_on_ms + w.mean_off_ms)} ms"}
        rows.append({"workload": name, "kind": wl.kind, "load": load.get(wl.kind, lambda w: "")(wl),
                     "reads": f"{wl.read_fraction:.0%}", "size KiB": fmt(wl.mean_bytes() / 1024), "access": wl.access,
                     "members": "all" if wl.placement is None else ", ".join(str(m) for m in wl.placement)})
    return rows


def stacked(per: dict[str, tuple[float, float]], title: str) -> go.Figure:
    """Per-workload IOPS and MB/s as stacked bars (``per``: name -> (IOPS, MB/s))."""
    fig = go.Figure()
    for name, (iops, mbps) in per.items():
        fig.add_trace(go.Bar(name=name, x=["IOPS (thousands)", "MB/s (hundreds)"], y=[iops / 1e3, mbps / 1e2],
                             hovertemplate=f"{name}: {fmt(iops)} IOPS, {fmt(mbps)} MB/s<extra></extra>"))
    fig.update_layout(barmode="stack", title=title, height=360, legend_title_text="workload")
    return fig


def fast_table(fast: FastResult) -> list[dict[str, Any]]:
    return [{"workload": name, "IOPS": fmt(w.iops), "MB/s": fmt(w.mbps), "mean latency us": fmt(w.latency_mean_us),
             "read us": fmt(w.read_latency_mean_us), "write us": fmt(w.write_latency_mean_us)}
            for name, w in (fast.workloads or {}).items()]


def des_table(result: Result) -> list[dict[str, Any]]:
    return [{"workload": name, "IOPS": value_ci(w.iops), "MB/s": value_ci(w.mbps), "mean us": value_ci(w.latency_mean_us),
             "p50 us": value_ci(w.latency_p50_us), "p95 us": value_ci(w.latency_p95_us), "p99 us": value_ci(w.latency_p99_us),
             "read us": value_ci(w.read_latency_mean_us), "write us": value_ci(w.write_latency_mean_us)}
            for name, w in (result.workloads or {}).items()]


def pick_scenario() -> Scenario | None:
    examples = consolidated_examples()
    choice = st.selectbox("Scenario", [*examples, UPLOAD], format_func=lambda k: examples.get(k, k), key="consolidation:source")
    if choice != UPLOAD:
        return load_scenario(EXAMPLES / choice)
    upload = st.file_uploader("Scenario file with a workloads list (YAML, TOML or JSON)", type=["yaml", "yml", "toml", "json"],
                              key="consolidation:upload", max_upload_size=MAX_UPLOAD_MB)
    if upload is None:
        return None
    try:
        scenario = parse_scenario_file(upload.name, upload.getvalue())
    except ScenarioFileError as exc:
        show_problems(exc.problems)
        return None
    if not scenario.consolidated:
        st.info("This scenario has one workload: the Size page shows it. Here a scenario lists its workloads under `workloads`.")
        return None
    return scenario


def render() -> None:
    st.title("Consolidation")
    st.caption("Several workloads sharing one configuration: each one's throughput and latency, and the shared bottleneck.")
    scenario = pick_scenario()
    if scenario is None:
        return
    st.dataframe(describe_workloads(scenario), hide_index=True)
    fast = evaluate(scenario)
    left, right = st.columns(2)
    left.plotly_chart(stacked({n: (w.iops, w.mbps) for n, w in (fast.workloads or {}).items()}, "Load per workload (fast path)"))
    right.subheader("Fast path")
    right.dataframe(fast_table(fast), hide_index=True)
    right.caption(f"Bottleneck: {fast.bottleneck} ({fast.utilization.get(fast.bottleneck, 0.0):.0%} busy)"
                  + ("" if fast.stable else ". UNSTABLE: the offered load exceeds what the path can serve."))
    if not st.button("Simulate (DES, per-workload latency with 95% intervals)", key="consolidation:simulate", type="primary"):
        return
    try:
        result = runner.simulate_one(scenario, "simulating the workloads together")
    except RuntimeError as exc:
        st.error(f"The simulation failed: {exc}")
        return
    if result.validity != "precise":
        st.warning(f"{result.validity}: {result.validity_note}")
    st.subheader("Simulation: latency per workload")
    st.dataframe(des_table(result), hide_index=True)
    st.plotly_chart(stacked({n: (w.iops.value, w.mbps.value) for n, w in (result.workloads or {}).items()},
                            "Load per workload (DES)"))
    if scenario.slos:
        from sim.plan.slo_check import des_figure, slo_verdicts

        st.dataframe([{"workload": r["workload"], "objective": f"{r['metric']} {'<=' if r['kind'] == 'max' else '>='} {fmt(r['bound'])}",
                       "value": fmt(r["value"]) if r["value"] is not None else "-", "verdict": r["verdict"]}
                      for r in slo_verdicts(scenario, des_figure(result))], hide_index=True)
    st.caption(f"Shared bottleneck: {result.bottleneck} ({result.utilization.get(result.bottleneck, 0.0):.0%} busy); "
               f"{result.measured_ios:,} I/Os measured; seed {result.seed}.")
