"""The die-level device model on the fast path: the laws both the fast path's solvers and its tails read.

One device alone: a closed loop of ``qd`` reads visits a delay (the controller's fixed cost less its per-command
service, and the 4 KiB host transfer), a controller station with the command-rate ceiling
(service 1 / datasheet IOPS) and one
of N dies chosen uniformly (visit ratio 1/N, service tR). MVA gives IOPS and the mean, with the
arrival theorem adapted to the dies' tight law (a read in service at the die adds its mean residual
tR (1 + cv^2) / 2, not a whole tR: the usual approximation for FCFS stations with general service;
exact for exponential service, cv = 1); the QD1 quantiles are the fixed parts plus the quantile of the die's lognormal read time
(cv ``DieLayout.die_read_cv``): at QD1 there is no queue, so this is the whole distribution's
device part. Any route (``DieWaitLaw`` onwards): the wait at a die as a finite-source or M/G/1 law of the
reads and programs that load it, fork-join of reads over several dies, the write acknowledgement's law, and the
mixture of a route's operations (``route_quantiles_us``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
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


REST_STEPS = 128
"""Grid steps of ``slowest_rest_us``'s integral."""


def slowest_rest_us(k: float, p: float, mean: float, cv: float) -> float:
    """E[max] of k waits, each with chance p the rest of a program in progress (else 0): the equilibrium
    residual R of a lognormal program time T (``mean``, ``cv``), P(R > t) = E[(T - t)+] / E[T] (uniform on
    (0, T) for a fixed T), so E[max] = integral_0^inf 1 - (1 - p P(R > t))^k dt (midpoint rule up to T's
    1 - 1e-6 quantile). A tight program's rest is bounded by it: the exponential rest of ``_slowest_of``
    grows as log k (``sim.analytic.classes._slowest_of``). Used for another workload's programs
    (``sim.analytic.classes.Dies``) and a workload's own (``sim.analytic.network.Network``'s program locks)."""
    if cv <= 0:
        return mean * (1.0 - (1.0 - (1.0 - p) ** (k + 1.0)) / (p * (k + 1.0)))
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    normal = NormalDist()
    top = math.exp(mu + sigma * normal.inv_cdf(1.0 - 1e-6))
    h = top / REST_STEPS
    total = 0.0
    for i in range(REST_STEPS):
        t = (i + 0.5) * h
        d1 = (mu + sigma * sigma - math.log(t)) / sigma
        above = max(0.0, (mean * normal.cdf(d1) - t * normal.cdf(d1 - sigma)) / mean)
        total += 1.0 - (1.0 - p * above) ** k
    return total * h


# -- the die-level tail of any route: open arrivals, mixes, several devices ---------------------

WAIT_STEPS = 600
"""Most grid steps of a die wait's distribution (``die_wait_above``): the step grows for long waits."""
SERVICE_POINTS = 24
"""Equally likely points of a die read's lognormal time added to a wait that is not zero (``DieWaitLaw.above``)."""


@dataclass(frozen=True)
class DieWaitLaw:
    """One die group's wait as a read arriving there sees it (a die of a ``dies`` device in the fast path).

    The die is a FIFO server of reads (tR, lognormal cv ``read_cv``) and programs (``program_us``, lognormal cv
    ``program_cv``) with ``read_load`` and ``program_load`` its utilisation by each as an arriving read sees it (a
    closed loop: the other reads' share, see below; a rebuild's share counted in full). The wait W is taken as an
    M/G/1 FIFO's (Pollaczek-Khinchine / Benes: W = the sum of K residuals, a residual drawn from the load-weighted
    equilibrium law of the service, uniform on (0, s) for a service of length s), K = 0 unless the die is busy
    (chance ``busy``), then geometric with the ratio r that gives the fast path's own mean wait at the die
    ``mean_wait_us``: w = busy E[R] / (1 - r) (r = 0 where even one residual exceeds w: the mean is then not
    matched). For open (Poisson) arrivals busy is the die's utilisation and r comes out the M/G/1's rho (the
    network's die wait is Pollaczek-Khinchine). A closed loop's reads see the other reads at their die with the
    arrival theorem's population N - 1 (read load x (N - 1) / N: at QD1 only programs, the loop's own acknowledged
    writes, and their residuals; busy = program load + that read load) and its shorter mean wait shortens the queue
    behind; programs run behind the acknowledgement, outside the closed population.
    Where the die also programs (``program_load`` > 0) the wait is ``one_program_wait_above``'s instead: the write
    point starts a program only on an idle die, so a read waits out at most the one program in service, then the
    reads queued ahead (the geometric sum of residuals would let it wait out several programs).
    ``share``: this group's part of the route's device reads.
    """

    share: float
    mean_wait_us: float
    read_us: float
    read_cv: float
    read_load: float
    program_load: float
    program_us: float
    program_cv: float
    busy: float = -1.0
    """The chance a read finds its die busy (below 0: taken as w / (w + E[R]), the M/G/1's rho from the mean)."""
    pages: int = 1
    """Dies a read spans (one per page, fork/join). With ``sources`` >= 0 and no programs a read over several pages
    takes ``fork_join_wait_above`` and ``fork_join_above`` instead of the one-die law."""
    dies: int = 1
    """The device's dies: a read's pages are drawn among them uniformly, with replacement (the DES's ``DieArray``)."""
    sources: int = -1
    """Pages of the other reads of a closed loop that can be at a die ((N - 1) x ``pages``, 0 at QD1; below 0: not a
    closed loop of such reads alone at their dies)."""

    channel_us: float = 0.0
    """A fork/join read's mean time at the read channel after its join (its wait and transfer, the fast path's), with
    ``population`` and
    ``cycle_us`` (N / the loop's read rate) and ``channel_cv`` (the channel's law) the finite-source law's inputs
    (``fork_join_table``)."""
    population: int = 0
    cycle_us: float = 0.0
    channel_cv: float = 0.0

    @property
    def die_mean_us(self) -> float:
        """The mean of the part of a read's latency this law gives (its wait and read at the die; a fork/join read's
        wait at the read channel too)."""
        if self.fork_join:
            return self.mean_wait_us + self.read_us + self.channel_us
        return self.mean_wait_us + self.read_us

    @property
    def fork_join(self) -> bool:
        """Whether a read waits as a fork/join over ``pages`` dies of a closed loop (``fork_join_wait_above``)."""
        return self.pages > 1 and self.sources >= 0 and self.program_load <= 0 and self.read_us > 0

    def fork_join_table(self) -> tuple[float, list[float]]:
        """(step, [P(T + C > n step)]) of a fork/join read: T the last of its pages at the dies
        (``fork_join_wait_above``, ``fork_join_above``), C its wait at the read channel after the join, independent of
        T: the finite-source law of a single server (``finite_source_wait`` with the loop's ``population``: an arrival
        finding n reads there leaves after n + 1 departures of the channel, ``stage_mixture_above``; matched to
        ``channel_us``), as a closed loop's write
        waits (``WriteLaw``): the channel binds a drive's large reads at depth, where the loop keeps a steady queue."""
        dies_table = fork_join_wait_above(max(0, self.sources), self.pages, self.dies, self.read_us, self.read_cv,
                                          self.mean_wait_us + self.read_us)
        step = self.read_us / FORK_JOIN_STEPS
        t_tail: list[float] = []
        n = 0
        while True:
            value = fork_join_above(n * step, dies_table, self.pages, self.dies, self.read_us, self.read_cv)
            t_tail.append(value)
            n += 1
            if value < 1e-7 or n > 100_000:
                break
        t_table = (step, t_tail)
        w = self.channel_us
        if w <= 1e-3 * self.read_us or self.population < 2 or self.cycle_us <= w:
            if w > 0:  # a wait this small only shifts the latency
                shift = w / step
                return step, [_table_above(t_table, (i - shift) * step) for i in range(len(t_tail) + int(shift) + 2)]
            return t_table
        m, first, probs = finite_source_wait(self.population, self.cycle_us - w, w)
        c_step, c_tail = stage_mixture_above(m, first, probs, 1, self.channel_cv)
        masses = [(0.0, 1.0 - c_tail[0])]
        for i in range(len(c_tail)):
            nxt = c_tail[i + 1] if i + 1 < len(c_tail) else 0.0
            masses.append(((i + 0.5) * c_step, c_tail[i] - nxt))
        reach = len(t_tail) * step + len(c_tail) * c_step
        out: list[float] = []
        for i in range(int(reach / step) + 2):
            x = i * step
            out.append(sum((p * _table_above(t_table, x - at) for at, p in masses if p > 0), 0.0))
        return step, out

    def residuals(self) -> list[tuple[float, float]]:
        """(weight, length) of the equilibrium residual's uniform parts (weights sum to 1)."""
        total = self.read_load + self.program_load
        out: list[tuple[float, float]] = []
        if total <= 0:
            return out
        if self.read_load > 0:
            out.append((self.read_load / total, self.read_us))
        if self.program_load > 0 and self.program_us > 0:
            points = _lognormal_points(self.program_us, self.program_cv, 4)
            whole = sum(points, 0.0)
            for s in points:
                out.append((self.program_load / total * s / whole, s))
        return out

    def wait_table(self) -> tuple[float, list[float]]:
        """(step h, P(W > n h) for n = 0, 1, ...): ``die_wait_above``, or with programs ``one_program_wait_above``; a
        fork/join read's one die (``fork_join_wait_above``)."""
        if self.fork_join:
            return self.fork_join_table()
        if self.program_load > 0 and self.program_us > 0 and self.busy > 0:
            return one_program_wait_above(self.read_load, self.read_us, self.read_cv, self.program_load, self.program_us,
                                          self.program_cv, self.mean_wait_us, self.busy)
        return die_wait_above(self.residuals(), self.mean_wait_us, self.busy)

    def above(self, t: float, table: tuple[float, list[float]]) -> float:
        """P(W + S > t): the wait plus the die's own read time S (lognormal): P(S > t) exactly, plus
        E[P(W > t - S); S <= t] over ``SERVICE_POINTS`` equally likely points of S. A fork/join read: the last of its
        pages (``fork_join_above``)."""
        if self.fork_join:
            return _table_above(table, t) if table[0] > 0 else (1.0 if t < 0 else 0.0)
        return _wait_and_read_above(table, t, self.read_us, self.read_cv)


