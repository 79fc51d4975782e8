"""Purchase cost (capex), usable capacity and price-performance of a configuration.

Prices come from the catalog (``price`` of each entry in models/catalog/*.yaml, each with
its source; override them with ``FLASHPLAN_CATALOG_DIR``). What is priced:

* direct NVMe - the drives and the JBOF adapters or one-drive carriers;
* SAN - the host SAN adapters (FICON Express32S, FC HBAs) and the storage server, or a
  share of it (``storage_server_share``: the fraction of the server bought for this workload);
* eXFlash - the DIMMs;
* z/VM EDEV - the drives and their NVMe adapters.

Hosts (processors, memory) are not priced: the question is what the storage costs.

Usable capacity (decimal TB) follows the volume layer of the engine (sim/route/volume.py):
mirrors (raid10, ibmi_mirror) keep half of the members' space, raid1 keeps one member
(md raid1 is an n-way mirror: with the usual 2 drives that is half), raid5 (n-1)/n,
raid6 (n-2)/n of n members, jbod and raid0 all of it. Members are namespaces (eXFlash: DIMMs), and a
namespace of ``size_gb`` may leave part of the drive unallocated (IBM i keeps space
outside the namespaces for later use, seed 001). A SAN volume offers LUN count x LUN
size when the LUN size is given, else the storage server's capacity.

Price-performance follows the SPC-1 convention (Storage Performance Council, SPC-1 v3.6:
price-performance is "$/SPC-1 KIOPS", total price divided by thousands of I/Os per
second); ``usd_per_kiops`` is that figure for any throughput, ``usd_per_usable_tb`` the
capacity figure.

"x% better price-performance" (seed 000 section 4.2: NVMe "up to 96% better" than FCP
LUNs on a DS8950F with throughput within 16%) can only mean that the cost per unit of
throughput is x% lower:

    better_pct = 100 * (1 - (C_a / P_a) / (C_b / P_b))

where C is the cost and P the throughput (IOPS, transactions/s, queries/hour: any unit,
the same for both). The alternative reading, throughput per dollar, is reported beside it:

    perf_per_dollar_ratio = (P_a / C_a) / (P_b / C_b)   (96% lower cost per unit = 25x per dollar)

Seed 000 compares "purchase costs of NVMe SSDs with the IBM NVMe Carrier versus the
purchase costs of an external storage server with the same amount of raw storage
capacity": drives and carriers only (no host adapters), the DS8950F's price pro-rated
to the NVMe side's raw capacity. ``price_performance_between(..., storage_only=True,
equal_raw_capacity=True)`` applies that convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from models.catalog import lookup
from models.hardware import FlashDeviceSpec, Price
from models.scenario import Scenario
from models.topology import DirectNvme, Exflash, Generic, San, ZvmEdev

TopologyModel = DirectNvme | San | Exflash | ZvmEdev | Generic


class CostError(ValueError):
    """A configuration that cannot be priced (no price in the catalog, a textbook topology)."""


@dataclass(frozen=True)
class CostLine:
    """One purchased item: quantity x unit price, with where the price comes from."""

    item: str
    model: str
    quantity: float
    unit_usd: float
    source: str

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_usd


@dataclass(frozen=True)
class Capex:
    """The purchase cost of a configuration, line by line, and its capacities."""

    lines: tuple[CostLine, ...]
    raw_tb: float
    usable_tb: float
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def total_usd(self) -> float:
        return sum(line.total_usd for line in self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "total_usd": self.total_usd,
            "raw_tb": self.raw_tb,
            "usable_tb": self.usable_tb,
            "lines": [
                {"item": ln.item, "model": ln.model, "quantity": ln.quantity, "unit_usd": ln.unit_usd,
                 "total_usd": ln.total_usd, "source": ln.source}
                for ln in self.lines
            ],
            "notes": list(self.notes),
        }


# -- capacity ----------------------------------------------------------------------------

def data_members(layout: str, members: int) -> int:
    """How many members' worth of space hold data under ``layout``: all (JBOD, RAID-0), half
    (RAID-10, IBM i mirroring), one (RAID-1), all but the parity (RAID-5, RAID-6). The volume
    layer (sim/route/volume.py ``Volume.capacity``) and the usable capacity here both use this rule."""
    if members < 1:
        raise ValueError(f"a volume needs at least one member, got {members}")
    if layout in ("jbod", "raid0"):
        return members
    if layout in ("raid10", "ibmi_mirror"):
        return members // 2
    if layout == "raid1":
        return 1
    if layout == "raid5":
        return members - 1
    if layout == "raid6":
        return members - 2
    raise ValueError(f"unknown layout {layout!r}")


def data_fraction(layout: str, members: int) -> float:
    """Fraction of the members' space that holds data under ``layout`` (``data_members`` / members)."""
    return data_members(layout, members) / members


