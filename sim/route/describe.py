"""One route description per attachment, derived from a Scenario once and read by both solvers.

``describe(scenario)`` is the only place that reads the topology's kind to lay out a route: it
returns a ``GenericRoute``, ``DirectRoute``, ``SanRoute``, ``ExflashRoute`` or ``ZvmRoute`` whose
fields are the elements (sim/route/elements.py) of that attachment's I/O path (DESIGN.md section 3)
with every number already derived from the scenario and the catalog (flash parameters, SAN
parameters, the resolved host stack, link bandwidths, member capacities). The DES (sim/des/model.py)
and the analytic fast path (sim/analytic/paths.py) each turn a description into their own network;
neither derives a number of its own.

Every device route of an attachment is: host CPU submit -> concurrency limits -> links -> device
-> links back -> release -> host CPU completion; the volume layer (``VolumeSplit``) first splits a
logical I/O into device I/Os on its members. Each description's docstring gives its order.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from models.catalog import Catalog, load_catalog, parameter
from models.faults import MD_SYNC_WINDOW_KIB, Faults, failed_hardware, rebuild_volumes
from models.hardware import FlashDeviceSpec
from models.scenario import Scenario
from models.topology import DirectNvme, Exflash, Generic, HostConfig, San, Topology, ZvmEdev
from sim.route import derived
from sim.route.elements import (
    DIV,
    IDENTITY,
    MOD,
    MOD_MOD,
    Channel,
    DeviceBank,
    LinkBank,
    MemberMap,
    PoolBank,
    PortBank,
    RebuildStream,
    ServiceLaw,
    StationBank,
    VolumeSplit,
    idle_rebuild_bytes_per_s,
)
from sim.route.flash import DieLayout, FlashParameters, die_layout, flash_parameters, reads_meet_programs, uses_die_layout
from sim.route.host import DEFAULT_STACK, ResolvedHost, resolve_host
from sim.route.links import pcie_gbs, zvm_link_gbs
from sim.route.san import SanParameters, san_parameters

STRIPED = ("raid0", "raid10", "ibmi_mirror")
"""Layouts whose chunks a sequential stream walks through member by member."""
MIRROR_PAIRS = ("raid10", "ibmi_mirror")
"""Layouts whose chunks live on a pair of copies, reads going to the less-loaded one."""
ZVM_CHUNK_BYTES = 256 * 1024
"""The z/VM volume layer's stride (JBOD: base EDEVs are independent; the value only aligns offsets)."""
GENERIC_CAPACITY_BYTES = 1 << 40
"""A generic station chain has no volume layer: offsets are not used, the address space is nominal."""


@dataclass(frozen=True)
class Route:
    """What every attachment's description has: the host CPU, the volume layer, and whether its
    flash devices see reads meet programs (``reads_meet_programs``)."""

    host: ResolvedHost
    volume: VolumeSplit
    reads_meet_programs: bool


@dataclass(frozen=True)
class GenericRoute(Route):
    """A chain of generic stations (a measured disk described by its service law): host CPU submit,
    ``stations`` in order, host CPU completion. No volume layer (one member, offsets unused)."""

    stations: tuple[StationBank, ...]


@dataclass(frozen=True)
class DirectRoute(Route):
    """Direct-attached NVMe (seeds 000, 001): members are namespaces, member m namespace m // drives
    of drive m % drives; drive d sits behind adapter d % adapters.

    Read: submit, namespace slot, NVMe queue entry, device read, drive link and adapter uplink
    towards the host, release both, completion. Write: the links towards the device, then the
    device's write path. ``mirror_pairs``: mirror reads take the less-loaded copy.
    """

    uplinks: LinkBank
    """JBOF adapter uplinks (catalog ``adapters``: PCIe Gen4 x16 shared by its drives, seed 001)."""
    drive_links: LinkBank | None
    """Each drive's own PCIe link (generation x lanes of the drive), None when the catalog gives none."""
    nvme_queues: PoolBank
    """Each drive's NVMe submission queues: queue count x depth entries."""
    devices: DeviceBank
    namespaces: PoolBank
    """One per member: an IBM i disk arm's queue depth, else every NVMe queue entry."""
    mirror_pairs: bool


