"""A Scenario is topology + workload + run settings; this module also reads scenario files.

Files may be YAML, TOML or JSON. ``load_scenario(path, overrides)`` applies dotted
overrides (``workload.queue_depth=16``, list items by index: ``topology.stations.0.servers=2``)
to the raw data before validation, so an override is checked exactly like the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from models.catalog import lookup
from models.common import StrictModel, field_problem
from models.faults import Faults, failed_hardware
from models.loading import (
    MAX_DOCUMENT_BYTES,
    BadInput,
    check_tree,
    parse_document,
    parse_value,
    read_document,
)
from models.loading import format_validation_error as format_validation_error  # re-exported
from models.slo import WorkloadSlo
from models.topology import DirectNvme, Exflash, San, Topology, ZvmEdev
from models.workload import Workload

MAIN_WORKLOAD = "main"
"""The name of a scenario's single ``workload`` (in the per-workload results)."""
MAX_WORKLOADS = 16
PLACEMENT_MINIMUM = {"raid1": 2, "raid10": 2, "ibmi_mirror": 2, "raid5": 3, "raid6": 4}
"""The fewest members a workload's own volume of each layout needs (a workload's placement)."""


class RunSettings(StrictModel):
    """How long to run and how precise to be.

    The run discards ``warmup_ios`` completions, then groups completions into batches
    and stops when the 95% confidence half-width of IOPS and mean latency, relative to
    the estimate, is at most ``target_rel_ci`` (after ``min_batches``) or when a budget
    (``max_ios`` completions, ``max_wall_s`` seconds of wall time) is spent.
    """

    seed: int = Field(default=1, ge=0, le=2**63 - 1)
    target_rel_ci: float = Field(default=0.02, gt=0, lt=1)
    warmup_ios: int = Field(default=5_000, ge=0, le=10**9)
    batch_ios: int | None = Field(default=None, ge=10, le=10**8, description="completions per batch; default grows with the run")
    min_batches: int = Field(default=20, ge=5, le=10_000)
    max_ios: int = Field(default=3_000_000, ge=100, le=10**10)
    max_wall_s: float = Field(default=120.0, gt=0, le=86_400)


DeviceModel = Literal["auto", "pooled", "dies"]
"""How both solvers model a flash drive or DIMM (a scenario's, a requirement's ``device_model``): ``auto`` (the
default) dies for NVMe drives and pooled units for the shared-die eXFlash DIMMs, ``pooled`` identical read units
behind one queue, or ``dies`` addressed NAND dies behind a controller (issue 18)."""


