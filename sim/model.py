"""Build the I/O path of a scenario out of engine components (DESIGN.md section 3).

Every attachment becomes: a logical route ``(volume split, complete)`` and, per
volume member and direction, a device route that charges host CPU, takes the
concurrency limits in order, crosses the links and the device, and gives everything
back. Parameters come from the scenario, the catalog (models/catalog/*.yaml) and the
engine defaults in models/catalog/parameters.yaml; nothing numeric is invented here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any

import simpy

from models.catalog import lookup, parameter
from models.hardware import FlashDeviceSpec, HostSpec, PcieLink
from models.scenario import Scenario
from models.topology import DirectNvme, Exflash, Generic, HostConfig, San, ZvmEdev
from sim.components import (
    READ,
    WRITE,
    Child,
    Delay,
    Fork,
    Hop,
    Job,
    JobFactory,
    Meter,
    Pool,
    Split,
    Station,
    SubchannelPool,
    _advance_event,
    advance,
    make_route,
    schedule,
)
from sim.rng import Streams, UnitSampler
from sim.volume import Volume


@dataclass
class Model:
    """A built I/O path: the logical route, every meter, the host CPU and the capacity."""

    route: tuple[Hop, ...]
    meters: list[Meter]
    cpu: Station | None
    capacity_bytes: int
    closed_affinity: bool
    uses_offsets: bool = True
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass
class ResolvedHost:
    """A host's CPU as the engine uses it.

    ``cpu_us_per_io`` is charged per device I/O, ``cpu_us_per_kib`` per KiB it moves (z/VM CP
    handles every 4 KiB page of a paging I/O, seed 003 Table 3), and ``serial_us_per_io`` is a
    section of the stack that one I/O at a time can run (the SCSI midlayer's host lock: the SCSI
    stack "hits a hockey stick" with CPU to spare, seed 004).
    """

    cores: int
    stack: str
    cpu_us_per_io: float
    submit_fraction: float
    cpu_us_per_kib: float = 0.0
    serial_us_per_io: float = 0.0
    off_path_fraction: float = 0.0
    """Share of the path length that runs beside the I/O, not in its way (``HostSpec.off_path_fraction``)."""

    def on_path(self, submit: bool) -> tuple[float, float]:
        """(us per I/O, us per KiB) of CPU the I/O waits for before it is issued (``submit``) or after it completes."""
        share = (1.0 - self.off_path_fraction) * (self.submit_fraction if submit else 1.0 - self.submit_fraction)
        return self.cpu_us_per_io * share, self.cpu_us_per_kib * share

    def off_path(self) -> tuple[float, float]:
        """(us per I/O, us per KiB) of CPU that runs beside the I/O after it completes."""
        return self.cpu_us_per_io * self.off_path_fraction, self.cpu_us_per_kib * self.off_path_fraction


def resolve_host(config: HostConfig, default_stack: str) -> ResolvedHost:
    """Cores and path length of the host: scenario overrides > catalog host > parameters.yaml defaults."""
    stack = config.stack or default_stack
    spec: HostSpec | None = lookup("hosts", config.model) if config.model else None
    cores = config.cores or (spec.cores if spec else (1 if stack == "none" else int(parameter("host_defaults.cores"))))
    if config.cpu_us_per_io is not None:
        cpu = config.cpu_us_per_io
    elif spec is not None and stack in spec.cpu_us_per_io:
        cpu = spec.cpu_us_per_io[stack]  # type: ignore[index]
    else:
        cpu = float(parameter(f"host_defaults.cpu_us_per_io.{stack}"))
    if config.submit_fraction is not None:
        frac = config.submit_fraction
    elif spec is not None:
        frac = spec.submit_fraction
    else:
        frac = float(parameter("host_defaults.submit_fraction"))
    per_kib = float(parameter(f"host_defaults.cpu_us_per_kib.{stack}", 0.0))
    if spec is not None and stack in spec.serial_us_per_io:
        serial = spec.serial_us_per_io[stack]  # type: ignore[index]
    else:
        serial = float(parameter(f"host_defaults.serial_us_per_io.{stack}", 0.0))
    return ResolvedHost(cores=cores, stack=stack, cpu_us_per_io=cpu, submit_fraction=frac,
                        cpu_us_per_kib=per_kib, serial_us_per_io=serial,
                        off_path_fraction=(config.off_path_fraction if config.off_path_fraction is not None
                                           else spec.off_path_fraction if spec is not None else 0.0))


def us_per_byte(gbs: float) -> float:
    """Transfer time in us of one byte at ``gbs`` GB/s (decimal GB)."""
    return 1.0 / (gbs * 1e3)


def _bytes_time(gbs: float) -> Callable[[Job], float]:
    """Transfer time in us of job.size bytes at ``gbs`` GB/s."""
    per_byte = us_per_byte(gbs)
    return lambda job: job.size * per_byte


def _constant(us: float) -> Callable[[Job], float]:
    return lambda job: us


def _scaled(mean_us: float, unit: UnitSampler) -> Callable[[Job], float]:
    return lambda job: mean_us * unit()


def _varied(service: Callable[[Job], float], b: Builder, cv: float) -> Callable[[Job], float]:
    """``service`` times a lognormal unit of coefficient of variation ``cv`` (unchanged when cv is 0)."""
    if cv <= 0:
        return service
    unit = b.streams.unit("lognormal", cv)
    return lambda job: service(job) * unit()


class Builder:
    """Creates components, registers their meters and hands out random streams in a fixed order."""

    def __init__(self, env: simpy.Environment, streams: Streams, jobs: JobFactory, access: str,
                 reads_meet_programs: bool = True):
        self.env = env
        self.streams = streams
        self.jobs = jobs
        self.access = access
        self.reads_meet_programs = reads_meet_programs
        """Whether flash devices see reads and writes together (``reads_meet_programs``): else no die locks."""
        self.meters: list[Meter] = []

    def station(self, name: str, servers: int, service: Callable[[Job], float]) -> Station:
        st = Station(self.env, name, servers, service)
        self.meters.append(st)
        return st

    def pool(self, name: str, slots: int) -> Pool:
        p = Pool(self.env, name, slots)
        self.meters.append(p)
        return p

    def link(self, name: str, gbs: float) -> tuple[Station, Station]:
        """A full-duplex link: (towards the host, towards the device) stations, one transfer at a time each."""
        t = _bytes_time(gbs)
        return self.station(f"{name}.to_host", 1, t), self.station(f"{name}.to_device", 1, t)

    def cpu(self, host: ResolvedHost) -> tuple[Station | None, Hop | None, Hop | None]:
        """The host CPU station and the submit / completion hops that charge it (None when it costs nothing)."""
        if host.cpu_us_per_io <= 0 and host.cpu_us_per_kib <= 0:
            return None, None, None
        st = self.station("host_cpu", host.cores, lambda job: job.cost)
        submit = _charge(st, *host.on_path(submit=True))
        if host.serial_us_per_io > 0:
            serial = self.station("host_stack.serial", 1, lambda job: host.serial_us_per_io)
            submit = make_route(submit, serial)  # type: ignore[assignment]  # spliced by make_route
        complete = _charge(st, *host.on_path(submit=False))
        beside = _charge(st, *host.off_path())
        if beside is not None:
            # completion work on another core, overlapping the next I/O: a background child
            complete = make_route(complete, Fork((beside,), self.jobs))  # type: ignore[assignment]  # spliced
        return st, submit, complete


def _charge(cpu: Station, us: float, us_per_kib: float = 0.0) -> Hop | None:
    """A hop that occupies one core of the host CPU for ``us`` + ``us_per_kib`` x KiB microseconds."""
    if us <= 0 and us_per_kib <= 0:
        return None
    if us_per_kib <= 0:
        def hop(job: Job) -> None:
            job.cost = us
            cpu(job)
        return hop
    per_byte = us_per_kib / 1024.0

    def sized(job: Job) -> None:
        job.cost = us + job.size * per_byte
        cpu(job)

    return sized


FIRST_READ_BYTES = 4096
"""The transfer a device's QD1 read latency includes (datasheets quote it for 4 KiB reads)."""


