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
# # Load over time: the BDI batch bursts on the LinuxONE's NVMe RAID-10, and how long it lasts as load grows
#
# Seed 000 (IBM LinuxONE Emperor 4, four Samsung PM1733 in md RAID-10) describes Db2 Warehouse's BDI
# benchmark as bursty: "high write rates up to 3.3 GB/s for a short period of time and low read rates"
# (section 4.1.1). Sizing to an average hides the bursts; sizing to one steady peak ignores that a burst
# ends. This notebook replays the load as a **profile** (examples/linuxone_bdi_batch_profile.yaml: quiet
# query phases, 3.3 GB/s write bursts) and asks, for an architect:
#
# 1. Which interval is the peak, and does its p99 meet a 1 ms SLO?
# 2. Where is the steady-state (fast path) view of each interval wrong: which intervals are too short
#    for their queues to settle?
# 3. How far can this load grow before the SLO breaks, and when is that at 25% growth a year?
#
# The quiet phases' rate and the interval lengths are stated assumptions of the example (the seed gives
# no numbers for them). `FLASHPLAN_NOTEBOOK_BUDGET=small` shortens the intervals (the tests use it);
# `full` replays the example as written.

# %%
import datetime as dt
import math

import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from models import load_scenario
from sim import simulate
from sim.cli.notebook import budget_note, export_png, notebook_budget
from sim.plan.growth import breaking_point, des_p99
from sim.plan.profile_fast import SETTLING_FACTOR, evaluate_profile

NOTEBOOK = "load_over_time_growth"
BUDGET = notebook_budget()
SLO_US = 1_000.0
GROWTH_PER_YEAR = 0.25
START = dt.date(2026, 11, 25)
SHORTEN = 0.3 if BUDGET == "small" else 1.0

base = load_scenario("../examples/linuxone_bdi_batch_profile.yaml")
profile = base.workload
intervals = [iv.model_copy(update={"duration_s": iv.duration_s * SHORTEN}) for iv in profile.intervals]
scenario = base.model_copy(update={"workload": profile.model_copy(update={"intervals": intervals})})
pd.DataFrame([{"interval": i, "label": iv.label, "length (s)": iv.duration_s, "rate (IOPS)": iv.rate_iops,
               "read %": 100 * (iv.read_fraction if iv.read_fraction is not None else profile.read_fraction),
               "MB/s offered": (iv.rate_iops or 0) * profile.block_size_kib * 1024 / 1e6} for i, iv in enumerate(intervals)])

# %% [markdown]
# ## 1. The fast path: every interval as a steady state
#
# Each interval is evaluated as if it lasted for ever. The check: an interval shorter than
# 3 relaxation times of its bottleneck queue, tau = S / (1 - sqrt(rho))^2 (the M/M/1 decay constant,
# S = 1 / Xmax), has not settled, and its steady-state figures are flagged unreliable.

# %%
fast = evaluate_profile(scenario)
fast_rows = pd.DataFrame([{"interval": e.index, "mean (us)": e.fast.latency_mean_us if e.fast else None,
                           "p99 estimate (us)": e.p99_estimate_us, "settling (s)": e.settling_s,
                           "bottleneck": e.fast.bottleneck if e.fast else "-", "reliable": e.reliable, "note": e.note}
                          for e in fast.intervals])
fast_rows

# %% [markdown]
# ## 2. The replay (DES): latency over time
#
# The simulation replays the intervals one after another for the sum of their durations (simulated
# time, the same on any machine), and measures each interval on its own: throughput from the
# completions inside it, latency from the I/Os that arrived in it, with a 95% interval over ten time
# slices where the interval holds enough I/Os.

# %%
result = simulate(scenario)
rows = pd.DataFrame([{"interval": iv.index, "label": iv.label, "start (s)": iv.start_s, "IOPS": iv.metrics["iops"].value,
                      "MB/s": iv.metrics["mbps"].value, "mean (us)": iv.metrics["latency_mean_us"].value,
                      "p99 (us)": iv.metrics["latency_p99_us"].value,
                      "p99 half-width": iv.metrics["latency_p99_us"].half_width if iv.metrics["latency_p99_us"].has_ci else None,
                      "backlog at end": iv.backlog_end, "busiest": iv.busiest, "busy": iv.busiest_utilization}
                     for iv in result.intervals])
peak = result.peak_interval
print(result.stop_reason)
print(f"peak interval {peak.index}: {peak.reason}")
rows

# %%
fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.6, 0.4], vertical_spacing=0.08)
mid = [iv.start_s + iv.duration_s / 2 for iv in result.intervals]
p99 = [iv.metrics["latency_p99_us"] for iv in result.intervals]
fig.add_trace(go.Scatter(x=mid, y=[m.value for m in p99], mode="lines+markers", line_shape="hvh", name="p99 (DES)",
                         error_y={"type": "data", "array": [m.half_width if m.has_ci else 0 for m in p99]}), row=1, col=1)
fig.add_trace(go.Scatter(x=mid, y=[e.p99_estimate_us for e in fast.intervals], mode="markers", name="p99 (fast path estimate)",
                         marker_symbol="x"), row=1, col=1)
