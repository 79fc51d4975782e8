"""Queueing formulas of the analytic fast path, in plain Python floats (no numpy per call).

* ``erlang_c`` - probability that an arrival waits at an M/M/c queue (Erlang C), exact:
  the Erlang B recursion for small c, the Poisson pmf / cdf ratio for large c.
* ``queue_wait`` - mean and second moment of the waiting time at a c-server FCFS centre:
  Erlang C scaled by the Allen-Cunneen factor (ca^2 + cs^2) / 2 (exact for M/M/c and,
  through Pollaczek-Khinchine, for M/G/1), with Schweitzer's arrival-theorem correction
  for a closed population (an arriving job sees the centre as if it were not there:
  utilization x (n - 1) / n) and no waiting at all when the population cannot exceed the servers.
* ``normal_max_factors`` / ``max_of_normal_moments`` - expected maximum of parallel children
  (fork-join: a mirrored write completes when its slower copy does), from exact normal order
  statistics for identical children and Clark's moment matching for children of different sizes.

Times are in microseconds and rates per microsecond throughout.
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy.special import pdtr

INF = math.inf
_LOG_NEGLIGIBLE = -40.0  # log of a probability below which a wait is not worth computing


def erlang_c(servers: int, offered: float) -> float:
    """P(wait) at an M/M/c queue with ``servers`` servers and offered load ``offered`` = lambda x S (Erlangs)."""
    if offered <= 0.0:
        return 0.0
    rho = offered / servers
    if rho >= 1.0:
        return 1.0
    if servers == 1:
        return rho
    if servers >= 8:
        # log of the Poisson pmf at c: when it is negligible so is Erlang B (the cdf at c is >= 1/2 for a < c)
        log_pmf = servers * math.log(offered) - offered - math.lgamma(servers + 1.0)
        if log_pmf < _LOG_NEGLIGIBLE:
            return 0.0
        if servers > 48:
            b = math.exp(log_pmf) / float(pdtr(servers, offered))
            return b / (1.0 - rho * (1.0 - b))
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b / (1.0 - rho * (1.0 - b))


def queue_wait(rate: float, mean_s: float, scv_s: float, servers: int, ca2: float, population: float,
               seen: float = 1.0) -> tuple[float, float, float]:
    """Waiting time before service at a c-server FCFS centre: (mean, second moment, P(wait)).

    ``rate`` arrivals per us, ``mean_s`` / ``scv_s`` the mean and squared coefficient of
    variation of the service time, ``ca2`` the arrivals' squared coefficient of variation
    (1 for Poisson, 1/k for a round-robin share of k), ``population`` the most jobs that can
    ever be at the centre (``inf`` for an open workload), ``seen`` the share of the load an
    arriving job finds (the arrival theorem: Q(N-1) / Q(N) in a closed network, 1 when open).
    The conditional wait is taken as exponential for the second moment. Returns ``inf`` when
    the centre is overloaded.
    """
    if rate <= 0.0 or mean_s <= 0.0 or population <= servers:
        return 0.0, 0.0, 0.0
    offered = rate * mean_s * seen
    if offered >= servers:
        return INF, INF, 1.0
    p_wait = offered if servers == 1 else erlang_c(servers, offered)  # M/M/1: P(wait) = utilization
    if p_wait <= 0.0:
        return 0.0, 0.0, 0.0
    wait = p_wait * mean_s / (servers - offered) * 0.5 * (ca2 + scv_s)
    if population != INF:
        # never more than population - c jobs ahead, each clearing at c / S
        wait = min(wait, (population - servers) * mean_s / servers * max(1.0, 0.5 * (ca2 + scv_s)))
    return wait, 2.0 * wait * wait / p_wait, p_wait


def mva_arrival_fractions(demands: list[float], multiplicity: list[int], delay: float, population: int) -> list[float]:
    """Exact MVA of single-server stations plus a delay: Q_k(N - 1) / Q_k(N) for each station.

    ``demands[k]`` is the demand per job cycle at one instance of station k, of which there
    are ``multiplicity[k]`` identical ones, ``delay`` the pure delay per cycle. The ratio is
    what an arriving job sees of the steady queue (arrival theorem); Schweitzer's
    approximation takes it as (N - 1) / N, which is least accurate near the knee.
    """
    k = len(demands)
    mult = [float(m) for m in multiplicity]
    centres = range(k)
    q = [0.0] * k
    prev = [0.0] * k
    r = [0.0] * k
    for n in range(1, population + 1):
        total = delay
        for i in centres:
            ri = demands[i] * (1.0 + q[i])
            r[i] = ri
            total += mult[i] * ri
        x = n / total
        prev, q = q, prev  # q(n - 1) stays in prev; q(n) overwrites the older buffer
        for i in centres:
            q[i] = x * r[i]
    return [p / c if c > 0 else 1.0 for p, c in zip(prev, q, strict=True)]


# -- order statistics of normals (fork-join) ------------------------------------------------

_TABLE_K = 512


@lru_cache(maxsize=1)
def _normal_max_table() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """E[max] and Var[max] of k iid standard normals for k = 1.._TABLE_K (numerical integration, once)."""
    import numpy as np

    x = np.linspace(-9.0, 9.0, 6001)
    dx = x[1] - x[0]
    pdf = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    cdf = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    means = [0.0]
    variances = [1.0]
    for k in range(2, _TABLE_K + 1):
        dens = k * pdf * cdf ** (k - 1)
        m1 = float(np.sum(x * dens) * dx)
        m2 = float(np.sum(x * x * dens) * dx)
        means.append(m1)
        variances.append(max(0.0, m2 - m1 * m1))
    return tuple(means), tuple(variances)


def normal_max_factors(k: int) -> tuple[float, float]:
    """(e_k, v_k): the max of k iid N(mu, sigma^2) has mean mu + e_k sigma and variance v_k sigma^2."""
    if k <= 1:
        return 0.0, 1.0
    if k <= _TABLE_K:
        means, variances = _normal_max_table()
        return means[k - 1], variances[k - 1]
    # beyond the table: Gumbel asymptotics of the normal maximum
    a = math.sqrt(2.0 * math.log(k))
    b = a - (math.log(math.log(k)) + math.log(4.0 * math.pi)) / (2.0 * a)
    return b + 0.5772156649 / a, (math.pi * math.pi / 6.0) / (a * a)


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) * 0.3989422804014327


def _cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x * 0.7071067811865476))


def clark_max(m1: float, v1: float, m2: float, v2: float) -> tuple[float, float]:
    """Mean and variance of max(X1, X2) for independent normals (Clark 1961)."""
    theta2 = v1 + v2
    if theta2 <= 1e-18:
        return max(m1, m2), 0.0
    theta = math.sqrt(theta2)
    alpha = (m1 - m2) / theta
    p = _cdf(alpha)
    q = 1.0 - p
    d = theta * _phi(alpha)
    mean = m1 * p + m2 * q + d
    second = (m1 * m1 + v1) * p + (m2 * m2 + v2) * q + (m1 + m2) * d
    return mean, max(0.0, second - mean * mean)


def max_of_normal_moments(children: tuple[tuple[int, float, float], ...], moments: list[tuple[float, float]]) -> float:
    """Expected maximum of two or more parallel children of different kinds (Clark's moment matching).

    Each child is (index into ``moments`` of its (mean, variance), e_k, v_k): ``count`` identical
    copies of it finish as one normal of mean + e_k sd and variance v_k var (``normal_max_factors``).
    """
    acc_m = -INF
    acc_v = 0.0
    for ci, e, v in children:
        mean, var = moments[ci]
        sd = math.sqrt(var) if var > 0.0 else 0.0
        m, vv = mean + e * sd, v * var
        if acc_m == -INF:
            acc_m, acc_v = m, vv
        else:
            acc_m, acc_v = clark_max(acc_m, acc_v, m, vv)
    return acc_m
