"""The analytic fast path: mean throughput, latency, utilization and bounds of a scenario in microseconds.

``evaluate(scenario) -> FastResult`` solves the same I/O path the DES builds (sim/des/model.py),
from the same route description (``sim.route.describe``: flash parameters, SAN parameters, the
resolved host, link bandwidths), as a queueing network instead of a simulation (DESIGN.md section 7: rank thousands
of candidates analytically, confirm the finalists with the DES):

* closed workloads: approximate mean-value analysis (Schweitzer's arrival-theorem correction,
  multi-server stations through Erlang C), N = X (Z + R(X)) solved for the throughput X;
* open workloads: M/G/c waits per station (Erlang C with the Allen-Cunneen factor for the
  service variability the parameters give);
* bursty workloads: on and off periods as open regimes, plus a fluid backlog when an on
  period outruns the capacity (a write-back cache absorbs what it can hold);
* concurrency limits (namespace queue depth, NVMe queues, SCSI LUN depth, z/VM subchannels,
  driver threads, write caches) as multi-slot centres whose service time is the time a slot
  is held; a mirrored namespace pair as one pool of both copies' slots for the wait (mirror
  reads take the copy with fewer I/Os outstanding, which keeps the pair's queues even);
  fork-join (mirrored writes, RAID-5 read-modify-write, striped pieces) as the expected
  maximum of the parallel device I/Os;
* flash devices as ``FlashParameters`` give them: read units and program units, or with
  shared NAND dies (eXFlash) one die pool that reads hold for ``die_read_time_us`` and
  destaged writes for ``die_program_time_us`` behind the acknowledgement (their wait for a
  die keeps the write-cache slot; the dies are the whole write path); program units sized by
  ``sustained_write_kiops`` (sequential writes program at the write bandwidth); on every device
  a read whose own die is programming waits out the rest of the program (programs in flight per
  die x E[T^2] / 2E[T], the DES's ``DieProgramLocks``);
* a closed job's cycle: think time plus the application's own time per I/O (``app_us_per_io``),
  both outside the latency;
* a z/VM SSCH as its channel program: one device command per ``zvm_command_bytes`` page, one
  after another, on the held subchannel (a route per transfer size).

The asymptotic bounds: Xmax = 1 / Dmax, the largest demand per logical I/O of any
component (a c-server station counts demand / c, a limit of c slots hold time / c);
Rmin = the latency with no queueing anywhere (the sum of the demands along the critical
path: parallel copies overlap and background destage is left out); N* = (Rmin + Z) / Dmax,
the number of I/Os in flight beyond which the bottleneck saturates. A limit whose hold grows with
the load (under dies, a read waits out the program on its die while it holds its namespace slot)
can fill its slots below Xmax: an open or bursty workload is then unstable at the rate where they
fill (``_saturation``). A pipeline's blocking estimate (the queue the slots bound) never hides that:
the hold less the pipeline stations' waits (its floor) must keep the slots below full, and a slot's
wait is at least the floor's (``Network._pool_waits``).

Beyond textbook MVA the model knows: exact MVA on a skeleton of the network near the knee
(Schweitzer's (N-1)/N is off by up to ~6% there); deterministic tandems where a faster
stage right behind a slower one never queues; siblings of a split crossing one shared single
server in turn; a few-slot write cache emptied by one destage channel (geometric tail);
sequential streams that stay on a stripe unit for a chunk (pinned for closed jobs, blended
by dwell for an open stream); pieces that share a member running one after another.

Known approximations (bench/analytic_accuracy.py measures them; bench.scenario_space.outside_claim
lists what the 5% claim leaves out): bursty arrivals; the 2-slot eXFlash write cache under
heavy or sequential writes; mirror reads over SAN LUNs, which the DES sends to the
less-loaded copy (split evenly here; namespaces use the pooled view); z/VM bases and aliases
pooled as one set of subchannels; sequential streams that collide on a stripe unit; a single-slot LUN queue that serializes a split I/O's pieces;
a shared NAND die pool taken as FCFS M/G/c with open arrivals (near saturation, above ~80%
of the dies, the 2-slot write cache holds programs back in the DES, so reads wait less there
and the fast path overstates the waits); reads behind programs as random arrivals (a read meets
programs in flight per die x the rest of one): where programs come in bursts (a large write cut
into page programs, one z/VM channel program) a read stream meets each burst once and waits less
in the DES (bench/results/analytic_accuracy.md lists it).
Utilization of a concurrency limit is slots in use / slots; of a station, busy servers / servers.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from statistics import NormalDist

from pydantic import BaseModel

from models.bottleneck import most_utilized
from models.catalog import Catalog, load_catalog, parameter
from models.fast_result import MECHANISM_TAIL_METHODS, Bounds, FastResult
from models.hardware import FlashDeviceSpec
from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload

# the die-level device preview (issue 18: not yet read by the route's solvers); loaded with the package so
# the compiled build finds it (a compiled package's submodules are imported from inside it)
from sim.analytic.classes import solve_classes
from sim.analytic.dies import (
    DiePoint,
    DieWaitLaw,
    WriteLaw,
    closed_read_quantile_us,
    die_level_closed,
    die_level_quantile_us,
    die_qd1_quantile_us,
    mixture_quantiles_us,
    residual_points,
    route_above,
    route_quantiles_us,
    spanning_read_above,
)
from sim.analytic.network import READ, WRITE, Evaluation, Group, Network
from sim.analytic.paths import STRIPED, Compiler, clear_tables, compile_scenario, layout_of
from sim.analytic.queueing import INF
from sim.analytic.rebuild import loaded_rebuild_rate
from sim.route.describe import chunk_bytes_of, volume_layout
from sim.route.flash import FIRST_READ_BYTES, DieLayout, program_operations, write_command_us

__all__ = ["TAIL_METHODS", "Bounds", "DiePoint", "FastResult", "clear_cache", "die_level_closed", "die_level_quantile_us",
           "die_qd1_quantile_us", "evaluate", "heuristic_quantile_us", "loaded_rebuild_rate", "with_tails"]


def _op_visits(net: Network, g: Group) -> list[float]:
    """Visits of group ``g`` per logical read and per logical write (for placing extra waiting)."""
    out = [0.0, 0.0]  # per logical I/O, split by op
    for kind in net.kinds:
        for vprob, phases in kind.variants:
            for phase in phases:
                for count, o, n in phase:
                    for cprob, path in net.route(o, n):
                        for grp, p, _, _, _ in path.visits:
                            if grp is g:
                                out[kind.op] += kind.prob * vprob * count * cprob * p
                        for grp, p, _ in path.spans:
                            if grp is g:
                                out[kind.op] += kind.prob * vprob * count * cprob * p
    return [out[op] / net.op_prob[op] if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]


def _spread_extra(net: Network, latency: list[float], extra: float, bottleneck: Group) -> list[float]:
    """Add ``extra`` us of mean waiting to the ops that visit the bottleneck, in proportion to their visits."""
    visits = _op_visits(net, bottleneck)
    share = [net.op_prob[op] * visits[op] for op in (READ, WRITE)]
    total = share[0] + share[1]
    out = list(latency)
    for op in (READ, WRITE):
        if net.op_prob[op] > 0:
            if total > 0:
                out[op] += extra * share[op] / total / net.op_prob[op]
            else:
                out[op] += extra
    return out


def _queue_of(c: Compiler, bottleneck: int) -> Group:
    """Where a closed loop's jobs queue when group ``bottleneck`` binds: the group itself, except for the dies of a
    ``dies`` device whose capacity its programs share (``Network.program_work``) while the loop writes. There reads
    go first at their die and the programs wait for an idle die holding their cache slots (``sim.des.dies``), so the
    cache fills and the writes wait for its slots: the device's write cache."""
    net = c.net
    if bottleneck in net.program_work and net.op_prob[WRITE] > 0:
        for device in c.die_devices:
            if any(g.index == bottleneck for g, _ in device.dies) and device.write_cache:
                return device.write_cache[0][0]
    return net.groups[bottleneck]