def _wait_and_read_above(table: tuple[float, list[float]], t: float, read_us: float, read_cv: float) -> float:
    """P(W + S > t): a wait W (a ``die_wait_above`` table) then a lognormal read S of mean ``read_us`` and cv
    ``read_cv``: P(S > t) exactly, plus E[P(W > t - S); S <= t] over ``SERVICE_POINTS`` equally likely points of S
    (the table read as ``_table_above``, inline: this is the tails' inner loop)."""
    beyond = _lognormal_above(read_us, read_cv, t)
    step, tail = table
    if step <= 0:
        return beyond
    points = _service_points(read_us, read_cv)
    last = len(tail) - 1
    acc = 0.0
    for s in points:
        if s > t:
            break  # the points ascend
        f = (t - s) / step
        n = int(f)
        if n < last:
            a = tail[n]
            acc += a + (tail[n + 1] - a) * (f - n)
    return beyond + acc / len(points)


def _lognormal_points(mean: float, cv: float, n: int) -> list[float]:
    """``n`` equally likely points of a lognormal law of ``mean`` and ``cv`` (its quantiles at (i + 0.5) / n)."""
    if cv <= 0 or n <= 1:
        return [mean] * max(1, n)
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    normal = NormalDist()
    return [math.exp(mu + sigma * normal.inv_cdf((i + 0.5) / n)) for i in range(n)]


_POINTS: dict[tuple[float, float], list[float]] = {}


def _service_points(mean: float, cv: float) -> list[float]:
    """``_lognormal_points(mean, cv, SERVICE_POINTS)``, remembered (a few die read laws per catalog)."""
    key = (mean, cv)
    points = _POINTS.get(key)
    if points is None:
        if len(_POINTS) > 256:
            _POINTS.clear()
        points = _POINTS[key] = _lognormal_points(mean, cv, SERVICE_POINTS)
    return points


def _lognormal_above(mean: float, cv: float, t: float) -> float:
    """P(S > t) for S lognormal of ``mean`` and ``cv`` (deterministic when cv is 0)."""
    if t <= 0:
        return 1.0
    if cv <= 0:
        return 1.0 if mean > t else 0.0
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    return 1.0 - NormalDist().cdf((math.log(t) - mu) / sigma)


def _table_above(table: tuple[float, list[float]], x: float) -> float:
    """P(W > x) from a ``die_wait_above`` table (1 below 0, linear between points, 0 past its end)."""
    step, above = table
    if x < 0:
        return 1.0
    if step <= 0:
        return 0.0
    f = x / step
    n = int(f)
    if n + 1 >= len(above):
        return 0.0
    a = above[n]
    return a + (above[n + 1] - a) * (f - n)


FORK_JOIN_STEPS = 16
"""Grid steps per die read of a fork/join read's wait table (``fork_join_wait_above``)."""
FORK_JOIN_MEAN_POINTS = 160
"""Grid points of the integral that gives a fork/join read's mean (``fork_join_wait_above``'s match)."""


