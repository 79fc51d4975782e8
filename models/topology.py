"""Topologies: how the host reaches its flash. One class per attachment, chosen by ``kind``.

* ``direct_nvme`` - U.2 NVMe drives behind JBOF adapters or carriers, split into
  namespaces, under md RAID or IBM i mirroring (seeds 000 and 001).
* ``san`` - FCP or NVMe/FC host adapters to a storage server with cache and flash
  back end (seeds 000 and 004).
* ``exflash`` - memory-channel flash DIMMs served by kernel driver threads (seed 002).
* ``zvm_edev`` - z/VM NVMe EDEVs: one I/O per base subchannel plus a HyperPAV alias pool (seed 003).
* ``generic`` - a tandem of textbook queues (c servers, exponential / deterministic /
  lognormal service) behind a host with zero CPU cost: M/M/1, M/M/c, M/D/1 and closed
  networks become ordinary scenario files.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, model_validator

from models.catalog import lookup
from models.common import StrictModel, field_problem
from models.hardware import FlashDeviceSpec, HostStack

Layout = Literal["jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "ibmi_mirror"]
HostLayout = Literal["jbod", "raid0"]


class HostConfig(StrictModel):
    """The host: a catalog model (cores, path lengths) and the stack its I/Os take.

    ``cores`` and ``cpu_us_per_io`` override the catalog; with no ``model`` they
    default to 1 core and 0 us (a host that costs nothing, as queueing theory assumes).
    """

    model: str | None = Field(default=None, description="catalog host name")
    stack: HostStack | None = Field(default=None, description="storage stack; default depends on the attachment")
    cores: int | None = Field(default=None, ge=1, le=4096)
    cpu_us_per_io: float | None = Field(default=None, ge=0, le=10_000, description="CPU us per device I/O (submit + completion)")
    submit_fraction: float | None = Field(default=None, ge=0, le=1)
    off_path_fraction: float | None = Field(
        default=None, ge=0, le=1, description="share of the CPU per I/O that runs beside the I/O (no latency)")

    @model_validator(mode="after")
    def _known_model(self) -> HostConfig:
        if self.model is not None:
            try:
                lookup("hosts", self.model)
            except KeyError as exc:
                raise field_problem("model", str(exc.args[0])) from None
        return self


def _device(section: str, value: str | FlashDeviceSpec, field: str) -> FlashDeviceSpec:
    if isinstance(value, FlashDeviceSpec):
        return value
    try:
        spec: FlashDeviceSpec = lookup(section, value)
    except KeyError as exc:
        raise field_problem(field, str(exc.args[0])) from None
    return spec


class Namespaces(StrictModel):
    """How each drive is split: IBM i sees one disk unit (one disk arm, one queue) per namespace (seed 001)."""

    per_drive: int = Field(default=1, ge=1, le=1024)
    size_gb: float | None = Field(default=None, gt=0, description="size of each namespace; default splits the drive evenly")
    queue_depth: int | None = Field(
        default=None, ge=1, le=65_535,
        description="I/Os the host keeps outstanding per namespace (an IBM i disk unit); default: no limit beyond the NVMe queues",
    )


class NvmeQueues(StrictModel):
    """NVMe submission/completion queue pairs per drive: count x depth commands in flight at most."""

    count: int = Field(default=32, ge=1, le=65_535)
    depth: int = Field(default=1024, ge=1, le=65_536)


MODEL_BYTES_PER_NAMESPACE = 6_600
"""Memory the simulator's model takes per namespace (volume member) of a direct-NVMe topology: measured with
``python -m bench.memory`` (peak RSS of ``flashplan simulate`` at 16,384 and 65,536 namespaces: 224 and 538 MB)."""
MAX_MODEL_BYTES = 400 * 10**6
"""The model memory a topology may need (``MODEL_BYTES_PER_NAMESPACE`` x namespaces): what fits, with the
interpreter, the catalog and the run's own records, in a 1 GiB address space."""
MAX_NAMESPACES = MAX_MODEL_BYTES // MODEL_BYTES_PER_NAMESPACE


