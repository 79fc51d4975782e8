"""The fast path's MEAN of a closed loop's reads over several pages under dies: the network's die visit
gives one page's wait and read; the last of the read's pages and its own pages that share a die come on top as a pure
delay, the fork/join law's E[T] - tR with no wait (``fork_join_spread_us``), so the closed loop's throughput follows."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from statistics import NormalDist

import pytest

from calibration.ext.die_solvers import scenario_for
from sim.analytic import evaluate
from sim.analytic.dies import fork_join_spread_us


def _occupancies(pages: int, dies: int) -> dict[tuple[int, ...], float]:
    """Probability of each occupancy (pages per busy die, descending) of ``pages`` pages dropped uniformly with
    replacement on ``dies`` dies: every assignment counted (dies^pages of them)."""
    counts: Counter[tuple[int, ...]] = Counter()
    for assignment in itertools.product(range(dies), repeat=pages):
        counts[tuple(sorted(Counter(assignment).values(), reverse=True))] += 1
    total = dies ** pages
    return {occ: n / total for occ, n in counts.items()}


def _lognormal_cdf(mean: float, cv: float, t: float) -> float:
    if t <= 0:
        return 0.0
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(mean) - sigma * sigma / 2
    return NormalDist().cdf((math.log(t) - mu) / sigma)


def _expected_max(occupancy: tuple[int, ...], t_r: float, cv: float) -> float:
    """E[max over the busy dies of S_j], S_j the sum of j die reads (lognormal of mean j tR and cv / sqrt(j), the
    dies independent): the integral of 1 - prod P(S_j <= t), trapezoids of tR / 4000."""
    h = t_r / 4000
    top = (max(occupancy) + 8 * cv) * t_r * 1.5
    total = 0.0
    t = 0.0
    prev = 1.0
    while t < top:
        t += h
        below = 1.0
        for j in occupancy:
            below *= _lognormal_cdf(j * t_r, cv / math.sqrt(j), t)
        total += 0.5 * (prev + 1.0 - below) * h
        prev = 1.0 - below
    return total


def test_one_page_has_no_spread() -> None:
    assert fork_join_spread_us(1, 24, 600.0, 0.1) == 0.0


def test_deterministic_reads_spread_by_the_most_pages_on_one_die() -> None:
    """cv 0: T = tR x the most of the read's pages on one die. 4 pages on 24 dies: all apart with chance
    24 x 23 x 22 x 21 / 24^4, all four on one die 24 / 24^4, three on one 24 x 4 x 23 / 24^4, else two."""
    t_r = 600.0
    p1 = 24 * 23 * 22 * 21 / 24 ** 4
    p4 = 24 / 24 ** 4
    p3 = 24 * 4 * 23 / 24 ** 4
    p2 = 1.0 - p1 - p3 - p4
    expected = t_r * (p1 + 2 * p2 + 3 * p3 + 4 * p4) - t_r
    assert fork_join_spread_us(4, 24, t_r, 0.0) == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(0.23814 * t_r, rel=1e-4)  # mostly the birthday chance of two on one die (0.2313)


@pytest.mark.parametrize(("pages", "dies", "cv"), [(4, 24, 0.1), (4, 24, 0.3), (3, 8, 0.2), (2, 56, 0.1)])
def test_spread_is_the_expected_max_over_the_occupancy(pages: int, dies: int, cv: float) -> None:
    """The QD1 no-wait mean by hand: every assignment of the pages to the dies enumerated, each occupancy's E[max]
    integrated on its own, less one page's read."""
    t_r = 642.5
    by_hand = sum((p * _expected_max(occ, t_r, cv) for occ, p in _occupancies(pages, dies).items()), 0.0) - t_r
    assert by_hand > 0
    assert fork_join_spread_us(pages, dies, t_r, cv) == pytest.approx(by_hand, rel=0.01)


# DES (seed 1, 20,000 I/Os, the ``calibration.ext.die_solvers`` setup) against the fast path, mean us (IOPS), before
# this delay in brackets:
# eXFlash 64 KiB QD1: DES 931.2 (1,074), fast 932.5 (1,072) [727.2: -21.9% (1,375: +28.1%)]
# eXFlash 64 KiB QD4: DES 1,245.0 (3,213), fast 1,232.6 (3,245) [1,084.9: -12.9% (3,687: +14.8%)]
# eXFlash 64 KiB QD32: DES 4,149.0 (7,711), fast 4,169.8 (7,674) [4,128.7: -0.5% (7,751: +0.5%)]
# P4510 64 KiB QD1: DES 127.9 (7,818), fast 127.9 (7,818) [115.2: -10.0% (8,684: +11.1%)]
# P4510 64 KiB QD4: DES 149.9 (26,683), fast 153.1 (26,128) [143.0: -4.6% (27,977: +4.8%)]
# P4510 64 KiB QD32: DES 659.7 (48,497), fast 663.1 (48,255) [662.5: +0.4% (48,305: -0.4%)]
@pytest.mark.parametrize("qd", [1, 4, 32])
@pytest.mark.parametrize(("section", "device"), [("dimms", "eXFlash-400GB"), ("drives", "P4510-4TB")])
def test_fast_mean_and_iops_of_64_kib_reads_are_within_5_percent_of_the_des(section: str, device: str, qd: int) -> None:
    from sim.des.engine import simulate

    scenario = scenario_for(section, device, qd, 20_000, block_kib=64)
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.latency_mean_us == pytest.approx(des.latency_mean_us.value, rel=0.05), (fast.latency_mean_us,
                                                                                        des.latency_mean_us.value)
    assert fast.iops == pytest.approx(des.iops.value, rel=0.05), (fast.iops, des.iops.value)
