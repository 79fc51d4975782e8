"""The Result of a finished run: every metric with its 95% interval over the steady batches,
the utilization of every component, the bottleneck, why the run stopped and how far the
result can be trusted (the result half of ``sim.des.engine.Run``).

Validity (``models.result.Validity``):

* ``unstable``: an open (or bursty) workload offers a resource as much as it can serve, by the
  run's own evidence (the module ``sim.plan.capacity_check`` adds the fast path's bound of the same
  route where both solvers are at hand). Two tests, either enough:

  - the utilization law with the engine's own meter data: over the measured window a resource's
    utilization is U_i = X * D_i (X the measured throughput, D_i its busy time per I/O over its
    servers; a pool of c servers, such as a drive's dies, is busy server time / (c x window)), so
    the load the workload *offers* it is rho_i = lambda * D_i = U_i * lambda / X, with lambda the
    workload's mean arrival rate, and U_i itself where the run kept up (X >= lambda:
    ``sim.des.batching.offered_load``). With X taken at the upper end of its 95% interval (so noise
    cannot make a stable run look overloaded), rho_i >= ``sim.des.batching.SATURATED_RHO`` marks the run unstable
    and names the resource. A stable queue has X = lambda, so rho_i = U_i < 1; an overloaded one
    has U_i -> 1 and X < lambda. At rho within 1% of 1 a finite run cannot tell a queue at capacity
    from one past it: both are reported unstable. The resources are the pools of servers (stations,
    a drive's dies) and the concurrency limits an I/O waited for (``sim.des.batching.competing``).
  - the backlog rising: the I/Os in flight, batch by batch over the steady window, trend upwards
    (Mann-Kendall z >= ``sim.des.stats.TREND_Z``, one-sided p = 0.001) and the Theil-Sen line
    through them rises by at least ``sim.des.batching.RISE`` of their mean over the window - a queue that grows for
    as long as the run lasts, whichever resource holds it.

  The run stops as soon as either holds at two checks a quarter of the run apart (``BatchMeans.overload``), and a
  backlog beyond ``sim.des.engine.UNSTABLE_BACKLOG`` stops it at once.
  A closed workload (a fixed number of I/Os in flight) cannot be unstable.
* ``precise``: the steady batches give IOPS and mean latency to ``run.target_rel_ci`` - the
  precision rule stopped the run, or a budget did after the precision was reached; for an open
  workload the steady window also covered the relaxation time of its most loaded resource and its
  backlog did not rise (``sim.des.batching``).
* ``cut_short``: a budget (I/Os or wall time) ended the run before that precision, or before the
  run covered the relaxation time near capacity (the note says which, and how long a run needs).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import TYPE_CHECKING

from models.bottleneck import most_utilized
from models.result import METRIC_KEYS, Metric, RebuildFigures, Result, WorkloadResult
from sim.des.batching import RELAXATION_TIMES, SATURATED_RHO, competing, offered_load, offered_rate, workload_rate
from sim.des.components import Pool, SubchannelPool
from sim.des.stats import estimate, t_half_width

if TYPE_CHECKING:
    from sim.des.batching import BatchMeans
    from sim.des.run_state import RunState

__all__ = ["SATURATED_RHO", "assemble", "offered_rate", "saturated", "workload_rate"]

def offered_with_closed(run: RunState, per_workload: dict[str, WorkloadResult] | None) -> float:
    """The rate the run offers the path: the open workloads' arrival rates plus what the closed ones
    measured (a closed workload offers what it gets); 0 when no workload is open."""
    lam = offered_rate(run)
    if lam <= 0 or per_workload is None:
        return lam
    return lam + sum(w.iops.value for w in per_workload.values() if w.offered_iops is None and math.isfinite(w.iops.value))


def saturated(run: RunState, iops: Metric, utilization: dict[str, float], candidates: dict[str, float],
              lam: float | None = None) -> tuple[str, float] | None:
    """(component, offered load as a fraction of its capacity) when the open workloads offer a
    component at least ``SATURATED_RHO`` of its capacity, else None (see the module docstring).
    The decision takes X at the top of its interval; the load reported takes X's point estimate.
    With several workloads, ``lam`` is the open rates plus the closed workloads' throughput."""
    lam = offered_rate(run) if lam is None else lam
    if lam <= 0:
        return None
    x_high = iops.ci95[1] if iops.has_ci else iops.value
    if not x_high > 0:
        name = max(candidates, key=lambda k: candidates[k]) if candidates else "the I/O path"
        return name, math.inf
    pool = candidates or utilization
    name = max(pool, key=lambda k: pool[k])
    if offered_load(pool[name], lam, x_high) < SATURATED_RHO:
        return None
    return name, offered_load(pool[name], lam, iops.value)  # reported: the point estimate of the offered load


