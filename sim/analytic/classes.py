"""Several workloads on one I/O path in the fast path: a multi-class queueing network.

Each workload (a class) is first solved alone with the single-workload fast path (its own network:
mix, sizes, access, fork-join, limits). What the other classes add is then taken from a mixed network
on the component-level demands of every class (Lazowska et al., *Quantitative System Performance*,
1984, ch. 7 "multiple class models"), its FCFS stations with each class's own service time:

* an arrival of class c at station k waits for each job ahead of it for that job's service (the usual MVA
  heuristic for FCFS stations whose classes' service times differ, which is not product form; the product
  form's rule would let a 1 MiB read's 133 us transfer wait 133 us behind every queued
  8 KiB one, 235 of the 350 us the consolidation example's backup mean had above the DES's under dies): R_c,k = D_c,k + V_c,k (sum_j S_j,k Q_j,k +
  sum_o U_o,k S_o,k) / (1 - U_open,k), with U_open,k = sum_o lambda_o D_o,k / c_k the open classes' load and
  U_o,k S_o,k their work ahead of a Poisson arrival (one server, open classes only: Pollaczek-Khinchine's
  sum_o lambda_o S_o^2 / (1 - rho) for exponential services); with equal service times, the product form's
  D_c,k (1 + Q_k) / (1 - U_open,k);
* closed classes by exact MVA over small populations, else approximate MVA (Schweitzer's
  (N_c - 1) / N_c for the class's own queue), X_c = N_c / (Z_c + sum_k R_c,k);
* a c-server station as a queue with demand D / c plus a delay of D (c - 1) / c (Seidmann's
  approximation).

A class's extra latency is its residence in the mixed network minus its residence in the same
network alone (exactly 0 for one class), added to its own solution; a closed class's extra also
lengthens its cycle (solved again with that much more think time), which lowers its throughput,
so its residence alone is taken at that longer cycle (a fixed point: where the demand network is
the whole model, the class's response and throughput are then the mixed network's own).
Flash dies (``Dies``): a read whose die is programming waits for the rest of the program
(``DieProgramLocks`` in the DES, ``die_locks`` in a class's own network), and another class's writes
program the same dies. Each class's reads are charged the others' programs as its own are: a read
meets a die programming for the others with probability p = sum_o X_o T_o / dies and then waits the
mean rest E[T^2] / 2E[T], so its extra wait is sum_o X_o E[T^2]_o / (2 dies) per device read; a large
read split into k device reads waits for the slowest (``Dies.read_wait_us``). This extra is on the reads only (it matters when a write burst
meets a read-mostly load: the batch bursts next to YCSB, examples/linuxone_bdi_batch_and_ycsb.yaml).
Under the ``dies`` device model a device's N dies are N single-server instances (``Demands.copies``: one
die's demand, an I/O's residence counting all N) and a read of k pages reads k distinct dies at once: its further
pages load the dies without adding to its response (``Demands.behind``) and it waits for the longest rest of
the programs its k dies are found in (``slowest_rest_us``: a tight program's rest is bounded: the
consolidation example's 1 MiB backup reads next to the OLTP's writes).
Devices whose reads share the program dies (``shared_dies``) are left to the classes' own solutions.
``solve_classes`` also hands each class's route model (``single``'s second value: under ``dies`` the route's die
loads) and that extra per logical read back, so that ``sim.analytic`` builds each class's die-level tails with
every class's reads and programs at the shared dies (``TAIL_METHODS``).
A class keeps its placement and the scenario's faults: its own network spreads its device I/Os over its
placement's members (its own volume, the members it holds that failed lost: ``sim.analytic.paths.own_volume``),
so a class placed on other members than another meets it only at what they share (host CPU, adapters).
A rebuild's background utilization is in the own solution of every class whose volume holds a rebuilt member
(under placement, a class's own volume rebuilds only the failed members it holds); the whole scenario counts it once.
Known approximations: the queueing extra is the same for a class's reads and writes; concurrency limits
(queues, write caches) and background work enter only through each class's own solution (but for the
dies, above).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from models.bottleneck import most_utilized
from models.fast_result import Bounds, FastResult
from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, Workload
from sim.analytic.dies import slowest_rest_us
from sim.analytic.network import Network

MVA_ITERATIONS = 2_000
MVA_TOLERANCE = 1e-9
EXACT_LATTICE = 4_000
"""Closed populations solved by exact MVA up to this many lattice points (Schweitzer's approximation
is poor for a few jobs per class: 9% on two classes of 2 and 3 jobs at one station)."""
BEHIND_STEPS = 8
"""Solutions of ``mixed_mva`` with the closed classes' programs at their last throughput (a fixed point)."""
CLOSED_STEPS = 30
"""Fixed-point steps for a closed class's extra latency (it converges in a few: the gap shrinks with it)."""


