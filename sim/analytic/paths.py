"""Compile a Scenario into the analytic network: the same routes sim/model.py builds, as formulas.

Every number comes from the functions the DES builder uses (``flash_parameters``,
``san_parameters``, ``resolve_host``, ``pcie_gbs``, ``namespace_depth`` ...), so the two
solvers read the same parameters; nothing numeric is defined here. Component names are
the DES meter names, so utilization maps line up.

A route is built once per device op and serves every transfer size (services are a fixed
part plus a part per byte, or a function of the size such as a NAND die's hold), except on
z/VM, where an SSCH runs one device command per page and the route is built per size.

Volume members are namespaces (direct NVMe), LUNs (SAN), DIMMs (eXFlash) or base EDEVs
(z/VM). A device I/O goes to any member alike, except under closed affinity (a JBOD job
keeps its member, ``sim/volume.py``), where members get their jobs' share and members
without jobs get nothing. Instances of a component that carry the same share form one group.

What many scenarios share is built once and kept: parameters derived from the catalog (per
Catalog object, so a changed fit or user catalog starts afresh), the volume layer's plan of a
workload mix on a layout and member count (``kind_plan``), and component names. A scenario's
own network (its groups, routes and loads) is compiled anew (``sim.analytic`` caches it whole).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, cast

from models.catalog import Catalog, load_catalog
from models.hardware import FlashDeviceSpec
from models.scenario import Scenario
from models.topology import DirectNvme, Exflash, Generic, HostConfig, San, Topology, ZvmEdev
from models.workload import ClosedWorkload, Workload
from sim.analytic.network import READ, WRITE, ChildKind, Choice, Group, KindPlan, LogicalKind, Network, Path, Phase, PhaseRow
from sim.analytic.queueing import INF, normal_max_factors
from sim.model import (
    FlashParameters,
    ResolvedHost,
    SanParameters,
    dimms_per_driver_thread,
    flash_parameters,
    namespace_depth,
    pcie_gbs,
    reads_meet_programs,
    resolve_host,
    san_parameters,
    subchannel_turnaround_us,
    us_per_byte,
    zvm_command_bytes,
    zvm_link_gbs,
)
from sim.volume import STREAM_ALIGN_BYTES, Volume

LAW_SCV = {"exponential": 1.0, "deterministic": 0.0}
SizeTime = Callable[[float], float]
"""Microseconds for a transfer of n bytes."""


# -- parameters derived from the catalog, once per catalog and distinct input ----------------------------
#
# The DES builder's parameter functions (sim/model.py) read the catalog through ``load_catalog``,
# which returns a new Catalog object whenever its inputs change ($FLASHPLAN_FITTED, the fitted
# file, $FLASHPLAN_CATALOG_DIR). So the derived values are kept per Catalog object: a new
# catalog starts with an empty table, and the old table goes when the next catalog arrives.

_derived: dict[int, tuple[Catalog, dict[tuple[object, ...], object]]] = {}
_DERIVED_ENTRIES = 4096


def _table(catalog: Catalog) -> dict[tuple[object, ...], object]:
    """The derived-parameter table of ``catalog`` (which it keeps alive, so its id stays unique)."""
    entry = _derived.get(id(catalog))
    if entry is None or entry[0] is not catalog:
        _derived.clear()
        entry = _derived[id(catalog)] = (catalog, {})
    table = entry[1]
    if len(table) > _DERIVED_ENTRIES:
        table.clear()
    return table


def _spec(catalog: Catalog, section: str, value: str | FlashDeviceSpec) -> FlashDeviceSpec:
    """A drive or DIMM: an inline spec, or the catalog entry (the scenario was validated, so it exists)."""
    if isinstance(value, FlashDeviceSpec):
        return value
    spec: FlashDeviceSpec = getattr(catalog, section)[value]
    return spec


def _per_spec(catalog: Catalog, kind: str, spec: FlashDeviceSpec, arg: Any, compute: Callable[[FlashDeviceSpec, Any], Any]) -> Any:
    """``compute(spec, arg)``, remembered per catalog and device (an inline spec by identity: the entry keeps it alive)."""
    table = _table(catalog)
    key = (kind, id(spec), arg)
    hit = table.get(key)
    if hit is not None and hit[0] is spec:  # type: ignore[index]
        return hit[1]  # type: ignore[index]
    value = compute(spec, arg)
    table[key] = (spec, value)
    return value


def _flash(catalog: Catalog, spec: FlashDeviceSpec, access: str) -> FlashParameters:
    """``flash_parameters`` of a device."""
    params: FlashParameters = _per_spec(catalog, "flash", spec, access, flash_parameters)
    return params


def _die_times(catalog: Catalog, params: FlashParameters) -> tuple[SizeTime, SizeTime]:
    """A device's ``die_read_time_us`` and ``die_program_time_us``, remembered per transfer size.

    The formulas hold for any byte count (pieces of a striped I/O average fractional sizes).
    """
    table = _table(catalog)
    key = ("die times", id(params))
    hit = table.get(key)
    if hit is not None and hit[0] is params:  # type: ignore[index]
        return hit[1]  # type: ignore[index,no-any-return]
    times = (cast(SizeTime, lru_cache(maxsize=256)(params.die_read_time_us)),
             cast(SizeTime, lru_cache(maxsize=256)(params.die_program_time_us)))
    table[key] = (params, times)
    return times


def _host(catalog: Catalog, config: HostConfig, default_stack: str) -> ResolvedHost:
    """``resolve_host`` of a host configuration."""
    table = _table(catalog)
    key = ("host", config.model, config.stack, config.cores, config.cpu_us_per_io, config.submit_fraction,
           config.off_path_fraction, default_stack)
    host = table.get(key)
    if host is None:
        host = table[key] = resolve_host(config, default_stack)
    return host  # type: ignore[return-value]


def _san(catalog: Catalog, topo: San, mean_bytes: float) -> SanParameters:
    """``san_parameters`` of a SAN attachment at a mean I/O size."""
    table = _table(catalog)
    queues, cache = topo.nvme_queues, topo.cache
    key = ("san", topo.protocol, topo.host_adapter, topo.host_adapters, topo.luns, topo.lun_queue_depth,
           queues.count, queues.depth, topo.associations, topo.storage_server, topo.front_end_ports, cache.size_gb, mean_bytes)
    params = table.get(key)
    if params is None:
        params = table[key] = san_parameters(topo, mean_bytes)
    return params  # type: ignore[return-value]


@lru_cache(maxsize=64)
def _pcie_gbs(gen: int | None, lanes: int | None) -> float | None:
    """``pcie_gbs``, once per (generation, lanes): it validates a PcieLink model."""
    return pcie_gbs(gen, lanes)


def _uplink_gbs(catalog: Catalog, adapter: str) -> float:
    """GB/s of a catalog adapter's PCIe uplink (``NvmeAdapterSpec.uplink`` validates a PcieLink each time)."""
    table = _table(catalog)
    gbs = table.get(("uplink", adapter))
    if gbs is None:
        gbs = table[("uplink", adapter)] = catalog.adapters[adapter].uplink.gbs
    return gbs  # type: ignore[return-value]


