"""A flash drive's or DIMM's internal mechanism, derived from its datasheet once for both solvers.

``flash_parameters`` turns a catalog device (models/catalog/drives.yaml, dimms.yaml: seeds 001,
002, 003) and the workload's access pattern into unit counts, service means and bandwidth caps;
what datasheets do not publish comes from parameters.yaml ``device_behaviour``.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from models.catalog import parameter
from models.hardware import FlashDeviceSpec
from models.loading import BadInput
from sim.route.links import us_per_byte

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

    def die_read_time_us(self, size: float, layout: DieLayout | None = None) -> float:
        """With shared dies: how long a random read of ``size`` bytes holds a die: the array read and
        the first 4 KiB out (the QD1 latency), then every further byte over the die's share of the
        random-read bandwidth (all dies busy deliver the random-read bandwidth). Seed 002 Table 4:
        142K 4 KiB and 42K 16 KiB reads per DIMM give the two ends; 8 KiB then follows (72K
        measured). Sequential reads are striped over the dies and only the read-bandwidth channel
        caps them.

        The pooled model's dies are the ``read_units`` P_r, each holding a read for the QD1 latency;
        under the ``dies`` device model (``layout``) the same rule applies to the layout's N addressed
        dies: a page read holds its die for tR (``DieLayout.die_read_us``) and its bytes beyond the first
        4 KiB at 1/N of the random-read bandwidth; a read over several pages (``DieLayout.pieces``) splits
        those bytes evenly among its dies (each holds tR and its share)."""
        if layout is None:
            first, units, pieces = self.read_latency_us, self.read_units, 1
        else:
            first, units, pieces = layout.die_read_us, layout.dies, layout.pieces(size)
        if not self.random_access:
            return first
        extra = max(0, size - FIRST_READ_BYTES)
        if pieces > 1:
            return first + units * (extra / pieces) * us_per_byte(self.read_bw_gbs)
        return first + units * extra * us_per_byte(self.read_bw_gbs)

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


def uses_die_layout(device_model: str, spec: FlashDeviceSpec) -> bool:
    """Whether a scenario's ``device_model`` gives this device addressed dies (``die_layout``) in both solvers.

    ``dies`` and ``pooled`` say so for every device. ``auto`` (the default) gives NVMe drives their dies and
    keeps a device whose reads share the program dies (``behaviour.shared_dies``: the eXFlash memory-channel
    DIMMs) pooled. The evidence, calibration/ext/DIE_LEVEL.md: on drives the dies carry the tail the pooled
    units miss (PM1733 QD1 p99 +19% against +85% pooled; the P3700's p99 rising x1.80 from QD1 to QD16 against
    x1.70 measured, pooled x1.0) and keep the S1, S2 and S5 records; on the DIMM no die count serves seed 002
    (its QD16 knee needs at least 62 dies, its 16 KiB reads fewer than the 24 the rating-depth rule gives), and
    under dies nine of its records go outside that the pooled model meets (`calibrate --device-model dies`).
    ``auto`` also keeps pooled a drive the die layout cannot represent (``die_read_room_us`` not positive: a
    storage-class-memory drive whose rated QD1 read latency is below the layout's fixed controller cost and host
    transfer, such as the Intel Optane P4800X at 8.9 us): its medium has no NAND read time to derive dies from.
    """
    if device_model == "auto":
        return not spec.behaviour.shared_dies and die_read_room_us(spec) > 0
    return device_model == "dies"


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


def reads_meet_programs(read_fraction: float, layout: str) -> bool:
    """Whether flash devices see reads and writes together (a mix, or RAID-5/6 parity updates that
    read before they write): only then can a read find its die programming."""
    rf = read_fraction
    return rf < 1.0 and (rf > 0.0 or layout in ("raid5", "raid6"))



@dataclass(frozen=True)
class DieLayout:
    """A flash device as addressed NAND dies behind a controller (the ``dies`` device model).

    Derived once per device by ``die_layout`` with the rules of calibration/ext/DEVICE_PARAMETERS.md;
    both solvers read it from the route description (``DeviceBank.dies``) when a scenario sets
    ``device_model: dies``:

    * ``die_read_us`` tR = datasheet QD1 read latency - the 4 KiB transfer on the host link
      (``transfer_us``) - the controller's fixed cost (``controller_us``, device_behaviour
      ``controller_fixed_us``): the QD1 latency already contains the transfer, which is therefore
      counted once, inside it, not added on top (the route's own link hop carries it).
    * ``dies`` N: with B = read IOPS x tR (dies busy at the datasheet IOPS) and Q the datasheet's
      rating queue depth (device_behaviour ``rating_queue_depth``), N = B (Q - 1) / (Q - B): a
      closed loop of Q reads over N equally likely dies keeps B busy (product form, each die busy
      Q / (Q + N - 1)), so the IOPS are reached gradually and by depth Q, not at a wall. Where
      Q <= B + 1 no die count reaches it by Q and N = ceil(B) (the dies alone sustain the IOPS,
      all busy). N is rounded up to a whole number of dies per channel. No die count is published
      for a catalog drive (DEVICE_PARAMETERS.md table), so the rule applies to every drive and to
      the eXFlash DIMM alike.
    * ``channels`` C: device_behaviour ``channels`` (assumption; the read-bandwidth cap stands in for
      the sum of channel bandwidths, DEVICE_PARAMETERS.md rule 4).
    * ``controller_kiops``: the controller's command-rate ceiling for reads, the datasheet read IOPS (a read holds its
      single server 1 / read IOPS); ``write_kiops``: its ceiling for write commands, from the drive's figures
      (``controller_write_kiops``): the higher of the read and write IOPS. A write figure below the read figure is the
      NAND's limit (the programs', ``ProgramOperations``), not the controller's, which handles a write command no
      slower than a read; a write figure above it (a fresh drive, a large write cache) is the controller's own, and
      the read figure would clip it.
    * ``die_read_cv``: the die's tight service law (device_behaviour ``die_read_cv``).
    * ``page_bytes``: bytes one die read delivers (device_behaviour ``die_page_bytes``): a larger read
      spans several dies (fork/join).
    * Where programs land (``WritePoint``): reads are address-bound (a random read's die is uniformly
      random), writes are not: the FTL writes out of place, so a destaged write programs on the die the
      write point picks (an idle die; while none is idle the write waits for the first die to fall
      idle), never on the die its address last used.
    """

    dies: int
    channels: int
    die_read_us: float
    die_read_cv: float
    transfer_us: float
    controller_us: float
    controller_kiops: float
    page_bytes: int = 16384
    rating_qd: int = 256
    write_kiops: float | None = None
    """The controller's ceiling for write commands (thousands per second); None: ``controller_kiops``."""

    @property
    def controller_service_us(self) -> float:
        """The controller's time per command at its ceiling (its single server), part of ``controller_us``."""
        return 1e3 / self.controller_kiops

    @property
    def controller_write_us(self) -> float:
        """A write command's time at the controller's single server at its write ceiling (``write_kiops``)."""
        return 1e3 / (self.write_kiops or self.controller_kiops)

    @property
    def controller_delay_us(self) -> float:
        """The rest of the controller's fixed cost per read: a pure delay (no queue)."""
        return max(0.0, self.controller_us - self.controller_service_us)

    def pieces(self, size: float) -> int:
        """How many dies a read of ``size`` bytes spans (one per page, at most every die)."""
        if size <= self.page_bytes:
            return 1
        return min(self.dies, math.ceil(size / self.page_bytes))

    @property
    def qd1_read_us(self) -> float:
        """The QD1 4 KiB read latency the layout reproduces: controller + die + one transfer."""
        return self.controller_us + self.die_read_us + self.transfer_us

    def reading_for(self, die_read_us: float) -> DieLayout:
        """This layout with a die read of ``die_read_us`` (a shared-die device's read of more than 4 KiB holds its
        die longer than tR, ``FlashParameters.die_read_time_us``): for the die-level tail estimates."""
        return DieLayout(dies=self.dies, channels=self.channels, die_read_us=die_read_us, die_read_cv=self.die_read_cv,
                         transfer_us=self.transfer_us, controller_us=self.controller_us,
                         controller_kiops=self.controller_kiops, page_bytes=self.page_bytes, rating_qd=self.rating_qd,
                         write_kiops=self.write_kiops)

    @property
    def die_kiops(self) -> float:
        """The 4 KiB random reads per second (thousands) the dies alone sustain, all busy."""
        return self.dies / self.die_read_us * 1e3