class DirectNvme(StrictModel):
    """Direct-attached NVMe: drives behind JBOF adapters (EJ1Y holds 8, EJ1X 4) or one-drive carriers.

    Volume members are namespaces; mirror copies are placed on different drives
    (``mirror_protection: drive``) or behind different adapters (``planar`` / ``bus``,
    IBM i's protection levels, seed 001).
    """

    kind: Literal["direct_nvme"] = "direct_nvme"
    host: HostConfig = Field(default_factory=HostConfig)
    drive: str | FlashDeviceSpec = Field(default="ES5F", description="catalog drive model or an inline spec")
    drives: int = Field(default=4, ge=1, le=256)
    adapter: str = Field(default="EJ1Y", description="catalog JBOF adapter or carrier")
    adapters: int = Field(default=1, ge=1, le=64)
    namespaces: Namespaces = Field(default_factory=Namespaces)
    nvme_queues: NvmeQueues = Field(default_factory=NvmeQueues)
    layout: Layout = "raid10"
    chunk_kib: int = Field(default=256, ge=4, le=65_536, description="md chunk / stripe unit")
    mirror_protection: Literal["drive", "planar", "bus"] = "drive"

    @model_validator(mode="after")
    def _check(self) -> DirectNvme:
        drive = self.drive_spec
        try:
            adapter = lookup("adapters", self.adapter)
        except KeyError as exc:
            raise field_problem("adapter", str(exc.args[0])) from None
        per_adapter = math.ceil(self.drives / self.adapters)
        if per_adapter > adapter.max_drives:
            raise field_problem(
                "drives",
                f"{self.drives} drives on {self.adapters} {self.adapter} adapter(s) puts {per_adapter} on one; "
                f"{self.adapter} holds at most {adapter.max_drives} (allowed 1..{adapter.max_drives * self.adapters})",
            )
        if self.namespaces.per_drive > drive.max_namespaces:
            raise field_problem(
                "namespaces.per_drive",
                f"{self.drive_name} supports at most {drive.max_namespaces} namespaces, got {self.namespaces.per_drive}",
            )
        if self.namespaces.size_gb is not None:
            used = self.namespaces.size_gb * self.namespaces.per_drive
            if used > drive.capacity_tb * 1000 * 1.0001:
                raise field_problem(
                    "namespaces.size_gb",
                    f"{self.namespaces.per_drive} x {self.namespaces.size_gb} GB exceeds the "
                    f"{drive.capacity_tb * 1000:g} GB of {self.drive_name}",
                )
        _check_layout(self.layout, self.drives, self.namespaces.per_drive)
        members = self.drives * self.namespaces.per_drive
        if members > MAX_NAMESPACES:
            raise field_problem(
                "namespaces.per_drive",
                f"{self.drives} drives x {self.namespaces.per_drive} = {members:,} namespaces: the model would need about "
                f"{members * MODEL_BYTES_PER_NAMESPACE / 1e9:,.1f} GB ({MODEL_BYTES_PER_NAMESPACE / 1e3:g} KB per namespace); "
                f"allowed: <= {MAX_NAMESPACES:,} namespaces in all ({MAX_MODEL_BYTES / 1e6:,.0f} MB)",
            )
        if self.layout == "ibmi_mirror" and self.mirror_protection in ("planar", "bus") and self.adapters < 2:
            raise field_problem("mirror_protection", f"{self.mirror_protection} protection needs copies behind >= 2 adapters, got {self.adapters}")
        return self

    @property
    def drive_spec(self) -> FlashDeviceSpec:
        return _device("drives", self.drive, "drive")

    @property
    def drive_name(self) -> str:
        return self.drive if isinstance(self.drive, str) else (self.drive.description or "inline drive")


def _check_layout(layout: str, drives: int, per_drive: int) -> None:
    """Member-count rules of each layout (members are namespaces; copies live on different drives)."""
    members = drives * per_drive
    if layout == "raid1" and drives < 2:
        raise field_problem("layout", f"raid1 needs >= 2 drives, got {drives}")
    if layout == "raid10" and (drives < 4 or drives % 2):
        raise field_problem("layout", f"raid10 needs an even number of drives >= 4, got {drives}")
    if layout == "raid5" and members < 3:
        raise field_problem("layout", f"raid5 needs >= 3 members (drives x namespaces), got {members}")
    if layout == "raid6" and members < 4:
        raise field_problem("layout", f"raid6 needs >= 4 members (drives x namespaces), got {members}")
    if layout == "ibmi_mirror" and (drives < 2 or members % 2):
        raise field_problem("layout", f"ibmi_mirror needs >= 2 drives and an even number of namespaces in all, got {drives} drives x {per_drive}")


class StorageCache(StrictModel):
    """Storage-server cache behaviour for this workload."""

    read_hit_ratio: float = Field(default=0.5, ge=0, le=1)
    write_back: bool = Field(default=True, description="acknowledge writes from cache and destage later")
    size_gb: float | None = Field(default=None, gt=0, description="override the server's cache size")