def _dispersion(wl: BurstyWorkload, t_us: float) -> float:
    """Index of dispersion of on/off Poisson arrivals counted over ``t_us`` (1 = Poisson).

    A two-state Markov-modulated Poisson process: I(t) = 1 + I_inf' (1 - (1 - e^{-rt}) / (rt)),
    I_inf' = 2 pi_on pi_off (l_on - l_off)^2 / (l_mean r), r = 1/T_on + 1/T_off.
    """
    t_on, t_off = wl.mean_on_ms * 1e3, wl.mean_off_ms * 1e3
    pi_on = t_on / (t_on + t_off)
    r = 1.0 / t_on + 1.0 / t_off
    mean = wl.mean_rate_iops * 1e-6
    gap = (wl.on_rate_iops - wl.off_rate_iops) * 1e-6
    if mean <= 0:
        return 1.0
    rt = r * t_us
    shape = 1.0 - (1.0 - math.exp(-rt)) / rt if rt > 1e-9 else 0.5 * rt
    return 1.0 + 2.0 * pi_on * (1.0 - pi_on) * gap * gap / (mean * r) * shape


def _relaxation_us(service: float, scv: float, ca2: float, rho: float) -> float:
    """Relaxation time of a queue at utilization ``rho``: S (ca^2 + cs^2) / 2 / (1 - sqrt(rho))^2 (M/M/1 scaled)."""
    return service * max(0.5, 0.5 * (ca2 + scv)) / (1.0 - math.sqrt(min(rho, 0.999))) ** 2


