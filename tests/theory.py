"""Exact queueing-theory results the simulator is checked against (tests only).

Times are in whatever unit the caller uses (the engine uses microseconds); rates are
the reciprocal of that unit (per microsecond), so ``lam * service`` is dimensionless.

* ``mm1_response``  - M/M/1 mean response time  S / (1 - rho).
* ``erlang_c`` / ``mmc_response`` - M/M/c: probability of waiting (Erlang C) and mean
  response time  S + C(c, a) * S / (c (1 - rho)).
* ``mg1_response`` / ``md1_response`` - M/G/1 by Pollaczek-Khinchine,
  W = rho * S * (1 + cv^2) / (2 (1 - rho)); M/D/1 is cv = 0.
* ``mva`` - exact mean-value analysis of a closed network of single-server FCFS
  exponential stations plus one delay (think-time) centre.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def _check_open(lam: float, service: float, servers: int = 1) -> float:
    if lam <= 0 or service <= 0 or servers < 1:
        raise ValueError("need lam > 0, service > 0, servers >= 1")
    rho = lam * service / servers
    if rho >= 1:
        raise ValueError(f"unstable queue: rho = {rho:.4g} >= 1")
    return rho


def mm1_response(lam: float, service: float) -> float:
    """Mean response time (wait + service) of an M/M/1 queue."""
    rho = _check_open(lam, service)
    return service / (1.0 - rho)


def erlang_c(servers: int, offered: float) -> float:
    """Erlang C: probability that an arrival waits in an M/M/c queue with offered load a = lam * S.

    Computed from the Erlang B recursion B(k) = a B(k-1) / (k + a B(k-1)), which is
    numerically stable for large c, then C = B / (1 - rho (1 - B)).
    """
    if servers < 1 or offered <= 0:
        raise ValueError("need servers >= 1 and offered > 0")
    rho = offered / servers
    if rho >= 1:
        raise ValueError(f"unstable queue: rho = {rho:.4g} >= 1")
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
    return b / (1.0 - rho * (1.0 - b))


def mmc_response(lam: float, service: float, servers: int) -> float:
    """Mean response time of an M/M/c queue: S + C(c, a) * S / (c (1 - rho))."""
    rho = _check_open(lam, service, servers)
    c = erlang_c(servers, lam * service)
    return service + c * service / (servers * (1.0 - rho))


def mg1_response(lam: float, service: float, cv: float) -> float:
    """Mean response time of an M/G/1 queue (Pollaczek-Khinchine), service CV ``cv``."""
    rho = _check_open(lam, service)
    wait = rho * service * (1.0 + cv * cv) / (2.0 * (1.0 - rho))
    return service + wait


def md1_response(lam: float, service: float) -> float:
    """Mean response time of an M/D/1 queue: S + rho S / (2 (1 - rho))."""
    return mg1_response(lam, service, 0.0)


@dataclass(frozen=True)
class MvaResult:
    """Exact MVA solution at population N."""

    throughput: float
    """Completions per time unit (jobs / time)."""
    response: float
    """Mean time from leaving the delay centre to returning to it (think time excluded)."""
    residence: tuple[float, ...]
    """Mean residence time per visit at each station."""
    queue_lengths: tuple[float, ...]
    """Mean number of jobs at each station (waiting + in service)."""

    def utilizations(self, demands: Sequence[float]) -> tuple[float, ...]:
        """Utilization X * D_k of each single-server station."""
        return tuple(self.throughput * d for d in demands)


def mva(demands: Sequence[float], population: int, think: float = 0.0) -> MvaResult:
    """Exact MVA for a closed network of single-server FCFS exponential stations + a delay centre.

    ``demands[k]`` is the mean service demand at station k per cycle (visits x service
    time; a tandem visits each station once), ``think`` the mean delay-centre time.
    Recursion over n = 1..N:  R_k(n) = D_k (1 + Q_k(n-1)),  X(n) = n / (Z + sum R_k(n)),
    Q_k(n) = X(n) R_k(n).
    """
    if population < 1:
        raise ValueError("population must be >= 1")
    if think < 0 or any(d <= 0 for d in demands) or not demands:
        raise ValueError("need demands > 0 and think >= 0")
    q = [0.0] * len(demands)
    x = 0.0
    r = [0.0] * len(demands)
    for n in range(1, population + 1):
        r = [d * (1.0 + qk) for d, qk in zip(demands, q, strict=True)]
        x = n / (think + sum(r))
        q = [x * rk for rk in r]
    return MvaResult(throughput=x, response=sum(r), residence=tuple(r), queue_lengths=tuple(q))


def mva_think_for_utilization(demands: Sequence[float], population: int, target: float) -> float:
    """The think time at which the bottleneck station's utilization X * D_max equals ``target``.

    Bottleneck utilization falls monotonically as the think time grows, so bisection works.
    """
    dmax = max(demands)
    if not 0 < target < 1:
        raise ValueError("target utilization must be in (0, 1)")
    if mva(demands, population, 0.0).throughput * dmax <= target:
        raise ValueError("even with zero think time the bottleneck stays below the target; raise the population")
    lo, hi = 0.0, population * dmax / target  # at hi, X <= N / hi = target / dmax
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mva(demands, population, mid).throughput * dmax > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)
