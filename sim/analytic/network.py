"""The analytic fast path's queueing network and its solvers.

A scenario compiles (sim/analytic/paths.py) into

* **groups** - identical instances of one DES component: a station (c servers, FCFS) or a
  concurrency limit (c slots, a ``Pool`` in the DES). Each group carries, per logical I/O,
  its visits and the first two moments of the work they bring (``Path.add_loads``), and for a
  concurrency limit the *holding time*: the stretch of the device route between acquiring
  and releasing a slot, which itself includes waits at the stations inside it;
* **child paths** - one device I/O's route as a linear form: a constant (service times and
  pure delays, with their variance; a delay may also be any function of the size, such as a
  NAND die's hold) plus the wait at each group it visits. A route serves every transfer size
  of its op, or, where the route itself changes with the size (a z/VM channel program runs
  one device command per page), there is one per (op, size);
* **logical kinds** - per op and transfer size, the volume layer's phases of parallel
  children (RAID-10 writes both copies, RAID-5 reads then writes old data and parity); they
  depend on the layout and workload mix only (a ``KindPlan``, shared by every network with
  them), each device op's children taking the network's route of that op.

For a logical throughput X every group's wait follows from its per-instance arrival rate
(``queueing.queue_wait``: Erlang C with the Allen-Cunneen variability factor and, for a
closed workload, Schweitzer's (n - 1) / n arrival-theorem correction), the limits' waits
from their holding times (innermost first), a child's latency from its path, a phase's
from the expected maximum of its children, and a logical I/O's as the sum of its phases.

* open workloads: X is the arrival rate;
* closed workloads: X solves N = X (Z + R(X)) (approximate mean-value analysis: Little's
  law over the cycle, Schweitzer-corrected residence times), bracketed by X <= Xmax;
* bursty workloads: on and off periods as open regimes weighted by their arrivals, plus
  a fluid backlog when an on period exceeds the capacity (``solve_bursty``).

Work that runs behind the acknowledgement (write-cache destage) loads its groups and
holds its write-cache slot, but adds no latency unless the cache fills, which the
capacity bound Xmax captures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from sim.analytic.dies import slowest_rest_us
from sim.analytic.queueing import INF, max_of_normal_moments, mva_arrival_fractions, queue_wait

READ = 0
WRITE = 1

FILL_RESOLUTION = 1e-3
"""A limit whose slots fill within this share below the zero-load bound fills because a station inside it saturates
there (its queue, held in the slots, grows without bound): the bound stays that station's (``capacities``)."""


class Group:
    """Identical instances of one component (a station or a concurrency limit) of the DES model.

    A plain class with its own ``__init__`` (not a dataclass) so that mypyc compiles its
    construction too (sim/native/guard.py): a dataclass's generated ``__init__`` stays interpreted.
    """

    __slots__ = (
        "background",
        "background_util",
        "behind_ack",
        "ca2",
        "charged",
        "cover",
        "depth",
        "holding",
        "idle_programs",
        "index",
        "instances",
        "limit",
        "names",
        "page_us",
        "pool",
        "population",
        "program_locks",
        "reach",
        "round_robin",
        "seen",
        "servers",
        "shares_with",
        "view_k",
        "view_of",
        "visits",
        "work",
        "work2",
    )

    def __init__(self, names: tuple[str, ...], servers: int, pool: bool = False, cover: int = 1, reach: float = 1.0,
                 instances: int = 1, round_robin: bool = False, ca2: float = 1.0, index: int = -1,
                 view_of: int = -1, view_k: int = 1, program_locks: bool = False) -> None:
        self.names = names
        self.servers = servers
        self.pool = pool
        self.cover = cover
        """Volume members one instance serves (sibling fan-in, the limits around it)."""
        self.reach = reach
        """Share of a closed workload's jobs that can visit one instance (below 1 under closed affinity)."""
        self.instances = instances
        """Instances of the whole component (this group may hold only some of them)."""
        self.round_robin = round_robin
        """Device I/Os take the instances in turn (SAN ports), not by volume member."""
        self.ca2 = ca2
        self.background = False
        self.background_util = 0.0
        """Utilization of each instance by work outside the logical I/Os (a rebuild in progress): an open
        class sharing the station FCFS, so the logical I/Os see its capacity times (1 - this) and its
        queue at the total load (a mixed network, Lazowska et al., Quantitative System Performance, ch. 7)."""
        self.visits = 0.0
        self.work = 0.0
        self.work2 = 0.0
        self.page_us = 0.0
        """A device's dies under the ``dies`` model (``DieGroups``): the read time of one page (0 elsewhere): a read's
        pages there are ``work / page_us``."""
        self.charged = 0.0
        """The part of ``work`` charged (``Path.charge``): it occupies the servers, no job waits for it (a die's
        programs; the further pages of a read that spans several dies, read in parallel with its first)."""
        self.holding: dict[tuple[int, float], tuple[float, Lin, float]] = {}
        """Concurrency limits only: (span id, bytes) -> (visits per logical I/O, span, bytes)."""
        self.limit = INF
        """Most jobs an instance can ever hold, whatever the workload (set from the limits around it)."""
        self.index = index
        self.depth = 0
        """How many concurrency limits a route already holds when it takes this one (inner limits are solved first)."""
        self.behind_ack = False
        """A limit also held by work that runs behind the acknowledgement (a NAND die programming a
        destaged write): more I/Os than a closed workload's population can hold or wait for it."""
        self.population = INF
        self.seen = 1.0
        """Share of the load an arriving job finds here (arrival theorem; 1 for open workloads)."""
        self.view_of = view_of
        """A wait-only view of limit ``view_of`` for jobs that take the least-loaded of ``view_k`` of its
        instances (a mirror read choosing a copy): no load of its own; it waits as one limit with
        ``view_k`` times the slots and the load of all of them (join-the-shortest-queue taken as the
        pooled queue; ``Path.acquire(wait_at=...)``)."""
        self.view_k = view_k
        self.shares_with = -1
        """Program locks only: the station (index) whose servers the programs occupy (a die group under the
        ``dies`` device model): its capacity counts the programs' work too, its queue the reads only (the programs
        take idle dies, ``sim.route.flash.WritePoint``; a read meets them here, as a lock)."""
        self.program_locks = program_locks
        self.idle_programs = False
        """Program locks of a device's dies under the ``dies`` model whose programs take idle dies only (the write
        point, ``sim.route.flash.WritePoint``; not shared dies, where they queue with the reads): a read meets them
        at random, outside the dies' queue (``sim.analytic.classes.Dies``)."""
        """The dies of a shared-die device seen by a read whose data sit on one of them (``DieProgramLocks`` in
        sim/des/model.py): programs load it (``Path.charge``), reads only wait here (``Path.wait_for``), for the rest
        of a program when their die has one: (programs in flight per die) x E[T^2] / (2 E[T]), no queue."""

    def __repr__(self) -> str:
        return f"Group({self.names[0]!r}.., servers={self.servers}, pool={self.pool}, index={self.index})"


SizedTime = tuple[Callable[[float], float], float, float]
"""A service whose length is a function of the transfer size: (us for n bytes, scv, times taken)."""