def write_command_us(d: DieLayout, p: FlashParameters) -> float:
    """A write's time at the controller's single server under the ``dies`` model: the per-command time at the
    write ceiling (``DieLayout.controller_write_us``: 1 / the higher of the read and write IOPS), but never more than
    the write's acknowledgement (``write_ack_us``): a write acknowledged sooner cannot have held the server that long
    (eXFlash: 1 / 142K = 7.04 us per command, writes acknowledged in 5.0 us, seed 002 Figure 11: 5.35 us with the
    host). The rest of the acknowledgement is a delay."""
    return min(d.controller_write_us, p.write_ack_us)


@dataclass(frozen=True)
class ProgramOperations:
    """A destaged write's NAND work under the ``dies`` device model (not shared dies): operations of a program time.

    A die programs a page in one operation of tPROG (``FlashParameters.program_time_us``: device_behaviour
    ``program_time_us``, 500 us, the pooled model's, adjusted to the rounded unit count); a read that finds its die
    in one waits out the rest of that operation, not of the write's whole NAND work. The N dies alone give the
    sustained write IOPS W when all are busy, so a write costs N / W of die time: ``per_write`` = N / (W tPROG)
    operations. Below one (a sequential stream programs at the write bandwidth, no garbage collection: S4's P4510,
    56 dies / (708K x 500 us) = 0.158) a page carries several writes; above one (steady-state random writes on a
    drive with many dies: ES4C 1,480 / (320K x 500 us) = 9.25) a write costs several operations, its program and
    the garbage collection it causes, one after another. Before this rule a write held one die for the whole N / W
    (ES4C: 4,625 us, nine program times; S4's P4510 sequential: 79 us, a sixth of one)."""

    per_write: float
    """Operations per destaged write, N / (W tPROG) (``program_units`` is W tPROG rounded)."""
    operation_us: float
    """One operation's die time, tPROG."""

    @property
    def die_us_per_write(self) -> float:
        """The die time a destaged write costs: N / W."""
        return self.per_write * self.operation_us


