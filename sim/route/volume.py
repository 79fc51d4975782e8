"""The volume layer: how a logical I/O becomes device I/Os on the members of a layout.

Members are namespaces (direct NVMe), LUNs (SAN) or DIMMs (eXFlash), numbered so that
member i lives on drive ``i % drives``; mirror pairs (2p, 2p+1) therefore sit on
different drives, and, with drives spread round-robin over adapters, behind different
adapters too (IBM i planar / bus protection, seed 001).

* jbod - independent devices: a closed workload's job j uses member j mod M (one fio
  instance per device, seed 002); open workloads pick by address.
* raid0 - stripes of ``chunk`` bytes over all members.
* raid1 - every member holds a copy: writes go to all, reads to the least-loaded one.
* raid10 / ibmi_mirror - md "near 2" layout: chunk c lives on pair c mod M/2; writes go
  to both copies, reads to the less-loaded one (mdadm --level=10, chunk 256K, seed 000;
  IBM i mirrored protection, which also spreads data over all units, seed 001). Ties go to
  the first copy under md and alternate under IBM i (see ``_less_loaded``).
* raid5 / raid6 - left-symmetric rotating parity. A write that covers a whole stripe
  writes data and parity at once; a smaller write reads old data and parity, then
  writes both (read-modify-write: 2 reads + 2 writes per chunk for RAID-5, 3 + 3 for RAID-6).

With ``failed`` members (a scenario's ``faults``, models/faults.py) the mapping is degraded: a
mirror reads and writes the surviving copies only; RAID-5/6 read a lost chunk by reading the
rest of its stripe (every surviving data chunk plus a parity per lost chunk), write a lost
chunk by reconstruct-write (read the surviving data, write the parities) and skip lost parities
(``models.faults.degraded_io_cost`` gives the expected costs; tests check the two agree).
"""

from __future__ import annotations

from collections.abc import Callable

from models.cost import data_members
from sim.route.steps import READ, WRITE

STREAM_ALIGN_BYTES = 1 << 20
"""Sequential streams start on 1 MiB boundaries (partition and extent alignment), so a stream of
I/Os that divide a RAID chunk never crosses one (``sim.analytic.paths.volume_plan`` agrees)."""

Piece = tuple[int, int, int]
"""(member, op, bytes)."""


