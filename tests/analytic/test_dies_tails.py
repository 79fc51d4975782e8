"""The fast path's own p99 / p99.9 (``FastResult.latency_p99_us``): the die-level mechanism under
``device_model: dies``, the pooled devices' own law under ``pooled`` (tests/analytic/test_pooled_tails.py), the named
heuristic where neither applies; the planner screens with it.

Theory: the die wait's distribution against the M/D/1 waiting time (Erlang's formula). The DES: planner
candidates (examples/plan/ibmi_oltp.yaml, IBM i mirrored, OLTP 4 KiB 70/30, open arrivals) under ``dies``
with small budgets; the planner benchmark's own table is ``python -m bench.planner --device-model dies``.
"""

from __future__ import annotations

import json
import math
from statistics import NormalDist
from typing import Any

import pytest

from models.catalog import parameter
from models.requirements import load_requirements
from models.scenario import Scenario
from sim.analytic import evaluate, heuristic_quantile_us
from sim.analytic.dies import die_wait_above
from sim.des.engine import simulate
from sim.plan.candidate import Candidate
from sim.plan.planner import _screen, enumerate_candidates, p99_estimate_us
from tests.conftest import ROOT

REQUIREMENTS = ROOT / "examples" / "plan" / "ibmi_oltp.yaml"
WINNER = "8 x ES5D, 1 ns/drive, ibmi_mirror, 1 x EJ1Y"
"""The planner benchmark's winner under ``dies`` (its pooled winner, 4 x ES5F, misses the SLO there)."""
TOLERANCE = 0.15


def md1_wait_below(t: float, lam: float, d: float) -> float:
    """P(W <= t) of an M/D/1 queue (Erlang): (1 - rho) sum_{k <= t/d} (lam (k d - t))^k / k! e^{-lam (k d - t)}."""
    rho = lam * d
    return (1 - rho) * sum((lam * (k * d - t)) ** k / math.factorial(k) * math.exp(-lam * (k * d - t))
                           for k in range(int(t / d) + 1))


@pytest.mark.parametrize("rho", [0.3, 0.6])
def test_die_wait_is_the_md1_wait(rho: float) -> None:
    """Reads alone at a die (deterministic tR, Poisson arrivals) with the M/D/1 mean wait: the grid solution of
    Benes' equation gives Erlang's M/D/1 waiting-time distribution (within 0.005 absolute, 2 to 4 tR)."""
    d = 60.0
    lam = rho / d
    mean = rho * d / (2 * (1 - rho))
    step, above = die_wait_above([(1.0, d)], mean)
    assert above[0] == pytest.approx(rho)  # P(W > 0) = rho
    assert (sum(above) - above[0] / 2) * step == pytest.approx(mean, rel=0.03)  # trapezoids
    for t in (0.5 * d, 1.5 * d, 2.5 * d, 4.0 * d):
        n = round(t / step)
        assert above[n] == pytest.approx(1 - md1_wait_below(n * step, lam, d), abs=0.005)


def _candidates() -> dict[str, Candidate]:
    req = load_requirements(REQUIREMENTS)
    return {c.label: c for c in enumerate_candidates(req)[0]}


