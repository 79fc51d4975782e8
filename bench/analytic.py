"""Closed-form M/M/c results (Erlang C), the sanity check for every engine in the benchmark."""

from __future__ import annotations

import math


def erlang_c(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Probability that an arrival waits in an M/M/c queue (Erlang C); rates in the same unit."""
    a = arrival_rate / service_rate  # offered load in Erlangs
    rho = a / servers
    if rho >= 1.0:
        return 1.0
    term = 1.0
    total = 1.0  # sum of a**k / k! for k < c, built iteratively to avoid big factorials
    for k in range(1, servers):
        term *= a / k
        total += term
    top = term * a / servers / (1.0 - rho)  # a**c / c! / (1 - rho)
    return top / (total + top)


def mmc_mean_response(servers: int, arrival_rate: float, service_rate: float) -> float:
    """Mean response time (wait + service) of an M/M/c queue, in the reciprocal unit of the rates."""
    if arrival_rate >= servers * service_rate:
        return math.inf
    p_wait = erlang_c(servers, arrival_rate, service_rate)
    return 1.0 / service_rate + p_wait / (servers * service_rate - arrival_rate)