def _drive(value: str | FlashDeviceSpec, section: str) -> FlashDeviceSpec:
    if isinstance(value, FlashDeviceSpec):
        return value
    spec: FlashDeviceSpec = lookup(section, value)
    return spec


def raw_capacity_tb(topology: TopologyModel) -> float:
    """Raw flash bought: drives x capacity, DIMMs x capacity, or the storage server's raw capacity."""
    if isinstance(topology, DirectNvme):
        return topology.drives * topology.drive_spec.capacity_tb
    if isinstance(topology, ZvmEdev):
        return topology.drives * topology.drive_spec.capacity_tb
    if isinstance(topology, Exflash):
        return topology.dimms * topology.dimm_spec.capacity_tb
    if isinstance(topology, San):
        return float(lookup("storage_servers", topology.storage_server).raw_capacity_tb)
    raise CostError("a generic (textbook) topology has no hardware to price or size")


def usable_capacity_tb(topology: TopologyModel, lun_size_gb: float | None = None) -> float:
    """Capacity the host can store data in, after RAID, mirroring and namespace allocation."""
    if isinstance(topology, DirectNvme):
        spec = topology.drive_spec
        per_drive = topology.namespaces.per_drive
        namespace_tb = (topology.namespaces.size_gb / 1000) if topology.namespaces.size_gb else spec.capacity_tb / per_drive
        members = topology.drives * per_drive
        return members * namespace_tb * data_fraction(topology.layout, members)
    if isinstance(topology, Exflash):  # each DIMM is a member of the volume (sim/route/volume.py)
        return topology.dimms * topology.dimm_spec.capacity_tb * data_fraction(topology.layout, topology.dimms)
    if isinstance(topology, ZvmEdev):
        return topology.drives * topology.drive_spec.capacity_tb
    if isinstance(topology, San):
        if lun_size_gb is not None:
            allocated = topology.luns * lun_size_gb / 1000
        else:
            allocated = raw_capacity_tb(topology)
        return allocated * data_fraction(topology.layout, topology.luns)
    raise CostError("a generic (textbook) topology has no hardware to price or size")


# -- capex --------------------------------------------------------------------------------

def _price(section: str, name: str, price: Price | None) -> Price:
    if price is None:
        raise CostError(f"catalog {section}.{name} has no price; add one (FLASHPLAN_CATALOG_DIR) to cost this configuration")
    return price


def _line(item: str, section: str, name: str, quantity: float, price: Price | None) -> CostLine:
    p = _price(section, name, price)
    return CostLine(item=item, model=name, quantity=quantity, unit_usd=p.usd, source=p.source)