def _zvm_link_gbs(catalog: Catalog, spec: FlashDeviceSpec, adapter_uplink_gbs: float) -> float:
    """``zvm_link_gbs`` of a drive behind an adapter."""
    gbs: float = _per_spec(catalog, "zvm link", spec, adapter_uplink_gbs, zvm_link_gbs)
    return gbs


def _turnaround(catalog: Catalog) -> tuple[float, float]:
    """z/VM subchannel turnaround per op (``subchannel_turnaround_us``), indexed by READ / WRITE."""
    table = _table(catalog)
    hit = table.get(("turnaround",))
    if hit is None:
        hit = table[("turnaround",)] = (subchannel_turnaround_us(READ), subchannel_turnaround_us(WRITE))
    return hit  # type: ignore[return-value]


def _command_bytes(catalog: Catalog) -> int:
    """Bytes per device command of a z/VM EDEV channel program (``zvm_command_bytes``)."""
    table = _table(catalog)
    hit = table.get(("command bytes",))
    if hit is None:
        hit = table[("command bytes",)] = zvm_command_bytes()
    return hit  # type: ignore[return-value]


# -- the volume layer ---------------------------------------------------------------------------

VolumePlan = tuple[tuple[float, tuple[tuple[tuple[int, int, float], ...], ...]], ...]
"""Variants (probability, phases); a phase is ((count, op, bytes), ...)."""