def _verdict(run: RunState, batching: BatchMeans, hot: tuple[str, float] | None, bottleneck: str) -> tuple[str, str, str]:
    """(validity, its note, the bottleneck to report) of a run that produced batches."""
    reason = run.stop_reason
    rise = batching.backlog_rising() if hot is None and not reason.startswith("unstable") else None
    if hot is not None:
        name, rho = hot
        load = f"{rho:.0%} of its capacity" if math.isfinite(rho) else "more than its capacity"
        return "unstable", (f"offered load {offered_rate(run):,.0f} IOPS meets or exceeds the capacity of {name} "
                            f"({load}): the queue grows for as long as the run lasts"), name
    if reason.startswith("unstable"):
        return "unstable", (f"offered load {offered_rate(run):,.0f} IOPS: {reason.removeprefix('unstable: ')} "
                            f"(busiest: {bottleneck})"), bottleneck
    if rise is not None:
        z, start, end = rise
        return "unstable", (f"offered load {offered_rate(run):,.0f} IOPS: the I/Os in flight rose from {start:,.0f} to "
                            f"{end:,.0f} across the measured window (Mann-Kendall z = {z:.1f}); the queue grows for as long "
                            f"as the run lasts (busiest: {bottleneck})"), bottleneck
    if reason.startswith("precision") or batching.precise():
        return "precise", "", bottleneck
    target = run.scenario.run.target_rel_ci
    relax = batching.relaxation()
    if relax is not None and relax[3] < RELAXATION_TIMES * relax[2]:
        name, rho, tau, window = relax
        need = RELAXATION_TIMES * tau * 1e-6 * offered_rate(run) if math.isfinite(tau) else math.inf
        more = f"about {need:,.0f} measured I/Os" if math.isfinite(need) else "a run longer than any budget"
        return "cut_short", (f"{reason}; near capacity ({name} offered {rho:.1%} of it) the queue relaxes over "
                             f"{tau / 1e3:,.3g} ms, and the measured {window / 1e3:,.3g} ms cover less than the "
                             f"{RELAXATION_TIMES:g} relaxation times a precise answer needs ({more})"), bottleneck
    if batching.rising():
        return "cut_short", (f"{reason}; the I/Os in flight still rose across the batches (Mann-Kendall z = "
                             f"{batching.in_flight_trend():.1f}): the run may not have reached its steady state"), bottleneck
    return "cut_short", f"{reason}; the 95% intervals are wider than run.target_rel_ci={target:g}", bottleneck


def _limits(run: RunState) -> list[str]:
    """The concurrency limits (slots) among the run's meters: named after a station they tie with
    (``models.bottleneck.most_utilized``)."""
    return [m.name for m in run.model.meters if isinstance(m, (Pool, SubchannelPool))]


def _unmeasured(run: RunState, batching: BatchMeans, wall: float) -> Result:
    """A run stopped before its warm-up ended: no metric is known (NaN, JSON null), only why;
    utilization and busy are those of the warm-up."""
    nan = Metric(value=math.nan, ci95=(math.nan, math.nan))
    meters = run.model.meters
    t0, area0, busy0 = batching.marks[0] if batching.marks else (0.0, [0.0] * len(meters), [0.0] * len(meters))
    t1, area1, busy1 = batching.meter_mark()
    window = t1 - t0
    utilization = {m.name: min(1.0, (area1[i] - area0[i]) / (m.capacity * window)) if window > 0 else 0.0
                   for i, m in enumerate(meters)}
    busy = {m.name: min(1.0, (busy1[i] - busy0[i]) / window) if window > 0 else 0.0 for i, m in enumerate(meters)}
    s = run.scenario.run
    note = (f"{run.stop_reason or 'the run stopped'} during the warm-up (run.warmup_ios={s.warmup_ios:,}): nothing was "
            f"measured (utilization and busy are the warm-up's); raise run.max_ios / run.max_wall_s or lower run.warmup_ios")
    unstable = run.stop_reason.startswith("unstable")
    return Result(
        **{key: nan for key in METRIC_KEYS},
        utilization=utilization, busy=busy, bottleneck=most_utilized(utilization, limits=_limits(run)),
        stop_reason=run.stop_reason, validity="unstable" if unstable else "cut_short", validity_note=note,
        simulated_ios=run.completed, measured_ios=0, issued_ios=run.issued, in_flight_ios=run.outstanding, batches=0,
        simulated_seconds=run.env.now * 1e-6, wall_seconds=wall, seed=s.seed, scenario=run.scenario,
    )


