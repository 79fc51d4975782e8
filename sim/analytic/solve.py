"""The fast path's solvers: mean throughput, latency, utilization and bounds of a one-workload scenario in microseconds.

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
fill (``saturation_rate``). A pipeline's blocking estimate (the queue the slots bound) never hides that:
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
from dataclasses import replace

from models.bottleneck import most_utilized
from models.catalog import load_catalog
from models.fast_result import Bounds, FastResult
from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload
from sim.analytic.bursty import solve_bursty
from sim.analytic.cache import compiled
from sim.analytic.classes import solve_classes
from sim.analytic.demands import queue_of, saturation_rate, spread_extra
from sim.analytic.network import READ, WRITE, Evaluation, Group, Network
from sim.analytic.paths import STRIPED, Compiler, layout_of
from sim.analytic.queueing import INF
from sim.analytic.tails import DieTailModel, die_tail_model, die_tails, mixed_tails, pooled_tails, with_tails
from sim.route.describe import chunk_bytes_of


def evaluate(scenario: Scenario) -> FastResult:
    """The analytic fast path's prediction for ``scenario`` (no simulation; ~0.1-0.2 ms, bench/fastpath.py).
    A scenario with a ``workloads`` list is solved as a multi-class network (sim/analytic/classes.py).
    A profile workload has no single steady state: ``sim.plan.profile_fast.evaluate_profile`` takes it interval by interval."""
    if scenario.profile_index() is not None:
        raise NotImplementedError("a profile workload changes over time: evaluate it interval by interval "
                                  "(sim.plan.profile_fast.evaluate_profile, `flashplan analyze` does)")
    if scenario.consolidated:
        mixed, models = solve_classes(scenario, _evaluate_class, _network_of)
        return with_tails(mixed_tails(mixed, models))
    return with_tails(_evaluate_one(scenario))


def _network_of(scenario: Scenario) -> Network:
    """The compiled network of a one-workload scenario (its groups' demands per logical I/O)."""
    c = compiled(scenario, load_catalog())
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
    its route's die model (``mixed_tails`` builds the tails with the other classes' loads at the dies)."""
    return _evaluate_modelled(scenario, tails=False)


def _evaluate_modelled(scenario: Scenario, tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_evaluate_one``'s prediction (its tails only with ``tails``) and its route's die model (``die_tail_model``)."""
    result, model = _evaluate_routed(scenario, tails)
    note = _parity_stream_note(scenario)
    return (replace(result, notes=(*result.notes, note)) if note else result), model


def _evaluate_routed(scenario: Scenario, tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_evaluate_modelled`` before its notes: the route's network solved, or the sequential blend (whose model
    carries the spread solution's die loads, not tails of its own: ``DieTailModel.own_tails``)."""
    catalog = load_catalog()
    dwell = _stripe_dwell(scenario)
    if dwell is None:
        c = compiled(scenario, catalog)
        with c.lock:
            return _solve_modelled(c, scenario, tails=tails)
    spread_c = compiled(scenario, catalog, spread=True)
    with spread_c.lock:
        spread, model = _solve_modelled(spread_c, scenario, tails=tails)
    wl = scenario.workload
    if not isinstance(wl, OpenWorkload) or not spread.stable:
        return spread, model
    pinned_c = compiled(scenario, catalog)
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



def _solve(c: Compiler, scenario: Scenario, utilization: bool = True) -> FastResult:
    """Solve the compiled network for the scenario's workload (without ``utilization``, the result's
    utilization and bottleneck are left empty)."""
    return _solve_modelled(c, scenario, utilization)[0]


def _solve_modelled(c: Compiler, scenario: Scenario, utilization: bool = True,
                    tails: bool = True) -> tuple[FastResult, DieTailModel | None]:
    """``_solve`` and the route's die model (``die_tail_model``; None without ``utilization``); the die-level tails are
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
            latency = spread_extra(net, latency, mean_latency - model_mean, queue_of(c, bottleneck_index))
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
                x, ev = saturation_rate(net, x)
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
            x, latency = solve_bursty(net, wl, x_max, net.groups[bottleneck_index])
            ev = net.evaluate(x)
            if ev.overloaded:  # a limit's slots fill at the mean rate (as for an open workload above)
                stable = False
                x, ev = saturation_rate(net, x)
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
    model = die_tail_model(c, scenario, ev, ev0, latency, stable) if utilization else None
    die = die_tails(model, latency) if tails and model is not None else None
    if die is None and tails and utilization and c.pooled_devices and not isinstance(wl, BurstyWorkload) and stable \
            and x > 0 and all(map(math.isfinite, latency)):
        die = pooled_tails(net, ev, ev0, latency, population, x,
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
