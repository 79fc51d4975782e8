"""The analytic fast path's queueing network and its solvers.

A scenario compiles (sim/analytic/paths.py) into

* **groups** - identical instances of one DES component: a station (c servers, FCFS) or a
  concurrency limit (c slots, a ``Pool`` in the DES). Each group carries, per logical I/O,
  its visits and the first two moments of the work they bring (``Path.add_loads``), and for a
  concurrency limit the *holding time*: the stretch of the device route between acquiring
  and releasing a slot, which itself includes waits at the stations inside it;
* **child paths** - one device I/O's route as a linear form: a constant (service times and
  pure delays, with their variance) plus the wait at each group it visits;
* **logical kinds** - per op and transfer size, the volume layer's phases of parallel
  children (RAID-10 writes both copies, RAID-5 reads then writes old data and parity).

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
from dataclasses import dataclass, field

from sim.analytic.queueing import INF, max_of_normals, mva_arrival_fractions, normal_max_factors, queue_wait

READ = 0
WRITE = 1


@dataclass(eq=False, slots=True)
class Group:
    """Identical instances of one component (a station or a concurrency limit) of the DES model."""

    names: tuple[str, ...]
    servers: int
    pool: bool = False
    cover: int = 1
    """Volume members one instance serves (sibling fan-in, the limits around it)."""
    reach: float = 1.0
    """Share of a closed workload's jobs that can visit one instance (below 1 under closed affinity)."""
    instances: int = 1
    """Instances of the whole component (this group may hold only some of them)."""
    round_robin: bool = False
    """Device I/Os take the instances in turn (SAN ports), not by volume member."""
    ca2: float = 1.0
    background: bool = False
    visits: float = 0.0
    work: float = 0.0
    work2: float = 0.0
    holding: dict[tuple[int, float], tuple[float, Lin, float]] = field(default_factory=dict)
    """Concurrency limits only: (span id, bytes) -> (visits per logical I/O, span, bytes)."""
    limit: float = INF
    """Most jobs an instance can ever hold, whatever the workload (set from the limits around it)."""
    index: int = -1
    depth: int = 0
    """How many concurrency limits a route already holds when it takes this one (inner limits are solved first)."""
    population: float = INF
    seen: float = 1.0
    """Share of the load an arriving job finds here (arrival theorem; 1 for open workloads)."""


@dataclass(slots=True)
class Lin:
    """Latency of a stretch of route for an I/O of n bytes, plus the waits on it.

    mean = a + b n and variance = c + d n + e n^2 (service times are a fixed part plus a
    transfer part per byte); ``terms`` maps each group waited for to the expected number of waits.
    """

    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    e: float = 0.0
    terms: dict[int, float] = field(default_factory=dict)

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
        var = self.c + (self.d + self.e * n) * n
        return self.a + self.b * n, var if var > 0.0 else 0.0

    def copy(self) -> Lin:
        return Lin(self.a, self.b, self.c, self.d, self.e, dict(self.terms))

    def minus(self, o: Lin) -> Lin:
        terms = {g: c - o.terms.get(g, 0.0) for g, c in self.terms.items()}
        return Lin(self.a - o.a, self.b - o.b, self.c - o.c, self.d - o.d, self.e - o.e, {g: c for g, c in terms.items() if c > 1e-12})

    def plus(self, o: Lin) -> Lin:
        terms = dict(self.terms)
        for g, c in o.terms.items():
            terms[g] = terms.get(g, 0.0) + c
        return Lin(self.a + o.a, self.b + o.b, self.c + o.c, self.d + o.d, self.e + o.e, terms)


Choice = list[tuple[Group, float]]
"""Instances a visit may go to: (group, probability), probabilities summing to 1."""
Visit = tuple[Choice, float, float, float]
"""(choice, fixed us, us per byte, squared coefficient of variation)."""