def assemble(run: RunState, batching: BatchMeans, wall: float) -> Result:
    """The Result of ``run`` after it stopped, ``wall`` seconds after it started."""
    if not batching.batches:
        if batching.b_ios:
            run.stopped = True
            batching.close_batch(check=False)
        elif run.completed or run.stop_reason.startswith(("budget", "unstable")):
            return _unmeasured(run, batching, wall)
        else:
            raise RuntimeError(
                f"the run ended ({run.stop_reason or 'no completions'}) before any I/O was measured; "
                f"raise run.max_ios / run.max_wall_s or lower run.warmup_ios"
            )
    batches = batching.steady_batches()
    metrics = {}
    for key in METRIC_KEYS:
        v, lo, hi = estimate(batches, key)
        metrics[key] = Metric(value=v, ci95=(lo, hi))
    per_workload = workload_results(run) if run.tallies else None
    utilization, busy = batching.occupancy()
    # pools of servers (stations, a drive's dies) always compete; a concurrency limit only if an I/O ever waited for it
    candidates = competing(run.model.meters, utilization)
    bottleneck = most_utilized(utilization, limits=_limits(run))
    reason = run.stop_reason
    hot = saturated(run, metrics["iops"], utilization, candidates, offered_with_closed(run, per_workload))
    validity, note, bottleneck = _verdict(run, batching, hot, bottleneck)
    return Result(
        **metrics,
        utilization=utilization,
        busy=busy,
        bottleneck=bottleneck,
        stop_reason=reason,
        validity=validity,
        validity_note=note,
        simulated_ios=run.completed,
        measured_ios=sum(b.ios for b in batches),
        issued_ios=run.issued,
        in_flight_ios=run.outstanding,
        batches=len(batches),
        simulated_seconds=run.env.now * 1e-6,
        wall_seconds=wall,
        seed=run.scenario.run.seed,
        scenario=run.scenario,
        workloads=per_workload,
        rebuild=rebuild_figures(run, len(batching.batches) - len(batches)),
    )


def workload_results(run: RunState) -> dict[str, WorkloadResult]:
    """Each workload's metrics over the steady batches (the same window and cut as the whole run's)."""
    out: dict[str, WorkloadResult] = {}
    named = run.scenario.named_workloads()
    for (name, wl), batches in zip(named, run.batching.steady_workload_batches(), strict=True):
        metrics = {}
        for key in METRIC_KEYS:
            v, lo, hi = estimate(batches, key)
            metrics[key] = Metric(value=v, ci95=(lo, hi))
        rate = workload_rate(wl)
        out[name] = WorkloadResult(kind=wl.kind, **metrics, offered_iops=rate if rate > 0 else None,
                                   measured_ios=sum(b.ios for b in batches))
    return out


def rebuild_figures(run: RunState, cut: int) -> RebuildFigures | None:
    """The rebuild's rate per replacement drive over the steady batches (one rate per batch window:
    units finished in it x bytes / its length) and the rebuild time at that rate."""
    source = run.rebuild
    if source is None:
        return None
    stream = source.stream
    marks = [m[0] for m in run.batching.marks] + [run.env.now]
    done = source.done_at
    per_drive = stream.io_bytes / stream.replacement_drives
    rates = []
    for i in range(cut, len(run.batching.batches)):
        t0, t1 = marks[i], marks[i + 1]
        if t1 > t0:
            units = bisect_left(done, t1) - bisect_left(done, t0)
            rates.append(units * per_drive / (t1 - t0))  # bytes per us = MB/s
    if not rates:
        return None
    rate = sum(rates) / len(rates)
    half = t_half_width(rates) if len(rates) > 1 else math.nan
    ci = (rate - half, rate + half) if math.isfinite(half) else (math.nan, math.nan)
    return RebuildFigures(rate_mbps=Metric(value=rate, ci95=ci), cap_mbps=stream.cap_bytes_per_s / stream.replacement_drives / 1e6,
                          floor_mbps=stream.floor_bytes_per_s / stream.replacement_drives / 1e6, drive_bytes=stream.drive_bytes,
                          time_s=stream.drive_bytes / (rate * 1e6) if rate > 0 else math.inf,
                          replacement_drives=stream.replacement_drives,
                          idle_rate_mbps=stream.idle_bytes_per_s / stream.replacement_drives / 1e6, throttle=stream.throttle)