@dataclass(frozen=True)
class FlashParameters:
    """The internal mechanism of a flash drive or DIMM, derived from its datasheet (seeds 001, 002, 003).

    ``read_units`` P_r = read IOPS x QD1 read latency and ``program_units`` P_w = write IOPS x
    program time (Little's law at the IOPS knee); the program time is then adjusted so the
    rounded unit count still gives exactly the datasheet write IOPS. Bandwidths are the
    random-access caps when the workload is random and the datasheet gives them. What
    datasheets do not publish defaults to parameters.yaml ``device_behaviour``.
    """

    service_cv: float
    law: str
    read_units: int
    read_latency_us: float
    read_bw_gbs: float
    read_channel_gbs: float
    """The read-bandwidth channel every read crosses: ``read_bw_gbs``, except with shared dies, where
    the dies already hold a random read for its share of the random-read bandwidth and the channel
    is the device's sequential read bandwidth (else the transfer would be charged twice)."""
    read_channel_cv: float
    """Coefficient of variation of a read's time on the read-bandwidth channel (lognormal; 0: fixed)."""
    write_cache_slots: int
    write_ack_us: float
    write_bw_gbs: float
    program_units: int
    program_time_us: float
    shared_dies: bool = False
    random_access: bool = True

    def die_read_time_us(self, size: float) -> float:
        """With shared dies: how long a random read of ``size`` bytes holds a die: the array read and
        the first 4 KiB out (the QD1 latency), then every further byte over the die's share of the
        random-read bandwidth. Seed 002 Table 4: 142K 4 KiB and 42K 16 KiB reads per DIMM give the
        two ends; 8 KiB then follows (72K measured). Sequential reads are striped over the dies and
        only the read-bandwidth channel caps them."""
        if not self.random_access:
            return self.read_latency_us
        extra = max(0, size - FIRST_READ_BYTES)
        return self.read_latency_us + self.read_units * extra * us_per_byte(self.read_bw_gbs)

    def die_program_time_us(self, size: float) -> float:
        """With shared dies: how long programming ``size`` bytes holds a die, so that the dies alone
        give the datasheet write IOPS (small writes) and random-write bandwidth (large ones)."""
        per_io = self.program_time_us * self.read_units / self.program_units
        return max(per_io, self.read_units * size * us_per_byte(self.write_bw_gbs))


