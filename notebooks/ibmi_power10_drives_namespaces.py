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
# # IBM i on Power10: how many NVMe drives, how many namespaces?
#
# Seed 001 (IBM France, *Stockage interne sur NVMe*, IBM i university 2024) describes IBM i on Power10
# with U.2 NVMe drives in EJ1Y JBOF cages (up to 8 drives behind a PCIe Gen4 x16 slot, each drive on
# 4 lanes), each drive split into namespaces ("1 namespace = 1 disque IBM i = 1 bras disque"), and IBM i
# mirroring as the only protection. Its stress tests concluded "+ namespaces = + bras disque = meilleures
# performances" and "meilleures performances sur plusieurs NVMe".
#
# For an OLTP requirement (a target IOPS with growth, a response-time objective, a usable capacity,
# mirrored) this notebook asks:
#
# 1. **How many drives**, and with how many namespaces each, sustain the target within the response time?
# 2. **What do namespaces change**: response time, or only the disk-unit busy % that IBM i reports?
# 3. **Where does the JBOF adapter or PCIe become the limit** as drives are added behind one EJ1Y?
# 4. **What is the cheapest configuration** over every IBM i drive model (the planner, `sim.plan.planner.plan`)?
#
# The requirement is `examples/plan/ibmi_oltp.yaml` (edit `OVERRIDES` below to change it). The dense
# sweeps use the analytic fast path (`sim.analytic.evaluate`, microseconds per point); the DES
# (`sim.simulate`) confirms the points the answers rest on, with 95% confidence intervals.
# `FLASHPLAN_NOTEBOOK_BUDGET=small` runs fewer, shorter DES runs (the tests use it); `full` is the default.

# %%

import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from calibration.records import SCENARIO_DIR
from models import lookup, scenario_from_data, with_overrides
from models.cost import capex
from models.presets import PRESETS
from models.requirements import load_requirements
from sim import simulate
from sim.analytic import evaluate
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings
from sim.plan.planner import IBMI_NAMESPACE_QUEUE_DEPTH, NoFeasiblePlan, design_workload, p99_estimate_us, plan
from sim.plan.sweep import default_workers, sweep_frame

NOTEBOOK = "ibmi_power10_drives_namespaces"
BUDGET = notebook_budget()
SMALL = BUDGET == "small"
RUN = run_settings(BUDGET)
WORKERS = 1 if SMALL else default_workers()

REPO = SCENARIO_DIR.parents[1]
OVERRIDES: dict = {}  # e.g. {"target.iops": 1_500_000, "latency_slo.us": 500}
req = load_requirements(REPO / "examples" / "plan" / "ibmi_oltp.yaml",
                        {**OVERRIDES, **({f"verify.{k}": v for k, v in RUN.items()} if SMALL else {})})
slo = req.latency_slo
print(f"budget: {BUDGET}; {req.name}")
print(f"design rate {req.design_iops:,.0f} IOPS ({req.target_iops:,.0f} + {req.growth_headroom_pct:g}% growth), "
      f"{slo.statistic} <= {slo.us:g} us, {req.usable_tb:g} TB usable, protection {req.protection}")

# %% [markdown]
# ## The configuration family
#
# Seed 001's stress-test drive (ES5F, 3.2 TB) in two EJ1Y cages, IBM i mirrored with the copies
# behind different adapters (planar protection), on the Power10 S1024 LPAR (32 cores). Each namespace
# is an IBM i disk unit that keeps at most `IBMI_NAMESPACE_QUEUE_DEPTH` I/Os outstanding: the planner's
# assumption (seed 001 shows the namespace effect, not the limit). The load is the requirement's mix
# arriving at the design rate, as the planner offers it.

# %%
DRIVE, ADAPTER = "ES5F", "EJ1Y"
drive_spec, adapter_spec = lookup("drives", DRIVE), lookup("adapters", ADAPTER)
host = {"model": "Power10-S1024-LPAR32", "stack": "ibmi_nvme"}
base = scenario_from_data({
    "name": f"IBM i, {DRIVE} mirrored over 2 x {ADAPTER}",
    "topology": {"kind": "direct_nvme", "host": host, "drive": DRIVE, "drives": 4, "adapter": ADAPTER, "adapters": 2,
                 "namespaces": {"per_drive": 4, "queue_depth": IBMI_NAMESPACE_QUEUE_DEPTH},
                 "layout": "ibmi_mirror", "mirror_protection": "planar"},
    "workload": design_workload(req),
    "run": RUN,
})
drive_counts = list(range(2, 2 * adapter_spec.max_drives + 1, 2))
namespace_counts = [n for n in (1, 2, 4, 8, 16, 32, 64) if n <= drive_spec.max_namespaces]
print(f"{DRIVE}: {drive_spec.capacity_tb:g} TB, up to {drive_spec.max_namespaces} namespaces; drives tried {drive_counts}; "
      f"namespaces per drive {namespace_counts}; {IBMI_NAMESPACE_QUEUE_DEPTH} I/Os per disk unit")

