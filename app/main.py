"""flashplan web app (first page): simulate one of the example scenarios.

The full pre-sales app (size, compare, what-if, plan, calibration, scenario library)
is the web-app issue; this page already runs the engine through the public API.
Start it with ``make run`` or ``flashplan app``.
"""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
from pydantic import ValidationError

from models import METRIC_KEYS, format_validation_error, load_scenario
from sim import simulate

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

st.set_page_config(page_title="flashplan", layout="wide")
st.title("flashplan: flash storage performance simulator")
st.caption("Pick a scenario, adjust the run budget, simulate. Every figure comes with its 95% confidence interval.")

files = sorted(EXAMPLES.glob("*.yaml"))
if not files:
    st.error(f"no example scenarios found in {EXAMPLES}")
    st.stop()
choice = st.selectbox("Scenario", files, format_func=lambda p: p.stem)
max_ios = st.number_input("Run budget (I/Os)", min_value=1_000, max_value=5_000_000, value=200_000, step=50_000)
precision = st.slider("Target relative CI half-width", min_value=0.005, max_value=0.2, value=0.03, step=0.005)

if st.button("Simulate", type="primary"):
    try:
        scenario = load_scenario(choice, {"run.max_ios": int(max_ios), "run.target_rel_ci": float(precision), "run.max_wall_s": 60})
    except ValidationError as exc:
        for field, message in format_validation_error(exc):
            st.error(f"{field}: {message}")
        st.stop()
    with st.spinner("simulating..."):
        result = simulate(scenario)
    cols = st.columns(4)
    cols[0].metric("IOPS", f"{result.iops.value:,.0f}", help=f"95% CI {result.iops.ci95[0]:,.0f} .. {result.iops.ci95[1]:,.0f}")
    cols[1].metric("MB/s", f"{result.mbps.value:,.1f}")
    cols[2].metric("mean latency (us)", f"{result.latency_mean_us.value:,.1f}")
    cols[3].metric("p99 latency (us)", f"{result.latency_p99_us.value:,.1f}")
    rows = [{"metric": k, "value": getattr(result, k).value, "ci95 low": getattr(result, k).ci95[0],
             "ci95 high": getattr(result, k).ci95[1]} for k in METRIC_KEYS]
    st.dataframe(rows, hide_index=True)
    top = sorted(result.utilization.items(), key=lambda kv: -kv[1])[:15]
    fig = go.Figure(go.Bar(x=[v for _, v in top], y=[k for k, _ in top], orientation="h",
                           marker_color=["crimson" if k == result.bottleneck else "steelblue" for k, _ in top]))
    fig.update_layout(title=f"Utilization (bottleneck: {result.bottleneck})", xaxis_tickformat=".0%",
                      yaxis_autorange="reversed", height=420)
    st.plotly_chart(fig, use_container_width=True)
    st.caption(f"{result.stop_reason}; {result.simulated_ios:,} I/Os simulated in {result.wall_seconds:.2f} s")
