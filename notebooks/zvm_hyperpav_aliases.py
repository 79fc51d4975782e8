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
# # z/VM NVMe EDEVs: how many HyperPAV aliases, and what does CP spend?
#
# Seed 003 (IBM z/VM performance report, *NVMe EDEVs*) measured z/VM on a z14 LPAR with four cores,
# EDEVs on an Intel P4510 4 TB behind the IBM Adapter for NVMe. A base EDEV runs one I/O at a time;
# each HyperPAV alias attached to SYSTEM lets CP start one more. Table 2 adds aliases 0 to 11 under
# twenty CMS guests running IO3390 (4 KiB per I/O, no delay): writes saturate the drive within a few
# aliases, reads keep scaling. Table 3 pages heavily (VIRSTOR) over four base EDEVs and 59 aliases, with
# 217% of a core in CP. CP spends about 12-14 us per transfer (Table 1).
#
# This notebook asks, for a z/VM system architect:
#
# 1. **Minidisk I/O:** how many aliases does a base EDEV need before the drive, not the subchannels, limits?
# 2. **Paging:** how many aliases keep paging I/O within a response-time objective as the paging rate grows,
#    and where does CP's CPU, not the EDEVs, stop the growth?
# 3. **CP CPU cost** of each, against the LPAR's four cores.
#
# Dense curves come from the analytic fast path (`sim.analytic.evaluate`), checked by DES runs
# (`sim.simulate`, `sim.plan.sweep.sweep_frame`) with 95% confidence intervals; the seed's measured points
# come from the calibration records, for comparison only. `FLASHPLAN_NOTEBOOK_BUDGET=small` runs fewer,
# shorter DES runs (the tests use it); `full` is the default.

# %%

import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from calibration.evaluate import metric_of
from calibration.records import SCENARIO_DIR, load_records
from models import load_scenario, lookup, with_overrides
from models.requirements import load_requirements
from sim import simulate
from sim.analytic import evaluate
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings
from sim.plan.planner import DELIVERY_TOLERANCE, NoFeasiblePlan, plan
from sim.plan.sweep import default_workers, sweep_frame

NOTEBOOK = "zvm_hyperpav_aliases"
BUDGET = notebook_budget()
SMALL = BUDGET == "small"
RUN = run_settings(BUDGET)
WORKERS = 1 if SMALL else default_workers()
run_overrides = {f"run.{k}": v for k, v in RUN.items()}
# paging I/Os move 7 to 80 pages each and cost the DES several times more per I/O: shorter runs in small
PAGING_RUN = {**RUN, "max_ios": 10_000, "warmup_ios": 1_000} if SMALL else RUN

REPO = SCENARIO_DIR.parents[1]
records = {r.id: r for r in load_records(only="S4")}
minidisk = load_scenario(SCENARIO_DIR / "s4_minidisk.yaml", run_overrides)
paging = load_scenario(SCENARIO_DIR / "s4_paging.yaml", {f"run.{k}": v for k, v in PAGING_RUN.items()})
# the planner verifies with its own short runs (VerifySettings); small shortens them further
paging_req = load_requirements(REPO / "examples" / "plan" / "zvm_paging.toml",
                               {f"verify.{k}": v for k, v in PAGING_RUN.items()} if SMALL else None)
cores = lookup("hosts", minidisk.topology.host.model).cores
print(f"budget: {BUDGET}; LPAR {minidisk.topology.host.model}: {cores} cores")
print(f"minidisk: {minidisk.name}; {minidisk.workload.jobs} guests, {minidisk.workload.block_size_kib:g} KiB per I/O")
print(f"paging: {paging.name}; {paging.workload.rate_iops:,.0f} SSCH/s, {paging.topology.base_devices} base EDEVs")


def cp_cores(fast):
    """CP CPU the fast path predicts, in cores busy (CPU us per I/O x I/O rate)."""
    return fast.cpu_us_per_io * fast.iops / 1e6