class Lin:
    """Latency of a stretch of route for an I/O of n bytes, plus the waits on it.

    mean = a + b n and variance = c + d n + e n^2 (service times are a fixed part plus a
    transfer part per byte), plus the ``sized`` services whose length is another function of
    the size (a NAND die's hold, ``FlashParameters.die_read_time_us``); ``terms`` maps each
    group waited for to the expected number of waits.
    """

    __slots__ = ("a", "b", "c", "d", "e", "sized", "terms")

    def __init__(self, a: float = 0.0, b: float = 0.0, c: float = 0.0, d: float = 0.0, e: float = 0.0,
                 terms: dict[int, float] | None = None, sized: tuple[SizedTime, ...] = ()) -> None:
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.e = e
        self.terms: dict[int, float] = {} if terms is None else terms
        self.sized = sized

    def add(self, a: float, b: float, scv: float) -> None:
        """Add a service of a + b n us whose squared coefficient of variation is ``scv``."""
        self.a += a
        self.b += b
        if scv:
            self.c += scv * a * a
            self.d += 2.0 * scv * a * b
            self.e += scv * b * b

    def at(self, n: float) -> tuple[float, float]:
        """(mean, variance) for an I/O of ``n`` bytes, waits excluded."""
        mean = self.a + self.b * n
        var = self.c + (self.d + self.e * n) * n
        for time_of, scv, times in self.sized:
            t = time_of(n)
            mean += times * t
            var += times * scv * t * t
        return mean, var if var > 0.0 else 0.0

    def plus(self, o: Lin) -> Lin:
        terms = dict(self.terms)
        for g, c in o.terms.items():
            terms[g] = terms.get(g, 0.0) + c
        return Lin(self.a + o.a, self.b + o.b, self.c + o.c, self.d + o.d, self.e + o.e, terms, self.sized + o.sized)


Choice = list[tuple[Group, float]]
"""Instances a visit may go to: (group, probability), probabilities summing to 1."""
Visit = tuple[Choice, float, float, float]
"""(choice, fixed us, us per byte, squared coefficient of variation)."""
Snapshot = tuple[float, float, float, float, float, dict[int, float], tuple[SizedTime, ...]]
"""A ``Lin``'s values where a concurrency limit was acquired (its span is what comes after)."""


class Path:
    """The route of one kind of device I/O (an op; a SAN read that hits or misses), for any transfer size.

    Records its visits (group, probability, fixed us, us per byte, scv) and the span of every
    concurrency limit it takes, so loads and holding times follow for each size.
    ``depth``: limits already held where this path starts (background work, a command of a
    channel program, ``part``).
    """

    def __init__(self, depth: int = 0) -> None:
        self.lin = Lin()
        self.visits: list[tuple[Group, float, float, float, float]] = []
        self.spans: list[tuple[Group, float, Lin]] = []
        self._open: list[tuple[Choice, Snapshot]] = []
        self._depth = depth
        self.charges: list[tuple[Group, float, Callable[[float], float], float]] = []
        """Work that occupies a group without the route waiting there (``charge``)."""
        self.calls: list[Visit | None] = []
        """Every ``visit`` in route order; None where a random delay lies between (it breaks a tandem's spacing)."""

    def visit(self, choice: Choice, a: float, b: float = 0.0, scv: float = 0.0) -> None:
        """Queue for and receive a + b x bytes us of service (squared coefficient of variation ``scv``)."""
        lin = self.lin
        terms = lin.terms
        visits = self.visits
        for group, p in choice:
            visits.append((group, p, a, b, scv))
            gi = group.index
            terms[gi] = terms.get(gi, 0.0) + p
        lin.a += a  # Lin.add, inline (the compiler's most frequent call)
        lin.b += b
        if scv:
            lin.c += scv * a * a
            lin.d += 2.0 * scv * a * b
            lin.e += scv * b * b
        self.calls.append((choice, a, b, scv))

    def delay(self, a: float, scv: float = 0.0) -> None:
        """A pure delay with unlimited parallelism (fabric, cache acknowledgement, turnaround)."""
        self.lin.add(a, 0.0, scv)
        if scv:
            self.calls.append(None)

    def wait_for(self, choice: Choice) -> None:
        """Wait at ``choice`` without being served there (a read waiting out a program on its die)."""
        terms = self.lin.terms
        for group, p in choice:
            terms[group.index] = terms.get(group.index, 0.0) + p
        self.calls.append(None)

    def charge(self, choice: Choice, time_of: Callable[[float], float], scv: float = 0.0) -> None:
        """Occupy ``choice`` for ``time_of(bytes)`` us without queueing there or adding latency (a die programming)."""
        for group, p in choice:
            self.charges.append((group, p, time_of, scv))

    def sized_delay(self, time_of: Callable[[float], float], scv: float = 0.0) -> None:
        """A pure delay of ``time_of(bytes)`` us (a NAND die held for a read or a program)."""
        self.lin.sized += ((time_of, scv, 1.0),)
        self.calls.append(None)

    def hold(self, choice: Choice, a: float, scv: float = 0.0, time_of: Callable[[float], float] | None = None,
             background: bool = False) -> None:
        """Wait for a slot of a concurrency limit, keep it for a pure delay of ``a`` us (or ``time_of(bytes)``)
        and give it back: ``acquire``, ``delay``, ``release`` in one (a NAND die held for a read).

        With ``background`` the delay runs behind the route, which moves on once it has the slot
        (a die programming a destaged write): the slot is held, the route's latency is not longer.
        """
        level = self._depth + len(self._open)
        span = Lin()
        if time_of is None:
            span.add(a, 0.0, scv)
        else:
            span.sized = ((time_of, scv, 1.0),)
        terms = self.lin.terms
        spans = self.spans
        for group, p in choice:
            terms[group.index] = terms.get(group.index, 0.0) + p
            if level > group.depth:
                group.depth = level
            if background:
                group.behind_ack = True
            spans.append((group, p, span))
        if background:
            return
        if time_of is None:
            self.delay(a, scv)
        else:
            self.sized_delay(time_of, scv)

    def acquire(self, choice: Choice, wait_at: Choice | None = None) -> None:
        """Wait for a slot of a concurrency limit; the span runs until ``release``.

        ``wait_at``: the wait is that of these views of ``choice`` (``Group.view_of``), the load ``choice``'s.
        """
        level = self._depth + len(self._open)
        lin = self.lin
        terms = lin.terms
        for group, _ in choice:
            if level > group.depth:
                group.depth = level
        for group, p in wait_at or choice:
            terms[group.index] = terms.get(group.index, 0.0) + p
        self._open.append((choice, (lin.a, lin.b, lin.c, lin.d, lin.e, dict(terms), lin.sized)))

    def release(self, background: Path | None = None) -> None:
        """Give the innermost slot back; ``background`` work (a destage) extends the hold but not the latency."""
        choice, (a, b, c, d, e, before, sized) = self._open.pop()
        lin = self.lin
        span = Lin(lin.a - a, lin.b - b, lin.c - c, lin.d - d, lin.e - e,
                   {gi: held for gi, n in lin.terms.items() if (held := n - before.get(gi, 0.0)) > 1e-12},
                   lin.sized[len(sized):])
        if background is not None:
            span = span.plus(background.lin)
            self.visits.extend(background.visits)
            self.spans.extend(background.spans)
            self.charges.extend(background.charges)
            for group, _, _ in background.spans:
                group.behind_ack = True
        for group, p in choice:
            self.spans.append((group, p, span))

    def part(self) -> Path:
        """An empty path that starts where this one is now (inside the limits it holds), for ``include`` or ``release``."""
        return Path(self._depth + len(self._open))

    def include(self, part: Path, times: int) -> None:
        """Run ``part`` (from ``part()``) ``times`` times one after another, each independent of the others.

        Its latency, variance and waits count ``times`` over; its visits and limit spans load
        the groups ``times`` over (a channel program's commands, one per page).
        """
        k = float(times)
        lin, o = self.lin, part.lin
        lin.a += k * o.a
        lin.b += k * o.b
        lin.c += k * o.c
        lin.d += k * o.d
        lin.e += k * o.e
        terms = lin.terms
        for gi, c in o.terms.items():
            terms[gi] = terms.get(gi, 0.0) + k * c
        if o.sized:
            lin.sized += tuple([(time_of, scv, k * n) for time_of, scv, n in o.sized])
        self.visits.extend([(group, k * p, a, b, scv) for group, p, a, b, scv in part.visits])
        self.spans.extend([(group, k * p, span) for group, p, span in part.spans])
        self.charges.extend([(group, k * p, time_of, scv) for group, p, time_of, scv in part.charges])
        # the visits in route order: once, or twice so that the last visit is seen before the first
        self.calls.extend(part.calls * min(times, 2))

    def add_loads(self, weight: float, n: float) -> None:
        """Charge this path's visits and holds for I/Os of ``n`` bytes to the groups, ``weight`` times per logical I/O."""
        for group, p, a, b, scv in self.visits:
            w = weight * p
            svc = a + b * n
            group.visits += w
            group.work += w * svc
            group.work2 += w * svc * svc * (1.0 + scv)
        for group, p, time_of, scv in self.charges:
            w = weight * p
            svc = time_of(n)
            group.visits += w
            group.work += w * svc
            group.charged += w * svc
            group.work2 += w * svc * svc * (1.0 + scv)
        for group, p, span in self.spans:
            w = weight * p
            group.visits += w
            key = (id(span), n)
            holding = group.holding
            entry = holding.get(key)
            holding[key] = (w, span, n) if entry is None else (entry[0] + w, span, n)


