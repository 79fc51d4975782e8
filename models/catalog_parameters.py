"""The shape of models/catalog/parameters.yaml: the engine parameters no datasheet publishes.

Each parameter is ``{value, source}``: the number and where it comes from (or why it is assumed).
The built-in file, the fitted values applied to it and a user's ``parameters.yaml`` in
``$FLASHPLAN_CATALOG_DIR`` are all checked against ``EngineParameters``; a user's file is checked on
its own first by ``override_problems`` (it may set any subset of the parameters, each one whole), so
an error names the file, the parameter, its allowed range or type and the value given.

The ranges are those the engine can use: a coefficient of variation in [0, 5] as for a device's own
``behaviour`` (models/hardware.py ``DeviceBehaviour``), a fraction in [0, 1], CPU microseconds per I/O in
[0, 10,000] and cores in [1, 4,096] as for a scenario's host (models/topology.py ``HostConfig``), byte
sizes of at least one 512-byte block, at most 1,024 NAND channels (the die count is a whole number per
channel, so the channel count bounds the smallest die layout).
"""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from models.common import StrictModel
from models.loading import format_validation_error


class Parameter(StrictModel):
    """One engine parameter: its value (in the subclass) and the source of that value."""

    source: str = Field(min_length=1, description="where the value comes from, or why it is assumed")


class Variation(Parameter):
    """A coefficient of variation (standard deviation over mean) of a service time."""

    value: float = Field(ge=0, le=5)


class Fraction(Parameter):
    """A share of a whole."""

    value: float = Field(ge=0, le=1)


class Positive(Parameter):
    """A time or size above zero."""

    value: float = Field(gt=0)


class NonNegative(Parameter):
    """A time that may be zero."""

    value: float = Field(ge=0)


class CpuMicroseconds(Parameter):
    """CPU microseconds per I/O (or per KiB) of a storage stack."""

    value: float = Field(ge=0, le=10_000)


class Count(Parameter):
    """A whole number of slots or queue entries."""

    value: int = Field(ge=1)


class Cores(Parameter):
    """Cores of a host."""

    value: int = Field(ge=1, le=4096)


class Channels(Parameter):
    """NAND channels of a drive's controller."""

    value: int = Field(ge=1, le=1024)


class Bytes(Parameter):
    """A transfer size in bytes, at least one 512-byte block."""

    value: int = Field(ge=512)


class DeviceBehaviourParameters(StrictModel):
    """Defaults of a flash device's internal mechanisms (models/hardware.py ``DeviceBehaviour``, sim/route/flash.py)."""

    service_cv: Variation
    read_channel_cv: Variation
    write_cache_slots: Count
    program_time_us: Positive
    die_read_cv: Variation
    controller_fixed_us: NonNegative
    channels: Channels
    rating_queue_depth: Count
    die_page_bytes: Bytes


class StackCosts(StrictModel):
    """A cost for each storage stack (models/hardware.py ``HostStack``), every stack given."""

    linux_nvme: CpuMicroseconds
    ibmi_nvme: CpuMicroseconds
    scsi_fcp: CpuMicroseconds
    nvme_fc: CpuMicroseconds
    zvm_cp: CpuMicroseconds
    exflash_driver: CpuMicroseconds
    none: CpuMicroseconds


class OptionalStackCosts(StrictModel):
    """A cost for some storage stacks; a stack not given costs nothing."""

    linux_nvme: CpuMicroseconds | None = None
    ibmi_nvme: CpuMicroseconds | None = None
    scsi_fcp: CpuMicroseconds | None = None
    nvme_fc: CpuMicroseconds | None = None
    zvm_cp: CpuMicroseconds | None = None
    exflash_driver: CpuMicroseconds | None = None
    none: CpuMicroseconds | None = None


class HostDefaults(StrictModel):
    """A host's figures when a scenario names no catalog host (sim/route/host.py)."""

    cores: Cores
    submit_fraction: Fraction
    cpu_us_per_io: StackCosts
    cpu_us_per_kib: OptionalStackCosts = Field(default_factory=OptionalStackCosts)
    serial_us_per_io: OptionalStackCosts = Field(default_factory=OptionalStackCosts)


class ReadWrite(StrictModel):
    """One time for reads and one for writes."""

    read: NonNegative
    write: NonNegative


class ZvmParameters(StrictModel):
    """z/VM CP's handling of an EDEV channel program (sim/route/describe.py)."""

    command_bytes: Bytes
    subchannel_turnaround_us: ReadWrite


class StorageServerParameters(StrictModel):
    """A SAN storage server's service-time variability (sim/route/san.py)."""

    service_cv: Variation


class EngineParameters(StrictModel):
    """Everything parameters.yaml holds."""

    device_behaviour: DeviceBehaviourParameters
    host_defaults: HostDefaults
    zvm: ZvmParameters
    storage_server: StorageServerParameters


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model class a field holds (``X | None`` gives X)."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _known(model: type[BaseModel]) -> str:
    return ", ".join(model.model_fields)


def override_problems(data: Any, model: type[BaseModel] = EngineParameters, path: str = "") -> list[tuple[str, str]]:
    """(field path, message) pairs for a user's parameters.yaml, which may set any subset of ``model``'s
    parameters: each key must be one ``model`` has, each parameter is given whole (``value`` and ``source``)
    and its value must be in the parameter's range."""
    if issubclass(model, Parameter):
        try:
            model.model_validate(data)
        except ValidationError as exc:
            return format_validation_error(exc, path)
        return []
    if not isinstance(data, dict):
        shown = repr(data) if len(repr(data)) <= 80 else repr(data)[:60] + "..."
        return [(path or "(document)", f"expected a mapping of {_known(model)}, got {shown}")]
    problems: list[tuple[str, str]] = []
    for key, value in data.items():
        where = f"{path}.{key}" if path else str(key)
        field = model.model_fields.get(str(key))
        inner = _model_of(field.annotation) if field is not None else None
        if inner is None:
            problems.append((where, f"unknown parameter (check the spelling); known here: {_known(model)}"))
            continue
        problems.extend(override_problems(value, inner, where))
    return problems


def merge_parameters(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``override`` laid over it key by key: a mapping in both is merged the same way, down to
    each parameter; a parameter (a mapping with a ``value``) or any other value is replaced whole."""
    merged = dict(base)
    for key, value in override.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict) and "value" not in old:
            merged[key] = merge_parameters(old, value)
        else:
            merged[key] = value
    return merged
