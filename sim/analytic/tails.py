"""The fast path's tail estimate (p99 / p99.9): die-level and pooled device mechanisms, mixed workloads, and a
heuristic where no mechanism applies (``TAIL_METHODS``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import NormalDist

from models.catalog import parameter
from models.fast_result import MECHANISM_TAIL_METHODS, FastResult
from models.scenario import Scenario
from models.workload import ClosedWorkload
from sim.analytic.demands import op_visits
from sim.analytic.dies import (
    DieWaitLaw,
    WriteLaw,
    closed_read_quantile_us,
    mixture_quantiles_us,
    residual_points,
    route_above,
    route_quantiles_us,
    spanning_read_above,
)
from sim.analytic.network import READ, WRITE, Evaluation, Network
from sim.analytic.paths import Compiler
from sim.analytic.queueing import INF
from sim.route.flash import FIRST_READ_BYTES, DieLayout, program_operations, write_command_us

# -- the fast path's tail estimate (p99 / p99.9) ---------------------------------------------------------

TAIL_METHODS = (*MECHANISM_TAIL_METHODS, "heuristic")
"""``FastResult.tail_method``: how the p99 / p99.9 were estimated.

* ``dies``: under ``device_model: dies`` (a workload solved on its route): every read waits at a die of its
  device, its mean wait the fast path's own (``sim.analytic.dies.DieWaitLaw``): reads alone an M/G/1 FIFO (open
  arrivals exactly Pollaczek-Khinchine, a closed loop with its shorter mean); a closed loop's reads of one size over
  several pages alone on one device a fork/join: the last of its pages (drawn among the dies with replacement), each
  die's wait the machine repairman's law of the other reads' pages, matched so the fork/join's mean is the fast
  path's (whose die time carries the pages' no-wait spread, ``sim.analytic.dies.fork_join_spread_us``), then the
  read channel's finite-source wait (``DieWaitLaw.fork_join_table``); where the die programs, the one program in
  service at most (the write point starts programs on idle dies only) and the reads queued ahead; a
  mixture over the devices' die groups by their shares of the reads; the rest of a read's route at its mean;
  writes (acknowledged from the device's cache) their fixed zero-load part, the cache's lognormal acknowledgement
  and a wait of the fast path's mean (``sim.analytic.dies.WriteLaw``): exponential for open arrivals, a closed
  loop's the machine repairman's finite-source law (a loop that saturates its device keeps a steady queue, so its
  wait is tight: z/VM subchannels, deep write loops; with one device its stages are departures of the busy dies; a
  loop that saturates several devices' dies fills their caches, and its waiting writes gather at the fullest device:
  ``WriteLaw.gather``),
  combined by ``sim.analytic.dies.route_quantiles_us`` (calibration/ext/die_solvers_writes.md).
  Several workloads (a ``workloads`` list, a profile's multi-workload interval): each workload's route as above at
  its own read/write mix, means (the other workloads' interference included, ``sim.analytic.classes``) and
  population, its dies' read and program loads those of all the workloads summed (``die_wait_laws``: another
  workload's reads seen in full, the programs' time the load-weighted mean), its die wait's mean its own plus
  the others' programs' (``classes.Dies``; the rest of the interference, the mixed network's queueing extra, is
  in the read's mean outside the die: a fixed shift); the total the mixture of the workloads' laws by their shares of the
  I/Os (``sim.analytic.dies.mixture_quantiles_us``), when each workload with I/Os has a law of its own (else the
  total takes the heuristic). An open sequential stream's stripe blend among other workloads (its means are not
  one route's) gets its reads' law page by page: a read of k pages at k distinct dies waits
  for the slowest (``sim.analytic.dies.spanning_read_above``), each page's die as every workload's reads and
  programs load it, the rest of the blend's mean outside the dies; so does any workload whose reads span 2 pages or
  more among the other workloads' loads (the consolidation's 256 KiB batch reads, 16 pages;
  the BDI batch's 32 KiB queries, 2): the slowest rest of the others' programs over its pages is in its read's mean
  (``classes.Dies``), not one die's mean wait (as one die's, a die found busy now and then had to wait thousands of
  us when busy: the batch's p99.9 was ten times the DES's).
* ``dies, closed reads``: a closed loop of reads (one size up to a die page) on one device alone (the queue-depth
  sweep): ``sim.analytic.dies.closed_read_quantile_us`` (calibration/ext/DIE_LEVEL.md, 144 points).
* ``pooled``: one workload, a closed loop or open arrivals, on a route whose flash devices are pooled (the eXFlash
  DIMMs under ``auto``, every device under ``pooled``): ``pooled_tails``, per operation the service law, a read's
  wait for a program on its die, and the queue's wait (exponential for open arrivals, the machine repairman's
  finite-source law for a closed loop) (calibration/ext/die_solvers_pooled.md).
* ``heuristic``: a bursty workload or several workloads under the pooled device model, and under ``dies`` what the
  die-level estimate does not cover (an open
  sequential stream's stripe blend alone (its load counts at the dies the others read); a route with no flash device
  of its own: SAN storage servers, plain stations; the total of several workloads when one of them has no die-level
  law, or one's is the ``dies, closed reads`` quantile):
  ``heuristic_quantile_us``, a screening heuristic (no queueing mechanism behind its tail).
"""


def _lognormal_quantile(cv: float, q: float) -> float:
    """The ``q`` quantile of a lognormal with mean 1 and coefficient of variation ``cv``."""
    if cv <= 0:
        return 1.0
    sigma = math.sqrt(math.log1p(cv * cv))
    z = 2.3263478740408408 if q == 0.99 else NormalDist().inv_cdf(q)
    return math.exp(-sigma * sigma / 2 + z * sigma)


def heuristic_quantile_us(fast: FastResult, q: float) -> float:
    """The pooled model's screening heuristic for the ``q`` quantile of the latency (the planner's since its start).

    Service part: the unloaded latency r_min scaled by the ``q`` quantile of the engine's lognormal
    service law (parameters.yaml ``device_behaviour.service_cv``). Queueing part: the mean wait
    (mean - r_min) times ln(1 / (1 - q)), the quantile of an exponential wait (M/M/1's tail; ln(100) at
    p99). Infinite when the result is unstable. A heuristic for ranking and screening only.
    """
    if not fast.stable or not math.isfinite(fast.latency_mean_us):
        return math.inf
    cv = float(parameter("device_behaviour.service_cv"))
    service = fast.bounds.r_min_us
    wait = max(0.0, fast.latency_mean_us - service)
    return service * _lognormal_quantile(cv, q) + wait * math.log(1.0 / (1.0 - q))


def with_tails(fast: FastResult) -> FastResult:
    """``fast`` (and each of its workloads) with a p99 / p99.9 estimate: its own when it has one, else the heuristic's."""
    workloads = {name: with_tails(w) for name, w in fast.workloads.items()} if fast.workloads is not None else None
    if fast.latency_p99_us is not None and fast.latency_p999_us is not None and fast.tail_method:
        return fast if workloads is None else replace(fast, workloads=workloads)
    return replace(fast, workloads=workloads, latency_p99_us=heuristic_quantile_us(fast, 0.99),
                   latency_p999_us=heuristic_quantile_us(fast, 0.999), tail_method="heuristic")


@dataclass(frozen=True)
class DieGroupLoad:
    """One die group of a solved route as its reads see it (``DieWaitLaw``'s inputs before other classes' loads):
    ``devices`` the meter names of its dies (one per device, ``DieGroups``); ``share`` its part of the route's
    device reads; ``mean_wait_us`` the fast path's mean wait of a read there (the die's queue and the programs
    met); ``read_load`` and ``program_load`` the die's utilisation by the route's reads (all of them: the closed
    loop's ``seen`` factor is applied when the law is built) and programs; ``background`` a rebuild's."""

    devices: tuple[str, ...]
    share: float
    mean_wait_us: float
    read_us: float
    read_cv: float
    read_load: float
    seen: float
    background: float
    program_load: float
    program_us: float
    program_cv: float
    pages: int = 1
    """Dies a read spans where the route reads one size of several pages (fork/join; else 1)."""
    dies: int = 1
    channel_us: float = 0.0
    """A fork/join read's mean time at its device's read channel (wait and transfer)."""
    population: int = 0
    cycle_us: float = 0.0
    channel_cv: float = 0.0
    sources: int = -1
    """A closed loop's other reads' pages ((N - 1) x ``pages``) where its reads over several pages take the fork/join
    law (``DieWaitLaw.fork_join``); -1 else."""
    read_pages: float = 0.0
    """Die pages a logical read reads at this group (a read of k pages reads k distinct dies at once; 0 where the
    route reads none here): ``_stream_tails``' slowest of k."""
    page_wait_us: float = -1.0
    """One page's mean wait at its die: the die's queue and the rest of one program operation met at random (not the
    slowest of a read's pages, which ``mean_wait_us`` carries): the per-die law of a read over several pages. -1 on a
    device whose reads and programs share the dies (eXFlash: programs queue with the reads there; taken page by page
    its 32 / 64 KiB 67/33 p99 came out 30-52% above the DES, against -3..+5% on the one-die law)."""


@dataclass(frozen=True)
class DieTailModel:
    """What a solved route's die-level p99 / p99.9 are built from (``die_tail_model``; ``TAIL_METHODS``).

    ``stable`` False: the route is unstable (infinite tails). ``own_tails`` False: the model carries the route's
    load at its dies only (an open sequential stream's stripe blend: its means are not the solved route's; its tail
    the heuristic's alone, among other workloads its reads' pages at their dies, ``_stream_above``).
    ``closed_reads``: (layout, jobs) where the ``dies, closed reads`` law applies."""

    stable: bool
    own_tails: bool
    groups: tuple[DieGroupLoad, ...]
    read_share: float
    read_mean_us: float
    write: WriteLaw
    closed_reads: tuple[DieLayout, int] | None

    def loads(self) -> dict[str, tuple[float, float, float]]:
        """Per die (by device meter name): (read load, program load, program load x program time)."""
        out: dict[str, tuple[float, float, float]] = {}
        for g in self.groups:
            for name in g.devices:
                r, w, wt = out.get(name, (0.0, 0.0, 0.0))
                out[name] = (r + g.read_load, w + g.program_load, wt + g.program_load * g.program_us)
        return out


def _fork_join(c: Compiler, wl: object, read_sizes: list[float]) -> tuple[int, int] | None:
    """(pages, sources) where a closed loop reads one size over several pages on one device alone (random: each
    page's die drawn at random): the fork/join law at the dies (``DieWaitLaw.fork_join``), the other reads' pages its
    finite sources ((N - 1) x pages); else None."""
    if (not isinstance(wl, ClosedWorkload) or c.net.op_prob[WRITE] > 0 or len(c.die_devices) != 1
            or len(set(read_sizes)) != 1 or not c.die_devices[0].p.random_access):
        return None
    pages = c.die_devices[0].d.pieces(float(read_sizes[0]))
    population = wl.jobs * wl.queue_depth
    return (pages, (population - 1) * pages) if pages > 1 and population >= 1 else None


SATURATED = 0.999
"""A closed loop whose throughput is at least this share of its bottleneck's capacity saturates it (the fast path's
closed solution reaches the capacity there, to its bisection's 1e-6): ``WriteLaw.gather``."""
DESTAGE = (".dies", ".write_bw", ".write_cache")
"""A ``dies`` device's stations behind its write cache (and the cache): a loop saturating one fills the cache."""


def die_tail_model(c: Compiler, scenario: Scenario, ev: Evaluation, ev0: Evaluation, latency: list[float],
               stable: bool) -> DieTailModel | None:
    """The die groups' loads and the write law of a solved route (``die_tails``); None without die groups."""
    if not c.die_devices:
        return None
    net = c.net
    wl = scenario.workload
    write = WriteLaw(zero_us=0.0, mean_us=0.0)
    if not stable or not all(math.isfinite(v) for v in latency):
        return DieTailModel(False, True, (), net.op_prob[READ], latency[READ], write, None)
    x = ev.x
    closed_reads: tuple[DieLayout, int] | None = None
    # a read's mean die time: tR, or on a shared-die device tR and its bytes beyond the first 4 KiB (``DieGroups``)
    read_kinds = [k for k in net.kinds if k.op == READ]
    read_prob = sum((k.prob for k in read_kinds), 0.0)
    read_bytes = sum((k.prob * k.nbytes for k in read_kinds), 0.0) / read_prob if read_prob > 0 else 4096.0
    if isinstance(wl, ClosedWorkload) and net.op_prob[WRITE] <= 0 and len(c.die_devices) == 1:
        device = c.die_devices[0]
        groups = [g for g, _ in device.dies]
        if len(groups) == 1 and len(groups[0].names) == device.d.dies and not device.spans_pages:
            layout = device.d
            hold = device.die_us + device.die_us_per_byte * read_bytes
            if hold != layout.die_read_us:  # a shared-die device's read of more than 4 KiB
                layout = layout.reading_for(hold)
            closed_reads = (layout, wl.jobs * wl.queue_depth)
    fork_join = _fork_join(c, wl, [k.nbytes for k in read_kinds])
    write_kinds = [k for k in net.kinds if k.op == WRITE]
    write_prob = sum((k.prob for k in write_kinds), 0.0)
    write_bytes = sum((k.prob * k.nbytes for k in write_kinds), 0.0) / write_prob if write_prob > 0 else 4096.0
    population = float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else INF
    loads: list[DieGroupLoad] = []
    for device in c.die_devices:
        p, d = device.p, device.d
        channel_us = spread_us = 0.0
        if fork_join:  # the read channel after the join: its wait and the bytes beyond the first 4 KiB
            nbytes = float(read_kinds[0].nbytes)
            channel_us = (ev.waits[device.read_bw[0][0].index]
                          + max(0.0, (nbytes - FIRST_READ_BYTES) * device.read_per_byte))
            # the network's delay for the last of the read's pages with no wait (``DieGroups.spread``): part of the
            # fork/join's mean at the dies, which ``fork_join_above`` gives itself (not a shift of the rest)
            spread_us = device.spread(nbytes)
        if p.shared_dies:
            program_us = p.die_program_time_us(write_bytes) * d.dies / p.read_units
        else:
            program_us = program_operations(p, d).operation_us  # a read meets one operation (``ProgramOperations``)
        program_cv = p.service_cv if p.law == "lognormal" else 0.0
        for (g, _), (h, _) in zip(device.dies, device.programs, strict=True):
            n = len(g.names)
            reads = op_visits(net, g)[READ] if net.op_prob[READ] > 0 else 0.0
            # the die station's own work is its reads (and a rebuild's share); the programs are the locks that
            # share its servers (``DieGroups.programs``, ``Group.shares_with``): a read waits in the die's queue
            # and behind a program met at random
            program_load = x * h.work / n
            # a closed loop's read sees the other reads with population N - 1 (the arrival theorem); programs run
            # behind the acknowledgement, outside the population (at QD1 a read still meets the loop's own
            # acknowledged writes programming), and so does a rebuild; the read load is the one the read sees, both in
            # the chance its die is busy and in the residual's mixture (a read's residual is not in a QD1 read's wait)
            seen = max(0.0, 1.0 - 1.0 / (population * g.reach)) if population * g.reach >= 1 else 0.0
            read_us = device.die_us + device.die_us_per_byte * read_bytes  # tR unless the dies are shared
            read_load = x * g.work / n
            # one page's wait: the die's queue and one operation's rest met at random, over 1 - the die's read load
            # (the network's program-lock wait for a read of one page, ``Network.evaluate``)
            page_wait = -1.0 if p.shared_dies else ev.waits[g.index] + (
                program_load * program_us * (1.0 + program_cv * program_cv) / 2.0 / (1.0 - read_load) if read_load < 1.0 else math.inf)
            loads.append(DieGroupLoad(devices=tuple(dict.fromkeys(g.names)), share=reads,
                                      mean_wait_us=ev.waits[g.index] + ev.waits[h.index] + spread_us, read_us=read_us,
                                      read_cv=d.die_read_cv, read_load=read_load, seen=seen, background=g.background_util,
                                      program_load=program_load, program_us=program_us, program_cv=program_cv,
                                      pages=fork_join[0] if fork_join else 1, dies=d.dies,
                                      sources=fork_join[1] if fork_join else -1, channel_us=channel_us,
                                      population=round(population) if fork_join else 0,
                                      cycle_us=population / x if fork_join and x > 0 else 0.0,
                                      channel_cv=p.read_channel_cv,
                                      read_pages=g.work / g.page_us / net.op_prob[READ] if g.page_us > 0 and reads > 0 else 0.0,
                                      page_wait_us=page_wait))
    write = _write_law(c, ev0, latency, x, population)
    return DieTailModel(True, True, tuple(loads), net.op_prob[READ], latency[READ], write, closed_reads)


def _write_law(c: Compiler, ev0: Evaluation, latency: list[float], x: float, population: float) -> WriteLaw:
    """The write law (``WriteLaw``) of a solved route under ``dies`` at throughput ``x`` (per us)."""
    net = c.net
    # the write's acknowledgement: the cache's ack less the controller's part, the device law's lognormal (the DES's
    # ``write_ack`` delay); a closed loop's writes wait as a finite source (``WriteLaw``)
    p0, d0 = c.die_devices[0].p, c.die_devices[0].d
    write_rate = x * net.op_prob[WRITE]
    # the finite-source law at one device: a job's writes reach it at the device's share of the write rate (its
    # cache's visits per logical write: a mirrored write visits two devices), so the rest of the cycle between two
    # of its visits there is population / that rate - w (each other job independently at this device or not)
    cache_g = c.die_devices[0].write_cache[0][0] if c.die_devices[0].write_cache else None
    device_rate = write_rate * op_visits(net, cache_g)[WRITE] / len(cache_g.names) if cache_g is not None else 0.0
    # copies a logical write waits for at once (a mirror's two; RAID's data and parity): its visits to the caches
    copies = sum((op_visits(net, g)[WRITE] for device in c.die_devices for g, _ in device.write_cache), 0.0)
    devices = len({name for device in c.die_devices for g, _ in device.write_cache for name in g.names})
    # the stages of the wait are departures at the loop's bottleneck: the busy dies (programs of the device law's cv),
    # or where a limit or station before the device binds (a z/VM minidisk's one subchannel) its servers, their
    # holds taken at the same cv (the acknowledgement's law dominates a write's hold there)
    servers = d0.dies
    caps = net.capacities()
    visits = device_rate / write_rate if write_rate > 0 else 1.0
    gather = 0.0
    if caps:
        neck = net.groups[caps.index(min(caps))]
        device_names = {name.rsplit(".", 1)[0] for device in c.die_devices for g, _ in device.write_cache for name in g.names}
        if not any(name.rsplit(".", 1)[0] in device_names for name in neck.names):
            servers = max(1, neck.servers * len(set(neck.names)) // max(1, devices))
        elif devices > 1 and x >= SATURATED * min(caps) and any(name.endswith(DESTAGE) for name in neck.names):
            # a closed loop that saturates what drains the devices' caches (dies, write channel) fills them: its
            # waiting writes gather at the fullest device (``WriteLaw.gather``), which a write visits so many times
            gather = min(1.0, visits)
    return WriteLaw(zero_us=ev0.latency[WRITE], mean_us=latency[WRITE],
                     ack_us=min(ev0.latency[WRITE], max(0.0, p0.write_ack_us - write_command_us(d0, p0))),
                     ack_cv=p0.service_cv if p0.law == "lognormal" else 0.0, population=population,
                     cycle_us=population / write_rate if device_rate > 0 and math.isfinite(population) else 0.0,
                     servers=servers, program_cv=p0.service_cv if p0.law == "lognormal" else 0.0,
                     copies=max(1, round(copies)), devices=devices, visits=visits, gather=gather)


def die_wait_laws(model: DieTailModel, others: dict[str, tuple[float, float, float]],
                  read_wait_us: float = 0.0, per_page: bool = False) -> list[DieWaitLaw]:
    """The ``DieWaitLaw`` of each die group of ``model``'s route, with ``others`` the other workloads' load at each
    die (``DieTailModel.loads``: summed over them) and ``read_wait_us`` their programs' mean wait per read
    (``sim.analytic.classes.Dies``) on top of the route's own. A die's read and program loads are the sums over
    the workloads (another workload's reads are seen in full: the arrival theorem's N - 1 is a loop's own), its
    program time the load-weighted mean of theirs (the residual's mean E[S^2] / 2 E[S] kept)."""
    laws: list[DieWaitLaw] = []
    for g in model.groups:
        more_reads = more_programs = more_time = 0.0
        for name in g.devices:
            r, w, wt = others.get(name, (0.0, 0.0, 0.0))
            more_reads += r / len(g.devices)
            more_programs += w / len(g.devices)
            more_time += wt / len(g.devices)
        read_load = g.read_load * g.seen + more_reads + g.background
        program_load = g.program_load + more_programs
        program_us = g.program_us
        if more_programs > 0:
            program_us = (g.program_load * g.program_us + more_time) / program_load
        # a closed loop's fork/join reads alone at their dies (another workload's I/Os there: the one-die law)
        alone = more_reads <= 0 and more_programs <= 0 and read_wait_us <= 0
        mean_wait = (g.page_wait_us if per_page else g.mean_wait_us) + read_wait_us
        laws.append(DieWaitLaw(share=g.share, mean_wait_us=mean_wait, read_us=g.read_us,
                               read_cv=g.read_cv, read_load=read_load, program_load=program_load,
                               program_us=program_us, program_cv=g.program_cv, busy=min(1.0, program_load + read_load),
                               pages=g.pages, dies=g.dies, sources=g.sources if alone else -1,
                               channel_us=g.channel_us, population=g.population, cycle_us=g.cycle_us,
                               channel_cv=g.channel_cv))
    return laws


def die_tails(model: DieTailModel, latency: list[float]) -> tuple[float, float, str]:
    """The die-level p99, p99.9 and method of a solved route from its die model (``TAIL_METHODS``); reads of several
    pages among the route's own programs page by page (calibration/ext/DIE_LEVEL.md, "page by page")."""
    if not model.stable:
        return math.inf, math.inf, "dies"
    if model.closed_reads is not None:
        layout, qd = model.closed_reads
        return (closed_read_quantile_us(layout, qd, latency[READ], 0.99),
                closed_read_quantile_us(layout, qd, latency[READ], 0.999), "dies, closed reads")
    if _spans_dies(model) and any(g.program_load > 0 for g in model.groups) and all(g.page_wait_us >= 0 for g in model.groups):
        # reads of several pages among the route's own programs: page by page, each page's die with its own wait
        # (``page_wait_us``), the read waiting for the slowest (``spanning_read_above``)
        laws = die_wait_laws(model, {}, per_page=True)
        pages = [(g.read_pages, law) for g, law in zip(model.groups, laws, strict=True)]
        above = spanning_read_above(model.read_share, latency[READ], pages, model.write)
        tails = mixture_quantiles_us((0.99, 0.999), [(1.0, above)], max(1.0, latency[READ], model.write.mean_us))
        return tails[0], tails[1], "dies"
    tails = route_quantiles_us((0.99, 0.999), model.read_share, latency[READ], die_wait_laws(model, {}), model.write)
    return tails[0], tails[1], "dies"


def pooled_tails(net: Network, ev: Evaluation, ev0: Evaluation, latency: list[float], population: float,
                  x: float, servers: int) -> tuple[float, float, str]:
    """The p99, p99.9 and method (``TAIL_METHODS``: ``pooled``) of a route whose flash devices are pooled, solved at
    ``ev`` (``ev0`` at zero load) for a closed loop of ``population`` jobs or open (Poisson) arrivals (``population``
    infinite).

    Per operation: its zero-load latency scaled by the engine's lognormal service law (parameters.yaml
    ``device_behaviour.service_cv``), plus a wait of the fast path's mean for that operation (``WriteLaw``): open
    arrivals an exponential; a closed loop the machine repairman's finite-source law of its jobs, each visiting that
    operation every population / its rate (an arriving I/O finds n of the others waiting, W | n the departures of
    the bottleneck's ``servers`` busy servers), so a loop that saturates its path keeps a steady queue and its wait
    is tight (the pooled eXFlash DIMM's 4 KiB reads at QD 256: DES p99 1,934 us on a mean of 1,791; the exponential
    heuristic gave 7,918). A read that meets a program on its die (``FlashGroups.die_locks``,
    ``Network.program_lock_waits``) first waits out the rest of it: with the chance that gives the fast path's mean
    wait there, a residual of the lognormal program (the DIMM's 67/33 mix at QD 1: DES p99 525 us, the heuristic
    212). Reads and writes mixed by their shares (``mixture_quantiles_us``)."""
    cv = float(parameter("device_behaviour.service_cv"))
    parts: list[tuple[float, Callable[[float], float]]] = []
    scale = 1.0
    read_share = net.op_prob[READ]
    for op, share in ((READ, read_share), (WRITE, 1.0 - read_share)):
        if share <= 0:
            continue
        zero = ev0.latency[op]
        mean = max(zero, latency[op])
        meet, residuals = 0.0, [0.0]
        locks = [lock for lock in net.program_lock_waits(ev) if lock[0] > 0] if op == READ else []
        if locks:
            lock_wait = sum((w for w, _, _ in locks), 0.0)
            _, program_us, program_cv = max(locks)
            meet = min(1.0, lock_wait / (program_us * (1.0 + program_cv * program_cv) / 2.0))
            residuals = residual_points(program_us, program_cv, RESIDUAL_POINTS)
            mean = max(zero, mean - meet * sum(residuals, 0.0) / len(residuals))
        law = WriteLaw(zero_us=zero, mean_us=mean, ack_us=zero, ack_cv=cv, population=population,
                       cycle_us=population / (x * share) if math.isfinite(population) else 0.0, servers=servers,
                       program_cv=cv)
        parts.append((share, _law_above(law, law.wait_table(), meet, residuals)))
        scale = max(scale, latency[op])
    tails = mixture_quantiles_us((0.99, 0.999), parts, scale)
    return tails[0], tails[1], "pooled"


RESIDUAL_POINTS = 40
"""Equally likely points of a program's residual in ``pooled_tails`` (a read meeting a program)."""


def _law_above(law: WriteLaw, table: tuple[float, list[float]], meet: float, residuals: list[float]) -> Callable[[float], float]:
    """P(latency > t) of ``law`` with its wait table, after waiting out one of ``residuals`` (equally likely) with
    chance ``meet`` (``pooled_tails``)."""
    share = meet / len(residuals)

    def above(t: float) -> float:
        p = law.above(t, table)
        if meet <= 0:
            return p
        return (1.0 - meet) * p + share * sum((law.above(t - r, table) for r in residuals), 0.0)
    return above


def _write_with_mean(write: WriteLaw, mean_us: float) -> WriteLaw:
    """``write`` with the mean latency ``mean_us`` (a class's, the interference included; built field by field: a
    compiled dataclass is not handed to ``dataclasses.replace``)."""
    return WriteLaw(zero_us=write.zero_us, mean_us=mean_us, ack_us=write.ack_us, ack_cv=write.ack_cv,
                    population=write.population, cycle_us=write.cycle_us, servers=write.servers,
                    program_cv=write.program_cv, copies=write.copies, devices=write.devices, visits=write.visits,
                    gather=write.gather)


def _other_loads(loads: dict[str, dict[str, tuple[float, float, float]]], name: str) -> dict[str, tuple[float, float, float]]:
    """Per die (device meter name): the loads (``DieTailModel.loads``) of every workload but ``name``, summed."""
    others: dict[str, tuple[float, float, float]] = {}
    for other, load in loads.items():
        if other == name:
            continue
        for device, (a, b, t) in load.items():
            ra, rb, rt = others.get(device, (0.0, 0.0, 0.0))
            others[device] = (ra + a, rb + b, rt + t)
    return others


def _spans_pages(model: DieTailModel) -> bool:
    """Whether ``model``'s reads are known page by page at their dies (``DieGroupLoad.read_pages``)."""
    return model.read_share > 0 and any(g.read_pages > 0 for g in model.groups)


def _spans_dies(model: DieTailModel) -> bool:
    """Whether ``model``'s reads each read several pages at once, at distinct dies (``DieGroupLoad.read_pages`` at
    least 2 at a group: a 256 KiB read's 16 pages; an 8 KiB read that now and then crosses a page, 1.02 pages, is one
    die's read)."""
    return model.read_share > 0 and any(g.read_pages >= 2.0 - 1e-9 for g in model.groups)


def _stream_above(model: DieTailModel, others: dict[str, tuple[float, float, float]], read_mean_us: float,
                  write: WriteLaw) -> Callable[[float], float]:
    """P(latency > t) of an open sequential stream's stripe blend among several workloads: the
    blend's means are not one route's (pinned and spread by dwell), but its reads are read page by page
    all the same, a read of k pages at k distinct dies waiting for the slowest (``spanning_read_above``). Each page's
    die is one of its group's as every read there sees it (``die_wait_laws``: the route's own die wait, the other
    workloads' reads and programs at the die); the slowest page's mean comes out of that law, and the rest of the
    blend's read mean ``read_mean_us`` is taken as a fixed part outside the dies."""
    laws = die_wait_laws(model, others)
    pages = [(g.read_pages, law) for g, law in zip(model.groups, laws, strict=True)]
    return spanning_read_above(model.read_share, read_mean_us, pages, write)


def mixed_tails(mixed: FastResult, models: dict[str, tuple[DieTailModel | None, float]]) -> FastResult:
    """A multi-workload result with die-level tails (``TAIL_METHODS``: ``dies``) for each workload whose route has
    its own (``DieTailModel.own_tails``), the other workloads' loads at the shared dies added to its own
    (``die_wait_laws``), at its own mix and means (the interference included); the total's the mixture of the
    workloads' latency laws by their shares of the I/Os, when every workload with I/Os has one (else the
    heuristic's, ``with_tails``)."""
    per = mixed.workloads or {}
    loads = {name: m.loads() for name, (m, _) in models.items() if m is not None and m.stable}
    tailed: dict[str, FastResult] = {}
    parts: list[tuple[float, Callable[[float], float]]] = []
    whole = True
    unstable = False
    scale = 1.0
    for name, r in per.items():
        model, read_wait = models.get(name, (None, 0.0))
        weight = r.iops / mixed.iops if mixed.iops > 0 else 0.0
        others = _other_loads(loads, name)
        busy = any(v[0] > 0 or v[1] > 0 for v in others.values())
        # a stripe blend gets its reads' law among other workloads' loads only (alone: the single-class heuristic)
        if model is None or (not model.own_tails and not (busy and _spans_pages(model))):
            tailed[name] = r
            whole = whole and weight <= 0
            continue
        if not model.stable or not r.stable or not math.isfinite(r.latency_mean_us):
            tailed[name] = replace(r, latency_p99_us=math.inf, latency_p999_us=math.inf, tail_method="dies")
            unstable = True
            continue
        read_mean = r.read_latency_mean_us if r.read_iops > 0 else model.read_mean_us
        if model.closed_reads is not None and not busy and read_wait <= 0:
            layout, qd = model.closed_reads
            tailed[name] = replace(r, latency_p99_us=closed_read_quantile_us(layout, qd, read_mean, 0.99),
                                   latency_p999_us=closed_read_quantile_us(layout, qd, read_mean, 0.999),
                                   tail_method="dies, closed reads")
            whole = whole and weight <= 0  # its law is a quantile function only: the total takes the heuristic
            continue
        write = _write_with_mean(model.write, r.write_latency_mean_us) if r.write_iops > 0 else model.write
        # a stripe blend's reads, and reads of several pages among other workloads' loads, page by page: each page
        # waits at its own die (the others' programs met there at random), the read for the slowest of its pages.
        # ``read_wait`` (``classes.Dies``) is already that slowest rest's mean, on the read's mean: taken as one die's
        # mean wait, a die found busy only now and then, it made the wait behind a busy die thousands of us
        if model.own_tails and not (busy and _spans_dies(model)):
            above = route_above(model.read_share, read_mean, die_wait_laws(model, others, read_wait), write)
        else:
            above = _stream_above(model, others, read_mean, write)
        scale_one = max(1.0, read_mean, write.mean_us)
        tails = mixture_quantiles_us((0.99, 0.999), [(1.0, above)], scale_one)
        tailed[name] = replace(r, latency_p99_us=tails[0], latency_p999_us=tails[1], tail_method="dies")
        if weight > 0:
            parts.append((weight, above))
            scale = max(scale, scale_one)
    out = replace(mixed, workloads=tailed)
    carrying = [r for r in tailed.values() if r.iops > 0]
    if len(carrying) == 1 and carrying[0].tail_method:  # one workload carries the I/Os: the total is its law
        one = carrying[0]
        return replace(out, latency_p99_us=one.latency_p99_us, latency_p999_us=one.latency_p999_us, tail_method=one.tail_method)
    if unstable or not mixed.stable:
        return replace(out, latency_p99_us=math.inf, latency_p999_us=math.inf, tail_method="dies") if whole else out
    if whole and parts:
        total = sum((w for w, _ in parts), 0.0)
        tails = mixture_quantiles_us((0.99, 0.999), [(w / total, above) for w, above in parts], scale)
        out = replace(out, latency_p99_us=tails[0], latency_p999_us=tails[1], tail_method="dies")
    return out
