"""Calibration: how close the model is to published measurements, per system, as a table and a parity plot.

The page shows the stored calibration run (``calibration/results/latest.json``, written by
``flashplan calibrate``) with, per system, the records within tolerance, settled by a conflict of
sources, declared known gaps (outside, with the hypotheses tried and the data that would settle
them) and outside, and can run one system's quick subset now (the records marked
``ci``, at the quick budget) in the worker pool, without re-running the whole set on
every visit. Below it, a queue-depth sweep of any catalog drive or DIMM with the published EXT
points overlaid (app/views/qd_sweep.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from app import charts, jobs, runner
from app.calibration_data import LATEST, read_stored, system_summary
from app.views import own_drive, qd_sweep
from calibration.evaluate import QUICK_RUN, settle_rows, stale_known_gap, with_conflict_partners
from calibration.records import SYSTEM_NAMES, SYSTEMS, Record, load_records
from calibration.report import parity_figure

QUICK = "calibration.quick"


def quick_chunks(records: list[Record], parts: int) -> list[list[Record]]:
    """Split records into at most ``parts`` groups that share no scenario (so no scenario is simulated twice)."""
    groups: list[tuple[set[str], list[Record]]] = []
    for r in records:
        keys = {ref.key() for ref in r.scenarios()}
        joined = [g for g in groups if g[0] & keys]
        merged_keys, merged = set(keys), [r]
        for g in joined:
            merged_keys |= g[0]
            merged = g[1] + merged
            groups.remove(g)
        groups.append((merged_keys, merged))
    groups.sort(key=lambda g: -len(g[0]))
    buckets: list[tuple[int, list[Record]]] = [(0, []) for _ in range(max(1, min(parts, len(groups))))]
    for keys, rs in groups:
        i = min(range(len(buckets)), key=lambda j: buckets[j][0])
        buckets[i] = (buckets[i][0] + len(keys), buckets[i][1] + rs)
    return [b[1] for b in buckets if b[1]]


def run_quick(system: str, run: dict[str, Any]) -> list[dict[str, Any]]:
    """One system's quick subset (all its records if none is marked ``ci``), simulated in the worker pool."""
    records = load_records(only=system)
    subset = with_conflict_partners([r for r in records if r.ci], records) or records
    chunks = quick_chunks(subset, runner.pool_workers())
    run_json = json.dumps(run, sort_keys=True)
    work: list[tuple[str, Any, tuple[str, str]]] = []
    for chunk in chunks:
        ids = json.dumps(sorted(r.id for r in chunk))
        records_json = json.dumps([r.model_dump(mode="json") for r in chunk], sort_keys=True)  # an edited record is a new key
        work.append((f"{records_json}|{run_json}", jobs.calibration_json, (ids, run_json)))
    scenarios = max(len({ref.key() for r in c for ref in r.scenarios()}) for c in chunks)
    outs = runner.run_many_cached("calibration", work, label=f"Calibrating {system}", budget_s=scenarios * float(run.get("run.max_wall_s", 6.0)))
    rows: list[dict[str, Any]] = []
    for out, chunk in zip(outs, chunks, strict=True):
        if isinstance(out, BaseException):
            rows.extend({"id": r.id, "system": r.system, "metric": r.metric, "unit": r.unit, "measured": r.measured, "predicted": None,
                         "ci95": None, "rel_error": None, "kind": r.kind, "within": False, "error": f"{type(out).__name__}: {out}",
                         "source": r.source.where, "tolerance": None, "tolerance_kind": ""} for r in chunk)
        else:
            rows.extend(json.loads(out))
    settle_rows(rows, subset)  # a conflict's two records may have run in different chunks
    return rows


def _pct(v: Any) -> str:
    return "-" if v is None else f"{v:.1%}"


def _tolerance(r: dict[str, Any]) -> str:
    kind = r.get("tolerance_kind")
    if kind == "rel" and r.get("tolerance") is not None:
        return f"±{r['tolerance']:.0%}"
    if kind == "abs" and r.get("tolerance") is not None:
        return f"±{r['tolerance']:g} pt"
    return str(r.get("tolerance") or "")