# %% [markdown]
# ## 1. Drives x namespaces: the highest rate within the response-time objective
#
# For every (drives, namespaces) pair the fast path finds, by bisection on the arrival rate, the
# highest rate at which the path is stable and the screening estimate of the SLO statistic
# (`sim.plan.planner.p99_estimate_us` for a p99) stays within the objective.

# %%
def slo_latency_us(fast):
    """The SLO statistic as the fast path estimates it (mean, or the planner's p99 screening estimate)."""
    return fast.latency_mean_us if slo.statistic == "mean" else p99_estimate_us(fast)


def max_rate_within_slo(scenario, steps=16):
    """Highest open arrival rate (IOPS) meeting the SLO on the fast path, and the bottleneck there."""
    top = evaluate(scenario).bounds
    lo, hi = 0.0, top.x_max_iops
    for _ in range(steps):
        mid = (lo + hi) / 2
        fast = evaluate(with_overrides(scenario, {"workload.rate_iops": mid}))
        if fast.stable and slo_latency_us(fast) <= slo.us:
            lo = mid
        else:
            hi = mid
    return lo, top.bottleneck


rows = []
for drives in drive_counts:
    for per_drive in namespace_counts:
        sc = with_overrides(base, {"topology.drives": drives, "topology.namespaces.per_drive": per_drive})
        rate, bottleneck = max_rate_within_slo(sc)
        at_design = evaluate(sc)
        rows.append({"drives": drives, "namespaces_per_drive": per_drive, "disk_units": drives * per_drive,
                     "max_iops_within_slo": rate, "bottleneck": bottleneck,
                     "slo_latency_at_design_us": slo_latency_us(at_design) if at_design.stable else float("inf"),
                     "usable_tb": capex(sc.topology).usable_tb})
grid = pd.DataFrame(rows)
grid["meets_rate"] = grid["max_iops_within_slo"] >= req.design_iops
grid["meets_capacity"] = grid["usable_tb"] >= req.usable_tb
grid.pivot(index="drives", columns="namespaces_per_drive", values="max_iops_within_slo").round(-3)

# %% [markdown]
# The smallest drive count that meets the rate, the one that meets the capacity, and the fewest
# namespaces per drive that get within 1% of that drive count's best rate:

# %%
fits_rate = grid[grid.meets_rate]
min_drives_rate = int(fits_rate.drives.min()) if not fits_rate.empty else None
min_drives_capacity = int(grid[grid.meets_capacity].drives.min()) if grid.meets_capacity.any() else None
needed = [d for d in (min_drives_rate, min_drives_capacity) if d is not None]
chosen_drives = max(needed) if len(needed) == 2 else None
best_per_drives = grid.groupby("drives")["max_iops_within_slo"].transform("max")
enough_ns = grid[grid.max_iops_within_slo >= 0.99 * best_per_drives].groupby("drives")["namespaces_per_drive"].min()
print(f"rate needs >= {min_drives_rate} drives; {req.usable_tb:g} TB usable needs >= {min_drives_capacity} drives; "
      f"answer: {chosen_drives} drives")
enough_ns.rename("fewest namespaces per drive within 1% of the best").to_frame().T

# %% [markdown]
# ## 2. What namespaces change: response time and disk-unit busy %
#
# At the chosen drive count and the design rate, the DES runs each namespace count. `busy` is the
# fraction of time a disk unit has at least one I/O in flight, the model's counterpart of the "% busy"
# IBM i reports per unit (seed 001's "Disque busy % max" is the busiest unit). Read the trend, not the
# level: in all eight busy values of seed 001, IBM i's figure is 1 - exp(-(I/Os per unit) x (response
# time) / 2), while the time with an I/O in flight is the same with the whole response time, so this
# column runs 1.4 to 2.3 times IBM i's below saturation (calibration records `s2.p10.*.bw` / `.br`).

