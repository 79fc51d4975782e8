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
uses the same tau for bursty on/off periods, ``sim.analytic._relaxation_us``), and it stays finite
and small at light load where the residence rule would only repeat the service time.

A closed interval (a queue depth kept in flight) cannot build a backlog: its population is fixed
and renews itself every mean response time R, so it settles in SETTLING_FACTOR x R.

An open interval at or above Xmax has no steady state: its backlog grows by (lambda - Xmax) x
duration and the last I/O of the interval waits that backlog / Xmax more; the estimate says so.
The p99 of an interval is the planner's screening estimate (``sim.plan.planner.p99_estimate_us``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from models.scenario import Scenario
from models.workload import ProfileWorkload
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

    def summary(self) -> dict[str, Any]:
        def num(v: float) -> float | None:
            return v if math.isfinite(v) else None

        return {"index": self.index, "duration_s": self.duration_s, "offered_iops": self.offered_iops,
                "fast": self.fast.summary() if self.fast else None, "latency_p99_estimate_us": num(self.p99_estimate_us),
                "settling_s": num(self.settling_s), "reliable": self.reliable, "note": self.note}


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


def estimate_interval(scenario: Scenario, profile: ProfileWorkload, index: int) -> IntervalEstimate:
    """The steady-state estimate of interval ``index`` with its settling check."""
    iv = profile.intervals[index]
    if iv.rate_iops == 0:
        return IntervalEstimate(index, iv.duration_s, 0.0, None, 0.0, 0.0, True, "idle")
    steady = scenario.model_copy(update={"workload": profile.interval_workload(index)})
    fast = evaluate(steady)
    x_max = fast.bounds.x_max_iops
    service_us = 1e6 / x_max if x_max > 0 else math.inf
    if not fast.stable:
        rate = iv.rate_iops or 0.0
        backlog = (rate - x_max) * iv.duration_s
        note = (f"steady-state estimate unreliable: overloaded ({rate:,.0f} IOPS offered >= Xmax {x_max:,.0f} at "
                f"{fast.bounds.bottleneck}): the backlog grows by ~{backlog:,.0f} I/Os over the interval, adding up to "
                f"{backlog / x_max * 1e6 if x_max > 0 else math.inf:,.0f} us of wait by its end")
        return IntervalEstimate(index, iv.duration_s, iv.rate_iops, fast, math.inf, math.inf, False, note)
    rho = fast.iops / x_max if x_max > 0 else 0.0
    if iv.queue_depth is not None:  # a closed loop renews its I/Os every response time: it settles in a few
        settling_s = SETTLING_FACTOR * fast.latency_mean_us * 1e-6
    else:
        settling_s = SETTLING_FACTOR * relaxation_us(service_us, rho) * 1e-6
    reliable = iv.duration_s >= settling_s
    note = "" if reliable else (f"steady-state estimate unreliable: the interval ({iv.duration_s:g} s) is shorter than the "
                                f"queue's settling time {settling_s:.3g} s (rho {rho:.0%} at {fast.bounds.bottleneck})")
    return IntervalEstimate(index, iv.duration_s, iv.rate_iops, fast, p99_estimate_us(fast), settling_s, reliable, note)


def evaluate_profile(scenario: Scenario) -> ProfileEstimate:
    """Every interval of ``scenario``'s profile as a steady state (see the module docstring)."""
    profile = scenario.workload
    if not isinstance(profile, ProfileWorkload):
        raise ValueError(f"workload.kind: a profile is needed here, got {profile.kind!r}")
    intervals = [estimate_interval(scenario, profile, i) for i in range(len(profile.intervals))]
    peak = max(intervals, key=lambda e: (e.p99_estimate_us, -e.index))
    reason = ("overloaded: offered load above Xmax" if not math.isfinite(peak.p99_estimate_us)
              else f"worst estimated p99 ({peak.p99_estimate_us:,.0f} us)")
    return ProfileEstimate(intervals, peak.index, reason)