# %% [markdown]
# ## 1. Minidisk I/O: aliases per base EDEV
#
# One base EDEV, twenty IO3390 guests. The fast path traces 0 to 24 aliases; the DES confirms some; the
# crosses are seed 003's Table 2 (Blks/sec / 8 blocks per I/O, from the calibration records).

# %%
alias_range = list(range(25))
rows = []
for label, read_fraction in (("writes", 0.0), ("reads", 1.0)):
    for aliases in alias_range:
        fast = evaluate(with_overrides(minidisk, {"topology.aliases": aliases, "workload.read_fraction": read_fraction}))
        rows.append({"arc": label, "aliases": aliases, "iops": fast.iops, "latency_mean_us": fast.latency_mean_us,
                     "cp_cores": cp_cores(fast), "cpu_us_per_io": fast.cpu_us_per_io, "bottleneck": fast.bottleneck})
minidisk_fast = pd.DataFrame(rows)

des_aliases = [0, 3, 11] if SMALL else [0, 1, 2, 3, 5, 7, 9, 11, 15, 19]
minidisk_des = sweep_frame(minidisk, {"topology.aliases": des_aliases, "workload.read_fraction": [0.0, 1.0]}, workers=WORKERS)
minidisk_des["arc"] = minidisk_des["workload.read_fraction"].map({0.0: "writes", 1.0: "reads"})
minidisk_des["cp_cores"] = minidisk_des.cpu_us_per_io * minidisk_des.iops / 1e6

measured = pd.DataFrame([
    {"arc": "writes" if r.scenario.set["workload.read_fraction"] == 0 else "reads",
     "aliases": r.scenario.set["topology.aliases"], "iops": r.measured}
    for r in records.values()
    if r.id.startswith("s4.table2.") and r.metric == "iops" and r.scenario is not None and "topology.aliases" in r.scenario.set])
minidisk_des[["arc", "topology.aliases", "iops", "iops_ci95_lo", "iops_ci95_hi", "latency_mean_us", "cp_cores", "bottleneck"]]

# %% [markdown]
# How many aliases each arc needs: the fewest that reach 95% of the best throughput over the range,
# and what limits beyond that point.

# %%
def aliases_needed(curve, share=0.95):
    """Fewest aliases whose throughput is within ``share`` of the best on the curve, and that point."""
    enough = curve[curve.iops >= share * curve.iops.max()]
    return enough.iloc[0]


need = {arc: aliases_needed(minidisk_fast[minidisk_fast.arc == arc]) for arc in ("writes", "reads")}
pd.DataFrame(need).T[["aliases", "iops", "latency_mean_us", "cp_cores", "cpu_us_per_io", "bottleneck"]]

# %% [markdown]
# ## 2. Paging: aliases against the paging rate
#
# Seed 003's paging stream (Table 3: 20,878 read SSCHs/s of 7 pages, 1,960 write SSCHs/s of 80 pages)
# over four base EDEVs, grown by a factor, with 0 to 32 aliases. The objective is the requirement file
# `examples/plan/zvm_paging.toml` (mean paging I/O time). First, how far CP's CPU lets the rate grow:

# %%
slo_us = paging_req.latency_slo.us
seed_rate = paging.workload.rate_iops


def paging_at(growth, aliases, bases=None):
    overrides = {"workload.rate_iops": seed_rate * growth, "topology.aliases": aliases}
    if bases is not None:
        overrides["topology.base_devices"] = bases
    return with_overrides(paging, overrides)


def max_growth(aliases, steps=20):
    """Largest growth of the seed's paging rate that stays stable and within the SLO (fast path, bisection)."""
    lo, hi = 0.0, 1.0
    while True:  # find an upper end that fails
        fast = evaluate(paging_at(hi, aliases))
        if not (fast.stable and fast.latency_mean_us <= slo_us):
            break
        lo, hi = hi, hi * 2
    for _ in range(steps):
        mid = (lo + hi) / 2
        fast = evaluate(paging_at(mid, aliases))
        lo, hi = (mid, hi) if fast.stable and fast.latency_mean_us <= slo_us else (lo, mid)
    return lo