class San(StrictModel):
    """SAN attachment: host adapters (FCP or NVMe/FC), a fabric, a storage server with cache and flash back end."""

    kind: Literal["san"] = "san"
    host: HostConfig = Field(default_factory=HostConfig)
    protocol: Literal["fcp", "nvme_fc"] = "fcp"
    host_adapter: str = "FICON-Express32S"
    host_adapters: int = Field(default=2, ge=1, le=64)
    luns: int = Field(default=4, ge=1, le=4096, description="LUNs (SCSI) or namespaces (NVMe/FC)")
    lun_queue_depth: int = Field(default=32, ge=1, le=65_535, description="SCSI per-LUN queue depth")
    nvme_queues: NvmeQueues = Field(default_factory=lambda: NvmeQueues(count=16, depth=128), description="NVMe/FC queues per association")
    associations: int = Field(default=4, ge=1, le=1024, description="NVMe/FC associations (controller connections)")
    storage_server: str = "DS8950F"
    front_end_ports: int = Field(default=4, ge=1, le=512)
    fabric_latency_us: float = Field(default=5.0, ge=0, le=100_000, description="one-way switch + cable latency")
    cache: StorageCache = Field(default_factory=StorageCache)
    layout: HostLayout = Field(default="raid0", description="host-side volume over the LUNs")
    chunk_kib: int = Field(default=256, ge=4, le=65_536)

    @model_validator(mode="after")
    def _check(self) -> San:
        try:
            adapter = lookup("san_adapters", self.host_adapter)
        except KeyError as exc:
            raise field_problem("host_adapter", str(exc.args[0])) from None
        if self.protocol not in adapter.protocols:
            raise field_problem("protocol", f"{self.host_adapter} supports {', '.join(adapter.protocols)}, not {self.protocol}")
        try:
            server = lookup("storage_servers", self.storage_server)
        except KeyError as exc:
            raise field_problem("storage_server", str(exc.args[0])) from None
        if self.front_end_ports > server.max_front_end_ports:
            raise field_problem(
                "front_end_ports", f"{self.storage_server} has at most {server.max_front_end_ports} front-end ports, got {self.front_end_ports}"
            )
        return self


class Exflash(StrictModel):
    """Memory-channel flash: eXFlash DIMMs (one per DDR3 channel) served by kernel driver threads (seed 002).

    By default one driver thread serves two DIMMs; ``max_occupancy: true`` gives each DIMM its own thread.
    """

    kind: Literal["exflash"] = "exflash"
    host: HostConfig = Field(default_factory=HostConfig)
    dimm: str | FlashDeviceSpec = "eXFlash-400GB"
    dimms: int = Field(default=1, ge=1, le=32, description="seed 002: up to 32 DIMMs (12.8 TB) in an x3850 X6")
    max_occupancy: bool = Field(default=True, description="one driver thread per DIMM instead of one per two")
    layout: HostLayout = "jbod"
    chunk_kib: int = Field(default=256, ge=4, le=65_536)

    @model_validator(mode="after")
    def _check(self) -> Exflash:
        self.dimm_spec  # noqa: B018 - validates the catalog name
        return self

    @property
    def dimm_spec(self) -> FlashDeviceSpec:
        return _device("dimms", self.dimm, "dimm")

    @property
    def driver_threads(self) -> int:
        return self.dimms if self.max_occupancy else math.ceil(self.dimms / 2)


class ZvmEdev(StrictModel):
    """z/VM NVMe EDEVs: a base EDEV runs one I/O at a time; HyperPAV aliases add concurrent paths (seed 003)."""

    kind: Literal["zvm_edev"] = "zvm_edev"
    host: HostConfig = Field(default_factory=HostConfig)
    drive: str | FlashDeviceSpec = "P4510-4TB"
    drives: int = Field(default=1, ge=1, le=64)
    adapter: str = "IBM-Adapter-for-NVMe"
    base_devices: int = Field(default=1, ge=1, le=65_280)
    aliases: int = Field(default=0, ge=0, le=65_280, description="HyperPAV alias EDEVs attached to SYSTEM")

    @model_validator(mode="after")
    def _check(self) -> ZvmEdev:
        self.drive_spec  # noqa: B018 - validates the catalog name
        try:
            lookup("adapters", self.adapter)
        except KeyError as exc:
            raise field_problem("adapter", str(exc.args[0])) from None
        return self

    @property
    def drive_spec(self) -> FlashDeviceSpec:
        return _device("drives", self.drive, "drive")


class GenericStation(StrictModel):
    """A textbook service centre: ``servers`` identical servers, FCFS, one service-time law."""

    name: str = "device"
    servers: int = Field(default=1, ge=1, le=100_000)
    service_time_us: float = Field(gt=0, le=1e9, description="mean service time")
    distribution: Literal["exponential", "deterministic", "lognormal"] = "exponential"
    cv: float = Field(default=1.0, gt=0, le=10, description="coefficient of variation (lognormal only)")


class Generic(StrictModel):
    """A tandem of generic stations behind a zero-cost host: queueing-theory scenarios."""

    kind: Literal["generic"] = "generic"
    host: HostConfig = Field(default_factory=HostConfig)
    stations: list[GenericStation] = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _unique_names(self) -> Generic:
        names = [s.name for s in self.stations]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise field_problem(f"stations.{i}.name", f"station name {name!r} is used twice")
        return self


Topology = Annotated[DirectNvme | San | Exflash | ZvmEdev | Generic, Field(discriminator="kind")]
TOPOLOGY_KINDS = ("direct_nvme", "san", "exflash", "zvm_edev", "generic")
FLASH_KINDS = frozenset({"direct_nvme", "exflash", "zvm_edev"})
"""Attachments whose flash devices the solvers model (a scenario's ``device_model``); a SAN's back end is its storage
server's, a generic scenario's stations are textbook queues."""
