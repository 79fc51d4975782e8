"""Die-level fast-path preview of one flash device (issue 18; not yet wired into FlashGroups or the planner).

A closed loop of ``qd`` reads visits a delay (the controller's fixed cost less its per-command
service, and the 4 KiB host transfer), a controller station with the command-rate ceiling
(service 1 / datasheet IOPS) and one
of N dies chosen uniformly (visit ratio 1/N, service tR). MVA gives IOPS and the mean, with the
arrival theorem adapted to the dies' tight law (a read in service at the die adds its mean residual
tR (1 + cv^2) / 2, not a whole tR: the usual approximation for FCFS stations with general service;
exact for exponential service, cv = 1); the QD1 quantiles are the fixed parts plus the quantile of the die's lognormal read time
(cv ``DieLayout.die_read_cv``): at QD1 there is no queue, so this is the whole distribution's
device part. The tail at depth (per-die M/G/1 waiting) is the next step of issue 18.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from sim.route.flash import DieLayout


@dataclass(frozen=True)
class DiePoint:
    """One queue depth of a die-level closed loop: reads per second and mean device latency (us)."""

    qd: int
    iops: float
    mean_us: float
    die_wait_us: float = 0.0
    """Mean wait at the die of a read that arrives (MVA, population qd - 1 in the rest of the loop)."""
    die_busy: float = 0.0
    """Chance that read finds its die busy (arrival theorem: one die's queue length at qd - 1, capped at 1)."""
    fixed_us: float = 0.0
    """The read's time outside the die: fixed delay, controller wait and service."""
    die_queue: float = 0.0
    """Mean reads at the arriving read's die (arrival theorem: one die's queue length at qd - 1)."""
    die_util: float = 0.0
    """Chance the arriving read's die is reading (one die's utilisation at qd - 1)."""


def die_level_closed(layout: DieLayout, qd: int) -> DiePoint:
    """Approximate MVA of the closed loop above at population ``qd`` (4 KiB random reads, device only)."""
    if qd < 1:
        raise ValueError(f"qd must be >= 1, got {qd}")
    ctrl_s = 1e3 / layout.controller_kiops  # us per command at the ceiling, part of the controller's fixed cost
    delay = max(0.0, layout.controller_us - ctrl_s) + layout.transfer_us
    die_d = layout.die_read_us / layout.dies  # service demand per die (visit 1/N)
    residual = (1 + layout.die_read_cv ** 2) / 2  # mean residual of a die read in progress, in units of tR
    q_ctrl = 0.0
    q_die = 0.0  # queue length at one die (all dies alike), from the population one smaller
    u_die = 0.0  # utilisation of one die, likewise
    x = 0.0
    r = 0.0
    busy = 0.0
    wait = 0.0
    r_ctrl = ctrl_s
    seen_q = seen_u = 0.0
    for n in range(1, qd + 1):
        busy = min(1.0, q_die)
        wait = layout.die_read_us * ((q_die - u_die) + u_die * residual)
        r_ctrl = ctrl_s * (1 + q_ctrl)
        # arrival theorem with a general die law: waiting reads cost a whole tR, the one in service its residual
        r_one = layout.die_read_us * (1 + (q_die - u_die) + u_die * residual)
        r_die = r_one / layout.dies
        r = delay + r_ctrl + layout.dies * r_die
        x = n / r
        q_ctrl = x * r_ctrl
        q_die = x * r_die
        u_die = x * die_d
        if n < qd:
            seen_q, seen_u = q_die, u_die
    return DiePoint(qd=qd, iops=x * 1e6, mean_us=r, die_wait_us=wait, die_busy=busy, fixed_us=delay + r_ctrl,
                    die_queue=seen_q, die_util=seen_u)


def die_qd1_quantile_us(layout: DieLayout, q: float) -> float:
    """The ``q`` quantile of a QD1 4 KiB read's device latency: fixed parts + lognormal die read time."""
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    cv = layout.die_read_cv
    if cv == 0:
        return layout.qd1_read_us
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(layout.die_read_us) - sigma * sigma / 2
    die_q = math.exp(mu + sigma * NormalDist().inv_cdf(q))
    return layout.controller_us + layout.transfer_us + die_q


def die_level_quantile_us(layout: DieLayout, qd: int, q: float) -> float:
    """Approximate ``q`` quantile of a read's device latency at depth ``qd`` (closed loop, 4 KiB random).

    The arriving read finds its die reading with the MVA's arrival-theorem chance u (one die's
    utilisation at qd - 1) and then k reads there, k >= 1 geometric with the MVA's mean q / u (q: the
    die's queue length at qd - 1). A die read's time is tight (cv ``die_read_cv``), so its wait is the
    residual of the read in service, uniform on (0, tR), plus k - 1 whole tR:
    P(W > (m + f) tR) = u (r^(m+1) + (1 - r) r^m (1 - f)), r = 1 - u / q. The latency is the mean time
    outside the die plus W plus the die's own lognormal read time S, whose sum's quantile is found
    by bisection over P(W + S > t) (S at 128 equally likely points; at QD1 its exact quantile). Checked against
    calibration/ext/die_sweep's simulation and the DES (calibration/ext/DIE_LEVEL.md).
    """
    if not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1), got {q}")
    point = die_level_closed(layout, qd)
    t_r = layout.die_read_us
    u = min(1.0, point.die_util)
    r = 1.0 - u / point.die_queue if point.die_queue > u > 0 else 0.0
    cv = layout.die_read_cv
    if u <= 0:  # no read ahead at the die (QD1): the die's own lognormal quantile, exactly
        return point.fixed_us + die_qd1_quantile_us(layout, q) - layout.controller_us - layout.transfer_us
    points = 128
    if cv > 0:
        sigma = math.sqrt(math.log1p(cv * cv))
        mu = math.log(t_r) - sigma * sigma / 2
        normal = NormalDist()
        service = [math.exp(mu + sigma * normal.inv_cdf((i + 0.5) / points)) for i in range(points)]
    else:
        service = [t_r] * points

    def wait_above(t: float) -> float:
        if t <= 0:
            return u if t == 0 else 1.0
        m_f = t / t_r
        m = math.floor(m_f)
        f = m_f - m
        return u * (r ** (m + 1) + (1 - r) * r ** m * (1 - f))

    def above(t: float) -> float:
        return sum((wait_above(t - s) if t - s >= 0 else 1.0 for s in service), 0.0) / points

    lo, hi = 0.0, t_r * 2.0
    while above(hi) > 1 - q:
        hi *= 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if above(mid) > 1 - q:
            lo = mid
        else:
            hi = mid
    return point.fixed_us + hi


def closed_read_quantile_us(layout: DieLayout, qd: int, mean_us: float, q: float) -> float:
    """Approximate ``q`` quantile of a 4 KiB random read's latency through a route whose mean is ``mean_us``
    (the fast path's) with ``qd`` reads outstanding on the device: the device's die-level quantile
    (``die_level_quantile_us``) plus the route's mean outside the device (``mean_us`` less the device's
    MVA mean)."""
    point = die_level_closed(layout, qd)
    return max(0.0, mean_us - point.mean_us) + die_level_quantile_us(layout, qd, q)