def flash_parameters(spec: FlashDeviceSpec, access: str) -> FlashParameters:
    """A device's parallelism, service means and bandwidth caps (shared by the DES and the analytic fast path)."""
    beh = spec.behaviour
    cv = beh.service_cv if beh.service_cv is not None else float(parameter("device_behaviour.service_cv"))
    slots = beh.write_cache_slots or int(parameter("device_behaviour.write_cache_slots"))
    t_prog = beh.program_time_us or float(parameter("device_behaviour.program_time_us"))
    read_units = max(1, round(spec.read_kiops * 1e3 * spec.read_latency_us * 1e-6))
    random = access == "random"
    read_bw = spec.random_read_bw_gbs if random and spec.random_read_bw_gbs else spec.read_bw_gbs
    program_units = max(1, round(sustained_write_kiops(spec, random) * 1e3 * t_prog * 1e-6))
    return FlashParameters(
        service_cv=cv,
        law="lognormal" if cv > 0 else "deterministic",
        read_units=read_units,
        read_latency_us=spec.read_latency_us,
        read_bw_gbs=read_bw,
        read_channel_gbs=spec.read_bw_gbs if beh.shared_dies else read_bw,
        read_channel_cv=beh.read_channel_cv if beh.read_channel_cv is not None else float(parameter("device_behaviour.read_channel_cv")),
        write_cache_slots=slots,
        write_ack_us=beh.write_ack_us or spec.write_latency_us,
        write_bw_gbs=spec.random_write_bw_gbs if random and spec.random_write_bw_gbs else spec.write_bw_gbs,
        program_units=program_units,
        # program time consistent with the write IOPS limit for the rounded unit count
        program_time_us=program_units / (sustained_write_kiops(spec, random) * 1e3) * 1e6,
        shared_dies=beh.shared_dies,
        random_access=random,
    )


SEQUENTIAL_PROGRAM_BYTES = 4096


def sustained_write_kiops(spec: FlashDeviceSpec, random: bool) -> float:
    """The write IOPS a device's NAND programs can sustain.

    Random overwrites: the datasheet's 4 KiB random-write IOPS, a steady-state figure that
    includes garbage collection (write amplification > 1). A sequential stream (or new data
    written into free space) invalidates whole erase blocks, so there is no garbage-collection
    copy work and the programs keep up with the sequential write bandwidth: 4 KiB programs at
    ``write_bw_gbs`` (the write_bw channel still caps the bytes). Evidence: seed 003 Table 3,
    CP block paging writes 157,000 pages/s (runs of 80 contiguous 4 KiB slots) to one P4510,
    rated 111.5K random 4 KiB writes/s. Writes scattered over the drive stay at the random
    rating: seed 001's RPG write test stalls at 250-283K writes/s per ES5F (rated 280K) on 2
    drives, its response time rising from 23 to 27.5-39.5 us.
    """
    if random:
        return spec.write_kiops
    return max(spec.write_kiops, spec.write_bw_gbs * 1e9 / SEQUENTIAL_PROGRAM_BYTES / 1e3)


def reads_meet_programs(scenario: Scenario) -> bool:
    """Whether a scenario's flash devices see reads and writes together (a mix, or RAID-5/6 parity
    updates that read before they write): only then can a read find its die programming."""
    rf = scenario.workload.read_fraction
    return rf < 1.0 and (rf > 0.0 or getattr(scenario.topology, "layout", "jbod") in ("raid5", "raid6"))


