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
    return DiePoint(qd=qd, iops=x * 1e6, mean_us=r, die_wait_us=wait, die_busy=busy, fixed_us=delay + r_ctrl)


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

    The read finds its die busy with the MVA's arrival-theorem chance b and then waits an exponential
    with the MVA's conditional mean wait (w / b), so P(wait > t) = b exp(-t b / w); that wait's
    quantile is added to the die's own lognormal quantile and the mean time outside the die (sum of
    quantiles: conservative where both spread). Checked against calibration/ext/die_sweep's
    simulation: p99 within 1% at QD1, -21%..+29% from QD2 to QD256, p99.9 -29%..+55% (high at
    QD2-16, where the closed loop's few readers wait less than this open-arrival tail says); a
    first estimate, not yet the planner's.
    """
    point = die_level_closed(layout, qd)
    b, w = point.die_busy, point.die_wait_us
    wait_q = 0.0 if b <= 1 - q or w <= 0 else (w / b) * math.log(b / (1 - q))
    return point.fixed_us + wait_q + die_qd1_quantile_us(layout, q) - layout.controller_us - layout.transfer_us


def closed_read_quantile_us(layout: DieLayout, qd: int, mean_us: float, q: float) -> float:
    """Approximate ``q`` quantile of a 4 KiB random read's latency through a route whose mean is ``mean_us``
    (the fast path's) with ``qd`` reads outstanding on the device: the device's die-level quantile
    (``die_level_quantile_us``) plus the route's mean outside the device (``mean_us`` less the device's
    MVA mean)."""
    point = die_level_closed(layout, qd)
    return max(0.0, mean_us - point.mean_us) + die_level_quantile_us(layout, qd, q)
