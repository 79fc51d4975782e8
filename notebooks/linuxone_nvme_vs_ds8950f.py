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
# # LinuxONE: direct NVMe RAID-10 or a DS8950F over FCP?
#
# Seed 000 (IBM, *NVMe Performance with Linux on IBM LinuxONE Emperor 4*) measured one LinuxONE
# Emperor 4 LPAR (30 cores) with its database on either
#
# * **direct NVMe**: 4 x Samsung PM1733 1.92 TB, each in an IBM NVMe Carrier (FC 0448), md RAID-10; or
# * **SAN**: 4 FCP LUNs of an IBM DS8950F (3.84 TB cache) through 2 FICON Express32S, striped RAID-0 on the host.
#
# It found NVMe up to 16% ahead under steady YCSB reads (the FCP path "saturating around 3 GB/s"),
# the DS8950F up to 7% ahead under Db2 BDI's bursty writes (its cache "buffers the spikes"), and
# NVMe's price-performance up to 96% (YCSB) and 94% (BDI) better.
#
# This notebook asks the model the architect's questions behind those figures:
#
# 1. **Steady OLTP reads**: how do the two attachments scale with the number of database threads?
# 2. **Bursty analytic writes**: how fast may the write bursts be before one attachment's latency suffers?
# 3. **Price-performance**: what does each deliver per dollar, under seed 000's pricing convention?
#
# Every number below comes from the simulator (`sim.simulate`, with 95% confidence intervals), its
# analytic fast path (`sim.analytic.evaluate`), or the catalog prices (`models.cost`); the seed's own
# figures are read from the calibration records, only to compare.
#
# Set `FLASHPLAN_NOTEBOOK_BUDGET=small` for a quick pass (fewer points, short runs: the tests use it);
# the default `full` runs every point to a 2% confidence interval.

# %%

import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from calibration.evaluate import fitted_workload_value
from calibration.records import SCENARIO_DIR, load_records
from models import load_scenario, with_overrides
from models.cost import price_performance_between, usd_per_kiops
from models.presets import PRESETS
from sim import simulate
from sim.analytic import evaluate
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings
from sim.plan.sweep import default_workers, sweep_frame

NOTEBOOK = "linuxone_nvme_vs_ds8950f"
BUDGET = notebook_budget()
SMALL = BUDGET == "small"

# DES run settings applied to every scenario: small = a quick look, full = 2% confidence intervals
RUN = {f"run.{k}": v for k, v in run_settings(BUDGET).items()}
BURSTY_RUN = ({"run.max_ios": 30_000, "run.warmup_ios": 2_000, "run.target_rel_ci": 0.05, "run.max_wall_s": 10.0} if SMALL
              else {"run.max_ios": 1_000_000, "run.target_rel_ci": 0.03, "run.max_wall_s": 60.0})
WORKERS = 1 if SMALL else default_workers()
print(f"budget: {BUDGET}; DES settings {RUN}; {WORKERS} worker process(es)")

# %% [markdown]
# ## The two configurations
#
# The calibration scenarios reproduce seed 000's setups. YCSB's 256 threads each keep one 8 KiB
# PostgreSQL page I/O outstanding, with the database's own work between I/Os (a think time fitted
# against the seed's records).

# %%
records = {r.id: r for r in load_records(only="S1")}
ycsb_think_us = fitted_workload_value("s1_ycsb_think_us")

ycsb = {
    "NVMe RAID-10": load_scenario(SCENARIO_DIR / "s1_ycsb_nvme.yaml", {**RUN, "workload.think_time_us": ycsb_think_us}),
    "DS8950F FCP": load_scenario(SCENARIO_DIR / "s1_ycsb_fcp.yaml", {**RUN, "workload.think_time_us": ycsb_think_us}),
}
bdi = {
    "NVMe RAID-10": load_scenario(SCENARIO_DIR / "s1_bdi_nvme.yaml", RUN),
    "DS8950F FCP": load_scenario(SCENARIO_DIR / "s1_bdi_fcp.yaml", RUN),
}
SIDES = list(ycsb)
COLOURS = {"NVMe RAID-10": "#1f77b4", "DS8950F FCP": "#d62728"}
for side, sc in ycsb.items():
    t = sc.topology
    print(f"{side}: {sc.name} | workload: {sc.workload.jobs} threads x QD {sc.workload.queue_depth}, "
          f"think {sc.workload.think_time_us:g} us, {sc.workload.read_fraction:.0%} reads of {sc.workload.block_size_kib:g} KiB")

