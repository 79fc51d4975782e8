"""Queue-depth sweep of one catalog drive or DIMM, on the Calibration page: IOPS and latency against QD.

The device alone under a closed loop of QD 1, 2, 4, ... 256 random I/Os (``sim.plan.qd_sweep``), with the
pooled or the die-level device model (``device_model``), on the fast path (instant, tail
figures are the fast path's own estimate: the die-level one under dies, the pooled law under pooled) or in the simulator
(each point a DES run in the worker pool, ending on its precision or its I/O budget), with the published
points of the EXT records measured on that device (``calibration.ext.published``) drawn as stars.
A point that is not precise is drawn hollow and named under the chart (app/validity.py).
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from app import charts, jobs, runner
from app.forms import DEVICE_MODEL_HELP, DEVICE_MODELS
from app.validity import badge
from calibration.ext.published import published_points
from models.catalog import load_catalog
from models.loading import BadInput
from sim.plan.qd_sweep import DEFAULT_DEPTHS, DEFAULT_MAX_IOS, TAIL_ESTIMATES, QdPoint, qd_sweep, resolved_device_model

FAST = "Fast path (queueing model, instant)"
DES = "Simulation (DES, with 95% CIs)"
BLOCK_SIZES_KIB = (4, 8, 16, 32, 64, 128)
DES_BUDGETS = (10_000, DEFAULT_MAX_IOS, 200_000)
"""I/Os per DES point the page offers (each run also ends earlier on a +-2% interval)."""
RAN = "qdsweep.ran"


def devices() -> list[str]:
    """Every catalog drive, then every DIMM."""
    catalog = load_catalog()
    return [*catalog.drives, *catalog.dimms]


def des_points(device: str, read_fraction: float, block_size_kib: float, max_ios: int,
               device_model: str = "auto") -> list[dict[str, Any]]:
    """The DES sweep, one worker job per queue depth (cached when precise); a failed point is left out with a warning."""
    work = [(json.dumps([device, qd, read_fraction, block_size_kib, max_ios, device_model]), jobs.qd_point_json,
             (device, qd, read_fraction, block_size_kib, max_ios, device_model)) for qd in DEFAULT_DEPTHS]
    outs = runner.run_many_cached("qd_sweep", work, label=f"Simulating {device} at {len(work)} queue depths",
                                  budget_s=max(10.0, max_ios / 4_000))
    rows: list[dict[str, Any]] = []
    for qd, out in zip(DEFAULT_DEPTHS, outs, strict=True):
        if isinstance(out, BaseException):
            st.warning(f"QD {qd} failed: {type(out).__name__}: {out}", icon=":material/warning:")
        else:
            rows.extend(json.loads(out))
    return rows


def fast_points(device: str, read_fraction: float, block_size_kib: float, device_model: str = "auto") -> list[dict[str, Any]]:
    points: list[QdPoint] = qd_sweep(device, DEFAULT_DEPTHS, solver="fast", read_fraction=read_fraction,
                                     block_size_kib=block_size_kib, device_model=device_model)
    return [p.as_dict() for p in points]


def table_rows(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sweep as a table: one row per queue depth, its validity badge first."""
    return [{"result": badge(p["validity"]), "QD": p["qd"], "IOPS": p["iops"], "mean us": p["latency_mean_us"],
             "p50 us": p["latency_p50_us"], "p99 us": p["latency_p99_us"], "p99.9 us": p["latency_p999_us"],
             "tails": p["tail"], "note": p.get("note", "")} for p in points]


def _inputs() -> tuple[str, str, float, float, int, str]:
    names = devices()
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    device = c1.selectbox("Drive or DIMM", names, key="qdsweep:device",
                          index=names.index("P3700-800GB") if "P3700-800GB" in names else 0)
    solver = c2.radio("Solver", [FAST, DES], key="qdsweep:solver")
    read_pct = c3.number_input("Read %", min_value=0, max_value=100, value=100, step=5, key="qdsweep:read")
    block = c4.selectbox("Block size (KiB)", BLOCK_SIZES_KIB, key="qdsweep:block")
    device_model = st.radio("Device model", list(DEVICE_MODELS), format_func=DEVICE_MODELS.__getitem__, horizontal=True,
                            key="qdsweep:model", help=DEVICE_MODEL_HELP)
    max_ios = DEFAULT_MAX_IOS
    if solver == DES:
        max_ios = st.select_slider("DES I/Os per queue depth (a run also ends on a ±2% interval)", DES_BUDGETS,
                                   value=DEFAULT_MAX_IOS, key="qdsweep:budget", format_func=lambda n: f"{n:,}")
    return device, solver, float(read_pct) / 100, float(block), int(max_ios), str(device_model)


def _warn_not_final(points: list[dict[str, Any]]) -> None:
    not_final = [p for p in points if p["validity"] != "precise"]
    if not_final:
        st.warning(f"{len(not_final)} point(s) are not final answers (hollow markers): "
                   + "; ".join(f"QD {p['qd']}: {badge(p['validity'])}" for p in not_final[:9])
                   + ". Cut-short points stopped on their I/O budget before their ±2% interval: give them more I/Os.",
                   icon=":material/warning:")


def render_section() -> None:
    """The queue-depth sweep section: inputs, chart, the validity of each point and the table."""
    st.subheader("Queue-depth sweep of one drive or DIMM")
    st.caption("The device alone (no host stack, one namespace), random I/O at queue depths 1 to 256. Stars are "
               "published measurements (EXT records) of the same device and mix, where one exists.")
    device, solver, read_fraction, block, max_ios, device_model = _inputs()
    try:
        if solver == FAST:
            points = fast_points(device, read_fraction, block, device_model)
        else:
            request = json.dumps([device, read_fraction, block, max_ios, device_model])
            if st.button("Run the queue-depth sweep", type="primary", key="qdsweep:run", icon=":material/play_arrow:"):
                runner.forget("qd_sweep")  # points that were not final run again
                st.session_state[RAN] = request
            if st.session_state.get(RAN) != request:
                st.caption(f"{len(DEFAULT_DEPTHS)} DES runs of at most {max_ios:,} I/Os each.")
                return
            points = des_points(device, read_fraction, block, max_ios, device_model)
    except BadInput as exc:
        st.error("  \n".join(f"**{f}**: {m}" for f, m in exc.problems), icon=":material/error:")
        return
    published = [p.as_dict() for p in published_points(device, read_fraction, block)]
    model = resolved_device_model(device, device_model)
    title = (f"{device}: {block:g} KiB random, {read_fraction:.0%} read ({'fast path' if solver == FAST else 'DES'}), "
             f"{model} device model"
             + (" (the default)" if device_model == "auto" else ""))
    st.plotly_chart(charts.qd_sweep_chart(points, published, title=title), key="qdsweep:chart")
    _warn_not_final(points)
    if solver == FAST:
        st.caption(f"Fast path: means from the queueing model; p99 and p99.9 (dashed) from {TAIL_ESTIMATES[model]}. "
                   "Run the simulation for measured percentiles with 95% intervals.")
    if not published:
        st.caption("No published queue-depth measurement of this device at this mix (EXT records).")
    st.dataframe(table_rows(points), hide_index=True, width="stretch",
                 column_config=charts.number_columns("IOPS", "mean us", "p50 us", "p99 us", "p99.9 us"))