@dataclass(frozen=True)
class SanRoute(Route):
    """A SAN-attached storage server (seeds 000, 004): members are LUNs.

    Device I/O: the LUN queue (FCP) or association queues (NVMe/FC) slot, submit, host port and
    front-end port towards the device across the fabric, the server's controller, then a cache hit
    (``read_hit_ratio`` of reads), a back-end read (array then its bandwidth), a write into the
    write-back cache (destaged in the background) or a write-through destage; back through both
    ports, release, completion.
    """

    params: SanParameters
    host_ports: PortBank
    front_end_ports: PortBank
    limits: PoolBank
    fabric_latency_us: float
    controller: StationBank
    cache_hit: ServiceLaw
    backend: StationBank
    backend_bw: Channel
    destage: Channel
    write_cache: PoolBank
    write_back: bool
    read_hit_ratio: float


@dataclass(frozen=True)
class ExflashRoute(Route):
    """Memory-channel flash DIMMs (seed 002): members are DIMMs. A driver thread runs the submit and
    the completion path of the DIMMs it serves (``threads``, one I/O at a time); reads cross the
    memory channel towards the host after the device, writes before it."""

    threads: PoolBank
    channels: LinkBank | None
    devices: DeviceBank


@dataclass(frozen=True)
class ZvmRoute(Route):
    """z/VM emulated devices (seed 003): members are base EDEVs.

    An SSCH takes its base's subchannel or a HyperPAV alias (``subchannels``: ``bases`` + ``aliases``),
    then CP runs its channel program one device command per ``command_bytes`` page, one after another
    (a read page's media stage, then the SSCH's pages back to back through the read channel and drive link;
    a write page across the drive link into the write cache: sim/route/steps.py ``_zvm``), holds the
    subchannel for its turnaround, releases it, completes. The DES books a read SSCH's block when its last page
    starts its media stage (sim/des/model.py ``LastPageBlock``: the channel and link FCFS by the block's arrival,
    ``Backfill``); the description and the fast path are the same either way.
    """

    subchannels: str
    bases: int
    aliases: int
    links: LinkBank
    devices: DeviceBank
    turnaround_us: tuple[float, float]
    """CP's turnaround on a subchannel after a read and after a write (parameters.yaml ``zvm``)."""
    command_bytes: int
    """Bytes CP moves per device command of an EDEV channel program (parameters.yaml ``zvm.command_bytes``)."""


AnyRoute = GenericRoute | DirectRoute | SanRoute | ExflashRoute | ZvmRoute


@lru_cache(maxsize=4096)
def names(pattern: str, count: int) -> tuple[str, ...]:
    """Meter names ``pattern.format(i)`` for i < count."""
    return tuple([pattern.format(i) for i in range(count)])


@lru_cache(maxsize=1024)
def namespace_names(drives: int, members: int) -> tuple[str, ...]:
    """Member m is namespace m // drives of drive m % drives."""
    return tuple([f"drive{m % drives}.ns{m // drives}" for m in range(members)])


@lru_cache(maxsize=256)
def hba_port_names(host_ports: int, per_adapter: int) -> tuple[str, ...]:
    """SAN host ports: port i is port i % per_adapter of adapter i // per_adapter."""
    return tuple([f"hba{i // per_adapter}.port{i % per_adapter}" for i in range(host_ports)])


def layout_of(topo: Topology) -> str:
    """The volume layout over the members ("jbod" where the attachment has none: z/VM, generic)."""
    if isinstance(topo, (DirectNvme, San, Exflash)):
        return topo.layout
    return "jbod"


def volume_layout(topo: Topology) -> str | None:
    """The layout of the attachment's volume layer; None for a generic topology, which has none (its stations are the route)."""
    return None if isinstance(topo, Generic) else layout_of(topo)


def chunk_bytes_of(topo: Topology) -> int:
    """The stripe unit of the attachment's volume layer in bytes."""
    if isinstance(topo, (DirectNvme, San, Exflash)):
        return topo.chunk_kib * 1024
    if isinstance(topo, ZvmEdev):
        return ZVM_CHUNK_BYTES
    return 1 << 20


# -- parameters derived from the catalog (once per catalog and distinct input) -------------------


def device_spec(catalog: Catalog, section: str, value: str | FlashDeviceSpec) -> FlashDeviceSpec:
    """A drive or DIMM: an inline spec, or the catalog entry (the scenario was validated, so it exists)."""
    if isinstance(value, FlashDeviceSpec):
        return value
    spec: FlashDeviceSpec = catalog.section(section)[value]
    return spec