def _under_dies(scenario: Scenario, rate: float | None = None, max_ios: int | None = None, model: str = "dies") -> Scenario:
    data: dict[str, Any] = scenario.model_dump(mode="json", exclude_none=True)
    data["device_model"] = model
    if rate is not None:
        data["workload"]["rate_iops"] = rate
    if max_ios is not None:
        data["run"] = {**data["run"], "max_ios": max_ios, "warmup_ios": max_ios // 10}
    return Scenario.model_validate(data)


@pytest.mark.parametrize(("label", "rate"), [(WINNER, None), (WINNER, 300_000), ("4 x ES5F, 2 ns/drive, ibmi_mirror, 1 x EJ1X", 300_000)])
def test_fast_p99_matches_the_des_on_planner_candidates(label: str, rate: float | None) -> None:
    """Open 70/30 arrivals on mirrored drives under ``dies`` (reads wait behind programs at their die): the fast
    path's p99 within 15% of the DES p99 beyond the DES's 95% interval (30,000 I/Os); the heuristic, which has no
    programs in it, is far below (the reason for the die-level estimate)."""
    scenario = _under_dies(_candidates()[label].scenario, rate, 30_000)
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.tail_method == "dies" and fast.latency_p99_us is not None and fast.latency_p999_us is not None
    lo, hi = des.latency_p99_us.ci95
    assert (1 - TOLERANCE) * lo <= fast.latency_p99_us <= (1 + TOLERANCE) * hi
    assert fast.latency_mean_us < fast.latency_p99_us < fast.latency_p999_us
    assert heuristic_quantile_us(fast, 0.99) < (1 - TOLERANCE) * lo


def test_the_planner_screens_with_the_die_level_p99() -> None:
    """A p99 SLO between the heuristic's figure and the die-level one: under ``dies`` the screen rejects the
    candidate with the die-level p99 in its reason; the same candidate under ``pooled`` is judged by the pooled
    devices' own law (``TAIL_METHODS``: ``pooled``), named as such on its result."""
    req = load_requirements(REQUIREMENTS)
    cands = _candidates()
    pooled = Candidate(label=WINNER, scenario=_under_dies(cands[WINNER].scenario, model="pooled"), capex=cands[WINNER].capex)
    dies = Candidate(label=pooled.label, scenario=_under_dies(pooled.scenario), capex=pooled.capex)
    fast = evaluate(dies.scenario)
    assert fast.latency_p99_us is not None and fast.tail_method == "dies"
    heuristic = heuristic_quantile_us(fast, 0.99)
    slo = 0.5 * (heuristic + fast.latency_p99_us) / 1.25  # the screen's slack: rejected at p99 > SLO x 1.25
    assert heuristic < slo * 1.25 < fast.latency_p99_us
    strict = req.model_copy(update={"latency_slo": req.latency_slo.model_copy(update={"us": slo})})
    _screen(dies, strict)
    assert dies.p99_estimate_us == fast.latency_p99_us == p99_estimate_us(fast)
    assert dies.stage == "latency" and f"estimated p99 {fast.latency_p99_us:,.0f} us" in str(dies.rejection)
    pooled_fast = evaluate(pooled.scenario)
    assert pooled_fast.tail_method == "pooled" and pooled_fast.latency_p99_us is not None
    assert p99_estimate_us(pooled_fast) == pooled_fast.latency_p99_us


def test_bursty_arrivals_keep_the_planners_heuristic() -> None:
    """Bursty arrivals on pooled drives (no law of their own): the p99 is the planner's formula as it was, r_min x
    the service law's q99 + (mean - r_min) ln 100."""
    data: dict[str, Any] = _under_dies(_candidates()[WINNER].scenario, model="pooled").model_dump(mode="json", exclude_none=True)
    rate = data["workload"]["rate_iops"]
    # on 10% of the time at twice the rate, off at 8/9 of it: the same mean rate
    data["workload"] = {**{k: v for k, v in data["workload"].items() if k != "rate_iops"}, "kind": "bursty",
                        "on_rate_iops": 2.0 * rate, "off_rate_iops": rate * 8.0 / 9.0, "mean_on_ms": 10.0, "mean_off_ms": 90.0}
    fast = evaluate(Scenario.model_validate(data))
    assert fast.tail_method == "heuristic" and math.isfinite(fast.latency_mean_us)
    cv = float(parameter("device_behaviour.service_cv"))
    sigma = math.sqrt(math.log1p(cv * cv))
    q99 = math.exp(-sigma * sigma / 2 + 2.3263478740408408 * sigma)
    r_min = fast.bounds.r_min_us
    expected = r_min * q99 + max(0.0, fast.latency_mean_us - r_min) * math.log(100.0)
    assert fast.latency_p99_us == pytest.approx(expected, rel=1e-12)
    assert fast.latency_p999_us is not None and fast.latency_p999_us > fast.latency_p99_us


def test_tails_are_strict_json_and_infinite_when_overloaded() -> None:
    """Above the path's capacity the tails are infinite (the screen rejects), and the summary writes them as null."""
    over = evaluate(_under_dies(_candidates()[WINNER].scenario, rate=5_000_000))
    assert not over.stable and over.latency_p99_us == math.inf and over.tail_method == "dies"
    doc = json.loads(json.dumps(over.summary(), allow_nan=False))
    assert doc["latency_p99_us"] is None and doc["latency_p999_us"] is None and doc["tail_method"] == "dies"
    ok = evaluate(_under_dies(_candidates()[WINNER].scenario))
    doc = json.loads(json.dumps(ok.summary(), allow_nan=False))
    assert doc["latency_p99_us"] == ok.latency_p99_us and doc["latency_p999_us"] == ok.latency_p999_us


def test_planner_benchmark_under_dies_screens_with_the_die_level_p99() -> None:
    """``python -m bench.planner --device-model dies`` (one finalist): every candidate is planned under dies, the
    winner's p99 estimate is the die-level one and lies within 15% of its DES p99 beyond the DES's 95% interval."""
    from bench.planner import measure

    m = measure(quick=True, device_model="dies")
    assert m["device_model"] == "dies"
    (winner,) = [r for r in m["tails"] if r["label"] == m["winner"]]
    assert winner["tail_method"] == "dies" and winner["verified"]
    lo, hi = winner["des_p99_ci95"]
    assert (1 - TOLERANCE) * lo <= winner["fast_p99_us"] <= (1 + TOLERANCE) * hi
    assert json.loads(json.dumps(m, allow_nan=False)) == m


def test_a_mixed_queue_depth_sweep_has_die_level_tails_near_the_des() -> None:
    """A closed 70/30 sweep of one drive under dies (reads wait behind programs at their die): the fast sweep's
    p99 and p99.9 are the die-level estimate, the p99 within 15% of the DES's beyond its 95% interval at QD16."""
    from sim.plan.qd_sweep import qd_sweep

    (fast,) = qd_sweep("ES5F", [16], read_fraction=0.7, device_model="dies")
    (des,) = qd_sweep("ES5F", [16], solver="des", read_fraction=0.7, device_model="dies", max_ios=20_000)
    assert fast.latency_p99_us is not None and fast.latency_p999_us is not None and des.latency_p99_us is not None
    assert fast.latency_mean_us < fast.latency_p99_us < fast.latency_p999_us
    lo, hi = des.ci95["latency_p99_us"]
    assert (1 - TOLERANCE) * lo <= fast.latency_p99_us <= (1 + TOLERANCE) * hi


# -- writes: the acknowledgement's lognormal and a closed loop's finite-source wait --------------


def _repairman(n_jobs: int, z: float, m: float) -> tuple[float, list[float]]:
    """The machine repairman M/M/1//N by exact MVA: the mean time at the queue R(N) and the arrival law pi_{N-1}(n)
    (the time-average queue length law with N - 1 jobs, a birth-death chain: p(n + 1) / p(n) = (N - 1 - n) m / z)."""
    q = 0.0
    r = m
    for k in range(1, n_jobs + 1):
        r = m * (1 + q)
        q = k * r / (z + r)
    p = [1.0]
    for n in range(n_jobs - 1):
        p.append(p[-1] * (n_jobs - 1 - n) * m / z)
    total = sum(p)
    return r, [v / total for v in p]


@pytest.mark.parametrize(("n_jobs", "z", "m"), [(20, 29.0, 9.0), (8, 100.0, 20.0), (64, 10.0, 4.0)])
def test_write_wait_is_the_machine_repairmans(n_jobs: int, z: float, m: float) -> None:
    """Theory: fed the exact mean of an M/M/1//N (MVA), ``finite_source_wait`` recovers the stage mean m and the
    arrival law; its tail is the repairman's closed form sum_n pi(n) P(Erlang(n + 1, m) > t) (within 1e-3)."""
    from scipy.stats import gamma

    from sim.analytic.dies import erlang_mixture_above, finite_source_wait

    r, pi = _repairman(n_jobs, z, m)
    m_fit, first, probs = finite_source_wait(n_jobs, z, r)
    assert m_fit == pytest.approx(m, rel=1e-6)
    for i, p in enumerate(probs):
        assert p == pytest.approx(pi[first + i], abs=1e-9)
    step, above = erlang_mixture_above(m_fit, first, probs)
    for k in (1, len(above) // 8, len(above) // 4, len(above) // 2):
        t = k * step
        exact = sum(p * gamma.sf(t, n + 1, scale=m) for n, p in enumerate(pi))
        assert above[k] == pytest.approx(exact, abs=1e-3)
    assert (sum(above) - above[0] / 2) * step == pytest.approx(r, rel=0.01)  # the mean, by trapezoids


def test_write_wait_tends_to_the_open_exponential() -> None:
    """The open limit: N jobs with N m / Z = rho fixed, N large: pi is geometric (ratio rho) and the wait is the
    M/M/1's exponential of mean m / (1 - rho), the law an open route's writes take."""
    from sim.analytic.dies import WriteLaw

    m, rho, n_jobs = 1.0, 0.7, 4000
    w = m / (1 - rho)
    closed = WriteLaw(zero_us=10.0, mean_us=10.0 + w, population=n_jobs, cycle_us=n_jobs * m / rho + w)
    step, above = closed.wait_table()
    for t in (0.5 * w, 2.0 * w, 5.0 * w):
        k = round(t / step)
        assert above[k] == pytest.approx(math.exp(-k * step / w), abs=0.01)
    opened = WriteLaw(zero_us=10.0, mean_us=10.0 + w)
    step_o, above_o = opened.wait_table()
    assert above_o[round(2.0 * w / step_o)] == pytest.approx(math.exp(-2.0), abs=0.01)


def test_a_saturated_closed_write_loop_has_a_tight_wait() -> None:
    """A loop that saturates its device keeps about N - 1 - X Z writes queued: the wait is an Erlang of many stages,
    its p99 far below the exponential's of the same mean (mean + 1.3 sd of that many stages, not 4.6 means)."""
    from sim.analytic.dies import WriteLaw, route_quantiles_us

    law = WriteLaw(zero_us=29.4, mean_us=179.4, population=20, cycle_us=179.4)
    (p99,) = route_quantiles_us((0.99,), 0.0, 0.0, [], law)
    expo = WriteLaw(zero_us=29.4, mean_us=179.4)
    (p99_open,) = route_quantiles_us((0.99,), 0.0, 0.0, [], expo)
    assert 179.4 < p99 < 179.4 + 3.0 * 150.0 / math.sqrt(10)
    assert p99_open == pytest.approx(29.4 + 150.0 * math.log(100.0), rel=2e-3)


def test_the_write_acknowledgement_is_lognormal() -> None:
    """An unloaded write is its fixed part plus the cache's acknowledgement, a lognormal of the device law's cv (the
    DES's ``write_ack`` delay): its quantiles are the lognormal's, shifted."""
    from sim.analytic.dies import WriteLaw, route_quantiles_us

    cv = 0.3
    law = WriteLaw(zero_us=16.0, mean_us=16.0, ack_us=15.0, ack_cv=cv)
    p99, p999 = route_quantiles_us((0.99, 0.999), 0.0, 0.0, [], law)
    sigma = math.sqrt(math.log1p(cv * cv))
    for q, got in ((0.99, p99), (0.999, p999)):
        expected = 1.0 + 15.0 * math.exp(-sigma * sigma / 2 + sigma * NormalDist().inv_cdf(q))
        assert got == pytest.approx(expected, rel=2e-3)


def _drive_loop(name: str, qd: int, read_fraction: float, max_ios: int = 20_000) -> Scenario:
    from calibration.ext.die_solvers import scenario_for

    return scenario_for("dimms" if name.startswith("eXFlash") else "drives", name, qd, max_ios, read_fraction=read_fraction)


@pytest.mark.parametrize(("name", "qd"), [("ES5F", 1), ("ES4G", 16), ("ES5F", 16), ("ES5F", 64), ("P4510-4TB", 16),
                                         ("P4510-4TB", 64), ("eXFlash-400GB", 16)])
def test_closed_write_loops_p99_near_the_des(name: str, qd: int) -> None:
    """4 KiB random writes in a closed loop on one drive under dies (calibration/ext/die_solvers_writes.md): the
    fast p99 within 15% of the DES's (unloaded: the lognormal acknowledgement; saturated: the finite-source wait;
    the departures of busy dies; before, the exponential wait was +113% at ES5F QD16, +240% at eXFlash QD16 and the
    unloaded p99 -44..-47%)."""
    sc = _drive_loop(name, qd, 0.0)
    fast = evaluate(sc)
    des = simulate(sc)
    assert fast.tail_method == "dies"
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)


@pytest.mark.parametrize("path", ["examples/s4_zvm_edev_aliases.yaml", "calibration/scenarios/s4_minidisk.yaml"])
def test_s4_zvm_writes_p99_near_the_des(path: str) -> None:
    """S4 z/VM under dies, 20 CMS guests writing to one P4510: with 11 aliases the drive is saturated (the wait's
    stages are departures of its busy dies; 647 us against the DES's 262 with the exponential wait), with none the
    one subchannel binds (its SSCHs are the stages; 3112 us against 772). The fast p99 within 15% of the DES's."""
    from models import load_scenario

    sc = _under_dies(load_scenario(ROOT / path), max_ios=20_000)
    fast = evaluate(sc)
    des = simulate(sc)
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)


