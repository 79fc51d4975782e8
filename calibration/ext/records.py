"""EXT records: the calibration record schema with the test conditions a queue-depth sweep needs.

An EXT record is a ``calibration.records.Record`` whose system is ``EXT`` and which says how the
source measured it (tool, engine, jobs x iodepth, preconditioning, drive capacity) so the scenario
can reproduce it. ``Source.seed`` holds the public document (URL or title) instead of a seed file.
Nothing here runs a simulation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field

from calibration.records import Record
from models.common import StrictModel

EXT_DIR = Path(__file__).resolve().parent
EXT_FILE = EXT_DIR / "ext.yaml"
EXT_SCENARIO_DIR = EXT_DIR / "scenarios"


class TestConditions(StrictModel):
    """How the source ran the measurement, as far as it says; ``None`` where it does not."""

    tool: str | None = Field(default=None, description="benchmark tool (fio, Iometer, SPDK perf ...)")
    engine: str | None = Field(default=None, description="I/O engine (libaio, io_uring, spdk ...)")
    jobs: int | None = Field(default=None, ge=1, description="workers / numjobs")
    iodepth: int | None = Field(default=None, ge=1, description="outstanding I/Os per worker")
    total_qd: int = Field(ge=1, description="jobs x iodepth: the queue depth the record is filed under")
    block_size_kib: float = Field(gt=0)
    read_fraction: float = Field(ge=0, le=1)
    access: Literal["random", "sequential"] = "random"
    preconditioning: str | None = None
    duration: str | None = Field(default=None, description="run length per queue depth, warm-up excluded")
    drive: str = Field(description="the drive as the source names it (model, capacity, firmware where given)")
    host: str | None = None


class ExtRecord(Record):
    """A published queue-depth sweep point (see calibration.records.Record for the common fields)."""

    system: Literal["EXT"] = "EXT"  # type: ignore[assignment]
    sweep: str = Field(description="the sweep this point belongs to (one source, drive and workload)")
    conditions: TestConditions


class ExtRecordFile(StrictModel):
    """The EXT record file."""

    system: Literal["EXT"] = "EXT"
    description: str = ""
    records: list[ExtRecord]


def load_ext_records(path: Path = EXT_FILE) -> list[ExtRecord]:
    """Every EXT record in ``path``; ids must be unique and each record's QD must match its scenario's."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        records = ExtRecordFile.model_validate(data).records
    except Exception as exc:
        raise ValueError(f"{path.name}: {exc}") from exc
    seen: set[str] = set()
    for r in records:
        if r.id in seen:
            raise ValueError(f"duplicate EXT record id {r.id!r}")
        seen.add(r.id)
    return records
