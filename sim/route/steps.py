"""The hop order of every device I/O, written once per attachment and read by both solvers.

``layout(route)`` turns a route description (sim/route/describe.py) into a ``RouteLayout``: the
route's elements in the order each solver creates them, and per device op (and variant: a SAN
read that hits the cache) the list of ``Step`` records a device I/O takes, in order: host CPU
submit, acquire a pool, cross a link towards the device, the device's read or write path, ...,
release, host CPU completion. The DES (sim/des/model.py ``build``) turns steps into hops, the fast path
(sim/analytic/paths.py ``compile_scenario``) into its Path visits; neither lays out a route of its own.

Creation order is part of the layout because it is part of the results: the DES hands out random
streams in the order components are created (sim/des/rng.py ``Streams``), per drive; the fast path's
bottleneck tie-break follows its group order, per component (z/VM subchannels last). Both orders are
kept as they were so results stay identical (bench/check_identical.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.route.describe import AnyRoute, DirectRoute, ExflashRoute, GenericRoute, SanRoute, ZvmRoute
from sim.route.elements import (
    Channel,
    DeviceBank,
    LinkBank,
    PoolBank,
    PortBank,
    ServiceLaw,
    StationBank,
)
from sim.route.host import ResolvedHost

READ, WRITE = 0, 1
TO_HOST, TO_DEVICE = 0, 1
WHOLE, MEDIA, CHANNEL = 0, 1, 2
"""The parts of a device read (``Device.part``): all of it; its media stage alone (the wait for its die and a
read unit); its read channel alone (the bytes leaving the device)."""


@dataclass(frozen=True)
class Delay:
    """A pure delay (no queue): ``law`` (deterministic: a constant, no random stream)."""

    name: str
    law: ServiceLaw


@dataclass(frozen=True)
class SubchannelBank:
    """z/VM subchannels ``name``: one per base EDEV (member m uses base m), plus ``aliases`` HyperPAV
    aliases any base may borrow (sim/des/components.py ``SubchannelPool``)."""

    name: str
    bases: int
    aliases: int


@dataclass(frozen=True)
class ReadHitDraw:
    """A uniform draw per device read that decides a cache hit (probability ``ratio``): the DES's
    random stream for it, created where this element stands in the creation order."""

    ratio: float


Element = StationBank | PoolBank | LinkBank | PortBank | DeviceBank | Channel | Delay | SubchannelBank | ReadHitDraw


@dataclass(frozen=True)
class PerInstance:
    """Banks created instance by instance (instance i of each bank, then i + 1 ...); None entries skipped."""

    banks: tuple[LinkBank | PoolBank | DeviceBank | None, ...]


# -- steps ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Submit:
    """The host CPU's submit charge (and the stack's serial section)."""


@dataclass(frozen=True)
class Complete:
    """The host CPU's completion charge (and its off-path work beside the I/O)."""


@dataclass(frozen=True)
class Acquire:
    """Take a slot of ``bank`` (instance by member map, or ``SubchannelBank``: the base or an alias).
    ``least_of``: the member is one of that many copies and the volume layer sends reads to the less loaded."""

    bank: PoolBank | SubchannelBank
    least_of: int = 1


@dataclass(frozen=True)
class Release:
    """Give back the slot of ``bank`` taken last."""

    bank: PoolBank | SubchannelBank


@dataclass(frozen=True)
class ReleaseBehind:
    """Give back ``bank``'s slot after ``steps`` run in the background (a write-back destage)."""

    bank: PoolBank
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Cross:
    """Cross a link or SAN port ``bank`` in direction ``toward`` (TO_HOST / TO_DEVICE)."""

    bank: LinkBank | PortBank
    toward: int


@dataclass(frozen=True)
class Device:
    """The flash device's read path (``op`` READ) or write path (cache slot, ack, background destage).

    ``part`` (a read of a pooled flash device only): WHOLE the read path; MEDIA its media stage alone (die wait,
    read unit); CHANNEL its read channel alone (the bytes through the single-server read channel)."""

    bank: DeviceBank
    op: int
    part: int = WHOLE


@dataclass(frozen=True)
class Serve:
    """Service at a station bank (its law)."""

    bank: StationBank


@dataclass(frozen=True)
class Transfer:
    """Move the I/O's bytes through a single-server bandwidth channel."""

    channel: Channel