# %%
ns_des_counts = [1, 4, max(namespace_counts)] if SMALL else namespace_counts
ns_base = with_overrides(base, {"topology.drives": chosen_drives or max(drive_counts)})
rows = []
for per_drive in ns_des_counts:
    result = simulate(with_overrides(ns_base, {"topology.namespaces.per_drive": per_drive}))
    unit_busy = [v for k, v in result.busy.items() if ".ns" in k]
    stat = result.latency_p99_us if slo.statistic == "p99" else result.latency_mean_us
    rows.append({"namespaces_per_drive": per_drive, "iops": result.iops.value, "latency_mean_us": result.latency_mean_us.value,
                 "slo_latency_us": stat.value, "slo_latency_ci95_lo": stat.ci95[0], "slo_latency_ci95_hi": stat.ci95[1],
                 "max_unit_busy_pct": 100 * max(unit_busy), "mean_unit_busy_pct": 100 * sum(unit_busy) / len(unit_busy),
                 "bottleneck": result.bottleneck})
namespaces = pd.DataFrame(rows)
namespaces

# %% [markdown]
# ## 3. Where the JBOF adapter or PCIe becomes the limit
#
# Bandwidth, not IOPS, fills a PCIe link: seed 001's RPG read-file (RF) workload reads its files
# sequentially (the `ibmi_rpg_read` preset, printed below), here with 8 I/Os per job so that every
# drive stays busy. Drives are added behind one EJ1Y (mirrored across drives), then behind two
# (planar). The catalog gives each limit: a drive's read bandwidth, its x4 link, the adapter's x16 slot.

# %%
rf = dict(PRESETS["ibmi_rpg_read"].data, queue_depth=8)
print(f"{PRESETS['ibmi_rpg_read'].title}: {rf}")
limits = {"drive read bandwidth": drive_spec.read_bw_gbs, "drive PCIe x4 link": drive_spec.link.gbs,
          f"{ADAPTER} PCIe Gen4 x16 uplink": adapter_spec.uplink.gbs}
print({k: f"{v:.2f} GB/s" for k, v in limits.items()})
rows, des_frames = [], []
for adapters in (1, 2):
    layout = {"topology.adapters": adapters, "topology.mirror_protection": "planar" if adapters == 2 else "drive",
              "workload": rf}
    sc = with_overrides(base, layout)
    counts = list(range(2, adapters * adapter_spec.max_drives + 1, adapters))  # the same number of drives behind each adapter
    for drives in counts:
        fast = evaluate(with_overrides(sc, {"topology.drives": drives}))
        rows.append({"adapters": adapters, "drives": drives, "mbps": fast.mbps, "bottleneck": fast.bottleneck})
    des_counts = [2, adapters * adapter_spec.max_drives] if SMALL else counts[::2]
    des_frames.append(sweep_frame(sc, {"topology.drives": des_counts}, workers=WORKERS).assign(adapters=adapters))
pcie = pd.DataFrame(rows)
pcie_des = pd.concat(des_frames)
pcie_des[["adapters", "topology.drives", "mbps", "mbps_ci95_lo", "mbps_ci95_hi", "bottleneck"]]

# %% [markdown]
# ## 4. The cheapest configuration over every IBM i drive model
#
# The planner enumerates every drive model, count, namespace count, layout and adapter the platform
# allows, screens them with the fast path and confirms the cheapest with the DES.

# %%
try:
    planned, no_plan = plan(req, verify_top=1 if SMALL else 3), None
except NoFeasiblePlan as exc:  # an answer too: it names the requirement that binds
    planned, no_plan = None, exc
if planned is not None:
    winner = planned.winner
    print(f"{planned.screened:,} candidates, {planned.fast_evaluated:,} through the fast path, {planned.des_runs} DES run(s), "
          f"{planned.wall_s:.1f} s")
    display(pd.DataFrame([{"configuration": c.label, "capex $": c.capex_usd, "usable TB": c.usable_tb, "max IOPS": c.max_iops,
                           "$/KIOPS": c.usd_per_kiops, "verified": c.verified, "bottleneck": c.bottleneck}
                          for c in planned.ranked[:8]]))
else:
    print("no feasible plan:", "; ".join(f"{field}: {message}" for field, message in no_plan.problems))

# %% [markdown]
# ## The chart

# %%
fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.1,
                    specs=[[{}, {"secondary_y": True}, {}]],
                    subplot_titles=(f"Highest rate within {slo.statistic} <= {slo.us:g} us ({DRIVE}, mirrored)",
                                    f"Namespaces at {chosen_drives or max(drive_counts)} drives, design rate (DES)",
                                    f"Sequential {rf['block_size_kib']:g} KiB reads: drives behind {ADAPTER}"))
for per_drive in namespace_counts:
    g = grid[grid.namespaces_per_drive == per_drive]
    fig.add_trace(go.Scatter(x=g.drives, y=g.max_iops_within_slo, mode="lines+markers", name=f"{per_drive} namespace(s)/drive"),
                  row=1, col=1)
