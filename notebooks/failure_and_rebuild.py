# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A drive fails: does the sizing still hold while the array is degraded and while it rebuilds?
#
# Seed 000's LinuxONE system keeps PostgreSQL on four PM1733 drives in md RAID-10
# (`examples/faults_s1_raid10_degraded.yaml`). A sizing signed for the healthy array must also hold when
# one drive has failed (RAID-10 then reads the lost drive's pair from its survivor alone) and while md
# recovers onto the replacement, reading that survivor again and writing the new drive, at a rate md
# throttles between `speed_limit_min` and `speed_limit_max` (calibration/faults/MD_DEFAULTS.md).
#
# This notebook asks:
#
# 1. **The three states** of the example (healthy, degraded, rebuilding): host IOPS, latency and the SLO
#    margin in each, from the DES (`sim.plan.faults.simulate_states`) and the fast path (`evaluate_states`).
# 2. **The rebuild rate trade-off:** a faster rebuild shortens the exposure to a second failure but takes
#    more from the host. Fast-path curve over the rate cap, checked by DES points.
# 3. **The course of a failure:** host latency and rebuild progress over time (the chart).
#
# `FLASHPLAN_NOTEBOOK_BUDGET=small` runs short DES runs (the tests use it); `full` is the default.

# %%
import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from models import load_scenario, with_overrides
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings
from sim.plan.faults import evaluate_states, fast_rebuild_rate_mbps, simulate_states, timeline

NOTEBOOK = "failure_and_rebuild"
BUDGET = notebook_budget()
SMALL = BUDGET == "small"
RUN = {f"run.{k}": v for k, v in run_settings(BUDGET).items()}
REPLACE_AFTER_H = 4.0  # an operator's figure: hours from the failure until the replacement drive is in

example = with_overrides(load_scenario("../examples/faults_s1_raid10_degraded.yaml"), RUN)
slo_us = example.faults.slo_us
example.faults

# %% [markdown]
# ## 1. Healthy, degraded, rebuilding

# %%
states = simulate_states(example)
fast = evaluate_states(example)
margins = states.margins()
table = pd.DataFrame([
    {"state": name, "DES IOPS": r.iops.value, "DES mean us": r.latency_mean_us.value, "DES p99 us": r.latency_p99_us.value,
     "fast IOPS": fast[name].iops, "fast mean us": fast[name].latency_mean_us, "bottleneck (DES)": r.bottleneck,
     "SLO margin %": margins[name]}
    for name, r in states.results.items()
]).set_index("state")
rebuild = states.results["rebuilding"].rebuild
table.round(1)

# %% [markdown]
# ## 2. Rebuild rate cap: host latency against rebuild time

# %%
caps = [100, 200, 400, 800, 1200, 1600, 2000]
curve = []
for cap in caps:
    s = with_overrides(example, {"faults.rebuild.rate_mbps": cap})
    f = evaluate_states(s)["rebuilding"]
    rate = fast_rebuild_rate_mbps(s)
    curve.append({"cap MB/s": cap, "fast rate MB/s": rate, "fast mean us": f.latency_mean_us, "fast IOPS": f.iops,
                  "rebuild h": rebuild.drive_bytes / (rate * 1e6) / 3600})
curve = pd.DataFrame(curve).set_index("cap MB/s")
checks = []
for cap in ([400, 1600] if SMALL else [200, 800, 1600]):
    r = simulate_states(with_overrides(example, {"faults.rebuild.rate_mbps": cap})).results["rebuilding"]
    checks.append({"cap MB/s": cap, "DES rate MB/s": r.rebuild.rate_mbps.value, "DES mean us": r.latency_mean_us.value,
                   "DES p99 us": r.latency_p99_us.value, "fast mean us": curve.loc[cap, "fast mean us"]})
checks = pd.DataFrame(checks).set_index("cap MB/s")
display(curve.round(1))
checks.round(1)

# %% [markdown]
# ## 3. The course of a failure

# %%
course = pd.DataFrame(timeline(states, REPLACE_AFTER_H))
fig = make_subplots(specs=[[{"secondary_y": True}]])
fig.add_trace(go.Scatter(x=course.hours, y=course.p99_us, name="host p99 latency (us)", line_shape="hv"))
fig.add_trace(go.Scatter(x=course.hours, y=course.mean_us, name="host mean latency (us)", line_shape="hv"))
fig.add_trace(go.Scatter(x=course.hours, y=course.rebuild_progress_pct, name="rebuild progress (%)", line={"dash": "dot"}),
              secondary_y=True)
fig.add_hline(y=slo_us, line_dash="dash", annotation_text=f"SLO p99 {slo_us:g} us")
fig.update_layout(title=f"{example.name}: drive fails at 0 h, replaced at {REPLACE_AFTER_H:g} h (DES, {BUDGET} budget)",
                  width=1000, height=500, xaxis_title="hours since the failure")
fig.update_yaxes(title_text="latency (us)", secondary_y=False)
fig.update_yaxes(title_text="rebuild progress (%)", range=[0, 105], secondary_y=True)
export_png(fig, NOTEBOOK)
fig

# %% tags=["conclusions"]
h, d, rb = states.results["healthy"], states.results["degraded"], states.results["rebuilding"]
lowest = states.lowest_margin()
fast_best = curve[curve["fast mean us"] <= curve["fast mean us"].min() * 1.1].index.max()
lines = [
    "### Conclusions",
    f"* **Degraded:** with drive 1 failed the array delivers {d.iops.value:,.0f} IOPS at p99 {d.latency_p99_us.value:,.0f} us "
    f"(healthy: {h.iops.value:,.0f} IOPS, p99 {h.latency_p99_us.value:,.0f} us): the lost drive's pair reads from its survivor "
    f"alone, and `{d.bottleneck}` limits (fast path: {fast['degraded'].iops:,.0f} IOPS).",
    f"* **Rebuilding at md's defaults:** {rebuild.rate_mbps.value:,.1f} MB/s per replacement drive (cap {rebuild.cap_mbps:g} MB/s, "
    f"md's speed_limit_max), so the {rebuild.drive_bytes / 1e12:g} TB drive takes {rebuild.time_s / 3600:,.2f} h; the host gets "
    f"{rb.iops.value:,.0f} IOPS at p99 {rb.latency_p99_us.value:,.0f} us.",
    f"* **SLO p99 {slo_us:g} us:** margins " + ", ".join(f"{n} {m:+.1f}%" for n, m in margins.items() if m is not None)
    + (f"; the lowest is {lowest[1]:+.1f}% ({lowest[0]})." if lowest else "."),
    f"* **Rebuild cap trade-off (fast path):** from {caps[0]} to {caps[-1]} MB/s the rebuild time falls from "
    f"{curve['rebuild h'].iloc[0]:,.1f} h to {curve['rebuild h'].iloc[-1]:,.2f} h while the host's mean latency goes from "
    f"{curve['fast mean us'].iloc[0]:,.0f} to {curve['fast mean us'].iloc[-1]:,.0f} us; caps up to {fast_best:,} MB/s stay within 10% "
    f"of the best latency. DES checks: " + ", ".join(f"{c} MB/s -> {row['DES rate MB/s']:,.0f} MB/s achieved, mean "
                                                     f"{row['DES mean us']:,.0f} us" for c, row in checks.iterrows()) + ".",
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