def test_a_qd1_mix_read_meets_the_loops_own_programs() -> None:
    """QD1 67/33 on one ES5F under dies: writes are acknowledged from the cache, so the loop's own program can still
    run on the die the next read lands on: the read's wait is that program's residual (busy = the dies' program
    load), with no read residual mixed in (a QD1 read has no other read ahead). The p99 within 15% of the DES's
    (-27% when the read load's residual diluted the program's)."""
    from sim.analytic.dies import DieWaitLaw

    sc = _drive_loop("ES5F", 1, 0.67)
    fast = evaluate(sc)
    des = simulate(sc)
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)
    # the law itself: a program residual only, met with the program load's chance, its mean the fast path's
    law = DieWaitLaw(share=1.0, mean_wait_us=0.02 * 700.0 * 1.09 / 2, read_us=67.5, read_cv=0.1, read_load=0.0,
                     program_load=0.02, program_us=700.0, program_cv=0.3, busy=0.02)
    step, above = law.wait_table()
    assert above[0] == pytest.approx(0.02)
    parts = law.residuals()
    assert all(length > 300.0 for _, length in parts)  # programs only
    k = round(350.0 / step)
    expected = 0.02 * sum(w * max(0.0, 1.0 - k * step / length) for w, length in parts)
    assert above[k] == pytest.approx(expected, abs=1e-3)


