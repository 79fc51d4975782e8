"""Failure states on the Size page: what fails, the rebuild, and the result of every state.

``faults_section`` edits the draft's ``faults`` (models/faults.py): failed drives, a failed JBOF adapter
or SAN host port, a rebuild in progress (a rate cap, or md's default limits and its throttle) and the latency SLO the
states are judged against. ``show_failure_states`` simulates each state (healthy, degraded, rebuilding:
``sim.plan.faults.state_scenarios``) in the app's worker pool (cached) and shows a table per state, the
rebuild's rate and time under the load and idle, the SLO margins, and a chart of latency and rebuild progress over a failure.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from app import runner
from app.views.common import fmt, result_table
from app.words import busiest_words
from models.faults import DEFAULT_MD_THROTTLE, MD_THROTTLES, throttle_words
from models.scenario import Scenario
from sim.plan.faults import FaultStates, state_scenarios, timeline

KEY = "size:faults"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if math.isfinite(seconds) else "never (no progress)"


def _indexes(where: Any, label: str, count: int, chosen: list[int], key: str, help: str) -> list[int]:
    options = list(range(count))
    picked = where.multiselect(label, options, default=[i for i in chosen if i < count], key=f"{KEY}:{key}", help=help)
    return [int(i) for i in picked]


def faults_section(data: dict[str, Any], where: Any) -> None:
    """Widgets for the draft's ``faults``: set ``data["faults"]``, or drop it when nothing is failed."""
    topo = data.get("topology", {})
    kind = topo.get("kind")
    faults = dict(data.get("faults") or {})
    box = where.expander("Failures: a drive, an adapter or a path down, a rebuild in progress", expanded=bool(faults))
    if kind not in ("direct_nvme", "san"):
        box.caption("Failures are modelled for direct-attached NVMe (drives, JBOF adapters) and SAN (host ports).")
        data.pop("faults", None)
        return
    c1, c2 = box.columns(2)
    if kind == "direct_nvme":
        faults["failed_drives"] = _indexes(c1, "Failed drives", int(topo.get("drives", 4)), faults.get("failed_drives", []),
                                           "drives", "drive d holds namespaces d, d + drives, ...")
        faults["failed_adapters"] = _indexes(c2, "Failed JBOF adapters", int(topo.get("adapters", 1)),
                                             faults.get("failed_adapters", []), "adapters", "drive d sits behind adapter d % adapters")
        rebuild = box.checkbox("A rebuild onto the replacement is in progress", value=faults.get("rebuild") is not None,
                               key=f"{KEY}:rebuild")
        if rebuild:
            rate = box.number_input("Rebuild cap, MB/s per replacement drive, without md's throttle (0: md's limits and throttle)",
                                    min_value=0.0, max_value=100_000.0, value=float((faults.get("rebuild") or {}).get("rate_mbps") or 0.0),
                                    key=f"{KEY}:rate")
            previous = faults.get("rebuild") or {}
            chosen = previous.get("md_throttle", DEFAULT_MD_THROTTLE)
            throttle = box.selectbox("md's throttle under host load (used when the cap above is 0)", MD_THROTTLES,
                                     index=MD_THROTTLES.index(chosen), key=f"{KEY}:throttle",
                                     help="legacy (the default): kernels without the 2025 sync_io_depth patch drain every "
                                          "sync I/O before issuing more while the array is busy; sync_io_depth: kernels "
                                          "with it keep up to 32 in flight (calibration/faults/MD_DEFAULTS.md)")
            faults["rebuild"] = {"rate_mbps": rate} if rate > 0 else {"md_throttle": throttle}
        else:
            faults.pop("rebuild", None)
    else:
        faults["failed_ports"] = _indexes(c1, "Failed host ports", 64, faults.get("failed_ports", []), "ports",
                                          "hba{a}.port{p} is port a x ports + p")
    slo = box.number_input("Latency SLO p99, us (0: none)", min_value=0.0, max_value=1e9, value=float(faults.get("slo_us") or 0.0),
                           key=f"{KEY}:slo")
    faults = {k: v for k, v in faults.items() if v not in ([], None)}
    if slo > 0:
        faults["slo_us"] = slo
    else:
        faults.pop("slo_us", None)
    if any(faults.get(k) for k in ("failed_drives", "failed_adapters", "failed_ports")):
        data["faults"] = faults
    else:
        data.pop("faults", None)


def _course_chart(states: FaultStates) -> go.Figure:
    course = pd.DataFrame(timeline(states))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=course.hours, y=course.p99_us, name="host p99 latency (us)", line_shape="hv"))
    fig.add_trace(go.Scatter(x=course.hours, y=course.mean_us, name="host mean latency (us)", line_shape="hv"))
    fig.add_trace(go.Scatter(x=course.hours, y=course.rebuild_progress_pct, name="rebuild progress (%)", line={"dash": "dot"}),
                  secondary_y=True)
    _, slo_us = states.slo
    if slo_us:
        fig.add_hline(y=slo_us, line_dash="dash", annotation_text=f"SLO {slo_us:g} us")
    fig.update_layout(title="A failure's course: fails at 0 h, replaced at 4 h (an assumed figure), then rebuilt",
                      xaxis_title="hours since the failure", height=420)
    fig.update_yaxes(title_text="latency (us)", secondary_y=False)
    fig.update_yaxes(title_text="rebuild progress (%)", range=[0, 105], secondary_y=True)
    return fig


def show_failure_states(scenario: Scenario) -> None:
    """Simulate and show every state of a scenario with faults."""
    pairs = state_scenarios(scenario)
    outcomes = runner.simulate_many([s for _, s in pairs], label="Simulating the failure states")
    states = FaultStates(scenario)
    for (name, _), outcome in zip(pairs, outcomes, strict=True):
        if isinstance(outcome, str):
            st.error(f"State {name}: the simulation ended without a result: {outcome}")
            return
        states.results[name] = outcome
    st.subheader("Failure states")
    margins = states.margins()
    for name, result in states.results.items():
        margin = f", SLO margin {margins[name]:+.1f}%" if margins.get(name) is not None else ""
        st.markdown(f"**{name}**: {fmt(result.iops.value)} IOPS, p99 {fmt(result.latency_p99_us.value)} us, busiest: "
                    f"{busiest_words(result.bottleneck, result.utilization.get(result.bottleneck))}{margin}")
        st.dataframe(pd.DataFrame(result_table(result)), hide_index=True, key=f"{KEY}:table:{name}")
    rebuilding = states.results.get("rebuilding")
    if rebuilding is not None and rebuilding.rebuild is not None:
        rb = rebuilding.rebuild
        st.markdown(f"**Rebuild:** ({throttle_words(rb.throttle)}) {rb.drive_bytes / 1e12:g} TB per replacement drive: "
                    f"under this load {fmt(rb.rate_mbps.value)} MB/s, **{_hours(rb.time_s)}**; on an idle array "
                    f"{fmt(rb.idle_rate_mbps)} MB/s, {_hours(rb.idle_time_s)} (cap {rb.cap_mbps:g} MB/s).")
    lowest = states.lowest_margin()
    if lowest is not None:
        st.markdown(f"**Lowest SLO margin:** {lowest[1]:+.1f}% ({lowest[0]}).")
    st.plotly_chart(_course_chart(states), key=f"{KEY}:course")