@dataclass(frozen=True)
class Wait:
    """A pure delay."""

    delay: Delay


@dataclass(frozen=True)
class Pages:
    """Run ``steps`` once per ``page_bytes`` page of the I/O, one after another (a z/VM channel program)."""

    page_bytes: int
    steps: tuple[Step, ...]


Step = Submit | Complete | Acquire | Release | ReleaseBehind | Cross | Device | Serve | Transfer | Wait | Pages


@dataclass(frozen=True)
class RouteLayout:
    """A route's elements in each solver's creation order and its device I/Os' steps.

    ``steps[(op, hit)]``: the steps of a device I/O of ``op``; ``hit`` is True for a read that hits
    a cache (only where ``hit_draw`` is set), else False. ``paths``: device I/Os take that many
    paths in turn (SAN ports). ``load``: the pool whose occupancy is a member's load (mirror reads
    take the less-loaded copy). ``uses_volume``: False where the route has no volume layer.
    """

    host: ResolvedHost
    des_order: tuple[Element | PerInstance, ...]
    network_order: tuple[Element, ...]
    steps: dict[tuple[int, bool], tuple[Step, ...]]
    hit_draw: ReadHitDraw | None
    paths: int
    load: PoolBank | None
    uses_volume: bool


def submits(host: ResolvedHost) -> bool:
    """Whether a device I/O's submit charges the host CPU (a charge or a serial section)."""
    charges = host.charges()
    return charges is not None and charges.submits


def completes(host: ResolvedHost) -> bool:
    """Whether a device I/O's completion charges the host CPU (on its path or beside it)."""
    charges = host.charges()
    return charges is not None and charges.completes


def layout(route: AnyRoute) -> RouteLayout:
    """The hop order of ``route``'s device I/Os (the one place each attachment's order is written)."""
    if isinstance(route, GenericRoute):
        return _generic(route)
    if isinstance(route, DirectRoute):
        return _direct(route)
    if isinstance(route, SanRoute):
        return _san(route)
    if isinstance(route, ExflashRoute):
        return _exflash(route)
    return _zvm(route)


def _generic(route: GenericRoute) -> RouteLayout:
    """Submit, the stations in order, completion."""
    chain: tuple[Step, ...] = (Submit(), *[Serve(st) for st in route.stations], Complete())
    return RouteLayout(route.host, route.stations, route.stations, {(READ, False): chain, (WRITE, False): chain},
                       None, 1, None, False)


def _direct(route: DirectRoute) -> RouteLayout:
    """Submit, namespace slot, NVMe queue entry; a read: device, drive link and uplink towards the host;
    a write: uplink and drive link towards the device, device; release both, completion."""
    links, up, dev = route.drive_links, route.uplinks, route.devices
    ns, queues = route.namespaces, route.nvme_queues
    read: list[Step] = [Device(dev, READ)]
    write: list[Step] = [Cross(up, TO_DEVICE)]
    if links is not None:
        read.append(Cross(links, TO_HOST))
        write.append(Cross(links, TO_DEVICE))
    read.append(Cross(up, TO_HOST))
    write.append(Device(dev, WRITE))

    def chain(middle: list[Step]) -> tuple[Step, ...]:
        return (Submit(), Acquire(ns, 2 if route.mirror_pairs else 1), Acquire(queues), *middle,
                Release(queues), Release(ns), Complete())

    network: list[Element] = [up]
    if links is not None:
        network.append(links)
    network.extend((queues, dev, ns))
    return RouteLayout(route.host, (up, PerInstance((links, queues, dev)), ns), tuple(network),
                       {(READ, False): chain(read), (WRITE, False): chain(write)}, None, 1, ns, True)