class Path:
    """The route of one kind of device I/O (an op; a SAN read that hits or misses), for any transfer size.

    Records its visits (group, probability, fixed us, us per byte, scv) and the span of every
    concurrency limit it takes, so loads and holding times follow for each size.
    """

    def __init__(self) -> None:
        self.lin = Lin()
        self.visits: list[tuple[Group, float, float, float, float]] = []
        self.spans: list[tuple[Group, float, Lin]] = []
        self._open: list[tuple[Choice, Lin]] = []
        self.feeders: list[tuple[Visit, Visit | None]] = []
        """Each visit with the visit just before it (pure delays and limits may lie between)."""
        self._last: Visit | None = None

    def visit(self, choice: Choice, a: float, b: float = 0.0, scv: float = 0.0) -> None:
        """Queue for and receive a + b x bytes us of service (squared coefficient of variation ``scv``)."""
        terms = self.lin.terms
        for group, p in choice:
            self.visits.append((group, p, a, b, scv))
            terms[group.index] = terms.get(group.index, 0.0) + p
        self.lin.add(a, b, scv)
        this = (choice, a, b, scv)
        self.feeders.append((this, self._last))
        self._last = this

    def delay(self, a: float, scv: float = 0.0) -> None:
        """A pure delay with unlimited parallelism (fabric, cache acknowledgement, turnaround)."""
        self.lin.add(a, 0.0, scv)

    def acquire(self, choice: Choice) -> None:
        """Wait for a slot of a concurrency limit; the span runs until ``release``."""
        level = len(self._open)
        terms = self.lin.terms
        for group, p in choice:
            terms[group.index] = terms.get(group.index, 0.0) + p
            if level > group.depth:
                group.depth = level
        self._open.append((choice, self.lin.copy()))

    def release(self, background: Path | None = None) -> None:
        """Give the innermost slot back; ``background`` work (a destage) extends the hold but not the latency."""
        choice, start = self._open.pop()
        span = self.lin.minus(start)
        if background is not None:
            span = span.plus(background.lin)
            self.visits.extend(background.visits)
        for group, p in choice:
            self.spans.append((group, p, span))

    def add_loads(self, weight: float, n: float) -> None:
        """Charge this path's visits and holds for I/Os of ``n`` bytes to the groups, ``weight`` times per logical I/O."""
        for group, p, a, b, scv in self.visits:
            w = weight * p
            svc = a + b * n
            group.visits += w
            group.work += w * svc
            group.work2 += w * svc * svc * (1.0 + scv)
        for group, p, span in self.spans:
            w = weight * p
            group.visits += w
            key = (id(span), n)
            entry = group.holding.get(key)
            if entry is None:
                group.holding[key] = (w, span, n)
            else:
                group.holding[key] = (entry[0] + w, span, n)


ChildKind = list[tuple[float, Path]]
"""A device I/O kind as a mixture of paths (a SAN read hits the cache or goes to the back end)."""
Phase = list[tuple[int, ChildKind, float]]
"""Children started together: (count, kind, bytes each)."""


@dataclass
class LogicalKind:
    """Logical I/Os of one op and size: probability per logical I/O and the volume layer's variants."""

    op: int
    prob: float
    nbytes: float
    variants: list[tuple[float, list[Phase]]]
    serial: list[tuple[float, list[Phase]]] | None = None
    """The variants as latency sees them when siblings must share members (else ``variants``)."""


@dataclass(slots=True)
class Evaluation:
    """The network at one logical throughput."""

    x: float
    latency: list[float]
    waits: list[float]
    p_wait: list[float]
    holding: list[float]
    overloaded: bool


Spans = list[tuple[float, float, float, tuple[tuple[int, float], ...]]]
"""A limit's holding time as a mixture: (share, const mean, const variance, wait terms)."""