def _occupancy_weights(pages: int, dies: int) -> list[list[float]]:
    """w[n][j] = ((D + 1) j - n) / n C(n, j) / D^j (n, j = 1..``pages``, D = ``dies``): r_n = sum_j w[n][j] F_j r_(n - j),
    r_0 = 1, gives r_k = E[prod over the dies of F_(pages there)] for k pages drawn uniformly with replacement among D
    dies (F_0 = 1): k! / D^k [x^k] (sum_j F_j x^j / j!)^D, the power by J. C. P. Miller's recurrence for a power of a
    series, every term positive for k <= D."""
    out: list[list[float]] = [[]]
    log_d = math.log(dies)
    for n in range(1, pages + 1):
        row = [0.0]
        for j in range(1, n + 1):
            log_c = math.lgamma(n + 1.0) - math.lgamma(j + 1.0) - math.lgamma(n - j + 1.0) - j * log_d
            row.append(((dies + 1) * j - n) / n * math.exp(log_c))
        out.append(row)
    return out


_OCCUPANCY: dict[tuple[int, int], list[list[float]]] = {}


def _occupancy(pages: int, dies: int) -> list[list[float]]:
    """``_occupancy_weights``, remembered."""
    key = (pages, dies)
    got = _OCCUPANCY.get(key)
    if got is None:
        if len(_OCCUPANCY) > 64:
            _OCCUPANCY.clear()
        got = _OCCUPANCY[key] = _occupancy_weights(pages, dies)
    return got


def fork_join_above(t: float, table: tuple[float, list[float]], pages: int, dies: int, read_us: float,
                    read_cv: float) -> float:
    """P(T > t), T the die part of a read over ``pages`` k pages (fork/join, the DES's ``DieArray.read``): each page
    on one of the ``dies`` D drawn uniformly with replacement; a die with j of the read's pages finishes them after
    its wait W (``table``: P(W > x), the same law at every die, the dies' waits taken as independent) and j reads of
    the die's lognormal law (S_j: their sum, mean j tR and cv ``read_cv`` / sqrt(j), a lognormal: Fenton-Wilkinson);
    the read moves on at the last. P(T <= t) = E[prod over the dies of F_j(t)], F_j = P(W + S_j <= t), over the
    occupancy of k pages in D dies (``_occupancy_weights``)."""
    if t <= 0:
        return 1.0
    f = [1.0]
    for j in range(1, pages + 1):
        f.append(max(0.0, 1.0 - _wait_and_read_above(table, t, j * read_us, read_cv / math.sqrt(j))))
    weights = _occupancy(pages, dies)
    r = [1.0]
    for n in range(1, pages + 1):
        row = weights[n]
        total = 0.0
        for j in range(1, n + 1):
            total += row[j] * f[j] * r[n - j]
        r.append(total)
    return min(1.0, max(0.0, 1.0 - r[pages]))


FORK_JOIN_SPREAD_POINTS = 800
"""Grid points of the integral that gives a fork/join read's mean with no wait (``fork_join_spread_us``)."""
NO_WAIT: tuple[float, list[float]] = (0.0, [0.0])
"""A wait table of no wait (``_table_above``, ``_wait_and_read_above``: step 0)."""
_SPREAD: dict[tuple[int, int, float, float], float] = {}


def fork_join_spread_us(pages: int, dies: int, read_us: float, read_cv: float) -> float:
    """E[T] - tR for T the die part of a read over ``pages`` k pages with no wait at its dies (``fork_join_above``
    with ``NO_WAIT``: each page on one of the ``dies`` D drawn uniformly with replacement, a die with j of them
    reading them one after another, the read moving on at the last): what a read of k pages takes at the dies beyond
    one page's read ``read_us`` tR when no other read is there, the slowest of its pages and its own pages that share a
    die (two of 4 on one of 24 dies 23% of the time). E[T] = integral of P(T > t) dt (midpoint rule,
    ``FORK_JOIN_SPREAD_POINTS`` points up to k tR and five of the sum's sd beyond). 0 for one page."""
    if pages <= 1 or read_us <= 0:
        return 0.0
    key = (pages, dies, read_us, read_cv)
    got = _SPREAD.get(key)
    if got is None:
        reach = pages * read_us * (1.0 + 5.0 * read_cv / math.sqrt(pages)) + 5.0 * read_us * read_cv
        h = reach / FORK_JOIN_SPREAD_POINTS
        total = 0.0
        for i in range(FORK_JOIN_SPREAD_POINTS):
            total += fork_join_above((i + 0.5) * h, NO_WAIT, pages, dies, read_us, read_cv)
        got = max(0.0, total * h - read_us)
        if len(_SPREAD) > 256:
            _SPREAD.clear()
        _SPREAD[key] = got
    return got


def _finite_source_wait_table(sources: int, a: float, read_us: float, read_cv: float) -> tuple[float, list[float]]:
    """(step, [P(W > n step)]) of a read's wait at a die that ``sources`` pages of a closed loop's other reads visit
    (the machine repairman's arrival law with ratio ``a``, ``_finite_source_probs``: n of them there): the rest of the
    read in service (its exact equilibrium residual, ``_ResidualTail``) and n - 1 whole reads of tR (the die's tight
    law) for n >= 1; 0 for n = 0."""
    if sources <= 0:
        return 0.0, [0.0]
    first, probs = _finite_source_probs(sources, a)
    top = first + len(probs) - 1
    if top < 1:
        return 0.0, [0.0]
    pi = [0.0] * first + probs
    beyond = [0.0] * (top + 2)  # beyond[m] = P(n >= m)
    for n in range(top, -1, -1):
        beyond[n] = beyond[n + 1] + pi[n]
    step = read_us / FORK_JOIN_STEPS
    residual = _ResidualTail(read_us, read_cv)
    out: list[float] = []
    for i in range((top + 3) * FORK_JOIN_STEPS + 1):
        x = i * step
        m = int(x / read_us)
        value = beyond[m + 2] if m + 2 <= top else 0.0
        for n in range(max(1, m - 3), min(top, m + 1) + 1):
            value += pi[n] * residual.above(x - (n - 1) * read_us)
        out.append(value)
        if value < 1e-7:
            break
    return step, out


