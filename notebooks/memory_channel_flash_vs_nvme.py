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
# # Memory-channel flash or NVMe drives: scaling, and where the CPU cores run out
#
# Seed 002 (Lenovo Press, *Analyzing the Performance of Lenovo DDR3 eXFlash DIMMs*) measured up to 32
# eXFlash DIMMs (400 GB, one per DDR3 channel) in a System x3850 X6 with four E7-4890 v2 books of 15
# cores, one fio instance and one kernel driver thread per DIMM: "performance scaled linearly up to 16
# DIMMs. The performance at 32 DIMMs was slightly less than linear because of the CPU cores becoming fully
# used by the fio tool and the eXFlash DIMM device driver threads."
#
# This notebook puts the same server behind two kinds of flash and asks:
#
# 1. **Scaling:** how do IOPS grow with the number of DIMMs, and with the number of NVMe drives?
# 2. **CPU:** at what device count do the host's cores saturate, with 1, 2 or 4 books (15, 30, 60 cores),
#    and how much application CPU per I/O would make 32 DIMMs CPU-bound on the full server?
# 3. **Latency:** what does one device answer at queue depth 1?
# 4. **Queue depth:** how do one device's IOPS and latency percentiles move from queue depth 1 to 256?
#
# The NVMe side is a Samsung PM1733 1.92 TB per device, each on its own PCIe Gen3 x4 link (the catalog's
# one-drive carrier stands in for an x86 U.2 slot: an assumption) under the Linux NVMe driver. Every device
# gets the seed's load generator: one job per device, 4 KiB random reads at queue depth 32.
#
# Dense curves come from the analytic fast path (`sim.analytic.evaluate`), checked by DES runs
# (`sim.plan.sweep.sweep_frame`, `sim.simulate`) with 95% confidence intervals; the seed's measured 1-4 DIMM
# figures come from the calibration records, for comparison only. `FLASHPLAN_NOTEBOOK_BUDGET=small` runs
# fewer, shorter DES runs (the tests use it); `full` is the default.

# %%

import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from app.charts import qd_sweep_chart
from calibration.evaluate import fitted_workload_value
from calibration.ext.published import published_points
from calibration.records import SCENARIO_DIR, load_records
from models import load_scenario, lookup, scenario_from_data, with_overrides
from models.requirements import PLATFORMS
from sim import simulate
from sim.analytic import evaluate
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings
from sim.plan.qd_sweep import qd_sweep
from sim.plan.sweep import default_workers, sweep_frame

NOTEBOOK = "memory_channel_flash_vs_nvme"
BUDGET = notebook_budget()
SMALL = BUDGET == "small"
RUN = run_settings(BUDGET)
WORKERS = 1 if SMALL else default_workers()
QUEUE_DEPTH = 32  # per device, as the calibration reproduces seed 002's Table 4

records = {r.id: r for r in load_records(only="S3")}
dimm = load_scenario(SCENARIO_DIR / "s3_exflash.yaml",
                     {**{f"run.{k}": v for k, v in RUN.items()}, "workload.queue_depth": QUEUE_DEPTH})
host_model = dimm.topology.host.model
server = lookup("hosts", host_model)
nvme = scenario_from_data({
    "name": "PM1733 NVMe drives, one per PCIe Gen3 x4 slot, Linux NVMe driver",
    "topology": {"kind": "direct_nvme", "host": {"model": host_model, "stack": "linux_nvme"}, "drive": "PM1733-1.92TB",
                 "drives": 1, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 1, "layout": "jbod"},
    "workload": dimm.workload.model_dump(mode="json"),
    "run": dimm.run.model_dump(mode="json"),
})
print(f"budget: {BUDGET}; host {host_model}: {server.cores} cores; {QUEUE_DEPTH} I/Os outstanding per device")

KINDS = {"eXFlash DIMMs": (dimm, "topology.dimms"), "NVMe drives": (nvme, "topology.drives")}
COLOURS = {"eXFlash DIMMs": "#9467bd", "NVMe drives": "#1f77b4"}
MAX_DEVICES = PLATFORMS["x86_exflash"].max_devices  # seed 002: up to 32 DIMMs (12.8 TB) in an x3850 X6


def with_devices(kind, count, extra=None):
    """The scenario of ``kind`` with ``count`` devices, one job per device (and one carrier per NVMe drive)."""
    base, path = KINDS[kind]
    overrides = {path: count, "workload.jobs": count, **(extra or {})}
    if kind == "NVMe drives":
        overrides["topology.adapters"] = count
    return with_overrides(base, overrides)

