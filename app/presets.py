"""The workload presets as the app offers them: ``models.presets`` under their source's conditions.

A closed-loop preset whose source's throughput comes from a think time (a job's own work between its I/Os,
fitted against that source's records: models/catalog/fitted.yaml, ``calibration.evaluate.fitted_workload_value``)
carries that think time; without it the same threads issue I/O back to back, several times what the source
measured. A preset whose calibration ran under other conditions says what differs instead.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from models.presets import PRESETS

CALIBRATED_THINK = {
    "ycsb_read_only": "s1_ycsb_think_us",
    "ycsb_read_mostly": "s1_ycsb_think_us",
    "ycsb_update_heavy": "s1_ycsb_think_us",
}
"""Presets -> the fitted think time of their source's records (seed 000's YCSB runs: calibration/data/s1.yaml sets
``workload.think_time_us: '@fit:s1_ycsb_think_us'`` on every YCSB record, 256 threads, one I/O each)."""

DIFFERS = {
    "ibmi_rpg_write": "no think time: the calibration of seed 001's write-file jobs fitted a job's own work between I/Os "
                      "(workloads/s2_rpg_write_think_us) at one outstanding I/O per job, this preset keeps 4 and none, "
                      "so it loads the drives harder than the seed's jobs did",
    "ibmi_rpg_read": "no think time: the calibration of seed 001's read-file jobs fitted a job's own work between I/Os "
                     "(workloads/s2_rpg_read_think_us) for 128 KiB reads at one outstanding I/O per job, this preset "
                     "issues 64 KiB with 4 outstanding and none, so it loads the drives harder than the seed's jobs did",
}
"""Presets that run under other conditions than their source's calibration, and what differs (said on the page)."""

THINK_DIGITS = 1


@functools.cache
def think_time_us(parameter: str) -> float:
    """A fitted workload think time (us), rounded as the form shows it."""
    from calibration.evaluate import fitted_workload_value

    return round(float(fitted_workload_value(parameter)), THINK_DIGITS)


def preset_data(key: str) -> dict[str, Any]:
    """The workload data of preset ``key`` under its source's conditions (a copy: callers may change it)."""
    data = copy.deepcopy(PRESETS[key].data)
    parameter = CALIBRATED_THINK.get(key)
    if parameter is not None:
        data["think_time_us"] = think_time_us(parameter)
    return data


def conditions(key: str) -> str:
    """What the page says about a preset's conditions beyond its source and assumptions ("" when nothing)."""
    parameter = CALIBRATED_THINK.get(key)
    if parameter is not None:
        return (f"Think time {think_time_us(parameter):,.1f} us per I/O: the database's own work between a thread's I/Os, "
                f"calibrated against the source's records (workloads/{parameter}); set it to 0 and the same threads issue "
                "I/O back to back, several times the throughput the source measured")
    differs = DIFFERS.get(key)
    return f"Differs from the source: {differs}" if differs else ""


def matching_preset(workload: Any) -> str | None:
    """The key of the preset (under its source's conditions) this workload is exactly, if any."""
    from pydantic import TypeAdapter, ValidationError

    from models.workload import Workload

    adapter: TypeAdapter[Any] = TypeAdapter(Workload)
    try:
        model = adapter.validate_python(workload)
    except ValidationError:
        return None
    return next((key for key in PRESETS if adapter.validate_python(preset_data(key)) == model), None)