fig.add_hline(y=SLO_US, line_dash="dash", line_color="crimson", annotation_text=f"SLO {SLO_US:,.0f} us", row=1, col=1)
fig.add_trace(go.Scatter(x=[mid[peak.index]], y=[p99[peak.index].value], mode="markers", name="peak",
                         marker={"symbol": "star", "size": 16, "color": "crimson"}), row=1, col=1)
fig.add_trace(go.Bar(x=mid, y=[iv.metrics["read_iops"].value for iv in result.intervals],
                     width=[iv.duration_s for iv in result.intervals], name="read IOPS"), row=2, col=1)
fig.add_trace(go.Bar(x=mid, y=[iv.metrics["write_iops"].value for iv in result.intervals],
                     width=[iv.duration_s for iv in result.intervals], name="write IOPS"), row=2, col=1)
fig.update_layout(barmode="stack", width=1000, height=600, title="BDI batch profile on the S1 NVMe RAID-10: latency over time")
fig.update_yaxes(type="log", title_text="latency (us)", row=1, col=1)
fig.update_yaxes(title_text="IOPS carried", row=2, col=1)
fig.update_xaxes(title_text="time (s)", row=2, col=1)
export_png(fig, NOTEBOOK)
fig

# %% [markdown]
# ## 3. Growth: how far, and when
#
# The load multiplier at which the worst interval's p99 reaches the SLO: bisection on the fast path,
# then the replay at that multiplier (the DES) to check it.

# %%
growth = breaking_point(scenario, SLO_US, des_steps=1 if BUDGET == "small" else 3)
best = growth.best_factor
years = growth.years(GROWTH_PER_YEAR)
date = growth.breaks_on(GROWTH_PER_YEAR, START)
check = growth.des[0] if growth.des else None
curve = sorted((g, p) for g, p in growth.evaluations if math.isfinite(p))
pd.DataFrame(curve, columns=["load multiplier", "fast-path p99 estimate (us)"])

# %% tags=["conclusions"]
quiet = [iv for iv in result.intervals if (iv.metrics["read_iops"].value or 0) > (iv.metrics["write_iops"].value or 0)]
bursts = [iv for iv in result.intervals if iv not in quiet]
unreliable = [e.index for e in fast.intervals if not e.reliable]
peak_p99 = p99[peak.index]
lines = [
    "### Conclusions",
    f"* **Peak interval {peak.index}** ({result.intervals[peak.index].label}): p99 {peak_p99.value:,.0f} us"
    + (f" (95% CI {peak_p99.ci95[0]:,.0f}..{peak_p99.ci95[1]:,.0f})" if peak_p99.has_ci else "")
    + f", {'within' if peak_p99.value <= SLO_US else 'above'} the {SLO_US:,.0f} us SLO. The write bursts "
    f"({max(iv.metrics['mbps'].value for iv in bursts):,.0f} MB/s carried, seed 000's 3.3 GB/s) are acknowledged from the drives' "
    f"write cache (burst mean {max(iv.metrics['latency_mean_us'].value for iv in bursts):,.0f} us); the quiet phases' 32 KiB reads "
    f"from NAND (mean {max(iv.metrics['latency_mean_us'].value for iv in quiet):,.0f} us) set today's p99.",
    f"* **Fast path vs replay:** the steady-state p99 estimate of the peak interval is {fast.intervals[peak.index].p99_estimate_us:,.0f} us "
    f"against the replay's {peak_p99.value:,.0f} us; {len(unreliable)} of {len(fast.intervals)} intervals are shorter than "
    f"{SETTLING_FACTOR:g} relaxation times of their bottleneck" + (f" (intervals {unreliable})." if unreliable else
                                                                   ": at today's load every interval settles within it."),
    f"* **Growth:** the SLO breaks at **x{best:.2f}** today's load ({best - 1:+.0%}, fast path x{growth.factor:.2f}"
    + "".join(f"; the replay at x{d.factor:.2f} gives p99 {d.p99.value:,.0f} us: {d.verdict(SLO_US)}" for d in growth.des)
    + (f"; DES bracket x{growth.des_bracket[0]:.2f}..x{growth.des_bracket[1]:.2f}"
       if None not in growth.des_bracket and growth.des_bracket[0] != growth.des_bracket[1] else "")
    + f"). At that load the bursts offer {best * 100_708 * 32 * 1024 / 1e9:.1f} GB/s of writes, {2 * best * 100_708 * 32 * 1024 / 1e9:.1f} "
    f"GB/s to the four drives after RAID-10 mirroring.",
    f"* **When:** at {GROWTH_PER_YEAR:.0%} a year from {START.isoformat()}, after **{years:.1f} years, on {date.isoformat()}**."
    if years is not None and date is not None and years >= 0 else "* **When:** the SLO is already broken at today's load.",
    f"* **Replay:** {result.simulated_ios:,} I/Os over {result.simulated_seconds:.2f} s of simulated time "
    f"(the worst interval's DES p99 today: {des_p99(result).value:,.0f} us).",
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
