"""Compile a route description (sim/route/) into the analytic network: the DES's routes as formulas.

Every number comes from the route description (``sim.route.describe``), which the DES builder
(sim/des/model.py) reads too; nothing numeric is derived here. Component names are the
description's meter names, so utilization maps line up.

A route is built once per device op and serves every transfer size (services are a fixed
part plus a part per byte, or a function of the size such as a NAND die's hold), except on
z/VM, where an SSCH runs one device command per page and the route is built per size.

Volume members are namespaces (direct NVMe), LUNs (SAN), DIMMs (eXFlash) or base EDEVs
(z/VM). A device I/O goes to any member alike, except under closed affinity (a JBOD job
keeps its member, ``sim/route/volume.py``), where members get their jobs' share and members
without jobs get nothing. Instances of a component that carry the same share form one group.

What many scenarios share is built once and kept: parameters derived from the catalog (by the
description, ``sim.route.derived``), the volume layer's plan of a workload mix on a layout and
member count (``kind_plan``), and component names. A scenario's own network (its groups, routes
and loads) is compiled anew (``sim.analytic`` caches it whole).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import cast

from models.catalog import Catalog, load_catalog
from models.faults import rebuild_member_bytes
from models.scenario import Scenario
from models.workload import ClosedWorkload, Workload
from sim.analytic.dies import fork_join_spread_us
from sim.analytic.network import READ, WRITE, ChildKind, Choice, Group, KindPlan, LogicalKind, Network, Path, Phase, PhaseRow
from sim.analytic.queueing import INF, normal_max_factors
from sim.route import derived
from sim.route.describe import (
    MIRROR_PAIRS,
    STRIPED,
    AnyRoute,
    DirectRoute,
    chunk_bytes_of,
    describe,
    layout_of,
)
from sim.route.describe import clear_tables as clear_route_tables
from sim.route.elements import IDENTITY, Channel, DeviceBank, LinkBank, MemberMap, PoolBank, PortBank, StationBank, instance_of
from sim.route.flash import FIRST_READ_BYTES, DieLayout, FlashParameters, program_operations, write_command_us
from sim.route.host import ResolvedHost
from sim.route.links import us_per_byte
from sim.route.steps import (
    CHANNEL,
    MEDIA,
    TO_DEVICE,
    WHOLE,
    Acquire,
    Complete,
    Cross,
    Device,
    Element,
    Pages,
    Release,
    ReleaseBehind,
    RouteLayout,
    Serve,
    Step,
    SubchannelBank,
    Submit,
    Transfer,
    Wait,
    layout,
)
from sim.route.volume import STREAM_ALIGN_BYTES, Volume

__all__ = ["MIRROR_PAIRS", "STRIPED", "Compiler", "clear_tables", "compile_scenario", "layout_of"]

SizeTime = Callable[[float], float]
"""Microseconds for a transfer of n bytes."""


def _die_times(catalog: Catalog, params: FlashParameters) -> tuple[SizeTime, SizeTime]:
    """A device's ``die_read_time_us`` and ``die_program_time_us``, remembered per transfer size.

    The formulas hold for any byte count (pieces of a striped I/O average fractional sizes).
    """
    times: tuple[SizeTime, SizeTime] = derived.remembered_for(catalog, ("die times",), params, lambda: (
        cast(SizeTime, lru_cache(maxsize=256)(params.die_read_time_us)),
        cast(SizeTime, lru_cache(maxsize=256)(params.die_program_time_us))))
    return times


# -- the volume layer ---------------------------------------------------------------------------

VolumePlan = tuple[tuple[float, tuple[tuple[tuple[int, int, float], ...], ...]], ...]
"""Variants (probability, phases); a phase is ((count, op, bytes), ...)."""


def _stripe_variants(size: int, chunk: int, grid: int) -> list[tuple[float, int, float, int]]:
    """Where an I/O of ``size`` bytes at a random ``grid``-aligned offset (``grid`` divides ``chunk``) meets the chunk
    boundaries: (probability, whole chunks, bytes in the end pieces, number of end pieces) per case."""
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
    return variants


@lru_cache(maxsize=4096)
def volume_plan(layout: str, members: int, chunk: int, op: int, size: int, grid: int = 4096,
                failed: frozenset[int] = frozenset(), rebuilding: bool = False) -> VolumePlan:
    """How the volume layer splits one logical I/O of ``size`` bytes at a random ``grid``-aligned offset.

    Random I/O lands on 4 KiB boundaries; a sequential stream (``access_grid``) on multiples of
    its transfer sizes from a 1 MiB-aligned start, so 128 KiB reads never cross a 256 KiB chunk.

    Striped layouts (raid0, raid10, ibmi_mirror) cut the I/O at chunk boundaries: with
    ``size = a chunks + b bytes`` it has a + 1 pieces, or a + 2 when it straddles one more
    boundary (probability from the number of aligned offsets that make it straddle);
    the two end pieces share the bytes that are not whole chunks. Mirrors write every
    piece to both copies; RAID-1 reads one copy and writes all; parity layouts are taken
    from ``Volume.plan`` itself at offsets spread over a stripe. With ``failed`` members (a degraded
    array) every layout is sampled from ``Volume.plan`` over a whole rotation of its placement.
    """
    if failed:
        return _sampled_plan(layout, members, chunk, op, size, failed=failed, rebuilding=rebuilding)
    if layout == "jbod" or (layout == "raid1" and op == READ):
        return ((1.0, (((1, op, float(size)),),)),)
    if layout == "raid1":
        return ((1.0, (((members, WRITE, float(size)),),)),)
    if layout in ("raid5", "raid6"):
        return _sampled_plan(layout, members, chunk, op, size)
    copies = 2 if (layout in ("raid10", "ibmi_mirror") and op == WRITE) else 1
    variants = _stripe_variants(size, chunk, math.gcd(grid, chunk))
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


def rotation_bytes(layout: str, members: int, chunk: int) -> int:
    """Bytes after which a layout's placement repeats: members stripes (parity), the pairs (mirrors), a chunk (raid1)."""
    if layout in ("raid5", "raid6"):
        return chunk * (members - (1 if layout == "raid5" else 2)) * members
    if layout in MIRROR_PAIRS:
        return chunk * (members // 2)
    return chunk


def _sampled_plan(layout: str, members: int, chunk: int, op: int, size: int, samples: int = 64,
                  failed: frozenset[int] = frozenset(), rebuilding: bool = False) -> VolumePlan:
    """RAID-5/6: run the DES volume mapping at offsets spread evenly over one stripe (a degraded array:
    over a whole rotation, ``rotation_bytes``, as the lost member's place in the stripe rotates).

    Offsets that give the same shape (per phase and op: whole-chunk pieces and the number of
    partial pieces) form one variant; its partial pieces, ranked by size, take the mean size
    of their rank (the largest partial piece sets the phase's expected maximum).
    """
    parities = 1 if layout == "raid5" else 2
    stripe = chunk * (members - parities) if not failed else rotation_bytes(layout, members, chunk)
    vol = Volume(layout, members, chunk, 1 << 50, lambda m: 0, False, failed, rebuilding)
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


MemberWeights = tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]
"""Each member's share of all device I/Os, of the device reads and of the device writes."""