def test_departures_of_busy_dies_tighten_the_write_wait() -> None:
    """The stages of a saturated loop's write wait are departures of c busy dies (``departure_variance``): a window of
    K << c departures is Poisson (variance K: the Erlang), K = c departures of deterministic programs come from each
    die once (variance about 0), with programs of cv 0.3 about c cv^2; checked against a simulation of c stationary
    renewal processes (lognormal programs)."""
    import random

    from sim.analytic.dies import departure_variance

    assert departure_variance(2.0, 1000, 0.3) == pytest.approx(2.0, rel=0.01)
    assert departure_variance(56.0, 56, 0.0) == pytest.approx(0.0, abs=1e-6)
    assert departure_variance(56.0, 56, 0.3) == pytest.approx(56 * 0.09, rel=0.25)
    rng = random.Random(7)
    c, cv, window = 24, 0.3, 15.0  # in stages: each die's period is c stages
    sigma = math.sqrt(math.log1p(cv * cv))
    counts = []
    for _ in range(4000):
        total = 0
        for _ in range(c):
            first = rng.uniform(0.0, c)  # the tight law's residual, as in the formula
            t = first
            while t <= window:
                total += 1
                t += c * rng.lognormvariate(-sigma * sigma / 2, sigma)
        counts.append(total)
    mean = sum(counts) / len(counts)
    var = sum((x - mean) ** 2 for x in counts) / (len(counts) - 1)
    assert mean == pytest.approx(window, rel=0.02)
    assert departure_variance(window, c, cv) == pytest.approx(var, rel=0.1)


