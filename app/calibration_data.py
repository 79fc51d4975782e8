"""Calibration results for the web app: the stored run (``calibration/results/latest.json``) and per-system summaries.

A calibration outcome row is ``calibration.evaluate.Outcome.as_dict()``: id, system,
source, metric, unit, measured, predicted, ci95, rel_error, tolerance, within, status
(within / conflict / known_gap / outside) and the known-gap declaration, if any. The page
shows the stored rows (written by the calibration run, e.g. in CI) and can run the
quick set now; the sizing report quotes the per-system error so a customer sees how
close the model has been to measurements of the same kind of system.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from calibration.records import CALIBRATION_DIR, SYSTEM_NAMES

LATEST = CALIBRATION_DIR / "results" / "latest.json"


def read_stored(path: Path = LATEST) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The outcome rows and the run's metadata from a stored results file ([] and {} when there is none).

    ``calibration.report.write_results`` writes a mapping with the rows under ``records``
    and the run's metadata beside them (``quick``, ``summary``); when it ran and how long it took
    (``run_at``, ``wall_seconds``) sit in ``latest.run.json`` next to it, kept out of the file the
    commit alone determines. A bare list of rows is accepted too.
    """
    rows, meta = _read_results(path)
    run_info = path.with_name(path.stem + ".run.json")
    if rows and run_info.is_file():
        try:
            info = json.loads(run_info.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            info = None
        if isinstance(info, dict):
            meta = {**{k: v for k, v in info.items() if k in ("run_at", "wall_seconds")}, **meta}
    return rows, meta


def _read_results(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if not path.is_file():
        return [], {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return [], {"error": f"{path.name} is not readable JSON"}
    if isinstance(data, list):
        return [r for r in data if isinstance(r, dict)], {}
    if isinstance(data, dict):
        rows = data.get("records", [])
        meta = {k: v for k, v in data.items() if k != "records"}
        return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else [], meta
    return [], {}


def system_summary(rows: list[dict[str, Any]], systems: list[str] | None = None) -> list[dict[str, Any]]:
    """``calibration.report.summary`` per system (records, within tolerance, settled by a conflict, known gaps,
    outside, median / max |relative error|), with its name."""
    from calibration.report import summary

    out = []
    for row in summary(rows):
        if row["system"] == "all" or (systems is not None and row["system"] not in systems):
            continue
        out.append({**row, "what": SYSTEM_NAMES.get(row["system"], row["system"])})
    return out


def system_of(scenario_kind: str) -> list[str]:
    """Calibration systems that measured the same kind of attachment as a sizing (for the report's caveat)."""
    return {"direct_nvme": ["S1", "S2"], "san": ["S1", "S5"], "exflash": ["S3"], "zvm_edev": ["S4"]}.get(scenario_kind, [])