# %% [markdown]
# ## 1. Steady OLTP reads: scaling with database threads
#
# The fast path traces each attachment's throughput over a dense range of thread counts; the DES
# confirms a few of them (error bars: 95% confidence intervals).

# %%
def fast_curve(base, path, values):
    """The analytic fast path at each value of one dotted-path factor, as a DataFrame."""
    rows = []
    for value in values:
        fast = evaluate(with_overrides(base, {path: value}))
        rows.append({path: value, "iops": fast.iops, "mbps": fast.mbps, "latency_mean_us": fast.latency_mean_us,
                     "write_latency_mean_us": fast.write_latency_mean_us, "bottleneck": fast.bottleneck,
                     "stable": fast.stable, "x_max_iops": fast.bounds.x_max_iops})
    return pd.DataFrame(rows)


thread_counts = sorted({round(8 * 2 ** (i / 4)) for i in range(29)})  # 8 .. 1024, four per doubling
des_threads = [64, 256] if SMALL else [16, 32, 64, 128, 256, 512, 1024]

ycsb_fast = pd.concat([fast_curve(sc, "workload.jobs", thread_counts).assign(side=side) for side, sc in ycsb.items()])
ycsb_des = pd.concat([sweep_frame(sc, {"workload.jobs": des_threads}, workers=WORKERS).assign(side=side)
                      for side, sc in ycsb.items()])
ycsb_des[["side", "workload.jobs", "iops", "iops_ci95_lo", "iops_ci95_hi", "mbps", "latency_mean_us", "bottleneck", "stop_reason"]]

# %% [markdown]
# Seed 000 ran three YCSB experiments at 256 threads; their I/O read fractions differ. Both
# attachments run each mix with the DES:

# %%
EXPERIMENTS = {"read-only": PRESETS["ycsb_read_only"], "read-mostly": PRESETS["ycsb_read_mostly"],
               "update-heavy": PRESETS["ycsb_update_heavy"]}
rows = []
for label, preset in EXPERIMENTS.items():
    row = {"experiment": label, "read_fraction": preset.data["read_fraction"]}
    for side, sc in ycsb.items():
        result = simulate(with_overrides(sc, {"workload.read_fraction": preset.data["read_fraction"]}))
        row[f"{side} IOPS"] = result.iops.value
        row[f"{side} rel. half-width"] = result.iops.rel_half_width
        row[f"{side} bottleneck"] = result.bottleneck
    rows.append(row)
experiments = pd.DataFrame(rows)
experiments["NVMe / FCP"] = experiments["NVMe RAID-10 IOPS"] / experiments["DS8950F FCP IOPS"]
experiments

# %% [markdown]
# ## 2. Bursty analytic writes: how fast may the bursts be?
#
# The Db2 BDI preset (`models.presets`, printed below with its assumptions) writes in exponential
# on/off bursts; seed 000 saw bursts "up to 3.3 GB/s". Here the burst rate is swept from well below
# to well above that, on both attachments.

# %%
bdi_preset = PRESETS["db2_bdi_bursty"].data
print(f"{PRESETS['db2_bdi_bursty'].title}: {bdi_preset}\nassumptions: {PRESETS['db2_bdi_bursty'].assumptions}")
burst_bytes = bdi_preset["block_size_kib"] * 1024
bursty = {side: with_overrides(sc, {"workload": dict(bdi_preset), **BURSTY_RUN}) for side, sc in bdi.items()}
seed_burst_gbs = records["s1.bdi.burst_absorbed"].measured / 1000  # the seed's burst rate, GB/s


def burst_rate(gbs):
    """On-period I/O rate of a burst of ``gbs`` GB/s at the preset's transfer size."""
    return gbs * 1e9 / burst_bytes