def capex(
    topology: TopologyModel,
    *,
    storage_server_share: float = 1.0,
    storage_only: bool = False,
    lun_size_gb: float | None = None,
) -> Capex:
    """Purchase cost of ``topology`` from catalog prices.

    ``storage_server_share`` (0..1] charges that fraction of a SAN storage server's price
    (1: the server is bought for this workload). ``storage_only`` leaves out host SAN
    adapters, as seed 000's "storage costs" do. ``lun_size_gb`` sizes the SAN volume.
    """
    if not 0 < storage_server_share <= 1:
        raise ValueError(f"storage_server_share must be in (0, 1], got {storage_server_share}")
    lines: list[CostLine] = []
    notes: list[str] = []
    if isinstance(topology, DirectNvme):
        spec = topology.drive_spec
        lines.append(_line("NVMe drive", "drives", topology.drive_name, topology.drives, spec.price))
        adapter = lookup("adapters", topology.adapter)
        lines.append(_line("NVMe adapter / carrier", "adapters", topology.adapter, topology.adapters, adapter.price))
    elif isinstance(topology, ZvmEdev):
        spec = topology.drive_spec
        name = topology.drive if isinstance(topology.drive, str) else (spec.description or "inline drive")
        lines.append(_line("NVMe drive", "drives", name, topology.drives, spec.price))
        adapter = lookup("adapters", topology.adapter)
        count = math.ceil(topology.drives / adapter.max_drives)
        lines.append(_line("NVMe adapter / carrier", "adapters", topology.adapter, count, adapter.price))
    elif isinstance(topology, Exflash):
        spec = topology.dimm_spec
        name = topology.dimm if isinstance(topology.dimm, str) else (spec.description or "inline DIMM")
        lines.append(_line("flash DIMM", "dimms", name, topology.dimms, spec.price))
    elif isinstance(topology, San):
        if not storage_only:
            hba = lookup("san_adapters", topology.host_adapter)
            lines.append(_line("host SAN adapter", "san_adapters", topology.host_adapter, topology.host_adapters, hba.price))
        server = lookup("storage_servers", topology.storage_server)
        lines.append(_line("storage server", "storage_servers", topology.storage_server, storage_server_share, server.price))
        if storage_server_share < 1:
            notes.append(f"storage server charged at a share of {storage_server_share:.4g} of its price")
    else:
        raise CostError("a generic (textbook) topology has no hardware to price or size")
    raw = raw_capacity_tb(topology)
    usable = usable_capacity_tb(topology, lun_size_gb)
    if isinstance(topology, San):
        raw *= storage_server_share  # the share of the server bought is the share of its flash
        if lun_size_gb is None:
            usable *= storage_server_share
    return Capex(lines=tuple(lines), raw_tb=raw, usable_tb=usable, notes=tuple(notes))


# -- price-performance ----------------------------------------------------------------------

def usd_per_kiops(cost_usd: float, iops: float) -> float:
    """SPC-1 price-performance: dollars per thousand I/Os per second (inf when nothing is delivered)."""
    return cost_usd / (iops / 1000.0) if iops > 0 else math.inf


AT_BOUND = "at the throughput bound"
"""The basis of a $/KIOPS figure that divides by the fast path's throughput bound Xmax (what the configuration can
deliver at most: the planner ranks by it, the Plan page and the Size page's estimate quote it)."""
AT_SIMULATED = "at the simulated IOPS"
"""The basis of a $/KIOPS figure that divides by the DES's mean IOPS under the scenario's own load (``flashplan cost``,
the Size page's result)."""


def usd_per_usable_tb(cost_usd: float, usable_tb: float) -> float:
    """Dollars per usable decimal terabyte (inf when nothing is usable)."""
    return cost_usd / usable_tb if usable_tb > 0 else math.inf