ChildKind = list[tuple[float, Path]]
"""A device I/O kind as a mixture of paths (a SAN read hits the cache or goes to the back end)."""
Phase = tuple[tuple[int, int, float], ...]
"""Children started together: (count, device op, bytes each); the op's ``ChildKind`` is their route."""
Variants = tuple[tuple[float, tuple[Phase, ...]], ...]
"""The volume layer's ways of splitting one logical I/O: (probability, phases)."""


class LogicalKind(NamedTuple):
    """Logical I/Os of one op and size: probability per logical I/O and the volume layer's variants."""

    op: int
    prob: float
    nbytes: float
    variants: Variants
    serial: Variants | None = None
    """The variants as latency sees them when siblings must share members (else ``variants``)."""


PhaseRow = tuple[int, int, float, tuple[tuple[int, float, float], ...] | None, float]
"""A phase as the solver reads it: (child index, count, e_k) of a phase of identical children, else
the children's (index, e_k, v_k) for Clark's maximum; and the fan-in latency (``Network._fan_in``)."""
KindTable = tuple[tuple[int, float, tuple[tuple[float, tuple[PhaseRow, ...]], ...]], ...]
"""(op, probability, ((variant probability, phase rows), ...)) of every logical kind."""


@dataclass(frozen=True)
class KindPlan:
    """A workload mix on a volume layout: its logical kinds and how the solver reads them.

    Nothing in it depends on the hardware (``sim/analytic/paths.py`` builds it once per layout,
    member count, chunk and mix); a network supplies the route of each device op.
    """

    kinds: tuple[LogicalKind, ...]
    ops: tuple[int, ...]
    """Device ops the kinds use, in the solver's order."""
    children: tuple[tuple[int, float], ...]
    """(device op, bytes): the child kinds whose latency the solver computes, in its order."""
    width: int
    """The most pieces any phase has."""
    table: KindTable
    """The solver's table, fan-in latencies 0."""
    fan_in: tuple[tuple[int, int, int], ...]
    """(kind, variant, phase) of the table rows whose siblings may meet at a shared server."""
    loads: tuple[tuple[int, float, float], ...]
    """(device op, bytes, device I/Os per logical I/O) over every kind, variant and phase: what loads the groups."""
    op_prob: tuple[float, float]
    """Share of the logical I/Os that are reads and writes."""


class Evaluation:
    """The network at one logical throughput."""

    __slots__ = ("holding", "latency", "overloaded", "p_wait", "waits", "x")

    def __init__(self, x: float, latency: list[float], waits: list[float], p_wait: list[float], holding: list[float],
                 overloaded: bool) -> None:
        self.x = x
        self.latency = latency
        self.waits = waits
        self.p_wait = p_wait
        self.holding = holding
        self.overloaded = overloaded


Spans = list[tuple[float, float, float, tuple[tuple[int, float], ...]]]
"""A limit's holding time as a mixture: (share, const mean, const variance, wait terms)."""


