"""What a failed member costs: degraded-mode I/O amplification, degraded read capacity, rebuild time.

Small, pure functions (no SimPy, no I/O) that give the textbook cost of a layout with members
failed, for the future ``faults`` section of a scenario (issue 22) and for the tests that check it.
They use the same placement as ``sim.route.volume.Volume`` (the tests check that the healthy case agrees
with it stripe by stripe):

* raid1: every member holds every chunk; raid10 / ibmi_mirror: md "near 2", chunk c on pair
  c mod (M/2), members (2p, 2p+1);
* raid5 / raid6: left-symmetric rotating parity, stripe s has its parity (P, then Q) from member
  (M-1) - s mod M and its data on the members that follow.

The standard results they encode:

* A mirror that lost a copy serves every read of that pair from the survivor and writes only the
  survivor (Patterson, Gibson, Katz, "A Case for Redundant Arrays of Inexpensive Disks (RAID)",
  SIGMOD 1988, section 7 "level 1"; Linux md(4): "the array will continue to function" with N-1
  of N RAID-1 devices failed).
* RAID-5 reconstructs a lost member's chunk by XOR of the other N-1 members of its stripe
  (Patterson et al. 1988, level 4/5; md(4) RAID4: "The data that was on that device can be
  calculated as needed from the parity block and the other data blocks"), so a small read of a lost
  chunk costs N-1 member reads; RAID-6 with one lost member uses P and the surviving data: N-2.
* A small write whose data chunk is lost is a reconstruct-write (read the other surviving data of
  the stripe, write the parities); a write whose parity is lost just writes the data; otherwise the
  usual read-modify-write (2 reads + 2 writes for RAID-5, 3 + 3 for RAID-6).
* Rebuild time = capacity to rebuild / achieved rate. md throttles a resync or recovery between
  ``speed_limit_min`` (kept even under host load) and ``speed_limit_max`` (used when idle), in KiB/s
  per device; defaults 1,000 and 200,000 (md(4), mdadm repository; drivers/md/md.c).

Costs are expectations over uniformly spread single-chunk I/Os (random small I/O, the case that
sizes flash arrays); full-stripe writes and multi-chunk reads are not covered here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, model_validator

from models.common import StrictModel, field_problem

MIRROR_LAYOUTS = ("raid1", "raid10", "ibmi_mirror")
PARITY_LAYOUTS = ("raid5", "raid6")
REDUNDANT_LAYOUTS = MIRROR_LAYOUTS + PARITY_LAYOUTS

MD_SPEED_LIMIT_MIN_KIB_S = 1_000
"""md's default /proc/sys/dev/raid/speed_limit_min: KiB/s per device kept under host load (md(4))."""

MD_SPEED_LIMIT_MAX_KIB_S = 200_000
"""md's default /proc/sys/dev/raid/speed_limit_max: KiB/s per device when the array is idle (md(4))."""

KIB = 1024


class DataLoss(ValueError):
    """The failed members take every copy of some data: the layout cannot serve it at all."""


@dataclass(frozen=True)
class IoCost:
    """Expected member I/Os per logical single-chunk I/O."""

    reads_per_read: float
    reads_per_write: float
    writes_per_write: float