@pytest.mark.parametrize("shape", [0.7, 1.0, 3.5, 9.0, 40.0, 400.0])
def test_the_gamma_tail_helper_is_the_gamma_law(shape: float) -> None:
    """``_gamma_above`` (series / continued fraction below shape 8, Wilson-Hilferty above) against scipy's gamma law."""
    from scipy.stats import gamma

    from sim.analytic.dies import _gamma_above

    for q in (0.1, 0.5, 0.9, 0.99, 0.999):
        x = float(gamma.ppf(q, shape))
        assert _gamma_above(shape, x) == pytest.approx(1 - q, abs=2e-4, rel=0.03)


def test_a_read_waits_out_at_most_one_program() -> None:
    """The write point starts a program only on an idle die, so a read finds at most the one program in service ahead
    of it (``one_program_wait_above``): with no reads queued (QD1) the wait is busy x the program's exact equilibrium
    residual tail E[(S - x)+] / E[S] (checked by quadrature of the lognormal), and with reads queued the table's mean
    is the fast path's mean wait."""
    from sim.analytic.dies import _residual_above, _table_above, one_program_wait_above

    t_prog, cv, busy = 700.0, 0.3, 0.02
    mean = busy * t_prog * (1 + cv * cv) / 2
    step, above = one_program_wait_above(0.0, 67.5, 0.1, busy, t_prog, cv, mean, busy)
    sigma = math.sqrt(math.log1p(cv * cv))
    mu = math.log(t_prog) - sigma * sigma / 2
    normal = NormalDist()
    points = [math.exp(mu + sigma * normal.inv_cdf((i + 0.5) / 4000)) for i in range(4000)]
    for x in (100.0, 400.0, 900.0):
        exact = sum(max(0.0, s - x) for s in points) / len(points) / t_prog
        assert _residual_above(t_prog, cv, x) == pytest.approx(exact, abs=2e-3)
        assert _table_above((step, above), x) == pytest.approx(busy * exact, abs=busy * 3e-3)
    # a deep loop: reads queued behind the program; the grid's mean (trapezoids) is the mean wait it was given
    w = 300.0
    step, above = one_program_wait_above(0.2, 64.0, 0.1, 0.75, 502.0, cv, w, 0.95)
    assert (sum(above) - above[0] / 2) * step == pytest.approx(w, rel=0.01)