def program_operations(p: FlashParameters, d: DieLayout) -> ProgramOperations:
    """``ProgramOperations`` of a drive (not shared dies) on its die layout; both solvers read this."""
    return ProgramOperations(per_write=d.dies / p.program_units, operation_us=p.program_time_us)


class OperationCount:
    """Whole operations for each destaged write in turn, deterministically: a running total of ``per_write``
    (0.158: one write in about six-and-a-third starts an operation; 9.25: nine, then every fourth write ten), so
    the count per write has the rule's mean and the run stays byte-reproducible (no random draw)."""

    __slots__ = ("owed", "per_write")

    def __init__(self, per_write: float) -> None:
        self.per_write = per_write
        self.owed = 0.0

    def next(self) -> int:
        """Operations the next destaged write starts."""
        owed = self.owed + self.per_write
        whole = int(owed)
        self.owed = owed - whole
        return whole


def host_transfer_us(spec: FlashDeviceSpec, size: float = FIRST_READ_BYTES) -> float:
    """Time to move ``size`` bytes over the device's host link: its PCIe link, or for a DIMM its memory channel."""
    link = spec.link
    gbs = link.gbs if link is not None else spec.memory_channel_gbs
    return 0.0 if gbs is None else size * us_per_byte(gbs)


def dies_for(busy: float, rating_qd: int) -> float:
    """Dies a closed loop of ``rating_qd`` reads needs to keep ``busy`` of them busy (``DieLayout`` rule)."""
    q = float(rating_qd)
    if q <= busy + 1.0:
        return float(math.ceil(busy))
    return busy * (q - 1.0) / (q - busy)


def die_read_room_us(spec: FlashDeviceSpec) -> float:
    """The die read time tR the layout would give a device (``DieLayout``): its rated QD1 read latency less the
    4 KiB host transfer and the controller's fixed cost; not positive where the die layout cannot represent it."""
    return spec.read_latency_us - host_transfer_us(spec) - float(parameter("device_behaviour.controller_fixed_us"))