burst_gbs = [round(0.5 * 24 ** (i / 23), 3) for i in range(24)]  # 0.5 .. 12 GB/s, geometric
des_burst_gbs = [seed_burst_gbs, 9.0] if SMALL else [1.0, seed_burst_gbs, 5.0, 7.0, 9.0, 11.0]

bursty_fast = pd.concat([
    fast_curve(sc, "workload.on_rate_iops", [burst_rate(g) for g in burst_gbs]).assign(side=side, burst_gbs=burst_gbs)
    for side, sc in bursty.items()])
bursty_des = pd.concat([
    sweep_frame(sc, {"workload.on_rate_iops": [burst_rate(g) for g in des_burst_gbs]}, workers=WORKERS)
    .assign(side=side, burst_gbs=des_burst_gbs) for side, sc in bursty.items()])
bursty_des[["side", "burst_gbs", "iops", "latency_mean_us", "latency_mean_us_ci95_lo", "latency_mean_us_ci95_hi",
            "latency_p99_us", "write_latency_mean_us", "bottleneck", "stop_reason"]]

# %% [markdown]
# Seed 000 measured the bursts' effect as query throughput. The calibration scenario for it is a
# closed load: six BDI users, each with 32 Db2 page I/Os outstanding, 90% writes of 32 KiB pages
# (column-organized tables; the paper's "average 6 KB" is the record size):

# %%
bdi_results = {side: simulate(sc) for side, sc in bdi.items()}
for side, result in bdi_results.items():
    print(f"{side}: {result.iops.value:,.0f} IOPS (95% CI {result.iops.ci95[0]:,.0f} .. {result.iops.ci95[1]:,.0f}), "
          f"mean latency {result.latency_mean_us.value:,.0f} us, bottleneck {result.bottleneck}")

# %% [markdown]
# ## 3. Price-performance
#
# Seed 000 priced "4 x 1.92TB NVMe SSDs and 4x IBM NVMe Carrier versus ... an IBM DS8950F server
# ... with the same amount of raw storage capacity": storage only, the DS8950F pro-rated to the NVMe
# side's raw capacity. `models.cost.price_performance_between` applies that convention to the simulated
# throughputs; buying a whole DS8950F and its FICON adapters for this one workload is shown beside it.

# %%
read_mostly = experiments.set_index("experiment").loc["read-mostly"]
throughput = {
    "YCSB read-mostly": {side: read_mostly[f"{side} IOPS"] for side in SIDES},
    "BDI write burst": {side: bdi_results[side].iops.value for side in SIDES},
}
scenarios = {"YCSB read-mostly": ycsb, "BDI write burst": bdi}
rows = []
for workload, perf in throughput.items():
    nvme, fcp = scenarios[workload]["NVMe RAID-10"], scenarios[workload]["DS8950F FCP"]
    for convention, kwargs in (("seed 000: storage only, equal raw capacity", {"storage_only": True, "equal_raw_capacity": True}),
                               ("whole DS8950F + FICON adapters", {})):
        cmp = price_performance_between(nvme, perf["NVMe RAID-10"], fcp, perf["DS8950F FCP"], **kwargs)
        rows.append({"workload": workload, "convention": convention,
                     "NVMe capex $": cmp.capex_a.total_usd, "DS8950F capex $": cmp.capex_b.total_usd,
                     "NVMe $/KIOPS": usd_per_kiops(cmp.capex_a.total_usd, perf["NVMe RAID-10"]),
                     "DS8950F $/KIOPS": usd_per_kiops(cmp.capex_b.total_usd, perf["DS8950F FCP"]),
                     "NVMe better %": cmp.result.better_pct, "NVMe perf per $ (x)": cmp.result.perf_per_dollar_ratio})
price_perf = pd.DataFrame(rows)
price_perf

# %% [markdown]
# ## The chart

# %%
def add_des_points(fig, frame, x, y, name, colour, row, col):
    """DES results as markers with their 95% confidence intervals as error bars."""
    fig.add_trace(go.Scatter(
        x=frame[x], y=frame[y], mode="markers", name=name, marker={"color": colour, "size": 9, "symbol": "diamond"},
        error_y={"type": "data", "symmetric": False, "array": frame[f"{y}_ci95_hi"] - frame[y],
                 "arrayminus": frame[y] - frame[f"{y}_ci95_lo"]}), row=row, col=col)


fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.07, subplot_titles=(
    "Steady YCSB reads: throughput vs threads", "Bursty BDI writes: mean latency vs burst rate",
    "Price-performance (seed 000 convention)"))
for side in SIDES:
    colour = COLOURS[side]
    f = ycsb_fast[ycsb_fast.side == side]
    fig.add_trace(go.Scatter(x=f["workload.jobs"], y=f["mbps"], mode="lines", name=f"{side} (fast path)",
                             line={"color": colour}), row=1, col=1)
    add_des_points(fig, ycsb_des[ycsb_des.side == side], "workload.jobs", "mbps", f"{side} (DES)", colour, 1, 1)
    f = bursty_fast[(bursty_fast.side == side) & bursty_fast.stable]
    fig.add_trace(go.Scatter(x=f["burst_gbs"], y=f["latency_mean_us"], mode="lines", line={"color": colour, "dash": "dot"},
                             name=f"{side} bursty (fast path)"), row=1, col=2)
    add_des_points(fig, bursty_des[bursty_des.side == side], "burst_gbs", "latency_mean_us", f"{side} bursty (DES)", colour, 1, 2)
seed_fcp_mbps = records["s1.ycsb.fcp_saturation"].measured
fig.add_hline(y=seed_fcp_mbps, line={"dash": "dash", "color": "grey"}, row=1, col=1,
              annotation_text=f"seed 000: FCP saturates ~{seed_fcp_mbps / 1000:g} GB/s", annotation_position="bottom right")
fig.add_vline(x=seed_burst_gbs, line={"dash": "dash", "color": "grey"}, row=1, col=2,
              annotation_text=f"seed 000 bursts: {seed_burst_gbs:g} GB/s", annotation_position="top left")
seed_conv = price_perf[price_perf.convention.str.startswith("seed 000")]
for side in SIDES:
    fig.add_trace(go.Bar(x=seed_conv["workload"], y=seed_conv[f"{side.split()[0]} $/KIOPS"], name=f"{side} $/KIOPS",
                         marker_color=COLOURS[side]), row=1, col=3)
fig.update_xaxes(type="log", title_text="YCSB threads (one I/O each)", row=1, col=1)
fig.update_yaxes(title_text="MB/s", row=1, col=1)
fig.update_xaxes(title_text=f"write-burst rate, GB/s ({bdi_preset['block_size_kib']:g} KiB transfers)",
                 range=[0, max(burst_gbs) * 1.02], row=1, col=2)
fig.update_yaxes(type="log", title_text="mean latency, us", row=1, col=2)
fig.update_yaxes(type="log", title_text="$ per KIOPS (storage only)", row=1, col=3)
fig.update_layout(title=f"LinuxONE Emperor 4: 4 x PM1733 md RAID-10 vs 4 DS8950F FCP LUNs (flashplan, budget {BUDGET})",
                  height=520, width=1600, barmode="group", legend={"font": {"size": 10}})
fig.show()



export_png(fig, NOTEBOOK)

# %% [markdown]
# ## Conclusions
#
# Built from the results above (rerun the notebook and they follow the numbers).

# %% tags=["conclusions"]
def pct(x):
    return f"{x:+.0%}"


rm = read_mostly
nvme_rm, fcp_rm = rm["NVMe RAID-10 IOPS"], rm["DS8950F FCP IOPS"]
fcp_plateau = ycsb_fast[ycsb_fast.side == "DS8950F FCP"].sort_values("workload.jobs").iloc[-1]
nvme_plateau = ycsb_fast[ycsb_fast.side == "NVMe RAID-10"].sort_values("workload.jobs").iloc[-1]
best_exp = experiments.loc[experiments["NVMe / FCP"].idxmax()]
seed_ycsb_ratio = records["s1.ycsb.up_to_16pct"].measured

at_seed = bursty_des[bursty_des.burst_gbs == seed_burst_gbs].set_index("side")
lat_nvme, lat_fcp = at_seed.loc["NVMe RAID-10", "latency_mean_us"], at_seed.loc["DS8950F FCP", "latency_mean_us"]
curves = bursty_fast.pivot(index="burst_gbs", columns="side", values="latency_mean_us")
nvme_worse = curves[curves["NVMe RAID-10"] > curves["DS8950F FCP"]]
if nvme_worse.empty:
    crossover = f"NVMe RAID-10 keeps the lower mean latency over the whole swept range (up to {max(burst_gbs):g} GB/s bursts)"