def fork_join_wait_above(sources: int, pages: int, dies: int, read_us: float, read_cv: float,
                         mean_us: float) -> tuple[float, list[float]]:
    """The wait table at one die of a read over ``pages`` pages in a closed loop (``_finite_source_wait_table``:
    ``sources`` = the other reads' pages, (N - 1) x pages, each at a die or away, the machine repairman M/G/1//N's
    arrival law, bounded by the loop's population where the geometric queue of an M/G/1 is not), its ratio found by
    bisection on its log so that the read's fork/join mean E[T] (``fork_join_above``, the last of its pages) is the
    fast path's own mean at the dies ``mean_us`` (its mean wait plus a page's read plus the no-wait spread of the
    read's pages, ``fork_join_spread_us``: the network's waits are one page's, the maximum of the waits is matched to
    them, as ``WriteLaw``'s slowest copy is). Where even no
    wait gives a longer mean (the read's own pages on one die, the slowest of its k reads) the wait is none."""

    def mean_of(table: tuple[float, list[float]]) -> float:
        step, tail = table
        reach = (len(tail) + 1) * step + (pages + 3) * read_us * (1.0 + 5.0 * read_cv)
        h = reach / FORK_JOIN_MEAN_POINTS
        total = 0.0
        for i in range(FORK_JOIN_MEAN_POINTS):
            total += fork_join_above((i + 0.5) * h, table, pages, dies, read_us, read_cv)
        return total * h

    lo, hi = -30.0, 12.0
    none = _finite_source_wait_table(sources, math.exp(lo), read_us, read_cv)
    if mean_of(none) >= mean_us:
        return none
    for _ in range(36):
        mid = 0.5 * (lo + hi)
        got = mean_of(_finite_source_wait_table(sources, math.exp(mid), read_us, read_cv))
        if abs(got - mean_us) < 1e-4 * mean_us:
            lo = hi = mid
            break
        if got < mean_us:
            lo = mid
        else:
            hi = mid
    return _finite_source_wait_table(sources, math.exp(0.5 * (lo + hi)), read_us, read_cv)


def die_wait_above(residuals: list[tuple[float, float]], mean_wait_us: float, busy: float = -1.0) -> tuple[float, list[float]]:
    """The tail P(W > t) of a FIFO wait W = R_1 + ... + R_K (each R drawn from ``residuals``: weight, uniform
    on (0, length)) whose mean is ``mean_wait_us``. K is geometric, P(K >= k) = rho^k, rho = w / (w + E[R])
    (an M/G/1's wait); with ``busy`` (0..1) P(K >= k) = busy r^(k - 1) instead, r = 1 - busy E[R] / w
    (at least 0), so that P(W > t) = (busy / r) P(W_r > t), W_r the geometric sum with ratio r (r = 0:
    busy P(R > t)).

    Solved on a grid from Benes' equation F(t) = 1 - rho + rho int_0^t F(t - x) r(x) dx (F = P(W <= t), r the
    residual's density), which for uniform parts needs only the running integral G of F:
    F(t) = 1 - rho + rho sum_c (weight_c / length_c) (G(t) - G(t - length_c)) (trapezoids, G linear between
    points). Returns (step, [P(W > n step)]) down to 1e-5 (at most ``WAIT_STEPS`` steps). No residual or
    no wait: (0, [0]).
    """
    parts = [(wgt, length) for wgt, length in residuals if wgt > 0 and length > 0]
    if (mean_wait_us <= 0 and busy < 0) or busy == 0 or not parts:
        return 0.0, [0.0]
    mean_r = sum((wgt * length / 2 for wgt, length in parts), 0.0)
    if busy < 0:
        return _geometric_wait(parts, mean_wait_us / (mean_wait_us + mean_r))
    u = min(busy, 0.999)
    r = 1.0 - u * mean_r / mean_wait_us if mean_wait_us > 0 else 0.0
    if r <= 1e-3:  # one residual: busy P(R > t)
        longest = max(length for _, length in parts)
        step = max(min(length for _, length in parts) / 4.0, longest / WAIT_STEPS)
        return step, [u * sum((wgt * max(0.0, 1.0 - n * step / length) for wgt, length in parts), 0.0)
                      for n in range(int(longest / step) + 2)]
    step, above = _geometric_wait(parts, min(r, 0.999))
    scale = u / min(r, 0.999)
    return step, [scale * a for a in above]


def _residual_above(mean: float, cv: float, x: float) -> float:
    """P(R > x) for R the equilibrium residual of a lognormal service S of ``mean`` and ``cv`` (deterministic when cv
    is 0): E[(S - x)+] / E[S] = Phi(d1) - x / E[S] Phi(d2), d1 = (mu + sigma^2 - ln x) / sigma, d2 = d1 - sigma."""
    if x <= 0:
        return 1.0
    if cv <= 0:
        return max(0.0, 1.0 - x / mean)
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    d1 = (mu + sigma * sigma - math.log(x)) / sigma
    d2 = d1 - sigma
    root2 = math.sqrt(2.0)
    return max(0.0, 0.5 * math.erfc(-d1 / root2) - x / mean * 0.5 * math.erfc(-d2 / root2))


def residual_points(mean: float, cv: float, n: int) -> list[float]:
    """``n`` equally likely points of the equilibrium residual of a lognormal of ``mean`` and ``cv`` (the rest of a
    program met at random: ``_residual_above``), its quantiles at (j + 1/2) / n, each by bisection to 1e-4 of the
    mean."""
    tail = _ResidualTail(mean, cv)
    hi = mean
    while tail.above(hi) > 0.5 / n:
        hi *= 2.0
    out: list[float] = []
    for j in range(n):
        target = 1.0 - (j + 0.5) / n
        lo, top = 0.0, hi
        while top - lo > 1e-4 * mean:
            mid = 0.5 * (lo + top)
            if tail.above(mid) > target:
                lo = mid
            else:
                top = mid
        out.append(0.5 * (lo + top))
    return out


class _ResidualTail:
    """``_residual_above`` for one law, its constants computed once."""

    __slots__ = ("cv", "mean", "mu", "sigma")

    def __init__(self, mean: float, cv: float) -> None:
        self.mean = mean
        self.cv = cv
        self.sigma = math.sqrt(math.log1p(cv * cv)) if cv > 0 else 0.0
        self.mu = math.log(mean) - self.sigma * self.sigma / 2 if mean > 0 else 0.0

    def above(self, x: float) -> float:
        if x <= 0:
            return 1.0
        if self.cv <= 0:
            return max(0.0, 1.0 - x / self.mean)
        sigma = self.sigma
        d1 = (self.mu + sigma * sigma - math.log(x)) / sigma
        if d1 < -9.0:
            return 0.0
        return max(0.0, 0.5 * math.erfc(-d1 * _ROOT_HALF) - x / self.mean * 0.5 * math.erfc(-(d1 - sigma) * _ROOT_HALF))


_ROOT_HALF = math.sqrt(0.5)
ONE_PROGRAM_STEPS = 300
"""Grid steps of ``one_program_wait_above`` (to the program residual's 5-sigma reach plus the reads queued)."""