def _san(route: SanRoute) -> RouteLayout:
    """LUN / association slot, submit, host port and front-end port across the fabric, controller;
    a read hit: the cache; a miss: back end and its bandwidth; a write: write-back cache (destaged
    behind) or write-through destage; both ports back, release, completion."""
    hp, fp, limits = route.host_ports, route.front_end_ports, route.limits
    fabric = Delay("fabric", ServiceLaw(route.fabric_latency_us, "deterministic", 0.0))
    hit = Delay("cache_hit", route.cache_hit)
    draw = ReadHitDraw(route.read_hit_ratio)

    def chain(inside: tuple[Step, ...]) -> tuple[Step, ...]:
        return (Acquire(limits), Submit(), Cross(hp, TO_DEVICE), Wait(fabric), Cross(fp, TO_DEVICE),
                Serve(route.controller), *inside, Cross(fp, TO_HOST), Wait(fabric), Cross(hp, TO_HOST),
                Release(limits), Complete())

    if route.write_back:
        write: tuple[Step, ...] = (Acquire(route.write_cache), Wait(hit),
                                   ReleaseBehind(route.write_cache, (Transfer(route.destage),)))
    else:
        write = (Transfer(route.destage),)
    steps = {(READ, True): chain((Wait(hit),)), (READ, False): chain((Serve(route.backend), Transfer(route.backend_bw))),
             (WRITE, False): chain(write)}
    des: tuple[Element | PerInstance, ...] = (hp, fp, limits, fabric, route.controller, hit, route.backend,
                                              route.backend_bw, route.destage, route.write_cache, draw)
    network: tuple[Element, ...] = (hp, fp, limits, route.controller, route.backend, route.backend_bw, route.destage,
                                    route.write_cache)
    return RouteLayout(route.host, des, network, steps, draw, route.host_ports.paths, limits, True)


def _exflash(route: ExflashRoute) -> RouteLayout:
    """The driver thread runs the submit; a read: device then the memory channel towards the host;
    a write: the channel towards the device, then the device; the driver thread runs the completion."""
    threads, channels, dev = route.threads, route.channels, route.devices
    before = (Acquire(threads), Submit(), Release(threads)) if submits(route.host) else ()
    after = (Acquire(threads), Complete(), Release(threads)) if completes(route.host) else ()
    read: tuple[Step, ...] = (Device(dev, READ),) + ((Cross(channels, TO_HOST),) if channels else ())
    write: tuple[Step, ...] = ((Cross(channels, TO_DEVICE),) if channels else ()) + (Device(dev, WRITE),)
    network: tuple[Element, ...] = (threads, *([channels] if channels else []), dev)
    return RouteLayout(route.host, (threads, PerInstance((channels, dev))), network,
                       {(READ, False): (*before, *read, *after), (WRITE, False): (*before, *write, *after)},
                       None, 1, None, True)


def _zvm(route: ZvmRoute) -> RouteLayout:
    """Submit, the base's subchannel or an alias, the channel program, CP's turnaround with the subchannel
    held, release, completion.

    The channel program runs one device command per page, one after another. A read command's media stage
    (die wait, read unit) is per page; the SSCH's pages then leave the device back to back, as one transfer
    of the SSCH's block of contiguous page slots through the read channel and the drive link (seed 003
    Table 3: CP block paging moves 7 contiguous pages per read SSCH; the bytes and so the channel and link
    busy time are the same). A write's pages cross the link and enter the write cache page by page. Under the
    ``dies`` device model a read page stays whole (its channel charges only the bytes beyond the first 4 KiB)."""
    sub = SubchannelBank(route.subchannels, route.bases, route.aliases)
    links, dev = route.links, route.devices
    steps: dict[tuple[int, bool], tuple[Step, ...]] = {}
    holds: list[Delay] = []
    if dev.dies is None:
        read_page: tuple[Step, ...] = (Device(dev, READ, MEDIA),)
        read_block: tuple[Step, ...] = (Device(dev, READ, CHANNEL), Cross(links, TO_HOST))
    else:
        read_page, read_block = (Device(dev, READ), Cross(links, TO_HOST)), ()
    for op, page, block in ((READ, read_page, read_block), (WRITE, (Cross(links, TO_DEVICE), Device(dev, WRITE)), ())):
        turnaround = route.turnaround_us[op]
        hold: tuple[Step, ...] = ()
        if turnaround > 0:
            holds.append(Delay("turnaround", ServiceLaw(turnaround, "deterministic", 0.0)))
            hold = (Wait(holds[-1]),)
        steps[(op, False)] = (Submit(), Acquire(sub), Pages(route.command_bytes, page), *block, *hold, Release(sub),
                              Complete())
    return RouteLayout(route.host, (sub, PerInstance((links, dev)), *holds), (links, dev, sub), steps, None, 1, None, True)