# %% [markdown]
# ## 1. Scaling with the device count (the full server, 60 cores)

# %%
device_counts = list(range(1, MAX_DEVICES + 1))
rows = []
for kind in KINDS:
    for count in device_counts:
        fast = evaluate(with_devices(kind, count))
        rows.append({"kind": kind, "devices": count, "iops": fast.iops, "latency_mean_us": fast.latency_mean_us,
                     "cpu_cores": fast.cpu_us_per_io * fast.iops / 1e6, "cpu_us_per_io": fast.cpu_us_per_io,
                     "bottleneck": fast.bottleneck})
scaling = pd.DataFrame(rows)
one = scaling[scaling.devices == 1].set_index("kind").iops
scaling["efficiency"] = scaling.iops / (scaling.devices * scaling.kind.map(one))

des_counts = [1, 4, 16, 32] if SMALL else [1, 2, 4, 8, 12, 16, 24, 32]
frames = []
for kind, (base, path) in KINDS.items():
    factors = {path: des_counts, "workload.jobs": des_counts}
    if kind == "NVMe drives":
        factors["topology.adapters"] = des_counts
    frames.append(sweep_frame(base, factors, mode="zip", workers=WORKERS).assign(kind=kind, devices=des_counts))
scaling_des = pd.concat(frames)
scaling_des["cpu_cores"] = scaling_des.cpu_us_per_io * scaling_des.iops / 1e6
scaling_des[["kind", "devices", "iops", "iops_ci95_lo", "iops_ci95_hi", "latency_mean_us", "cpu_cores", "bottleneck"]]

# %% [markdown]
# Seed 002's Table 4 (4 KiB random reads, 1, 2 and 4 DIMMs; the 8-32 DIMM cells are withheld) beside
# the DES:

# %%
measured = pd.DataFrame([{"devices": r.scenario.set["topology.dimms"], "measured_iops": r.measured}
                         for r in records.values() if r.id.startswith("s3.table4.rr.4k.")])
measured.merge(scaling_des[scaling_des.kind == "eXFlash DIMMs"][["devices", "iops"]], on="devices", how="left")

# %% [markdown]
# ## 2. Where the CPU cores saturate
#
# The x3850 X6 grows by books of 15 cores. The fast path sweeps the device count on one, two and four
# books; the cores count as saturated once they are `CPU_SATURATED` busy on average.