class Demands:
    """Every class's demand (us per logical I/O) at each foreground station instance, by component name."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.servers: list[int] = []
        self.index: dict[str, int] = {}
        self.per_class: list[dict[int, float]] = []
        self.behind: list[dict[int, float]] = []
        """Per class: the part of its demand at a device's dies that none of its I/Os waits for: a read's pages beyond
        its first when it spans several dies (read in parallel, one per die; the read waits as for its first page,
        ``DieGroups``; the wait for the slowest of them behind the others' programs is ``Dies``'). It loads the dies
        the other reads meet but is no part of the class's own response (a die's residence counts its N instances,
        ``copies``); and shared dies' programs (eXFlash), which queue with the reads at their die. Programs that take
        idle dies (the write point's) are left to ``Dies``, as the pooled model's program units are."""
        self.count: list[dict[int, float]] = []
        """Per class: its operations at each station instance per logical I/O (its demand there over its time per
        operation: a die's page reads one tR each, a program its program time), for ``service``."""
        self.copies: list[float] = []
        """Identical instances behind each name: a device's N dies share its meter name (``DieGroups``), each a
        single-server FIFO visited 1 / N of the device's reads; the demand is one die's, an I/O's time there N of them."""

    def add_class(self, net: Network) -> None:
        own: dict[int, float] = {}
        behind: dict[int, float] = {}
        count: dict[int, float] = {}
        for g in net.groups:
            # programs on idle dies (``DieGroups.programs``) or the pooled model's die locks: the reads' waits for them are
            # ``Dies``'; shared dies' programs queue with the reads there: their load (``behind``)
            if g.pool or g.background or (g.program_locks and (g.idle_programs or g.shares_with < 0)) or g.view_of >= 0 or g.work <= 0:
                continue
            per_instance = g.work / len(g.names)
            for name in dict.fromkeys(g.names):  # a device's dies share its meter name (``DieGroups``): once
                k = self.index.get(name)
                if k is None:
                    k = self.index[name] = len(self.names)
                    self.names.append(name)
                    self.servers.append(g.servers)
                    self.copies.append(float(g.names.count(name)))
                own[k] = own.get(k, 0.0) + per_instance
                # a die's pages are read one tR each (a spanning read's further pages too); else the group's time per visit
                each = g.page_us if g.page_us > 0 else g.work / g.visits if g.visits > 0 else 0.0
                if each > 0:
                    count[k] = count.get(k, 0.0) + per_instance / each
                if g.program_locks:  # a shared die's programs, behind the write's acknowledgement
                    behind[k] = behind.get(k, 0.0) + per_instance
                elif g.page_us > 0 and g.charged > 0:  # the further pages of reads spanning several dies
                    behind[k] = behind.get(k, 0.0) + g.charged / len(g.names)
        self.per_class.append(own)
        self.behind.append(behind)
        self.count.append(count)

    def service(self) -> list[list[float]]:
        """Every class's mean time per operation at each station instance (``mixed_mva``'s ``service``: a queued job
        delays an arrival by its own; 0 where the class does not go)."""
        return [[own.get(k, 0.0) / count[k] if count.get(k, 0.0) > 0 else 0.0 for k in range(len(self.names))]
                for own, count in zip(self.per_class, self.count, strict=True)]

    def matrix(self) -> list[list[float]]:
        """Every class's whole demand at each station instance (a spanning read's further pages included: the load)."""
        return [[own.get(k, 0.0) for k in range(len(self.names))] for own in self.per_class]

    def split(self) -> tuple[list[list[float]], list[list[float]] | None]:
        """(the demands a class's I/Os wait for, the die work none waits for (``behind``); None where there is none)."""
        if not any(self.behind):
            return self.matrix(), None
        stations = range(len(self.names))
        return ([[own.get(k, 0.0) - behind.get(k, 0.0) for k in stations] for own, behind in zip(self.per_class, self.behind, strict=True)],
                [[behind.get(k, 0.0) for k in stations] for behind in self.behind])


class Dies:
    """Per class and device: the reads' visits to the device's read units (per logical I/O), and per logical
    I/O of the class that programs there, the fraction of a die it keeps programming (T / dies) and the rest
    of a program a read meets (E[T^2] / 2 per die). Under the ``dies`` device model (``DieGroups``, ``paged``) the
    reads' visits are pages (a read of k pages reads k distinct dies), the programs those of ``DieGroups.programs``
    per die, with their count per die (``count``) for the program law's mean."""

    def __init__(self) -> None:
        self.reads: list[dict[str, float]] = []
        self.busy: list[dict[str, float]] = []
        self.rest: list[dict[str, float]] = []
        self.count: list[dict[str, float]] = []
        """Programs per logical I/O per die (``dies`` device model only, ``paged``)."""
        self.paged: set[str] = set()
        """Devices under the ``dies`` device model (``DieGroups``): reads visits there count pages, one per die."""
        self.read_share: list[float] = []

    def add_class(self, net: Network, read_share: float) -> None:
        reads: dict[str, float] = {}
        busy: dict[str, float] = {}
        rest: dict[str, float] = {}
        count: dict[str, float] = {}
        for g in net.groups:
            if g.view_of >= 0 or g.pool:
                continue
            if g.page_us > 0 and g.work > 0:  # a device's dies (``DieGroups``): a read of k pages reads k dies
                for name in g.names:
                    device = name.rpartition(".")[0]
                    reads[device] = reads.get(device, 0.0) + g.work / g.page_us / len(g.names)
                    self.paged.add(device)
                continue
            if g.idle_programs and g.work2 > 0:  # the programs on those dies (the write point's), per die
                for name in dict.fromkeys(g.names):
                    device = name.rpartition(".")[0]
                    busy[device] = busy.get(device, 0.0) + g.work / len(g.names)
                    rest[device] = rest.get(device, 0.0) + 0.5 * g.work2 / len(g.names)
                    count[device] = count.get(device, 0.0) + g.visits / len(g.names)
                continue
            for name in g.names:
                device, _, part = name.rpartition(".")
                if part == "read_units" and g.visits > 0:
                    reads[device] = reads.get(device, 0.0) + g.visits / len(g.names)
                elif part == "program_units" and g.work2 > 0:
                    dies = len(g.names) * g.servers
                    busy[device] = busy.get(device, 0.0) + g.work / dies
                    rest[device] = rest.get(device, 0.0) + 0.5 * g.work2 / dies
        self.reads.append(reads)
        self.busy.append(busy)
        self.rest.append(rest)
        self.count.append(count)
        self.read_share.append(read_share)

    def read_wait_us(self, c: int, iops: list[float]) -> float:
        """Class ``c``'s extra wait per logical I/O (on its reads) for the other classes' programs at ``iops``.

        A device read finds its die programming for the others with probability p = sum_o X_o T_o / dies and
        then waits the rest, of mean r = sum_o X_o E[T^2]_o / (2 dies) / p. A logical read split into k device
        reads (``visits / read share``) waits for the slowest of them: with exponential rests,
        E[max] = r integral_0^p (1 - (1 - u)^k) / u du (r p k for one read or a rare wait, less for a
        large read split over many dies)."""
        visits = sum(self.reads[c].values(), 0.0)
        share = self.read_share[c]
        if visits <= 0 or share <= 0:
            return 0.0
        p = wait = 0.0
        for device, v in self.reads[c].items():  # the devices a read visits, weighted by its visits there
            for o in range(len(iops)):
                if o != c:
                    p += v / visits * iops[o] * 1e-6 * self.busy[o].get(device, 0.0)
                    wait += v / visits * iops[o] * 1e-6 * self.rest[o].get(device, 0.0)
        if p <= 0:
            return 0.0
        p = min(p, 1.0)
        k = max(1.0, visits / share)
        if any(device in self.paged for device in self.reads[c]):
            # the dies model: k pages on k distinct dies (fork/join), each finding its die programming with chance p;
            # the read waits for the longest rest of those programs (a program's law from the others' mix)
            programs = 0.0
            for device, v in self.reads[c].items():
                for o in range(len(iops)):
                    if o != c:
                        programs += v / visits * iops[o] * 1e-6 * self.count[o].get(device, 0.0)
            mean = p / programs
            cv2 = max(0.0, 2.0 * wait / programs / (mean * mean) - 1.0)
            return share * slowest_rest_us(k, p, mean, math.sqrt(cv2))
        return share * wait / p * _slowest_of(k, p)


def _slowest_of(k: float, p: float, steps: int = 64) -> float:
    """integral_0^p (1 - (1 - u)^k) / u du (midpoint rule): E[max] of k waits, each an exponential of mean 1
    with probability p, else 0."""
    h = p / steps
    total = 0.0
    for i in range(steps):
        u = (i + 0.5) * h
        total += (1.0 - (1.0 - u) ** k) / u
    return total * h


def mixed_mva(servers: list[int], demand: list[list[float]], rate: list[float], population: list[float],
              think: list[float], copies: list[float] | None = None,
              behind: list[list[float]] | None = None,
              service: list[list[float]] | None = None) -> tuple[list[float], list[float], bool]:
    """Throughput (per us) and response (us) of each class of a mixed network.

    Class c is open with ``rate[c]`` arrivals per us when that is > 0, else closed with
    ``population[c]`` jobs and ``think[c]`` us of think time; ``demand[c][k]`` is its demand at
    station k (``servers[k]`` servers). The flag is False when the open classes alone saturate a
    station (their responses are then infinite). ``copies[k]`` (1 when not given): identical instances of
    station k, each with demand ``demand[c][k]`` (a device's dies, each visited 1 / N of its reads): a job's
    residence there counts every instance, the queue a job meets is one instance's. ``behind[c][k]``: class
    c's work at station k that none of its I/Os waits for (a spanning read's further pages, ``Demands.behind``): it loads
    the station as open work at the class's throughput (a closed class's from the previous of
    ``BEHIND_STEPS`` solutions), like the open classes' load.

    ``service[c][k]``: class c's time per visit at station k (its demand over its visits). An arriving job waits at a
    FCFS station for the jobs ahead of it, each for its own service (the usual MVA heuristic for FCFS stations whose
    classes' service times differ; Lazowska et al. 1984, ch. 7, the product form for equal ones): class c's
    residence at k is D_c,k + V_c,k (sum_j S_j,k Q_j,k + sum_o U_o,k S_o,k) / (1 - U_open,k), Q the closed classes'
    queues as the arrival sees them, U_o,k S_o,k the open classes' work ahead (a Poisson arrival sees their busy
    time, M/M/1's sum_o lambda_o S_o^2 / (1 - rho) for FCFS). With equal service times this is the product form's
    D_c,k (1 + Q_k) / (1 - U_open,k); without ``service`` every job ahead is taken at the arrival's own service
    (the product form's rule, which makes a 1 MiB read's transfer wait 133 us behind each queued 8 KiB one).
    """
    stations = range(len(servers))
    many = copies if copies is not None else [1.0 for _ in stations]
    classes = range(len(demand))
    queue_part = [[demand[c][k] / servers[k] for k in stations] for c in classes]
    delay_part = [sum((many[k] * demand[c][k] * (servers[k] - 1) / servers[k] for k in stations), 0.0) for c in classes]
    # a queued job of class j adds ahead[j][k] to an arrival's wait at k; class c meets the queue visits[c][k] times
    if service is None:
        ahead = [[1.0 for _ in stations] for _ in classes]
        visits = queue_part
    else:
        ahead = [[service[c][k] / servers[k] for k in stations] for c in classes]
        visits = [[queue_part[c][k] / ahead[c][k] if ahead[c][k] > 0 else 0.0 for k in stations] for c in classes]
    closed = [c for c in classes if rate[c] <= 0]
    through = [rate[c] for c in classes]  # a closed class's throughput from the previous step (0 at first)
    u_open = [0.0 for _ in stations]
    w_open = [0.0 for _ in stations]
    x = [0.0 for _ in classes]
    q = [[0.0 for _ in stations] for _ in classes]
    for _ in range(BEHIND_STEPS if behind is not None else 1):
        # the open load and its work ahead of an arrival (the spanning reads' further pages: open work at the class's rate)
        for k in stations:
            u = w = 0.0
            for c in classes:
                load = (rate[c] * queue_part[c][k] if rate[c] > 0 else 0.0)
                if behind is not None:
                    load += through[c] * behind[c][k] / servers[k]
                u += load
                w += load * ahead[c][k]
            u_open[k], w_open[k] = u, w
        if any(u >= 1.0 for u in u_open):
            return [rate[c] for c in classes], [math.inf for _ in classes], False
        network = _Closed(queue_part, visits, ahead, w_open, u_open, delay_part, many)
        exact = _exact_closed(network, population, think, closed)
        if exact is not None:
            x, q = exact
        else:
            x, q = _schweitzer(network, population, think, closed)
        through = [rate[c] if rate[c] > 0 else x[c] for c in classes]
    response = [0.0 for _ in classes]
    for c in classes:
        if rate[c] > 0:
            x[c] = rate[c]
            queues = [sum((ahead[j][k] * q[j][k] for j in closed), 0.0) for k in stations]
            response[c] = delay_part[c] + sum((many[k] * _residence(queue_part[c][k], visits[c][k], queues[k], w_open[k], u_open[k])
                                               for k in stations), 0.0)
        else:
            response[c] = population[c] / x[c] - think[c] if x[c] > 0 else math.inf
    return x, response, True


def _residence(demand: float, visits: float, queued: float, open_work: float, u_open: float) -> float:
    """A job's residence at one station instance (``mixed_mva``): its demand and, at each of its visits, the work
    ahead of it (the closed classes' queued work ``queued`` and the open classes' ``open_work``) stretched by the
    open load."""
    if demand <= 0:
        return 0.0
    return demand + visits * (queued + open_work) / (1.0 - u_open)


class _Closed:
    """The closed classes' view of ``mixed_mva``'s network: per class and station instance the queue part of the demand,
    the visits and the time a queued job adds to an arrival's wait (``ahead``); per station the open work ahead and
    the open load; per class the delay part; the instances of each station."""

    def __init__(self, demand: list[list[float]], visits: list[list[float]], ahead: list[list[float]], open_work: list[float],
                 u_open: list[float], delay: list[float], copies: list[float]) -> None:
        self.demand = demand
        self.visits = visits
        self.ahead = ahead
        self.open_work = open_work
        self.u_open = u_open
        self.delay = delay
        self.copies = copies


def _exact_closed(net: _Closed, population: list[float], think: list[float],
                  closed: list[int]) -> tuple[list[float], list[list[float]]] | None:
    """Exact multi-class MVA (Reiser and Lavenberg) over the lattice of closed populations, when it has
    at most ``EXACT_LATTICE`` points (else None): (throughput per class, queue per class and station instance;
    ``copies`` instances of each, ``mixed_mva``; each queued job ahead at its own service, ``_residence``)."""
    sizes = [round(population[c]) for c in closed]
    points = 1
    for n in sizes:
        points *= n + 1
    if points > EXACT_LATTICE:
        return None
    demand = net.demand
    stations = range(len(demand[0]) if demand else 0)
    queue_at: dict[tuple[int, ...], list[list[float]]] = {tuple(0 for _ in closed): [[0.0 for _ in stations] for _ in closed]}
    x = [0.0 for _ in demand]
    q = [[0.0 for _ in stations] for _ in demand]
    for vector in _lattice(sizes):
        here: list[list[float]] = []
        for i, c in enumerate(closed):
            if vector[i] == 0:
                x[c] = 0.0
                q[c] = [0.0 for _ in stations]
                here.append(q[c])
                continue
            before = queue_at[(*vector[:i], vector[i] - 1, *vector[i + 1:])]
            res = [_residence(demand[c][k], net.visits[c][k], sum((net.ahead[j][k] * before[m][k] for m, j in enumerate(closed)), 0.0),
                              net.open_work[k], net.u_open[k]) for k in stations]
            x[c] = vector[i] / (think[c] + net.delay[c] + sum((net.copies[k] * res[k] for k in stations), 0.0))
            q[c] = [x[c] * res[k] for k in stations]
            here.append(q[c])
        queue_at[vector] = here
    return x, q


def _lattice(sizes: list[int]) -> list[tuple[int, ...]]:
    """Every population vector up to ``sizes`` except zero, each after all the vectors below it."""
    vectors: list[tuple[int, ...]] = [()]
    for n in sizes:
        vectors = [(*v, i) for v in vectors for i in range(n + 1)]
    vectors.sort(key=sum)
    return vectors[1:]


def _schweitzer(net: _Closed, population: list[float], think: list[float],
                closed: list[int]) -> tuple[list[float], list[list[float]]]:
    """Approximate multi-class MVA (Schweitzer's (N - 1) / N for each class's own jobs; ``copies`` instances of each
    station, ``mixed_mva``: the queues are per instance; each queued job ahead at its own service, ``_residence``)."""
    demand = net.demand
    stations = range(len(demand[0]) if demand else 0)
    q = [[population[c] / max(1, len(stations)) for _ in stations] for c in range(len(demand))]
    x = [0.0 for _ in demand]
    for _ in range(MVA_ITERATIONS):
        moved = 0.0
        for c in closed:
            res = [_residence(demand[c][k], net.visits[c][k],
                              sum((net.ahead[j][k] * q[j][k] for j in closed), 0.0) - net.ahead[c][k] * q[c][k] / population[c],
                              net.open_work[k], net.u_open[k]) for k in stations]
            x[c] = population[c] / (think[c] + net.delay[c] + sum((net.copies[k] * res[k] for k in stations), 0.0))
            for k in stations:
                new = x[c] * res[k]
                moved = max(moved, abs(new - q[c][k]))
                q[c][k] = new
        if moved < MVA_TOLERANCE:
            break
    return x, q


def interference_us(demands: Demands, workloads: list[Workload]) -> list[float]:
    """Each class's extra latency from the others: its mixed-network response minus its response alone."""
    matrix, behind = demands.split()
    rate = [_rate_per_us(wl) for wl in workloads]
    population = [float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else 0.0 for wl in workloads]
    think = [wl.think_time_us + wl.app_us_per_io if isinstance(wl, ClosedWorkload) else 0.0 for wl in workloads]
    service = demands.service()
    _, together, stable = mixed_mva(demands.servers, matrix, rate, population, think, demands.copies, behind, service)
    if not stable:
        return [math.inf for _ in workloads]
    out = []
    for c in range(len(workloads)):
        extra = 0.0
        # a closed class's extra lengthens its cycle, which lowers its own queueing: the extra is the
        # gap to its response alone at the longer cycle (a fixed point; one step for an open class)
        for _ in range(1 if rate[c] > 0 else CLOSED_STEPS):
            _, alone, _ = mixed_mva(demands.servers, [matrix[c]], [rate[c]], [population[c]], [think[c] + extra],
                                    demands.copies, None if behind is None else [behind[c]], [service[c]])
            extra = max(0.0, together[c] - alone[0])
        out.append(extra)
    return out


def _rate_per_us(wl: Workload) -> float:
    if isinstance(wl, OpenWorkload):
        return wl.rate_iops * 1e-6
    if isinstance(wl, BurstyWorkload):
        return wl.mean_rate_iops * 1e-6
    return 0.0


def alone(scenario: Scenario, wl: Workload, extra_think_us: float = 0.0) -> Scenario:
    """The scenario with only ``wl`` (its name dropped; its placement and the scenario's faults kept), closed think time
    lengthened by ``extra_think_us``."""
    update: dict[str, object] = {"name": None}
    if isinstance(wl, ClosedWorkload) and extra_think_us > 0:
        update["think_time_us"] = wl.think_time_us + extra_think_us
    one = wl.model_copy(update=update)
    return Scenario.model_construct(name=scenario.name, description=scenario.description, topology=scenario.topology,
                                    workload=one, workloads=None, run=scenario.run, device_model=scenario.device_model,
                                    faults=scenario.faults)


Model = TypeVar("Model")


def solve_classes(scenario: Scenario, single: Callable[[Scenario], tuple[FastResult, Model]],
                  network: Callable[[Scenario], Network]) -> tuple[FastResult, dict[str, tuple[Model, float]]]:
    """The fast path of a scenario with several workloads: each class's own solution (``single``)
    plus the interference of the others (``interference_us``); the totals over the classes.

    Also, per class, what ``single`` gave with its final solution (the route's die loads, for the die-level tails
    of ``sim.analytic``) and the mean wait per logical read that the others' programs add at its dies (``Dies``)."""
    named = scenario.named_workloads()
    workloads = [wl for _, wl in named]
    demands = Demands()
    dies = Dies()
    background: dict[str, list[float]] = {}
    for wl in workloads:
        net = network(alone(scenario, wl))
        demands.add_class(net)
        dies.add_class(net, wl.read_fraction)
        for g in net.groups:
            if g.background_util > 0:
                for name in g.names:
                    background.setdefault(name, []).append(g.background_util)
    extra = interference_us(demands, workloads)
    per: dict[str, FastResult] = {}
    models: dict[str, tuple[Model, float]] = {}
    for (name, wl), more in zip(named, extra, strict=True):
        own, model = single(alone(scenario, wl, more if math.isfinite(more) else 0.0))
        per[name] = _with_extra(own, more)
        models[name] = (model, 0.0)
    # the others' programs on the dies a class reads (one more step for a closed class: it slows its cycle)
    iops = [r.iops for r in per.values()]
    for c, ((name, wl), more) in enumerate(zip(named, extra, strict=True)):
        wait = dies.read_wait_us(c, iops) if math.isfinite(more) else 0.0
        if wait <= 0:
            continue
        if isinstance(wl, ClosedWorkload):
            own, model = single(alone(scenario, wl, more + wait))
            per[name] = _with_extra(own, more, wait)
        else:
            model = models[name][0]
            per[name] = _with_extra(per[name], 0.0, wait)
        read_share = per[name].read_iops / per[name].iops if per[name].iops > 0 else 0.0
        models[name] = (model, wait / read_share if read_share > 0 else 0.0)
    return combine(per, demands, workloads, background), models


def _with_extra(own: FastResult, extra: float, read_wait: float = 0.0) -> FastResult:
    """``own`` with ``extra`` us more latency on every op it issues (infinite: unstable), and ``read_wait``
    us more per logical I/O on its reads only (``Dies``)."""
    if extra <= 0 and read_wait <= 0:
        return own
    read_share = own.read_iops / own.iops if own.iops > 0 else 0.0
    if read_share <= 0:
        read_wait = 0.0
    read = own.read_latency_mean_us + extra + read_wait / read_share if own.read_iops > 0 else 0.0
    write = own.write_latency_mean_us + extra if own.write_iops > 0 else 0.0
    return FastResult(iops=own.iops, read_iops=own.read_iops, write_iops=own.write_iops, mbps=own.mbps,
                      latency_mean_us=own.latency_mean_us + extra + read_wait, read_latency_mean_us=read, write_latency_mean_us=write,
                      utilization=own.utilization, bottleneck=own.bottleneck, bounds=own.bounds,
                      cpu_us_per_io=own.cpu_us_per_io, stable=own.stable and math.isfinite(extra))


def _weighted(per: dict[str, FastResult], value: Callable[[FastResult], float], weight: Callable[[FastResult], float]) -> float:
    total = sum((weight(r) for r in per.values()), 0.0)
    if total <= 0:
        return 0.0
    return sum((value(r) * weight(r) for r in per.values() if weight(r) > 0), 0.0) / total


def combine(per: dict[str, FastResult], demands: Demands, workloads: list[Workload],
            background: dict[str, list[float]] | None = None) -> FastResult:
    """The whole scenario: throughputs summed, latencies weighted by throughput, utilization summed per
    component (a rebuild's ``background`` utilization, in the own solution of each class whose volume it touches:
    counted once, the largest of them), the bottleneck the most utilized component (``models.bottleneck.most_utilized``;
    the foreground stations named before the rest they tie with), the bounds of the mix."""
    utilization: dict[str, float] = {}
    for r in per.values():
        for name, u in r.utilization.items():
            utilization[name] = utilization.get(name, 0.0) + u
    for name, us in (background or {}).items():
        if name in utilization:
            utilization[name] -= (len(us) - 1) * us[0] if min(us) == max(us) else sum(us) - max(us)
    utilization = {name: min(1.0, max(0.0, u)) for name, u in utilization.items()}
    foreground = [n for n in demands.names if n in utilization] or list(utilization)
    stations = set(demands.names)
    bottleneck = most_utilized(utilization, limits=[n for n in utilization if n not in stations])
    iops = sum((r.iops for r in per.values()), 0.0)
    stable = all(r.stable for r in per.values()) and all(utilization[n] < 1.0 for n in foreground)
    think = [wl.think_time_us + wl.app_us_per_io if isinstance(wl, ClosedWorkload) else 0.0 for wl in workloads]
    shares = [r.iops / iops if iops > 0 else 1.0 / len(per) for r in per.values()]
    matrix = demands.matrix()
    load = [sum((s * matrix[c][k] for c, s in enumerate(shares)), 0.0) / demands.servers[k] for k in range(len(demands.names))]
    d_max = max(load) if load else 0.0
    x_max = 1e6 / d_max if d_max > 0 else math.inf
    r_min = _weighted(per, lambda r: r.bounds.r_min_us, lambda r: r.iops)
    z = sum((s * t for s, t in zip(shares, think, strict=True)), 0.0)
    bound_name = demands.names[load.index(d_max)] if load else "none"
    return FastResult(
        iops=iops,
        read_iops=sum((r.read_iops for r in per.values()), 0.0),
        write_iops=sum((r.write_iops for r in per.values()), 0.0),
        mbps=sum((r.mbps for r in per.values()), 0.0),
        latency_mean_us=_weighted(per, lambda r: r.latency_mean_us, lambda r: r.iops),
        read_latency_mean_us=_weighted(per, lambda r: r.read_latency_mean_us, lambda r: r.read_iops),
        write_latency_mean_us=_weighted(per, lambda r: r.write_latency_mean_us, lambda r: r.write_iops),
        utilization=utilization,
        bottleneck=bottleneck,
        bounds=Bounds(x_max_iops=x_max, r_min_us=r_min, n_star=(r_min + z) * x_max * 1e-6 if math.isfinite(x_max) else math.inf,
                      bottleneck=bound_name),
        cpu_us_per_io=_weighted(per, lambda r: r.cpu_us_per_io, lambda r: r.iops),
        stable=stable,
        workloads=per,
    )