@pytest.mark.parametrize(("name", "qd"), [("P4510-4TB", 64), ("eXFlash-400GB", 16)])
def test_deep_mixes_p99_near_the_des(name: str, qd: int) -> None:
    """67/33 closed loops deep enough that the dies are mostly programming: the read waits out one program at most
    (the write point), then the reads queued ahead; the fast p99 within 15% of the DES's (+28% and +23% when the wait
    was a geometric sum of program residuals)."""
    sc = _drive_loop(name, qd, 0.67)
    fast = evaluate(sc)
    des = simulate(sc)
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)


@pytest.mark.parametrize(("devices", "n_jobs", "a"), [(2, 12, 0.8), (8, 96, 0.5), (8, 96, 3.0), (4, 30, 0.05)])
def test_write_wait_over_devices_is_the_product_forms(devices: int, n_jobs: int, a: float) -> None:
    """Theory: the arrival law at one of D identical queues (``_product_form_probs``) has the mean queue length that
    exact MVA gives the same closed network (D single-server queues of demand a, a delay of demand 1) at N - 1 jobs,
    and sums to 1; with D = 1 it is the machine repairman's."""
    from sim.analytic.dies import _finite_source_probs, _product_form_probs

    q = [0.0] * devices
    for k in range(1, n_jobs):
        r = [a * (1 + qi) for qi in q]
        x = k / (1.0 + sum(r))
        q = [x * ri for ri in r]
    first, probs = _product_form_probs(n_jobs - 1, a, devices)
    assert sum(probs) == pytest.approx(1.0, abs=1e-9)
    assert sum(p * (first + i) for i, p in enumerate(probs)) == pytest.approx(q[0], rel=1e-4, abs=1e-6)
    f1, p1 = _product_form_probs(n_jobs - 1, a, 1)
    f2, p2 = _finite_source_probs(n_jobs - 1, a)
    assert f1 == f2 and p1 == pytest.approx(p2, abs=1e-9)