@lru_cache(maxsize=4096)
def volume_plan(layout: str, members: int, chunk: int, op: int, size: int, grid: int = 4096) -> VolumePlan:
    """How the volume layer splits one logical I/O of ``size`` bytes at a random ``grid``-aligned offset.

    Random I/O lands on 4 KiB boundaries; a sequential stream (``access_grid``) on multiples of
    its transfer sizes from a 1 MiB-aligned start, so 128 KiB reads never cross a 256 KiB chunk.

    Striped layouts (raid0, raid10, ibmi_mirror) cut the I/O at chunk boundaries: with
    ``size = a chunks + b bytes`` it has a + 1 pieces, or a + 2 when it straddles one more
    boundary (probability from the number of aligned offsets that make it straddle);
    the two end pieces share the bytes that are not whole chunks. Mirrors write every
    piece to both copies; RAID-1 reads one copy and writes all; parity layouts are taken
    from ``Volume.plan`` itself at offsets spread over a stripe.
    """
    if layout == "jbod" or (layout == "raid1" and op == READ):
        return ((1.0, (((1, op, float(size)),),)),)
    if layout == "raid1":
        return ((1.0, (((members, WRITE, float(size)),),)),)
    if layout in ("raid5", "raid6"):
        return _sampled_plan(layout, members, chunk, op, size)
    copies = 2 if (layout in ("raid10", "ibmi_mirror") and op == WRITE) else 1
    grid = math.gcd(grid, chunk)
    positions = chunk // grid
    a, b = divmod(size, chunk)
    # (probability, whole chunks, bytes in the end pieces, number of end pieces)
    variants: list[tuple[float, int, float, int]] = []
    if b == 0:
        variants.append((1.0 / positions, a, 0.0, 0))  # starts on a boundary: whole chunks only
        if positions > 1:
            variants.append(((positions - 1) / positions, a - 1, float(chunk), 2))
    else:
        straddle = max(0, positions - 1 - (chunk - b) // grid)  # starts so late that it crosses one more boundary
        fits = positions - straddle
        if a == 0:
            variants.append((fits / positions, 0, float(b), 1))
        else:
            variants.append((1.0 / positions, a, float(b), 1))
            if fits > 1:
                variants.append(((fits - 1) / positions, a - 1, float(chunk + b), 2))
        if straddle:
            variants.append((straddle / positions, a, float(b), 2))
    out = []
    for prob, whole, ends, n_ends in variants:
        pieces: list[tuple[int, int, float]] = []
        if whole:
            pieces.append((whole * copies, op, float(chunk)))
        if n_ends == 1:
            pieces.append((copies, op, ends))
        elif n_ends == 2:
            # the split point is uniform: the larger end piece averages 3/4 of the bytes, the smaller 1/4
            pieces.append((copies, op, 0.75 * ends))
            pieces.append((copies, op, 0.25 * ends))
        out.append((prob, (tuple(pieces),)))
    return tuple(out)


def _sampled_plan(layout: str, members: int, chunk: int, op: int, size: int, samples: int = 64) -> VolumePlan:
    """RAID-5/6: run the DES volume mapping at offsets spread evenly over one stripe.

    Offsets that give the same shape (per phase and op: whole-chunk pieces and the number of
    partial pieces) form one variant; its partial pieces, ranked by size, take the mean size
    of their rank (the largest partial piece sets the phase's expected maximum).
    """
    parities = 1 if layout == "raid5" else 2
    stripe = chunk * (members - parities)
    vol = Volume(layout, members, chunk, 1 << 50, lambda m: 0, False)
    step = max(4096, (stripe // samples) // 4096 * 4096)
    shapes: dict[tuple[tuple[tuple[int, int, int], ...], ...], list[list[float]]] = {}
    counts: dict[tuple[tuple[tuple[int, int, int], ...], ...], int] = {}
    for off in range(0, stripe, step):
        shape: list[tuple[tuple[int, int, int], ...]] = []
        partials: list[list[int]] = []
        for phase in vol.plan(op, off, size, -1):
            per_op: dict[int, list[int]] = {}
            full: dict[int, int] = {}
            for _, child_op, nbytes in phase:
                if nbytes == chunk:
                    full[child_op] = full.get(child_op, 0) + 1
                else:
                    per_op.setdefault(child_op, []).append(nbytes)
            ops = sorted(set(full) | set(per_op))
            shape.append(tuple((o, full.get(o, 0), len(per_op.get(o, []))) for o in ops))
            partials.extend(sorted(per_op.get(o, []), reverse=True) for o in ops)
        key = tuple(shape)
        counts[key] = counts.get(key, 0) + 1
        flat = [float(b) for ranked in partials for b in ranked]
        acc = shapes.setdefault(key, [[0.0] * len(flat)])[0]
        for i, b in enumerate(flat):
            acc[i] += b
    total = sum(counts.values())
    out = []
    for key, n in counts.items():
        means = [b / n for b in shapes[key][0]]
        phases = []
        k = 0
        for shape_of_phase in key:
            row: list[tuple[int, int, float]] = []
            for o, n_full, n_part in shape_of_phase:
                if n_full:
                    row.append((n_full, o, float(chunk)))
                for _ in range(n_part):
                    row.append((1, o, means[k]))
                    k += 1
            phases.append(tuple(row))
        out.append((n / total, tuple(phases)))
    return tuple(out)


# -- building blocks ----------------------------------------------------------------------------------


Mapping = tuple[object, ...] | None
"""Which instance volume member m uses: ("mod", n) m % n, ("div", k) m // k, ("id",) m,
("mod_mod", d, a) (m % d) % a, None for one shared instance."""


def _instance_of(mapping: tuple[object, ...], m: int) -> int:
    kind = mapping[0]
    if kind == "mod":
        return m % int(mapping[1])  # type: ignore[call-overload]
    if kind == "div":
        return m // int(mapping[1])  # type: ignore[call-overload]
    if kind == "mod_mod":
        return (m % int(mapping[1])) % int(mapping[2])  # type: ignore[call-overload]
    return m


@lru_cache(maxsize=8192)
def _buckets(members: int, jobs: tuple[int, ...] | None, mapping: Mapping, count: int,
             shares: tuple[float, ...] | None) -> tuple[tuple[float, int, tuple[int, ...]], ...]:
    """Instances grouped by (share of device I/Os, members served): ((share, cover, instance indices), ...).

    ``jobs`` is the job count per member under closed affinity (None: members equally likely).
    """
    if shares is not None:
        share = list(shares)
        cover = [members] * count
    elif mapping is None:
        share, cover = [1.0], [members]
    else:
        share = [0.0] * count
        cover = [0] * count
        total = float(sum(jobs)) if jobs else float(members)
        for m in range(members):
            i = _instance_of(mapping, m)
            share[i] += (jobs[m] if jobs else 1.0) / total
            cover[i] += 1
    buckets: dict[tuple[float, int], list[int]] = {}
    for i in range(count):
        buckets.setdefault((round(share[i], 12), cover[i]), []).append(i)
    return tuple((s, c, tuple(idx)) for (s, c), idx in buckets.items())


@lru_cache(maxsize=4096)
def names(pattern: str, count: int) -> tuple[str, ...]:
    """DES meter names ``pattern.format(i)`` for i < count."""
    return tuple(pattern.format(i) for i in range(count))


@lru_cache(maxsize=256)
def _hba_port_names(host_ports: int, per_adapter: int) -> tuple[str, ...]:
    """SAN host ports: port i is port i % per_adapter of adapter i // per_adapter (sim/model.py)."""
    return tuple([f"hba{i // per_adapter}.port{i % per_adapter}" for i in range(host_ports)])


@lru_cache(maxsize=256)
def _directions(labels: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (towards the host, towards the device) meter names of ports ``labels``."""
    return tuple([f"{x}.to_host" for x in labels]), tuple([f"{x}.to_device" for x in labels])


@lru_cache(maxsize=256)
def _round_robin_shares(paths: int, ports: int) -> tuple[float, ...]:
    """Share of the device I/Os each of ``ports`` ports takes when I/Os take ``paths`` paths in turn."""
    return tuple([(paths // ports + (1 if i < paths % ports else 0)) / paths for i in range(ports)])


@lru_cache(maxsize=1024)
def namespace_names(drives: int, members: int) -> tuple[str, ...]:
    """Member m is namespace m // drives of drive m % drives (sim/model.py)."""
    return tuple(f"drive{m % drives}.ns{m // drives}" for m in range(members))


class Compiler:
    """Shared state while compiling one scenario."""

    def __init__(self, scenario: Scenario, members: int, jobs: tuple[int, ...] | None, catalog: Catalog):
        self.scenario = scenario
        self.catalog = catalog
        self.net = Network()
        self.net.members = members
        self.members = members
        self.jobs = jobs
        self.affinity = jobs is not None
        self.idle_names: list[str] = []
        self.display: dict[int, str] = {}
        self.width = 1
        self.cpu: Cpu | None = None
        self.rotating = jobs is not None and scenario.workload.access == "sequential" and layout_of(scenario.topology) in STRIPED
        """Closed sequential streams sit on some members at a time but move over all of them."""
        self.reported_slots: dict[int, int] = {}
        """Group id -> the DES meter's capacity where the model uses fewer slots (idle z/VM bases)."""
        self.component: dict[int, tuple[str, ...]] = {}
        """Group id -> all instance names of its component (for time-averaged utilization)."""
        self.lock = threading.Lock()
        self.population = -1.0
        self.keep: object = None

    def groups(self, labels: tuple[str, ...], servers: int, mapping: Mapping, pool: bool = False, ca2: float = 1.0,
               display: str | None = None, shares: tuple[float, ...] | None = None) -> Choice:
        """Instances ``labels`` of a component; ``mapping`` says which instance volume member m uses.

        Instances with the same share of the traffic form one group; the choice lists each
        group with the probability that a device I/O goes to one of its instances.
        """
        choice: Choice = []
        count = len(labels)
        registered = self.net.groups
        affinity = self.affinity
        round_robin = shares is not None
        for s, c, idx in _buckets(self.members, self.jobs, mapping, count, shares):
            if s <= 0.0:
                self.idle_names.extend([labels[i] for i in idx])
                continue
            g = Group(labels if len(idx) == count else tuple([labels[i] for i in idx]), servers, pool, c if c > 1 else 1,
                      s if affinity else 1.0, count, round_robin, ca2, index=len(registered))  # index: its place in the network
            registered.append(g)
            if display:
                self.display[id(g)] = display
            if self.rotating:
                self.component[id(g)] = labels
            choice.append((g, s * len(idx)))
        return choice

    def least_loaded_view(self, limit: Choice, k: int) -> Choice:
        """Wait-only views of ``limit`` for I/Os that take the least-loaded of ``k`` of its instances
        (``Group.view_of``; the DES's ``Volume._less_loaded`` for mirror copies)."""
        view: Choice = []
        registered = self.net.groups
        for g, p in limit:
            v = Group(g.names, g.servers, cover=g.cover, reach=g.reach, instances=g.instances, ca2=g.ca2,
                      index=len(registered), view_of=g.index, view_k=k)
            registered.append(v)
            view.append((v, p))
        return view

    def link(self, name: str, n: int, mapping: Mapping) -> tuple[Choice, Choice]:
        """(towards the host, towards the device) stations of ``n`` full-duplex links."""
        return (self.groups(names(name + ".to_host", n), 1, mapping),
                self.groups(names(name + ".to_device", n), 1, mapping))


class Cpu:
    """The host CPU station (cores, path length per device I/O and per KiB) and the serial stack section."""

    def __init__(self, c: Compiler, host: ResolvedHost):
        self.host = host
        self.on = host.cpu_us_per_io > 0 or host.cpu_us_per_kib > 0
        self.station = c.groups(("host_cpu",), host.cores, None) if self.on else []
        self.serial = c.groups(("host_stack.serial",), 1, None) if self.on and host.serial_us_per_io > 0 else []
        (us, kib), (done_us, done_kib), (beside_us, beside_kib) = host.on_path(True), host.on_path(False), host.off_path()
        self.submit = (us, kib / 1024.0)
        self.complete = (done_us, done_kib / 1024.0)
        self.beside = (beside_us, beside_kib / 1024.0)
        self._submits = self.on and (self.submit[0] > 0 or self.submit[1] > 0)
        self._completes = self.on and (self.complete[0] > 0 or self.complete[1] > 0)
        self._besides = self.on and (self.beside[0] > 0 or self.beside[1] > 0)

    def has_submit(self) -> bool:
        return self._submits

    def has_complete(self) -> bool:
        return self._completes or self._besides

    def charge_submit(self, path: Path) -> None:
        if self._submits:
            path.visit(self.station, self.submit[0], self.submit[1])
            if self.serial:
                path.visit(self.serial, self.host.serial_us_per_io)

    def charge_complete(self, path: Path) -> None:
        if self._completes:
            path.visit(self.station, self.complete[0], self.complete[1])
        if self._besides:
            us, per_byte = self.beside
            path.charge(self.station, lambda n: us + per_byte * n)


class FlashGroups:
    """A flash device's stations and write cache (``FlashDevice`` in sim/model.py), for ``n`` devices.

    With shared NAND dies (``FlashParameters.shared_dies``) reads and programs take turns on the
    device's ``read_units`` dies (a pool): a read holds a die for ``die_read_time_us`` and then
    crosses the sequential read channel (``read_channel_gbs``); a destaged write waits for a die,
    frees its cache slot and keeps the die for ``die_program_time_us`` in the background (the dies
    are the whole write path: no write channel or program units). On every device a read whose
    own die is programming first waits for the program to end (``die_locks``: the shared dies, or
    one per program unit; ``DieProgramLocks`` in the DES).
    """

    def __init__(self, c: Compiler, prefix: str, n: int, mapping: Mapping, p: FlashParameters):
        self.p = p
        self.scv = p.service_cv * p.service_cv if p.law == "lognormal" else 0.0
        self.channel_scv = p.read_channel_cv * p.read_channel_cv
        if p.shared_dies:
            self.dies: Choice | None = c.groups(names(prefix + ".nand_dies", n), p.read_units, mapping, pool=True)
            self.read_units: Choice = []
        else:
            self.dies = None
            self.read_units = c.groups(names(prefix + ".read_units", n), p.read_units, mapping)
        # the dies a read may find programming: the shared dies, or one per program unit (only
        # where the devices see reads and writes: a mix, or parity updates that read first)
        self.die_locks = c.groups(names(prefix + ".die_locks", n), p.read_units if p.shared_dies else p.program_units,
                                  mapping) if reads_meet_programs(c.scenario) else []
        for group, _ in self.die_locks:
            group.program_locks = True
        self.read_bw = c.groups(names(prefix + ".read_bw", n), 1, mapping)
        self.write_cache = c.groups(names(prefix + ".write_cache", n), p.write_cache_slots, mapping, pool=True)
        if not p.shared_dies:
            self.write_bw = c.groups(names(prefix + ".write_bw", n), 1, mapping)
            self.program_units = c.groups(names(prefix + ".program_units", n), p.program_units, mapping)
            self.write_per_byte = us_per_byte(p.write_bw_gbs)
        self.read_per_byte = us_per_byte(p.read_channel_gbs)
        if p.shared_dies:
            self.die_read_time, self.die_program_time = _die_times(c.catalog, p)

    def read(self, path: Path, nbytes: int | None = None) -> None:
        """A read of the route's size, or of ``nbytes`` (a route built for one size: one page of a channel program)."""
        p = self.p
        if self.die_locks:
            path.wait_for(self.die_locks)
        if self.dies is not None:
            if nbytes is None:
                path.hold(self.dies, 0.0, self.scv, self.die_read_time)
            else:
                path.hold(self.dies, p.die_read_time_us(nbytes), self.scv)
        else:
            path.visit(self.read_units, p.read_latency_us, 0.0, self.scv)
        if nbytes is None:
            path.visit(self.read_bw, 0.0, self.read_per_byte, self.channel_scv)
        else:
            path.visit(self.read_bw, nbytes * self.read_per_byte, 0.0, self.channel_scv)

    def write(self, path: Path, nbytes: int | None = None) -> None:
        """Take a cache slot, be acknowledged; the destage (bandwidth and a program unit, or a free die) holds the slot in the background."""
        p = self.p
        path.acquire(self.write_cache)
        path.delay(p.write_ack_us, self.scv)
        destage = path.part()
        if self.dies is not None:
            if nbytes is None:
                destage.hold(self.dies, 0.0, self.scv, self.die_program_time, background=True)
                if self.die_locks:
                    destage.charge(self.die_locks, self.die_program_time, self.scv)
            else:
                program_time = p.die_program_time_us(nbytes)
                destage.hold(self.dies, program_time, self.scv, background=True)
                if self.die_locks:
                    destage.charge(self.die_locks, lambda _: program_time, self.scv)
        else:
            if nbytes is None:
                destage.visit(self.write_bw, 0.0, self.write_per_byte)
            else:
                destage.visit(self.write_bw, nbytes * self.write_per_byte)
            destage.visit(self.program_units, p.program_time_us, 0.0, self.scv)
            if self.die_locks:
                program_time = p.program_time_us
                destage.charge(self.die_locks, lambda _: program_time, self.scv)
        path.release(background=destage)


Mix = tuple[tuple[int, float, tuple[tuple[int, float], ...]], ...]
"""(op, share of the logical I/Os, ((bytes, probability), ...)) for each op the workload issues."""

_mixes: dict[tuple[object, ...], Mix] = {}


def workload_mix(wl: Workload) -> Mix:
    """The ops and transfer sizes of a workload (``size_table``), once per distinct mix."""
    sizes = wl.sizes
    key = (wl.read_fraction, wl.block_size_kib, tuple([(s.kib, s.weight, s.op) for s in sizes]) if sizes else None)
    mix = _mixes.get(key)
    if mix is None:
        if len(_mixes) > 4096:
            _mixes.clear()
        rf = wl.read_fraction
        mix = _mixes[key] = tuple([(op, p_op, tuple(wl.size_table(name)))  # type: ignore[arg-type]
                                   for op, p_op, name in ((READ, rf, "read"), (WRITE, 1.0 - rf, "write")) if p_op > 0])
    return mix


def access_grid(mix: Mix, sequential: bool) -> int:
    """The alignment of I/O offsets: 4 KiB for random I/O; for sequential streams, which start on
    ``STREAM_ALIGN_BYTES`` boundaries and advance by their transfer sizes, the greatest common
    divisor of that alignment and every size in the mix (``sim.engine.Run._issue``)."""
    if not sequential:
        return 4096
    grid = STREAM_ALIGN_BYTES
    for _, _, sizes in mix:
        for nbytes, _ in sizes:
            grid = math.gcd(grid, int(nbytes))
    return max(grid, 1)


@lru_cache(maxsize=4096)
def kind_plan(layout: str, members: int, chunk: int, mix: Mix, grid: int = 4096) -> KindPlan:
    """The logical kinds of ``mix`` on a volume of ``members`` members (``volume_plan`` for every op and size).

    Also what the solver reads of them: the child kinds (device op, bytes) in its order, and its
    table of phases (the expected maximum of identical children, Clark's for different ones).
    Pieces of a phase that outnumber the members are taken as shared (``_share_members``).
    """
    kinds = []
    width = 1
    for op, p_op, sizes in mix:
        for nbytes, p_size in sizes:
            variants = []
            serial = []
            crowded = False
            for vprob, phases in volume_plan(layout, members, chunk, op, nbytes, grid):
                merged = []
                for phase in phases:
                    pieces = 0
                    for count, _, _ in phase:
                        pieces += count
                    width = max(width, pieces)
                    merged.append(_share_members(phase, pieces, members))
                    crowded |= pieces > members
                variants.append((vprob, phases))
                serial.append((vprob, tuple(merged)))
            kinds.append(LogicalKind(op, p_op * p_size, float(nbytes), tuple(variants), tuple(serial) if crowded else None))
    position: dict[tuple[int, float], int] = {}
    ops: list[int] = []
    table = []
    fan_in = []
    for k, kind in enumerate(kinds):
        rows = []
        for v, (vprob, phases) in enumerate(kind.serial or kind.variants):
            phase_rows: list[PhaseRow] = []
            for p, phase in enumerate(phases):
                for _, o, n in phase:
                    if (o, n) not in position:
                        position[(o, n)] = len(position)
                        if o not in ops:
                            ops.append(o)
                if len(phase) == 1:
                    count, o, n = phase[0]
                    phase_rows.append((position[(o, n)], count, normal_max_factors(count)[0], None, 0.0))
                else:
                    phase_rows.append((-1, 0, 0.0, tuple([(position[(o, n)], *normal_max_factors(count))
                                                          for count, o, n in phase]), 0.0))
                if sum([count for count, _, _ in phase]) >= 2:
                    fan_in.append((k, v, p))
            rows.append((vprob, tuple(phase_rows)))
        table.append((kind.op, kind.prob, tuple(rows)))
    op_prob = [0.0, 0.0]
    loads: dict[tuple[int, float], float] = {}
    for kind in kinds:
        op_prob[kind.op] += kind.prob
        for vprob, phases in kind.variants:
            share = kind.prob * vprob
            for phase in phases:
                for count, o, n in phase:
                    loads[(o, n)] = loads.get((o, n), 0.0) + share * count
    return KindPlan(kinds=tuple(kinds), ops=tuple(ops), children=tuple(position), width=width, table=tuple(table),
                    fan_in=tuple(fan_in), loads=tuple([(o, n, w) for (o, n), w in loads.items()]),
                    op_prob=(op_prob[0], op_prob[1]))


def _scenario_plan(c: Compiler, layout: str, chunk: int) -> KindPlan:
    """``kind_plan`` of the scenario's workload, its offsets aligned as its access pattern aligns them."""
    wl = c.scenario.workload
    mix = workload_mix(wl)
    return kind_plan(layout, c.members, chunk, mix, access_grid(mix, wl.access == "sequential"))


def _add_kinds(c: Compiler, layout: str, chunk: int, child: Callable[[int], ChildKind]) -> int:
    """Logical kinds for every op and size of the workload; returns the widest phase.

    ``child(op)`` builds the route of a device I/O of kind ``op`` once; every size reuses it.
    """
    plan = _scenario_plan(c, layout, chunk)
    c.net.add_kinds(plan, {o: child(o) for o in plan.ops})
    return plan.width


def _add_sized_kinds(c: Compiler, layout: str, chunk: int, child: Callable[[int, float], ChildKind]) -> int:
    """As ``_add_kinds``, for routes that change with the transfer size: ``child(op, bytes)`` for each."""
    plan = _scenario_plan(c, layout, chunk)
    keys: dict[tuple[int, float], None] = {}
    for kind in plan.kinds:
        for _, phases in kind.variants + (kind.serial or ()):
            for phase in phases:
                for _, o, n in phase:
                    keys[(o, n)] = None
    c.net.add_kinds(plan, {}, {key: child(*key) for key in keys})
    return plan.width


def _share_members(phase: Phase, pieces: int, members: int) -> Phase:
    """A phase with more pieces than volume members, as latency sees it.

    Pieces on the same member follow each other through its single-server stages (transfer
    channels, a queue depth of one), so the phase is taken as ``members`` children each
    moving an equal share of the bytes; their fixed latencies overlap. Loads are charged per
    piece all the same (``LogicalKind.variants``).
    """
    if pieces <= members:
        return phase
    moved: dict[int, float] = {}
    for count, o, n in phase:
        moved[o] = moved.get(o, 0.0) + count * n
    return tuple([(members, o, total / members) for o, total in moved.items()])


MIRROR_PAIRS = ("raid10", "ibmi_mirror")
"""Layouts whose chunks live on a pair of copies, reads going to the less-loaded one."""
STRIPED = ("raid0", "raid10", "ibmi_mirror")
"""Layouts whose chunks a sequential stream walks through member by member."""


def _member_jobs(scenario: Scenario, members: int, layout: str, spread: bool = False) -> tuple[int, ...] | None:
    """Jobs (or sequential streams) per volume member where they stay put, else None (members equally likely).

    * Closed JBOD: job j keeps member j mod M (sim/volume.py).
    * Sequential access: each stream (a closed job's slots share one cursor; all open arrivals
      share one) walks its chunk, so for the chunk's length its I/Os stay on one stripe unit:
      a member (RAID-0, open JBOD, whose cursor stays within one member) or a mirror pair
      (RAID-10, IBM i mirroring). Stream s is taken to sit on unit s mod U (the DES starts the
      streams at spread-out offsets; collisions are not modelled); a closed job's outstanding
      I/Os cover 1 + (QD - 1) x size / chunk consecutive units. RAID-1 has no stripes and
      RAID-5/6 keep the uniform spread (parity rotates with the stripe). With ``spread`` an open
      stream on a striped layout is spread over every member instead (its time average).
    """
    wl = scenario.workload
    jobs = wl.jobs if isinstance(wl, ClosedWorkload) else 0
    if jobs and layout == "jbod":
        return tuple([jobs // members + (1 if m < jobs % members else 0) for m in range(members)])
    if wl.access != "sequential" or (layout != "jbod" and layout not in STRIPED) or (spread and not jobs and layout != "jbod"):
        return None
    streams = jobs or 1
    per_unit = 2 if layout in ("raid10", "ibmi_mirror") else 1
    units = members // per_unit
    on_unit = [streams // units + (1 if u < streams % units else 0) for u in range(units)]
    if jobs and layout != "jbod" and isinstance(wl, ClosedWorkload) and wl.queue_depth > 1:
        # a job's outstanding I/Os cover queue_depth x size bytes: about 1 + (QD - 1) size / chunk units
        chunk = getattr(scenario.topology, "chunk_kib", 256) * 1024
        span = min(float(units), 1.0 + (wl.queue_depth - 1) * wl.mean_bytes() / chunk)
        weights = [0.0] * units
        for u, n in enumerate(on_unit):
            for k in range(math.ceil(span)):
                weights[(u + k) % units] += n * min(1.0, span - k)
        scale = 1000.0 / max(weights)
        on_unit = [round(w * scale) for w in weights]  # integer shares, as job counts
    return tuple([on_unit[m // per_unit] for m in range(units * per_unit)])


# -- the attachments ---------------------------------------------------------------------------------------


def compile_generic(scenario: Scenario, topo: Generic, catalog: Catalog) -> Compiler:
    c = Compiler(scenario, 1, None, catalog)
    cpu = Cpu(c, _host(catalog, topo.host, "none"))
    stations = [(c.groups((st.name,), st.servers, None), st) for st in topo.stations]

    def child(op: int) -> ChildKind:
        path = Path()
        cpu.charge_submit(path)
        for choice, st in stations:
            scv = st.cv * st.cv if st.distribution == "lognormal" else LAW_SCV[st.distribution]
            path.visit(choice, st.service_time_us, 0.0, scv)
        cpu.charge_complete(path)
        return [(1.0, path)]

    c.width = _add_kinds(c, "jbod", 1 << 20, child)
    c.cpu = cpu
    return c


def compile_direct(scenario: Scenario, topo: DirectNvme, catalog: Catalog, spread: bool = False) -> Compiler:
    drives, adapters, per_drive = topo.drives, topo.adapters, topo.namespaces.per_drive
    members = drives * per_drive
    c = Compiler(scenario, members, _member_jobs(scenario, members, topo.layout, spread), catalog)
    cpu = Cpu(c, _host(catalog, topo.host, "linux_nvme"))
    spec = _spec(catalog, "drives", topo.drive)
    params = _flash(catalog, spec, scenario.workload.access)
    up_host, up_dev = c.link("adapter{}.uplink", adapters, ("mod_mod", drives, adapters))
    up_per_byte = us_per_byte(_uplink_gbs(catalog, topo.adapter))
    drive_of = ("mod", drives)
    gbs = _pcie_gbs(spec.pcie_generation, spec.pcie_lanes)
    link = c.link("drive{}.link", drives, drive_of) if gbs else None
    link_per_byte = us_per_byte(gbs) if gbs else 0.0
    queues = c.groups(names("drive{}.nvme_queues", drives), topo.nvme_queues.count * topo.nvme_queues.depth, drive_of, pool=True)
    device = FlashGroups(c, "drive{}", drives, drive_of, params)
    ns = c.groups(namespace_names(drives, members), namespace_depth(topo), ("id",), pool=True)
    # mirror reads take the copy with fewer I/Os outstanding, which keeps the pair's queues even:
    # every I/O of a mirrored layout waits for a slot as in the pair pooled
    ns_wait = c.least_loaded_view(ns, 2) if topo.layout in MIRROR_PAIRS else None

    def child(op: int) -> ChildKind:
        path = Path()
        cpu.charge_submit(path)
        path.acquire(ns, wait_at=ns_wait)
        path.acquire(queues)
        if op == READ:
            device.read(path)
            if link:
                path.visit(link[0], 0.0, link_per_byte)
            path.visit(up_host, 0.0, up_per_byte)
        else:
            path.visit(up_dev, 0.0, up_per_byte)
            if link:
                path.visit(link[1], 0.0, link_per_byte)
            device.write(path)
        path.release()
        path.release()
        cpu.charge_complete(path)
        return [(1.0, path)]

    c.width = _add_kinds(c, topo.layout, topo.chunk_kib * 1024, child)
    c.cpu = cpu
    return c


def compile_san(scenario: Scenario, topo: San, catalog: Catalog, spread: bool = False) -> Compiler:
    members = topo.luns
    c = Compiler(scenario, members, _member_jobs(scenario, members, topo.layout, spread), catalog)
    fcp = topo.protocol == "fcp"
    cpu = Cpu(c, _host(catalog, topo.host, "scsi_fcp" if fcp else "nvme_fc"))
    p = _san(catalog, topo, scenario.workload.mean_bytes())
    hba_ports = catalog.san_adapters[topo.host_adapter].ports
    paths = p.paths

    def port_groups(labels: tuple[str, ...]) -> tuple[Choice, Choice]:
        # path r % paths takes port (r % paths) % n: round-robin, every n-th device I/O
        n = len(labels)
        shares = _round_robin_shares(paths, n)
        to_host, to_dev = _directions(labels)
        return (c.groups(to_host, 1, ("shares",), ca2=1.0 / n, shares=shares),
                c.groups(to_dev, 1, ("shares",), ca2=1.0 / n, shares=shares))

    hp_host, hp_dev = port_groups(_hba_port_names(p.host_ports, hba_ports))
    fp_host, fp_dev = port_groups(names("server.port{}", p.front_end_ports))
    if fcp:
        limit = c.groups(names("lun{}.queue", members), p.concurrency_slots, ("id",), pool=True)
    else:
        limit = c.groups(names("association{}.queues", topo.associations), p.concurrency_slots, ("mod", topo.associations),
                         pool=True)
    scv = p.service_cv * p.service_cv if p.law == "lognormal" else 0.0
    controller = c.groups(("server.controller",), p.controller_cores, None)
    backend = c.groups(("server.backend",), p.backend_parallelism, None)
    backend_bw = c.groups(("server.backend_bw",), 1, None)
    destage = c.groups(("server.destage",), 1, None)
    write_cache = c.groups(("server.write_cache",), p.write_cache_slots, None, pool=True)
    hit_us = p.cache_hit_latency_us
    backend_per_byte = us_per_byte(p.backend_read_gbs)
    destage_per_byte = us_per_byte(p.destage_gbs)

    def route(op: int, hit: bool) -> Path:
        write = op == WRITE
        path = Path()
        path.acquire(limit)
        cpu.charge_submit(path)
        path.visit(hp_dev, p.host_port_handling_us, p.host_port_us_per_byte if write else 0.0)
        path.delay(topo.fabric_latency_us)
        path.visit(fp_dev, p.front_end_port_handling_us, p.front_end_port_us_per_byte if write else 0.0)
        path.visit(controller, p.controller_us_per_io, 0.0, scv)
        if not write and hit:
            path.delay(hit_us, scv)
        elif not write:
            path.visit(backend, p.backend_read_latency_us, 0.0, scv)
            path.visit(backend_bw, 0.0, backend_per_byte)
        elif topo.cache.write_back:
            path.acquire(write_cache)
            path.delay(hit_us, scv)
            bg = Path()
            bg.visit(destage, 0.0, destage_per_byte)
            path.release(background=bg)
        else:
            path.visit(destage, 0.0, destage_per_byte)
        path.visit(fp_host, 0.0, 0.0 if write else p.front_end_port_us_per_byte)
        path.delay(topo.fabric_latency_us)
        path.visit(hp_host, 0.0, 0.0 if write else p.host_port_us_per_byte)
        path.release()
        cpu.charge_complete(path)
        return path

    def child(op: int) -> ChildKind:
        if op == WRITE:
            return [(1.0, route(op, False))]
        h = topo.cache.read_hit_ratio
        out: ChildKind = []
        if h > 0:
            out.append((h, route(op, True)))
        if h < 1:
            out.append((1.0 - h, route(op, False)))
        return out

    c.width = _add_kinds(c, topo.layout, topo.chunk_kib * 1024, child)
    c.cpu = cpu
    return c


def compile_exflash(scenario: Scenario, topo: Exflash, catalog: Catalog, spread: bool = False) -> Compiler:
    members = topo.dimms
    c = Compiler(scenario, members, _member_jobs(scenario, members, topo.layout, spread), catalog)
    cpu = Cpu(c, _host(catalog, topo.host, "exflash_driver"))
    spec = _spec(catalog, "dimms", topo.dimm)
    params = _flash(catalog, spec, scenario.workload.access)
    threads = c.groups(names("driver_thread{}", topo.driver_threads), 1, ("div", dimms_per_driver_thread(topo)), pool=True)
    channel = c.link("dimm{}.memory_channel", members, ("id",)) if spec.memory_channel_gbs else None
    channel_per_byte = us_per_byte(spec.memory_channel_gbs) if spec.memory_channel_gbs else 0.0
    device = FlashGroups(c, "dimm{}", members, ("id",), params)

    def child(op: int) -> ChildKind:
        path = Path()
        if cpu.has_submit():
            path.acquire(threads)
            cpu.charge_submit(path)
            path.release()
        if op == READ:
            device.read(path)
            if channel:
                path.visit(channel[0], 0.0, channel_per_byte)
        else:
            if channel:
                path.visit(channel[1], 0.0, channel_per_byte)
            device.write(path)
        if cpu.has_complete():
            path.acquire(threads)
            cpu.charge_complete(path)
            path.release()
        return [(1.0, path)]

    c.width = _add_kinds(c, topo.layout, topo.chunk_kib * 1024, child)
    c.cpu = cpu
    return c


def compile_zvm(scenario: Scenario, topo: ZvmEdev, catalog: Catalog) -> Compiler:
    members = topo.base_devices
    c = Compiler(scenario, members, _member_jobs(scenario, members, "jbod"), catalog)
    cpu = Cpu(c, _host(catalog, topo.host, "zvm_cp"))
    spec = _spec(catalog, "drives", topo.drive)
    params = _flash(catalog, spec, scenario.workload.access)
    drive_of = ("mod", topo.drives)
    link_host, link_dev = c.link("drive{}.link", topo.drives, drive_of)
    link_per_byte = us_per_byte(_zvm_link_gbs(catalog, spec, _uplink_gbs(catalog, topo.adapter)))
    device = FlashGroups(c, "drive{}", topo.drives, drive_of, params)
    if topo.aliases == 0:
        # each base EDEV runs one I/O at a time: one slot per base (one DES meter for all of them)
        subchannels = c.groups(("edev.subchannels",) * members, 1, ("id",), pool=True, display="edev.subchannels")
    else:
        # bases and aliases as one pool: an I/O that finds its base busy takes an alias; bases
        # without jobs (closed affinity, a sequential stream) add no slot
        active = members if c.jobs is None else len([n for n in c.jobs if n > 0])
        subchannels = c.groups(("edev.subchannels",), active + topo.aliases, None, pool=True)
        c.reported_slots[id(subchannels[0][0])] = members + topo.aliases
    turnaround = _turnaround(catalog)
    page_bytes = _command_bytes(catalog)
    commands: dict[tuple[int, int], Path] = {}

    def command(path: Path, op: int, size: int) -> Path:
        """One device command of ``size`` bytes on the held subchannel (the same in every SSCH)."""
        cmd = commands.get((op, size))
        if cmd is None:
            cmd = commands[(op, size)] = path.part()
            if op == READ:
                device.read(cmd, size)
                cmd.visit(link_host, size * link_per_byte)
            else:
                cmd.visit(link_dev, size * link_per_byte)
                device.write(cmd, size)
        return cmd

    def ssch(op: int, nbytes: float | None) -> ChildKind:
        """One SSCH of ``nbytes`` (None: of any size up to one page): CP runs its channel program one
        device command per page, one after another, with the subchannel held throughout (``_build_zvm``
        in sim/model.py)."""
        path = Path()
        cpu.charge_submit(path)
        path.acquire(subchannels)
        if nbytes is None:  # the command is the route's own size: built in place
            if op == READ:
                device.read(path)
                path.visit(link_host, 0.0, link_per_byte)
            else:
                path.visit(link_dev, 0.0, link_per_byte)
                device.write(path)
        else:
            whole, rest = divmod(int(nbytes), page_bytes)
            if whole:
                path.include(command(path, op, page_bytes), whole)
            if rest:
                path.include(command(path, op, rest), 1)
        if turnaround[op] > 0:
            path.delay(turnaround[op])
        path.release()
        cpu.charge_complete(path)
        return [(1.0, path)]

    largest = max([n for _, _, sizes in workload_mix(scenario.workload) for n, _ in sizes])
    if largest <= page_bytes:  # one command per SSCH: one route per op serves every size
        c.width = _add_kinds(c, "jbod", 256 * 1024, lambda op: ssch(op, None))
    else:
        c.width = _add_sized_kinds(c, "jbod", 256 * 1024, ssch)
    c.cpu = cpu
    return c


def clear_tables() -> None:
    """Forget the derived parameters, volume-layer plans and name tables (they are rebuilt on use)."""
    _derived.clear()
    _mixes.clear()
    for table in (kind_plan, volume_plan, _buckets, names, namespace_names, _hba_port_names, _directions,
                  _round_robin_shares, _pcie_gbs):
        table.cache_clear()


def layout_of(topo: Topology) -> str:
    """The volume layout over the members ("jbod" where the attachment has none: z/VM, generic)."""
    if isinstance(topo, (DirectNvme, San, Exflash)):
        return topo.layout
    return "jbod"


def compile_scenario(scenario: Scenario, catalog: Catalog | None = None, finish: bool = True, spread: bool = False) -> Compiler:
    """The analytic network of ``scenario``; with ``finish`` its populations are fixed for the workload too.

    ``spread``: an open sequential stream on a striped layout is spread over all members
    (by default it sits on one stripe unit, see ``_member_jobs``).
    """
    topo = scenario.topology
    catalog = catalog or load_catalog()
    c: Compiler
    if isinstance(topo, Generic):
        c = compile_generic(scenario, topo, catalog)
    elif isinstance(topo, DirectNvme):
        c = compile_direct(scenario, topo, catalog, spread)
    elif isinstance(topo, San):
        c = compile_san(scenario, topo, catalog, spread)
    elif isinstance(topo, Exflash):
        c = compile_exflash(scenario, topo, catalog, spread)
    elif isinstance(topo, ZvmEdev):
        c = compile_zvm(scenario, topo, catalog)
    else:  # pragma: no cover - the union is closed
        raise TypeError(f"unknown topology {type(topo).__name__}")
    if finish:
        wl = scenario.workload
        c.net.finish(float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else INF, c.width)
    return c
