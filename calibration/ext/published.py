"""Published queue-depth points of one catalog device, from the EXT records, to draw over a queue-depth sweep.

``published_points("P3700-800GB")`` returns every EXT record (calibration/ext/ext.yaml) measured on
that device under the sweep's workload (read fraction, block size, random access), whose setup a
single-device sweep reproduces: one device, or several at QD 1 (one I/O in flight: one member
serves it at a time, as the Ignalina PM1733 RAID-0 record notes). Each point keeps its record id,
sweep name and source, so the chart can say where a marker comes from. Nothing here simulates.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from calibration.evaluate import load_ref
from calibration.ext.records import EXT_FILE, EXT_SCENARIO_DIR, ExtRecord, load_ext_records
from models.scenario import Scenario
from models.topology import DirectNvme, Exflash
from models.workload import ClosedWorkload

QD_METRICS = ("iops", "latency_mean_us", "latency_p50_us", "latency_p99_us", "latency_p999_us")
"""The record metrics a queue-depth chart draws (others, such as MB/s, are left out)."""


@dataclass(frozen=True)
class PublishedPoint:
    """One measured value at one queue depth (``metric`` as in QD_METRICS, ``value`` in IOPS or us)."""

    qd: int
    metric: str
    value: float
    sweep: str
    record: str
    source: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _device_and_count(scenario: Scenario) -> tuple[str, int] | None:
    topo = scenario.topology
    if isinstance(topo, DirectNvme) and isinstance(topo.drive, str):
        return topo.drive, topo.drives
    if isinstance(topo, Exflash) and isinstance(topo.dimm, str):
        return topo.dimm, topo.dimms
    return None


def _matches(record: ExtRecord, device: str, read_fraction: float, block_size_kib: float) -> bool:
    """Whether a single-device sweep of ``device`` at this mix reproduces the record's setup."""
    c = record.conditions
    if record.metric not in QD_METRICS or record.scenario is None or c.access != "random":
        return False
    if not math.isclose(c.read_fraction, read_fraction, abs_tol=1e-9) or not math.isclose(c.block_size_kib, block_size_kib):
        return False
    scenario = load_ref(record.scenario, None, EXT_SCENARIO_DIR)
    found = _device_and_count(scenario)
    if found is None or found[0] != device or not isinstance(scenario.workload, ClosedWorkload):
        return False
    return found[1] == 1 or c.total_qd == 1


def published_points(device: str, read_fraction: float = 1.0, block_size_kib: float = 4.0,
                     path: Path = EXT_FILE) -> list[PublishedPoint]:
    """Every EXT point measured on ``device`` at this mix that a single-device sweep reproduces, by QD then metric."""
    points = [PublishedPoint(qd=r.conditions.total_qd, metric=r.metric, value=r.measured, sweep=r.sweep, record=r.id,
                             source=r.source.seed or r.source.where)
              for r in load_ext_records(path) if _matches(r, device, read_fraction, block_size_kib)]
    return sorted(points, key=lambda p: (p.qd, QD_METRICS.index(p.metric), p.record))
