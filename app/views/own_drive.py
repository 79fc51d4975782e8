"""Add a drive from fio results: upload fio JSON, see the derived figures and the held-out check, save the drive.

The derivation and the check are calibration/own_drive.py's (the same as ``flashplan drive from-fio``): the
die-level model's figures from the QD 1 random-read latency and the deepest random-read point, the rest from a
catalog drive chosen as the base; every point the derivation did not use is predicted with the fast path next
to what fio measured. The drive is saved to the ``FLASHPLAN_CATALOG_DIR`` folder the app was started with
(drives.yaml), after which every page offers it; without that folder the drives.yaml can be downloaded.
"""

from __future__ import annotations

import os
from typing import Any

import streamlit as st

from app.views.common import show_problems
from calibration.own_drive import METRICS, DriveFromFio, derive, held_out_check, override_text, read_points, write_override
from models.catalog import load_catalog
from models.loading import BadInput

MAX_UPLOAD_MB = 5
KEY = "own_drive"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}%"


def derived_rows(drive: DriveFromFio) -> list[dict[str, Any]]:
    """The derived figures as table rows: field, value, the record it came from, how."""
    return [{"field": d.field, "value": f"{d.value:g} {d.unit}".strip(), "from": d.source, "how": d.how} for d in drive.derived]


def check_rows(drive: DriveFromFio) -> list[dict[str, Any]]:
    """The held-out points: measured, predicted by the fast path, and the relative error."""
    labels = dict(METRICS)
    return [{"point": c.point.label, "metric": labels[c.metric], "measured": round(c.measured, 2),
             "fast path": None if c.fast is None else round(c.fast, 2), "error": _percent(c.fast_error)}
            for c in held_out_check(drive)]


def _inputs(box: Any) -> tuple[list[Any], str, str | None, float | None, int | None]:
    uploads = box.file_uploader("fio results (--output-format=json), one or more files", type=["json", "txt", "out"],
                                accept_multiple_files=True, key=f"{KEY}:files", max_upload_size=MAX_UPLOAD_MB)
    c1, c2, c3, c4 = box.columns(4)
    name = c1.text_input("Drive name", key=f"{KEY}:name", placeholder="My-NVMe-3.84TB")
    drives = ["(none)", *sorted(load_catalog().drives)]
    base = c2.selectbox("Base drive (what fio does not measure)", drives, key=f"{KEY}:base")
    capacity = c3.number_input("Capacity (TB; default: the base's)", min_value=0.0, value=0.0, step=0.1, key=f"{KEY}:capacity")
    up_to = c4.number_input("Derive from QD <= (0: every point)", min_value=0, value=0, step=1, key=f"{KEY}:up_to")
    return (list(uploads or []), name.strip(), None if base == "(none)" else base, capacity or None, int(up_to) or None)


def _save(box: Any, drive: DriveFromFio) -> None:
    folder = os.environ.get("FLASHPLAN_CATALOG_DIR")
    if folder:
        if box.button(f"Save {drive.name} to the catalog folder", key=f"{KEY}:save", icon=":material/save:", type="primary"):
            try:
                path = write_override(drive, folder)
            except BadInput as exc:
                show_problems(exc.problems, box)
            else:
                box.success(f"Saved to {path}: every page now offers {drive.name} as a drive.")
    else:
        box.info("The app was started without FLASHPLAN_CATALOG_DIR: download drives.yaml, put it in a folder and start the "
                 "app (or any command) with FLASHPLAN_CATALOG_DIR pointing at that folder.")
        box.download_button("Download drives.yaml", override_text(drive), file_name="drives.yaml", key=f"{KEY}:download",
                            icon=":material/download:")


def render_section() -> None:
    """The "Add a drive from fio results" section."""
    box = st.expander("Add a drive from fio results")
    box.caption("A QD sweep of 4 KiB random reads, or a few points (QD 1 latency, the top IOPS, a random-write point). The "
                "drive is the model's own die layout built from the measured figures, not a curve through the points; the "
                "points it did not use show how well it predicts.")
    uploads, name, base, capacity, up_to = _inputs(box)
    if not uploads or not name:
        return
    try:
        points = read_points([(u.name, u.getvalue()) for u in uploads])
        base_spec = load_catalog().drives[base] if base else None
        drive = derive(points, name, base=base_spec, base_name=base, capacity_tb=capacity, derive_up_to_qd=up_to)
        checks = check_rows(drive)
    except BadInput as exc:
        show_problems(exc.problems, box)
        return
    box.dataframe(derived_rows(drive), hide_index=True, width="stretch")
    lay = drive.layout
    box.caption(f"Die layout: {lay.dies} dies on {lay.channels} channels, die read {lay.die_read_us:.2f} us, controller "
                f"ceiling {lay.controller_kiops:,.1f} K commands/s.")
    if checks:
        box.dataframe(checks, hide_index=True, width="stretch")
    else:
        box.caption("Every point was used by the derivation: add a deeper point (or derive from fewer) to see the check.")
    for note in drive.notes:
        box.caption(note)
    _save(box, drive)