top_growth = max_growth(paging.topology.aliases)
at_top = evaluate(paging_at(top_growth, paging.topology.aliases))
print(f"with {paging.topology.aliases} aliases the paging rate can grow {top_growth:.2f}x ({seed_rate * top_growth:,.0f} SSCH/s) "
      f"within {slo_us:g} us mean; bottleneck there: {at_top.bottleneck}, CP {cp_cores(at_top):.2f} of {cores} cores")

growths = sorted({1.0, 1.25, round(0.5 * (1 + top_growth), 2), round(0.98 * top_growth, 2)})
ALIAS_SLACK = 0.10  # "enough" aliases: mean paging I/O time within 10% of what the seed's 59 aliases give
rows = []
for growth in growths:
    for aliases in range(paging.topology.aliases + 1):
        fast = evaluate(paging_at(growth, aliases))
        rows.append({"growth": growth, "rate": seed_rate * growth, "aliases": aliases, "stable": fast.stable,
                     "latency_mean_us": fast.latency_mean_us if fast.stable else float("inf"),
                     "cp_cores": cp_cores(fast) if fast.stable else float("nan"), "bottleneck": fast.bottleneck})
paging_fast = pd.DataFrame(rows)
best_latency = paging_fast.groupby("growth").latency_mean_us.transform("min")
within = paging_fast[(paging_fast.latency_mean_us <= slo_us) & (paging_fast.latency_mean_us <= (1 + ALIAS_SLACK) * best_latency)]
paging_need = within.groupby("growth").aliases.min().rename("aliases needed").to_frame()
paging_need["mean latency there, us"] = [within[(within.growth == g) & (within.aliases == a)].latency_mean_us.iloc[0]
                                         for g, a in paging_need.iloc[:, 0].items()]
paging_need["with 0 aliases, us"] = paging_fast[paging_fast.aliases == 0].set_index("growth").latency_mean_us
paging_need

# %% [markdown]
# CP's CPU over the whole range of paging rates (the seed's 59 aliases):

# %%
paging_cpu = pd.DataFrame([{"growth": g, "rate": seed_rate * g, "cp_cores": cp_cores(evaluate(paging_at(g, paging.topology.aliases)))}
                           for g in [top_growth * i / 12 for i in range(1, 13)]])
cp_us_per_ssch = evaluate(paging).cpu_us_per_io
print(f"CP: {cp_us_per_ssch:.1f} us per paging SSCH; {cores} cores saturate at {cores * 1e6 / cp_us_per_ssch:,.0f} SSCH/s")

# %% [markdown]
# The DES checks each answer: the seed's own configuration (59 aliases) and the fewest-alias answers at
# the seed's rate and at the highest growth. A DES run meets the objective when it is stable, delivers
# the offered rate (within the planner's `DELIVERY_TOLERANCE`) and its mean is within the objective; where
# the fast path's answer fails that, the DES tries more aliases (doubling up to the seed's 59; the small
# budget goes straight to 59).

# %%
def des_row(growth, aliases):
    """One DES run of the paging stream: delivered rate, latency with its CI, CP cores, subchannels busy, verdict."""
    result = simulate(paging_at(growth, aliases))
    cp, cp_ci = metric_of(result, "cpu_cores")
    offered = seed_rate * growth
    meets = (not result.stop_reason.startswith("unstable") and result.iops.ci95[1] >= offered * (1 - DELIVERY_TOLERANCE)
             and result.latency_mean_us.value <= slo_us)
    return {"growth": growth, "aliases": aliases, "offered": offered, "ssch_per_s": result.iops.value,
            "latency_mean_us": result.latency_mean_us.value, "latency_ci95_lo": result.latency_mean_us.ci95[0],
            "latency_ci95_hi": result.latency_mean_us.ci95[1], "latency_p99_us": result.latency_p99_us.value,
            "cp_cores": cp, "cp_cores_ci95": cp_ci,
            "subchannels_busy": result.utilization["edev.subchannels"] * (result.scenario.topology.base_devices + aliases),
            "meets_objective": meets, "bottleneck": result.bottleneck, "stop_reason": result.stop_reason}