fig.add_hline(y=req.design_iops, line={"dash": "dash", "color": "black"}, row=1, col=1,
              annotation_text=f"design {req.design_iops:,.0f} IOPS", annotation_position="top left")
if min_drives_capacity is not None:
    fig.add_vline(x=min_drives_capacity, line={"dash": "dot", "color": "grey"}, row=1, col=1,
                  annotation_text=f"{req.usable_tb:g} TB usable", annotation_position="top right")
fig.add_trace(go.Bar(x=namespaces.namespaces_per_drive.astype(str), y=namespaces.max_unit_busy_pct, name="busiest disk unit, % busy",
                     marker_color="#9ecae1"), row=1, col=2)
fig.add_trace(go.Scatter(
    x=namespaces.namespaces_per_drive.astype(str), y=namespaces.slo_latency_us, mode="lines+markers", name=f"{slo.statistic} latency, us",
    marker_color="#d62728", error_y={"type": "data", "symmetric": False,
                                     "array": namespaces.slo_latency_ci95_hi - namespaces.slo_latency_us,
                                     "arrayminus": namespaces.slo_latency_us - namespaces.slo_latency_ci95_lo}),
    row=1, col=2, secondary_y=True)
for adapters, colour in ((1, "#2ca02c"), (2, "#9467bd")):
    f, d = pcie[pcie.adapters == adapters], pcie_des[pcie_des.adapters == adapters]
    fig.add_trace(go.Scatter(x=f.drives, y=f.mbps / 1000, mode="lines", line={"color": colour},
                             name=f"{adapters} x {ADAPTER} (fast path)"), row=1, col=3)
    fig.add_trace(go.Scatter(x=d["topology.drives"], y=d.mbps / 1000, mode="markers", marker={"color": colour, "size": 9, "symbol": "diamond"},
                             name=f"{adapters} x {ADAPTER} (DES)"), row=1, col=3)
fig.add_hline(y=adapter_spec.uplink.gbs, line={"dash": "dash", "color": "grey"}, row=1, col=3,
              annotation_text=f"one {ADAPTER} x16 slot: {adapter_spec.uplink.gbs:.1f} GB/s", annotation_position="bottom right")
fig.update_xaxes(title_text="drives (mirrored pairs)", row=1, col=1)
fig.update_yaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
fig.update_xaxes(title_text="namespaces per drive", type="category", row=1, col=2)
fig.update_yaxes(title_text="% busy", row=1, col=2, secondary_y=False)
fig.update_yaxes(title_text="latency, us", row=1, col=2, secondary_y=True, rangemode="tozero")
fig.update_xaxes(title_text="drives", row=1, col=3)
fig.update_yaxes(title_text="GB/s", rangemode="tozero", row=1, col=3)
fig.update_layout(title=f"IBM i on Power10: {req.name} (flashplan, budget {BUDGET})", height=520, width=1600,
                  legend={"font": {"size": 10}})
fig.show()



export_png(fig, NOTEBOOK)

# %% [markdown]
# ## Conclusions
#
# Built from the results above (rerun the notebook and they follow the numbers).

# %% tags=["conclusions"]
lines = ["### Conclusions"]
if chosen_drives is None:
    best = grid.loc[grid.max_iops_within_slo.idxmax()]
    lines.append(f"* **No {DRIVE} configuration up to {max(drive_counts)} drives meets the requirement:** the best reaches "
                 f"{best.max_iops_within_slo:,.0f} IOPS within the SLO ({int(best.drives)} drives, bottleneck `{best.bottleneck}`) "
                 f"against {req.design_iops:,.0f} needed; see the planner's answer below for other drive models.")
else:
    row = grid[(grid.drives == chosen_drives) & (grid.namespaces_per_drive == enough_ns[chosen_drives])].iloc[0]
    binding = "capacity" if min_drives_capacity >= min_drives_rate else "the rate"
    lines.append(
        f"* **Drives:** {min_drives_rate} mirrored {DRIVE} drives sustain the design rate of {req.design_iops:,.0f} IOPS within "
        f"{slo.statistic} <= {slo.us:g} us; {req.usable_tb:g} TB usable needs {min_drives_capacity}. {binding.capitalize()} binds: "
        f"**{chosen_drives} drives**, with {enough_ns[chosen_drives]} namespace(s) per drive or more, reach "
        f"{row.max_iops_within_slo:,.0f} IOPS within the SLO ({row.max_iops_within_slo / req.design_iops - 1:+.0%} headroom "
        f"over the design rate), {row.usable_tb:.1f} TB usable.")
