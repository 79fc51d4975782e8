"""Workloads and calibration records from real measurements: fio results and iostat logs.

Both parsers take the file's content (``bytes`` or ``str``, as read from disk or uploaded
to the web app) and raise :class:`MeasurementFileError` - never anything else - when the
content is not what they expect, with one ``(field, message)`` pair per problem.

* ``calibration.importers.fio``: ``parse_fio(data) -> FioResult``; each job group carries the
  flashplan workload its options describe and the IOPS, bandwidth and latency fio measured
  (calibration/measured.py turns those into calibration records and runs them).
* ``calibration.importers.iostat``: ``parse_iostat(data) -> IostatReport``; the peak interval by
  IOPS and by MB/s, each as a workload (``interval.workload("open" | "closed")``).

Shared here: the error type, text decoding, and writing a workload into a scenario.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from pydantic import TypeAdapter, ValidationError

from models.loading import MAX_MEASUREMENT_BYTES, BadInput, decode
from models.scenario import Scenario, apply_overrides, format_validation_error, scenario_from_data
from models.workload import ClosedWorkload, OpenWorkload, Workload

_WORKLOAD_ADAPTER: TypeAdapter[Workload] = TypeAdapter(Workload)


class MeasurementFileError(BadInput):
    """A measurement file (fio JSON, iostat text) that cannot be imported, as (field, message) pairs
    (a kind of ``models.loading.BadInput``, so every entry point reports it the same way)."""


def decode_text(data: bytes | str, origin: str) -> str:
    """The file's text (``models.loading``): UTF-8 (a byte-order mark is dropped), at most MAX_MEASUREMENT_BYTES."""
    if not isinstance(data, bytes | bytearray | str):
        raise MeasurementFileError([(origin, f"expected bytes or str, got {type(data).__name__}")])
    if len(data) > MAX_MEASUREMENT_BYTES:
        raise MeasurementFileError([(origin, f"file is larger than {MAX_MEASUREMENT_BYTES // 2**20} MiB")])
    try:
        text = decode(data, origin)
    except BadInput as exc:
        raise MeasurementFileError(exc.problems) from None
    if not text.strip():
        raise MeasurementFileError([(origin, "file is empty")])
    return text


def build_workload(data: dict[str, Any], origin: str) -> ClosedWorkload | OpenWorkload:
    """Validate an imported workload; a value flashplan cannot take becomes a MeasurementFileError."""
    try:
        workload = _WORKLOAD_ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise MeasurementFileError([(f"{origin}: {field}", message) for field, message in format_validation_error(exc, "workload")]) from None
    assert isinstance(workload, ClosedWorkload | OpenWorkload)
    return workload


def workload_data(workload: Workload) -> dict[str, Any]:
    """The workload as plain data for a scenario file: ``block_size_kib`` left out when a size mix replaces it."""
    data = workload.model_dump(mode="json", exclude_none=True)
    if data.get("sizes"):
        data.pop("block_size_kib", None)
    return data


def scenario_data_with_workload(scenario_data: Mapping[str, Any], workload: Workload,
                                overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Raw scenario data (not validated): the user's scenario, its workload replaced, then ``overrides`` applied.

    Raises models.scenario.ScenarioFileError for an override path that cannot be set.
    """
    return apply_overrides(dict(scenario_data), {"workload": workload_data(workload), **dict(overrides or {})})


def scenario_with_workload(scenario_data: Mapping[str, Any], workload: Workload, overrides: Mapping[str, Any] | None = None) -> Scenario:
    """``scenario_data_with_workload`` validated into a Scenario; raises pydantic.ValidationError or ScenarioFileError."""
    return scenario_from_data(scenario_data_with_workload(scenario_data, workload, overrides))


def to_yaml(data: Mapping[str, Any], header: str = "") -> str:
    """YAML text in the field order of ``data``, with ``header`` lines as comments on top."""
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comment + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True)


__all__ = [
    "MAX_MEASUREMENT_BYTES",
    "MeasurementFileError",
    "build_workload",
    "decode_text",
    "scenario_data_with_workload",
    "scenario_with_workload",
    "to_yaml",
    "workload_data",
]