def des_aliases_needed(growth, start):
    """Fewest aliases, from the fast path's answer upwards (doubling), whose DES run meets the objective; and every run tried."""
    tried, aliases = [], start
    while True:
        tried.append(des_row(growth, aliases))
        if tried[-1]["meets_objective"]:
            return aliases, tried
        if aliases >= paging.topology.aliases:
            return None, tried
        aliases = paging.topology.aliases if SMALL else min(paging.topology.aliases, 2 * aliases + 1)


seed_config = des_row(1.0, paging.topology.aliases)
verified = {}
rows = [seed_config]
for growth in (1.0, growths[-1]):
    answer, tried = des_aliases_needed(growth, int(paging_need.loc[growth].iloc[0]))
    verified[growth] = answer
    rows.extend(tried)
paging_des = pd.DataFrame(rows)
paging_des

# %% [markdown]
# The planner's answer for the same requirement (every drive count, base EDEV count and alias count it
# allows, cheapest first):

# %%
try:
    planned, no_plan = plan(paging_req, verify_top=1 if SMALL else 3), None
except NoFeasiblePlan as exc:  # an answer too: it names the requirement that binds
    planned, no_plan = None, exc
if planned is not None:
    winner = planned.winner
    print(f"{planned.screened} candidates, {planned.des_runs} DES run(s), {planned.wall_s:.1f} s: {winner.label}, ${winner.capex_usd:,.0f}")
    display(pd.DataFrame([{"configuration": c.label, "capex $": c.capex_usd, "verified": c.verified, "bottleneck": c.bottleneck}
                          for c in planned.ranked[:6]]))
else:
    print("no feasible plan:", "; ".join(f"{field}: {message}" for field, message in no_plan.problems))

# %% [markdown]
# ## The chart

# %%
COLOURS = {"writes": "#ff7f0e", "reads": "#1f77b4"}
fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08, subplot_titles=(
    "Minidisk IO3390 (1 base EDEV): I/O rate vs aliases", "Paging (4 base EDEVs): mean I/O time vs aliases",
    f"CP CPU against the LPAR's {cores} cores"))
for arc, colour in COLOURS.items():
    f, d, m = (minidisk_fast[minidisk_fast.arc == arc], minidisk_des[minidisk_des.arc == arc], measured[measured.arc == arc])
    fig.add_trace(go.Scatter(x=f.aliases, y=f.iops, mode="lines", line={"color": colour}, name=f"{arc} (fast path)"), row=1, col=1)
    fig.add_trace(go.Scatter(x=d["topology.aliases"], y=d.iops, mode="markers", marker={"color": colour, "size": 9, "symbol": "diamond"},
                             error_y={"type": "data", "symmetric": False, "array": d.iops_ci95_hi - d.iops, "arrayminus": d.iops - d.iops_ci95_lo},
                             name=f"{arc} (DES)"), row=1, col=1)
    fig.add_trace(go.Scatter(x=m.aliases, y=m.iops, mode="markers", marker={"color": colour, "size": 10, "symbol": "x"},
                             name=f"{arc}: seed 003 Table 2"), row=1, col=1)
    fig.add_trace(go.Scatter(x=f.iops, y=f.cp_cores, mode="lines", line={"color": colour, "dash": "dot" if arc == "reads" else "solid"},
                             name=f"minidisk {arc}: CP cores"), row=1, col=3)
for growth in growths:
    g = paging_fast[(paging_fast.growth == growth) & paging_fast.stable]
    fig.add_trace(go.Scatter(x=g.aliases, y=g.latency_mean_us, mode="lines", name=f"paging x{growth:g} ({seed_rate * growth:,.0f} SSCH/s)"),
                  row=1, col=2)
fig.add_trace(go.Scatter(x=paging_des.aliases, y=paging_des.latency_mean_us, mode="markers", name="paging (DES)",
                         marker={"color": "black", "size": 9, "symbol": "diamond"},
                         error_y={"type": "data", "symmetric": False, "array": paging_des.latency_ci95_hi - paging_des.latency_mean_us,
                                  "arrayminus": paging_des.latency_mean_us - paging_des.latency_ci95_lo}), row=1, col=2)
