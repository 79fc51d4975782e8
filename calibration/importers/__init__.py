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

import re
from collections.abc import Iterator, Mapping
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


MAX_FIO_BYTES = 64 * 1024 * 1024
"""Largest fio result the fio importer reads: fio's JSON is a few kB per job (tens of kB with ``json+``
latency bins), so 64 MiB holds thousands of jobs; the whole text and its parsed JSON are held at once."""

MAX_JSON_VALUES = 2_000_000
"""Most JSON values (array elements and object members) the importers build from one file: about
140 bytes each once parsed (``json+`` latency bins, the costliest), so at most about 280 MB."""


def json_values(text: str, start: int = 0) -> int:
    """An upper bound on the values ``json.loads(text[start:])`` builds: one per comma and per opening bracket
    (commas inside strings count too), counted without building anything."""
    return sum(text.count(ch, start) for ch in ",[{") + 1


def check_json_size(text: str, origin: str, start: int = 0, hint: str = "") -> None:
    """MeasurementFileError when the JSON from ``start`` holds more than MAX_JSON_VALUES values (before it is parsed)."""
    values = json_values(text, start)
    if values > MAX_JSON_VALUES:
        raise MeasurementFileError([(origin, f"the JSON holds about {values:,} values ({len(text) - start:,} characters); "
                                             f"the importer holds at most {MAX_JSON_VALUES:,}{hint}")])


_BOM = b"\xef\xbb\xbf"


def first_text(data: bytes | str, origin: str) -> str:
    """The first non-blank character of the file ('' when there is none), checking type and size as ``decode_text`` does."""
    if not isinstance(data, bytes | bytearray | str):
        raise MeasurementFileError([(origin, f"expected bytes or str, got {type(data).__name__}")])
    if len(data) > MAX_MEASUREMENT_BYTES:
        raise MeasurementFileError([(origin, f"file is larger than {MAX_MEASUREMENT_BYTES // 2**20} MiB")])
    if isinstance(data, str):
        m = re.compile(r"\S").search(data)
        return m.group(0) if m else ""
    mb = re.compile(rb"\S").search(data, 3 if data.startswith(_BOM) else 0)
    return chr(mb.group(0)[0]) if mb else ""


OVERLONG = "\x00(a line longer than the importer reads)"
"""What ``iter_lines`` gives in place of a line longer than its ``max_chars`` (compare with ``is``)."""


def iter_lines(data: bytes | str, origin: str, max_chars: int | None = None) -> Iterator[str]:
    """The file's lines one at a time, as ``decode_text(data).splitlines()`` gives them, without holding the
    decoded text: bytes are decoded line by line (a newline byte is never inside a UTF-8 sequence), and a
    byte that is not UTF-8 is reported by its offset in the file. A line of more than ``max_chars``
    characters (bytes) is neither decoded nor split: OVERLONG stands for it."""
    newline: Any = "\n" if isinstance(data, str) else b"\n"
    pos = 3 if isinstance(data, bytes | bytearray) and data.startswith(_BOM) else 0
    end = len(data)
    while pos <= end:
        cut = data.find(newline, pos)
        stop = end if cut < 0 else cut
        if max_chars is not None and stop - pos > max_chars:
            yield OVERLONG
        else:
            chunk = data[pos:stop]
            if not isinstance(chunk, str):
                try:
                    chunk = bytes(chunk).decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise MeasurementFileError([(origin, f"not UTF-8 text (byte {pos + exc.start} cannot be decoded)")]) from None
            yield from chunk.splitlines() or [""]
        if cut < 0:
            break
        pos = cut + 1


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
    "MAX_FIO_BYTES",
    "MAX_JSON_VALUES",
    "MAX_MEASUREMENT_BYTES",
    "OVERLONG",
    "MeasurementFileError",
    "build_workload",
    "check_json_size",
    "decode_text",
    "first_text",
    "iter_lines",
    "json_values",
    "scenario_data_with_workload",
    "scenario_with_workload",
    "to_yaml",
    "workload_data",
]