def one_program_wait_above(read_load: float, read_us: float, read_cv: float, program_load: float, program_us: float,
                           program_cv: float, mean_wait_us: float, busy: float) -> tuple[float, list[float]]:
    """The wait of a read at a die that also programs, as the FTL's write point runs it (``WritePoint``): a program
    starts only on an idle die (no read in service or queued), so a read finds at most one program ahead of it,
    the one in service. With chance ``busy`` the die is busy; the operation in service is a program or a read by
    their loads (``read_load`` as the read sees it), and the read waits out its residual (the equilibrium residual
    of its lognormal law, exactly: ``_residual_above``) and then the K reads queued ahead, each a whole tR (the die's
    tight read law): K geometric (from 0) with the mean that gives the fast path's mean wait,
    w = busy (E[R] + E[K] tR), E[R] = (read load tR (1 + cv_r^2) + program load T (1 + cv_p^2)) / 2 / (their sum)
    (K = 0 where the residual alone reaches w). Returns (step, [P(W > n step)]) down to 1e-6 (``ONE_PROGRAM_STEPS``
    steps); the geometric sum of residuals of ``die_wait_above`` would let a read wait out several programs, which
    the write point never gives it."""
    u = min(busy, 0.999)
    total = read_load + program_load
    if u <= 0 or total <= 0:
        return 0.0, [0.0]
    pr, pp = read_load / total, program_load / total
    first_mean = pr * read_us * (1 + read_cv * read_cv) / 2 + pp * program_us * (1 + program_cv * program_cv) / 2
    mean_k = max(0.0, (mean_wait_us / u - first_mean) / read_us) if read_us > 0 else 0.0
    q = mean_k / (1.0 + mean_k)  # P(K >= k + 1 | K >= k)
    k_max = int(math.log(1e-7) / math.log(q)) + 1 if q > 0 else 0
    sigma = math.sqrt(math.log1p(program_cv * program_cv))
    longest = program_us * math.exp(-sigma * sigma / 2 + 5.0 * sigma) if program_cv > 0 else program_us
    reach = max(longest, read_us * 2.0) + k_max * read_us
    step = reach / ONE_PROGRAM_STEPS
    # H(t) = P(R + K tR > t) = (1 - q) P(R > t) + q H(t - tR) (K geometric), H = 1 below 0: one pass over the grid
    lag = read_us / step
    h: list[float] = []
    out: list[float] = []
    read_tail = _ResidualTail(read_us, read_cv)
    program_tail = _ResidualTail(program_us, program_cv)
    for n in range(ONE_PROGRAM_STEPS + 1):
        t = n * step
        first = pr * read_tail.above(t) + pp * program_tail.above(t)
        back = n - lag
        if back <= 0 or q <= 0:
            behind = 1.0
        else:
            k = int(back)
            behind = h[k] + (h[k + 1] - h[k]) * (back - k) if k + 1 < n else h[k]
        value = (1.0 - q) * first + q * behind
        h.append(value)
        out.append(u * value)
        if u * value < 1e-6:
            break
    return step, out


def _geometric_wait(parts: list[tuple[float, float]], rho: float) -> tuple[float, list[float]]:
    """``die_wait_above`` with P(K >= k) = rho^k."""
    longest = max(length for _, length in parts)
    shortest = min(length for _, length in parts)
    # the wait's reach: K's 1e-6 quantile (geometric) residuals of at most the longest part
    reach = longest * (1.0 + math.log(1e-6) / math.log(rho)) if rho < 1 else longest * 1e6
    step = max(shortest / 2.0, reach / WAIT_STEPS)
    if step > shortest / 2.0:  # a part shorter than two steps: the grid reads G between known points only
        parts = [(wgt, max(length, 2.0 * step)) for wgt, length in parts]
    a = [wgt / length for wgt, length in parts]
    lags = [length / step for _, length in parts]
    sum_a = sum(a, 0.0)
    base = 1.0 - rho
    f_prev = base
    g = [0.0]
    above = [rho]
    denom = 1.0 - rho * step / 2.0 * sum_a
    for n in range(1, WAIT_STEPS + 1):
        g_prev = g[n - 1]
        acc = 0.0
        for ac, lag in zip(a, lags, strict=True):
            back = n - lag
            if back <= 0:
                g_back = 0.0
            else:
                k = int(back)
                g_back = g[k] + (g[k + 1] - g[k]) * (back - k) if k + 1 < n else g[k]
            acc += ac * (g_prev + step / 2.0 * f_prev - g_back)
        f = (base + rho * acc) / denom
        if f > 1.0:
            f = 1.0
        g.append(g_prev + step / 2.0 * (f_prev + f))
        above.append(1.0 - f)
        f_prev = f
        if 1.0 - f < 1e-5:
            break
    return step, above