@lru_cache(maxsize=1024)
def member_weights(layout: str, members: int, chunk: int, mix: Mix, grid: int, failed: frozenset[int],
                   rebuilding: bool = False, samples: int = 256) -> MemberWeights:
    """Share of the device I/Os each member takes in a degraded array: all of them, the reads, the writes
    (the DES's ``Volume.plan`` at offsets spread over a rotation, mirror ties alternating so that two live
    copies share a pair's reads evenly, as the DES's less-loaded choice does under load)."""
    vol = Volume(layout, members, chunk, 1 << 50, lambda m: 0, False, failed, rebuilding)
    vol.alternate_ties = True
    span = rotation_bytes(layout, members, chunk)
    step = max(grid, (span // samples) // grid * grid)
    offsets = range(0, span, step)
    load = ([0.0] * members, [0.0] * members)
    for op, p_op, sizes in mix:
        for nbytes, p_size in sizes:
            w = p_op * p_size / len(offsets)
            for off in offsets:
                for phase in vol.plan(op, off, int(nbytes), -1):
                    for m, child, _ in phase:
                        load[child][m] += w
    both = [r + w for r, w in zip(*load, strict=True)]

    def norm(x: list[float]) -> tuple[float, ...]:
        total = sum(x)
        return tuple([v / total for v in x]) if total > 0 else tuple([v / sum(both) for v in both])

    return norm(both), norm(load[READ]), norm(load[WRITE])


READ_SIDE = (".read_units", ".read_bw", ".die_locks", ".to_host")
WRITE_SIDE = (".write_cache", ".write_bw", ".program_units", ".to_device")
"""Meters only device reads (or only device writes) visit on a direct route (``sim.route.steps``: reads cross
the links towards the host, writes towards the device): a degraded array loads them by the reads' (writes')
member shares; the rest (namespace and NVMe queues) by all device I/Os."""


def _side_weights(weights: MemberWeights, label: str) -> tuple[float, ...]:
    if label.endswith(READ_SIDE):
        return weights[1]
    if label.endswith(WRITE_SIDE):
        return weights[2]
    return weights[0]


# -- building blocks ----------------------------------------------------------------------------------


Mapping = MemberMap
"""Which instance volume member m uses (``sim.route.elements.MemberMap``)."""


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
            i = instance_of(mapping, m)
            share[i] += (jobs[m] if jobs else 1.0) / total
            cover[i] += 1
    buckets: dict[tuple[float, int], list[int]] = {}
    for i in range(count):
        buckets.setdefault((round(share[i], 12), cover[i]), []).append(i)
    return tuple((s, c, tuple(idx)) for (s, c), idx in buckets.items())


@lru_cache(maxsize=1024)
def _weighted_buckets(weights: tuple[float, ...], mapping: Mapping, count: int,
                      background: tuple[float, ...] | None) -> tuple[tuple[float, int, float, tuple[int, ...]], ...]:
    """Instances of a degraded array grouped by (share of device I/Os, members served, background
    utilization): ((share, cover, background, instance indices), ...). Members with no I/O serve none."""
    share = [0.0] * count
    cover = [0] * count
    for m, w in enumerate(weights):
        i = instance_of(mapping, m)
        share[i] += w
        cover[i] += 1 if w > 0 else 0
    buckets: dict[tuple[float, int, float], list[int]] = {}
    for i in range(count):
        bg = background[i] if background else 0.0
        buckets.setdefault((round(share[i], 12), cover[i], round(bg, 12)), []).append(i)
    return tuple((s, c, bg, tuple(idx)) for (s, c, bg), idx in buckets.items())


@lru_cache(maxsize=4096)
def suffixed(labels: tuple[str, ...], suffix: str) -> tuple[str, ...]:
    """``label + suffix`` for every label (a device's meters: ``drive0`` -> ``drive0.read_units``)."""
    return tuple([x + suffix for x in labels])


@lru_cache(maxsize=256)
def _directions(labels: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (towards the host, towards the device) meter names of ports ``labels``."""
    return tuple([f"{x}.to_host" for x in labels]), tuple([f"{x}.to_device" for x in labels])


@lru_cache(maxsize=256)
def _round_robin_shares(paths: int, ports: int) -> tuple[float, ...]:
    """Share of the device I/Os each of ``ports`` ports takes when I/Os take ``paths`` paths in turn."""
    return tuple([(paths // ports + (1 if i < paths % ports else 0)) / paths for i in range(ports)])


@lru_cache(maxsize=256)
def _surviving_shares(paths: int, ports: int, alive: tuple[int, ...]) -> tuple[float, ...]:
    """Share of the device I/Os each port takes when path r takes port ``alive[r % len(alive)]`` (failed ports: 0)."""
    taken = [0] * ports
    for r in range(paths):
        taken[alive[r % len(alive)]] += 1
    return tuple([t / paths for t in taken])


class Compiler:
    """Shared state while compiling one scenario."""

    def __init__(self, scenario: Scenario, route: AnyRoute, jobs: tuple[int, ...] | None, catalog: Catalog):
        members = route.volume.members
        self.scenario = scenario
        self.route = route
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
        self.rotating = jobs is not None and scenario.workload.access == "sequential" and route.volume.layout in STRIPED
        """Closed sequential streams sit on some members at a time but move over all of them."""
        self.reported_slots: dict[int, int] = {}
        """Group id -> the DES meter's capacity where the model uses fewer slots (idle z/VM bases)."""
        self.component: dict[int, tuple[str, ...]] = {}
        """Group id -> all instance names of its component (for time-averaged utilization)."""
        self.lock = threading.Lock()
        self.population = -1.0
        self.keep: object = None
        self.weights: MemberWeights | None = None
        """A degraded array: each member's share of the device I/Os (``member_weights``); None: all alike."""
        self.background: dict[str, float] = {}
        """Instance name -> utilization a rebuild adds there (``rebuild_background``)."""
        self.die_devices: list[DieGroups] = []
        """The route's flash devices under the ``dies`` device model (the fast path's die-level tail reads them)."""
        self.pooled_devices: list[FlashGroups] = []
        """The route's flash devices under the ``pooled`` device model (the fast path's pooled tail law, ``sim.analytic.tails.pooled_tails``)."""

    def groups(self, labels: tuple[str, ...], servers: int, mapping: Mapping, pool: bool = False, ca2: float = 1.0,
               display: str | None = None, shares: tuple[float, ...] | None = None) -> Choice:
        """Instances ``labels`` of a component; ``mapping`` says which instance volume member m uses.

        Instances with the same share of the traffic form one group; the choice lists each
        group with the probability that a device I/O goes to one of its instances.
        """
        if self.weights is not None and mapping is not None and shares is None:
            return self._weighted_groups(labels, servers, mapping, pool, ca2, display)
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

    def _weighted_groups(self, labels: tuple[str, ...], servers: int, mapping: Mapping, pool: bool, ca2: float,
                         display: str | None) -> Choice:
        """``groups`` of a degraded array: instances by their members' shares (``weights``) and the
        utilization a rebuild adds to them (``Group.background_util``)."""
        assert self.weights is not None
        choice: Choice = []
        count = len(labels)
        registered = self.net.groups
        bg = tuple([self.background.get(x, 0.0) for x in labels]) if self.background else None
        for s, c, u, idx in _weighted_buckets(_side_weights(self.weights, labels[0]), mapping, count, bg):
            if s <= 0.0 and u <= 0.0:
                self.idle_names.extend([labels[i] for i in idx])
                continue
            g = Group(labels if len(idx) == count else tuple([labels[i] for i in idx]), servers, pool, max(c, 1),
                      1.0, count, False, ca2, index=len(registered))
            g.background_util = u
            registered.append(g)
            if display:
                self.display[id(g)] = display
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

    def link(self, bank: LinkBank) -> tuple[Choice, Choice]:
        """(towards the host, towards the device) stations of a bank of full-duplex links."""
        return (self.groups(suffixed(bank.names, ".to_host"), 1, bank.of),
                self.groups(suffixed(bank.names, ".to_device"), 1, bank.of))

    def pools(self, bank: PoolBank, display: str | None = None) -> Choice:
        """A bank of concurrency limits."""
        return self.groups(bank.names, bank.slots, bank.of, pool=True, display=display)


class Cpu:
    """The host CPU element (``ResolvedHost.charges``) as groups: the CPU station (cores) and the serial
    stack section, charged per device I/O and per byte it moves."""

    def __init__(self, c: Compiler, host: ResolvedHost):
        self.charges = charges = host.charges()
        self.station = c.groups(("host_cpu",), charges.cores, None) if charges else []
        self.serial = c.groups(("host_stack.serial",), 1, None) if charges and charges.serial_us > 0 else []

    def charge_submit(self, path: Path) -> None:
        charges = self.charges
        if charges is not None and charges.submit is not None:
            path.visit(self.station, charges.submit.us, charges.submit.us_per_byte)
            if self.serial:
                path.visit(self.serial, charges.serial_us)

    def charge_complete(self, path: Path) -> None:
        charges = self.charges
        if charges is None:
            return
        if charges.complete is not None:
            path.visit(self.station, charges.complete.us, charges.complete.us_per_byte)
        if charges.beside is not None:
            us, per_byte = charges.beside.us, charges.beside.us_per_byte
            path.charge(self.station, lambda n: us + per_byte * n)


class FlashGroups:
    """A flash device's stations and write cache (``FlashDevice`` in sim/des/model.py), for ``n`` devices.

    With shared NAND dies (``FlashParameters.shared_dies``) reads and programs take turns on the
    device's ``read_units`` dies (a pool): a read holds a die for ``die_read_time_us`` and then
    crosses the sequential read channel (``read_channel_gbs``); a destaged write waits for a die,
    frees its cache slot and keeps the die for ``die_program_time_us`` in the background (the dies
    are the whole write path: no write channel or program units). On every device a read whose
    own die is programming first waits for the program to end (``die_locks``: the shared dies, or
    one per program unit; ``DieProgramLocks`` in the DES).
    """

    def __init__(self, c: Compiler, bank: DeviceBank):
        p = bank.params
        labels, mapping = bank.names, bank.of
        self.p = p
        self.scv = p.service_cv * p.service_cv if p.law == "lognormal" else 0.0
        self.channel_scv = p.read_channel_cv * p.read_channel_cv
        if p.shared_dies:
            self.dies: Choice | None = c.groups(suffixed(labels, ".nand_dies"), p.read_units, mapping, pool=True)
            self.read_units: Choice = []
        else:
            self.dies = None
            self.read_units = c.groups(suffixed(labels, ".read_units"), p.read_units, mapping)
        # the dies a read may find programming: the shared dies, or one per program unit (only
        # where the devices see reads and writes: a mix, or parity updates that read first)
        self.die_locks = c.groups(suffixed(labels, ".die_locks"), p.read_units if p.shared_dies else p.program_units,
                                  mapping) if c.route.reads_meet_programs else []
        for group, _ in self.die_locks:
            group.program_locks = True
        if c.weights is not None:  # a degraded array's idle devices: their die locks have no DES meter to report
            c.idle_names = [n for n in c.idle_names if not n.endswith(".die_locks")]
        self.read_bw = c.groups(suffixed(labels, ".read_bw"), 1, mapping)
        self.write_cache = c.groups(suffixed(labels, ".write_cache"), p.write_cache_slots, mapping, pool=True)
        if not p.shared_dies:
            self.write_bw = c.groups(suffixed(labels, ".write_bw"), 1, mapping)
            self.program_units = c.groups(suffixed(labels, ".program_units"), p.program_units, mapping)
            self.write_per_byte = us_per_byte(p.write_bw_gbs)
        self.read_per_byte = us_per_byte(p.read_channel_gbs)
        if p.shared_dies:
            self.die_read_time, self.die_program_time = _die_times(c.catalog, p)

    def read(self, path: Path, nbytes: int | None = None, part: int = WHOLE) -> None:
        """A read of the route's size, or of ``nbytes`` (a route built for one size: one page of a channel program);
        ``part`` MEDIA its media stage alone (die wait, read unit), CHANNEL its read channel alone."""
        if part != CHANNEL:
            self._media(path, nbytes)
        if part == MEDIA:
            return
        if nbytes is None:
            path.visit(self.read_bw, 0.0, self.read_per_byte, self.channel_scv)
        else:
            path.visit(self.read_bw, nbytes * self.read_per_byte, 0.0, self.channel_scv)

    def _media(self, path: Path, nbytes: int | None) -> None:
        """A read's die wait and its read unit (or shared die)."""
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


class DieGroups:
    """A flash device under the ``dies`` device model (``DieDevice`` in sim/des/dies.py), for ``n`` devices.

    A read: the controller's fixed delay (less its per-command time), the controller (one server,
    1 / ceiling per command), one of the device's N dies (each a single-server FIFO visited 1/N of the
    device's I/Os: a group of N instances per device, M/G/1 per die with the closed-loop corrections
    of the network), then the read channel for the bytes beyond the first 4 KiB. A read of more than
    a page loads ``pieces`` dies (one per page) and waits as for one of them (the maximum of the k pages' waits
    is left out: H_k waits for k pages overshot, -4.8% on ES5F 128 KiB random reads at QD4 and -7..-14% on sequential
    streams, whose pages take consecutive dies); a random read's pages then add, as a pure delay, the last of their
    reads with no wait (``fork_join_spread_us``: the slowest of k die reads and the read's own pages sharing a die,
    read one after another; 64 KiB eXFlash reads at QD1 were 22% fast without it); but for the
    write point's programs it finds on its k dies it waits for the longest rest (``Group.idle_programs``, the network's
    program locks, ``sim.analytic.dies.slowest_rest_us``: a program lasts some ten die reads). A write: the controller, a cache
    slot and the acknowledgement; behind it the write channel and the write's NAND work, N / write IOPS of die
    time in operations of tPROG (``sim.route.flash.ProgramOperations``: N / (W tPROG) visits of one operation) on
    the dies the FTL's write point picks (``sim.route.flash.WritePoint``, an idle die first): a charge on the dies
    (their load, spread evenly; a read meets one operation at random and waits out its rest) and no wait of its
    own; the slot is held for the write channel and the whole work. With shared dies (eXFlash) the slot is freed when the
    program starts (no wait) and the die is charged ``die_program_time_us`` x N / read units; a random
    read holds its die ``die_read_time_us`` with the layout (tR and its bytes beyond the first 4 KiB at
    1 / N of the random-read bandwidth) and crosses the sequential read channel (``read_channel_gbs``).
    """

    def __init__(self, c: Compiler, bank: DeviceBank, d: DieLayout):
        p = bank.params
        labels, mapping = bank.names, bank.of
        self.p, self.d = p, d
        self.scv = p.service_cv * p.service_cv if p.law == "lognormal" else 0.0
        self.die_scv = d.die_read_cv * d.die_read_cv
        self.channel_scv = p.read_channel_cv * p.read_channel_cv
        self.controller = c.groups(suffixed(labels, ".controller"), 1, mapping)
        # each device's dies: N instances named after the device's meter, by the device's share of the I/Os
        share = {name: pr / len(g.names) for g, pr in self.controller for name in g.names}
        die_labels = tuple([f"{name}.dies" for name in labels for _ in range(d.dies)])
        shares = tuple([share.get(f"{name}.controller", 0.0) / d.dies for name in labels for _ in range(d.dies)])
        # a die's arrivals taken as Poisson, also for a sequential stream that takes the dies in turn (ca2 = 1/N
        # there left a P4510 50/50 64 KiB sequential mix at QD8 19% fast against the DES, ca2 = 1: +2.7%)
        self.dies = c.groups(die_labels, 1, None, shares=shares, ca2=1.0)
        for g, _ in self.dies:
            g.page_us = d.die_read_us
        # the programs on the same dies, as locks a read meets at random (``Group.shares_with``: the dies' capacity
        # counts them, the dies' queue does not: they take idle dies, ``sim.route.flash.WritePoint``)
        self.programs = c.groups(die_labels, 1, None, shares=shares, ca2=1.0)
        self.operations = program_operations(p, d)
        # each destaged write's operations as visits to its dies' locks (``ProgramOperations.per_write`` each)
        self.program_visits = [(g, q * self.operations.per_write) for g, q in self.programs]
        for (g, _), (h, _) in zip(self.programs, self.dies, strict=True):
            g.program_locks = True
            g.shares_with = h.index
            g.idle_programs = not p.shared_dies
        reach = {name: g.reach for g, _ in self.controller for name in g.names}
        cover = {name: g.cover for g, _ in self.controller for name in g.names}
        for g, _ in self.dies + self.programs:
            if c.background and not g.program_locks:  # a rebuild's die load (``rebuild_background``), the mean over the group's devices
                devices = list(dict.fromkeys(g.names))
                g.background_util = sum((c.background.get(name, 0.0) for name in devices), 0.0) / len(devices)
            # a die is reached by the jobs that reach its device (closed affinity), not by its own share
            g.round_robin = False
            # a die serves its device's members only (not every member, as a round-robin share would say)
            g.reach = reach.get(g.names[0][:-len(".dies")] + ".controller", 1.0)
            g.cover = cover.get(g.names[0][:-len(".dies")] + ".controller", 1)
        self.read_bw = c.groups(suffixed(labels, ".read_bw"), 1, mapping)
        self.write_cache = c.groups(suffixed(labels, ".write_cache"), p.write_cache_slots, mapping, pool=True)
        self.write_bw = c.groups(suffixed(labels, ".write_bw"), 1, mapping)
        # the read channel: the random-read bandwidth, or with shared dies the sequential one (``read_channel_gbs``)
        self.read_per_byte = us_per_byte(p.read_channel_gbs)
        self.write_per_byte = us_per_byte(p.write_bw_gbs)
        self.pieces = lru_cache(maxsize=256)(self._extra_pieces)
        self.spread = lru_cache(maxsize=256)(self._spread_us)
        # whether any device read can span several dies (a charge of no die time would still count as a visit)
        self.spans_pages = any(nbytes > d.page_bytes for wl in c.scenario.all_workloads()
                               for _, _, sizes in workload_mix(wl) for nbytes, _ in sizes)
        self.die_us, self.die_us_per_byte = self._die_read_line(c)

    def _die_read_line(self, c: Compiler) -> tuple[float, float]:
        """A read's die service a + b n (us, us per byte of the read's size n): tR whatever the size, or with shared
        dies and random reads ``FlashParameters.die_read_time_us`` with the layout (each page's die: tR and its share
        of the bytes beyond the first 4 KiB at 1 / N of the random-read bandwidth; the other pages' dies are charged
        as much, ``_extra_pieces``). The line goes through that hold at the smallest and the largest size the
        workloads read: exact for one size and for any sizes from 4 KiB to a page (the hold is linear there); else
        exact at both ends (reads under 4 KiB are held tR; over a page the bytes are split among the pages)."""
        p, d = self.p, self.d
        if not (p.shared_dies and p.random_access):
            return d.die_read_us, 0.0
        sizes = [float(nbytes) for wl in c.scenario.all_workloads() for op, _, table in workload_mix(wl) if op == READ
                 for nbytes, _ in table]
        if not sizes:
            return d.die_read_us, 0.0
        lo, hi = min(sizes), max(sizes)
        at_lo = p.die_read_time_us(lo, d)
        if hi <= lo:
            return at_lo, 0.0
        b = (p.die_read_time_us(hi, d) - at_lo) / (hi - lo)
        return at_lo - b * lo, b

    def _die_read_us(self, nbytes: float) -> float:
        """One page's die read of an I/O of ``nbytes`` (``_die_read_line``'s hold, exact at any size)."""
        p, d = self.p, self.d
        return p.die_read_time_us(nbytes, d) if p.shared_dies and p.random_access else d.die_read_us

    def _shared_program_time(self, nbytes: float) -> float:
        """With shared dies: a program's die time, so that the N dies alone give the datasheet write IOPS."""
        return self.p.die_program_time_us(nbytes) * self.d.dies / self.p.read_units

    def _extra_pieces(self, nbytes: float) -> float:
        """Die reads of an I/O of ``nbytes`` beyond its first, in us of die time (a charge on the dies)."""
        return (self.d.pieces(nbytes) - 1) * self._die_read_us(nbytes)

    def _spread_us(self, nbytes: float) -> float:
        """A random read of ``nbytes`` over several pages: its time at the dies beyond one page's read with no wait
        there (``fork_join_spread_us``: the last of its pages, its own pages sharing a die one after another), a pure
        delay (the pages' die time is charged, ``_extra_pieces``). Striped pieces average fractional sizes: the pages
        of the mean size."""
        d = self.d
        return fork_join_spread_us(d.pieces(nbytes), d.dies, self._die_read_us(nbytes), d.die_read_cv)

    def read(self, path: Path, nbytes: int | None = None) -> None:
        """A read of the route's size, or of ``nbytes`` (a route built for one size: one page of a channel program)."""
        d = self.d
        path.delay(d.controller_delay_us)
        path.visit(self.controller, d.controller_service_us)
        path.wait_for(self.programs)
        if nbytes is None:
            path.visit(self.dies, self.die_us, self.die_us_per_byte, self.die_scv)
        else:
            path.visit(self.dies, self._die_read_us(nbytes), 0.0, self.die_scv)
        first = FIRST_READ_BYTES * self.read_per_byte
        if nbytes is None:
            if self.spans_pages:
                path.charge(self.dies, self.pieces, self.die_scv)
                if self.p.random_access:  # the slowest of its pages and its own pages sharing a die
                    path.sized_delay(self.spread)
            # the bytes beyond the first 4 KiB (those are inside the QD1 latency the die time comes from)
            path.visit(self.read_bw, -first, self.read_per_byte, self.channel_scv)
        else:
            extra = self._extra_pieces(nbytes)
            if extra > 0:
                path.charge(self.dies, lambda _: extra, self.die_scv)
            path.visit(self.read_bw, max(0.0, nbytes * self.read_per_byte - first), 0.0, self.channel_scv)

    def write(self, path: Path, nbytes: int | None = None) -> None:
        p, d = self.p, self.d
        ctrl_w = write_command_us(d, p)  # at most the write's acknowledgement
        path.visit(self.controller, ctrl_w)
        path.acquire(self.write_cache)
        path.delay(max(0.0, p.write_ack_us - ctrl_w), self.scv)
        destage = path.part()
        # programs land where the FTL's write point puts them (``sim.route.flash.WritePoint``: an idle die first):
        # they load the dies evenly (a charge: their share of every die's time, which reads arriving at random
        # meet, M/G/1 with the programs' second moment) and do not wait for a die themselves
        if p.shared_dies:
            # the slot is freed when the program starts (at once on an idle die); the die is held for the program
            if nbytes is None:
                destage.charge(self.programs, self._shared_program_time, self.scv)
            else:
                program_time = p.die_program_time_us(nbytes) * d.dies / p.read_units
                destage.charge(self.programs, lambda _: program_time, self.scv)
            path.release(background=destage)
            return
        if nbytes is None:
            destage.visit(self.write_bw, 0.0, self.write_per_byte)
        else:
            destage.visit(self.write_bw, nbytes * self.write_per_byte)
        # the write's NAND work in operations of tPROG (``ProgramOperations``): per_write visits of one operation, so a
        # read meets the rest of one operation; the slot is held for the whole work (N / W on average)
        ops = self.operations
        op_us = ops.operation_us
        destage.charge(self.program_visits, lambda _: op_us, self.scv)
        destage.delay(ops.die_us_per_write, self.scv)
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
    divisor of that alignment and every size in the mix (``sim.des.engine.Run._issue``)."""
    if not sequential:
        return 4096
    grid = STREAM_ALIGN_BYTES
    for _, _, sizes in mix:
        for nbytes, _ in sizes:
            grid = math.gcd(grid, int(nbytes))
    return max(grid, 1)


def _logical_kinds(layout: str, members: int, chunk: int, mix: Mix, grid: int, failed: frozenset[int],
                   rebuilding: bool) -> tuple[list[LogicalKind], int]:
    """``kind_plan``'s logical kinds (one per op and size of ``mix``) and the widest phase."""
    kinds = []
    width = 1
    for op, p_op, sizes in mix:
        for nbytes, p_size in sizes:
            variants = []
            serial = []
            crowded = False
            for vprob, phases in volume_plan(layout, members, chunk, op, nbytes, grid, failed, rebuilding):
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
    return kinds, width


_KindRow = tuple[int, float, tuple[tuple[float, tuple[PhaseRow, ...]], ...]]


def _phase_table(kinds: list[LogicalKind]) -> tuple[dict[tuple[int, float], int], list[int], list[_KindRow], list[tuple[int, int, int]]]:
    """``kind_plan``'s child kinds (device op, bytes) in the solver's order, the ops among them, the table of
    phases of every kind and the phases where two or more children join."""
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
    return position, ops, table, fan_in


def _kind_loads(kinds: list[LogicalKind]) -> tuple[list[float], dict[tuple[int, float], float]]:
    """``kind_plan``'s probability of each op and expected children per logical I/O of each child kind."""
    op_prob = [0.0, 0.0]
    loads: dict[tuple[int, float], float] = {}
    for kind in kinds:
        op_prob[kind.op] += kind.prob
        for vprob, phases in kind.variants:
            share = kind.prob * vprob
            for phase in phases:
                for count, o, n in phase:
                    loads[(o, n)] = loads.get((o, n), 0.0) + share * count
    return op_prob, loads


@lru_cache(maxsize=4096)
def kind_plan(layout: str, members: int, chunk: int, mix: Mix, grid: int = 4096, failed: frozenset[int] = frozenset(),
              rebuilding: bool = False) -> KindPlan:
    """The logical kinds of ``mix`` on a volume of ``members`` members (``volume_plan`` for every op and size).

    Also what the solver reads of them: the child kinds (device op, bytes) in its order, and its
    table of phases (the expected maximum of identical children, Clark's for different ones).
    Pieces of a phase that outnumber the members are taken as shared (``_share_members``).
    """
    kinds, width = _logical_kinds(layout, members, chunk, mix, grid, failed, rebuilding)
    position, ops, table, fan_in = _phase_table(kinds)
    op_prob, loads = _kind_loads(kinds)
    return KindPlan(kinds=tuple(kinds), ops=tuple(ops), children=tuple(position), width=width, table=tuple(table),
                    fan_in=tuple(fan_in), loads=tuple([(o, n, w) for (o, n), w in loads.items()]),
                    op_prob=(op_prob[0], op_prob[1]))


def _scenario_plan(c: Compiler) -> KindPlan:
    """``kind_plan`` of the scenario's workload on the route's volume layer, its offsets aligned as its access pattern aligns them."""
    wl = c.scenario.workload
    mix = workload_mix(wl)
    v = c.route.volume
    grid = access_grid(mix, wl.access == "sequential")
    members, failed, rebuilding = own_volume(c.scenario, c.route)
    if failed or members != c.members:
        return kind_plan(v.layout, members, v.chunk_bytes, mix, grid, failed, rebuilding)
    return kind_plan(v.layout, c.members, v.chunk_bytes, mix, grid)


def placed_members(scenario: Scenario, route: AnyRoute) -> tuple[int, ...] | None:
    """The volume members the workload is placed on (its own volume: member i is the route's member
    ``placed[i]``), None where it uses the whole volume (no placement, every member in order, or a route
    with no volume layer)."""
    placed = scenario.workload.placement
    if placed is None or not layout(route).uses_volume or list(placed) == list(range(route.volume.members)):
        return None
    return tuple(placed)


def own_volume(scenario: Scenario, route: AnyRoute) -> tuple[int, frozenset[int], bool]:
    """(members, failed members, rebuilding) of the volume the workload uses: its placement's own volume, whose
    member i is the route's member ``placed[i]`` and is lost when that member failed (the DES's ``_placements``),
    else the route's whole volume."""
    v = route.volume
    placed = placed_members(scenario, route)
    if placed is None:
        return v.members, v.failed, v.rebuild is not None
    failed = frozenset([i for i, m in enumerate(placed) if m in v.failed])
    return len(placed), failed, v.rebuild is not None and bool(failed)


def _add_kinds(c: Compiler, child: Callable[[int], ChildKind]) -> int:
    """Logical kinds for every op and size of the workload; returns the widest phase.

    ``child(op)`` builds the route of a device I/O of kind ``op`` once; every size reuses it.
    """
    plan = _scenario_plan(c)
    c.net.add_kinds(plan, {o: child(o) for o in plan.ops})
    return plan.width


def _add_sized_kinds(c: Compiler, child: Callable[[int, float], ChildKind]) -> int:
    """As ``_add_kinds``, for routes that change with the transfer size: ``child(op, bytes)`` for each."""
    plan = _scenario_plan(c)
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


def _member_jobs(scenario: Scenario, members: int, layout: str, spread: bool = False) -> tuple[int, ...] | None:
    """Jobs (or sequential streams) per volume member where they stay put, else None (members equally likely).

    * Closed JBOD: job j keeps member j mod M (sim/route/volume.py).
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
        chunk = chunk_bytes_of(scenario.topology)
        span = min(float(units), 1.0 + (wl.queue_depth - 1) * wl.mean_bytes() / chunk)
        weights = [0.0] * units
        for u, n in enumerate(on_unit):
            for k in range(math.ceil(span)):
                weights[(u + k) % units] += n * min(1.0, span - k)
        scale = 1000.0 / max(weights)
        on_unit = [round(w * scale) for w in weights]  # integer shares, as job counts
    return tuple([on_unit[m // per_unit] for m in range(units * per_unit)])


# -- the route: a layout's steps as paths ------------------------------------------------------------------


def _member_jobs_of(scenario: Scenario, route: AnyRoute, spread: bool, placed: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
    """``_member_jobs`` on the route's volume, or on a placed workload's own volume (its member i the route's
    ``placed[i]``; the other members take none of its jobs)."""
    if placed is None:
        return _member_jobs(scenario, route.volume.members, route.volume.layout, spread)
    own = _member_jobs(scenario, len(placed), route.volume.layout, spread)
    if own is None:
        return None
    out = [0] * route.volume.members
    for i, m in enumerate(placed):
        out[m] = own[i]
    return tuple(out)


def _port_groups(c: Compiler, bank: PortBank) -> tuple[Choice, Choice]:
    """SAN ports: path r % paths takes port (r % paths) % n, round-robin, every n-th device I/O."""
    n = len(bank.names)
    shares = _round_robin_shares(bank.paths, n) if bank.alive is None else _surviving_shares(bank.paths, n, bank.alive)
    to_host, to_dev = _directions(bank.names)
    return (c.groups(to_host, 1, None, ca2=1.0 / n, shares=shares),
            c.groups(to_dev, 1, None, ca2=1.0 / n, shares=shares))


def _subchannel_groups(c: Compiler, bank: SubchannelBank) -> Choice:
    members = c.members
    if bank.aliases == 0:
        # each base EDEV runs one I/O at a time: one slot per base (one DES meter for all of them)
        return c.groups((bank.name,) * members, 1, (IDENTITY,), pool=True, display=bank.name)
    # bases and aliases as one pool: an I/O that finds its base busy takes an alias; bases
    # without jobs (closed affinity, a sequential stream) add no slot
    active = members if c.jobs is None else len([n for n in c.jobs if n > 0])
    choice = c.groups((bank.name,), active + bank.aliases, None, pool=True)
    c.reported_slots[id(choice[0][0])] = members + bank.aliases
    return choice


def _network_part(c: Compiler, element: Element) -> object:
    """The groups of one route element (a pair (towards the host, towards the device) for links and ports)."""
    if isinstance(element, PoolBank):
        return c.pools(element)
    if isinstance(element, LinkBank):
        return c.link(element)
    if isinstance(element, PortBank):
        return _port_groups(c, element)
    if isinstance(element, DeviceBank):
        if element.dies is not None:
            dies = DieGroups(c, element, element.dies)
            c.die_devices.append(dies)
            return dies
        pooled = FlashGroups(c, element)
        c.pooled_devices.append(pooled)
        return pooled
    if isinstance(element, StationBank):
        return c.groups(element.names, element.servers, element.of)
    if isinstance(element, Channel):
        return c.groups((element.name,), 1, None)
    if isinstance(element, SubchannelBank):
        return _subchannel_groups(c, element)
    return None  # a pure delay or a draw: no group


class _Paths:
    """Turns a layout's steps into Path visits (the DES's hops as formulas)."""

    def __init__(self, c: Compiler, cpu: Cpu, lay: RouteLayout):
        self.cpu = cpu
        self.made: dict[int, object] = {}
        self.views: dict[int, Choice] = {}
        least = {id(step.bank): step.least_of for steps in lay.steps.values() for step in steps
                 if isinstance(step, Acquire) and step.least_of > 1}
        for element in lay.network_order:
            part = self.made[id(element)] = _network_part(c, element)
            if id(element) in least:
                # mirror reads take the copy with fewer I/Os outstanding, which keeps the pair's queues
                # even: every I/O of a mirrored layout waits for a slot as in the pair pooled
                self.views[id(element)] = c.least_loaded_view(cast(Choice, part), least[id(element)])
        self.commands: dict[tuple[int, int, int], Path] = {}

    def lay(self, path: Path, steps: tuple[Step, ...], op: int, nbytes: int | None = None) -> None:
        """Append ``steps`` of a device I/O of ``op`` to ``path``: of the route's size, or of ``nbytes``."""
        made = self.made
        write = op == WRITE
        for step in steps:
            if isinstance(step, Submit):
                self.cpu.charge_submit(path)
            elif isinstance(step, Complete):
                self.cpu.charge_complete(path)
            elif isinstance(step, Acquire):
                path.acquire(cast(Choice, made[id(step.bank)]), wait_at=self.views.get(id(step.bank)))
            elif isinstance(step, Release):
                path.release()
            elif isinstance(step, ReleaseBehind):
                behind = Path()
                self.lay(behind, step.steps, op, nbytes)
                path.release(background=behind)
            elif isinstance(step, Cross):
                self.cross(path, step, write, nbytes)
            elif isinstance(step, Device):
                self.device(path, step, nbytes)
            elif isinstance(step, Serve):
                law = step.bank.law
                path.visit(cast(Choice, made[id(step.bank)]), law.mean_us, 0.0, law.scv)
            elif isinstance(step, Transfer):
                path.visit(cast(Choice, made[id(step.channel)]), 0.0, step.channel.us_per_byte)
            elif isinstance(step, Wait):
                path.delay(step.delay.law.mean_us, step.delay.law.scv)
            else:
                self.pages(path, step, op, nbytes)

    def device(self, path: Path, step: Device, nbytes: int | None) -> None:
        """A device read or write of the route's size, or of ``nbytes``."""
        device = cast(FlashGroups | DieGroups, self.made[id(step.bank)])
        if step.op == READ and step.part != WHOLE:
            assert isinstance(device, FlashGroups)  # a read in parts: a pooled flash device (``sim.route.steps._zvm``)
            device.read(path, nbytes, step.part)
        elif step.op == READ:
            device.read(path, nbytes)
        else:
            device.write(path, nbytes)

    def cross(self, path: Path, step: Cross, write: bool, nbytes: int | None) -> None:
        bank = step.bank
        way = cast(tuple[Choice, Choice], self.made[id(bank)])[step.toward]
        if isinstance(bank, PortBank):
            payload = (step.toward == TO_DEVICE) == write
            path.visit(way, bank.handling_us if step.toward == TO_DEVICE else 0.0, bank.us_per_byte if payload else 0.0)
        elif nbytes is None:
            path.visit(way, 0.0, bank.us_per_byte)
        else:
            path.visit(way, nbytes * bank.us_per_byte)

    def pages(self, path: Path, step: Pages, op: int, nbytes: int | None) -> None:
        """A channel program: one device command per page, one after another (``nbytes`` None: one
        command of the route's own size, built in place)."""
        if nbytes is None:
            self.lay(path, step.steps, op)
            return
        whole, rest = divmod(int(nbytes), step.page_bytes)
        for size, times in ((step.page_bytes, whole), (rest, 1 if rest else 0)):
            if times:
                path.include(self.command(path, step, op, size), times)

    def command(self, path: Path, step: Pages, op: int, size: int) -> Path:
        """One device command of ``size`` bytes on the held subchannel (the same in every SSCH)."""
        key = (id(step), op, size)
        cmd = self.commands.get(key)
        if cmd is None:
            cmd = self.commands[key] = path.part()
            self.lay(cmd, step.steps, op, size)
        return cmd


def _paged(lay: RouteLayout) -> int | None:
    """The page size of a route whose device I/Os run one command per page, else None."""
    for steps in lay.steps.values():
        for step in steps:
            if isinstance(step, Pages):
                return step.page_bytes
    return None


def rebuild_rate(route: AnyRoute) -> float:
    """The rebuild's idle rate (bytes written per second in all, ``RebuildStream.idle_bytes_per_s``): the cap, unless
    ``depth`` units of a zero-load read, read transfer and cached write cannot reach it. The rate under host load
    (md's throttle) is ``sim.analytic.rebuild.loaded_rebuild_rate``."""
    stream = route.volume.rebuild
    if stream is None or not isinstance(route, DirectRoute):
        return 0.0
    return stream.idle_bytes_per_s


def rebuild_background(route: AnyRoute, written_per_s: float) -> dict[str, float]:
    """Utilization a rebuild at ``written_per_s`` adds to each drive's stations, drive link and adapter uplink
    (reads on the sources, writes on the replacements: ``models.faults.rebuild_member_bytes``, within the workloads'
    volumes that hold each rebuilt member under placement)."""
    v = route.volume
    if v.rebuild is None or not isinstance(route, DirectRoute) or written_per_s <= 0:
        return {}
    p, io = route.devices.params, float(v.rebuild.io_bytes)
    out: dict[str, float] = {}

    def add(name: str, u: float) -> None:
        out[name] = out.get(name, 0.0) + u

    moved = rebuild_member_bytes(v.layout, v.members, v.failed, v.rebuild.rebuilt, written_per_s, v.rebuild.volumes)
    for m, (rd, wr) in enumerate(moved):
        rd, wr = rd * 1e-6, wr * 1e-6  # bytes per us
        drive = route.devices.names[instance_of(route.devices.of, m)]
        d = route.devices.dies
        if d is not None:  # the dies model: commands at the controller, reads and programs on the dies
            add(f"{drive}.controller", (rd / io * d.controller_service_us + wr / io * write_command_us(d, p)))
            add(f"{drive}.dies", rd / io * d.pieces(io) * d.die_read_us / d.dies + wr / io * p.program_time_us / p.program_units)
            add(f"{drive}.read_bw", max(0.0, io - FIRST_READ_BYTES) * rd / io * us_per_byte(p.read_bw_gbs))
            add(f"{drive}.write_bw", wr * us_per_byte(p.write_bw_gbs))
        else:
            add(f"{drive}.read_units", rd / io * p.read_latency_us / p.read_units)
            add(f"{drive}.read_bw", rd * us_per_byte(p.read_channel_gbs))
            add(f"{drive}.write_bw", wr * us_per_byte(p.write_bw_gbs))
            add(f"{drive}.program_units", wr / io * p.program_time_us / p.program_units)
        for bank in (route.drive_links, route.uplinks):
            if bank is not None:
                name = bank.names[instance_of(bank.of, m)]
                add(f"{name}.to_host", rd * bank.us_per_byte)
                add(f"{name}.to_device", wr * bank.us_per_byte)
    return {k: u for k, u in out.items() if u > 0}


def _degrade(c: Compiler, route: AnyRoute) -> None:
    """A degraded array: members' shares of the device I/Os, and the utilization a rebuild adds."""
    v = route.volume
    wl = c.scenario.workload
    mix = workload_mix(wl)
    members, failed, rebuilding = own_volume(c.scenario, route)
    weights = member_weights(v.layout, members, v.chunk_bytes, mix, access_grid(mix, wl.access == "sequential"), failed,
                             rebuilding)
    placed = placed_members(c.scenario, route)
    if placed is not None:  # the placed volume's shares on the members it maps to; the others take none of its I/Os
        weights = _on_members(weights, placed, v.members)
    c.weights = weights
    c.background = rebuild_background(route, rebuild_rate(route))


def _on_members(weights: MemberWeights, placed: tuple[int, ...], members: int) -> MemberWeights:
    """``weights`` of a placed volume (member i is the whole volume's ``placed[i]``) over the whole volume's members."""
    def spread(shares: tuple[float, ...]) -> tuple[float, ...]:
        out = [0.0] * members
        for i, m in enumerate(placed):
            out[m] = shares[i]
        return tuple(out)

    return spread(weights[0]), spread(weights[1]), spread(weights[2])


def compile_route(scenario: Scenario, route: AnyRoute, catalog: Catalog, spread: bool = False) -> Compiler:
    """The analytic network of a route description: its layout's elements as groups, its steps as paths.

    A degraded array (``VolumeSplit.failed``) spreads device I/Os by ``member_weights`` (sequential
    streams as random ones) and carries a rebuild as background utilization (``rebuild_background``).
    A placed workload (``Workload.placement``) is spread the same way over its own volume's members
    (the members it holds that failed lost), the others taking none of its I/Os; while its own volume is
    whole (and no rebuild runs) its jobs or streams stay on its members as ``_member_jobs`` places them on its
    own volume, failures elsewhere reaching it only through the other workloads (``sim.analytic.classes``).
    """
    lay = layout(route)
    placed = placed_members(scenario, route)
    # a placed workload is degraded when its own volume lost a member, or a rebuild loads the drives
    degraded = bool(route.volume.failed) if placed is None else bool(own_volume(scenario, route)[1]) or route.volume.rebuild is not None
    jobs = _member_jobs_of(scenario, route, spread, placed) if lay.uses_volume and not degraded else None
    c = Compiler(scenario, route, jobs, catalog)
    if degraded or (placed is not None and jobs is None):
        _degrade(c, route)
    cpu = Cpu(c, route.host)
    paths = _Paths(c, cpu, lay)
    draw = lay.hit_draw

    def child(op: int, nbytes: float | None = None) -> ChildKind:
        size = None if nbytes is None else int(nbytes)
        if draw is None or op == WRITE:
            path = Path()
            paths.lay(path, lay.steps[(op, False)], op, size)
            return [(1.0, path)]
        out: ChildKind = []
        for hit, prob in ((True, draw.ratio), (False, 1.0 - draw.ratio)):
            if prob > 0:
                path = Path()
                paths.lay(path, lay.steps[(op, hit)], op, size)
                out.append((prob, path))
        return out

    page_bytes = _paged(lay)
    largest = max([n for _, _, sizes in workload_mix(scenario.workload) for n, _ in sizes])
    if page_bytes is None or largest <= page_bytes:  # one route per op serves every size
        c.width = _add_kinds(c, child)
    else:
        c.width = _add_sized_kinds(c, child)
    c.cpu = cpu
    return c


def clear_tables() -> None:
    """Forget the derived parameters, volume-layer plans and name tables (they are rebuilt on use)."""
    clear_route_tables()
    _mixes.clear()
    for table in (kind_plan, volume_plan, _buckets, suffixed, _directions, _round_robin_shares, member_weights,
                  _weighted_buckets, _surviving_shares):
        table.cache_clear()


def compile_scenario(scenario: Scenario, catalog: Catalog | None = None, finish: bool = True, spread: bool = False) -> Compiler:
    """The analytic network of ``scenario``'s route description; with ``finish`` its populations are fixed for the workload too.

    ``spread``: an open sequential stream on a striped layout is spread over all members
    (by default it sits on one stripe unit, see ``_member_jobs``).
    """
    catalog = catalog or load_catalog()
    c = compile_route(scenario, describe(scenario, catalog), catalog, spread)
    if finish:
        wl = scenario.workload
        c.net.finish(float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else INF, c.width)
    return c
