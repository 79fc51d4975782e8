"""The fast path's p99 / p99.9 under the pooled device model (``TAIL_METHODS``: ``pooled``, ``sim.analytic.tails.pooled_tails``):
the service law, a read's wait for a program on its die, and the queue's wait (exponential for open arrivals, the
machine repairman's finite-source law for a closed loop) against the DES on one device (the eXFlash DIMM, pooled under
the default ``auto``, and a drive under ``pooled``); the measured table is calibration/ext/die_solvers_pooled.md.

Theory: with no load the law is the service law alone (the lognormal's quantile); a saturated closed loop's wait is
tight (many departures), far below the exponential's ln(100) x the mean wait that the screening heuristic takes.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.ext.die_solvers import open_scenario, scenario_for
from models.catalog import parameter
from sim.analytic import evaluate, heuristic_quantile_us
from sim.des.engine import simulate

TOLERANCE = 0.15
"""The fast path's p99 against the DES p99, beyond the DES's 95% interval (the fast path's target)."""
DIMM = ("dimms", "eXFlash-400GB")
DRIVE = ("drives", "ES5F")


CASES = [
    # (device, closed queue depth or open share of Xmax, read fraction): the DES p99 (us, 40,000 I/Os, seed 1) and
    # the heuristic's: a saturated loop of reads (1,934; heuristic 7,918), reads behind programs at a
    # shallow and at a deep depth (612 / 4,469; heuristic 324 / 7,583), a pooled drive's mix and writes, open 67/33
    pytest.param(DIMM, 256, 1.0, id="dimm-reads-qd256"),
    pytest.param(DIMM, 4, 0.67, id="dimm-67-qd4"),
    pytest.param(DIMM, 128, 0.67, id="dimm-67-qd128"),
    pytest.param(DRIVE, 16, 0.67, id="drive-67-qd16"),
    pytest.param(DRIVE, 64, 0.0, id="drive-writes-qd64"),
    pytest.param(DIMM, 0.6, 0.67, id="dimm-67-open60"),
]


@pytest.mark.parametrize(("device", "load", "read_fraction"), CASES)
def test_pooled_p99_matches_the_des(device: tuple[str, str], load: float, read_fraction: float) -> None:
    """The pooled law's p99 within 15% of the DES's (beyond its 95% interval, 20,000 I/Os), p99.9 above it."""
    section, name = device
    if load >= 1:
        scenario = scenario_for(section, name, int(load), 20_000, read_fraction=read_fraction, device_model="pooled")
    else:
        scenario = open_scenario(section, name, load, read_fraction, 20_000, device_model="pooled")
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.tail_method == "pooled" and fast.tails_from_mechanism
    assert fast.latency_p99_us is not None and fast.latency_p999_us is not None
    lo, hi = des.latency_p99_us.ci95
    assert (1 - TOLERANCE) * lo <= fast.latency_p99_us <= (1 + TOLERANCE) * hi
    assert fast.latency_p99_us < fast.latency_p999_us


def test_a_saturated_loop_is_tight_and_reads_behind_programs_are_long() -> None:
    """The two ways the screening heuristic (an exponential wait on the mean) misses a pooled DIMM: a saturated
    loop of reads waits a near-constant time (the law's p99 under 1.15 x the mean, the heuristic's above 4x), and
    a read that meets a program waits out its rest (67/33 at QD 1: the law's p99 over twice the heuristic's)."""
    deep = evaluate(scenario_for(*DIMM, 256, 20_000, device_model="pooled"))
    assert deep.latency_p99_us is not None and deep.latency_p99_us < 1.15 * deep.latency_mean_us
    assert heuristic_quantile_us(deep, 0.99) > 4 * deep.latency_mean_us
    mixed = evaluate(scenario_for(*DIMM, 1, 20_000, read_fraction=0.67, device_model="pooled"))
    assert mixed.latency_p99_us is not None and mixed.latency_p99_us > 2 * heuristic_quantile_us(mixed, 0.99)


@settings(max_examples=12, deadline=None)
@given(qd=st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256]), read_fraction=st.sampled_from([0.0, 0.67, 1.0]))
def test_pooled_tails_are_ordered_and_reduce_to_the_service_law(qd: int, read_fraction: float) -> None:
    """mean < p99 < p99.9 at every depth and mix; a read loop at QD 1 waits for nothing, so its p99 is the
    zero-load latency times the service law's lognormal q99 (parameters.yaml ``device_behaviour.service_cv``)."""
    fast = evaluate(scenario_for(*DIMM, qd, 20_000, read_fraction=read_fraction, device_model="pooled"))
    assert fast.latency_p99_us is not None and fast.latency_p999_us is not None
    assert fast.latency_mean_us < fast.latency_p99_us < fast.latency_p999_us
    if qd == 1 and read_fraction == 1.0:
        cv = float(parameter("device_behaviour.service_cv"))
        sigma = math.sqrt(math.log1p(cv * cv))
        q99 = math.exp(-sigma * sigma / 2 + 2.3263478740408408 * sigma)
        assert fast.latency_p99_us == pytest.approx(fast.bounds.r_min_us * q99, rel=2e-3)


def test_the_default_gives_the_dimm_its_pooled_law() -> None:
    """Under the default (``auto``) the eXFlash DIMM is pooled, and its p99.9 is offered (a mechanism's)."""
    scenario = scenario_for(*DIMM, 32, 20_000, device_model="auto")
    fast = evaluate(scenario)
    assert fast.tail_method == "pooled" and fast.latency_p999_us is not None and math.isfinite(fast.latency_p999_us)