@dataclass(frozen=True)
class WriteLaw:
    """A write's latency on a route under the ``dies`` device model (acknowledged from the device's write cache).

    Its zero-load latency ``zero_us`` holds the cache's acknowledgement ``ack_us``, a lognormal of cv ``ack_cv``
    (the DES's ``write_ack`` delay: the ack time less the controller's, times the device law's unit), the rest
    fixed. A write waits only for what keeps it from the cache: a free slot (slots are freed as programs end),
    a subchannel or queue slot on the way; the wait W has the fast path's mean ``mean_us - zero_us``.

    * Open arrivals (``population`` infinite): W exponential of that mean (M/M/1's wait in system).
    * A closed loop of ``population`` N jobs, each issuing a write every ``cycle_us`` (N / the write rate): the
      writes waiting form a finite-source queue (the machine-repairman M/M/1//N): an arriving write finds n
      of the N - 1 others there (arrival theorem), pi(n) ~ (N - 1)! / (N - 1 - n)! a^n, and waits n + 1
      departures of mean m each (the slot releases: programs ending on any of the dies, a superposition close
      to Poisson), W | n ~ Erlang(n + 1, m). The two unknowns a = m / Z (Z = ``cycle_us`` - w, the rest of a
      job's cycle) and m come from the fast path's mean: m (1 + E[n]) = w (``finite_source_wait``). A loop
      that saturates its device keeps about N - 1 - X Z writes queued, so its W is tight (Erlang of many
      stages), not exponential; as N grows pi tends to the geometric law and W to the exponential (the open
      case).
    """

    zero_us: float
    mean_us: float
    ack_us: float = 0.0
    ack_cv: float = 0.0
    population: float = math.inf
    cycle_us: float = 0.0
    servers: int = 0
    """Dies draining the cache (0: stages taken as exponential, an Erlang per n). With ``servers`` c the stages are
    departures of c busy dies whose programs have cv ``program_cv``: n + 1 of them take a gamma law of the
    count's variance (``departure_variance``), tighter than an Erlang once n nears c (a die seldom ends twice
    within one program time)."""
    program_cv: float = 0.0
    copies: int = 1
    devices: int = 1
    """Devices the loop's writes spread over (their queues: ``finite_source_wait``)."""
    visits: float = 1.0
    """Visits to one device per write (``copies`` / ``devices`` when spread evenly)."""
    gather: float = 0.0
    """Where a closed loop saturates the write caches of several devices (their dies the bottleneck): the chance a
    logical write visits the one device whose cache is full (``visits``, at most 1); 0 where the waits spread over
    the devices (the product form's). Every device then programs as fast as the loop writes to it, so each one's
    backlog (cache and queue) is a random walk with no drift; the walks drift apart by far more than the loop's
    waiting writes, which gather at the fullest device: a write waits only there, behind them all (seed 001's S2
    example, 8 drives mirrored, DES: drive0 52 waiting on average, drives 4 and 5 never one; p50 25 us, p95 289,
    p99 311 at seeds 1-3 and 100K-800K I/Os alike; calibration/ext/die_solvers_writes.md, "gathered waits")."""

    @property
    def wait_us(self) -> float:
        return max(0.0, self.mean_us - self.zero_us)

    def _gathered(self, w: float) -> tuple[float, list[float]]:
        """The wait table where the loop's waiting writes gather at one device (``gather`` p): no wait with chance
        1 - p; else the one device's finite-source law with mean w / p, each job visiting it p times per cycle (away
        the cycle / p less that wait), its stages departures of that device's busy dies."""
        p = self.gather
        hit = w / p
        step, above = self._finite_source(hit, self.cycle_us / p - hit)
        return step, [p * a for a in above]

    def _one_copy(self, w: float) -> tuple[float, list[float]]:
        """The finite-source wait table of one copy whose mean wait is ``w``."""
        return self._finite_source(w, self.cycle_us - self.wait_us, self.devices, self.visits)

    def _finite_source(self, w: float, rest_us: float, devices: int = 1, visits: float = 1.0) -> tuple[float, list[float]]:
        """(step, [P(W > k step)]) of a finite-source wait of mean ``w`` (``finite_source_wait``: the loop's jobs away
        ``rest_us``), its stages the busy dies' departures (``servers``) or exponential; an exponential where the law
        has no queue to speak of."""
        m, first, probs = finite_source_wait(round(self.population), rest_us, w, devices, visits)
        if not probs:
            step = w * 14.0 / WRITE_STEPS
            return step, [math.exp(-n * step / w) for n in range(WRITE_STEPS + 1)]
        if self.servers > 0:
            return stage_mixture_above(m, first, probs, self.servers, self.program_cv)
        return erlang_mixture_above(m, first, probs)

    @property
    def closed(self) -> bool:
        """Whether the wait is a closed loop's finite-source law (else the open exponential)."""
        return math.isfinite(self.population) and self.population >= 2 and self.cycle_us > self.wait_us

    def wait_table(self) -> tuple[float, list[float]]:
        """(step h, P(W > n h) for n = 0, 1, ...): the wait's tail on a grid; (0, [0]) without a wait (or one below
        1e-3 of the zero-load latency: ``above`` then shifts the latency by it)."""
        w = self.wait_us
        if w <= 1e-3 * max(1.0, self.zero_us):  # a wait this small only shifts the latency (``above``)
            return 0.0, [0.0]
        if self.closed:
            if self.gather > 0:
                return self._gathered(w)
            if self.copies <= 1:
                return self._one_copy(w)
            # the slowest of k copies at k devices (independent queues): P(W > t) = 1 - (1 - P(W_1 > t))^k, the
            # copy's mean w_1 set so that the maximum's mean is the fast path's (a few fixed-point steps)
            k = self.copies
            w1 = w
            for _ in range(4):
                step, above = self._one_copy(w1)
                table = [1.0 - (1.0 - a) ** k for a in above]
                mean = (sum(table, 0.0) - table[0] / 2) * step
                if mean <= 0 or abs(mean - w) < 1e-3 * w:
                    break
                w1 *= w / mean
            return step, table
        step = w * 14.0 / WRITE_STEPS  # exponential: to e^-14 of its mean
        return step, [math.exp(-n * step / w) for n in range(WRITE_STEPS + 1)]

    def above(self, t: float, table: tuple[float, list[float]]) -> float:
        """P(latency > t): the fixed part plus the lognormal acknowledgement plus W (W's tail linear between
        grid points; the acknowledgement at ``SERVICE_POINTS`` equally likely points)."""
        base = self.zero_us - self.ack_us if table[0] > 0 else self.mean_us - self.ack_us
        x = t - base
        if x < 0:
            return 1.0
        if self.ack_us <= 0:
            return _table_above(table, x) if table[0] > 0 else (1.0 if x < 0 else 0.0)
        if table[0] <= 0:
            return _lognormal_above(self.ack_us, self.ack_cv, x)
        # P(A > x) exactly, plus E[P(W > x - A); A <= x] over the points of A (as ``DieWaitLaw.above``)
        points = _service_points(self.ack_us, self.ack_cv)
        acc = 0.0
        if self.closed:
            for s in points:
                if s > x:
                    break  # the points ascend
                acc += _table_above(table, x - s)
        else:  # the exponential in closed form
            w = self.wait_us
            for s in points:
                if s > x:
                    break
                acc += math.exp(-(x - s) / w)
        return _lognormal_above(self.ack_us, self.ack_cv, x) + acc / len(points)


WRITE_STEPS = 240
"""Grid points of a write's wait tail (``WriteLaw.wait_table``)."""


def _normalised(logs: list[float]) -> tuple[int, list[float]]:
    """(first n, [pi(n)]) from unnormalised log weights log pi(n), n = 0.., the negligible ends (below 1e-10 of
    the largest) left off."""
    top = max(logs)
    cut = top + math.log(1e-10)
    first = 0
    while logs[first] < cut:
        first += 1
    last = len(logs) - 1
    while logs[last] < cut:
        last -= 1
    weights = [math.exp(v - top) for v in logs[first:last + 1]]
    total = sum(weights, 0.0)
    return first, [v / total for v in weights]


def _finite_source_probs(others: int, a: float) -> tuple[int, list[float]]:
    """(first n, [pi(n)]) of the machine repairman's arrival law with ``others`` other jobs and ratio ``a``:
    pi(n) ~ others! / (others - n)! a^n, n = 0..others, the negligible ends (below 1e-10 of the largest) left off."""
    logs = [0.0]
    for n in range(others):
        logs.append(logs[-1] + math.log((others - n) * a))
    return _normalised(logs)


PRODUCT_FORM_WORK = 40_000
"""Most (N - 1) x devices for ``finite_source_wait``'s product form (beyond: independent sources)."""