def _bursty(net: Network, wl: BurstyWorkload, x_max: float, bottleneck: Group) -> tuple[float, list[float]]:
    """Mean rate and per-op latency of on/off Poisson arrivals.

    Short on/off periods (next to the bottleneck queue's relaxation time tau, taken at the
    mean rate with Poisson variability): the queues see the mean rate with the arrivals'
    index of dispersion over tau as their arrival variability. Long periods: each
    regime is an open system at its own rate, weighted by the arrivals it brings. A regime
    is blended between the two by T / (T + tau). An on period faster than Xmax builds a
    backlog at rate (on - Xmax) once a write-back cache in front of a background bottleneck
    is full, and it drains during the off period (a fluid model with exponential periods).
    """
    mean_rate = wl.mean_rate_iops * 1e-6
    t_on, t_off = wl.mean_on_ms * 1e3, wl.mean_off_ms * 1e3
    pi_on = t_on / (t_on + t_off)
    regimes = [(wl.on_rate_iops * 1e-6, pi_on, t_on), (wl.off_rate_iops * 1e-6, 1.0 - pi_on, t_off)]
    if bottleneck.pool:
        service, scv = net.zero_load_holding(bottleneck), 1.0
    else:
        service = bottleneck.work / bottleneck.visits if bottleneck.visits else 0.0
        scv = bottleneck.work2 / bottleneck.visits / (service * service) - 1.0 if service > 0 else 0.0
    ca2 = _dispersion(wl, _relaxation_us(service, scv, 1.0, mean_rate / x_max))
    at_mean = net.evaluate(mean_rate, burstiness=ca2)
    latency = [0.0, 0.0]
    extra_sum = 0.0
    for rate, share, period in regimes:
        if rate <= 0:
            continue
        arrivals = rate * share / mean_rate
        mu = x_max
        if rate < x_max:
            ev = net.evaluate(rate)
            if ev.overloaded:
                # below Xmax, a concurrency limit whose hold grows with the load fills its slots: the path runs there
                mu = _saturation(net, rate)[0]
            else:
                w = period / (period + _relaxation_us(service, scv, 1.0, rate / x_max))
                for op in (READ, WRITE):
                    latency[op] += arrivals * (w * ev.latency[op] + (1.0 - w) * at_mean.latency[op])
                continue
        # overloaded on period: the path runs at Xmax (or where a limit fills), the excess queues
        ev = net.evaluate(0.95 * mu)
        for op in (READ, WRITE):
            latency[op] += arrivals * ev.latency[op]
        extra_sum += _backlog(net, bottleneck, rate, mu, t_on, regimes[1][0])
    extra = extra_sum / (mean_rate * (t_on + t_off))
    if extra > 0:
        latency = _spread_extra(net, latency, extra, bottleneck)
    return mean_rate, latency


def _backlog(net: Network, bottleneck: Group, rate: float, mu: float, t_on: float, off_rate: float) -> float:
    """``_bursty``'s fluid backlog of an on period at ``rate`` above the rate ``mu`` the path runs at: the wait it
    adds over the on period and the drain in the off period (x I/Os; 0 exactly at ``mu``)."""
    excess = rate - mu
    if excess <= 0.0:  # exactly at Xmax: no backlog builds (the limit of the terms below as excess -> 0)
        return 0.0
    buffer = 0.0
    if bottleneck.background:
        for g in net.groups:
            if g.pool and any(bottleneck.index in span.terms for _, span, _ in g.holding.values()):
                buffer += g.servers * len(g.names) / max(g.visits, 1e-12)
    decay = math.exp(-buffer / excess / t_on)
    during = rate * excess * t_on * t_on * decay / mu
    drain = off_rate * excess * excess * t_on * t_on * decay / (mu * (mu - off_rate)) if off_rate < mu else INF
    return during + drain


