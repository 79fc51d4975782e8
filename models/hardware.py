"""Hardware specifications: what the catalog files hold and what a scenario may spell out inline.

Units are fixed by the field names: ``_tb`` decimal terabytes, ``_gbs`` decimal
gigabytes per second, ``_kiops`` thousands of I/Os per second (4 KiB random),
``_us`` microseconds (queue depth 1, 4 KiB). Every catalog entry carries a
``sources`` map that cites, for each number, the seed document and table or the
public datasheet it comes from (tests/models/test_catalog.py enforces this).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from models.common import StrictModel, field_problem

PCIE_GBS_PER_LANE: dict[int, float] = {3: 0.985, 4: 1.969, 5: 3.938}
"""Effective GB/s per lane and direction after line encoding (128b/130b), PCI-SIG base spec rates."""


class Price(StrictModel):
    """A purchase price. Catalog prices are list-price assumptions unless a source says otherwise."""

    usd: float = Field(ge=0)
    kind: Literal["list_price_assumption", "quoted", "user"] = "list_price_assumption"
    as_of: str = Field(description="Date the price applies to, YYYY-MM")
    source: str = Field(description="Where the figure comes from, or why it is assumed")


class CatalogEntry(StrictModel):
    """Fields every catalog entry shares."""

    description: str
    vendor: str = ""
    sources: dict[str, str] = Field(default_factory=dict, description="field name -> citation")
    price: Price | None = None


class PcieLink(StrictModel):
    """A PCIe link: generation x lanes. Bandwidth is per direction (PCIe is full duplex)."""

    generation: Literal[3, 4, 5] = 4
    lanes: Literal[1, 2, 4, 8, 16] = 4

    @property
    def gbs(self) -> float:
        """Effective GB/s in one direction."""
        return PCIE_GBS_PER_LANE[self.generation] * self.lanes


class DeviceBehaviour(StrictModel):
    """Internal-mechanism parameters of a flash device that datasheets do not publish.

    Defaults come from models/catalog/parameters.yaml (``device_behaviour``) and are
    the free parameters the calibration fits; a catalog entry or scenario may override them.
    """

    service_cv: float | None = Field(default=None, ge=0, le=5, description="coefficient of variation of NAND service times")
    read_channel_cv: float | None = Field(default=None, ge=0, le=5,
                                          description="coefficient of variation of a read's time on the read-bandwidth channel")
    write_cache_slots: int | None = Field(default=None, ge=1, description="writes the power-protected cache holds before acks stall")
    program_time_us: float | None = Field(default=None, gt=0, description="time one cached write occupies a NAND program unit")
    write_ack_us: float | None = Field(default=None, gt=0, description="cache acknowledgement time when the cache is idle; default: write_latency_us")
    shared_dies: bool = Field(default=False, description="reads and NAND programs occupy the same dies (no separate program units): "
                              "a mixed workload gets the harmonic mix of the read and write limits, not their sum")


class FlashDeviceSpec(CatalogEntry):
    """An NVMe drive or a memory-channel flash DIMM.

    The engine derives internal parallelism from the datasheet: read units
    P_r = read IOPS x QD1 read latency (Little's law at the IOPS knee), write program
    units P_w = write IOPS x program time; bandwidth caps apply per transfer.
    """

    interface: Literal["nvme_pcie", "memory_channel"] = "nvme_pcie"
    form_factor: str = "U.2"
    pcie_generation: Literal[3, 4, 5] | None = 4
    pcie_lanes: Literal[1, 2, 4, 8, 16] | None = 4
    memory_channel_gbs: float | None = Field(default=None, gt=0, description="memory channel bandwidth for DIMMs")
    capacity_tb: float = Field(gt=0)
    read_bw_gbs: float = Field(gt=0, description="sequential read bandwidth")
    write_bw_gbs: float = Field(gt=0, description="sequential write bandwidth")
    random_read_bw_gbs: float | None = Field(default=None, gt=0, description="bandwidth cap on random reads if lower than sequential")
    random_write_bw_gbs: float | None = Field(default=None, gt=0, description="bandwidth cap on random writes if lower than sequential")
    read_kiops: float = Field(gt=0, description="4 KiB random read IOPS (thousands)")
    write_kiops: float = Field(gt=0, description="4 KiB random write IOPS (thousands)")
    read_latency_us: float = Field(gt=0, description="QD1 4 KiB read latency")
    write_latency_us: float = Field(gt=0, description="QD1 4 KiB write latency (acknowledged from the write cache)")
    max_namespaces: int = Field(default=1, ge=1)
    max_queues: int = Field(default=128, ge=1, description="NVMe I/O queue pairs the controller supports")
    max_queue_depth: int = Field(default=1024, ge=1, description="entries per NVMe I/O queue")
    dwpd: float | None = Field(default=None, ge=0)
    behaviour: DeviceBehaviour = Field(default_factory=DeviceBehaviour)

    @property
    def link(self) -> PcieLink | None:
        if self.pcie_generation is None or self.pcie_lanes is None:
            return None
        return PcieLink(generation=self.pcie_generation, lanes=self.pcie_lanes)


class NvmeAdapterSpec(CatalogEntry):
    """A PCIe adapter that attaches NVMe drives: a JBOF adapter (EJ1Y, EJ1X) or a one-drive carrier."""

    max_drives: int = Field(ge=1)
    drives_per_connector: int = Field(default=1, ge=1)
    uplink_generation: Literal[3, 4, 5] = 4
    uplink_lanes: Literal[1, 2, 4, 8, 16] = 16

    @property
    def uplink(self) -> PcieLink:
        return PcieLink(generation=self.uplink_generation, lanes=self.uplink_lanes)


class SanAdapterSpec(CatalogEntry):
    """A host SAN adapter (FICON Express32S in FCP mode, an FC HBA): ports, speed, per-port I/O rate limit."""

    protocols: list[Literal["fcp", "nvme_fc"]] = Field(min_length=1)
    ports: int = Field(ge=1)
    port_gbps: float = Field(gt=0, description="line rate per port, Gb/s")
    port_gbs: float = Field(gt=0, description="usable payload GB/s per port and direction")
    port_kiops: float = Field(gt=0, description="I/O rate limit per port (thousands)")


class StorageServerSpec(CatalogEntry):
    """A SAN storage server: front-end ports, a cache, write-back destage, a flash back end."""

    max_front_end_ports: int = Field(ge=1)
    port_gbps: float = Field(gt=0)
    port_gbs: float = Field(gt=0, description="usable payload GB/s per front-end port and direction")
    port_kiops: float = Field(gt=0, description="I/O rate one front-end port sustains (thousands)")
    cache_gb: float = Field(gt=0)
    controller_cores: int = Field(ge=1, description="cores processing I/Os in the controllers")
    controller_us_per_io: float = Field(gt=0, description="controller CPU time per I/O (cache hit path)")
    cache_hit_latency_us: float = Field(gt=0, description="service time of a cache hit beyond controller CPU")
    destage_gbs: float = Field(gt=0, description="rate the back end absorbs destaged writes")
    backend_read_latency_us: float = Field(gt=0)
    backend_parallelism: int = Field(ge=1, description="concurrent back-end reads (flash modules x internal parallelism)")
    backend_read_gbs: float = Field(gt=0)
    raw_capacity_tb: float = Field(gt=0)


HostStack = Literal["linux_nvme", "scsi_fcp", "nvme_fc", "zvm_cp", "exflash_driver", "ibmi_nvme", "none"]


class HostSpec(CatalogEntry):
    """A host (LPAR or server): cores and CPU microseconds per I/O for each storage stack.

    ``cpu_us_per_io`` is the whole path length (submit + completion) of one device I/O;
    ``submit_fraction`` of it is spent before the I/O is issued, the rest on completion.
    """

    cores: int = Field(ge=1)
    cpu_us_per_io: dict[HostStack, float] = Field(default_factory=dict)
    serial_us_per_io: dict[HostStack, float] = Field(
        default_factory=dict, description="per stack: the stack's one-I/O-at-a-time section on this host (default: parameters.yaml host_defaults)")
    submit_fraction: float = Field(default=0.5, ge=0, le=1)
    off_path_fraction: float = Field(
        default=0.0, ge=0, le=1,
        description="share of the path length no I/O waits for: interrupt and completion work on other cores, "
                    "overlapping the next I/O; it keeps cores busy but adds no latency")

    @model_validator(mode="after")
    def _non_negative_path_lengths(self) -> HostSpec:
        for stack, us in self.cpu_us_per_io.items():
            if us < 0:
                raise field_problem(f"cpu_us_per_io.{stack}", f"must be >= 0 us, got {us}")
        return self