few, many = namespaces.iloc[0], namespaces.iloc[-1]
lines.append(
    f"* **Namespaces:** going from {few.namespaces_per_drive} to {many.namespaces_per_drive} namespaces per drive lowers the busiest "
    f"disk unit from {few.max_unit_busy_pct:.0f}% to {many.max_unit_busy_pct:.0f}% busy, while the {slo.statistic} latency moves "
    f"from {few.slo_latency_us:,.0f} to {many.slo_latency_us:,.0f} us ({many.slo_latency_us / few.slo_latency_us - 1:+.0%}). "
    + ("Namespaces add disk arms (seed 001's '+ namespaces = + bras disque') but at this load they mainly spread the busy %, "
       "not the response time." if abs(many.slo_latency_us / few.slo_latency_us - 1) < 0.1 else
       "At this load more disk arms do shorten the response time."))
short_ns = grid[grid.namespaces_per_drive == 1].set_index("drives").max_iops_within_slo
best_ns = grid.groupby("drives").max_iops_within_slo.max()
gap = (1 - short_ns / best_ns).max()
lines.append(f"* With one namespace per drive the rate within the SLO is at most {gap:.1%} below the best namespace count "
             f"(each disk unit keeps {IBMI_NAMESPACE_QUEUE_DEPTH} I/Os in flight: namespaces only add throughput once a drive "
             "needs more than that).")
ceiling = grid[grid.drives == max(drive_counts)].max_iops_within_slo.max()
cpu_bound = grid[grid.bottleneck == "host_cpu"]
if not cpu_bound.empty:
    lines.append(f"* **Host CPU ceiling:** from {int(cpu_bound.drives.min())} drives the Power10 LPAR's CPU is the bottleneck: "
                 f"the rate within the SLO stops at {ceiling:,.0f} IOPS however many drives are added.")
else:
    lines.append(f"* **Ceiling:** {max(drive_counts)} drives reach {ceiling:,.0f} IOPS within the SLO, bottleneck "
                 f"`{grid[grid.drives == max(drive_counts)].bottleneck.iloc[0]}`.")
one = pcie[pcie.adapters == 1]
uplink_bound = one[one.bottleneck.str.contains("uplink")]
first_uplink = int(uplink_bound.drives.min()) if not uplink_bound.empty else None
per_drive_gbs = one.iloc[0].mbps / 1000 / one.iloc[0].drives
two_max = pcie[pcie.adapters == 2].mbps.max() / 1000
lines.append(
    f"* **PCIe and the JBOF adapter:** one {DRIVE} reads {per_drive_gbs:.1f} GB/s sequentially, held by its own read bandwidth "
    f"({drive_spec.read_bw_gbs:g} GB/s) below its x4 link ({drive_spec.link.gbs:.1f} GB/s), so the drive's link is never the limit. "
    + (f"Behind one {ADAPTER} the x16 slot ({adapter_spec.uplink.gbs:.1f} GB/s) becomes the limit from {first_uplink} drives: "
       f"drives beyond {first_uplink - 1} add capacity, not bandwidth. "
       if first_uplink else f"One {ADAPTER}'s x16 slot never binds up to {adapter_spec.max_drives} drives. ")
    + f"Two adapters (planar mirroring) reach {two_max:.1f} GB/s with {2 * adapter_spec.max_drives} drives.")
if planned is not None:
    w_des = winner.des
    cheaper = pd.Series([c.stage for c in planned.cheaper_rejected], dtype=object).value_counts()
    stat = w_des.latency_p99_us if slo.statistic == "p99" else w_des.latency_mean_us
    lines.append(
        f"* **Cheapest over every IBM i drive model (planner):** {winner.label}, ${winner.capex_usd:,.0f} "
        f"({winner.usable_tb:.1f} TB usable, {winner.headroom_pct(req.target_iops):.0f}% headroom over the target); the DES "
        f"confirms {slo.statistic} {stat.value:,.0f} us (95% CI {stat.ci95[0]:,.0f} .. {stat.ci95[1]:,.0f}) at the design rate, "
        f"bottleneck `{winner.bottleneck}`. "
        + (f"The {int(cheaper.sum())} cheaper candidates fell at: " + ", ".join(f"{stage} ({n})" for stage, n in cheaper.items()) + "."
           if len(cheaper) else "No cheaper candidate exists."))
else:
    lines.append("* **Planner:** no feasible configuration over every IBM i drive model: "
                 + "; ".join(f"`{field}`: {message}" for field, message in no_plan.problems))
lines.append(budget_note(BUDGET))
conclusions = "\n".join(lines)
display(Markdown(conclusions))