def _product_form_probs(others: int, a: float, devices: int) -> tuple[int, list[float]]:
    """(first n, [pi(n)]): the jobs an arrival at one of ``devices`` identical single-server queues finds there, with
    ``others`` other jobs in a closed product-form network of those queues (relative demand ``a`` each) and a delay
    (demand 1): pi(n) ~ a^n G(others - n), G the normalizing constants of the other queues and the delay
    (convolution: G_delay(k) = 1 / k!, a queue added by G'(k) = G(k) + a G'(k - 1); in logs). The jobs crowd
    together at a queue far more than independent sources would (with the delay small, uniformly over the ways
    to share them out)."""
    log_a = math.log(a)
    lg = [-math.lgamma(k + 1.0) for k in range(others + 1)]
    for _ in range(devices - 1):
        prev = lg[0]
        for k in range(1, others + 1):
            x, y = lg[k], log_a + prev
            prev = (x if x > y else y) + math.log1p(math.exp(-abs(x - y)))
            lg[k] = prev
    logs = [n * log_a + lg[others - n] for n in range(others + 1)]
    return _normalised(logs)


def finite_source_wait(population: int, rest_us: float, wait_us: float, devices: int = 1,
                       visits: float = 1.0) -> tuple[float, int, list[float]]:
    """The machine repairman M/M/1//N matched to a closed loop's mean wait (``WriteLaw``): N = ``population``
    jobs, each away for ``rest_us`` (Z) between visits, mean time at the queue ``wait_us`` (w). Finds
    a = m / Z with m (1 + E[n]) = w, n ~ pi (``_finite_source_probs`` with N - 1 others), by bisection on log a;
    returns (m, first n, [pi(n)]). With ``devices`` D > 1 queues, each visited ``visits`` v times per job cycle
    (Z the cycle's rest), the arrival law is the product form's (``_product_form_probs``, a = v m / Z) while
    (N - 1) D stays within ``PRODUCT_FORM_WORK``, else independent sources (one queue, Z / v - w away)."""
    others = population - 1
    product = devices > 1 and others * devices <= PRODUCT_FORM_WORK
    rest = rest_us if product or devices <= 1 else max(1e-9, (rest_us + wait_us) / visits - wait_us)
    per_visit = visits if product else 1.0

    def mean_time(a: float) -> tuple[float, int, list[float]]:
        first, probs = _product_form_probs(others, a, devices) if product else _finite_source_probs(others, a)
        en = sum((p * (first + i) for i, p in enumerate(probs)), 0.0)
        return a * rest / per_visit * (1.0 + en), first, probs

    lo, hi = -40.0, 40.0
    for _ in range(40 if product else 56):
        mid = 0.5 * (lo + hi)
        if mean_time(math.exp(mid))[0] < wait_us:
            lo = mid
        else:
            hi = mid
    a = math.exp(0.5 * (lo + hi))
    _, first, probs = mean_time(a)
    en = sum((p * (first + i) for i, p in enumerate(probs)), 0.0)
    return wait_us / (1.0 + en), first, probs


def erlang_mixture_above(m: float, first: int, probs: list[float]) -> tuple[float, list[float]]:
    """(step, [P(W > k step)]) of W ~ Erlang(n + 1, mean m each stage) with n = ``first`` + i at chance probs[i]:
    P(W > x) = sum_n pi(n) P(Poisson(x / m) <= n), on ``WRITE_STEPS`` steps up to 1e-7 of the tail."""
    last = first + len(probs) - 1
    reach = m * (last + 1 + 8.0 * math.sqrt(last + 1) + 20.0)
    step = reach / WRITE_STEPS
    out: list[float] = []
    for k in range(WRITE_STEPS + 1):
        y = k * step / m
        if y <= 0:
            out.append(1.0)
            continue
        # Poisson(y) pmf from j = 0 in log space (no underflow for a large y), its running CDF weighted by pi
        log_y = math.log(y)
        log_p = -y
        cdf = 0.0
        acc = 0.0
        for j in range(last + 1):
            if log_p > -745.0:
                cdf += math.exp(log_p)
            if j >= first:
                acc += probs[j - first] * min(1.0, cdf)
            log_p += log_y - math.log(j + 1)
        out.append(acc)
        if acc < 1e-7:
            break
    return step, out


def departure_variance(stages: float, servers: int, cv: float) -> float:
    """Variance of the number of departures from ``servers`` c busy servers in a window of ``stages`` K mean
    inter-departure times (each server a stationary renewal process of period c stages, its service of cv ``cv``;
    in stage units). Each server's count in the window t = K / c periods: P(N >= 1) = min(1, t) (the tight law's
    residual about uniform on (0, one period)), P(N >= j) = P(U + S_{j-1} <= t) averaged over the residual U (32
    points), S_{j-1} the sum of j - 1 programs taken as a lognormal of its mean j - 1 and cv cv / sqrt(j - 1)
    (Fenton-Wilkinson: never negative); Var = c (E[N^2] - E[N]^2). K << c: about K (Poisson, the Erlang); K = c:
    about c cv^2 (each die ends about once)."""
    if stages <= 0:
        return 0.0
    c = float(servers)
    t = stages / c
    points = 32
    normal = NormalDist()
    p1 = min(1.0, t)
    e1 = p1
    e2 = p1
    j = 2
    while j - 1 <= t + 1.0 + 8.0 * cv * math.sqrt(t + 1.0):
        whole = j - 1
        # the sum of j - 1 programs as a lognormal of their mean and cv (Fenton-Wilkinson): never negative
        sigma = math.sqrt(math.log1p(cv * cv / whole))
        mu = math.log(whole) - sigma * sigma / 2
        acc = 0.0
        for i in range(points):
            x = t - (i + 0.5) / points
            if x <= 0:
                break
            if sigma > 0:
                acc += normal.cdf((math.log(x) - mu) / sigma)
            elif x >= whole:
                acc += 1.0
        pj = acc / points
        e1 += pj
        e2 += (2 * j - 1) * pj
        j += 1
    return max(c * (e2 - e1 * e1), 1e-9)