class Scenario(StrictModel):
    """Everything the engine needs: the hardware path, the load on it, and the run settings.

    The load is one ``workload`` or several ``workloads`` (consolidation: each named, with its own
    kind, mix, sizes, access pattern and placement on the volume's members) sharing the hardware.
    With ``workloads``, ``scenario.workload`` is the first of them (what code that knows one workload
    reads); ``named_workloads()`` gives them all. A dump writes back what was given.
    """

    name: str = ""
    description: str = ""
    topology: Topology
    workload: Workload = Field(default=None, validate_default=False)  # type: ignore[assignment]  # set from workloads when absent
    workloads: list[Workload] | None = Field(default=None, min_length=1, max_length=MAX_WORKLOADS, description=(
        "several workloads on the one configuration (consolidation); instead of workload"))
    run: RunSettings = Field(default_factory=RunSettings)
    device_model: DeviceModel = Field(default="auto", description=(
        "how both solvers model a flash drive or DIMM: 'auto' (the default: dies for NVMe drives, pooled for the "
        "eXFlash DIMMs, sim/route/flash.py uses_die_layout), 'pooled' (identical read units behind one queue) or "
        "'dies' (addressed NAND dies behind a controller: sim/route/flash.py DieLayout)"))
    faults: Faults | None = Field(default=None, description="failed drives / adapters / ports and a rebuild in progress (models/faults.py)")
    slos: list[WorkloadSlo] | None = Field(default=None, max_length=64, description=(
        "objectives per workload (models/slo.py), checked in the results: 'oltp p99 <= 1000 us', 'backup >= 500 MB/s'"))

    @model_validator(mode="after")
    def _one_load(self) -> Scenario:
        if self.workloads is None:
            if self.workload is None:
                raise field_problem("workload", "a scenario needs a workload (or a workloads list)")
        else:
            if "workload" in self.model_fields_set and self.workload is not None:
                raise field_problem("workloads", "give either workload (one) or workloads (several), not both")
            _check_workloads(self.workloads, self.topology)
            self.__dict__["workload"] = self.workloads[0]
        return self

    @model_validator(mode="after")
    def _bounded_concurrency(self) -> Scenario:
        slots = 0
        for i, wl in enumerate(self.all_workloads()):
            if wl.kind == "closed":
                slots += wl.jobs * wl.queue_depth
                if slots > 1_000_000:
                    where = "workload.jobs" if self.workloads is None else f"workloads.{i}.jobs"
                    raise field_problem(where, "jobs x queue_depth (summed over the workloads) must be <= 1,000,000")
        if self.faults is not None:
            topo = self.topology
            ports_per_adapter = lookup("san_adapters", topo.host_adapter).ports if topo.kind == "san" else 1
            host_ports = topo.host_adapters * ports_per_adapter if topo.kind == "san" else 0
            failed_hardware(topo, self.faults, host_ports, ports_per_adapter, self.placements())
        return self

    @model_validator(mode="after")
    def _slos_name_workloads(self) -> Scenario:
        names = [name for name, _ in self.named_workloads()]
        for i, slo in enumerate(self.slos or ()):
            if slo.workload not in names:
                raise field_problem(f"slos.{i}.workload", f"no workload is called {slo.workload!r}; the workloads: {', '.join(names)}")
        return self

    @model_serializer(mode="wrap")
    def _dump_what_was_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if self.device_model == "auto":
            out.pop("device_model", None)  # the default: dumps stay as they were before the option
        if self.workloads is not None:
            out.pop("workload", None)
        else:
            out.pop("workloads", None)
        return out

    @property
    def consolidated(self) -> bool:
        """Whether the scenario lists its workloads (``workloads``; results then have a per-workload section)."""
        return self.workloads is not None

    def all_workloads(self) -> list[Workload]:
        """The scenario's workloads in order (the single ``workload`` as a list of one)."""
        return list(self.workloads) if self.workloads is not None else [self.workload]

    def profile_index(self) -> int | None:
        """The index of the scenario's profile workload (load over time) among ``all_workloads()``, or
        None when every workload is steady. There is at most one (``_check_workloads``)."""
        for i, wl in enumerate(self.all_workloads()):
            if wl.kind == "profile":
                return i
        return None

    def placements(self) -> list[tuple[str, list[int] | None]] | None:
        """(name, placement) of each workload when one is placed (each then has its own volume), else None."""
        named = self.named_workloads()
        if all(wl.placement is None for _, wl in named):
            return None
        return [(name, wl.placement) for name, wl in named]

    def named_workloads(self) -> list[tuple[str, Workload]]:
        """(name, workload) pairs; the single ``workload`` is called ``MAIN_WORKLOAD``."""
        if self.workloads is None:
            return [(self.workload.name or MAIN_WORKLOAD, self.workload)]
        return [(wl.name or "", wl) for wl in self.workloads]


def volume_members(topology: Topology) -> tuple[str, int] | None:
    """(layout, members) of the topology's volume: namespaces (direct NVMe), LUNs (SAN), DIMMs
    (eXFlash), base EDEVs (z/VM, one device each); None for a generic station chain (no volume)."""
    if isinstance(topology, DirectNvme):
        return topology.layout, topology.drives * topology.namespaces.per_drive
    if isinstance(topology, San):
        return topology.layout, topology.luns
    if isinstance(topology, Exflash):
        return topology.layout, topology.dimms
    if isinstance(topology, ZvmEdev):
        return "jbod", topology.base_devices
    return None


