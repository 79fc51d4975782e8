"""The fast path's tail of a closed loop's reads over several pages under dies: the last of the read's
pages (fork/join over its dies), each die's wait a finite-source law, then the read channel after the join."""

from __future__ import annotations

import math

import pytest

from calibration.ext.die_solvers import scenario_for
from sim.analytic import evaluate
from sim.analytic.dies import DieWaitLaw, _occupancy_weights, fork_join_above, fork_join_wait_above


def _occupancy(pages: int, dies: int, f: list[float]) -> float:
    """E[prod over the dies of F_(pages there)] by ``_occupancy_weights`` (F_0 = 1)."""
    w = _occupancy_weights(pages, dies)
    r = [1.0]
    for n in range(1, pages + 1):
        r.append(sum((w[n][j] * f[j] * r[n - j] for j in range(1, n + 1)), 0.0))
    return r[pages]


@pytest.mark.parametrize(("pages", "dies"), [(2, 24), (4, 24), (4, 56), (8, 8), (64, 1480)])
def test_occupancy_is_a_probability_and_gives_the_birthday_chance(pages: int, dies: int) -> None:
    """Every F_j = 1: probability 1. F_1 = p, F_j = 0 beyond: all pages on different dies (D!/(D-k)!/D^k) times p^k."""
    assert _occupancy(pages, dies, [1.0] * (pages + 1)) == pytest.approx(1.0, rel=1e-9)
    p = 0.9
    distinct = math.exp(math.lgamma(dies + 1) - math.lgamma(dies - pages + 1) - pages * math.log(dies))
    f = [1.0, p] + [0.0] * (pages - 1)
    assert _occupancy(pages, dies, f) == pytest.approx(distinct * p ** pages, rel=1e-9)


def test_with_no_wait_a_read_is_late_exactly_when_two_of_its_pages_share_a_die() -> None:
    """Deterministic die reads (cv 0) and no wait: T = tR x the most pages on one die, so P(T > 1.5 tR) is the chance
    two of the k pages share a die (24 dies, 4 pages: 1 - 24 x 23 x 22 x 21 / 24^4 = 0.2313) and P(T > 2.5 tR)
    that three do."""
    t_r, pages, dies = 600.0, 4, 24
    none = (0.0, [0.0])
    share = 1.0 - 24 * 23 * 22 * 21 / 24 ** 4
    assert fork_join_above(1.5 * t_r, none, pages, dies, t_r, 0.0) == pytest.approx(share, rel=1e-9)
    three = 24 * (4 * 23 + 1) / 24 ** 4
    assert fork_join_above(2.5 * t_r, none, pages, dies, t_r, 0.0) == pytest.approx(three, rel=1e-9)
    assert fork_join_above(0.5 * t_r, none, pages, dies, t_r, 0.0) == 1.0


@pytest.mark.parametrize("target", [1_500.0, 4_000.0, 12_000.0])
def test_the_finite_source_wait_is_matched_to_the_fork_join_mean(target: float) -> None:
    """The law's ratio is found so that the read's fork/join mean (the integral of its tail) is the fast path's mean
    at the dies; the wait at one die never exceeds the others' pages (31 reads x 4 pages here)."""
    t_r, pages, dies, sources = 642.5, 4, 24, 31 * 4
    table = fork_join_wait_above(sources, pages, dies, t_r, 0.1, target)
    step = t_r / 16
    mean = 0.0
    t = 0.5 * step
    while True:
        above = fork_join_above(t, table, pages, dies, t_r, 0.1)
        mean += above * step
        t += step
        if above < 1e-9:
            break
    assert mean == pytest.approx(target, rel=0.01)
    assert len(table[1]) * table[0] <= (sources + 3) * t_r + table[0]


def test_one_page_reads_keep_the_one_die_law() -> None:
    """A read of one page (``pages`` 1) never takes the fork/join law, nor a read next to programs."""
    base = {"share": 1.0, "mean_wait_us": 300.0, "read_us": 100.0, "read_cv": 0.1, "read_load": 0.5,
            "program_load": 0.0, "program_us": 500.0, "program_cv": 0.3, "busy": 0.5, "dies": 24, "sources": 30}
    assert not DieWaitLaw(**base, pages=1).fork_join  # type: ignore[arg-type]
    assert DieWaitLaw(**base, pages=4).fork_join  # type: ignore[arg-type]
    assert not DieWaitLaw(**{**base, "program_load": 0.1}, pages=4).fork_join  # type: ignore[arg-type]


# DES p99 at seeds 1..4 (20,000 I/Os, the ``calibration.ext.die_solvers`` setup; 95% CIs about +-2..7%) and the fast
# p99 (us), before this law in brackets:
# eXFlash 64 KiB QD8: 3,463 / 3,449 / 3,434 / 3,390, fast 3,679: +6.2..+8.5% (6,670: +93%)
# eXFlash 64 KiB QD32: 9,996 / 9,652 / 9,330 / 9,766, fast 10,564: +5.7..+13.2% (18,676: +87%)
# P4510 64 KiB QD8: 377 / 394 / 400 / 369, fast 356: -3.5..-11.0% (435: +15.3% on seed 1)
# P4510 64 KiB QD32: 959 / 967 / 995 / 942, fast 980: -1.5..+4.0% (936)
# The test runs seed 1; 15% (the target) covers every seed's difference above (13.2% at worst).
@pytest.mark.parametrize(("section", "device", "qd"), [("dimms", "eXFlash-400GB", 8), ("dimms", "eXFlash-400GB", 32),
                                                       ("drives", "P4510-4TB", 8), ("drives", "P4510-4TB", 32)])
def test_fast_p99_of_64_kib_reads_is_within_15_percent_of_the_des(section: str, device: str, qd: int) -> None:
    from sim.des.engine import simulate

    scenario = scenario_for(section, device, qd, 20_000, block_kib=64)
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.tail_method == "dies"
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=0.15)