class Volume:
    """Maps (op, offset, size, job) to phases of (member, op, bytes) device I/Os."""

    def __init__(self, layout: str, members: int, chunk_bytes: int, member_bytes: int,
                 load: Callable[[int], int], closed_affinity: bool, failed: frozenset[int] = frozenset(),
                 rebuilding: bool = False):
        self.layout = layout
        self.members = members
        self.chunk = chunk_bytes
        self.member_bytes = member_bytes
        self.load = load
        self.closed_affinity = closed_affinity
        self.data_members = data_members(layout, members)
        self.capacity = self.data_members * member_bytes
        self.parities = {"raid5": 1, "raid6": 2}.get(layout, 0)
        self.alternate_ties = layout == "ibmi_mirror"
        self.tie_flip = 0
        self.failed = failed
        self.rebuilding = rebuilding
        """Failed mirror members are being rebuilt: host writes go to their replacements too (md writes every
        device that is not Faulty, a recovering spare included; IBM i writes a resuming unit), reads do not."""

    # -- helpers ---------------------------------------------------------------
    def _pieces(self, offset: int, size: int) -> list[tuple[int, int]]:
        """(chunk index, bytes) pieces of [offset, offset + size)."""
        chunk = self.chunk
        out = []
        end = offset + size
        while offset < end:
            c = offset // chunk
            stop = min(end, (c + 1) * chunk)
            out.append((c, stop - offset))
            offset = stop
        return out

    def _less_loaded(self, a: int, b: int) -> int:
        """The copy with fewer I/Os outstanding. A tie goes to the first copy, as Linux md's
        ``read_balance`` does on SSDs (raid1/raid10); IBM i mirroring reads "the one with the
        faster expected response time" (IBM i 5.4 Information Center, "Mirrored protection and
        performance"), which names no first copy, so its ties alternate between the two."""
        la, lb = self.load(a), self.load(b)
        if la != lb:
            return a if la < lb else b
        if self.alternate_ties:
            self.tie_flip ^= 1
            return b if self.tie_flip else a
        return a

    # -- the mapping -------------------------------------------------------------
    def plan(self, op: int, offset: int, size: int, job_index: int) -> list[list[Piece]]:
        if self.failed:
            return self._plan_degraded(op, offset, size)
        layout = self.layout
        m = self.members
        if layout == "jbod":
            if self.closed_affinity and job_index >= 0:
                member = job_index % m
            else:
                member = min(m - 1, offset // self.member_bytes)
            return [[(member, op, size)]]
        if layout == "raid0":
            if size <= self.chunk and offset % self.chunk + size <= self.chunk:
                return [[((offset // self.chunk) % m, op, size)]]
            return [[(c % m, op, n) for c, n in self._pieces(offset, size)]]
        if layout == "raid1":
            if op == READ:
                best = min(range(m), key=self.load)
                return [[(best, READ, size)]]
            return [[(i, WRITE, size) for i in range(m)]]
        if layout in ("raid10", "ibmi_mirror"):
            pairs = m // 2
            out: list[Piece] = []
            for c, n in self._pieces(offset, size):
                p = c % pairs
                a, b = 2 * p, 2 * p + 1
                if op == READ:
                    out.append((self._less_loaded(a, b), READ, n))
                else:
                    out.append((a, WRITE, n))
                    out.append((b, WRITE, n))
            return [out]
        return self._plan_parity(op, offset, size)

    def _plan_parity(self, op: int, offset: int, size: int) -> list[list[Piece]]:
        m = self.members
        k = self.parities
        dps = m - k  # data chunks per stripe
        stripes: dict[int, list[tuple[int, int]]] = {}
        for c, n in self._pieces(offset, size):
            stripes.setdefault(c // dps, []).append((c % dps, n))
        reads: list[Piece] = []
        writes: list[Piece] = []
        for s, pieces in stripes.items():
            parity = (m - 1) - s % m
            parity_members = [(parity + j) % m for j in range(k)]
            first_data = parity + k

            def data_member(idx: int, first: int = first_data) -> int:
                return (first + idx) % m

            if op == READ:
                reads.extend((data_member(i), READ, n) for i, n in pieces)
                continue
            full = len(pieces) == dps and all(n == self.chunk for _, n in pieces)
            parity_bytes = max(n for _, n in pieces) if not full else self.chunk
            if not full:
                reads.extend((data_member(i), READ, n) for i, n in pieces)
                reads.extend((pm, READ, parity_bytes) for pm in parity_members)
            writes.extend((data_member(i), WRITE, n) for i, n in pieces)
            writes.extend((pm, WRITE, parity_bytes) for pm in parity_members)
        if op == READ:
            return [reads]
        return [reads, writes] if reads else [writes]

    # -- degraded (members failed) ---------------------------------------------------------
    def _plan_degraded(self, op: int, offset: int, size: int) -> list[list[Piece]]:
        if self.layout in ("raid5", "raid6"):
            return self._parity_degraded(op, offset, size)
        failed = self.failed
        if op == WRITE and self.rebuilding:
            failed = frozenset()
        if self.layout == "raid1":
            alive = [i for i in range(self.members) if i not in failed]
            if op == READ:
                return [[(min(alive, key=self.load), READ, size)]]
            return [[(i, WRITE, size) for i in alive]]
        pairs = self.members // 2  # raid10 / ibmi_mirror (failed_hardware refuses the rest)
        out: list[Piece] = []
        for c, n in self._pieces(offset, size):
            p = c % pairs
            alive = [x for x in (2 * p, 2 * p + 1) if x not in failed]
            if op == WRITE:
                out.extend((x, WRITE, n) for x in alive)
            elif len(alive) == 2:
                out.append((self._less_loaded(alive[0], alive[1]), READ, n))
            else:
                out.append((alive[0], READ, n))
        return [out]

    def _parity_degraded(self, op: int, offset: int, size: int) -> list[list[Piece]]:
        m, k, failed = self.members, self.parities, self.failed
        dps = m - k
        stripes: dict[int, list[tuple[int, int]]] = {}
        for c, n in self._pieces(offset, size):
            stripes.setdefault(c // dps, []).append((c % dps, n))
        reads: list[Piece] = []
        writes: list[Piece] = []
        for s, pieces in stripes.items():
            parity = (m - 1) - s % m
            parities = [(parity + j) % m for j in range(k)]
            data = [(parity + k + i) % m for i in range(dps)]
            alive_p = [x for x in parities if x not in failed]
            lost_data = [x for x in data if x in failed]
            if op == READ:
                for i, n in pieces:
                    if data[i] not in failed:
                        reads.append((data[i], READ, n))
                    else:  # reconstruct: the stripe's surviving data and a parity per lost chunk
                        reads.extend((x, READ, n) for x in data if x not in failed)
                        reads.extend((x, READ, n) for x in alive_p[: len(lost_data)])
                continue
            self._parity_write(pieces, data, alive_p, lost_data, reads, writes)
        if op == READ:
            return [reads]
        return [reads, writes] if reads else [writes]

    def _parity_write(self, pieces: list[tuple[int, int]], data: list[int], alive_p: list[int], lost_data: list[int],
                      reads: list[Piece], writes: list[Piece]) -> None:
        """One stripe of a degraded parity write: full stripe, reconstruct-write, or read-modify-write."""
        failed = self.failed
        full = len(pieces) == len(data) and all(n == self.chunk for _, n in pieces)
        nbytes = self.chunk if full else max(n for _, n in pieces)
        written = {data[i] for i, _ in pieces}
        live = [(data[i], n) for i, n in pieces if data[i] not in failed]
        if not full and alive_p:
            if written & failed:  # reconstruct-write: read the data the write leaves, rebuild the lost chunk
                reads.extend((x, READ, nbytes) for x in data if x not in failed and x not in written)
                if len(lost_data) > 1:
                    reads.extend((x, READ, nbytes) for x in alive_p)
            else:  # read-modify-write with the surviving parities
                reads.extend((x, READ, n) for x, n in live)
                reads.extend((x, READ, nbytes) for x in alive_p)
        writes.extend((x, WRITE, n) for x, n in live)
        writes.extend((x, WRITE, nbytes) for x in alive_p)