def test_gathered_writes_wait_at_one_device() -> None:
    """``WriteLaw.gather`` p: a write waits with chance p (it visits the one device whose cache is full), then for
    that device's queue; the table's mean is still the fast path's mean wait, and the p99 lies far above the
    spread law's (every device its own queue)."""
    from sim.analytic.dies import WriteLaw

    w = 62.5
    base = dict(zero_us=23.3, mean_us=23.3 + w, population=96, cycle_us=85.7, servers=192, program_cv=0.3, devices=8,
                visits=0.25, copies=2)
    gathered = WriteLaw(**base, gather=0.25)
    step, above = gathered.wait_table()
    assert above[0] == pytest.approx(0.25)
    assert (sum(above) - above[0] / 2) * step == pytest.approx(w, rel=0.02)
    # given a wait, it is for the whole loop's waiting writes (about X w of them) at one device: tight around w / p
    hit = [a / 0.25 for a in above]
    below = next(k for k, a in enumerate(hit) if a < 0.95) * step
    beyond = next(k for k, a in enumerate(hit) if a < 0.05) * step
    assert 0.7 * w / 0.25 < below < w / 0.25 < beyond < 1.3 * w / 0.25
    spread = WriteLaw(**base)
    at = 23.3 + 1.1 * w / 0.25
    assert gathered.above(at, gathered.wait_table()) > 10 * spread.above(at, spread.wait_table())


@pytest.mark.parametrize("case", ["8 mirrored", "4 RAID-0", "2 mirrored"])
def test_saturated_write_loops_over_several_drives_p99_within_15_percent_of_the_des(case: str) -> None:
    """examples/s2_ibmi_8x4_mirrored.yaml under dies and two layouts of it (closed write loops that saturate their
    ES5F dies, ``calibration.ext.write_loops``): the waiting writes gather at the drive whose cache is full
    (``WriteLaw.gather``). Measured at 150,000 I/Os (calibration/ext/die_solvers_writes.md, "Gathered waits"): fast
    p99 327 / 334 / 408 us against the DES's 310 / 321 / 396 (+3..+6%); with each drive its own queue (the product
    form, before) 208 (-33%), 232 (-28%) and 543 (+37%). Here 20,000 I/Os."""
    from calibration.ext.write_loops import scenario

    sc = scenario(case, 20_000)
    fast = evaluate(sc)
    des = simulate(sc)
    assert fast.tail_method == "dies"
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)


@pytest.mark.parametrize(("device", "read_fraction"), [("ES5F", 0.05), ("P4510-4TB", 0.3), ("CM6-R-1.92TB", 0.05)])
def test_a_closed_mix_whose_programs_saturate_the_dies_queues_its_writes_not_its_reads(device: str, read_fraction: float) -> None:
    """A closed 4 KiB mix at QD64 whose programs fill the dies (``sim.analytic.demands.queue_of``,
    ``calibration.ext.saturated_mixes``): in the DES reads go first at
    their die and the programs wait for an idle die holding their cache slots, so the cache fills and the writes wait
    for slots. The loop's queue belongs to the writes. Before (the queue spread over the dies' visitors, the reads),
    the fast path put the reads at +1,035% / +286% / +1,804% of the DES and the writes at -93% / -96% / -96%; after,
    within 2.5% (calibration/ext/DIE_LEVEL.md, "A closed mix whose programs saturate the dies"). DES 20,000 I/Os."""
    from sim.plan.qd_sweep import des_run, device_scenario

    sc = device_scenario(device, 64, read_fraction, 4, des_run(20_000, 0.001), "dies")
    fast, des = evaluate(sc), simulate(sc)
    assert des.utilization["drive0.dies"] > 0.99  # the programs fill the dies
    assert fast.read_latency_mean_us == pytest.approx(des.read_latency_mean_us.value, rel=0.10)
    assert fast.write_latency_mean_us == pytest.approx(des.write_latency_mean_us.value, rel=0.10)
    assert fast.latency_p99_us is not None and des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=TOLERANCE)