fig.add_hline(y=slo_us, line={"dash": "dash", "color": "grey"}, row=1, col=2, annotation_text=f"objective {slo_us:g} us")
fig.add_trace(go.Scatter(x=paging_cpu.rate, y=paging_cpu.cp_cores, mode="lines+markers", line={"color": "#2ca02c"},
                         name="paging: CP cores"), row=1, col=3)
seed_cp = records["s4.table3.cp_busy"].measured
fig.add_trace(go.Scatter(x=[seed_rate], y=[seed_cp], mode="markers", marker={"color": "#2ca02c", "size": 11, "symbol": "x"},
                         name="paging: seed 003 Table 3"), row=1, col=3)
fig.add_hline(y=cores, line={"dash": "dash", "color": "grey"}, row=1, col=3, annotation_text=f"{cores} cores")
fig.update_xaxes(title_text="HyperPAV aliases", row=1, col=1)
fig.update_yaxes(title_text="I/Os per second", rangemode="tozero", row=1, col=1)
fig.update_xaxes(title_text="HyperPAV aliases", row=1, col=2)
fig.update_yaxes(title_text="mean paging I/O time, us", type="log", row=1, col=2)
fig.update_xaxes(title_text="I/Os (SSCHs) per second", row=1, col=3)
fig.update_yaxes(title_text="CP CPU, cores busy", rangemode="tozero", row=1, col=3)
fig.update_layout(title=f"z/VM NVMe EDEVs on a z14 LPAR: HyperPAV aliases and CP CPU (flashplan, budget {BUDGET})",
                  height=520, width=1600, legend={"font": {"size": 10}})
fig.show()



export_png(fig, NOTEBOOK)

# %% [markdown]
# ## Conclusions
#
# Built from the results above (rerun the notebook and they follow the numbers).

# %% tags=["conclusions"]
w, r = need["writes"], need["reads"]
best_w = minidisk_fast[minidisk_fast.arc == "writes"].iops.max()
best_r = minidisk_fast[minidisk_fast.arc == "reads"].iops.max()
zero = minidisk_fast[minidisk_fast.aliases == 0].set_index("arc")


def paging_bullet(growth, title):
    """What the fast path and the DES say about the aliases the paging stream needs at ``growth``."""
    fast_answer = int(paging_need.loc[growth].iloc[0])
    runs = paging_des[(paging_des.growth == growth) & (paging_des.index > 0)]
    head = f"* **{title} {seed_rate * growth:,.0f} SSCH/s:** "
    answer = verified[growth]
    if answer is None:
        last = runs.iloc[-1]
        return (head + f"the fast path answers {fast_answer} alias(es), but no DES run up to {paging.topology.aliases} aliases meets "
                f"the {slo_us:g} us objective (with {int(last.aliases)}: {last.ssch_per_s:,.0f} of {last.offered:,.0f} SSCH/s "
                f"delivered, mean {last.latency_mean_us:,.0f} us, bottleneck `{last.bottleneck}`; {last.stop_reason}). "
                "The fast path is optimistic here.")
    run = runs[runs.aliases == answer].iloc[0]
    first = runs.iloc[0]
    missed = (f"the fast path's {fast_answer} gave {first.latency_mean_us:,.0f} us mean, {first.ssch_per_s:,.0f} of "
              f"{run.offered:,.0f} SSCH/s delivered")
    if answer == fast_answer:
        verdict = "the DES confirms it"
    elif SMALL:
        verdict = f"the DES does not ({missed}); it meets the objective with {answer} (the small budget searches no further)"
    else:
        verdict = f"the DES needs {answer} ({missed})"
    return (head + f"the fast path needs {fast_answer} alias(es) on {paging.topology.base_devices} base EDEVs (mean within "
            f"{ALIAS_SLACK:.0%} of its best) and {verdict}: mean {run.latency_mean_us:,.0f} us (95% CI {run.latency_ci95_lo:,.0f} .. "
            f"{run.latency_ci95_hi:,.0f}), p99 {run.latency_p99_us:,.0f} us, CP {run.cp_cores:.2f} of {cores} cores"
            + (f" (seed 003 Table 3: {seed_cp:.2f} cores; the seed's {paging.topology.aliases} aliases give "
               f"{seed_config['latency_mean_us']:,.0f} us)." if growth == 1.0 else "."))