class DieProgramLocks:
    """Which NAND dies of a flash device are programming, and the reads that must wait for one.

    A die does one operation at a time: a page program (hundreds of us) keeps it until done.
    The device's units (read units, program units, or eXFlash's shared die pool) stand for its
    parallelism; on top of them a read's data sit on one die (uniformly random over ``dies``),
    and when that die is programming the read waits for the program to end before it can
    read. Writes are programmed wherever a die is free (the flash translation layer places new
    data), so pure reads and pure writes are unaffected: the share of dies programming is the
    program units' utilization, and a read that finds one waits for the rest of its program.
    Evidence: seed 002 Table 5, the eXFlash QD1 67/33 mix at 101.2 us while reads alone take
    119.0 us and writes between reads are acknowledged in about 5 us: the mix's reads take about
    148 us. Seed 003 Table 3, CP paging on one P4510 (146K page reads and 157K page writes per
    second): 1.28 ms per paging SSCH against 0.9 ms with reads that never meet a program.
    """

    __slots__ = ("busy", "env", "free_at", "idle", "pick")

    def __init__(self, env: simpy.Environment, dies: int, uniform: Callable[[], float]):
        self.env = env
        self.free_at = [0.0] * dies
        self.idle = list(range(dies))
        self.busy: list[tuple[float, int]] = []
        self.pick = uniform

    def start_program(self, duration: float) -> None:
        """A program of ``duration`` us starts now on a die that is not programming."""
        now = self.env.now
        busy, idle = self.busy, self.idle
        while busy and busy[0][0] <= now:
            idle.append(heappop(busy)[1])
        if not idle:  # every die programming: the caller's own limit allows no more (not reached)
            idle.append(heappop(busy)[1])
        k = idle.pop()
        end = now + duration
        self.free_at[k] = end
        heappush(busy, (end, k))

    def programmer(self, program_time: Callable[[Job], float]) -> Hop:
        """A hop that programs a write (``program_time``) on a free die and moves on when it is done."""
        env = self.env
        duration = self.timed(program_time)

        def program(job: Job) -> None:
            schedule(env, duration(job), job, _advance_event)

        return program

    def timed(self, program_time: Callable[[Job], float]) -> Callable[[Job], float]:
        """``program_time`` for a station of program units: each program it starts marks its die."""
        def duration(job: Job) -> float:
            d = program_time(job)
            self.start_program(d)
            return d

        return duration

    def wait_for_own_die(self, job: Job) -> None:
        """Hold a read until its die (uniformly random) has finished programming."""
        free_at = self.free_at
        wait = free_at[int(self.pick() * len(free_at))] - self.env.now
        if wait > 0.0:
            schedule(self.env, wait, job, _advance_event)
        else:
            advance(job)


class FlashDevice:
    """A flash drive or DIMM (seeds 001, 002, 003).

    Reads occupy one of P_r parallel NAND read units for the QD1 read latency
    (P_r = read IOPS x read latency, so the IOPS limit and the QD1 latency are both
    honoured), then the read-bandwidth channel for size / bandwidth on average (lognormal,
    ``device_behaviour.read_channel_cv``: a large read's pages come off several dies and
    channels, and it is done when the last has arrived). Writes take a
    slot of the power-protected write cache, are acknowledged after the cache
    acknowledgement time, and are destaged in the background through the
    write-bandwidth channel and one of P_w program units (P_w = write IOPS x program
    time); when the cache is full, writes wait for a destage, so sustained write
    IOPS and bandwidth obey the datasheet and latency grows past the knee. A write
    cache of one slot reproduces eXFlash WriteNow: back-to-back writes wait for the
    previous destage, writes separated by think time do not (seed 002, Figure 11).
    The numbers come from ``flash_parameters``.
    """

    def __init__(self, b: Builder, name: str, spec: FlashDeviceSpec):
        p = flash_parameters(spec, b.access)
        law, cv, ack = p.law, p.service_cv, p.write_ack_us
        read_time = _scaled(p.read_latency_us, b.streams.unit(law, cv))
        if p.shared_dies:
            dies = b.pool(f"{name}.nand_dies", p.read_units)
            die_unit = b.streams.unit(law, cv)
            read_on_die = Delay(b.env, lambda job: p.die_read_time_us(job.size) * die_unit())
            read_stage: tuple[Hop, ...] = make_route(dies.acquire, read_on_die, dies.release)
        else:
            read_stage = (b.station(f"{name}.read_units", p.read_units, read_time),)
        self.read_bw = b.station(f"{name}.read_bw", 1, _varied(_bytes_time(p.read_channel_gbs), b, p.read_channel_cv))
        self.write_cache = b.pool(f"{name}.write_cache", p.write_cache_slots)
        ack_unit = b.streams.unit(law, cv)
        self.ack = Delay(b.env, lambda job: ack * ack_unit())
        if p.shared_dies:
            # a cached write goes to the next free die, which frees its cache slot and stays busy
            # programming (in the background) for the time that makes the dies alone give the datasheet
            # write IOPS and bandwidth: the dies are the whole write path (no separate channel in tandem)
            program_unit = b.streams.unit(law, cv)
            die_program_time = lambda job: p.die_program_time_us(job.size) * program_unit()  # noqa: E731
            if b.reads_meet_programs:
                locks = DieProgramLocks(b.env, p.read_units, b.streams.uniform())
                program_on_die: Hop = locks.programmer(die_program_time)
                read_stage = (locks.wait_for_own_die, *read_stage)
            else:
                program_on_die = Delay(b.env, die_program_time)
            destage = make_route(dies.acquire, self.write_cache.release, Fork((program_on_die, dies.release), b.jobs))
        else:
            self.write_bw = b.station(f"{name}.write_bw", 1, _bytes_time(p.write_bw_gbs))
            program_time = _scaled(p.program_time_us, b.streams.unit(law, cv))
            if b.reads_meet_programs:
                locks = DieProgramLocks(b.env, p.program_units, b.streams.uniform())
                program_time = locks.timed(program_time)
                read_stage = (locks.wait_for_own_die, *read_stage)
            self.program_units = b.station(f"{name}.program_units", p.program_units, program_time)
            destage = make_route(self.write_bw, self.program_units, self.write_cache.release)
        self.read_hops: tuple[Hop, ...] = (*read_stage, self.read_bw)
        self.write_hops: tuple[Hop, ...] = (self.write_cache.acquire, self.ack, Fork(destage, b.jobs))
        self.parallelism = ({"nand_dies": p.read_units} if p.shared_dies else {"read_units": p.read_units, "program_units": p.program_units}
                            ) | {"write_cache_slots": p.write_cache_slots}


