"""Bursty (on/off) workloads on the fast path: open regimes per period, a fluid backlog when an on period
outruns the capacity, and the relaxation time that says how long a regime takes to settle."""

from __future__ import annotations

import math

from models.workload import BurstyWorkload
from sim.analytic.demands import saturation_rate, spread_extra
from sim.analytic.network import READ, WRITE, Group, Network
from sim.analytic.queueing import INF


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


def solve_bursty(net: Network, wl: BurstyWorkload, x_max: float, bottleneck: Group) -> tuple[float, list[float]]:
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
                mu = saturation_rate(net, rate)[0]
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
        latency = spread_extra(net, latency, extra, bottleneck)
    return mean_rate, latency


def _backlog(net: Network, bottleneck: Group, rate: float, mu: float, t_on: float, off_rate: float) -> float:
    """``solve_bursty``'s fluid backlog of an on period at ``rate`` above the rate ``mu`` the path runs at: the wait it
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
