"""Scenario library: save, open, rename and delete scenarios and their results; import and export scenario files.

The store is app/library.py (SQLAlchemy; SQLite in the user's data directory unless
``FLASHPLAN_DB_URL`` names another database). Imported files are size-limited, parsed
with the safe YAML loader (no anchors or aliases) and validated like any scenario file;
every problem is shown with its field path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from app import forms
from app.library import Library, LibraryError, ScenarioEntry, export_scenario, parse_scenario_file
from app.naming import plain
from app.views.common import fmt, go_to, library, show_problems
from app.words import BUSIEST, component_words
from models.scenario import MAX_SCENARIO_BYTES, Scenario, ScenarioFileError

MAX_UPLOAD_MB = 1


def _open_in_size(scenario: Scenario) -> None:
    forms.set_draft(scenario)
    go_to("size")


def save_current() -> None:
    """Save the Size page's scenario (the draft) under a name."""
    st.subheader("Save the Size page's configuration")
    scenario = forms.current_scenario()
    if scenario is None:
        st.warning("The configuration on the Size page has problems; fix them there first.")
        return
    name = st.text_input("Name", value=scenario.name, key="library:save_name")
    notes = st.text_input("Notes", key="library:save_notes", placeholder="customer, deal, what this option is")
    overwrite = st.checkbox("Replace a saved scenario of the same name", key="library:overwrite")
    slot = st.empty()
    if st.button("Save", key="library:save", type="primary", icon=":material/save:"):
        save_to_library(name, scenario, slot, notes=notes, overwrite=overwrite)


def save_to_library(name: str, scenario: Scenario, slot: Any, **options: Any) -> None:
    """Save ``scenario`` under ``name`` (whitespace tidied) and say so in ``slot``, or show the problems there."""
    clean = " ".join(name.split())
    try:
        library().save_scenario(name, scenario.model_copy(update={"name": clean}), **options)
    except LibraryError as exc:
        show_problems(exc.problems, slot)
    else:
        slot.success(f"Saved '{plain(clean)}'.")


def _rename_or_delete(lib: Library, entry: ScenarioEntry) -> None:
    """The saved scenario's rename and delete controls (inside their popover)."""
    new_name = st.text_input("New name", value=entry.name, key=f"library:rename:{entry.id}")
    rename_slot = st.empty()
    if st.button("Rename", key="library:rename"):
        try:
            lib.rename_scenario(entry.id, new_name)
        except LibraryError as exc:
            show_problems(exc.problems, rename_slot)
        else:
            st.rerun()
    sure = st.checkbox(f"Yes, delete '{entry.name}' and its {entry.results} result(s)", key=f"library:sure:{entry.id}")
    if st.button("Delete", key="library:delete", disabled=not sure, icon=":material/delete:"):
        lib.delete_scenario(entry.id)
        st.session_state.pop("library:pick", None)
        st.rerun()


def saved() -> None:
    st.subheader("Saved scenarios")
    lib = library()
    entries = lib.list_scenarios()
    if not entries:
        st.caption(f"Nothing saved yet. Database: `{lib.url}`.")
        return
    st.dataframe([{"name": e.name, "attachment": forms.ATTACHMENTS.get(e.attachment, e.attachment).split(" (")[0],
                   "notes": e.notes, "results": e.results, "updated": e.updated} for e in entries], hide_index=True, width="stretch")
    by_id = {e.id: e for e in entries}
    if st.session_state.get("library:pick") not in by_id:
        st.session_state["library:pick"] = entries[0].id
    pick = st.selectbox("Scenario", list(by_id), key="library:pick", format_func=lambda i: by_id[i].name)
    entry = by_id[pick]
    slot = st.empty()
    try:
        scenario = lib.get_scenario(entry.id)
    except LibraryError as exc:
        show_problems(exc.problems, slot)
        scenario = None
    c1, c2, c3, c4 = st.columns(4)
    if scenario is not None:
        if c1.button("Open on the Size page", key="library:open", type="primary", icon=":material/open_in_new:"):
            _open_in_size(scenario.model_copy(update={"name": entry.name}))
        slug = "".join(ch if ch.isalnum() else "-" for ch in entry.name.lower()).strip("-") or "scenario"
        c2.download_button("Export YAML", export_scenario(scenario), file_name=f"{slug}.yaml", mime="application/x-yaml",
                           key="library:yaml")
        c3.download_button("Export JSON", export_scenario(scenario, "json"), file_name=f"{slug}.json", mime="application/json",
                           key="library:json")
    with c4.popover("Rename or delete"):
        _rename_or_delete(lib, entry)
    results = lib.list_results(entry.id)
    if results:
        st.markdown("**Saved results**")
        st.dataframe([{"saved": r.created, "label": r.label, "IOPS": round(r.iops), "mean latency (us)": round(r.latency_mean_us, 1),
                       "p99 latency (us)": round(r.latency_p99_us, 1), BUSIEST: component_words(r.bottleneck)} for r in results],
                     hide_index=True, width="stretch")
        rid = st.selectbox("Result", [r.id for r in results], key="library:result",
                           format_func=lambda i: next(f"{r.created} {r.label}" for r in results if r.id == i))
        c1, c2 = st.columns(2)
        show = c1.toggle("Show this result", key="library:show_result")
        if c2.button("Delete this result", key="library:delete_result"):
            lib.delete_result(rid)
            st.rerun()
        if show:
            from app.views.size import show_sizing

            try:
                result = saved_result(lib, rid)
            except LibraryError as exc:
                show_problems(exc.problems)
            else:
                st.caption(f"Saved result: {fmt(result.iops.value)} IOPS. It was simulated when saved; open the scenario on the Size "
                           "page to run it again.")
                show_sizing(result.scenario, result, key="library:sizing", allow_save=False)


def saved_result(lib: Any, result_id: int) -> Any:
    """A saved Result (one saved before ``Result.validity`` existed loads as not final: ``Library.get_result``)."""
    return lib.get_result(result_id)


def import_files() -> None:
    st.subheader("Import a scenario file")
    st.caption(f"YAML, JSON or TOML, at most {MAX_SCENARIO_BYTES // 1000:,} kB: the format `flashplan simulate` reads "
               "(`flashplan schema` lists the fields).")
    upload = st.file_uploader("Scenario file", type=["yaml", "yml", "json", "toml"], key="library:upload", max_upload_size=MAX_UPLOAD_MB)
    if upload is None:
        return
    try:
        scenario = parse_scenario_file(upload.name, upload.getvalue())
    except ScenarioFileError as exc:
        show_problems(exc.problems)
        return
    name = scenario.name or Path(upload.name).stem
    st.success(f"{plain(upload.name)}: a valid {forms.ATTACHMENTS.get(scenario.topology.kind, scenario.topology.kind).split(' (')[0]} scenario.")
    c1, c2 = st.columns(2)
    if c1.button("Open on the Size page", key="library:import_open", icon=":material/open_in_new:"):
        _open_in_size(scenario.model_copy(update={"name": name}))
    name = c2.text_input("Save as", value=name, key="library:import_name")
    slot = st.empty()
    if c2.button("Save to the library", key="library:import_save", icon=":material/save:"):
        save_to_library(name, scenario, slot)


def render() -> None:
    st.title("Scenario library")
    st.caption(f"Saved in `{library().url}`.")
    left, right = st.columns(2, gap="large")
    with left:
        save_current()
    with right:
        import_files()
    st.divider()
    saved()