@dataclass(frozen=True)
class PricePerformance:
    """Price-performance of configuration A against B (any throughput unit, the same for both)."""

    cost_a: float
    perf_a: float
    cost_b: float
    perf_b: float

    @property
    def cost_per_unit_a(self) -> float:
        return self.cost_a / self.perf_a if self.perf_a > 0 else math.inf

    @property
    def cost_per_unit_b(self) -> float:
        return self.cost_b / self.perf_b if self.perf_b > 0 else math.inf

    @property
    def better_pct(self) -> float:
        """How much lower A's cost per unit of throughput is than B's, in percent (seed 000's reading)."""
        return 100.0 * (1.0 - self.cost_per_unit_a / self.cost_per_unit_b)

    @property
    def perf_per_dollar_ratio(self) -> float:
        """A's throughput per dollar divided by B's (the alternative, ratio form)."""
        return self.cost_per_unit_b / self.cost_per_unit_a

    @property
    def perf_per_dollar_gain_pct(self) -> float:
        """A's throughput per dollar above B's, in percent (ratio form: 25x per dollar = 2,400% more)."""
        return 100.0 * (self.perf_per_dollar_ratio - 1.0)

    def as_dict(self) -> dict[str, float]:
        return {
            "cost_a_usd": self.cost_a, "perf_a": self.perf_a, "cost_b_usd": self.cost_b, "perf_b": self.perf_b,
            "cost_per_unit_a": self.cost_per_unit_a, "cost_per_unit_b": self.cost_per_unit_b,
            "better_pct": self.better_pct, "perf_per_dollar_ratio": self.perf_per_dollar_ratio,
            "perf_per_dollar_gain_pct": self.perf_per_dollar_gain_pct,
        }


def price_performance(cost_a: float, perf_a: float, cost_b: float, perf_b: float) -> PricePerformance:
    """Price-performance of A against B from costs and throughputs (see the module docstring)."""
    for name, value in (("cost_a", cost_a), ("cost_b", cost_b)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    for name, value in (("perf_a", perf_a), ("perf_b", perf_b)):
        if not value > 0:
            raise ValueError(f"{name} must be > 0, got {value}")
    return PricePerformance(cost_a, perf_a, cost_b, perf_b)


@dataclass(frozen=True)
class Comparison:
    """Two priced configurations and their price-performance (A against B)."""

    capex_a: Capex
    capex_b: Capex
    result: PricePerformance


def _topology(item: Scenario | TopologyModel) -> TopologyModel:
    return item.topology if isinstance(item, Scenario) else item


def price_performance_between(
    a: Scenario | TopologyModel,
    perf_a: float,
    b: Scenario | TopologyModel,
    perf_b: float,
    *,
    storage_only: bool = False,
    equal_raw_capacity: bool = False,
) -> Comparison:
    """Price both configurations from the catalog and compare their price-performance.

    ``perf_a`` / ``perf_b`` are throughputs in one unit (simulated IOPS, or a measured
    transactions/s). ``equal_raw_capacity`` charges a SAN side only the share of its
    storage server that matches the raw capacity of the direct-attached side (seed 000:
    "an external storage server with the same amount of raw storage capacity"); it needs
    exactly one SAN side. ``storage_only`` leaves out host SAN adapters (seed 000 compares
    "storage costs": drives and carriers against the storage server).

    Seed 000 calibration: A = examples/s1_linuxone_nvme_raid10.yaml, B =
    examples/s1_linuxone_fcp_ds8950f.yaml, ``storage_only=True, equal_raw_capacity=True``,
    throughputs as measured (YCSB: NVMe up to 16% higher; BDI: DS8950F up to 7% higher).
    """
    ta, tb = _topology(a), _topology(b)
    share_a = share_b = 1.0
    if equal_raw_capacity:
        if isinstance(ta, San) == isinstance(tb, San):
            raise ValueError("equal_raw_capacity pro-rates a storage server to the other side's raw capacity: "
                             "exactly one side must be a SAN configuration")
        if isinstance(tb, San):
            share_b = min(1.0, raw_capacity_tb(ta) / raw_capacity_tb(tb))
        else:
            share_a = min(1.0, raw_capacity_tb(tb) / raw_capacity_tb(ta))
    cap_a = capex(ta, storage_server_share=share_a, storage_only=storage_only)
    cap_b = capex(tb, storage_server_share=share_b, storage_only=storage_only)
    return Comparison(cap_a, cap_b, price_performance(cap_a.total_usd, perf_a, cap_b.total_usd, perf_b))