def _gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) = P(Gamma(a, 1) > x) (series below a + 1, Lentz's continued
    fraction above; Numerical Recipes 6.2)."""
    if x <= 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1.0:
        term = 1.0 / a
        total = term
        ap = a
        for _ in range(10_000):
            ap += 1.0
            term *= x / ap
            total += term
            if term < total * 1e-12:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return min(1.0, math.exp(log_front) * h)


def stage_mixture_above(m: float, first: int, probs: list[float], servers: int, cv: float) -> tuple[float, list[float]]:
    """(step, [P(W > k step)]) of W = n + 1 departures of ``servers`` busy dies (stage mean m), n = ``first`` + i at
    chance probs[i]: W | n a gamma law of mean (n + 1) m and variance m^2 ``departure_variance(n + 1)`` (the duality
    of a counting process and its epochs), on ``WRITE_STEPS`` steps up to 1e-7 of the tail."""
    laws: list[tuple[float, float, float]] = []  # (pi, shape, scale)
    reach = 0.0
    for i, p in enumerate(probs):
        k = first + i + 1.0
        v = departure_variance(k, servers, cv)
        laws.append((p, k * k / v, m * v / k))
        reach = max(reach, m * k + 8.0 * m * math.sqrt(v) + 20.0 * m / max(1.0, k * k / v))
    step = reach / WRITE_STEPS
    out: list[float] = [1.0]
    for n in range(1, WRITE_STEPS + 1):
        x = n * step
        acc = 0.0
        for p, shape, scale in laws:
            acc += p * _gamma_above(shape, x / scale)
        out.append(acc)
        if acc < 1e-7:
            break
    return step, out


def _gamma_above(shape: float, x: float) -> float:
    """P(Gamma(shape, 1) > x): ``_gamma_q`` for a shape below 8, else the Wilson-Hilferty cube-root normal
    approximation (within about 1e-4 there); 1 or 0 beyond 12 standard deviations of the cube root."""
    if x <= 0:
        return 1.0
    if shape < 8.0:
        return _gamma_q(shape, x)
    spread = math.sqrt(1.0 / (9.0 * shape))
    z = ((x / shape) ** (1.0 / 3.0) - (1.0 - 1.0 / (9.0 * shape))) / spread
    if z < -12.0:
        return 1.0
    if z > 12.0:
        return 0.0
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def route_quantiles_us(qs: tuple[float, ...], read_share: float, read_mean_us: float, laws: list[DieWaitLaw],
                       write: WriteLaw) -> list[float]:
    """The ``qs`` quantiles of a route's latency under the ``dies`` device model (the fast path's p99 / p99.9).

    A read's latency is its mean outside the dies (``read_mean_us`` less the dies' mean wait and read time,
    each group's by its share; a read is taken to wait at one die: a read over several pages waits as for
    one, as in the mean) plus the wait and read at its die (``DieWaitLaw``; a mixture over the groups
    by their shares of the reads). A closed loop's reads of one size over several pages alone on one device
    (``DieWaitLaw.fork_join``) take the last of their pages instead, each die's wait a finite-source law, and the
    read channel's finite-source wait after the join (``DieWaitLaw.fork_join_table``). A write (acknowledged from
    the device's cache under ``dies``) follows ``WriteLaw``: its fixed part, the lognormal acknowledgement and the
    wait for the cache (exponential for open arrivals, the finite-source law of a closed loop). Each quantile of
    the mixture (reads ``read_share`` of the I/Os) is found by bisection (to 1e-3 relative).
    """
    return mixture_quantiles_us(qs, [(1.0, route_above(read_share, read_mean_us, laws, write))],
                                max(1.0, read_mean_us, write.mean_us))


def route_above(read_share: float, read_mean_us: float, laws: list[DieWaitLaw], write: WriteLaw) -> Callable[[float], float]:
    """P(latency > t) of a route under the ``dies`` device model, as a function of t (``route_quantiles_us``)."""
    reads = [w for w in laws if w.share > 0] if read_share > 0 else []
    total_share = sum((w.share for w in reads), 0.0)
    die_mean = sum((w.share * w.die_mean_us for w in reads), 0.0) / total_share if reads else 0.0
    outside = max(0.0, read_mean_us - die_mean)
    tables = [w.wait_table() for w in reads]
    write_share = 1.0 - read_share if reads else 1.0
    write_table = write.wait_table() if write_share > 0 else (0.0, [0.0])

    def above(t: float) -> float:
        p = 0.0
        if reads:
            p += read_share * sum((w.share * w.above(t - outside, tab) for w, tab in zip(reads, tables, strict=True)),
                                  0.0) / total_share
        if write_share > 0:
            p += write_share * write.above(t, write_table)
        return p

    return above


SLOWEST_PAGE_STEPS = 2_000
"""Midpoint steps of ``spanning_read_above``'s integral for the mean of the slowest page."""


def spanning_read_above(read_share: float, read_mean_us: float, pages: list[tuple[float, DieWaitLaw]],
                        write: WriteLaw) -> Callable[[float], float]:
    """P(latency > t) of a route whose reads each span many dies (an open sequential stream's 1 MiB reads):
    a read of k pages reads k distinct dies at once and moves on when the last is read, so its time at the dies is
    the slowest of k independent waits-and-reads, P(M > x) = 1 - prod over the groups of (1 - P(W + S > x))^k_g
    (``pages``: k_g pages per logical read at a group, each page's ``DieWaitLaw`` its wait at one die). Its mean
    E[M] = integral of P(M > x) dx (``SLOWEST_PAGE_STEPS`` midpoint steps up to where P(M > x) < 1e-9); the rest of
    the read's ``read_mean_us`` is a fixed part outside the dies. Writes as ``route_above`` (``WriteLaw``)."""
    groups = [(k, law, law.wait_table()) for k, law in pages if k > 0] if read_share > 0 else []

    def slowest_above(x: float) -> float:
        if x < 0:
            return 1.0
        log_none = 0.0
        for k, law, table in groups:
            a = law.above(x, table)
            if a >= 1.0:
                return 1.0
            log_none += k * math.log1p(-a)
        return -math.expm1(log_none)

    outside = 0.0
    if groups:
        top = max(1.0, max(law.read_us for _, law, _ in groups))
        while slowest_above(top) > 1e-9:
            top *= 2.0
        h = top / SLOWEST_PAGE_STEPS
        mean = sum((slowest_above((i + 0.5) * h) for i in range(SLOWEST_PAGE_STEPS)), 0.0) * h
        outside = max(0.0, read_mean_us - mean)
    write_share = 1.0 - read_share if groups else 1.0
    write_table = write.wait_table() if write_share > 0 else (0.0, [0.0])

    def above(t: float) -> float:
        p = read_share * slowest_above(t - outside) if groups else 0.0
        if write_share > 0:
            p += write_share * write.above(t, write_table)
        return p

    return above


def mixture_quantiles_us(qs: tuple[float, ...], parts: list[tuple[float, Callable[[float], float]]],
                         scale_us: float) -> list[float]:
    """The ``qs`` quantiles of a mixture: P(latency > t) = sum of weight x above(t) over ``parts`` (weights
    summing to 1: several workloads' routes by their shares of the I/Os), each by bisection to 1e-3 relative,
    starting from ``scale_us`` (the largest mean of the parts)."""
    for q in qs:
        if not 0 < q < 1:
            raise ValueError(f"q must be in (0, 1), got {q}")

    def above(t: float) -> float:
        if len(parts) == 1:
            return parts[0][1](t)
        return sum((weight * part(t) for weight, part in parts), 0.0)

    out: list[float] = []
    for q in qs:
        target = 1.0 - q
        lo = out[-1] if out and out[-1] <= scale_us * 2.0 else 0.0
        hi = max(scale_us, lo) * 2.0
        while above(hi) > target:
            lo, hi = hi, hi * 2.0
        while hi - lo > 1e-3 * hi:
            mid = 0.5 * (lo + hi)
            if above(mid) > target:
                lo = mid
            else:
                hi = mid
        out.append(hi)
    return out
