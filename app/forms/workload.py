"""The Size form's workload section, the workload presets, imported workloads and the one-line workload summary."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app.forms.draft import COMMON_WORKLOAD_FIELDS, WORKLOAD_DEFAULTS, allowed_range, clear_widgets, draft
from app.forms.fields import FormBase
from app.presets import conditions, preset_data
from app.presets import matching_preset as matching_preset  # re-exported (app.forms)
from models.presets import PRESETS
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, SizeWeight, WorkloadBase


class WorkloadSection(FormBase):
    """The workload widgets of the Size form (the preset picker fills them)."""

    def workload(self, where: DeltaGenerator) -> str:
        """Workload widgets (the preset picker fills them); returns the workload kind."""
        raw = self.data.get("workload")
        wl: dict[str, Any] = raw if isinstance(raw, dict) else {}
        current_kind = wl.get("kind") if wl.get("kind") in WORKLOAD_DEFAULTS else "closed"
        self.scope = "workload"
        kind = self.select(where, "workload.kind", "Load model", list(WORKLOAD_DEFAULTS), default=current_kind, write=False,
                           format_func=lambda k: {"closed": "Closed: jobs x queue depth (fio numjobs x iodepth)",
                                                  "open": "Open: Poisson arrivals at a rate",
                                                  "bursty": "Bursty: on/off arrivals"}[k])
        if kind != current_kind:
            wl = {"kind": kind, **{k: wl[k] for k in COMMON_WORKLOAD_FIELDS if k in wl}, **WORKLOAD_DEFAULTS[kind]}
        self.data["workload"] = wl
        self.scope = f"workload.{kind}"
        if kind == "closed":
            c1, c2 = where.columns(2)
            self.number(c1, "workload.jobs", "Jobs (threads)", ClosedWorkload, "jobs", default=16, integer=True)
            self.number(c2, "workload.queue_depth", "Queue depth per job", ClosedWorkload, "queue_depth", default=1, integer=True)
            c3, c4 = where.columns(2)
            self.number(c3, "workload.think_time_us", "Think time between I/Os (us)", ClosedWorkload, "think_time_us",
                        default=0.0, integer=False)
            self.number(c4, "workload.app_us_per_io", "App time per I/O (us)", ClosedWorkload,
                        "app_us_per_io", default=0.0, integer=False,
                        help="The benchmark's or application's own work per I/O (fio's completion and submission handling): "
                             "it lengthens each job's cycle but is not part of the latency it measures.")
        elif kind == "open":
            self.number(where, "workload.rate_iops", "Arrival rate (IOPS)", OpenWorkload, "rate_iops", default=50_000.0,
                        integer=False, step=1000.0)
        else:
            c1, c2 = where.columns(2)
            self.number(c1, "workload.on_rate_iops", "Rate during bursts (IOPS)", BurstyWorkload, "on_rate_iops",
                        default=50_000.0, integer=False, step=1000.0)
            self.number(c2, "workload.off_rate_iops", "Rate between bursts (IOPS)", BurstyWorkload, "off_rate_iops",
                        default=2_000.0, integer=False, step=100.0)
            self.number(c1, "workload.mean_on_ms", "Mean burst length (ms)", BurstyWorkload, "mean_on_ms", default=100.0, integer=False)
            self.number(c2, "workload.mean_off_ms", "Mean gap between bursts (ms)", BurstyWorkload, "mean_off_ms",
                        default=900.0, integer=False)
        self.percent(where, "workload.read_fraction", "Reads", default=0.7)
        c1, c2 = where.columns(2)
        self.select(c1, "workload.access", "Access", ["random", "sequential"])
        mix = self.checkbox(c2, "size_mix", "Block-size mix", default=bool(wl.get("sizes")), write=False)
        if mix:
            self._size_mix(where, wl)
        else:
            self.data["workload"].pop("sizes", None)
            self.number(c1, "workload.block_size_kib", "Block size (KiB)", WorkloadBase, "block_size_kib", default=4.0,
                        integer=False, step=4.0)
        return kind

    def _size_mix(self, where: DeltaGenerator, wl: dict[str, Any]) -> None:
        import pandas as pd

        key = self.key("workload.sizes")
        base_key = f"{key}:base"
        if base_key not in st.session_state:
            # the editor keeps its edits relative to the frame it was given, so that frame must not change while editing
            rows = wl.get("sizes") or [{"kib": float(wl.get("block_size_kib", 4)), "weight": 1.0, "op": "any"}]
            st.session_state[base_key] = [{"kib": float(r.get("kib", 4)), "weight": float(r.get("weight", 1.0)),
                                           "op": r.get("op", "any")} for r in rows if isinstance(r, dict)]
        frame = pd.DataFrame(st.session_state[base_key], columns=["kib", "weight", "op"])
        edited = where.data_editor(
            frame, key=key, num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                "kib": st.column_config.NumberColumn("KiB", help=f"Allowed: {allowed_range(SizeWeight, 'kib')}"),
                "weight": st.column_config.NumberColumn("weight", help="relative frequency, > 0"),
                "op": st.column_config.SelectboxColumn("applies to", options=["any", "read", "write"]),
            })
        sizes = []
        for rec in edited.to_dict("records"):
            if rec.get("kib") is None or (isinstance(rec.get("kib"), float) and math.isnan(rec["kib"])):
                continue
            sizes.append({"kib": float(rec["kib"]), "weight": float(rec.get("weight") or 1.0), "op": rec.get("op") or "any"})
        self.data["workload"]["sizes"] = sizes
        self._register(where, "workload.sizes", "Block-size mix")


def workload_summary(workload: dict[str, Any]) -> str:
    """One line describing a workload, in the words of fio / a storage engineer."""
    kind = workload.get("kind")
    read = float(workload.get("read_fraction", 0.7)) * 100
    if workload.get("sizes"):
        size = " / ".join(f"{s['kib']:g}K{'' if s.get('op', 'any') == 'any' else ' ' + s['op']}" for s in workload["sizes"])
    else:
        size = f"{float(workload.get('block_size_kib', 4)):g}K"
    mix = f"{size} {workload.get('access', 'random')}, {read:.0f}% read"
    if kind == "closed":
        return f"{mix}; {workload.get('jobs', 1)} jobs x QD {workload.get('queue_depth', 1)}"
    if kind == "open":
        return f"{mix}; Poisson at {float(workload.get('rate_iops', 0)):,.0f} IOPS"
    if kind == "bursty":
        return (f"{mix}; bursts of {float(workload.get('on_rate_iops', 0)):,.0f} IOPS for ~{workload.get('mean_on_ms')} ms, "
                f"{float(workload.get('off_rate_iops', 0)):,.0f} IOPS for ~{workload.get('mean_off_ms')} ms between")
    if kind == "profile":
        intervals = workload.get("intervals") or []
        rates = [float(iv["rate_iops"]) for iv in intervals if iv.get("rate_iops") is not None]
        peak = f", peak {max(rates):,.0f} IOPS" if rates else ""
        return f"{mix}; a profile of {len(intervals)} intervals over {sum(float(iv.get('duration_s', 0)) for iv in intervals):g} s{peak}"
    return json.dumps(workload)


# -- workload presets and imported workloads ---------------------------------------------------

def apply_workload(workload: dict[str, Any], prefix: str = "size") -> None:
    """Put a workload (a preset's, an imported one) into the draft and reset the workload widgets."""
    data = draft(prefix)
    data["workload"] = copy.deepcopy(workload)
    clear_widgets(prefix, "workload")


CUSTOM_WORKLOAD = "custom"


def preset_picker(where: DeltaGenerator, prefix: str = "size") -> str | None:
    """The workload preset picker (models.presets); picking one fills the workload fields. Returns the matching preset."""
    key = f"{prefix}:preset"
    current = matching_preset(draft(prefix).get("workload")) or CUSTOM_WORKLOAD
    st.session_state[key] = current

    def picked() -> None:
        choice = st.session_state[key]
        if choice in PRESETS:
            apply_workload(preset_data(choice), prefix)

    options = [CUSTOM_WORKLOAD, *PRESETS]
    where.selectbox("Workload preset", options, key=key, on_change=picked,
                    format_func=lambda k: "Custom (edit the fields below)" if k == CUSTOM_WORKLOAD else PRESETS[k].title,
                    help="The I/O patterns measured in the source documents; picking one fills the fields below.")
    if current in PRESETS:
        p = PRESETS[current]
        extra = conditions(current)
        where.caption(f"Source: {p.source}. Assumed: {p.assumptions}." + (f" {extra}." if extra else ""))
    return current if current in PRESETS else None
