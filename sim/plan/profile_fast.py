"""The analytic fast path of a load profile: every interval as its own steady state, and where that is wrong.

Each interval of a ``ProfileWorkload`` is evaluated by ``sim.analytic.evaluate`` as the steady
workload it would be if it lasted for ever (``ProfileWorkload.interval_workload``). That is
right only when the interval is long next to the time its queues take to settle. The rule used:

    settling time = SETTLING_FACTOR x tau,   tau = S / (1 - sqrt(rho))^2

tau is the relaxation time of an M/M/1 queue (Morse 1955; Kleinrock, Queueing Systems vol. 1,
section 2.9): how fast the queue forgets its starting state, the deviation from the steady mean
decaying like exp(-t / tau). It is taken at the bottleneck, with S = 1 / Xmax (its time per
logical I/O, a c-server station's demand / c, the fast path's ``Bounds``) and rho = X / Xmax.
After 3 tau the effect of the starting state (the previous interval's backlog, or an empty
system) is down to exp(-3), 5% of the gap. An interval shorter than that is flagged "steady-state
estimate unreliable": the DES replay (``sim.des.profile``) is the answer there. Why this rule and not
the mean residence time x 1 / (1 - rho)^2: at the same rho both grow like 1 / (1 - rho)^2 near
saturation, but tau is the derived decay constant of the M/M/1 transient (the analytic fast path
uses the same tau for bursty on/off periods, ``sim.analytic.bursty._relaxation_us``), and it stays finite
and small at light load where the residence rule would only repeat the service time.

A closed interval (a queue depth kept in flight) cannot build a backlog: its population is fixed
and renews itself every mean response time R, so it settles in SETTLING_FACTOR x R.

An open interval at or above Xmax has no steady state: its backlog grows by (lambda - Xmax) x
duration and the last I/O of the interval waits that backlog / Xmax more; the estimate says so.
The p99 of an interval is the fast path's estimate as the planner screens with it
(``sim.plan.planner.p99_estimate_us``, ``FastResult.latency_p99_us``).

A profile among several workloads (a ``workloads`` list): each interval is the steady scenario with the
profile's interval in the profile's place and the steady workloads as the other classes of the
multi-class fast path (``sim.analytic.classes``), so every workload gets its figures in every interval
(``IntervalEstimate.fast.workloads``, ``p99_by_workload``); the settling rule is taken at the bottleneck
of the mix (X and Xmax of all the classes), and an idle interval of the profile leaves the steady
workloads alone on the path (the profile then offers a vanishing rate).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from models.scenario import Scenario
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, ProfileWorkload
from sim.analytic import FastResult, evaluate
from sim.plan.planner import p99_estimate_us

SETTLING_FACTOR = 3.0
"""Relaxation times an interval must last for its steady-state estimate to hold (exp(-3) ~ 5%)."""


def relaxation_us(service_us: float, rho: float) -> float:
    """M/M/1 relaxation time S / (1 - sqrt(rho))^2 (infinite at rho >= 1)."""
    if rho >= 1.0:
        return math.inf
    return service_us / (1.0 - math.sqrt(max(0.0, rho))) ** 2


@dataclass(frozen=True)
class IntervalEstimate:
    """The fast path's view of one interval."""

    index: int
    duration_s: float
    offered_iops: float | None
    fast: FastResult | None
    """None for an idle interval (rate 0)."""
    p99_estimate_us: float
    settling_s: float
    reliable: bool
    note: str
    p99_by_workload: dict[str, float] = field(default_factory=dict)
    """A profile among several workloads: each workload's p99 estimate in this interval (by name; its other
    figures are ``fast.workloads``)."""

    def summary(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return v if math.isfinite(v) else None

        out = {"index": self.index, "duration_s": self.duration_s, "offered_iops": self.offered_iops,
               "fast": self.fast.summary() if self.fast else None, "latency_p99_estimate_us": num(self.p99_estimate_us),
               "settling_s": num(self.settling_s), "reliable": self.reliable, "note": self.note}
        if self.p99_by_workload:
            out["latency_p99_estimate_us_by_workload"] = {name: num(v) for name, v in self.p99_by_workload.items()}
        return out


@dataclass(frozen=True)
class ProfileEstimate:
    """Every interval's steady-state estimate and the peak (the worst estimated p99)."""

    intervals: list[IntervalEstimate]
    peak_index: int
    peak_reason: str

    @property
    def worst_p99_us(self) -> float:
        return self.intervals[self.peak_index].p99_estimate_us

    def summary(self) -> dict[str, Any]:
        return {"intervals": [iv.summary() for iv in self.intervals],
                "peak_interval": {"index": self.peak_index, "reason": self.peak_reason},
                "settling_rule": f"an interval shorter than {SETTLING_FACTOR:g} x S / (1 - sqrt(rho))^2 at the bottleneck "
                                 "(S = 1 / Xmax, rho = X / Xmax) is flagged: steady-state estimate unreliable"}


def interval_scenario(scenario: Scenario, profile: ProfileWorkload, index: int) -> Scenario:
    """The steady scenario of interval ``index``: the profile's interval as a steady workload in the
    profile's place (its name and placement kept among several workloads)."""
    now = profile.interval_workload(index)
    if not scenario.consolidated:
        return scenario.model_copy(update={"workload": now})
    now = now.model_copy(update={"name": profile.name, "placement": profile.placement})
    workloads = [now if wl is profile else wl for wl in scenario.all_workloads()]
    return scenario.model_copy(update={"workloads": workloads, "workload": workloads[0]})


def estimate_interval(scenario: Scenario, profile: ProfileWorkload, index: int) -> IntervalEstimate:
    """The steady-state estimate of interval ``index`` with its settling check."""
    iv = profile.intervals[index]
    mixed = scenario.consolidated
    if iv.rate_iops == 0 and not mixed:
        return IntervalEstimate(index, iv.duration_s, 0.0, None, 0.0, 0.0, True, "idle")
    fast = evaluate(interval_scenario(scenario, profile, index))
    by_workload = {name: p99_estimate_us(w) for name, w in (fast.workloads or {}).items()}
    x_max = fast.bounds.x_max_iops
    service_us = 1e6 / x_max if x_max > 0 else math.inf
    if not fast.stable:
        rate = (iv.rate_iops or 0.0) + (_others_rate(scenario, profile, fast) if mixed else 0.0)
        # the path runs at Xmax, or below it where a concurrency limit whose hold grows with the load fills its slots
        below = 0.0 < fast.iops < x_max * (1 - 1e-6)
        cap = fast.iops if below else x_max
        limit = (f"the {cap:,.0f} IOPS at which {fast.bottleneck}'s slots fill" if below
                 else f"Xmax {x_max:,.0f} at {fast.bounds.bottleneck}")
        backlog = (rate - cap) * iv.duration_s
        note = (f"steady-state estimate unreliable: overloaded ({rate:,.0f} IOPS offered >= {limit}): the backlog grows "
                f"by ~{backlog:,.0f} I/Os over the interval, adding up to "
                f"{backlog / cap * 1e6 if cap > 0 else math.inf:,.0f} us of wait by its end")
        return IntervalEstimate(index, iv.duration_s, iv.rate_iops, fast, math.inf, math.inf, False, note,
                                {name: math.inf for name in by_workload})
    rho = fast.iops / x_max if x_max > 0 else 0.0
    if iv.rate_iops == 0:  # the profile is idle: the steady workloads have run alone since its start
        return IntervalEstimate(index, iv.duration_s, 0.0, fast, p99_estimate_us(fast), 0.0, True,
                                "idle: the steady workloads alone", by_workload)
    if iv.queue_depth is not None:  # a closed loop renews its I/Os every response time: it settles in a few
        own = fast.workloads[profile.name or ""] if fast.workloads is not None else fast
        settling_s = SETTLING_FACTOR * own.latency_mean_us * 1e-6
    else:
        settling_s = SETTLING_FACTOR * relaxation_us(service_us, rho) * 1e-6
    reliable = iv.duration_s >= settling_s
    note = "" if reliable else (f"steady-state estimate unreliable: the interval ({iv.duration_s:g} s) is shorter than the "
                                f"queue's settling time {settling_s:.3g} s (rho {rho:.0%} at {fast.bounds.bottleneck})")
    return IntervalEstimate(index, iv.duration_s, iv.rate_iops, fast, p99_estimate_us(fast), settling_s, reliable, note,
                            by_workload)


def _others_rate(scenario: Scenario, profile: ProfileWorkload, fast: FastResult) -> float:
    """What the steady workloads offer the path (I/O per second): an open or bursty one its mean rate, a
    closed one the throughput the fast path gives it."""
    total = 0.0
    for name, wl in scenario.named_workloads():
        if wl is profile:
            continue
        if isinstance(wl, ClosedWorkload):
            own = fast.workloads.get(name) if fast.workloads is not None else None
            total += own.iops if own is not None else 0.0
        elif isinstance(wl, OpenWorkload):
            total += wl.rate_iops
        elif isinstance(wl, BurstyWorkload):
            total += wl.mean_rate_iops
    return total


def evaluate_profile(scenario: Scenario) -> ProfileEstimate:
    """Every interval of ``scenario``'s profile as a steady state (see the module docstring)."""
    where = scenario.profile_index()
    if where is None:
        kind = scenario.workload.kind
        raise ValueError(f"workload.kind: a profile is needed here, got {kind!r}")
    profile = scenario.all_workloads()[where]
    assert isinstance(profile, ProfileWorkload)
    intervals = [estimate_interval(scenario, profile, i) for i in range(len(profile.intervals))]
    peak = max(intervals, key=lambda e: (e.p99_estimate_us, -e.index))
    reason = ("overloaded: offered load above Xmax" if not math.isfinite(peak.p99_estimate_us)
              else f"worst estimated p99 ({peak.p99_estimate_us:,.0f} us)")
    return ProfileEstimate(intervals, peak.index, reason)