else:
    crossover = (f"from {nvme_worse.index.min():.1f} GB/s bursts the NVMe RAID-10's mean latency exceeds the DS8950F's "
                 f"(fast path; {nvme_worse.index.min() / seed_burst_gbs:.1f}x the seed's {seed_burst_gbs:g} GB/s)")
bdi_ratio = bdi_results["DS8950F FCP"].iops.value / bdi_results["NVMe RAID-10"].iops.value
seed_bdi_ratio = records["s1.bdi.fcp_ahead"].measured
pp = seed_conv.set_index("workload")
whole = price_perf[~price_perf.convention.str.startswith("seed 000")].set_index("workload")
seed_pp = {"YCSB read-mostly": 100 * (1 - records["s1.price_performance.ycsb"].measured),
           "BDI write burst": 100 * (1 - records["s1.price_performance.bdi"].measured)}

lines = [
    "### Conclusions",
    f"* **Steady OLTP reads (YCSB read-mostly, 256 threads):** NVMe RAID-10 delivers {nvme_rm:,.0f} IOPS against "
    f"{fcp_rm:,.0f} on the DS8950F FCP LUNs ({pct(nvme_rm / fcp_rm - 1)} for NVMe). Across the three YCSB mixes the NVMe lead "
    f"peaks at {pct(best_exp['NVMe / FCP'] - 1)} ({best_exp['experiment']}); seed 000 measured up to {pct(seed_ycsb_ratio - 1)}.",
    f"* **Where each path tops out:** at {int(fcp_plateau['workload.jobs'])} threads the FCP path reaches "
    f"{fcp_plateau['mbps']:,.0f} MB/s, limited by `{fcp_plateau['bottleneck']}` (seed 000: ~{seed_fcp_mbps:,.0f} MB/s); "
    f"the NVMe RAID-10 reaches {nvme_plateau['mbps']:,.0f} MB/s, limited by `{nvme_plateau['bottleneck']}`. "
    "More threads help only until those components saturate.",
    f"* **Bursty analytic writes:** at the seed's {seed_burst_gbs:g} GB/s bursts the mean latency is {lat_nvme:,.0f} us on "
    f"NVMe RAID-10 and {lat_fcp:,.0f} us on the DS8950F (DES); {crossover}.",
    f"* **Write-burst throughput (closed BDI load):** the model gives the DS8950F {bdi_ratio:.2f}x the NVMe RAID-10's IOPS; "
    f"seed 000 measured {seed_bdi_ratio:.2f}x. "
    + ("The model agrees with the seed that the storage server's cache wins under write bursts."
       if (bdi_ratio >= 1) == (seed_bdi_ratio >= 1) else
       "The model and the seed disagree on which attachment wins here: treat this comparison as uncalibrated "
       "(see the S1 records in `flashplan calibrate`)."),
    f"* **Price-performance (storage only, DS8950F pro-rated to equal raw capacity):** NVMe costs "
    f"${pp.loc['YCSB read-mostly', 'NVMe $/KIOPS']:,.2f} per KIOPS against ${pp.loc['YCSB read-mostly', 'DS8950F $/KIOPS']:,.2f} "
    f"under YCSB ({pp.loc['YCSB read-mostly', 'NVMe better %']:.0f}% better; seed 000: {seed_pp['YCSB read-mostly']:.0f}%) and "
    f"${pp.loc['BDI write burst', 'NVMe $/KIOPS']:,.2f} against ${pp.loc['BDI write burst', 'DS8950F $/KIOPS']:,.2f} under BDI "
    f"({pp.loc['BDI write burst', 'NVMe better %']:.0f}% better; seed 000: {seed_pp['BDI write burst']:.0f}%). "
    f"Charging the whole DS8950F and its FICON adapters instead widens the gap to "
    f"{whole.loc['YCSB read-mostly', 'NVMe better %']:.1f}% (YCSB).",
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