def pcie_gbs(gen: int | None, lanes: int | None) -> float | None:
    """GB/s per direction of a PCIe link, or None for a device without one (a DIMM)."""
    if gen is None or lanes is None:
        return None
    return PcieLink(generation=gen, lanes=lanes).gbs  # type: ignore[arg-type]


def namespace_depth(topo: DirectNvme) -> int:
    """I/Os one namespace (an IBM i disk arm) may have outstanding: its queue depth, else every NVMe queue entry."""
    return topo.namespaces.queue_depth or topo.nvme_queues.count * topo.nvme_queues.depth


def namespace_bytes(topo: DirectNvme, spec: FlashDeviceSpec) -> int:
    """Size of one namespace: the configured size, else the drive split evenly."""
    return int((topo.namespaces.size_gb or spec.capacity_tb * 1000 / topo.namespaces.per_drive) * 1e9)


def dimms_per_driver_thread(topo: Exflash) -> int:
    """DIMMs one eXFlash driver thread serves: 1 with max-occupancy, else 2 (seed 002)."""
    return 1 if topo.max_occupancy else 2


def zvm_link_gbs(spec: FlashDeviceSpec, adapter_uplink_gbs: float) -> float:
    """An EDEV drive's link: the slower of its own PCIe link and the adapter's slot."""
    gbs = pcie_gbs(spec.pcie_generation, spec.pcie_lanes)
    return min(gbs, adapter_uplink_gbs) if gbs else adapter_uplink_gbs


def zvm_base_bytes(topo: ZvmEdev, spec: FlashDeviceSpec) -> int:
    """Capacity behind one base EDEV: all drives split evenly over the base devices."""
    return int(spec.capacity_tb * 1e12 * topo.drives / topo.base_devices)


def subchannel_turnaround_us(op: int) -> float:
    """CP's turnaround on a z/VM subchannel after an I/O of kind ``op`` (parameters.yaml ``zvm``)."""
    return float(parameter(f"zvm.subchannel_turnaround_us.{'read' if op == READ else 'write'}"))


@dataclass(frozen=True)
class SanParameters:
    """The numbers of a SAN attachment, from the scenario and the catalog (seeds 000, 004).

    A port spends ``1 / port IOPS`` handling each I/O towards the device plus the write
    payload, and the read payload towards the host. I/Os take the ``paths`` host-port /
    front-end-port pairs round-robin. FCP limits each LUN to ``lun_queue_depth``
    outstanding I/Os; NVMe/FC gives each association its share of the queues
    (``concurrency_pools`` x ``concurrency_slots``). The write cache holds
    ``write_cache_slots`` writes of the workload's mean size.
    """

    host_ports: int
    host_port_us_per_byte: float
    host_port_handling_us: float
    front_end_ports: int
    front_end_port_us_per_byte: float
    front_end_port_handling_us: float
    paths: int
    service_cv: float
    law: str
    concurrency_pools: int
    concurrency_slots: int
    controller_cores: int
    controller_us_per_io: float
    cache_hit_latency_us: float
    backend_parallelism: int
    backend_read_latency_us: float
    backend_read_gbs: float
    destage_gbs: float
    write_cache_slots: int
    lun_bytes: int