def _check_workloads(workloads: list[Workload], topology: Topology) -> None:
    """Names given and unique; each placement within the topology's members and enough for its layout."""
    seen: set[str] = set()
    volume = volume_members(topology)
    for i, wl in enumerate(workloads):
        if not wl.name:
            raise field_problem(f"workloads.{i}.name", "each workload in workloads needs a name (it keys the per-workload results)")
        if wl.kind == "profile" and any(other.kind == "profile" for other in workloads[:i]):
            raise field_problem(f"workloads.{i}.kind", "at most one profile (load over time) per scenario: its intervals "
                                "set the replay's clock; give the other workloads as closed, open or bursty")
        if wl.name in seen:
            raise field_problem(f"workloads.{i}.name", f"workload names must be unique, {wl.name!r} is used twice")
        seen.add(wl.name)
        if wl.placement is None:
            continue
        if volume is None:
            raise field_problem(f"workloads.{i}.placement", "a generic station chain has no volume members to place a workload on")
        layout, members = volume
        high = max(wl.placement)
        if high >= members:
            raise field_problem(f"workloads.{i}.placement", f"members are numbered 0..{members - 1} on this topology, got {high}")
        need = PLACEMENT_MINIMUM.get(layout, 1)
        if len(wl.placement) < need or (layout in ("raid10", "ibmi_mirror") and len(wl.placement) % 2):
            even = " (an even number: mirror pairs)" if layout in ("raid10", "ibmi_mirror") else ""
            raise field_problem(f"workloads.{i}.placement", f"a {layout} volume needs >= {need} members{even}, got {len(wl.placement)}")


ScenarioFileError = BadInput
"""The error of a file that cannot be read or parsed: the one bad-input type of ``models.loading``
(kept under this name for the callers that catch it)."""
MAX_SCENARIO_BYTES = MAX_DOCUMENT_BYTES


def parse_text(text: str, fmt: str, origin: str = "<input>") -> dict[str, Any]:
    """Parse YAML (safe loader), TOML or JSON text into a checked mapping (``models.loading``)."""
    return parse_document(text, fmt, origin)


def read_scenario_data(path: str | Path) -> dict[str, Any]:
    """Read a scenario file (format from its suffix: .yaml/.yml, .toml, .json) into raw data."""
    return read_document(path)


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``dotted.path=VALUE``; VALUE is read as YAML, so 16, 0.7, true, [1, 2] and raid10 all work."""
    if "=" not in text:
        raise BadInput([(text, "an override must look like dotted.path=VALUE")])
    path, _, raw = text.partition("=")
    path = path.strip()
    if not path or any(not part for part in path.split(".")):
        raise BadInput([(text, "empty field name in the dotted path")])
    return path, parse_value(raw, path)


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``data`` with each dotted path set; missing mappings are created."""
    check_tree(data)
    for path, value in overrides.items():
        check_tree(value, path)
    result: dict[str, Any] = json.loads(json.dumps(data, allow_nan=False))
    for path, value in overrides.items():
        value = json.loads(json.dumps(value, allow_nan=False))
        parts = path.split(".")
        node: Any = result
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            where = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise BadInput([(where, f"list index must be 0..{len(node) - 1}, got {part!r}")])
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if part not in node or node[part] is None:
                        node[part] = {}
                    node = node[part]
            else:
                parent = ".".join(parts[:i])
                raise BadInput([(where, f"{parent} is the value {node!r}, not a mapping: it has no field {part!r}")])
    return result


def scenario_from_data(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> Scenario:
    """Validate raw data (after applying overrides) into a Scenario; raises pydantic.ValidationError."""
    if overrides:
        data = apply_overrides(data, overrides)
    else:
        check_tree(data)
    return Scenario.model_validate(data)


def load_scenario(path: str | Path, overrides: dict[str, Any] | None = None) -> Scenario:
    """Read, override and validate a scenario file."""
    return scenario_from_data(read_scenario_data(path), overrides)


def with_overrides(scenario: Scenario, overrides: dict[str, Any]) -> Scenario:
    """A new Scenario with dotted-path overrides applied and validated."""
    return scenario_from_data(scenario.model_dump(mode="json", exclude_none=True), overrides)