class Network:
    """Groups, paths and logical kinds of one scenario, and the solvers."""

    def __init__(self) -> None:
        self.groups: list[Group] = []
        self.kinds: tuple[LogicalKind, ...] = ()
        self.op_prob = [0.0, 0.0]
        self.plan: KindPlan | None = None
        self.child_of: dict[int, ChildKind] = {}
        """Device op -> its route."""
        self.sized: dict[tuple[int, float], ChildKind] | None = None
        """(Device op, bytes) -> its route, where routes depend on the size (else None)."""
        self.templates: list[ChildKind] = []
        self._child_list: list[tuple[ChildKind, float]] = []
        self._zero: Evaluation | None = None
        self._structured = False
        self._capacities: list[float] = []
        self.program_work: dict[int, float] = {}
        """Per die station (index): the work of the programs that share its servers (``Group.shares_with``)."""
        self._shared: list[tuple[tuple[int, float, float, float, int, float, float], float]] = []
        self._nested: dict[int, set[int]] = {}
        """Station index -> the limits whose every hold contains all its visits."""
        self._never_wait: set[int] = set()
        self._locks: list[tuple[int, float, float, float, float, float, float, float]] = []
        """Program-lock groups: (index, die-time programming per die per unit of x, half its second moment per
        die per unit of x, E[R^2] of the rest of a program)."""
        self._views: dict[int, tuple[tuple[int, int], ...]] = {}
        """Limit index -> its wait-only views as (index, instances pooled)."""
        self._kind_table: KindTable | None = None
        self._hold_rows: dict[int, list[tuple[float, float, float, dict[int, float]]]] = {}
        """Limit index -> its holds as (share, zero-load mean, variance, wait terms), every population alike."""
        self._zero_hold: dict[int, float] = {}
        """Limit index -> mean holding time with no queueing anywhere."""
        self._inside: dict[int, dict[int, float]] = {}
        """Limit index -> visits per logical I/O of each group within its holds."""
        self._pipelines: dict[int, list[tuple[float, float, float, int, float]]] = {}
        """Limit index -> its pipeline stations (``_pipeline``), found once the limit can make jobs wait."""
        self._pipeline_members: dict[int, set[int]] = {}
        """Limit index -> the group indices of its pipeline stations."""
        self.members = 1
        """Volume members (set by the compiler)."""
        self._finished: tuple[float, int] | None = None
        """The population and fan-out width ``finish`` last fixed (None before the first)."""
        self._fill: tuple[int, float] | None = None
        """``capacities``: the limit whose slots fill first and the throughput at which they do (found once per network)."""
        self._filled: list[float] | None = None
        """``capacities`` with that limit's capacity at that throughput."""
        self.filled_limit = -1
        """The limit whose slots the last overloaded evaluation found full (its index; -1 when none was)."""

    def add_kinds(self, plan: KindPlan, child_of: dict[int, ChildKind],
                  sized: dict[tuple[int, float], ChildKind] | None = None) -> None:
        """Take the logical kinds of ``plan``, device op ``o`` routed as ``child_of[o]``, and charge their loads.

        ``sized``: routes per (device op, bytes) instead, for attachments whose route changes with the
        transfer size (a z/VM channel program runs one device command per page).
        """
        self.plan = plan
        self.kinds = plan.kinds
        self.child_of = child_of
        self.sized = sized
        route = self.route
        if sized:
            self.templates = list({id(ck): ck for ck in sized.values()}.values())
        else:
            self.templates = [child_of[o] for o in plan.ops]
        self._child_list = [(route(o, n), n) for o, n in plan.children]
        self.op_prob = list(plan.op_prob)
        for o, n, weight in plan.loads:
            for cprob, path in route(o, n):
                path.add_loads(weight * cprob, n)

    def route(self, o: int, n: float) -> ChildKind:
        """The route of a device I/O of op ``o`` and ``n`` bytes."""
        sized = self.sized
        return sized[(o, n)] if sized else self.child_of[o]

    # -- compile-time facts ---------------------------------------------------------------------
    def finish(self, population: float, max_width: int) -> None:
        """Fix populations and limits, and the evaluation order (stations, then limits innermost first).

        A closed workload's N jobs can all reach a shared instance; with closed affinity
        (a JBOD job keeps its member) only the jobs of the members it serves. Siblings of
        a split (both copies of a mirrored write) can meet at an instance serving several
        members. A station whose every visit lies inside a concurrency limit never holds
        more than the limit's slots; background work is bounded only by its limit.
        """
        if not self._structured:
            self._structure()
        self._finished = (population, max_width)
        for g in self.groups:
            if population == INF or g.background or g.behind_ack:
                g.population = n = g.limit
            else:
                g.population = n = min(g.limit, population * g.reach * max(1, min(max_width, g.cover)))
            g.seen = (n - 1.0) / n if n != INF else 1.0
        self._compile()

    def _structure(self) -> None:
        """What does not depend on the workload's population: background groups, limits, capacities."""
        foreground: set[int] = set()
        for ck in self.templates:
            for _, p in ck:
                foreground.update(p.lin.terms)
        groups = self.groups
        caps = []
        for g in groups:
            if g.program_locks or g.view_of >= 0:
                caps.append(INF)  # a read waits out a program (or a view waits): the pool carries the capacity
                continue
            if not g.pool:
                g.background = g.index not in foreground
                demand = g.work / len(g.names)
                free = 1.0 - g.background_util if g.background_util else 1.0
                caps.append(g.servers * free / demand if demand > 0 and free > 0 else (0.0 if demand > 0 else INF))
                continue
            inside: dict[int, float] = {}
            entries = g.holding.values()
            total = 0.0
            for w, _, _ in entries:
                total += w
            mean = 0.0
            rows = []
            for w, span, n in entries:
                terms = span.terms
                for gi, c in terms.items():
                    inside[gi] = inside.get(gi, 0.0) + w * c
                if span.sized:
                    m, var = span.at(n)
                else:
                    m = span.a + span.b * n  # Lin.at, inline
                    var = span.c + (span.d + span.e * n) * n
                mean += w * m
                rows.append((w / total, m, var if var > 0.0 else 0.0, terms))
            hold = self._zero_hold[g.index] = mean / total if total > 0 else 0.0
            demand = hold * g.visits / len(g.names)
            caps.append(g.servers / demand if demand > 0 else INF)
            self._hold_rows[g.index] = rows
            self._inside[g.index] = inside
            for gi, v in inside.items():
                h = groups[gi]
                if not h.pool and v >= 0.999 * h.visits:
                    h.limit = min(h.limit, g.servers * max(1.0, h.cover / g.cover))
                    self._nested.setdefault(gi, set()).add(g.index)
        self._program_capacities(caps)
        self._capacities = caps
        self._never_wait = self._smoothed_tandems()
        self._structured = True

    def _program_capacities(self, caps: list[float]) -> None:
        """Into ``caps``: a die station's capacity counts the programs that share its servers (``Group.shares_with``)."""
        groups = self.groups
        shared = self.program_work = {}
        for g in groups:
            if g.program_locks and g.shares_with >= 0 and g.work > 0:
                h = groups[g.shares_with]
                shared[h.index] = g.work
                demand = (h.work + g.work) / len(h.names)
                caps[h.index] = h.servers / demand if demand > 0 else INF

    def _smoothed_tandems(self) -> set[int]:
        """Single servers that never queue: fed only by one single server that is never faster.

        A FIFO single server with deterministic service releases jobs at least one service
        time apart; a deterministic single server right behind it (constant delays between, the
        same instances, e.g. a drive's PCIe link behind its read channel) whose longest
        service is no longer than the feeder's shortest never finds a job ahead.
        """
        sizes = [n for _, n in self._child_list] or [0.0]
        lo, hi = min(sizes), max(sizes)
        feeder_of: dict[int, int] = {}
        failed: set[int] = set()
        for ck in self.templates:
            for _, path in ck:
                prev: Visit | None = None  # the visit just before (constant delays and limits may lie between)
                for this in path.calls:
                    if this is None:
                        prev = None
                        continue
                    choice, a, b, scv = this
                    if prev is None or scv != 0.0 or prev[3] != 0.0 or len(prev[0]) != len(choice) \
                            or max(a + b * lo, a + b * hi) > min(prev[1] + prev[2] * lo, prev[1] + prev[2] * hi):
                        for g, _ in choice:
                            failed.add(g.index)
                    else:
                        for (g, _), (feeder, _) in zip(choice, prev[0], strict=True):
                            gi = g.index
                            if g.servers != 1 or feeder.servers != 1 or len(feeder.names) != len(g.names) \
                                    or feeder_of.setdefault(gi, feeder.index) != feeder.index:
                                failed.add(gi)
                    prev = this
        groups = self.groups
        return {gi for gi in feeder_of if gi not in failed and not groups[gi].pool}

    def _compile(self) -> None:
        """Flatten groups, spans and paths into tuples for the solver's inner loop.

        Only centres that can ever make a job wait take part (a closed population no larger
        than the servers never queues); a limit nested in another comes first, because its
        wait is part of the outer one's holding time.
        """
        groups = self.groups
        self._seen = [g.seen for g in groups]
        stations, limits, locks, views = self._centres()
        waiting = {t[0] for t in stations} | {t[0] for t in locks} | {vi for v in views.values() for vi, _ in v}
        self._locks = locks
        self._views = {i: tuple(v) for i, v in views.items()}
        pools = []
        limits.sort(key=lambda g: -g.depth)
        for g in limits:
            # the wait terms of one span (or path, below) are the same for every transfer size
            waited: dict[int, tuple[tuple[int, float], ...]] = {}
            spans = []
            for share, m, var, terms in self._hold_rows[g.index]:
                kept = waited.get(id(terms))
                if kept is None:
                    kept = waited[id(terms)] = tuple([(gi, c) for gi, c in terms.items() if gi in waiting])
                spans.append((share, m, var, kept))
            if g.population > g.servers:
                waiting.add(g.index)
                pipeline = self._pipelines.get(g.index)
                if pipeline is None:
                    inside = self._inside[g.index]
                    members: set[int] = set()
                    pipeline = self._pipelines[g.index] = self._pipeline(g, inside, members) if inside else []
                    self._pipeline_members[g.index] = members
                # the hold's floor: its terms less the waits at the pipeline stations (the queue the slots bound)
                inner = self._pipeline_members.get(g.index, set())
                floors = tuple([(share, m, tuple([(gi, c) for gi, c in terms if gi not in inner])) for share, m, _, terms in spans])
            else:
                pipeline = []  # a limit no job waits for needs no blocking estimate
                floors = ()
            pools.append((g.index, g.visits / len(g.names), g.servers, g.ca2, g.population, spans, pipeline, floors))
        self._stations = stations
        self._split_shared()
        self._pools = [p for p in pools if p[4] > p[2]]
        self._all_pools = pools
        self._pool_spans: dict[int, Spans] = {p[0]: p[5] for p in pools}
        self._children = self._child_rows(waiting)
        if self._kind_table is None:
            self._kind_table = self._with_fan_in()
        self._kinds = self._kind_table
        # the zero-load evaluation (``self._zero``) reads nothing that depends on the population: it is kept

    def _centres(self) -> tuple[list[tuple[int, float, float, float, int, float, float]], list[Group],
                                list[tuple[int, float, float, float, float, float, float, float]], dict[int, list[tuple[int, int]]]]:
        """``_compile``'s centres: the stations that can make a job wait (index, visits per instance, mean,
        scv, servers, ca2, population), the concurrency limits with visits, the program locks and the
        wait-only views of each limit."""
        groups = self.groups
        never_wait = self._never_wait
        stations = []
        limits = []
        locks: list[tuple[int, float, float, float, float, float, float, float]] = []
        views: dict[int, list[tuple[int, int]]] = {}
        for g in groups:
            if g.view_of >= 0:
                views.setdefault(g.view_of, []).append((g.index, g.view_k))
                continue
            if g.program_locks:
                if g.work > 0:
                    per_die = len(g.names) * g.servers
                    mean = g.work / g.visits
                    moment = g.work2 / g.visits / (mean * mean)  # E[T^2] / E[T]^2 = 1 + scv
                    # the rest of a program met at random: E[R] = E[T^2] / 2E[T], E[R^2] = E[T^3] / 3E[T]
                    # (lognormal programs: E[T^3] = E[T]^3 (1 + scv)^3)
                    # a die station's reads (``shares_with``): their demand per die (reads that come during a program
                    # queue behind it and lengthen the wait of the reads after them)
                    reads = groups[g.shares_with].work / len(g.names) if g.shares_with >= 0 else 0.0
                    # a read spanning k pages on k dies (``DieGroups``: its first page a visit, the others a charge)
                    # finds the write point's programs on any of them and waits for the longest rest (``slowest_rest_us``)
                    die = groups[g.shares_with] if g.shares_with >= 0 else g
                    first = die.work - die.charged
                    pages = die.work / first if g.idle_programs and die.charged > 0 and first > 0 else 1.0
                    locks.append((g.index, g.work / per_die, 0.5 * g.work2 / per_die, mean * mean * moment ** 3 / 3.0, reads,
                                  pages, mean, math.sqrt(max(0.0, moment - 1.0))))
                continue
            if g.pool:
                if g.visits > 0:
                    limits.append(g)
                continue
            if g.visits <= 0 or g.population <= g.servers or g.index in never_wait:
                continue
            mean = g.work / g.visits
            scv = max(0.0, g.work2 / g.visits / (mean * mean) - 1.0) if mean > 0 else 0.0
            stations.append((g.index, g.visits / len(g.names), mean, scv, g.servers, g.ca2, g.population))
        return stations, limits, locks, views

    def _child_rows(self, waiting: set[int]) -> list[list[tuple[float, float, float, tuple[tuple[int, float], ...]]]]:
        """``_compile``'s device children: per child kind and path, (probability, zero-load mean and variance,
        the wait terms of the centres in ``waiting``)."""
        children = []
        waited: dict[int, tuple[tuple[int, float], ...]] = {}
        for child, n in self._child_list:
            row = []
            for prob, path in child:
                lin = path.lin
                if lin.sized:
                    mean, var = lin.at(n)
                else:
                    mean = lin.a + lin.b * n  # Lin.at, inline
                    var = lin.c + (lin.d + lin.e * n) * n
                if not var > 0.0:
                    var = 0.0
                kept = waited.get(id(lin))
                if kept is None:
                    kept = waited[id(lin)] = tuple([(gi, c) for gi, c in lin.terms.items() if gi in waiting])
                row.append((prob, mean, var, kept))
            children.append(row)
        return children

    def _with_fan_in(self) -> KindTable:
        """The plan's table with the fan-in latency of the phases whose siblings may share a server."""
        plan = self.plan
        assert plan is not None
        if not plan.fan_in:
            return plan.table
        table = [(op, prob, [(vprob, list(rows)) for vprob, rows in variants]) for op, prob, variants in plan.table]
        single_servers: dict[tuple[int, float], list[tuple[int, float, float, int]]] = {}
        for k, v, p in plan.fan_in:
            kind = plan.kinds[k]
            fan_in = self._fan_in((kind.serial or kind.variants)[v][1][p], single_servers)
            if fan_in:
                ci, count, e_k, siblings, _ = table[k][2][v][1][p]
                table[k][2][v][1][p] = (ci, count, e_k, siblings, fan_in)
        return tuple([(op, prob, tuple([(vprob, tuple(rows)) for vprob, rows in variants])) for op, prob, variants in table])

    def _pipeline(self, g: Group, inside: dict[int, float], members: set[int]) -> list[tuple[float, float, float, int, float]]:
        """Stations with fewer servers than the limit has slots, inside every hold, serving no other limit's jobs
        (their indices into ``members``).

        Their queue is what keeps the slots held (a write cache emptied by one destage
        channel), so the limit blocks when c slots' worth of jobs queue there: the wait for
        a slot is about that station's own wait times rho^(c - c_station) (M/M/c's geometric
        tail; exact for M/M/1 with c = 1). ``inside``: visits per logical I/O of each group
        within the limit's holds. Returns (visits per instance, mean, scv, servers, ca2).
        """
        out = []
        for gi, v in inside.items():
            h = self.groups[gi]
            # a program lock is no queue of the limit's jobs: the programs run behind the acknowledgement, outside
            # every hold, and a read only waits out the rest of one (that wait does not shrink as the slots fill)
            if h.pool or h.program_locks or h.servers >= g.servers or h.cover > g.cover or v < 0.999 * h.visits or h.work <= 0:
                continue
            mean = h.work / h.visits
            scv = max(0.0, h.work2 / h.visits / (mean * mean) - 1.0)
            out.append((h.visits / len(h.names), mean, scv, h.servers, h.ca2))
            members.add(gi)
        return out

    def _fan_in(self, phase: Phase, single_servers: dict[tuple[int, float], list[tuple[int, float, float, int]]]) -> float:
        """Extra latency of a phase whose siblings cross the same single server one after another.

        Siblings of a split start together; at a single server they share (one front-end
        port, one adapter uplink) the last of them finishes after all their services, not
        after the longest: sum - max. Taken with the chance that they meet there: 1 for a
        single instance; for instances chosen by volume member, the chance that two distinct
        members map to the same instance; for round-robin ports, only when the siblings
        outnumber the ports. ``single_servers``: (device op, bytes) -> ``_meeting_servers``, filled on
        first use (phases share their children).
        """
        k = sum([count for count, _, _ in phase])
        if k < 2:
            return 0.0
        service: dict[int, list[float]] = {}
        shares: dict[int, float] = {}
        for count, o, n in phase:
            visits = single_servers.get((o, n))
            if visits is None:
                visits = single_servers[(o, n)] = self._meeting_servers(o, n)
            for gi, t, share, ports in visits:
                if ports and k <= ports:
                    continue  # round-robin ports: siblings no more than the ports never meet
                times = service.get(gi)
                if times is None:
                    service[gi] = times = []
                    shares[gi] = share
                times.extend([t] * count)
        extra = 0.0
        for gi, times in service.items():
            if len(times) > 1:
                extra += shares[gi] * (sum(times) - max(times))
        return extra

    def _meeting_servers(self, o: int, n: float) -> list[tuple[int, float, float, int]]:
        """The single servers on the route of a device I/O of op ``o`` and ``n`` bytes where siblings may meet:
        (group index, service us, chance that two siblings meet there, ports when taken round-robin else 0)."""
        members = self.members or 1
        out = []
        for cprob, path in self.route(o, n):
            for g, p, a, b, _ in path.visits:
                if g.servers != 1 or g.pool or g.background:
                    continue
                if g.instances == 1:
                    share, ports = 1.0, 0
                elif g.round_robin:
                    share, ports = 1.0, g.instances
                else:
                    share, ports = ((g.cover - 1) / (members - 1) if members > 1 else 1.0), 0
                if share > 0:
                    out.append((g.index, cprob * p * (a + b * n), share, ports))
        return out

    def exact_arrival_fractions(self, population: int, think_us: float, r_min: float, x_max: float, max_population: int = 128) -> None:
        """Replace Schweitzer's (N - 1) / N by exact MVA on the network's skeleton (small N only).

        The skeleton keeps every foreground station and concurrency limit where jobs can queue
        (a c-server station as Seidmann's single server of demand D / c plus a delay of
        D (c - 1) / c; a limit as a station whose service is its zero-load hold, replacing the
        stations inside it when its demand is the larger) and folds the rest of the zero-load
        latency and the think time into a delay. Its exact solution at N gives, per centre, the
        share of the queue an arriving job finds, Q(N - 1) / Q(N), which the full model then
        uses: exact for product-form networks, and the largest part of Schweitzer's error near
        the knee elsewhere. Centres only some of the jobs reach (closed affinity) keep
        Schweitzer's factor. Far from the knee N* = (Rmin + Z) Xmax (below N*/4 or above 4 N*)
        Schweitzer is close and the skeleton is skipped.
        """
        knee = (r_min + think_us) * x_max
        if population < 2 or population > max_population or not 0.25 * knee <= population <= 4.0 * knee:
            return
        candidates = [g for g in self.groups if not g.background and not g.program_locks and g.view_of < 0 and g.visits > 0 and g.reach == 1.0
                      and g.population >= population and g.population > g.servers]
        demand = {g.index: (self.zero_load_holding(g) * g.visits if g.pool else g.work) / len(g.names) / g.servers
                  for g in candidates}
        # a limit stands for the stations inside it when it is the tighter of the two
        limits = set()
        for g in candidates:
            if g.pool:
                inner = [demand[i] for i, outer in self._nested.items() if g.index in outer and i in demand]
                if not inner or demand[g.index] >= max(inner):
                    limits.add(g.index)
        keep = [(g, demand[g.index]) for g in candidates
                if demand[g.index] > 0 and (g.index in limits or not g.pool)
                and not (not g.pool and self._nested.get(g.index, set()) & limits)]
        if not keep:
            return
        biggest = max(d for _, d in keep)
        keep = [(g, d) for g, d in keep if d >= 1e-3 * biggest]
        delay = think_us + r_min - sum(d * len(g.names) for g, d in keep)
        fractions = mva_arrival_fractions([d for _, d in keep], [len(g.names) for g, _ in keep], max(0.0, delay), population)
        for (g, _), f in zip(keep, fractions, strict=True):
            g.seen = f
            self._seen[g.index] = f

    def zero_load_holding(self, g: Group) -> float:
        """Mean holding time of a limit with no queueing anywhere."""
        if not self._structured:
            self._structure()
        return self._zero_hold.get(g.index, 0.0)

    def capacities(self) -> list[float]:
        """Logical I/Os per us each group can sustain: servers / demand per instance (limits: slots / hold, and
        where the hold grows with the load, the throughput at which the slots fill: ``_filling_limit``, for a limit
        the workload's population can fill: more jobs than slots)."""
        if not self._structured:
            self._structure()
        if self._finished is None:
            return self._capacities  # no population fixed yet: the zero-load holds
        if self._fill is None:
            self._fill = self._filling_limit(self._capacities, *self._finished)
        limit, rate = self._fill
        if limit < 0 or self.groups[limit].population <= self.groups[limit].servers:
            return self._capacities
        if self._filled is None:
            self._filled = list(self._capacities)
            self._filled[limit] = rate
        return self._filled

    def _filling_limit(self, caps: list[float], population: float, max_width: int) -> tuple[int, float]:
        """The limit whose slots fill first as the load grows and the throughput at which they do, where that is below
        every zero-load capacity in ``caps`` ((-1, inf) where none does).

        A limit's slots are held for its holding time, which includes the waits at the stations and die programs
        inside it (a z/VM subchannel is held while its channel program's pages wait at the drive's dies, and a read
        there waits out the programs of the writes): slots / zero-load hold overstates what the slots pass. The
        slots fill where slots = X x visits x hold(X), with the inner waits at X as the open network has them (any
        population large enough to fill the slots: the bound of a closed loop as its jobs grow); found by
        bisection on the network's own verdict (``evaluate`` overloaded), to ``FILL_RESOLUTION`` below the
        zero-load bound, which it keeps when a limit fills only because a station inside it saturates there.
        """
        none = (-1, INF)
        x0 = min(caps) if caps else INF
        if not 0.0 < x0 < INF or not any(self._inside.values()):
            return none
        if population != INF:
            self.finish(INF, max_width)  # the open network: every limit's slots can fill
        try:
            hi = x0 * (1.0 - 1e-9)
            self.filled_limit = -1
            if not self.evaluate(hi).overloaded:
                return none
            lo = 0.0
            limit = self.filled_limit
            while hi - lo > 1e-6 * hi:
                mid = 0.5 * (lo + hi)
                self.filled_limit = -1
                if self.evaluate(mid).overloaded:
                    hi, limit = mid, self.filled_limit
                else:
                    lo = mid
        finally:
            if population != INF:
                self.finish(population, max_width)
        if lo >= x0 * (1.0 - FILL_RESOLUTION) or limit < 0:
            return none
        return limit, lo

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, x: float, burstiness: float = 1.0) -> Evaluation:
        """Waits, holding times and per-op latency at logical throughput ``x`` (per us).

        ``burstiness`` multiplies every centre's arrival variability (the index of dispersion
        of a bursty workload's arrivals at the queues' time scale; 1 for Poisson).
        """
        n = len(self.groups)
        if x <= 0.0:
            # no load: no waits anywhere (adding c x 0 to a mean or variance changes nothing)
            if self._zero is None:
                self._zero = Evaluation(x=x, latency=self._per_op(self._zero_load_moments()), waits=[0.0] * n,
                                        p_wait=[0.0] * n, holding=[0.0] * n, overloaded=False)
            return self._zero
        waits = [0.0] * n
        wvar = [0.0] * n
        p_wait = [0.0] * n
        holding = [0.0] * n
        for i, busy, residual, residual2, reads, pages, program_us, program_cv in self._locks:
            # a read finds its die programming with probability rho and waits out the rest of the program (and, on a
            # die station, the reads that came during it before this one: 1 / (1 - the die's read utilization));
            # a read of k pages on k dies, the longest rest of the programs it finds (``DieGroups``, the write point's)
            rho = x * busy
            wait = x * residual if pages <= 1.0 else slowest_rest_us(pages, min(1.0, rho), program_us, program_cv)
            if reads > 0.0:
                rho_r = x * reads
                wait = wait / (1.0 - rho_r) if rho_r < 1.0 else INF
            waits[i] = wait
            w2 = rho * residual2 - wait * wait
            wvar[i] = w2 if w2 > 0.0 else 0.0
            p_wait[i] = rho if rho < 1.0 else 1.0
        if self._shared and not self._shared_waits(x, burstiness, waits, wvar, p_wait):
            return Evaluation(x, [INF, INF], waits, p_wait, holding, True)
        if not self._station_waits(x, burstiness, waits, wvar, p_wait) or not self._pool_waits(x, burstiness, waits, wvar, p_wait, holding):
            return Evaluation(x, [INF, INF], waits, p_wait, holding, True)
        return Evaluation(x, self._latency(waits, wvar), waits, p_wait, holding, False)

    def _station_waits(self, x: float, burstiness: float, waits: list[float], wvar: list[float], p_wait: list[float]) -> bool:
        """Waits at the stations (``_stations``) at throughput ``x``; False when one is overloaded."""
        seen = self._seen
        for i, visits, mean, scv, servers, ca2, population in self._stations:
            if servers == 1:
                # M/G/1 (Pollaczek-Khinchine with the Allen-Cunneen arrival factor), inline: most stations
                rho = x * visits * mean * seen[i]
                if rho >= 1.0:
                    p_wait[i] = 1.0
                    return False
                if rho <= 0.0:
                    continue
                variability = ca2 * burstiness + scv
                wait = rho * mean * 0.5 * variability / (1.0 - rho)
                if population != INF:
                    cap = (population - 1.0) * mean * max(1.0, 0.5 * variability)
                    if wait > cap:
                        wait = cap
                waits[i] = wait
                wvar[i] = wait * wait * (2.0 / rho - 1.0)
                p_wait[i] = rho
                continue
            wait, w2, pw = queue_wait(x * visits, mean, scv, servers, ca2 * burstiness, population, seen[i])
            if wait == INF:
                p_wait[i] = 1.0
                return False
            waits[i] = wait
            wvar[i] = w2 - wait * wait if w2 > wait * wait else 0.0
            p_wait[i] = pw
        return True

    def _pool_waits(self, x: float, burstiness: float, waits: list[float], wvar: list[float], p_wait: list[float],
                    holding: list[float]) -> bool:
        """Holding times and waits at the concurrency limits (``_pools``), inner limits first, from the waits
        found so far; False when one is overloaded."""
        seen = self._seen
        for i, visits, servers, ca2, population, spans, pipeline, floors in self._pools:
            h1 = 0.0
            h2 = 0.0
            for share, m, v, terms in spans:
                for gi, c in terms:
                    m += c * waits[gi]
                    v += c * wvar[gi]
                h1 += share * m
                h2 += share * (v + m * m)
            holding[i] = h1
            scv = h2 / (h1 * h1) - 1.0 if h1 > 0 else 0.0
            wait, w2, pw = queue_wait(x * visits, h1, scv if scv > 0 else 0.0, servers, ca2 * burstiness, population, seen[i])
            if pipeline:
                floor = self._floor(floors, waits) if wait == INF else 0.0  # open or closed alike
                wait, w2, pw = self._blocking(wait, w2, pw, x, servers, pipeline, burstiness, population, seen[i])
                if floor > 0.0:
                    # slots x hold looks overloaded: the blocking estimate stands for the pipeline's queue (the one part
                    # of the hold that shrinks as the slots fill), but the slots are held at least the rest (the
                    # floor): a slot's wait is at least the floor's, and overloaded where the floor fills the slots
                    f_wait, f_w2, f_pw = queue_wait(x * visits, floor, scv if scv > 0 else 0.0, servers, ca2 * burstiness, population, seen[i])
                    if f_wait > wait:
                        wait, w2, pw = f_wait, f_w2, f_pw
            if wait == INF:
                p_wait[i] = 1.0
                self.filled_limit = i
                return False
            waits[i] = wait
            wvar[i] = w2 - wait * wait if w2 > wait * wait else 0.0
            p_wait[i] = pw
            if self._views and i in self._views:
                for vi, k in self._views[i]:
                    self._view_wait(vi, k, x, visits, h1, scv if scv > 0 else 0.0, servers, ca2, burstiness, population,
                                    seen[i], pipeline, waits, wvar, p_wait)
        return True

    def _split_shared(self) -> None:
        """Move the stations a rebuild shares (``Group.background_util``) to ``_shared`` with that utilization."""
        everyone = self.groups
        self._shared = [(t, everyone[t[0]].background_util) for t in self._stations if t[2] > 0 and everyone[t[0]].background_util > 0]
        if self._shared:
            self._stations = [t for t in self._stations if not (t[2] > 0 and everyone[t[0]].background_util > 0)]

    def _shared_waits(self, x: float, burstiness: float, waits: list[float], wvar: list[float], p_wait: list[float]) -> bool:
        """Waits at stations a rebuild shares: its work an open class of the same service arriving at
        utilization u (u x servers / mean per us) beside the logical I/Os. False when one is overloaded."""
        seen = self._seen
        for (i, visits, mean, scv, servers, ca2, population), u in self._shared:
            wait, w2, pw = queue_wait(x * visits * seen[i] + u * servers / mean, mean, scv, servers, ca2 * burstiness, population)
            if wait == INF:
                p_wait[i] = 1.0
                return False
            waits[i], wvar[i], p_wait[i] = wait, max(0.0, w2 - wait * wait), pw
        return True

    @staticmethod
    def _floor(floors: tuple[tuple[float, float, tuple[tuple[int, float], ...]], ...], waits: list[float]) -> float:
        """A limit's mean hold floor: its holds less the waits at its pipeline stations (the least the holds can
        shrink to as the slots fill)."""
        floor = 0.0
        for share, m, terms in floors:
            for gi, c in terms:
                m += c * waits[gi]
            floor += share * m
        return floor

    @staticmethod
    def _blocking(wait: float, w2: float, pw: float, x: float, slots: int, pipeline: list[tuple[float, float, float, int, float]],
                  burstiness: float, population: float, seen: float) -> tuple[float, float, float]:
        """A limit's (wait, E[W^2], P(wait)) with its pipeline's blocking estimate: the slots are held while
        jobs queue at the pipeline station, so that queue's wait x rho^(slots - its servers) stands where it
        is the larger (also where slots x hold looks overloaded)."""
        best = best_pw = 0.0
        for p_visits, p_mean, p_scv, p_servers, p_ca2 in pipeline:
            rho = x * p_visits * p_mean / p_servers
            if rho >= 1.0:
                best = INF
                break
            q_wait, _, q_pw = queue_wait(x * p_visits, p_mean, p_scv, p_servers, p_ca2 * burstiness, population, seen)
            tail = rho ** (slots - p_servers)
            if q_wait * tail > best:
                best, best_pw = q_wait * tail, q_pw * tail
        if wait == INF or best > wait:
            wait, pw = best, best_pw
            w2 = 2.0 * wait * wait / pw if pw > 0 and wait != INF else wait
        return wait, w2, pw

    def _view_wait(self, vi: int, k: int, x: float, visits: float, hold: float, scv: float, servers: int, ca2: float,
                   burstiness: float, population: float, seen: float, pipeline: list[tuple[float, float, float, int, float]],
                   waits: list[float], wvar: list[float], p_wait: list[float]) -> None:
        """The wait of a view (``Group.view_of``): the limit's k instances pooled, each at its own load,
        and, with a pipeline, its blocking estimate for k times the slots (as for the limit itself)."""
        slots = k * servers
        wait, w2, pw = queue_wait(k * x * visits, hold, scv, slots, ca2 * burstiness, population, seen)
        if pipeline:
            wait, w2, pw = self._blocking(wait, w2, pw, x, slots, pipeline, burstiness, population, seen)
        waits[vi] = wait
        wvar[vi] = w2 - wait * wait if w2 > wait * wait else 0.0
        p_wait[vi] = pw

    def holding_time(self, ev: Evaluation, g: Group) -> float:
        """Mean holding time of limit ``g`` at an evaluation (also for limits that never make a job wait)."""
        spans = self._pool_spans.get(g.index)
        if spans is None:
            return 0.0
        waits = ev.waits
        total = 0.0
        for share, m, _, terms in spans:
            for gi, c in terms:
                m += c * waits[gi]
            total += share * m
        return total

    def _zero_load_moments(self) -> list[tuple[float, float]]:
        """(mean, variance) of every child kind with no waiting anywhere."""
        moments = []
        for child in self._children:
            m1 = 0.0
            m2 = 0.0
            for prob, m, v, _ in child:
                m1 += prob * m
                m2 += prob * (v + m * m)
            var = m2 - m1 * m1
            moments.append((m1, var if var > 0.0 else 0.0))
        return moments

    def _latency(self, waits: list[float], wvar: list[float]) -> list[float]:
        """Mean latency of reads and writes given every group's wait."""
        moments = []
        for child in self._children:
            m1 = 0.0
            m2 = 0.0
            for prob, m, v, terms in child:
                for gi, c in terms:
                    m += c * waits[gi]
                    v += c * wvar[gi]
                m1 += prob * m
                m2 += prob * (v + m * m)
            var = m2 - m1 * m1
            moments.append((m1, var if var > 0.0 else 0.0))
        return self._per_op(moments)

    def _per_op(self, moments: list[tuple[float, float]]) -> list[float]:
        """Mean latency of reads and writes from the (mean, variance) of every child kind."""
        per_op = [0.0, 0.0]
        sqrt = math.sqrt
        for op, prob, variants in self._kinds:
            lat = 0.0
            for vprob, phases in variants:
                total = 0.0
                for ci, count, e_k, siblings, fan_in in phases:
                    if siblings is None:
                        m, var = moments[ci]
                        total += m if count == 1 or var <= 0.0 else m + e_k * sqrt(var)
                    else:
                        total += max_of_normal_moments(siblings, moments)
                    if fan_in:
                        total += fan_in
                lat += vprob * total
            per_op[op] += prob * lat
        op_prob = self.op_prob
        return [per_op[0] / op_prob[0] if op_prob[0] > 0 else 0.0, per_op[1] / op_prob[1] if op_prob[1] > 0 else 0.0]

    def program_lock_waits(self, ev: Evaluation) -> list[tuple[float, float, float]]:
        """Per program-lock group (a read waiting out a program on its die, ``FlashGroups.die_locks``): the read's
        mean latency spent there at ``ev`` (its latency less that with the group's wait left out), the programs'
        mean time and cv. The closed-loop tail law reads them (``sim.analytic.tails.pooled_tails``)."""
        out: list[tuple[float, float, float]] = []
        if ev.x <= 0.0:
            return out
        for lock in self._locks:
            i, program_us, program_cv = lock[0], lock[6], lock[7]
            waits = list(ev.waits)
            wvar = [0.0] * len(waits)  # the means only: variances feed only the fan-out maxima
            full = self._latency(waits, wvar)[READ]
            waits[i] = 0.0
            out.append((max(0.0, full - self._latency(waits, wvar)[READ]), program_us, program_cv))
        return out

    def mean_latency(self, ev: Evaluation) -> float:
        return self.op_prob[READ] * ev.latency[READ] + self.op_prob[WRITE] * ev.latency[WRITE]

    # -- solvers ----------------------------------------------------------------------------------
    def solve_closed(self, population: float, think_us: float, x_max: float) -> tuple[Evaluation, float]:
        """Throughput of a closed workload: the root of N = X (Z + R(X)) on (0, Xmax].

        g(X) = N / (Z + R(X)) falls as X grows, so X* = g(X*) is bracketed by g(0) above and
        by g(g(0)) below; regula falsi (Illinois) then closes the bracket. Returns the
        evaluation at the root and the mean latency by Little's law (N / X - Z); when even
        X = Xmax leaves jobs unaccounted for (they wait at the bottleneck or for a full write
        cache), X = Xmax and the difference is extra waiting.
        """
        r0 = self.mean_latency(self.evaluate(0.0))
        hi = min(population / (think_us + r0), x_max) if think_us + r0 > 0 else x_max
        ev_hi = self.evaluate(hi)
        f_hi = self._cycle(ev_hi, think_us) - population
        if f_hi <= 0.0:
            return ev_hi, population / hi - think_us
        lo = population / (think_us + self.mean_latency(ev_hi)) if not ev_hi.overloaded else 0.0
        ev_lo = self.evaluate(lo) if lo > 0 else ev_hi
        f_lo = self._cycle(ev_lo, think_us) - population if lo > 0 else -population
        if f_lo >= 0.0:
            return ev_lo, population / lo - think_us
        tol = 1e-5 * population
        ev = ev_lo
        side = 0
        for _ in range(60):
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not lo < x < hi:
                x = 0.5 * (lo + hi)
            ev = self.evaluate(x)
            f = self._cycle(ev, think_us) - population
            if abs(f) <= tol or hi - lo <= 1e-7 * hi:
                break
            if f > 0:
                hi, f_hi = x, f
                if side == 1:
                    f_lo *= 0.5
                side = 1
            else:
                lo, f_lo = x, f
                if side == -1:
                    f_hi *= 0.5
                side = -1
        return ev, population / ev.x - think_us

    def _cycle(self, ev: Evaluation, think_us: float) -> float:
        if ev.overloaded:
            return INF
        return ev.x * (think_us + self.mean_latency(ev))
