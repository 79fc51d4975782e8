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
# # Consolidation: an OLTP database, a nightly batch and a backup on one NVMe RAID-10
#
# Seed 000 runs two loads on an IBM LinuxONE Emperor 4 with four PM1733 drives in md RAID-10: YCSB on
# PostgreSQL (90% reads, a constant read rate) and the BDI benchmark on Db2 Warehouse (write bursts up to
# 3.3 GB/s). Sizing is rarely one load at a time: `examples/consolidation_oltp_batch_backup.yaml` puts an
# OLTP database (64 threads of 8 KiB, 90% reads), BDI-like batch write bursts and a sequential 1 MiB backup
# on the same four drives (the file cites where each number comes from, and which are assumptions).
#
# This notebook asks, for an architect consolidating them:
#
# 1. **What does the neighbours' load cost the OLTP database?** Its latency alone and with the others.
# 2. **How fast can the backup run** before the OLTP mean latency grows by more than 20%?
#
# Dense curves come from the analytic fast path (`sim.analytic.evaluate`, a multi-class network), a few
# points from the DES (`sim.simulate`) with per-workload 95% confidence intervals.
# `FLASHPLAN_NOTEBOOK_BUDGET=small` runs shorter DES runs (the tests use it); `full` is the default.

# %%
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from IPython.display import Markdown, display
from plotly.subplots import make_subplots

from models import load_scenario, with_overrides
from sim import simulate
from sim.analytic import evaluate
from sim.cli.notebook import budget_note, export_png, notebook_budget, run_settings

NOTEBOOK = "consolidation_oltp_batch_backup"
BUDGET = notebook_budget()
RUN = run_settings(BUDGET)
run_overrides = {f"run.{k}": v for k, v in RUN.items()}
if "max_ios" in RUN:  # fixed batches of 1/20 of the run, so even a short run has an interval
    run_overrides["run.batch_ios"] = RUN["max_ios"] // 20
EXAMPLE = Path("..") / "examples" / "consolidation_oltp_batch_backup.yaml"
base = load_scenario(EXAMPLE)
names = [name for name, _ in base.named_workloads()]
names

# %% [markdown]
# ## 1. OLTP alone and consolidated
#
# The same OLTP workload as a one-workload scenario, then with the batch and the backup (fast path and DES).

# %%
# the OLTP workload alone (and only its own objective)
oltp_alone = with_overrides(base, {"workloads": [base.model_dump(mode="json", exclude_none=True)["workloads"][0]],
                                   "slos": [s.model_dump(mode="json", exclude_none=True) for s in base.slos or [] if s.workload == "oltp"]})
rows = []
for label, scenario in (("OLTP alone", oltp_alone), ("consolidated", base)):
    fast = evaluate(scenario)
    des = simulate(with_overrides(scenario, run_overrides))
    assert fast.workloads is not None and des.workloads is not None
    f, d = fast.workloads["oltp"], des.workloads["oltp"]
    rows.append({"case": label, "fast IOPS": f.iops, "DES IOPS": d.iops.value, "fast mean us": f.latency_mean_us,
                 "DES mean us": d.latency_mean_us.value, "DES mean ±": d.latency_mean_us.half_width,
                 "DES p99 us": d.latency_p99_us.value, "bottleneck": des.bottleneck})
    if label == "consolidated":
        consolidated = des
pd.DataFrame(rows).round(1)

# %%
per_workload = pd.DataFrame([{"workload": n, "kind": w.kind, "IOPS": w.iops.value, "MB/s": w.mbps.value,
                              "mean us": w.latency_mean_us.value, "p99 us": w.latency_p99_us.value,
                              "in flight": w.mean_outstanding_ios.value}
                             for n, w in (consolidated.workloads or {}).items()])
per_workload.round(1)

# %% [markdown]
# ## 2. Backup rate against OLTP latency
#
# The backup's rate swept on the fast path (1 MiB sequential reads); the DES checks three points.

# %%
rates = np.linspace(100, 6000, 25)
sweep = []
for rate in rates:
    r = evaluate(with_overrides(base, {"workloads.2.rate_iops": float(rate)}))
    assert r.workloads is not None
    sweep.append({"backup_iops": rate, **{f"{n}_mbps": r.workloads[n].mbps for n in names},
                  "oltp_us": r.workloads["oltp"].latency_mean_us, "stable": r.stable})