CACHE_SIZE = 512
"""Compiled networks kept for reuse (the same hardware and I/O mix at another rate or queue depth)."""
_cache: OrderedDict[tuple[object, ...], Compiler] = OrderedDict()
_cache_lock = threading.Lock()


_SCALARS = frozenset({str, int, float, bool, type(None)})
_MODEL, _INLINE_SPEC, _LIST, _OTHER = range(4)
_FREEZE_AS: dict[type, int] = {}
"""Type -> how ``_freeze`` copies its values (found once per type: isinstance on a model class is slow)."""


def _freeze(value: object) -> object:
    """A hashable copy of a model's field values (an inline device spec by identity)."""
    kind = type(value)
    how = _FREEZE_AS.get(kind)
    if how is None:
        how = _FREEZE_AS[kind] = (_INLINE_SPEC if issubclass(kind, FlashDeviceSpec) else _MODEL if issubclass(kind, BaseModel)
                                  else _LIST if issubclass(kind, list) else _OTHER)
    if how == _MODEL:
        scalars = _SCALARS
        frozen: list[object] = [kind]
        for v in value.__dict__.values():
            frozen.append(v if type(v) in scalars else _freeze(v))
        return tuple(frozen)
    if how == _INLINE_SPEC:
        return ("inline spec", id(value))
    if how == _LIST:
        return tuple([_freeze(v) for v in value])  # type: ignore[attr-defined]
    return value


def clear_cache(everything: bool = False) -> None:
    """Forget every compiled network (the next evaluations compile from scratch).

    With ``everything``, also the tables compiled networks are built from: parameters derived
    from the catalog, volume-layer plans of each layout and mix, component names.
    """
    with _cache_lock:
        _cache.clear()
    if everything:
        clear_tables()


def _compiled(scenario: Scenario, catalog: Catalog, spread: bool = False) -> Compiler:
    """The compiled network of the scenario's hardware and I/O mix, from the cache when it has been seen.

    The key leaves out what only the solver reads (rate, on/off periods, jobs x queue depth,
    think time), except the job count where jobs stay on members (closed JBOD, sequential streams).
    A catalog that changes (``load_catalog`` returns a new object) changes the key.
    """
    topo = scenario.topology
    wl = scenario.workload
    layout = volume_layout(topo)
    jobs = (wl.jobs, wl.queue_depth) if isinstance(wl, ClosedWorkload) and (layout == "jbod" or wl.access == "sequential") else None
    key = (id(catalog), _freeze(topo), wl.read_fraction, wl.block_size_kib, _freeze(wl.sizes) if wl.sizes else None, wl.access, jobs,
           spread, _freeze(scenario.faults) if scenario.faults is not None else None, scenario.device_model,
           tuple(wl.placement) if wl.placement is not None else None)
    with _cache_lock:
        c = _cache.get(key)
        if c is not None:
            _cache.move_to_end(key)
            return c
    c = compile_scenario(scenario, catalog, finish=False, spread=spread)
    c.keep = (topo, catalog)  # keeps inline specs (keyed by id) and the catalog alive while cached
    with _cache_lock:
        _cache[key] = c
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return c


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
  total takes the heuristic). An open sequential stream's stripe blend among other workloads (issue 18's backupdies
  step: its means are not one route's) gets its reads' law page by page: a read of k pages at k distinct dies waits
  for the slowest (``sim.analytic.dies.spanning_read_above``), each page's die as every workload's reads and
  programs load it, the rest of the blend's mean outside the dies; so does any workload whose reads span 2 pages or
  more among the other workloads' loads (issue 18's batchtail step: the consolidation's 256 KiB batch reads, 16 pages;
  the BDI batch's 32 KiB queries, 2): the slowest rest of the others' programs over its pages is in its read's mean
  (``classes.Dies``), not one die's mean wait (as one die's, a die found busy now and then had to wait thousands of
  us when busy: the batch's p99.9 was ten times the DES's).
* ``dies, closed reads``: a closed loop of reads (one size up to a die page) on one device alone (the queue-depth
  sweep): ``sim.analytic.dies.closed_read_quantile_us`` (calibration/ext/DIE_LEVEL.md, 144 points).
