"""The parts a route is made of: banks of stations, pools, links and flash devices, delays, the volume split.

An element is a plain record: what it models, how many instances it has and which instance a
volume member uses (``MemberMap``), its servers or slots, and its service law with parameters.
Both solvers read the same records: the DES (sim/des/model.py) makes SimPy components of them, the
fast path (sim/analytic/paths.py) queueing centres. Meter names are fixed here, so results of the
two solvers line up component by component.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.route.flash import DieLayout, FlashParameters
from sim.route.links import us_per_byte

MemberMap = tuple[int, ...] | None
"""Which instance volume member m uses: ``(MOD, n)`` m % n; ``(DIV, k)`` m // k; ``(IDENTITY,)`` m;
``(MOD_MOD, d, a)`` (m % d) % a; None for one instance shared by all members."""
MOD, DIV, IDENTITY, MOD_MOD = 0, 1, 2, 3


def instance_of(mapping: MemberMap, m: int) -> int:
    """The instance volume member ``m`` uses under ``mapping``."""
    if mapping is None:
        return 0
    kind = mapping[0]
    if kind == MOD:
        return m % mapping[1]
    if kind == DIV:
        return m // mapping[1]
    if kind == MOD_MOD:
        return (m % mapping[1]) % mapping[2]
    return m


LAW_SCV = {"exponential": 1.0, "deterministic": 0.0}
"""Squared coefficient of variation of the service laws without a parameter."""


@dataclass(frozen=True)
class ServiceLaw:
    """A service time: ``mean_us`` times a unit random variable of law ``law`` (lognormal with
    coefficient of variation ``cv``, exponential, or deterministic)."""

    mean_us: float
    law: str
    cv: float

    @property
    def scv(self) -> float:
        """Squared coefficient of variation of the service time."""
        return self.cv * self.cv if self.law == "lognormal" else LAW_SCV[self.law]


@dataclass(frozen=True)
class StationBank:
    """``names`` stations of ``servers`` servers each, FCFS, service ``law`` (one per member map instance)."""

    names: tuple[str, ...]
    servers: int
    law: ServiceLaw
    of: MemberMap = None


@dataclass(frozen=True)
class PoolBank:
    """``names`` concurrency limits of ``slots`` slots each: an I/O holds a slot from acquire to release."""

    names: tuple[str, ...]
    slots: int
    of: MemberMap = None


@dataclass(frozen=True)
class LinkBank:
    """``names`` full-duplex links of ``gbs`` GB/s per direction: stations ``NAME.to_host`` and
    ``NAME.to_device``, one transfer at a time each, ``bytes / gbs``."""

    names: tuple[str, ...]
    gbs: float
    of: MemberMap = None

    @property
    def us_per_byte(self) -> float:
        return us_per_byte(self.gbs)

    def meter_names(self) -> tuple[str, ...]:
        return tuple([name + way for name in self.names for way in (".to_host", ".to_device")])


@dataclass(frozen=True)
class PortBank:
    """``names`` full-duplex SAN ports: towards the device ``handling_us`` per I/O plus the write
    payload at ``us_per_byte``, towards the host the read payload. I/Os take ``paths`` paths in
    turn; path r uses port r % len(names)."""

    names: tuple[str, ...]
    us_per_byte: float
    handling_us: float
    paths: int
    alive: tuple[int, ...] | None = None
    """The ports still up (a scenario's ``faults``): path r takes port ``alive[r % len(alive)]``; None: all."""

    def port_of(self, path: int) -> int:
        """The port path ``path`` takes."""
        alive = self.alive
        return path % len(self.names) if alive is None else alive[path % len(alive)]

    def meter_names(self) -> tuple[str, ...]:
        return tuple([name + way for name in self.names for way in (".to_host", ".to_device")])


@dataclass(frozen=True)
class DeviceBank:
    """``names`` flash drives or DIMMs (prefixes of their meters), each the mechanism ``params``
    describes (``FlashParameters``: read / program units or shared NAND dies, read channel,
    write cache, destage), or with ``dies`` (a scenario's ``device_model: dies``) addressed NAND
    dies behind a controller (``DieLayout``; the write cache, write channel and program units of
    ``params`` stay)."""

    names: tuple[str, ...]
    params: FlashParameters
    of: MemberMap = None
    dies: DieLayout | None = None

    def meter_names(self) -> tuple[str, ...]:
        """The meters of every device: shared NAND dies, or read units, a write channel and program units;
        a read channel and a write cache on every device. With ``dies``: the controller, the dies, the
        read channel, the write cache and the write channel."""
        if self.dies is not None:
            parts: tuple[str, ...] = (".controller", ".dies", ".read_bw", ".write_cache", ".write_bw")
        elif self.params.shared_dies:
            parts = (".nand_dies", ".read_bw", ".write_cache")
        else:
            parts = (".read_units", ".read_bw", ".write_cache", ".write_bw", ".program_units")
        return tuple([name + part for name in self.names for part in parts])


@dataclass(frozen=True)
class VolumeSplit:
    """The volume layer (sim/route/volume.py): ``layout`` over ``members`` members of ``member_bytes``
    each, ``chunk_bytes`` per stripe unit; ``closed_affinity`` keeps a closed JBOD job on its member."""

    layout: str
    members: int
    chunk_bytes: int
    member_bytes: int
    closed_affinity: bool
    failed: frozenset[int] = frozenset()
    """Members lost with a failed drive or adapter (a scenario's ``faults``): the split is degraded."""
    rebuild: RebuildStream | None = None
    """A rebuild onto the failed members' replacements, competing with host I/O."""


@dataclass(frozen=True)
class RebuildStream:
    """Background rebuild I/O (models/faults.py ``Rebuild``): each unit reads ``io_bytes`` from the sources
    of one rebuilt member (``models.faults.rebuild_sources``), then writes them to the member's replacement,
    never faster than ``cap_bytes_per_s`` bytes written in all.

    ``throttle`` is how the stream yields to host I/O: "none" (``depth`` units in flight, an explicit rate),
    or md's throttle, as md_do_sync runs it: every ``window_units`` units issued md looks at its speed and
    at the array; above ``floor_bytes_per_s`` with host I/O seen since the last look it waits for every unit
    in flight to finish before issuing more ("legacy"), or does so only once ``sync_io_depth`` units are in
    flight ("sync_io_depth"). Otherwise at most ``depth`` units run at once (the personality's resync depth)."""

    rebuilt: tuple[int, ...]
    replacement_drives: int
    cap_bytes_per_s: float
    floor_bytes_per_s: float
    depth: int
    io_bytes: int
    drive_bytes: int
    """Bytes each replacement drive receives (its members' capacity): rebuild time = drive_bytes / per-drive rate."""
    throttle: str = "none"
    sync_io_depth: int = 0
    window_units: int = 1
    idle_bytes_per_s: float = 0.0
    """The rate on an idle array (``idle_rebuild_bytes_per_s``): both solvers report it beside the rate under load."""
    volumes: tuple[tuple[tuple[int, ...], ...], ...] = ()
    """For each of ``rebuilt``, the workloads' volumes that hold it, each as the members it is made of (its member i is
    member ``volume[i]``): the member is rebuilt within them (``models.faults.rebuild_volumes``); empty: in the
    whole volume."""

    def busy_depth(self) -> int:
        """The most units in flight while md throttles a busy array: the units md issues before it looks again
        (one window, "legacy"), or ``sync_io_depth`` rounded up to whole windows ("sync_io_depth": md only looks
        once per window); ``depth`` without md's throttle."""
        if self.throttle == "legacy":
            return self.window_units
        if self.throttle == "sync_io_depth":
            w = self.window_units
            return -(-self.sync_io_depth // w) * w
        return self.depth


@dataclass(frozen=True)
class Channel:
    """One single-server bandwidth stage ``name``: a transfer of n bytes takes n / ``gbs`` (one way only)."""

    name: str
    gbs: float

    @property
    def us_per_byte(self) -> float:
        return us_per_byte(self.gbs)


def idle_rebuild_bytes_per_s(cap_bytes_per_s: float, depth: int, io_bytes: int, params: FlashParameters, drives: int = 1,
                             link_us_per_byte: float = 0.0) -> float:
    """A rebuild's rate with no host I/O (md: the array idle, no throttle): ``depth`` units in flight, each a
    zero-load read of ``io_bytes`` (the QD1 read latency and the transfer over the read channel), its trip up and
    down the links (``link_us_per_byte``: the drive link and the adapter uplink, each way) and a cached write (its
    acknowledgement); never above the cap, nor above what ``drives`` replacements can be written or a source drive
    read at their datasheet bandwidths: min(cap, depth x io / unit time, drives x min(read, write bandwidth))."""
    unit_us = (params.read_latency_us + io_bytes * (us_per_byte(params.read_channel_gbs) + 2.0 * link_us_per_byte)
               + params.write_ack_us)
    bandwidth = drives * min(params.read_bw_gbs, params.write_bw_gbs) * 1e9
    return min(cap_bytes_per_s, depth * io_bytes / unit_us * 1e6, bandwidth)