class Network:
    """Groups, paths and logical kinds of one scenario, and the solvers."""

    def __init__(self) -> None:
        self.groups: list[Group] = []
        self.kinds: list[LogicalKind] = []
        self.op_prob = [0.0, 0.0]
        self.templates: list[ChildKind] = []
        self.children: dict[tuple[int, float], int] = {}
        self._child_list: list[tuple[ChildKind, float]] = []
        self._zero: Evaluation | None = None
        self._structured = False
        self._capacities: list[float] = []
        self._nested: dict[int, set[int]] = {}
        """Station index -> the limits whose every hold contains all its visits."""
        self._never_wait: set[int] = set()
        self._kind_table: list[tuple[int, float, list[tuple[float, list[tuple[list[tuple[int, int, float]], float]]]]]] | None = None
        self.members = 1
        """Volume members (set by the compiler)."""

    def register(self, group: Group) -> int:
        if group.index < 0:
            group.index = len(self.groups)
            self.groups.append(group)
        return group.index

    def add_kind(self, kind: LogicalKind) -> None:
        """Add a logical kind and charge its children's loads."""
        self.kinds.append(kind)
        self.op_prob[kind.op] += kind.prob
        for vprob, phases in kind.variants:
            for phase in phases:
                for count, child, n in phase:
                    for cprob, path in child:
                        path.add_loads(kind.prob * vprob * count * cprob, n)
        for _, phases in kind.serial or kind.variants:
            for phase in phases:
                for _, child, n in phase:
                    key = (id(child), n)
                    if key not in self.children:
                        self.children[key] = len(self._child_list)
                        self._child_list.append((child, n))
                        if all(child is not t for t in self.templates):
                            self.templates.append(child)

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
        for g in self.groups:
            if population == INF or g.background:
                g.population = g.limit
            else:
                g.population = min(g.limit, population * g.reach * max(1, min(max_width, g.cover)))
            g.seen = (g.population - 1.0) / g.population if g.population != INF else 1.0
        self._compile()

    def _structure(self) -> None:
        """What does not depend on the workload's population: background groups, limits, capacities."""
        foreground = {gi for ck in self.templates for _, p in ck for gi in p.lin.terms}
        groups = self.groups
        for g in groups:
            if not g.pool:
                g.background = g.index not in foreground
                continue
            inside: dict[int, float] = {}
            for w, span, _ in g.holding.values():
                for gi, c in span.terms.items():
                    inside[gi] = inside.get(gi, 0.0) + w * c
            for gi, v in inside.items():
                h = groups[gi]
                if not h.pool and v >= 0.999 * h.visits:
                    h.limit = min(h.limit, g.servers * max(1.0, h.cover / g.cover))
                    self._nested.setdefault(gi, set()).add(g.index)
        caps = []
        for g in groups:
            demand = (self.zero_load_holding(g) * g.visits if g.pool else g.work) / len(g.names)
            caps.append(g.servers / demand if demand > 0 else INF)
        self._capacities = caps
        self._never_wait = self._smoothed_tandems()
        self._structured = True

    def _smoothed_tandems(self) -> set[int]:
        """Single servers that never queue: fed only by one single server that is never faster.

        A FIFO single server with deterministic service releases jobs at least one service
        time apart; a deterministic single server right behind it (pure delays between, the
        same instances, e.g. a drive's PCIe link behind its read channel) whose longest
        service is no longer than the feeder's shortest never finds a job ahead.
        """
        sizes = [n for _, n in self._child_list] or [0.0]
        lo, hi = min(sizes), max(sizes)
        feeders: dict[int, set[int]] = {}
        ok: dict[int, bool] = {}
        for ck in self.templates:
            for _, path in ck:
                for (choice, a, b, scv), prev in path.feeders:
                    for i, (g, _) in enumerate(choice):
                        feeder = prev[0][i][0] if prev is not None and len(prev[0]) == len(choice) else None
                        good = (feeder is not None and prev is not None and g.servers == 1 and feeder.servers == 1
                                and scv == 0.0 and prev[3] == 0.0 and len(feeder.names) == len(g.names)
                                and max(a + b * lo, a + b * hi) <= min(prev[1] + prev[2] * lo, prev[1] + prev[2] * hi))
                        feeders.setdefault(g.index, set()).add(feeder.index if feeder is not None else -1)
                        ok[g.index] = ok.get(g.index, True) and good
        return {gi for gi, good in ok.items() if good and len(feeders[gi]) == 1 and not self.groups[gi].pool}

    def _compile(self) -> None:
        """Flatten groups, spans and paths into tuples for the solver's inner loop.

        Only centres that can ever make a job wait take part (a closed population no larger
        than the servers never queues); a limit nested in another comes first, because its
        wait is part of the outer one's holding time.
        """
        self._seen = [g.seen for g in self.groups]
        stations = []
        for g in self.groups:
            if g.pool or g.visits <= 0 or g.population <= g.servers or g.index in self._never_wait:
                continue
            mean = g.work / g.visits
            scv = max(0.0, g.work2 / g.visits / (mean * mean) - 1.0) if mean > 0 else 0.0
            stations.append((g.index, g.visits / len(g.names), mean, scv, g.servers, g.ca2, g.population))
        waiting = {t[0] for t in stations}
        pools = []
        for g in sorted((g for g in self.groups if g.pool and g.visits > 0), key=lambda g: -g.depth):
            pools.append((g.index, g.visits / len(g.names), g.servers, g.ca2, g.population, self._spans(g, waiting),
                          self._pipeline(g)))
            if g.population > g.servers:
                waiting.add(g.index)
        self._stations = stations
        self._pools = [p for p in pools if p[4] > p[2]]
        self._all_pools = pools
        children = []
        for child, n in self._child_list:
            row = []
            for prob, path in child:
                mean, var = path.lin.at(n)
                row.append((prob, mean, var, tuple((gi, c) for gi, c in path.lin.terms.items() if gi in waiting)))
            children.append(row)
        self._children = children
        position = self.children
        if self._kind_table is None:
            # structural: the same for every population, so built once per network
            self._kind_table = [(k.op, k.prob, [(vprob, [([(count, position[(id(ck), n)], normal_max_factors(count)[0])
                                                           for count, ck, n in phase], self._fan_in(phase))
                                                         for phase in phases])
                                                for vprob, phases in (k.serial or k.variants)]) for k in self.kinds]
        self._kinds = self._kind_table
        self._zero = None

    def _pipeline(self, g: Group) -> list[tuple[float, float, float, int, float]]:
        """Stations with fewer servers than the limit has slots, inside every hold, serving no other limit's jobs.

        Their queue is what keeps the slots held (a write cache emptied by one destage
        channel), so the limit blocks when c slots' worth of jobs queue there: the wait for
        a slot is about that station's own wait times rho^(c - c_station) (M/M/c's geometric
        tail; exact for M/M/1 with c = 1). Returns (visits per instance, mean, scv, servers, ca2).
        """
        inside: dict[int, float] = {}
        for w, span, _ in g.holding.values():
            for gi, c in span.terms.items():
                inside[gi] = inside.get(gi, 0.0) + w * c
        out = []
        for gi, v in inside.items():
            h = self.groups[gi]
            if h.pool or h.servers >= g.servers or h.cover > g.cover or v < 0.999 * h.visits or h.work <= 0:
                continue
            mean = h.work / h.visits
            scv = max(0.0, h.work2 / h.visits / (mean * mean) - 1.0)
            out.append((h.visits / len(h.names), mean, scv, h.servers, h.ca2))
        return out

    def _fan_in(self, phase: Phase) -> float:
        """Extra latency of a phase whose siblings cross the same single server one after another.

        Siblings of a split start together; at a single server they share (one front-end
        port, one adapter uplink) the last of them finishes after all their services, not
        after the longest: sum - max. Taken with the chance that they meet there: 1 for a
        single instance; for instances chosen by volume member, the chance that two distinct
        members map to the same instance; for round-robin ports, only when the siblings
        outnumber the ports.
        """
        k = sum(count for count, _, _ in phase)
        if k < 2:
            return 0.0
        service: dict[int, list[float]] = {}
        for count, ck, n in phase:
            for cprob, path in ck:
                for g, p, a, b, _ in path.visits:
                    if g.servers != 1 or g.pool or g.background:
                        continue
                    service.setdefault(g.index, []).extend([cprob * p * (a + b * n)] * count)
        extra = 0.0
        for gi, times in service.items():
            g = self.groups[gi]
            if g.instances == 1:
                share = 1.0
            elif g.round_robin:
                share = 1.0 if k > g.instances else 0.0
            else:
                members = self.members or 1
                share = (g.cover - 1) / (members - 1) if members > 1 else 1.0
            if share > 0 and len(times) > 1:
                extra += share * (sum(times) - max(times))
        return extra

    def _spans(self, g: Group, waiting: set[int]) -> Spans:
        """A limit's holding time as a mixture of spans: (share, const mean, const variance, wait terms)."""
        total = sum(w for w, _, _ in g.holding.values())
        out = []
        for w, span, n in g.holding.values():
            mean, var = span.at(n)
            out.append((w / total, mean, var, tuple((gi, c) for gi, c in span.terms.items() if gi in waiting)))
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
        candidates = [g for g in self.groups if not g.background and g.visits > 0 and g.reach == 1.0
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
        total = sum(w for w, _, _ in g.holding.values())
        return sum(w * span.at(n)[0] for w, span, n in g.holding.values()) / total if total > 0 else 0.0

    def capacities(self) -> list[float]:
        """Logical I/Os per us each group can sustain: servers / demand per instance (limits: slots / hold)."""
        if not self._structured:
            self._structure()
        return self._capacities

    # -- evaluation -----------------------------------------------------------------------------
    def evaluate(self, x: float, burstiness: float = 1.0) -> Evaluation:
        """Waits, holding times and per-op latency at logical throughput ``x`` (per us).

        ``burstiness`` multiplies every centre's arrival variability (the index of dispersion
        of a bursty workload's arrivals at the queues' time scale; 1 for Poisson).
        """
        if x <= 0.0 and self._zero is not None:
            return self._zero
        n = len(self.groups)
        waits = [0.0] * n
        wvar = [0.0] * n
        p_wait = [0.0] * n
        holding = [0.0] * n
        if x > 0.0:
            seen = self._seen
            for i, visits, mean, scv, servers, ca2, population in self._stations:
                if servers == 1:
                    # M/G/1 (Pollaczek-Khinchine with the Allen-Cunneen arrival factor), inline: most stations
                    rho = x * visits * mean * seen[i]
                    if rho >= 1.0:
                        p_wait[i] = 1.0
                        return Evaluation(x=x, latency=[INF, INF], waits=waits, p_wait=p_wait, holding=holding, overloaded=True)
                    if rho <= 0.0:
                        continue
                    wait = rho * mean * 0.5 * (ca2 * burstiness + scv) / (1.0 - rho)
                    if population != INF:
                        cap = (population - 1.0) * mean * max(1.0, 0.5 * (ca2 * burstiness + scv))
                        if wait > cap:
                            wait = cap
                    waits[i] = wait
                    wvar[i] = wait * wait * (2.0 / rho - 1.0)
                    p_wait[i] = rho
                    continue
                wait, w2, pw = queue_wait(x * visits, mean, scv, servers, ca2 * burstiness, population, seen[i])
                if wait == INF:
                    p_wait[i] = 1.0
                    return Evaluation(x=x, latency=[INF, INF], waits=waits, p_wait=p_wait, holding=holding, overloaded=True)
                waits[i] = wait
                wvar[i] = w2 - wait * wait if w2 > wait * wait else 0.0
                p_wait[i] = pw
            for i, visits, servers, ca2, population, spans, pipeline in self._pools:
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
                    # the slots are held while jobs queue at the pipeline station: that queue is the
                    # blocking, so its estimate stands (also where slots x hold looks overloaded)
                    best = 0.0
                    best_pw = 0.0
                    for p_visits, p_mean, p_scv, p_servers, p_ca2 in pipeline:
                        rho = x * p_visits * p_mean / p_servers
                        if rho >= 1.0:
                            best = INF
                            break
                        q_wait, _, q_pw = queue_wait(x * p_visits, p_mean, p_scv, p_servers, p_ca2 * burstiness, population, seen[i])
                        tail = rho ** (servers - p_servers)
                        if q_wait * tail > best:
                            best, best_pw = q_wait * tail, q_pw * tail
                    if wait == INF or best > wait:
                        wait, pw = best, best_pw
                        w2 = 2.0 * wait * wait / pw if pw > 0 and wait != INF else wait
                if wait == INF:
                    p_wait[i] = 1.0
                    return Evaluation(x=x, latency=[INF, INF], waits=waits, p_wait=p_wait, holding=holding, overloaded=True)
                waits[i] = wait
                wvar[i] = w2 - wait * wait if w2 > wait * wait else 0.0
                p_wait[i] = pw
        ev = Evaluation(x=x, latency=self._latency(waits, wvar), waits=waits, p_wait=p_wait, holding=holding, overloaded=False)
        if x <= 0.0:
            self._zero = ev
        return ev

    def holding_time(self, ev: Evaluation, g: Group) -> float:
        """Mean holding time of limit ``g`` at an evaluation (also for limits that never make a job wait)."""
        for i, _, _, _, _, spans, _ in self._all_pools:
            if i == g.index:
                total = 0.0
                for share, m, _, terms in spans:
                    for gi, c in terms:
                        m += c * ev.waits[gi]
                    total += share * m
                return total
        return 0.0

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
        per_op = [0.0, 0.0]
        for op, prob, variants in self._kinds:
            lat = 0.0
            for vprob, phases in variants:
                total = 0.0
                for phase, fan_in in phases:
                    if len(phase) == 1:
                        count, ci, e_k = phase[0]
                        m, var = moments[ci]
                        total += m if count == 1 or var <= 0.0 else m + e_k * math.sqrt(var)
                    else:
                        total += max_of_normals([(count, *moments[ci]) for count, ci, _ in phase])
                    total += fan_in
                lat += vprob * total
            per_op[op] += prob * lat
        op_prob = self.op_prob
        return [per_op[0] / op_prob[0] if op_prob[0] > 0 else 0.0, per_op[1] / op_prob[1] if op_prob[1] > 0 else 0.0]

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