* ``pooled``: one workload, a closed loop or open arrivals, on a route whose flash devices are pooled (the eXFlash
  DIMMs under ``auto``, every device under ``pooled``): ``_pooled_tails``, per operation the service law, a read's
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
    """What a solved route's die-level p99 / p99.9 are built from (``_die_model``; ``TAIL_METHODS``).

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


def _die_model(c: Compiler, scenario: Scenario, ev: Evaluation, ev0: Evaluation, latency: list[float],
               stable: bool) -> DieTailModel | None:
    """The die groups' loads and the write law of a solved route (``_die_tails``); None without die groups."""
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
            reads = _op_visits(net, g)[READ] if net.op_prob[READ] > 0 else 0.0
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
    device_rate = write_rate * _op_visits(net, cache_g)[WRITE] / len(cache_g.names) if cache_g is not None else 0.0
    # copies a logical write waits for at once (a mirror's two; RAID's data and parity): its visits to the caches
    copies = sum((_op_visits(net, g)[WRITE] for device in c.die_devices for g, _ in device.write_cache), 0.0)
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


def _die_tails(model: DieTailModel, latency: list[float]) -> tuple[float, float, str]:
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


def _pooled_tails(net: Network, ev: Evaluation, ev0: Evaluation, latency: list[float], population: float,
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
"""Equally likely points of a program's residual in ``_pooled_tails`` (a read meeting a program)."""


def _law_above(law: WriteLaw, table: tuple[float, list[float]], meet: float, residuals: list[float]) -> Callable[[float], float]:
    """P(latency > t) of ``law`` with its wait table, after waiting out one of ``residuals`` (equally likely) with
    chance ``meet`` (``_pooled_tails``)."""
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
    """P(latency > t) of an open sequential stream's stripe blend among several workloads (issue 18's backupdies
    step): the blend's means are not one route's (pinned and spread by dwell), but its reads are read page by page
    all the same, a read of k pages at k distinct dies waiting for the slowest (``spanning_read_above``). Each page's
    die is one of its group's as every read there sees it (``die_wait_laws``: the route's own die wait, the other
    workloads' reads and programs at the die); the slowest page's mean comes out of that law, and the rest of the
    blend's read mean ``read_mean_us`` is taken as a fixed part outside the dies."""
    laws = die_wait_laws(model, others)
    pages = [(g.read_pages, law) for g, law in zip(model.groups, laws, strict=True)]
    return spanning_read_above(model.read_share, read_mean_us, pages, write)


def _mixed_tails(mixed: FastResult, models: dict[str, tuple[DieTailModel | None, float]]) -> FastResult:
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


def evaluate(scenario: Scenario) -> FastResult:
    """The analytic fast path's prediction for ``scenario`` (no simulation; ~0.1-0.2 ms, bench/fastpath.py).
    A scenario with a ``workloads`` list is solved as a multi-class network (sim/analytic/classes.py).
    A profile workload has no single steady state: ``sim.plan.profile_fast.evaluate_profile`` takes it interval by interval."""
    if scenario.profile_index() is not None:
        raise NotImplementedError("a profile workload changes over time: evaluate it interval by interval "
                                  "(sim.plan.profile_fast.evaluate_profile, `flashplan analyze` does)")
    if scenario.consolidated:
        mixed, models = solve_classes(scenario, _evaluate_class, _network_of)
        return with_tails(_mixed_tails(mixed, models))
    return with_tails(_evaluate_one(scenario))


def _network_of(scenario: Scenario) -> Network:
    """The compiled network of a one-workload scenario (its groups' demands per logical I/O)."""
    c = _compiled(scenario, load_catalog())
    with c.lock:
        _solve(c, scenario, utilization=False)  # finishes the network for the workload's population
        return c.net


PARITY_STREAM_NOTE = ("sequential I/O on {layout}: the fast path spreads the stream over every member, but it stays on one "
                      "data member (and its stripe's parity) for about {dwell:.0f} I/Os (chunk / I/O size), so queueing on "
                      "that member is underestimated (a 2 x ES4C RAID-5 at 3,000 IOPS of 8 KiB: fast 284 us, DES 412 us); "
                      "check the latency with the simulation")
"""Said in ``FastResult.notes``: the pinned / spread blend covers striped and mirrored layouts, not parity ones."""


def _parity_stream_note(scenario: Scenario) -> str | None:
    """The note for a sequential stream that dwells on a parity layout's stripe unit (None otherwise)."""
    wl, topo = scenario.workload, scenario.topology
    layout = layout_of(topo)
    if wl.access != "sequential" or layout not in ("raid5", "raid6"):
        return None
    dwell = float(chunk_bytes_of(topo)) / wl.mean_bytes()
    return PARITY_STREAM_NOTE.format(layout=layout.upper().replace("RAID", "RAID-"), dwell=dwell) if dwell >= 2 else None


def _evaluate_one(scenario: Scenario) -> FastResult:
    """One workload's fast-path prediction (the whole of ``evaluate`` for a scenario with one workload)."""
    return _evaluate_modelled(scenario)[0]


def _evaluate_class(scenario: Scenario) -> tuple[FastResult, DieTailModel | None]:
    """One class of a multi-workload scenario (``solve_classes``): its own prediction without a tail estimate and
    its route's die model (``_mixed_tails`` builds the tails with the other classes' loads at the dies)."""
    return _evaluate_modelled(scenario, tails=False)


def _evaluate_modelled(scenario: Scenario, tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_evaluate_one``'s prediction (its tails only with ``tails``) and its route's die model (``_die_model``)."""
    result, model = _evaluate_routed(scenario, tails)
    note = _parity_stream_note(scenario)
    return (replace(result, notes=(*result.notes, note)) if note else result), model


def _evaluate_routed(scenario: Scenario, tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_evaluate_modelled`` before its notes: the route's network solved, or the sequential blend (whose model
    carries the spread solution's die loads, not tails of its own: ``DieTailModel.own_tails``)."""
    catalog = load_catalog()
    dwell = _stripe_dwell(scenario)
    if dwell is None:
        c = _compiled(scenario, catalog)
        with c.lock:
            return _solve_modelled(c, scenario, tails=tails)
    spread_c = _compiled(scenario, catalog, spread=True)
    with spread_c.lock:
        spread, model = _solve_modelled(spread_c, scenario, tails=tails)
    wl = scenario.workload
    if not isinstance(wl, OpenWorkload) or not spread.stable:
        return spread, model
    pinned_c = _compiled(scenario, catalog)
    with pinned_c.lock:
        pinned = _solve(pinned_c, scenario, utilization=False)  # the blend reads its bound and latencies only
    return (_sequential_blend(spread, pinned, dwell, wl.rate_iops * 1e-6),
            DieTailModel(model.stable, False, model.groups, model.read_share, model.read_mean_us, model.write,
                         model.closed_reads) if model is not None else None)


def _stripe_dwell(scenario: Scenario) -> float | None:
    """I/Os an open sequential stream spends on one stripe unit (chunk / mean size), for striped layouts; else None."""
    wl = scenario.workload
    topo = scenario.topology
    if isinstance(wl, ClosedWorkload) or wl.access != "sequential" or layout_of(topo) not in STRIPED:
        return None
    return float(chunk_bytes_of(topo)) / wl.mean_bytes()


def _sequential_blend(spread: FastResult, pinned: FastResult, dwell: float, rate: float) -> FastResult:
    """An open sequential stream on a stripe: D = ``dwell`` consecutive I/Os on one unit, then the next unit.

    The member it sits on sees the whole rate for D I/Os, then rests while the stream goes
    round the other units. If one unit keeps up with the stream (rate < its capacity mu), its
    queue settles towards the pinned solution within about 1 / (1 - sqrt(rho))^2 arrivals; the
    first I/O of a dwell finds the unit idle, so the latency blends the pinned and the spread
    solutions by (D - 1) / (D - 1 + that). If it does not,
    a backlog of D (1 - mu / rate) builds over the dwell and drains while the stream is
    elsewhere (fluid): arrivals wait D (1 - mu / rate) / (2 mu) more on average. Throughput,
    utilization (time averages) and the bounds are the spread solution's: the stream
    pipelines over the units.
    """
    mu = pinned.bounds.x_max_iops * 1e-6
    if not spread.stable:
        return spread
    if rate < mu:
        # the first I/O of a dwell finds its unit idle (the stream was away for the other units)
        w = max(0.0, dwell - 1.0) / (max(0.0, dwell - 1.0) + 1.0 / (1.0 - math.sqrt(rate / mu)) ** 2)
        read = w * pinned.read_latency_mean_us + (1 - w) * spread.read_latency_mean_us
        write = w * pinned.write_latency_mean_us + (1 - w) * spread.write_latency_mean_us
    else:
        extra = dwell * (1.0 - mu / rate) / (2.0 * mu)
        read = spread.read_latency_mean_us + (extra if spread.read_iops > 0 else 0.0)
        write = spread.write_latency_mean_us + (extra if spread.write_iops > 0 else 0.0)
    total = spread.iops or 1.0
    mean = (spread.read_iops * read + spread.write_iops * write) / total
    # the spread solution's tail estimate no longer matches these means: ``with_tails`` sets the heuristic's
    return replace(spread, read_latency_mean_us=read, write_latency_mean_us=write, latency_mean_us=mean, latency_p99_us=None,
                   latency_p999_us=None, tail_method="")


def _saturation(net: Network, x: float) -> tuple[float, Evaluation]:
    """The largest throughput below ``x`` (overloaded there) at which the network still has a steady state, to
    1e-6 relative by bisection, with its evaluation: where a concurrency limit whose holding time grows with the
    load fills its slots (below Xmax, which takes the zero-load holds)."""
    lo, hi = 0.0, x
    ev = net.evaluate(0.0)
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        at = net.evaluate(mid)
        if at.overloaded:
            hi = mid
        else:
            lo, ev = mid, at
    return lo, ev


def _solve(c: Compiler, scenario: Scenario, utilization: bool = True) -> FastResult:
    """Solve the compiled network for the scenario's workload (without ``utilization``, the result's
    utilization and bottleneck are left empty)."""
    return _solve_modelled(c, scenario, utilization)[0]


def _solve_modelled(c: Compiler, scenario: Scenario, utilization: bool = True,
                    tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_solve`` and the route's die model (``_die_model``; None without ``utilization``); the die-level tails are
    left out without ``tails``."""
    net = c.net
    wl = scenario.workload
    population = float(wl.jobs * wl.queue_depth) if isinstance(wl, ClosedWorkload) else INF
    if population != c.population or population != INF:
        # closed: the arrival-theorem factors depend on N, Z and the knee, so they are set afresh
        net.finish(population, c.width)
        c.population = population
    caps = net.capacities()
    x_max = min(caps) if caps else INF
    bottleneck_index = caps.index(x_max) if caps else -1
    ev0 = net.evaluate(0.0)
    r_min = net.mean_latency(ev0)
    # the application's own time per I/O lengthens the cycle like think time, outside the latency
    think = wl.think_time_us + wl.app_us_per_io if isinstance(wl, ClosedWorkload) else 0.0
    stable = True
    ev: Evaluation
    if isinstance(wl, ClosedWorkload):
        population = float(wl.jobs * wl.queue_depth)
        net.exact_arrival_fractions(wl.jobs * wl.queue_depth, think, r_min, x_max)
        ev, mean_latency = net.solve_closed(population, think, x_max)
        x = ev.x
        latency = list(ev.latency)
        model_mean = net.mean_latency(ev)
        if mean_latency > model_mean * (1 + 1e-6) and bottleneck_index >= 0:
            latency = _spread_extra(net, latency, mean_latency - model_mean, _queue_of(c, bottleneck_index))
    elif isinstance(wl, OpenWorkload):
        x = wl.rate_iops * 1e-6
        stable = x < x_max
        if stable:
            ev = net.evaluate(x)
            latency = list(ev.latency)
            if ev.overloaded:
                # below Xmax (zero-load demands) yet a concurrency limit's slots are all held at this load (its holding
                # time grows with the load): no steady state; the path runs at the rate where the slots fill
                stable = False
                x, ev = _saturation(net, x)
                latency = [INF if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]
        else:
            x = x_max
            ev = net.evaluate(0.0)
            latency = [INF if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]
    else:
        assert isinstance(wl, BurstyWorkload)
        mean_rate = wl.mean_rate_iops * 1e-6
        stable = mean_rate < x_max
        if stable:
            x, latency = _bursty(net, wl, x_max, net.groups[bottleneck_index])
            ev = net.evaluate(x)
            if ev.overloaded:  # a limit's slots fill at the mean rate (as for an open workload above)
                stable = False
                x, ev = _saturation(net, x)
                latency = [INF if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]
        else:
            x = x_max
            ev = net.evaluate(0.0)
            latency = [INF if net.op_prob[op] > 0 else 0.0 for op in (READ, WRITE)]
    for op in (READ, WRITE):
        if net.op_prob[op] <= 0:
            latency[op] = 0.0
    mean = net.op_prob[READ] * latency[READ] + net.op_prob[WRITE] * latency[WRITE]
    per_component, bottleneck = _utilization(c, ev, x, x_max, caps, stable) if utilization else ({}, "")
    cpu_us = sum([g.work for g, _ in c.cpu.station], 0.0) if c.cpu else 0.0
    mean_bytes = sum([k.prob * k.nbytes for k in net.kinds])
    bound_name = net.groups[bottleneck_index].names[0] if bottleneck_index >= 0 else "none"
    model = _die_model(c, scenario, ev, ev0, latency, stable) if utilization else None
    die = _die_tails(model, latency) if tails and model is not None else None
    if die is None and tails and utilization and c.pooled_devices and not isinstance(wl, BurstyWorkload) and stable \
            and x > 0 and all(map(math.isfinite, latency)):
        die = _pooled_tails(net, ev, ev0, latency, population, x,
                            net.groups[bottleneck_index].servers if bottleneck_index >= 0 else 0)
    return FastResult(
        iops=x * 1e6,
        read_iops=x * 1e6 * net.op_prob[READ],
        write_iops=x * 1e6 * net.op_prob[WRITE],
        mbps=x * mean_bytes,
        latency_mean_us=mean,
        read_latency_mean_us=latency[READ],
        write_latency_mean_us=latency[WRITE],
        utilization=per_component,
        bottleneck=bottleneck,
        bounds=Bounds(x_max_iops=x_max * 1e6, r_min_us=r_min, n_star=(r_min + think) * x_max, bottleneck=bound_name),
        cpu_us_per_io=cpu_us,
        stable=stable,
        latency_p99_us=die[0] if die else None,
        latency_p999_us=die[1] if die else None,
        tail_method=die[2] if die else "",
    ), model


def _group_load(net: Network, ev: Evaluation, g: Group, x: float, reported: dict[int, int]) -> float:
    """A group's utilization per reported slot at throughput ``x`` (before the cap at 1): its busy servers
    (a limit: its holding time) plus a rebuild's share, over the slots the DES reports."""
    n = len(g.names)
    servers = g.servers
    if g.pool:
        hold = ev.holding[g.index] or net.holding_time(ev, g)
        u = x * g.visits / n * hold / servers
    else:
        u = x * (g.work + net.program_work.get(g.index, 0.0)) / n / servers  # a die station: its programs too
    if g.background_util:
        u += g.background_util  # a rebuild's share of the station
    return u * servers / (reported.get(id(g), servers) if reported else servers)


def _pooled_utilization(util: dict[str, float], aggregate: dict[str, list[float]], rotating: dict[tuple[str, ...], list[float]],
                        idle_names: list[str]) -> None:
    """Into ``util``: the components reported as one (busy over slots), those a sequential stream visits in turn
    (their time average spread over all), and 0 for the components no I/O visits."""
    for name, (busy, total) in aggregate.items():
        util[name] = busy / total if total else 0.0
    for labels, (busy, _) in rotating.items():
        per_instance = busy / len(labels)
        for name in labels:
            util[name] = per_instance
    for name in idle_names:
        util.setdefault(name, 0.0)


def _utilization(c: Compiler, ev: Evaluation, x: float, x_max: float, caps: list[float], stable: bool) -> tuple[dict[str, float], str]:
    """Utilization of every component (DES names) and the bottleneck: the table's most utilized component
    (``models.bottleneck.most_utilized``, the concurrency limits named after a station they tie with)."""
    net = c.net
    util: dict[str, float] = {}
    aggregate: dict[str, list[float]] = {}
    rotating: dict[tuple[str, ...], list[float]] = {}
    limits: set[str] = set()
    saturated = x >= x_max * (1 - 1e-9)
    at_bound = x_max * (1 + 1e-9)
    reported, display_of = c.reported_slots, c.display
    component = c.component if c.rotating else None
    for g, cap in zip(net.groups, caps, strict=True):
        if g.program_locks or g.view_of >= 0:
            continue  # the DES has no meter for it: the dies' pool (the viewed limit) reports the use
        names = g.names
        n = len(names)
        servers = g.servers
        u = _group_load(net, ev, g, x, reported)
        if not u <= 1.0:  # min(1.0, u), NaN included
            u = 1.0
        full = saturated and cap <= at_bound
        if full:
            u = 1.0
        if component is not None and id(g) in component:
            # sequential streams visit every instance in turn: the time average is spread over all of them
            acc = rotating.setdefault(component[id(g)], [0.0, 0.0])
            acc[0] += u * n
        display = display_of.get(id(g)) if display_of else None
        if display:
            acc = aggregate.setdefault(display, [0.0, 0.0])
            acc[0] += u * n * servers
            acc[1] += n * servers
        else:
            for name in names:
                util[name] = u
        if g.pool:
            limits.update((display,) if display else names)
    _pooled_utilization(util, aggregate, rotating, c.idle_names)
    return util, most_utilized(util, limits=limits)