def device_parameters(catalog: Catalog, spec: FlashDeviceSpec, access: str) -> FlashParameters:
    """``flash_parameters`` of a device and access pattern."""
    params: FlashParameters = derived.remembered_for(catalog, ("flash", access), spec,
                                                     lambda: flash_parameters(spec, access))
    return params


def device_bank(catalog: Catalog, labels: tuple[str, ...], spec: FlashDeviceSpec, access: str, of: MemberMap,
                model: str) -> DeviceBank:
    """The devices of a route: ``flash_parameters``, and their ``die_layout`` where the device model gives them dies
    (``uses_die_layout``)."""
    dies: DieLayout | None = None
    if uses_die_layout(model, spec):
        dies = derived.remembered_for(catalog, ("dies",), spec, lambda: die_layout(spec))
    return DeviceBank(labels, device_parameters(catalog, spec, access), of, dies)


def host_of(catalog: Catalog, config: HostConfig, default_stack: str) -> ResolvedHost:
    """``resolve_host`` of a host configuration."""
    key = ("host", config.model, config.stack, config.cores, config.cpu_us_per_io, config.submit_fraction,
           config.off_path_fraction, default_stack)
    host: ResolvedHost = derived.remembered(catalog, key, lambda: resolve_host(config, default_stack))
    return host


def san_of(catalog: Catalog, topo: San, mean_bytes: float) -> SanParameters:
    """``san_parameters`` of a SAN attachment at a mean I/O size."""
    queues, cache = topo.nvme_queues, topo.cache
    key = ("san", topo.protocol, topo.host_adapter, topo.host_adapters, topo.luns, topo.lun_queue_depth,
           queues.count, queues.depth, topo.associations, topo.storage_server, topo.front_end_ports, cache.size_gb, mean_bytes)
    params: SanParameters = derived.remembered(catalog, key, lambda: san_parameters(topo, mean_bytes))
    return params


def uplink_gbs(catalog: Catalog, adapter: str) -> float:
    """GB/s of a catalog adapter's PCIe uplink (``NvmeAdapterSpec.uplink`` validates a PcieLink each time)."""
    gbs: float = derived.remembered(catalog, ("uplink", adapter), lambda: catalog.section("adapters")[adapter].uplink.gbs)
    return gbs


def subchannel_turnaround_us(catalog: Catalog) -> tuple[float, float]:
    """CP's turnaround on a z/VM subchannel after a read and after a write (parameters.yaml ``zvm``)."""
    turnaround: tuple[float, float] = derived.remembered(catalog, ("turnaround",), lambda: (
        float(parameter("zvm.subchannel_turnaround_us.read")), float(parameter("zvm.subchannel_turnaround_us.write"))))
    return turnaround


def zvm_command_bytes(catalog: Catalog) -> int:
    """Bytes CP moves per device command of an EDEV channel program (parameters.yaml ``zvm.command_bytes``)."""
    nbytes: int = derived.remembered(catalog, ("command bytes",), lambda: int(parameter("zvm.command_bytes")))
    return nbytes


# -- capacities -----------------------------------------------------------------------------------


def namespace_bytes(topo: DirectNvme, spec: FlashDeviceSpec) -> int:
    """Size of one namespace: the configured size, else the drive split evenly."""
    return int((topo.namespaces.size_gb or spec.capacity_tb * 1000 / topo.namespaces.per_drive) * 1e9)


def namespace_depth(topo: DirectNvme) -> int:
    """I/Os one namespace (an IBM i disk arm) may have outstanding: its queue depth, else every NVMe queue entry."""
    return topo.namespaces.queue_depth or topo.nvme_queues.count * topo.nvme_queues.depth


def zvm_base_bytes(topo: ZvmEdev, spec: FlashDeviceSpec) -> int:
    """Capacity behind one base EDEV: all drives split evenly over the base devices."""
    return int(spec.capacity_tb * 1e12 * topo.drives / topo.base_devices)


def dimms_per_driver_thread(topo: Exflash) -> int:
    """DIMMs one eXFlash driver thread serves: 1 with max-occupancy, else 2 (seed 002)."""
    return 1 if topo.max_occupancy else 2


# -- the attachments ------------------------------------------------------------------------------