seed_service_us = records["s4.table3.service_time"].measured
little_subchannels = seed_rate * seed_service_us / 1e6
per_alias = (r.iops - zero.loc["reads", "iops"]) / r.aliases if r.aliases else 0.0
lines = [
    "### Conclusions",
    f"* **Minidisk writes** need **{int(w.aliases)} alias(es)** per base EDEV: from {zero.loc['writes', 'iops']:,.0f} I/O/s with none "
    f"they reach {w.iops:,.0f} I/O/s, 95% of the {best_w:,.0f} ceiling, where `{w.bottleneck}` limits; more aliases add nothing.",
    f"* **Minidisk reads** need **{int(r.aliases)} aliases**: each adds about {per_alias:,.0f} I/O/s (one base EDEV alone gives "
    f"{zero.loc['reads', 'iops']:,.0f}) up to {r.iops:,.0f} I/O/s, 95% of {best_r:,.0f}, limited by `{r.bottleneck}`; "
    f"with {minidisk.workload.jobs} guests no more than {minidisk.workload.jobs - 1} aliases can ever be in use.",
    f"* **CP CPU for minidisk I/O:** {w.cpu_us_per_io:.1f} us per I/O, so {w.cp_cores:.2f} of the {cores} cores at the write "
    f"ceiling and {r.cp_cores:.2f} at the read answer (seed 003 Table 1 measured "
    f"{records['s4.table1.NV020000.cp_cpu'].measured:g} / {records['s4.table1.NV020100.cp_cpu'].measured:g} us per FCX239 transfer, "
    "write / read; Table 2's runs of the same names count 1.19 transfers per I/O).",
    paging_bullet(1.0, "Paging at the seed's"),
    f"* **Paging growth:** at {cp_us_per_ssch:.0f} us of CP per paging SSCH the {cores} cores saturate at "
    f"{cores * 1e6 / cp_us_per_ssch:,.0f} SSCH/s; on the fast path the {slo_us:g} us objective holds up to {top_growth:.2f}x the "
    f"seed's rate ({cp_cores(at_top):.2f} cores busy, bottleneck `{at_top.bottleneck}`)"
    + ("; CP's CPU, not the EDEVs, stops the growth." if at_top.bottleneck == "host_cpu" else "."),
    paging_bullet(growths[-1], "Paging grown to"),
    f"* **Little's law cross-check:** seed 003 measured a {seed_service_us / 1000:g} ms paging volume service time; the seed's "
    f"rate x that time keeps {little_subchannels:.0f} subchannels busy, i.e. {paging.topology.base_devices} base EDEVs + "
    f"{max(0.0, little_subchannels - paging.topology.base_devices):.0f} aliases at least. The model's paging I/O takes "
    f"{seed_config['latency_mean_us']:,.0f} us with {seed_config['subchannels_busy']:.1f} subchannels busy"
    + (" - close to the measurement." if abs(seed_config["latency_mean_us"] / seed_service_us - 1) <= 0.25 else
       f" ({seed_config['latency_mean_us'] / seed_service_us:.1f}x the measured time): until that is calibrated, size paging "
       "aliases by the measured service time, not by the model's count."),
    f"* **Planner (cheapest EDEV configuration for `zvm_paging.toml`, {paging_req.growth_headroom_pct:g}% growth):** "
    + (f"{winner.label}, ${winner.capex_usd:,.0f}, bottleneck `{winner.bottleneck}`." if planned is not None else
       "no feasible configuration: " + "; ".join(f"`{field}`: {message}" for field, message in no_plan.problems)),
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