def _known_gap(r: dict[str, Any]) -> str:
    """The known-gap column: the data that would settle a declared gap, or that a declaration is stale."""
    gap = r.get("known_gap")
    if not gap:
        return ""
    if stale_known_gap(r):
        return "now within tolerance: remove the declaration"
    return f"declared {gap.get('declared', '')}; needs {gap.get('missing_data', '')}"


def record_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        ci = r.get("ci95")
        out.append({"record": r["id"], "metric": r["metric"], "unit": r["unit"], "measured": r["measured"], "predicted": r.get("predicted"),
                    "95% CI": f"{ci[0]:,.4g} .. {ci[1]:,.4g}" if ci else "", "error": _pct(r.get("rel_error")),
                    "tolerance": _tolerance(r), "within": bool(r.get("within")),
                    "sources conflict": f"{r['settled_by']} holds instead" if r.get("settled_by") else "",
                    "known gap": _known_gap(r),
                    "source": r.get("source", ""),
                    "problem": r.get("error") or ""})
    return out


def render(results_path: Path = LATEST, quick_run: dict[str, Any] | None = None) -> None:
    st.title("Calibration")
    st.caption("Each record is a measurement published in the source documents, with the scenario that reproduces the setup. "
               "The model is run on it and compared: the closer the points sit to the diagonal, the closer the model is to "
               "the measurements.")
    stored, meta = read_stored(results_path)
    quick = st.session_state.get(QUICK)
    choices = {}
    if stored:
        when = meta.get("run_at", "")
        choices["stored"] = f"Stored run{' of ' + when if when else ''}{' (quick)' if meta.get('quick') else ''}: {len(stored)} records"
    if quick:
        choices["quick"] = f"Quick run of {quick['system']} just made: {len(quick['rows'])} records"
    if choices:
        shown = st.radio("Results", list(choices), format_func=lambda k: choices[k], key="calibration:shown", horizontal=True,
                         index=len(choices) - 1)
        rows = stored if shown == "stored" else list((quick or {}).get("rows", []))
    else:
        st.info("No stored calibration run yet (`flashplan calibrate` writes calibration/results/latest.json). "
                "Run one system's quick set below.")
        rows = []

    with st.expander("Run a system's quick set now", expanded=not rows):
        c1, c2 = st.columns([3, 1])
        system = c1.selectbox("System", list(SYSTEMS), format_func=lambda s: f"{s}: {SYSTEM_NAMES[s]}", key="calibration:system")
        c2.write("")
        if c2.button("Run now (quick)", key="calibration:run", type="primary", icon=":material/play_arrow:"):
            run = quick_run or QUICK_RUN
            st.session_state[QUICK] = {"system": system, "rows": run_quick(system, run)}
            st.session_state.pop("calibration:shown", None)
            st.rerun()
        st.caption("The quick set is the records marked for CI, each scenario at ±4% precision and at most 6 s.")
    if rows:
        _stored_or_quick(rows)
    qd_sweep.render_section()
    own_drive.render_section()


def _stored_or_quick(rows: list[dict[str, Any]]) -> None:
    """The per-system summary, the parity plot and the record table of a calibration run."""
    summary = system_summary(rows)
    st.subheader("Per system")
    st.dataframe([{"system": s["system"], "what was measured": s["what"], "records": s["records"], "within tolerance": s["within"],
                   "settled by a conflict of sources": s.get("settled_by_conflict", 0), "known gap": s.get("known_gap", 0),
                   "outside": s.get("outside", 0),
                   "median |error|": _pct(s["median_abs_rel_error"]), "worst |error|": _pct(s["max_abs_rel_error"]),
                   "orderings held": f"{s['bounds_held']}/{s['bounds']}"} for s in summary], hide_index=True, width="stretch")
    systems = [s["system"] for s in summary]
    pick = st.selectbox("System", ["all", *systems], key="calibration:pick",
                        format_func=lambda s: "All systems" if s == "all" else f"{s}: {SYSTEM_NAMES.get(s, s)}")
    sel = rows if pick == "all" else [r for r in rows if r["system"] == pick]
    stale = [r["id"] for r in sel if stale_known_gap(r)]
    if stale:
        st.warning(f"Known gap now within tolerance, remove the declaration: {', '.join(stale)}")
    st.plotly_chart(parity_figure(sel), key="calibration:parity")
    st.dataframe(record_table(sel), hide_index=True, width="stretch", column_config=charts.number_columns("measured", "predicted"))