def shared_load(scenario: Scenario) -> tuple[str, float, bool, bool]:
    """What the route takes from the load: (access pattern, mean I/O bytes, closed, reads meet programs).

    One workload gives its own. Several share one description (consolidation, an approximation):
    the devices are described as sequential only when every workload is sequential, the SAN sizes
    its per-byte costs at the workloads' mean size, closed jobs keep their members (open I/Os
    never use that), and reads meet programs when any workload writes while another (or the
    same) reads.
    """
    workloads = scenario.all_workloads()
    layout = layout_of(scenario.topology)
    if len(workloads) == 1:
        wl = workloads[0]
        return wl.access, wl.mean_bytes(), wl.kind == "closed", reads_meet_programs(wl.read_fraction, layout)
    access = "sequential" if all(w.access == "sequential" for w in workloads) else "random"
    mean_bytes = sum(w.mean_bytes() for w in workloads) / len(workloads)
    closed = any(w.kind == "closed" for w in workloads)
    reads = any(w.read_fraction > 0 for w in workloads)
    writes = any(w.read_fraction < 1 for w in workloads)
    meets = any(reads_meet_programs(w.read_fraction, layout) for w in workloads) or (reads and writes)
    return access, mean_bytes, closed, meets


def describe(scenario: Scenario, catalog: Catalog | None = None) -> AnyRoute:
    """The route description of ``scenario``'s attachment (the one dispatch on the topology's kind)."""
    catalog = catalog or load_catalog()
    topo = scenario.topology
    access, mean_bytes, closed, meets = shared_load(scenario)
    if isinstance(topo, Generic):
        return _generic(catalog, topo, meets)
    if isinstance(topo, DirectNvme):
        return _direct(catalog, topo, access, closed, meets, scenario.faults, scenario.device_model, scenario.placements())
    if isinstance(topo, San):
        return _san(catalog, topo, mean_bytes, closed, meets, scenario.faults)
    if isinstance(topo, Exflash):
        return _exflash(catalog, topo, access, closed, meets, scenario.device_model)
    if isinstance(topo, ZvmEdev):
        return _zvm(catalog, topo, access, closed, meets, scenario.device_model)
    raise TypeError(f"unknown topology {type(topo).__name__}")  # pragma: no cover - the union is closed


def _generic(catalog: Catalog, topo: Generic, meets: bool) -> GenericRoute:
    stations = tuple([StationBank((st.name,), st.servers, ServiceLaw(st.service_time_us, st.distribution, st.cv))
                      for st in topo.stations])
    return GenericRoute(host=host_of(catalog, topo.host, DEFAULT_STACK["generic"]),
                        volume=VolumeSplit("jbod", 1, 1 << 20, GENERIC_CAPACITY_BYTES, False),
                        reads_meet_programs=meets, stations=stations)