def san_parameters(topo: San, mean_bytes: float) -> SanParameters:
    """The SAN path's numbers (shared by the DES builder and the analytic fast path); ``mean_bytes`` is the workload's mean I/O size."""
    hba = lookup("san_adapters", topo.host_adapter)
    server = lookup("storage_servers", topo.storage_server)
    cv = float(parameter("storage_server.service_cv"))
    host_ports = topo.host_adapters * hba.ports
    fcp = topo.protocol == "fcp"
    cache_gb = topo.cache.size_gb or server.cache_gb
    mean_write = max(512.0, mean_bytes)
    return SanParameters(
        host_ports=host_ports,
        host_port_us_per_byte=us_per_byte(hba.port_gbs),
        host_port_handling_us=1e3 / hba.port_kiops,
        front_end_ports=topo.front_end_ports,
        front_end_port_us_per_byte=us_per_byte(server.port_gbs),
        front_end_port_handling_us=1e3 / server.port_kiops,
        paths=max(host_ports, topo.front_end_ports),
        service_cv=cv,
        law="lognormal" if cv > 0 else "deterministic",
        concurrency_pools=topo.luns if fcp else topo.associations,
        concurrency_slots=(topo.lun_queue_depth if fcp
                           else max(1, topo.nvme_queues.count // topo.associations) * topo.nvme_queues.depth),
        controller_cores=server.controller_cores,
        controller_us_per_io=server.controller_us_per_io,
        cache_hit_latency_us=server.cache_hit_latency_us,
        backend_parallelism=server.backend_parallelism,
        backend_read_latency_us=server.backend_read_latency_us,
        backend_read_gbs=server.backend_read_gbs,
        destage_gbs=server.destage_gbs,
        write_cache_slots=max(1, min(10**9, int(cache_gb * 1e9 / mean_write))),
        lun_bytes=int(server.raw_capacity_tb * 1e12 / topo.luns),
    )


class RouteTable:
    """Device routes per (member, op[, variant]), built on first use."""

    def __init__(self, make: Callable[..., Sequence[Hop]]):
        self.make = make
        self.cache: dict[tuple[Any, ...], Sequence[Hop]] = {}

    def get(self, *key: Any) -> Sequence[Hop]:
        route = self.cache.get(key)
        if route is None:
            route = self.cache[key] = tuple(self.make(*key))
        return route


def _volume_planner(volume: Volume, routes: Callable[[int, int], Sequence[Hop]]) -> Callable[[Job], list[list[Child]]]:
    def plan(job: Job) -> list[list[Child]]:
        phases = volume.plan(job.op, job.offset, job.size, job.slot)
        return [[(routes(m, op), n, op, m) for m, op, n in phase] for phase in phases]

    return plan


def build(env: simpy.Environment, scenario: Scenario, streams: Streams, jobs: JobFactory) -> Model:
    """Build the model of ``scenario.topology``."""
    b = Builder(env, streams, jobs, scenario.workload.access, reads_meet_programs(scenario))
    closed = scenario.workload.kind == "closed"
    topo = scenario.topology
    if isinstance(topo, Generic):
        return _build_generic(b, topo)
    if isinstance(topo, DirectNvme):
        return _build_direct(b, topo, closed)
    if isinstance(topo, San):
        return _build_san(b, topo, scenario, closed)
    if isinstance(topo, Exflash):
        return _build_exflash(b, topo, closed)
    if isinstance(topo, ZvmEdev):
        return _build_zvm(b, topo, closed)
    raise TypeError(f"unknown topology {type(topo).__name__}")  # pragma: no cover - the union is closed


def _build_generic(b: Builder, topo: Generic) -> Model:
    host = resolve_host(topo.host, "none")
    cpu, submit, complete = b.cpu(host)
    hops: list[Hop | None] = [submit]
    for st in topo.stations:
        law = st.distribution
        unit = b.streams.unit(law, st.cv)
        hops.append(b.station(st.name, st.servers, _scaled(st.service_time_us, unit)))
    hops.append(complete)
    return Model(route=make_route(*hops), meters=b.meters, cpu=cpu, capacity_bytes=1 << 40, closed_affinity=False,
                 uses_offsets=False)


def _build_direct(b: Builder, topo: DirectNvme, closed: bool) -> Model:
    host = resolve_host(topo.host, "linux_nvme")
    cpu, submit, complete = b.cpu(host)
    spec = topo.drive_spec
    adapter = lookup("adapters", topo.adapter)
    uplinks = [b.link(f"adapter{a}.uplink", adapter.uplink.gbs) for a in range(topo.adapters)]
    drives = []
    for d in range(topo.drives):
        gbs = pcie_gbs(spec.pcie_generation, spec.pcie_lanes)
        link = b.link(f"drive{d}.link", gbs) if gbs else None
        queues = b.pool(f"drive{d}.nvme_queues", topo.nvme_queues.count * topo.nvme_queues.depth)
        drives.append((FlashDevice(b, f"drive{d}", spec), link, queues, uplinks[d % topo.adapters]))
    per_drive = topo.namespaces.per_drive
    members = topo.drives * per_drive
    ns_depth = namespace_depth(topo)
    ns_pools = [b.pool(f"drive{i % topo.drives}.ns{i // topo.drives}", ns_depth) for i in range(members)]
    ns_bytes = namespace_bytes(topo, spec)
    split: Split

    def make(member: int, op: int) -> list[Hop]:
        dev, link, queues, uplink = drives[member % topo.drives]
        ns = ns_pools[member]
        if op == READ:
            path = [*dev.read_hops, link[0] if link else None, uplink[0]]
        else:
            path = [uplink[1], link[1] if link else None, *dev.write_hops]
        return list(make_route(submit, ns.acquire, queues.acquire, *path, queues.release, ns.release, complete, split.join))

    table = RouteTable(make)
    volume = Volume(topo.layout, members, topo.chunk_kib * 1024, ns_bytes, lambda m: ns_pools[m].load, closed)
    split = Split(_volume_planner(volume, table.get), b.jobs)
    return Model(route=(split,), meters=b.meters, cpu=cpu, capacity_bytes=volume.capacity, closed_affinity=closed,
                 notes={"device": drives[0][0].parallelism, "members": members})


def _build_san(b: Builder, topo: San, scenario: Scenario, closed: bool) -> Model:
    host = resolve_host(topo.host, "scsi_fcp" if topo.protocol == "fcp" else "nvme_fc")
    cpu, submit, complete = b.cpu(host)
    hba = lookup("san_adapters", topo.host_adapter)
    p = san_parameters(topo, scenario.workload.mean_bytes())
    cv, law = p.service_cv, p.law

    def port(name: str, per_byte: float, handling: float) -> tuple[Station, Station]:
        to_host = b.station(f"{name}.to_host", 1, lambda job: (job.size * per_byte) if job.op == READ else 0.0)
        to_dev = b.station(f"{name}.to_device", 1,
                           lambda job: handling + (job.size * per_byte if job.op == WRITE else 0.0))
        return to_host, to_dev

    host_ports = [port(f"hba{i // hba.ports}.port{i % hba.ports}", p.host_port_us_per_byte, p.host_port_handling_us)
                  for i in range(p.host_ports)]
    fe_ports = [port(f"server.port{i}", p.front_end_port_us_per_byte, p.front_end_port_handling_us)
                for i in range(p.front_end_ports)]
    paths = p.paths
    if topo.protocol == "fcp":
        lun_pools = [b.pool(f"lun{i}.queue", p.concurrency_slots) for i in range(topo.luns)]
        def concurrency(member: int) -> Pool:
            return lun_pools[member]
        load = lambda m: lun_pools[m].load  # noqa: E731
    else:
        assoc_pools = [b.pool(f"association{i}.queues", p.concurrency_slots) for i in range(topo.associations)]
        def concurrency(member: int) -> Pool:
            return assoc_pools[member % topo.associations]
        load = lambda m: assoc_pools[m % topo.associations].load  # noqa: E731
    fabric = Delay(b.env, lambda job: topo.fabric_latency_us)
    controller = b.station("server.controller", p.controller_cores,
                           _scaled(p.controller_us_per_io, b.streams.unit(law, cv)))
    hit_unit = b.streams.unit(law, cv)
    hit_us = p.cache_hit_latency_us
    cache_hit = Delay(b.env, lambda job: hit_us * hit_unit())
    backend = b.station("server.backend", p.backend_parallelism,
                        _scaled(p.backend_read_latency_us, b.streams.unit(law, cv)))
    backend_bw = b.station("server.backend_bw", 1, _bytes_time(p.backend_read_gbs))
    destage = b.station("server.destage", 1, _bytes_time(p.destage_gbs))
    cache_slots = p.write_cache_slots
    write_cache = b.pool("server.write_cache", cache_slots)
    destage_route = make_route(destage, write_cache.release)
    hit_ratio = topo.cache.read_hit_ratio
    choose = b.streams.uniform()
    rr = [0]
    split: Split

    def make(member: int, op: int, path: int, hit: bool) -> list[Hop]:
        hp = host_ports[path % len(host_ports)]
        fp = fe_ports[path % len(fe_ports)]
        pool = concurrency(member)
        inside: list[Hop]
        if op == READ:
            inside = [cache_hit] if hit else [backend, backend_bw]
        elif topo.cache.write_back:
            inside = [write_cache.acquire, cache_hit, Fork(destage_route, b.jobs)]
        else:
            inside = [destage]
        return list(make_route(pool.acquire, submit, hp[1], fabric, fp[1], controller, *inside,
                               fp[0], fabric, hp[0], pool.release, complete, split.join))

    table = RouteTable(make)

    def routes(member: int, op: int) -> Sequence[Hop]:
        rr[0] += 1
        hit = op == READ and choose() < hit_ratio
        return table.get(member, op, rr[0] % paths, hit)

    volume = Volume(topo.layout, topo.luns, topo.chunk_kib * 1024, p.lun_bytes, load, closed)
    split = Split(_volume_planner(volume, routes), b.jobs)
    return Model(route=(split,), meters=b.meters, cpu=cpu, capacity_bytes=volume.capacity, closed_affinity=closed,
                 notes={"paths": paths, "write_cache_slots": cache_slots})


def _build_exflash(b: Builder, topo: Exflash, closed: bool) -> Model:
    host = resolve_host(topo.host, "exflash_driver")
    cpu, submit, complete = b.cpu(host)
    spec = topo.dimm_spec
    per_thread = dimms_per_driver_thread(topo)
    threads = [b.pool(f"driver_thread{t}", 1) for t in range(topo.driver_threads)]
    dimms = []
    for d in range(topo.dimms):
        channel = b.link(f"dimm{d}.memory_channel", spec.memory_channel_gbs) if spec.memory_channel_gbs else None
        dimms.append((FlashDevice(b, f"dimm{d}", spec), channel, threads[d // per_thread]))
    split: Split

    def make(member: int, op: int) -> list[Hop]:
        dev, channel, thread = dimms[member]
        submit_part = [thread.acquire, submit, thread.release] if submit else []
        complete_part = [thread.acquire, complete, thread.release] if complete else []
        if op == READ:
            path = [*dev.read_hops, channel[0] if channel else None]
        else:
            path = [channel[1] if channel else None, *dev.write_hops]
        return list(make_route(*submit_part, *path, *complete_part, split.join))

    table = RouteTable(make)
    dimm_bytes = int(spec.capacity_tb * 1e12)
    volume = Volume(topo.layout, topo.dimms, topo.chunk_kib * 1024, dimm_bytes, lambda m: 0, closed)
    split = Split(_volume_planner(volume, table.get), b.jobs)
    return Model(route=(split,), meters=b.meters, cpu=cpu, capacity_bytes=volume.capacity, closed_affinity=closed,
                 notes={"device": dimms[0][0].parallelism})


def zvm_command_bytes() -> int:
    """Bytes CP moves per device command of an EDEV channel program (parameters.yaml ``zvm.command_bytes``)."""
    return int(parameter("zvm.command_bytes"))


def _build_zvm(b: Builder, topo: ZvmEdev, closed: bool) -> Model:
    host = resolve_host(topo.host, "zvm_cp")
    cpu, submit, complete = b.cpu(host)
    spec = topo.drive_spec
    adapter = lookup("adapters", topo.adapter)
    subchannels = SubchannelPool(b.env, "edev.subchannels", topo.base_devices, topo.aliases)
    b.meters.append(subchannels)
    drives = []
    for d in range(topo.drives):
        link = b.link(f"drive{d}.link", zvm_link_gbs(spec, adapter.uplink.gbs))
        drives.append((FlashDevice(b, f"drive{d}", spec), link))
    split: Split

    # CP's turnaround on a subchannel between one I/O's end and the next start (interrupt,
    # completion, redrive): the subchannel stays held, so it bounds the I/O rate per base or
    # alias (seed 003 Table 2: each added alias adds about one base's rate).
    turnaround = {op: subchannel_turnaround_us(op) for op in (READ, WRITE)}
    hold = {op: Delay(b.env, _constant(t)) if t > 0 else None for op, t in turnaround.items()}

    # CP runs an EDEV channel program one device command per 4 KiB page (8 FBA blocks), one after
    # another, with the subchannel held throughout (seed 003: a one-page minidisk I/O takes
    # ~0.1-0.2 ms of device service, Table 2; a paging SSCH of 7 or 80 pages 1.28 ms, Table 3)
    page_bytes = zvm_command_bytes()

    def device_route(member: int, op: int) -> tuple[Hop, ...]:
        dev, link = drives[member % topo.drives]
        path = [*dev.read_hops, link[0]] if op == READ else [link[1], *dev.write_hops]
        return make_route(*path, pages.join)

    device_routes = RouteTable(device_route)

    def page_commands(job: Job) -> list[list[Child]]:
        route = device_routes.get(job.member, job.op)
        whole, rest = divmod(job.size, page_bytes)
        sizes = [page_bytes] * whole + ([rest] if rest else [])
        return [[(route, n, job.op, job.member)] for n in sizes]

    pages = Split(page_commands, b.jobs)

    def make(member: int, op: int) -> list[Hop]:
        return list(make_route(submit, subchannels.acquire, pages, hold[op], subchannels.release, complete, split.join))

    table = RouteTable(make)
    volume = Volume("jbod", topo.base_devices, 256 * 1024, zvm_base_bytes(topo, spec), lambda m: 0, closed)
    split = Split(_volume_planner(volume, table.get), b.jobs)
    return Model(route=(split,), meters=b.meters, cpu=cpu, capacity_bytes=volume.capacity, closed_affinity=closed,
                 notes={"device": drives[0][0].parallelism})