def controller_write_kiops(spec: FlashDeviceSpec) -> float:
    """The controller's ceiling for write commands (thousands per second, ``DieLayout.write_kiops``): the higher of the
    device's rated 4 KiB random read and write IOPS (every command passes the controller)."""
    return max(spec.read_kiops, spec.write_kiops)


def die_layout(spec: FlashDeviceSpec) -> DieLayout:
    """The die count, die read time, channels and controller ceiling of a device (rules in ``DieLayout``).

    A device whose read latency leaves no die read time (``die_read_room_us``) is bad input for the ``dies``
    model: ``BadInput`` naming ``device_model``, the read latency the model needs and the device's."""
    transfer = host_transfer_us(spec)
    controller = float(parameter("device_behaviour.controller_fixed_us"))
    t_read = die_read_room_us(spec)
    if t_read <= 0:
        raise BadInput([("device_model", (
            f"'dies' needs a device whose read_latency_us is above {transfer + controller:.2f} us (the "
            f"{controller:g} us controller cost and the {transfer:.2f} us host transfer of the die model); "
            f"{spec.description} has read_latency_us {spec.read_latency_us:g}: use device_model 'auto' or 'pooled'"))])
    channels = int(parameter("device_behaviour.channels"))
    rating_qd = int(parameter("device_behaviour.rating_queue_depth"))
    busy = spec.read_kiops * 1e3 * t_read * 1e-6
    needed = math.ceil(dies_for(busy, rating_qd) - 1e-9)
    dies = channels * math.ceil(needed / channels)
    return DieLayout(dies=dies, channels=channels, die_read_us=t_read,
                     die_read_cv=float(parameter("device_behaviour.die_read_cv")), transfer_us=transfer,
                     controller_us=controller, controller_kiops=spec.read_kiops,
                     page_bytes=int(parameter("device_behaviour.die_page_bytes")), rating_qd=rating_qd,
                     write_kiops=controller_write_kiops(spec))


class WritePoint:
    """Where the FTL programs a destaged write under the ``dies`` device model: out of place, on an idle die.

    Flash is written out of place (page-level mapping): the controller chooses the physical page of every write,
    so a program is not bound to a die by its address (reads are: a read goes where its page was written). The
    allocation rule is dynamic page allocation: the write goes to an idle die (the die idle longest: the write
    point takes the dies in turn); while no die is idle it waits in the controller's write buffer and takes the
    first die that falls idle. Sources: Tavakkol et al., "Performance Evaluation of Dynamic Page Allocation
    Strategies in SSDs", ACM TOMPECS 1(2), 2016 (a write whose target chip is busy is redirected to an idle one;
    dynamic allocation exploits the parallelism better than any static order; MQSim, the same authors'
    simulator, implements both); "Enhancing internal parallelism of solid-state drives while balancing write
    loads across dies", Electronics Letters 51(24), 2015, doi:10.1049/el.2015.1840 (a dynamic die binding that
    stripes writes to idle dies first). What this means for the solvers: programs never queue behind reads or
    programs at a die, they wait only while every die is busy, and their load spreads evenly over the dies (the
    fast path: ``sim.analytic.paths.DieGroups``). Reads still meet a programming die at random: their die is
    chosen by their address.

    The DES (``sim.des.dies.DieArray``) tells it when a die falls idle (``idle``) and asks it for a die (``take``)
    with the dies' busy flags; the idle dies wait in a queue (oldest first), each at most once, a die found busy
    when its turn comes is dropped (it is queued again when it next falls idle)."""

    __slots__ = ("queued", "waiting")

    def __init__(self, dies: int) -> None:
        self.waiting: deque[int] = deque(range(dies))
        self.queued = [True] * dies

    def idle(self, k: int) -> None:
        """Die ``k`` has fallen idle (no operation in service or queued)."""
        if not self.queued[k]:
            self.queued[k] = True
            self.waiting.append(k)

    def take(self, busy: list[bool]) -> int:
        """The idle die the next program goes to (the die idle longest), or -1 while every die is busy."""
        waiting, queued = self.waiting, self.queued
        while waiting:
            k = waiting.popleft()
            queued[k] = False
            if not busy[k]:
                return k
        return -1