def degraded_volume(volume: VolumeSplit, topo: DirectNvme, faults: Faults | None, params: FlashParameters | None = None,
                    link_us_per_byte: float = 0.0,
                    placements: list[tuple[str, list[int] | None]] | None = None) -> VolumeSplit:
    """``volume`` with the members a scenario's ``faults`` took away and its rebuild stream (if any); ``params``
    (the drives' mechanism) and ``link_us_per_byte`` (drive link and uplink) give the stream's idle rate
    (``idle_rebuild_bytes_per_s``); with the
    workloads' ``placements`` (``Scenario.placements``) data loss is checked on each workload's own volume, and the
    stream rebuilds only the failed members some workload's volume holds, each within the volumes that hold it
    (``models.faults.rebuild_volumes``: their layout over their own members), onto the drives that carry them."""
    if faults is None:
        return volume
    # a workload alone (sim.analytic.classes.alone) lists only its own placement: the scenario's check is its validation's
    lost = failed_hardware(topo, faults, placements=placements, whole_scenario=False)
    rebuild = faults.rebuild
    stream = None
    rebuilt, volumes = rebuild_volumes(volume.members, lost.members, placements)
    if rebuild is not None and rebuilt:
        on_drive = Counter(m % topo.drives for m in rebuilt)
        per_drive, drives = max(on_drive.values()), len(on_drive)
        io = rebuild.io_bytes(volume.layout)
        cap = rebuild.cap_bytes_per_s(per_drive) * drives
        stream = RebuildStream(rebuilt, drives, cap, rebuild.floor_bytes_per_s(per_drive) * drives,
                               rebuild.depth, io, volume.member_bytes * per_drive, rebuild.throttle, rebuild.sync_io_depth,
                               max(1, -(-MD_SYNC_WINDOW_KIB * 1024 // io)),
                               idle_rebuild_bytes_per_s(cap, rebuild.depth, io, params, drives, link_us_per_byte)
                               if params is not None else cap, volumes)
    return VolumeSplit(volume.layout, volume.members, volume.chunk_bytes, volume.member_bytes, volume.closed_affinity,
                       lost.members, stream)


def _direct(catalog: Catalog, topo: DirectNvme, access: str, closed: bool, meets: bool, faults: Faults | None = None,
            model: str = "auto", placements: list[tuple[str, list[int] | None]] | None = None) -> DirectRoute:
    drives, adapters = topo.drives, topo.adapters
    members = drives * topo.namespaces.per_drive
    spec = device_spec(catalog, "drives", topo.drive)
    drive_of = (MOD, drives)
    gbs = pcie_gbs(spec.pcie_generation, spec.pcie_lanes)
    volume = VolumeSplit(topo.layout, members, topo.chunk_kib * 1024, namespace_bytes(topo, spec), closed)
    devices = device_bank(catalog, names("drive{}", drives), spec, access, drive_of, model)
    uplinks = LinkBank(names("adapter{}.uplink", adapters), uplink_gbs(catalog, topo.adapter), (MOD_MOD, drives, adapters))
    drive_links = LinkBank(names("drive{}.link", drives), gbs, drive_of) if gbs else None
    links = uplinks.us_per_byte + (drive_links.us_per_byte if drive_links is not None else 0.0)
    return DirectRoute(
        host=host_of(catalog, topo.host, DEFAULT_STACK["direct_nvme"]),
        volume=degraded_volume(volume, topo, faults, devices.params, links, placements),
        reads_meet_programs=meets,
        uplinks=uplinks,
        drive_links=drive_links,
        nvme_queues=PoolBank(names("drive{}.nvme_queues", drives), topo.nvme_queues.count * topo.nvme_queues.depth, drive_of),
        devices=devices,
        namespaces=PoolBank(namespace_names(drives, members), namespace_depth(topo), (IDENTITY,)),
        mirror_pairs=topo.layout in MIRROR_PAIRS,
    )


def _alive_ports(topo: San, faults: Faults | None, host_ports: int, hba_ports: int) -> tuple[int, ...] | None:
    """The host ports a scenario's ``faults`` leave (None: no fault, every port)."""
    if faults is None or not (faults.failed_ports or faults.failed_adapters):
        return None
    lost = failed_hardware(topo, faults, host_ports, hba_ports).ports
    return tuple([i for i in range(host_ports) if i not in lost])


def _san(catalog: Catalog, topo: San, mean_bytes: float, closed: bool, meets: bool, faults: Faults | None = None) -> SanRoute:
    fcp = topo.protocol == "fcp"
    p = san_of(catalog, topo, mean_bytes)
    hba_ports = catalog.section("san_adapters")[topo.host_adapter].ports
    cv, law = p.service_cv, p.law
    if fcp:
        limits = PoolBank(names("lun{}.queue", topo.luns), p.concurrency_slots, (IDENTITY,))
    else:
        limits = PoolBank(names("association{}.queues", topo.associations), p.concurrency_slots, (MOD, topo.associations))
    return SanRoute(
        host=host_of(catalog, topo.host, DEFAULT_STACK["san.fcp" if fcp else "san.nvme_fc"]),
        volume=VolumeSplit(topo.layout, topo.luns, topo.chunk_kib * 1024, p.lun_bytes, closed),
        reads_meet_programs=meets,
        params=p,
        host_ports=PortBank(hba_port_names(p.host_ports, hba_ports), p.host_port_us_per_byte, p.host_port_handling_us, p.paths,
                            _alive_ports(topo, faults, p.host_ports, hba_ports)),
        front_end_ports=PortBank(names("server.port{}", p.front_end_ports), p.front_end_port_us_per_byte,
                                 p.front_end_port_handling_us, p.paths),
        limits=limits,
        fabric_latency_us=topo.fabric_latency_us,
        controller=StationBank(("server.controller",), p.controller_cores, ServiceLaw(p.controller_us_per_io, law, cv)),
        cache_hit=ServiceLaw(p.cache_hit_latency_us, law, cv),
        backend=StationBank(("server.backend",), p.backend_parallelism, ServiceLaw(p.backend_read_latency_us, law, cv)),
        backend_bw=Channel("server.backend_bw", p.backend_read_gbs),
        destage=Channel("server.destage", p.destage_gbs),
        write_cache=PoolBank(("server.write_cache",), p.write_cache_slots),
        write_back=topo.cache.write_back,
        read_hit_ratio=topo.cache.read_hit_ratio,
    )


def _exflash(catalog: Catalog, topo: Exflash, access: str, closed: bool, meets: bool, model: str = "auto") -> ExflashRoute:
    dimms = topo.dimms
    spec = device_spec(catalog, "dimms", topo.dimm)
    channel_gbs = spec.memory_channel_gbs
    return ExflashRoute(
        host=host_of(catalog, topo.host, DEFAULT_STACK["exflash"]),
        volume=VolumeSplit(topo.layout, dimms, topo.chunk_kib * 1024, int(spec.capacity_tb * 1e12), closed),
        reads_meet_programs=meets,
        threads=PoolBank(names("driver_thread{}", topo.driver_threads), 1, (DIV, dimms_per_driver_thread(topo))),
        channels=LinkBank(names("dimm{}.memory_channel", dimms), channel_gbs, (IDENTITY,)) if channel_gbs else None,
        devices=device_bank(catalog, names("dimm{}", dimms), spec, access, (IDENTITY,), model),
    )


def _zvm(catalog: Catalog, topo: ZvmEdev, access: str, closed: bool, meets: bool, model: str = "auto") -> ZvmRoute:
    spec = device_spec(catalog, "drives", topo.drive)
    drive_of = (MOD, topo.drives)
    link = derived.remembered_for(catalog, ("zvm link", topo.adapter), spec, lambda: zvm_link_gbs(
        spec.pcie_generation, spec.pcie_lanes, uplink_gbs(catalog, topo.adapter)))
    return ZvmRoute(
        host=host_of(catalog, topo.host, DEFAULT_STACK["zvm_edev"]),
        volume=VolumeSplit("jbod", topo.base_devices, ZVM_CHUNK_BYTES, zvm_base_bytes(topo, spec), closed),
        reads_meet_programs=meets,
        subchannels="edev.subchannels",
        bases=topo.base_devices,
        aliases=topo.aliases,
        links=LinkBank(names("drive{}.link", topo.drives), link, drive_of),
        devices=device_bank(catalog, names("drive{}", topo.drives), spec, access, drive_of, model),
        turnaround_us=subchannel_turnaround_us(catalog),
        command_bytes=zvm_command_bytes(catalog),
    )


def meter_names(route: AnyRoute) -> tuple[str, ...]:
    """Every component of the route by the name both solvers report it under (utilization, bottleneck)."""
    out: list[str] = []
    if route.host.costs_cpu:
        out.append("host_cpu")
        if route.host.serial_us_per_io > 0:
            out.append("host_stack.serial")
    if isinstance(route, GenericRoute):
        for st in route.stations:
            out.extend(st.names)
    elif isinstance(route, DirectRoute):
        out.extend(route.uplinks.meter_names())
        if route.drive_links is not None:
            out.extend(route.drive_links.meter_names())
        out.extend(route.nvme_queues.names)
        out.extend(route.devices.meter_names())
        out.extend(route.namespaces.names)
    elif isinstance(route, SanRoute):
        out.extend(route.host_ports.meter_names())
        out.extend(route.front_end_ports.meter_names())
        out.extend(route.limits.names)
        out.extend([*route.controller.names, *route.backend.names, route.backend_bw.name, route.destage.name,
                    *route.write_cache.names])
    elif isinstance(route, ExflashRoute):
        out.extend(route.threads.names)
        if route.channels is not None:
            out.extend(route.channels.meter_names())
        out.extend(route.devices.meter_names())
    else:
        out.append(route.subchannels)
        out.extend(route.links.meter_names())
        out.extend(route.devices.meter_names())
    return tuple(out)


def clear_tables() -> None:
    """Forget the derived parameters and name tables (they are rebuilt on use)."""
    derived.clear()
    for cached in (names, namespace_names, hba_port_names, pcie_gbs):
        cached.cache_clear()


