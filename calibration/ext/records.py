"""EXT records: the calibration record schema with the test conditions a queue-depth sweep needs.

An EXT record is a ``calibration.records.Record`` whose system is ``EXT`` and which says how the
source measured it (tool, engine, jobs x iodepth, preconditioning, drive capacity) so the scenario
can reproduce it. ``Source.seed`` holds the public document (URL or title) instead of a seed file.
The file says once which flash device model every record's scenario runs under in the calibration gate
(``ExtRecordFile.device_model``: ``dies``, the die-level mechanism these records check); ``gate_records``
gives the records as ``flashplan calibrate --only EXT`` runs them. The file is read as every record file is
(``models.loading``: size, alias and nesting limits; a bad field is a ``BadInput`` naming it). Nothing here
runs a simulation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from calibration.records import EXT_SYSTEM, SCENARIO_DIR, Record, ScenarioRef
from models.common import StrictModel
from models.loading import BadInput, read_document, validate
from models.scenario import DeviceModel

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
    device_model: DeviceModel = Field(
        default="dies",
        description="the flash device model every record's scenario runs under in the calibration gate (``flashplan "
                    "calibrate``): dies, the die-level mechanism these records check; ``calibrate "
                    "--device-model`` overrides it for a run")
    records: list[ExtRecord]


def load_ext_file(path: Path = EXT_FILE) -> ExtRecordFile:
    """The EXT record file, read through ``models.loading`` (BadInput naming the field); ids must be unique."""
    rf: ExtRecordFile = validate(ExtRecordFile, read_document(path), prefix=path.name)
    seen: set[str] = set()
    for i, r in enumerate(rf.records):
        if r.id in seen:
            raise BadInput([(f"{path.name}.records.{i}.id", f"duplicate EXT record id {r.id!r}")])
        seen.add(r.id)
    return rf


def load_ext_records(path: Path = EXT_FILE) -> list[ExtRecord]:
    """Every EXT record in ``path``, as the file gives them (scenarios relative to ``EXT_SCENARIO_DIR``)."""
    return load_ext_file(path).records


def gate_records(path: Path | None = None, device_model: DeviceModel | None = None) -> list[Record]:
    """The EXT records as the calibration gate runs them: each scenario under the file's ``device_model`` (or
    ``device_model`` when given: ``calibrate --device-model``), its file named relative to the gate's scenario
    directory (``calibration/scenarios``), so ``calibration.evaluate`` loads it like any other record's. ``path``:
    ``EXT_FILE`` (looked up when called) unless given."""
    rf = load_ext_file(EXT_FILE if path is None else path)
    model = device_model or rf.device_model

    def moved(ref: dict[str, Any]) -> dict[str, Any]:
        file = os.path.relpath(ScenarioRef(file=ref["file"]).path(EXT_SCENARIO_DIR), SCENARIO_DIR)
        return {"file": file, "set": {**ref.get("set", {}), "device_model": model}}

    out: list[Record] = []
    for r in rf.records:
        data = r.model_dump(mode="json")
        for key in ("scenario", "baseline"):
            if data.get(key) is not None:
                data[key] = moved(data[key])
        data["alternatives"] = [{**p, "scenario": moved(p["scenario"]), "baseline": moved(p["baseline"])}
                                for p in data.get("alternatives", [])]
        out.append(ExtRecord.model_validate(data))
    assert all(r.system == EXT_SYSTEM for r in out)
    return out