# %%
CORE_OPTIONS = sorted({server.cores // 4, server.cores // 2, server.cores})
CPU_SATURATED = 0.9
rows = []
for kind in KINDS:
    for n_cores in CORE_OPTIONS:
        for count in device_counts:
            fast = evaluate(with_devices(kind, count, {"topology.host.cores": n_cores}))
            rows.append({"kind": kind, "cores": n_cores, "devices": count, "iops": fast.iops,
                         "cpu_cores": fast.cpu_us_per_io * fast.iops / 1e6, "bottleneck": fast.bottleneck})
cores_sweep = pd.DataFrame(rows)
cores_sweep["efficiency"] = cores_sweep.iops / (cores_sweep.devices * cores_sweep.kind.map(one))
cores_sweep["cpu_busy"] = cores_sweep.cpu_cores / cores_sweep.cores
saturated = cores_sweep[cores_sweep.cpu_busy >= CPU_SATURATED].groupby(["kind", "cores"]).devices.min()
at_max = cores_sweep[cores_sweep.devices == MAX_DEVICES].set_index(["kind", "cores"])
saturation = (cores_sweep[["kind", "cores"]].drop_duplicates().set_index(["kind", "cores"])
              .assign(first_saturated_devices=saturated, cpu_busy_at_max=at_max.cpu_busy,
                      efficiency_at_max=at_max.efficiency).reset_index())
saturation

# %% [markdown]
# The model charges the eXFlash driver's CPU per I/O, not the application's (fio's, in seed 002). Whatever
# the application keeps busy is lost to the driver threads. How much application CPU per I/O would leave
# too few cores for 32 DIMMs, as seed 002 saw? The break-even follows from the DES result; a DES run with
# half the cores the driver needs left to it (the rest taken by a heavier application) shows the effect.

# %%
dimms32 = scaling_des[(scaling_des.kind == "eXFlash DIMMs") & (scaling_des.devices == MAX_DEVICES)].iloc[0]
driver_us = dimms32.cpu_us_per_io
driver_cores = dimms32.cpu_cores
break_even_app_us = (server.cores - driver_cores) * 1e6 / dimms32.iops
# half the cores the driver needs (only meaningful when it needs at least two: a lighter driver never runs short)
cores_left = int(driver_cores // 2)
squeezed = simulate(with_devices("eXFlash DIMMs", MAX_DEVICES, {"topology.host.cores": cores_left})) if cores_left >= 1 else None
squeezed_efficiency = squeezed.iops.value / (MAX_DEVICES * dimms32.iops / dimms32.devices) if squeezed else 1.0
heavy_app_us = (server.cores - cores_left) * 1e6 / dimms32.iops  # the application cost that leaves only cores_left
print(f"the driver needs {driver_cores:.1f} cores at {MAX_DEVICES} DIMMs ({driver_us:.1f} us per I/O); an application may add "
      f"{break_even_app_us:.1f} us per I/O before the {server.cores} cores run out."
      + (f" At {heavy_app_us:.1f} us it leaves {cores_left}: {squeezed.iops.value:,.0f} IOPS, {squeezed_efficiency:.0%} of "
         f"linear, bottleneck {squeezed.bottleneck}" if squeezed else " The driver needs less than two cores: no squeeze to show."))

# %% [markdown]
# ## 3. One device at queue depth 1
#
# fio itself spends a few microseconds per I/O between a completion and its next submission, outside
# the latency it reports; the calibration fitted that time on the x3850 X6 (`workloads/s3_fio_app_us`), and
# the runs below include it (`workload.app_us_per_io`), as seed 002's Table 5 runs did. The 67/33 mix shows
# reads waiting behind the programs of earlier writes on their die (seed 002 Table 5: 101 us for the mix
# where reads alone take 119 us and writes between reads are acknowledged in about 5 us).

# %%
fio_app_us = fitted_workload_value("s3_fio_app_us")
rows = []
for kind in KINDS:
    for op, read_fraction in (("read", 1.0), ("write", 0.0), ("67/33 mix", 0.67)):
        result = simulate(with_devices(kind, 1, {"workload.queue_depth": 1, "workload.read_fraction": read_fraction,
                                                 "workload.app_us_per_io": fio_app_us}))
        rows.append({"kind": kind, "op": op, "latency_mean_us": result.latency_mean_us.value,
                     "read_latency_us": result.read_latency_mean_us.value if read_fraction > 0 else float("nan"),
                     "ci95_lo": result.latency_mean_us.ci95[0], "ci95_hi": result.latency_mean_us.ci95[1]})
qd1 = pd.DataFrame(rows)
qd1

# %% [markdown]
# ## 4. One device from queue depth 1 to 256
#
# `sim.plan.qd_sweep.qd_sweep` puts one device alone (no host stack: the EXT calibration setup,
# calibration/ext/scenarios/ext_drive.yaml) under a closed loop of 1 ... 256 4 KiB random reads, under the
# die-level device model (`device_model: dies`: reads queue at N addressed NAND dies behind the
# controller; calibration/ext/DIE_LEVEL.md; the default for the drive, while the default keeps the eXFlash DIMM
# pooled, forced here for both): the fast path at every depth (its p99 and p99.9 the die-level
# estimate, dashed), with the pooled model's fast-path curves dotted for contrast (its p99 the pooled devices'
# own law: the service law, a read's wait for a program, the loop's finite-source queue); DES runs under dies at
# a few depths as a check (each ends on a 2% interval or its I/O budget; a hollow marker is a point its budget
# cut short); and, as stars on both charts, the published points of the EXT records (calibration/ext/ext.yaml)
# measured on the same device and mix: for the PM1733, a fio run at QD 1 (the Ignalina record).

# %%
QD_DEVICES = {"eXFlash DIMMs": "eXFlash-400GB", "NVMe drives": "PM1733-1.92TB"}
QD_DES_DEPTHS = [1, 16, 256]
QD_MAX_IOS = 10_000 if SMALL else 200_000
QD_METRIC_WORDS = {"iops": "IOPS", "latency_mean_us": "mean us", "latency_p50_us": "p50 us", "latency_p99_us": "p99 us",
                   "latency_p999_us": "p99.9 us"}
QD_POOLED_SERIES = (("iops", "IOPS", 1), ("latency_mean_us", "mean", 2), ("latency_p99_us", "p99 (pooled law)", 2))


def with_pooled(fig, pooled):
    """The pooled model's fast-path curves (dotted, grey) on a die-level chart, for contrast."""
    for metric, label, col in QD_POOLED_SERIES:
        fig.add_trace(go.Scatter(x=[p["qd"] for p in pooled], y=[p[metric] for p in pooled], mode="lines",
                                 line={"color": "#8c8c8c", "dash": "dot"}, name=f"pooled model: {label}"), row=1, col=col)
    return fig


qd_fast, qd_pooled, qd_des, qd_published = {}, {}, {}, {}
for kind, device in QD_DEVICES.items():
    qd_fast[kind] = [p.as_dict() for p in qd_sweep(device, device_model="dies")]
    qd_pooled[kind] = [p.as_dict() for p in qd_sweep(device, device_model="pooled")]
    qd_des[kind] = [p.as_dict() for p in qd_sweep(device, QD_DES_DEPTHS, solver="des", max_ios=QD_MAX_IOS, device_model="dies")]
    qd_published[kind] = [p.as_dict() for p in published_points(device)]
    with_pooled(qd_sweep_chart(qd_fast[kind], qd_published[kind],
                               title=f"{device} alone, 4 KiB random reads (fast path, device model dies; pooled dotted)"),
                qd_pooled[kind]).show()
    qd_sweep_chart(qd_des[kind], qd_published[kind], title=f"{device} alone, 4 KiB random reads (DES, device model dies)").show()
qd_table = pd.DataFrame([{"kind": kind, "model": model, "solver": p["solver"], "qd": p["qd"], "iops": p["iops"],
                          "latency_mean_us": p["latency_mean_us"], "latency_p99_us": p["latency_p99_us"],
                          "latency_p999_us": p["latency_p999_us"], "validity": p["validity"]}
                         for kind in QD_DEVICES
                         for model, points in (("dies", qd_fast[kind]), ("pooled", qd_pooled[kind]), ("dies", qd_des[kind]))
                         for p in points if p["qd"] in QD_DES_DEPTHS])
qd_table

# %% [markdown]
# ## The chart

# %%
fig = make_subplots(rows=1, cols=3, horizontal_spacing=0.08, subplot_titles=(
    f"4 KiB random reads, QD {QUEUE_DEPTH} per device, {server.cores} cores", "Scaling efficiency (IOPS / n x one device)",
    "Host CPU cores busy"))
for kind, colour in COLOURS.items():
    f, d = scaling[scaling.kind == kind], scaling_des[scaling_des.kind == kind]
    fig.add_trace(go.Scatter(x=f.devices, y=f.iops / 1e6, mode="lines", line={"color": colour}, name=f"{kind} (fast path)"), row=1, col=1)
    fig.add_trace(go.Scatter(x=d.devices, y=d.iops / 1e6, mode="markers", marker={"color": colour, "size": 9, "symbol": "diamond"},
                             error_y={"type": "data", "symmetric": False, "array": (d.iops_ci95_hi - d.iops) / 1e6,
                                      "arrayminus": (d.iops - d.iops_ci95_lo) / 1e6}, name=f"{kind} (DES)"), row=1, col=1)
    for n_cores, dash in zip(CORE_OPTIONS, ("dot", "dash", "solid"), strict=True):
        c = cores_sweep[(cores_sweep.kind == kind) & (cores_sweep.cores == n_cores)]
        fig.add_trace(go.Scatter(x=c.devices, y=c.efficiency, mode="lines", line={"color": colour, "dash": dash},
                                 name=f"{kind}, {n_cores} cores"), row=1, col=2)
    fig.add_trace(go.Scatter(x=f.devices, y=f.cpu_cores, mode="lines", line={"color": colour}, showlegend=False), row=1, col=3)
fig.add_trace(go.Scatter(x=measured.devices, y=measured.measured_iops / 1e6, mode="markers",
                         marker={"color": COLOURS["eXFlash DIMMs"], "size": 11, "symbol": "x"}, name="seed 002 Table 4"), row=1, col=1)
for n_cores in CORE_OPTIONS:
    fig.add_hline(y=n_cores, line={"dash": "dash", "color": "grey"}, row=1, col=3, annotation_text=f"{n_cores} cores",
                  annotation_position="top left")
fig.update_xaxes(title_text="devices", row=1, col=1)
fig.update_yaxes(title_text="million IOPS", rangemode="tozero", row=1, col=1)
fig.update_xaxes(title_text="devices", row=1, col=2)
fig.update_yaxes(title_text="fraction of linear", range=[0, 1.05], row=1, col=2)
fig.update_xaxes(title_text="devices", row=1, col=3)
fig.update_yaxes(title_text="cores", rangemode="tozero", row=1, col=3)
fig.update_layout(title=f"eXFlash DIMMs vs NVMe drives in a {host_model} (flashplan, budget {BUDGET})", height=520, width=1600,
                  legend={"font": {"size": 10}})
fig.show()



export_png(fig, NOTEBOOK)

# %% [markdown]
# ## Conclusions
#
# Built from the results above (rerun the notebook and they follow the numbers).

# %% tags=["conclusions"]
des = scaling_des.set_index(["kind", "devices"])
nvme_one_des = scaling_des[(scaling_des.kind == "NVMe drives") & (scaling_des.devices == 1)].iloc[0]
d1, d32 = des.loc[("eXFlash DIMMs", 1)], des.loc[("eXFlash DIMMs", MAX_DEVICES)]
n1, n32 = des.loc[("NVMe drives", 1)], des.loc[("NVMe drives", MAX_DEVICES)]


def saturates_text(kind):
    parts = []
    for n_cores in CORE_OPTIONS:
        row = saturation[(saturation.kind == kind) & (saturation.cores == n_cores)].iloc[0]
        parts.append(f"{n_cores} cores from {int(row.first_saturated_devices)} devices" if pd.notna(row.first_saturated_devices)
                     else f"{n_cores} cores not with {MAX_DEVICES} ({row.cpu_busy_at_max:.1%} busy)")
    return ", ".join(parts)


lat = qd1.set_index(["kind", "op"]).latency_mean_us


def us_text(v):
    """A latency in words (a point with no estimate: 'no estimate')."""
    return f"{v:,.0f} us" if v is not None else "no estimate"


def qd_sentence():
    """The queue-depth bullet: each device from QD 1 to 256 under the die-level model (fast path, DES check), the
    pooled model's p99 for contrast, and the published points."""
    parts = []
    for kind, device in QD_DEVICES.items():
        first, last = qd_fast[kind][0], qd_fast[kind][-1]
        des_last = qd_des[kind][-1]
        fast_at = {p["qd"]: p for p in qd_fast[kind]}.get(des_last["qd"], last)
        pooled_at = {p["qd"]: p for p in qd_pooled[kind]}.get(des_last["qd"], qd_pooled[kind][-1])
        knee = next(p["qd"] for p in qd_fast[kind] if p["iops"] >= 0.9 * last["iops"])
        parts.append(f"{device}: {first['iops']:,.0f} IOPS at QD {first['qd']} ({first['latency_mean_us']:,.0f} us mean) to "
                     f"{last['iops']:,.0f} at QD {last['qd']} ({last['latency_mean_us']:,.0f} us), 90% of it from QD {knee}; "
                     f"DES at QD {des_last['qd']}: {des_last['iops']:,.0f} IOPS, p99 {des_last['latency_p99_us']:,.0f} us "
                     f"({des_last['validity'].replace('_', ' ')}) against the die-level estimate's "
                     f"{us_text(fast_at['latency_p99_us'])} (the pooled model's: {us_text(pooled_at['latency_p99_us'])})")
    seen = []
    for kind, device in QD_DEVICES.items():
        model = {p["qd"]: p for p in qd_fast[kind]}
        for p in qd_published[kind]:
            predicted = model.get(p["qd"], {}).get(p["metric"])
            against = f" (fast path {predicted:,.1f})" if predicted is not None else ""
            seen.append(f"{device} {QD_METRIC_WORDS.get(p['metric'], p['metric'])} {p['value']:,.1f} at QD {p['qd']}{against}")
    return (f"* **Queue depth, one device alone:** {'. '.join(parts)}. Published points of these devices (EXT records): "
            f"{'; '.join(seen) or 'none'}. Under the die-level device model the fast path's p99 is the die-level "
            "estimate (reads queueing at their die), the figure the planner screens with under `device_model: dies`.")


seed_lat = records["s3.table5.lat_rr.1dimm"].measured
seed_write_lat = records["s3.table5.lat_rw.1dimm"].measured
seed_mix_lat = records["s3.table5.lat_oltp.1dimm"].measured
reads_in_mix = qd1.set_index(["kind", "op"]).read_latency_us
lines = [
    "### Conclusions",
    f"* **eXFlash DIMMs scale linearly in the model:** {d1.iops:,.0f} IOPS for one DIMM, {d32.iops:,.0f} for {MAX_DEVICES} "
    f"({d32.iops / (MAX_DEVICES * d1.iops):.0%} of linear, DES), each DIMM limited by `{d32.bottleneck}`; the host CPU is then "
    f"{d32.cpu_cores:.1f} of {server.cores} cores busy. Seed 002 measured {measured.measured_iops.iloc[0]:,.0f} / "
    f"{measured.measured_iops.iloc[-1]:,.0f} IOPS for {measured.devices.iloc[0]} / {measured.devices.iloc[-1]} DIMMs.",
    f"* **NVMe drives:** {n1.iops:,.0f} IOPS for one PM1733 at the same load and {n32.iops:,.0f} for {MAX_DEVICES} "
    f"({n32.iops / (MAX_DEVICES * n1.iops):.0%} of linear), {n1.iops / d1.iops:.1f}x a DIMM per device (one drive at this queue "
    f"depth is not saturated: its busiest component, `{nvme_one_des.bottleneck}`, is "
    f"{nvme_one_des.bottleneck_utilization:.0%} used); {MAX_DEVICES} drives keep {n32.cpu_cores:.1f} of {server.cores} cores busy.",
    f"* **Where the cores saturate ({CPU_SATURATED:.0%} busy):** DIMMs: {saturates_text('eXFlash DIMMs')}. "
    f"NVMe drives: {saturates_text('NVMe drives')}. Per I/O the host spends {d1.cpu_us_per_io:.1f} us in the eXFlash driver and "
    f"{n1.cpu_us_per_io:.1f} us in the NVMe stack, so per device an NVMe drive uses up cores "
    f"{n1.iops * n1.cpu_us_per_io / (d1.iops * d1.cpu_us_per_io):.1f}x faster than a DIMM.",
    (f"* **The seed's sub-linear {MAX_DEVICES} DIMMs** need the application's CPU too: the driver alone keeps "
     if d32.iops / (MAX_DEVICES * d1.iops) >= 0.95 else
     f"* **The model reproduces the seed's sub-linear {MAX_DEVICES} DIMMs** from the driver's CPU alone, which keeps ")
    + f"{driver_cores:.1f} of {server.cores} cores busy at {MAX_DEVICES} DIMMs; an application spending more than "
    f"{break_even_app_us:.1f} us of CPU per I/O would use up the server"
    + (f". At {heavy_app_us:.1f} us the driver keeps {cores_left} core(s) of the {driver_cores:.1f} it needs, and "
       f"{MAX_DEVICES} DIMMs deliver {squeezed_efficiency:.0%} of linear (bottleneck `{squeezed.bottleneck}`)."
       if squeezed else f" (the driver, at {driver_us:.1f} us per I/O, needs under two cores: the seed's shortfall is the "
       "application's and the driver threads' own, which the model charges only as time, not as cores)."),
    f"* **Queue depth 1:** a DIMM reads 4 KiB in {lat[('eXFlash DIMMs', 'read')]:,.0f} us and writes in "
    f"{lat[('eXFlash DIMMs', 'write')]:,.0f} us with fio's own {fio_app_us:.1f} us per I/O between them (seed 002 Table 5: "
    f"{seed_lat:g} us read, {seed_write_lat:g} us write); a PM1733 reads in "
    f"{lat[('NVMe drives', 'read')]:,.0f} us and writes in {lat[('NVMe drives', 'write')]:,.0f} us: "
    + ("the memory channel does not buy lower read latency here; its case is slots and density without PCIe."
       if lat[("eXFlash DIMMs", "read")] > lat[("NVMe drives", "read")] else
       "the memory channel answers reads faster."),
    f"* **Reads behind programs:** in a 67/33 mix at queue depth 1 a DIMM's reads take "
    f"{reads_in_mix[('eXFlash DIMMs', '67/33 mix')]:,.0f} us (alone {lat[('eXFlash DIMMs', 'read')]:,.0f}) and the mix averages "
    f"{lat[('eXFlash DIMMs', '67/33 mix')]:,.0f} us (seed 002 Table 5: {seed_mix_lat:g} us); a PM1733's reads take "
    f"{reads_in_mix[('NVMe drives', '67/33 mix')]:,.0f} us in the same mix (alone {lat[('NVMe drives', 'read')]:,.0f}): a read whose die is "
    "programming an earlier write waits for it, on both kinds of flash.",
    qd_sentence(),
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