sweep = pd.DataFrame(sweep)
checks = []
for rate in (rates[0], rates[len(rates) // 2], rates[-1]):
    d = simulate(with_overrides(base, {**run_overrides, "workloads.2.rate_iops": float(rate)}))
    assert d.workloads is not None
    w = d.workloads["oltp"]
    checks.append({"backup_iops": rate, "oltp_us": w.latency_mean_us.value, "half": w.latency_mean_us.half_width,
                   "p99": w.latency_p99_us.value})
checks = pd.DataFrame(checks)
checks.round(1)

# %%
fig = make_subplots(rows=1, cols=2, subplot_titles=("throughput per workload (fast path, stacked)",
                                                    "OLTP latency as the backup speeds up"))
colours = {"oltp": "#1f77b4", "batch": "#ff7f0e", "backup": "#2ca02c"}
for n in names:
    fig.add_trace(go.Scatter(x=sweep.backup_iops * 1.048576, y=sweep[f"{n}_mbps"], stackgroup="one", name=f"{n} MB/s",
                             line={"color": colours.get(n)}), row=1, col=1)
fig.add_trace(go.Scatter(x=sweep.backup_iops * 1.048576, y=sweep.oltp_us, mode="lines", name="OLTP mean (fast path)",
                         line={"color": colours["oltp"]}), row=1, col=2)
fig.add_trace(go.Scatter(x=checks.backup_iops * 1.048576, y=checks.oltp_us, mode="markers", name="OLTP mean (DES, 95% CI)",
                         error_y={"type": "data", "array": checks.half}, marker={"color": colours["oltp"], "size": 9}), row=1, col=2)
fig.add_trace(go.Scatter(x=checks.backup_iops * 1.048576, y=checks.p99, mode="markers", name="OLTP p99 (DES)",
                         marker={"color": "#d62728", "symbol": "x", "size": 10}), row=1, col=2)
fig.update_xaxes(title_text="backup MB/s", row=1, col=1)
fig.update_yaxes(title_text="MB/s", rangemode="tozero", row=1, col=1)
fig.update_xaxes(title_text="backup MB/s", row=1, col=2)
fig.update_yaxes(title_text="OLTP latency, us", rangemode="tozero", row=1, col=2)
fig.update_layout(title=f"OLTP + batch + backup on 4 x PM1733 RAID-10 (flashplan, budget {BUDGET})", height=500, width=1300)
fig.show()

# %%
export_png(fig, NOTEBOOK)

# %% [markdown]
# ## Conclusions
#
# Built from the results above (rerun the notebook and they follow the numbers).

# %% tags=["conclusions"]
alone_row, together_row = rows
growth = together_row["fast mean us"] / alone_row["fast mean us"] - 1
limit = sweep[sweep.oltp_us <= alone_row["fast mean us"] * 1.2]
fastest = float(limit.backup_iops.max()) * 1.048576 if len(limit) else 0.0
middle_fast = float(np.interp(checks.backup_iops.iloc[1], sweep.backup_iops, sweep.oltp_us))
lines = [
    "### Conclusions",
    "",
    f"* OLTP alone: {alone_row['fast IOPS']:,.0f} IOPS at {alone_row['fast mean us']:.1f} us mean on the fast path "
    f"(DES {alone_row['DES mean us']:.1f} ± {alone_row['DES mean ±']:.1f} us, p99 {alone_row['DES p99 us']:.0f} us).",
    f"* With the batch bursts and a {base.workloads[2].rate_iops:,.0f} IOPS backup: {together_row['fast mean us']:.1f} us "
    f"(fast path, {growth:+.1%}); DES {together_row['DES mean us']:.1f} ± {together_row['DES mean ±']:.1f} us, "
    f"p99 {together_row['DES p99 us']:.0f} us; the shared bottleneck is {together_row['bottleneck']}.",
    f"* The backup can read at up to about {fastest:,.0f} MB/s (of the {sweep.backup_iops.max() * 1.048576:,.0f} MB/s swept) "
    f"before the OLTP mean latency grows by more than 20% over OLTP alone (fast path).",
    f"* DES check at {checks.backup_iops.iloc[-1] * 1.048576:,.0f} MB/s of backup: OLTP {checks.oltp_us.iloc[-1]:.1f} "
    f"± {checks.half.iloc[-1]:.1f} us mean, p99 {checks.p99.iloc[-1]:.0f} us.",
    f"* Fast path against the DES at {checks.backup_iops.iloc[1] * 1.048576:,.0f} MB/s of backup: OLTP "
    f"{middle_fast:.1f} us against {checks.oltp_us.iloc[1]:.1f} ± {checks.half.iloc[1]:.1f} us "
    f"({middle_fast / checks.oltp_us.iloc[1] - 1:+.1%}; the fast path's multi-class correction counts the other "
    f"workloads' load at the shared stations only, not at the concurrency limits such as the namespace queues).",
    budget_note(BUDGET),
]
conclusions = "\n".join(lines)
display(Markdown(conclusions))