def _check(layout: str, members: int, failed: frozenset[int]) -> None:
    if layout not in REDUNDANT_LAYOUTS:
        raise ValueError(f"layout: one of {', '.join(REDUNDANT_LAYOUTS)} (a jbod or raid0 member failure loses data), got {layout!r}")
    minimum = {"raid1": 2, "raid10": 2, "ibmi_mirror": 2, "raid5": 3, "raid6": 4}[layout]
    if members < minimum:
        raise ValueError(f"members: at least {minimum} for {layout}, got {members}")
    if layout in ("raid10", "ibmi_mirror") and members % 2:
        raise ValueError(f"members: an even number for {layout}, got {members}")
    bad = sorted(i for i in failed if not 0 <= i < members)
    if bad:
        raise ValueError(f"failed: member indexes in 0..{members - 1}, got {bad}")
    if layout == "raid1" and len(failed) == members:
        raise DataLoss("raid1: every copy failed")
    if layout in ("raid10", "ibmi_mirror"):
        for p in range(members // 2):
            if {2 * p, 2 * p + 1} <= failed:
                raise DataLoss(f"{layout}: both copies of pair {p} (members {2 * p}, {2 * p + 1}) failed")
    tolerated = {"raid5": 1, "raid6": 2}.get(layout)
    if tolerated is not None and len(failed) > tolerated:
        raise DataLoss(f"{layout}: {len(failed)} members failed, it survives {tolerated}")


def stripe_placement(layout: str, members: int, stripe: int) -> tuple[list[int], list[int]]:
    """(parity members P[, Q], data members in data order) of one stripe, left-symmetric as sim.route.volume."""
    k = 1 if layout == "raid5" else 2
    parity = (members - 1) - stripe % members
    parities = [(parity + j) % members for j in range(k)]
    data = [(parity + k + i) % members for i in range(members - k)]
    return parities, data


def member_read_load(layout: str, members: int, failed: frozenset[int] = frozenset()) -> tuple[float, ...]:
    """Expected reads each member serves per logical single-chunk read, uniform over addresses.

    A mirror splits a pair's reads evenly over its surviving copies (md sends a read to the
    less-loaded copy, which under load balances them). A parity layout reads a chunk from its
    member, or, if that member failed, from every surviving member of the stripe that the
    reconstruction needs (RAID-5: all N-1; RAID-6: the surviving data plus P, or Q when P is lost
    too).
    """
    _check(layout, members, failed)
    load = [0.0] * members
    if layout == "raid1":
        alive = [i for i in range(members) if i not in failed]
        for i in alive:
            load[i] = 1.0 / len(alive)
        return tuple(load)
    if layout in ("raid10", "ibmi_mirror"):
        pairs = members // 2
        for p in range(pairs):
            alive = [i for i in (2 * p, 2 * p + 1) if i not in failed]
            for i in alive:
                load[i] += 1.0 / pairs / len(alive)
        return tuple(load)
    # parity: one full rotation (members stripes) covers every placement equally often
    chunks = members * (members - (1 if layout == "raid5" else 2))
    for s in range(members):
        parities, data = stripe_placement(layout, members, s)
        for target in data:
            for m in _read_sources(target, parities, data, failed):
                load[m] += 1.0 / chunks
    return tuple(load)


def _read_sources(target: int, parities: list[int], data: list[int], failed: frozenset[int]) -> list[int]:
    """Members read to serve a read of the chunk on ``target`` in one stripe."""
    if target not in failed:
        return [target]
    lost_data = [d for d in data if d in failed]
    alive_parities = [p for p in parities if p not in failed]
    # each lost data chunk needs one surviving parity; take P before Q (the XOR path; an assumption, not read from md)
    used = alive_parities[: len(lost_data)]
    return [d for d in data if d not in failed] + used


def degraded_io_cost(layout: str, members: int, failed: frozenset[int] = frozenset()) -> IoCost:
    """Expected member reads per logical read and member reads and writes per logical small write.

    Reads: see ``member_read_load`` (its sum). Writes (one chunk, not a full stripe):

    * mirrors write every surviving copy of the chunk's pair (raid1: every surviving member);
    * parity layouts, per stripe: a lost data chunk is a reconstruct-write (read the other
      surviving data, write the surviving parities); a live data chunk is read-modify-write with the
      surviving parities (read old data and parities, write both); with no parity left the data is
      just written. With two RAID-6 members lost and one of them data, the write needs the lost
      chunk's data too, which is rebuilt from the parities first (counted as reads of both).
    """
    _check(layout, members, failed)
    reads = sum(member_read_load(layout, members, failed))
    if layout == "raid1":
        return IoCost(reads, 0.0, float(members - len(failed)))
    if layout in ("raid10", "ibmi_mirror"):
        pairs = members // 2
        writes = sum(len([i for i in (2 * p, 2 * p + 1) if i not in failed]) for p in range(pairs)) / pairs
        return IoCost(reads, 0.0, writes)
    k = 1 if layout == "raid5" else 2
    chunks = members * (members - k)
    w_reads = w_writes = 0.0
    for s in range(members):
        parities, data = stripe_placement(layout, members, s)
        alive_p = [p for p in parities if p not in failed]
        lost_d = [d for d in data if d in failed]
        for target in data:
            if target in failed:
                others_alive = [d for d in data if d not in failed]
                extra = len(alive_p) if len(lost_d) > 1 else 0  # the other lost chunk is rebuilt from parities
                r, w = len(others_alive) + extra, len(alive_p)
            elif not alive_p:
                r, w = 0, 1
            else:
                r, w = 1 + len(alive_p), 1 + len(alive_p)
            w_reads += r / chunks
            w_writes += w / chunks
    return IoCost(reads, w_reads, w_writes)


def reconstruct_read_cost(layout: str, members: int, failed: frozenset[int]) -> int:
    """Member reads to serve one small read of a chunk on a failed member (the worst-case read).

    Mirrors: 1 (the surviving copy). RAID-5: N-1. RAID-6: N-2 with one or two members lost.
    """
    _check(layout, members, failed)
    if not failed:
        return 1
    if layout in MIRROR_LAYOUTS:
        return 1
    # every surviving data chunk of the stripe plus one surviving parity per lost data chunk:
    # RAID-5 (N-2) + 1; RAID-6 (N-2-lost) + lost, whichever one or two members are lost
    return members - 1 if layout == "raid5" else members - 2


def rebuild_traffic(layout: str, members: int, rebuilt: int) -> tuple[tuple[float, float], ...]:
    """(read, write) bytes each member moves per byte rebuilt onto member ``rebuilt`` (its replacement).

    The traffic a recovery adds to the host's: a mirror copies from the surviving copy of the pair
    (raid1: from one survivor); RAID-5 reads the same offset on every other member and XORs them;
    RAID-6 needs N-2 of the N-1 survivors per stripe (a lost data chunk: the other data plus P; a
    lost P or Q: the data alone), N-2 bytes read per byte rebuilt, the minimum a one-member
    recovery must read (not quite even over the survivors: the placement rotates P and Q together).
    md's recovery speed (``sync_speed``, ``speed_limit_*``) counts bytes of the rebuilt member, so at
    a recovery rate r each source member here reads (its share) x r.
    """
    _check(layout, members, frozenset({rebuilt}))
    traffic = [(0.0, 0.0)] * members
    traffic[rebuilt] = (0.0, 1.0)
    if layout == "raid1":
        source = next(i for i in range(members) if i != rebuilt)
        traffic[source] = (1.0, 0.0)
    elif layout in ("raid10", "ibmi_mirror"):
        traffic[rebuilt ^ 1] = (1.0, 0.0)
    elif layout == "raid5":
        for i in range(members):
            if i != rebuilt:
                traffic[i] = (1.0, 0.0)
    else:
        reads = [0.0] * members
        for s in range(members):
            parities, data = stripe_placement(layout, members, s)
            if rebuilt in data:
                sources = [d for d in data if d != rebuilt] + [parities[0]]
            else:  # a lost parity is recomputed from the data alone
                sources = list(data)
            for m in sources:
                reads[m] += 1.0 / members
        for i in range(members):
            if i != rebuilt:
                traffic[i] = (reads[i], 0.0)
    return tuple(traffic)


def rebuild_sources(layout: str, members: int, failed: frozenset[int], rebuilt: int, stripe: int) -> list[int]:
    """Members read to rebuild member ``rebuilt``'s chunk of ``stripe`` (the replacement is then written).

    Mirrors read the surviving copy (raid1: the first surviving member); RAID-5 every other member;
    RAID-6 the first N-2 surviving chunks of the stripe, data before parities (the minimum a
    recovery must read: ``rebuild_traffic``). Members in ``failed`` are never read.
    """
    if layout == "raid1":
        return [next(i for i in range(members) if i not in failed)]
    if layout in ("raid10", "ibmi_mirror"):
        if rebuilt ^ 1 in failed:
            raise DataLoss(f"{layout}: both copies of pair {rebuilt // 2} (members {rebuilt & ~1}, {rebuilt | 1}) failed")
        return [rebuilt ^ 1]
    parities, data = stripe_placement(layout, members, stripe)
    alive = [m for m in data + parities if m != rebuilt and m not in failed]
    return alive if layout == "raid5" else alive[: members - 2]


RebuildVolumes = tuple[tuple[tuple[int, ...], ...], ...]
"""For each rebuilt member, the volumes that hold it, each as the whole volume's members it is made of (its member
i is the whole volume's member ``volume[i]``); empty: every member is rebuilt in the whole volume."""


def rebuild_volumes(members: int, failed: frozenset[int],
                    placements: Sequence[tuple[str, Sequence[int] | None]] | None) -> tuple[tuple[int, ...], RebuildVolumes]:
    """(the failed members a rebuild writes, the volumes each of them is rebuilt in).

    Without placements every failed member is rebuilt in the whole volume. With them each workload's volume is
    its placement (member i is the whole volume's ``placement[i]``), or the whole volume for a workload without
    one; a failed member is rebuilt in each volume that holds it (equal shares of its bytes), and a failed member
    that no volume holds holds no data: nothing is rebuilt onto it."""
    if placements is None:
        return tuple(sorted(failed)), ()
    volumes: list[tuple[int, ...]] = []
    for _, placed in placements:
        own = tuple(range(members)) if placed is None else tuple(placed)
        if own not in volumes:
            volumes.append(own)
    held = [(m, tuple(v for v in volumes if m in v)) for m in sorted(failed)]
    held = [(m, vs) for m, vs in held if vs]
    return tuple(m for m, _ in held), tuple(vs for _, vs in held)


def volume_rebuild_sources(layout: str, failed: frozenset[int], rebuilt: int, stripe: int, volume: Sequence[int]) -> list[int]:
    """``rebuild_sources`` of the whole volume's member ``rebuilt`` within ``volume`` (its member i is the whole
    volume's member ``volume[i]``; ``failed`` and the result are whole-volume members): the volume's own layout
    over its own members, with the members of ``failed`` it holds lost."""
    own_failed = frozenset(i for i, m in enumerate(volume) if m in failed)
    n = len(volume)
    return [volume[i] for i in rebuild_sources(layout, n, own_failed, volume.index(rebuilt), stripe % n)]


def rebuild_member_bytes(layout: str, members: int, failed: frozenset[int], rebuilt: tuple[int, ...],
                         written_per_s: float, volumes: RebuildVolumes = ()) -> tuple[tuple[float, float], ...]:
    """(read, write) bytes per second each member moves while the members ``rebuilt`` are rebuilt in turn
    at ``written_per_s`` bytes written in all (``rebuild_sources`` averaged over a rotation of stripes; with
    ``volumes``, each member's share split evenly over the volumes that hold it, ``volume_rebuild_sources``)."""
    share = written_per_s / len(rebuilt)
    reads = [0.0] * members
    writes = [0.0] * members
    for k, r in enumerate(rebuilt):
        writes[r] += share
        if not volumes:
            for stripe in range(members):
                for m in rebuild_sources(layout, members, failed, r, stripe):
                    reads[m] += share / members
            continue
        for volume in volumes[k]:
            part = share / len(volumes[k]) / len(volume)
            for stripe in range(len(volume)):
                for m in volume_rebuild_sources(layout, failed, r, stripe, volume):
                    reads[m] += part
    return tuple(zip(reads, writes, strict=True))


def saturated_read_iops(layout: str, members: int, member_read_iops: float, failed: frozenset[int] = frozenset()) -> float:
    """Random small-read IOPS the array sustains when its busiest member saturates.

    With reads spread uniformly over the array, the member with the largest share of reads
    (``member_read_load``) reaches its limit first, so capacity = member IOPS / largest share.
    """
    if member_read_iops <= 0:
        raise ValueError(f"member_read_iops: > 0, got {member_read_iops}")
    return member_read_iops / max(member_read_load(layout, members, failed))


def rebuild_time_s(capacity_bytes: float, rate_bytes_per_s: float) -> float:
    """Time to rebuild ``capacity_bytes`` at a steady ``rate_bytes_per_s`` (idle array: the whole rate goes to it)."""
    if capacity_bytes < 0:
        raise ValueError(f"capacity_bytes: >= 0, got {capacity_bytes}")
    if rate_bytes_per_s <= 0:
        raise ValueError(f"rate_bytes_per_s: > 0, got {rate_bytes_per_s}")
    return capacity_bytes / rate_bytes_per_s


def md_rebuild_time_range_s(member_bytes: float, device_rate_bytes_per_s: float,
                            speed_limit_min_kib_s: int = MD_SPEED_LIMIT_MIN_KIB_S,
                            speed_limit_max_kib_s: int = MD_SPEED_LIMIT_MAX_KIB_S) -> tuple[float, float]:
    """(fastest, slowest) md recovery time of one member of ``member_bytes``.

    Fastest: an idle array recovers at min(device rate, speed_limit_max). Slowest: under host load
    md throttles recovery but keeps at least speed_limit_min (if the device can do that much).
    Limits are md's per-device KiB/s (md(4): "a per-device rate, not a per-array rate").
    """
    if not 0 < speed_limit_min_kib_s <= speed_limit_max_kib_s:
        raise ValueError(f"speed_limit_min_kib_s: in 1..speed_limit_max_kib_s ({speed_limit_max_kib_s}), got {speed_limit_min_kib_s}")
    if device_rate_bytes_per_s <= 0:
        raise ValueError(f"device_rate_bytes_per_s: > 0, got {device_rate_bytes_per_s}")
    fastest = min(device_rate_bytes_per_s, speed_limit_max_kib_s * KIB)
    slowest = min(device_rate_bytes_per_s, speed_limit_min_kib_s * KIB)
    return rebuild_time_s(member_bytes, fastest), rebuild_time_s(member_bytes, slowest)


# -- the scenario's ``faults`` section ---------------------------------------------------------------

MD_SYNC_IO_DEPTH = 32
"""md's ``sync_io_depth`` default (``static int sysctl_sync_io_depth = 32``): sync I/Os in flight while the array
serves host I/O, with the 2025 patch (Yu Kuai, "md: add a new api sync_io_depth", linux-raid, v2 2025-04-27; see
calibration/faults/MD_DEFAULTS.md)."""
MD_RESYNC_DEPTH = 32
"""raid1.c / raid10.c ``RESYNC_DEPTH`` (32): resync requests the mirror personality lets in flight at once; the
model's bound on rebuild I/Os in flight whenever md itself does not throttle (an idle array, or below
``speed_limit_min``). RAID-4/5/6 are bounded by the stripe cache instead (not modelled: the same 32 is used)."""
MD_RESYNC_BLOCK_KIB = 64
"""raid1.c / raid10.c ``RESYNC_BLOCK_SIZE`` (64 KiB): one mirror resync I/O."""
MD_STRIPE_KIB = 4
"""raid5.h ``STRIPE_SIZE`` (one 4 KiB page): one RAID-4/5/6 sync I/O (the patch's ``sync_io_within_limit``: "For
raid456, sync IO is stripe(4k) per IO, for other levels, it's RESYNC_PAGES(64k) per IO")."""
MD_SYNC_WINDOW_KIB = 128
"""md_do_sync's check window, ``window = 32*(PAGE_SIZE/512)`` sectors with 4 KiB pages: md looks at its speed and
at the array's idleness once per 128 KiB of sync I/O issued, and issues without waiting in between."""
MdThrottle = Literal["legacy", "sync_io_depth"]
MD_THROTTLES: tuple[MdThrottle, ...] = ("legacy", "sync_io_depth")
DEFAULT_MD_THROTTLE: MdThrottle = "legacy"
"""Kernels without the sync_io_depth patch (merged in 2025 as linux-block commit 03720d82d730): the kernels of the
distributions in service before then, unless backported. The source of the behaviour is md_do_sync in drivers/md/md.c."""
PRIORITY_TIME_FACTOR = {"highest": 1.0, "high": 2.0, "medium": 3.5, "low": 6.0, "lowest": 8.0}
"""How much longer a synchronization takes at each priority than at the highest: IBM DS4000 Storage Manager
help, Enhanced Remote Mirroring (MD_DEFAULTS.md). A hint at how a priority knob scales time (remote
mirroring, approximate), used only when a scenario gives ``rebuild.priority``; IBM i documents no rate."""


def throttle_words(throttle: str) -> str:
    """How a rebuild yields to host I/O (``Rebuild.throttle``), in the user's words."""
    return {"legacy": "md throttle: legacy, before sync_io_depth", "sync_io_depth": "md throttle: sync_io_depth"}.get(
        throttle, "explicit rate, no md throttle")


def md_sync_io_kib(layout: str) -> int:
    """md's sync I/O size for ``layout``: one 4 KiB stripe for RAID-4/5/6, 64 KiB for the mirrors."""
    return MD_STRIPE_KIB if layout in PARITY_LAYOUTS else MD_RESYNC_BLOCK_KIB


class Rebuild(StrictModel):
    """A rebuild (md recovery) or resync (IBM i mirror resume) onto replacements of the failed drives.

    The rebuild reads the surviving copies or stripe members and writes each failed drive's replacement
    (``rebuild_traffic``) in sync I/Os of ``io_kib`` (md: a 4 KiB stripe for RAID-4/5/6, 64 KiB for the
    mirrors), no faster than its cap: ``rate_mbps`` (MB/s written to each replacement drive; divided by the
    ``priority`` factor when one is given), else md's ``speed_limit_max_kib_s`` per member (md(4): a
    per-device goal). Without ``rate_mbps`` the rebuild is md's, throttled as md_do_sync (drivers/md/md.c)
    does it: once per 128 KiB of sync I/O issued md compares its speed with ``speed_limit_min``; above it,
    if the array saw host I/O since the last look (``is_mddev_idle``), md waits for every sync I/O in flight
    to finish before it issues more (``md_throttle: legacy``), or does so only once ``sync_io_depth`` sync
    I/Os are in flight (``md_throttle: sync_io_depth``, the 2025 patch). An idle array, or one below
    ``speed_limit_min``, runs up to ``depth`` sync I/Os at once (RESYNC_DEPTH). Host I/O and rebuild I/O
    share every queue; the achieved rate is an output of the simulation.
    """

    rate_mbps: float | None = Field(default=None, gt=0, le=100_000, description="cap: MB/s written to each replacement drive")
    speed_limit_min_kib_s: int = Field(default=MD_SPEED_LIMIT_MIN_KIB_S, ge=1, le=10**8,
                                       description="md speed_limit_min (KiB/s per member): the rate md keeps under load")
    speed_limit_max_kib_s: int = Field(default=MD_SPEED_LIMIT_MAX_KIB_S, ge=1, le=10**8,
                                       description="md speed_limit_max (KiB/s per member): the cap when no rate_mbps is given")
    priority: Literal["lowest", "low", "medium", "high", "highest"] | None = Field(
        default=None, description="resync priority: rate_mbps is the highest priority's rate, divided by PRIORITY_TIME_FACTOR")
    md_throttle: MdThrottle = Field(
        default=DEFAULT_MD_THROTTLE,
        description="md's throttle while the array serves host I/O: legacy (the default: kernels without the 2025 "
                    "sync_io_depth patch, linux-block commit 03720d82d730; md_do_sync drains every sync I/O before "
                    "issuing more) or sync_io_depth (kernels with it: up to sync_io_depth sync I/Os in flight)")
    sync_io_depth: int = Field(default=MD_SYNC_IO_DEPTH, ge=1, le=4096,
                               description="md sync_io_depth (md_throttle: sync_io_depth): sync I/Os in flight under "
                                           "host load; default 32 (sysctl_sync_io_depth)")
    depth: int = Field(default=MD_RESYNC_DEPTH, ge=1, le=4096,
                       description="rebuild I/Os in flight when md does not throttle (idle array, below speed_limit_min) "
                                   "or with rate_mbps; default 32 (raid1/raid10 RESYNC_DEPTH)")
    io_kib: int | None = Field(default=None, ge=4, le=16_384,
                               description="bytes per rebuild I/O; default md's: 4 (a stripe) for raid5/raid6, 64 for mirrors")

    @model_validator(mode="after")
    def _consistent(self) -> Rebuild:
        if self.speed_limit_min_kib_s > self.speed_limit_max_kib_s:
            raise field_problem("speed_limit_min_kib_s", f"at most speed_limit_max_kib_s ({self.speed_limit_max_kib_s}), "
                                f"got {self.speed_limit_min_kib_s}")
        if self.priority is not None and self.rate_mbps is None:
            raise field_problem("priority", "needs rate_mbps (the rate at the highest priority): IBM i documents no resync rate")
        return self

    @property
    def throttle(self) -> str:
        """How the rebuild reacts to host I/O: md's ``md_throttle``, or "none" with an explicit ``rate_mbps``."""
        return "none" if self.rate_mbps is not None else self.md_throttle

    def io_bytes(self, layout: str) -> int:
        """Bytes per rebuild I/O on ``layout`` (``io_kib``, else md's sync I/O size)."""
        return (self.io_kib if self.io_kib is not None else md_sync_io_kib(layout)) * KIB

    def cap_bytes_per_s(self, members_per_drive: int) -> float:
        """The most bytes per second written to one replacement drive."""
        if self.rate_mbps is not None:
            return self.rate_mbps * 1e6 / PRIORITY_TIME_FACTOR[self.priority or "highest"]
        return float(self.speed_limit_max_kib_s * KIB * members_per_drive)

    def floor_bytes_per_s(self, members_per_drive: int) -> float:
        """md's guaranteed rate under load (speed_limit_min per member); 0 with an explicit rate."""
        return 0.0 if self.rate_mbps is not None else float(self.speed_limit_min_kib_s * KIB * members_per_drive)


class Faults(StrictModel):
    """Hardware that failed, and a rebuild in progress.

    ``failed_drives``: drive indexes (direct NVMe: drive d holds members d, d + drives, ...; eXFlash:
    DIMMs; z/VM: drives). ``failed_adapters``: JBOF adapters (drive d sits behind adapter
    d % adapters, so all its drives are lost) or SAN host adapters (all their ports).
    ``failed_ports``: SAN host ports (``hba{a}.port{p}`` is port a x ports + p); I/Os take the
    surviving paths in turn. A layout that loses every copy of some data is refused (data loss).
    """

    failed_drives: list[int] = Field(default_factory=list, max_length=256)
    failed_adapters: list[int] = Field(default_factory=list, max_length=64)
    failed_ports: list[int] = Field(default_factory=list, max_length=4096)
    rebuild: Rebuild | None = None
    slo_statistic: Literal["mean", "p50", "p95", "p99", "p999"] = Field(
        default="p99", description="the latency the SLO bounds in every state (healthy, degraded, rebuilding)")
    slo_us: float | None = Field(default=None, gt=0, le=1e9, description="latency SLO: margins per state are reported against it")

    @property
    def any_failed(self) -> bool:
        return bool(self.failed_drives or self.failed_adapters or self.failed_ports)


@dataclass(frozen=True)
class FailedHardware:
    """What a ``faults`` section takes away from a topology: volume members, drives, host ports."""

    members: frozenset[int]
    drives: frozenset[int]
    ports: frozenset[int]
    members_per_drive: int


def _indexes(field: str, values: list[int], count: int, what: str) -> frozenset[int]:
    bad = [v for v in values if not 0 <= v < count]
    if bad:
        raise field_problem(field, f"{what} indexes in 0..{count - 1}, got {bad}")
    if len(set(values)) != len(values):
        raise field_problem(field, f"each {what} index once, got {values}")
    return frozenset(values)


def failed_hardware(topo: Any, faults: Faults, host_ports: int = 0, ports_per_adapter: int = 1,
                    placements: Sequence[tuple[str, Sequence[int] | None]] | None = None,
                    whole_scenario: bool = True) -> FailedHardware:
    """Check ``faults`` against a topology (attributes of models.topology's classes) and list what failed.

    Raises a ``field_problem`` naming the ``faults`` field for an index out of range, a fault the
    attachment cannot have, or data loss (the layout cannot serve some data without the failed members).
    ``placements``: (name, placement) of each workload; data loss is then checked on each workload's own
    volume (its placement's members, the whole volume without one), as each serves only its own data, and a
    rebuild needs a failed member one of them holds (``rebuild_volumes``) unless ``whole_scenario`` is False
    (``placements`` then lists some of the scenario's workloads only).
    """
    kind = getattr(topo, "kind", "")
    if kind == "generic" and faults.any_failed:
        raise field_problem("faults", "a generic station chain has no drives, adapters or ports to fail")
    drives = {"direct_nvme": "drives", "zvm_edev": "drives", "exflash": "dimms"}.get(kind)
    if drives is None and faults.failed_drives:
        raise field_problem("faults.failed_drives", f"a {kind} attachment has no host-side drives (the storage server protects its back end)")
    count = int(getattr(topo, drives)) if drives else 0
    failed = set(_indexes("faults.failed_drives", faults.failed_drives, count, "drive") if drives else ())
    ports: set[int] = set()
    if faults.failed_adapters:
        if kind == "direct_nvme":
            adapters = int(topo.adapters)
            lost = _indexes("faults.failed_adapters", faults.failed_adapters, adapters, "adapter")
            failed |= {d for d in range(count) if d % adapters in lost}
        elif kind == "san":
            lost = _indexes("faults.failed_adapters", faults.failed_adapters, int(topo.host_adapters), "host adapter")
            ports |= {a * ports_per_adapter + p for a in lost for p in range(ports_per_adapter)}
        else:
            raise field_problem("faults.failed_adapters", f"a {kind} attachment has no adapters to fail in the model")
    if faults.failed_ports:
        if kind != "san":
            raise field_problem("faults.failed_ports", f"only a SAN attachment has host ports, not {kind}")
        ports |= _indexes("faults.failed_ports", faults.failed_ports, host_ports, "host port")
    if kind == "san" and host_ports and len(ports) >= host_ports:
        raise field_problem("faults", f"every host port of the {host_ports} failed: no path to the storage left")
    per_drive = int(getattr(getattr(topo, "namespaces", None), "per_drive", 1))
    members = frozenset(m for m in range(count * per_drive) if m % count in failed) if count else frozenset()
    _no_workload_data_loss(topo, members, count * per_drive, placements, sorted(failed),
                           "faults.failed_adapters" if faults.failed_adapters and not faults.failed_drives else "faults.failed_drives")
    _something_to_rebuild(faults, members, count * per_drive, placements if whole_scenario else None, sorted(failed))
    return FailedHardware(members, frozenset(failed), frozenset(ports), per_drive)


def _something_to_rebuild(faults: Faults, members: frozenset[int], count: int,
                          placements: Sequence[tuple[str, Sequence[int] | None]] | None, drives: list[int]) -> None:
    """A rebuild needs a failed member that some workload's volume holds (``rebuild_volumes``)."""
    if faults.rebuild is None:
        return
    if not members:
        raise field_problem("faults.rebuild", "a rebuild needs a failed drive (or adapter) to rebuild onto a replacement")
    if not rebuild_volumes(count, members, placements)[0]:
        raise field_problem("faults.rebuild", f"nothing to rebuild: the failed drives {drives} hold no member of any workload's "
                            f"placement ({', '.join(f'{n!r}: {list(p or ())}' for n, p in placements or ())}); "
                            "drop faults.rebuild, or fail a drive a workload is placed on")


def _no_data_loss(topo: object, members: frozenset[int], count: int, field: str) -> None:
    if not members:
        return
    layout = "jbod" if getattr(topo, "kind", "") == "zvm_edev" else str(getattr(topo, "layout", "jbod"))
    if layout not in REDUNDANT_LAYOUTS:
        raise field_problem(field, f"data loss: {layout} has no redundancy, a failed drive loses its data")
    try:
        _check(layout, count, members)
    except DataLoss as exc:
        raise field_problem(field, f"data loss: {exc} (members are namespaces; member m is on drive m % drives)") from None


def _no_workload_data_loss(topo: object, members: frozenset[int], count: int,
                           placements: Sequence[tuple[str, Sequence[int] | None]] | None, drives: list[int], field: str) -> None:
    """Data loss on the whole volume (when a workload uses it) and on each placed workload's own volume."""
    if placements is None or any(placed is None for _, placed in placements):
        _no_data_loss(topo, members, count, field)
    for name, placed in placements or ():
        if placed is not None:
            _no_placed_data_loss(topo, members, name, placed, drives, field)


def _no_placed_data_loss(topo: object, members: frozenset[int], name: str, placed: Sequence[int], drives: list[int],
                         field: str) -> None:
    """Data loss on workload ``name``'s own volume: its member i is the whole volume's member ``placed[i]``."""
    own = frozenset(i for i, m in enumerate(placed) if m in members)
    if not own:
        return
    layout = "jbod" if getattr(topo, "kind", "") == "zvm_edev" else str(getattr(topo, "layout", "jbod"))
    lost = sorted(placed[i] for i in own)
    if layout not in REDUNDANT_LAYOUTS:
        raise field_problem(field, f"data loss: workload {name!r} (placement {list(placed)}) has no redundancy ({layout}): "
                            f"members {lost} are on the failed drives {drives}")
    try:
        _check(layout, len(placed), own)
    except DataLoss as exc:
        raise field_problem(field, f"data loss: workload {name!r} (placement {list(placed)}, its member i is the volume's "
                            f"member placement[i]) loses members {lost} on the failed drives {drives}: {exc}") from None
