"""Growth queries: the load multiplier at which a p99 SLO breaks, and the date.

Theory: the response time of an M/M/1 queue is exponential with rate mu - lambda, so its p99 is
ln(100) / (mu - lambda) and the SLO breaks at lambda* = mu - ln(100) / SLO.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pytest

from models.scenario import scenario_from_data
from sim.cli.flashplan import main
from sim.plan.growth import breaking_point, fast_breaking_factor, scaled
from tests.conftest import EXAMPLES

S_US = 10.0
MU = 1e6 / S_US
BASE = 50_000.0


def mm1(rate: float = BASE, **run: Any) -> Any:
    return scenario_from_data({
        "name": "M/M/1",
        "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                      "distribution": "exponential"}]},
        "workload": {"kind": "open", "rate_iops": rate, "read_fraction": 1.0},
        "run": {"seed": 2, **run},
    })


def analytic_factor(slo_us: float) -> float:
    """lambda* / lambda_0 with lambda* = mu - ln(100) / SLO."""
    return (MU - math.log(100) / (slo_us * 1e-6)) / BASE


def exact_mm1_p99_us(scenario: Any) -> float:
    """The M/M/1 p99 of the response time, ln(100) / (mu - lambda), infinite at or past mu."""
    rate = scenario.workload.rate_iops
    return math.log(100) / (MU - rate) * 1e6 if rate < MU else math.inf


@pytest.mark.parametrize("slo_us", [60.0, 300.0, 1_000.0, 5_000.0])
def test_bisection_finds_the_mm1_breaking_point(slo_us: float) -> None:
    """The search itself, on the exact p99: to its 0.1% bracket (also below today's load: SLO 60 us)."""
    g = fast_breaking_factor(mm1(), slo_us, p99_of=exact_mm1_p99_us)
    assert g.factor is not None
    assert analytic_factor(slo_us) / (1 + 1e-3) <= g.factor <= analytic_factor(slo_us)


@pytest.mark.parametrize("slo_us", [300.0, 1_000.0, 5_000.0])
def test_fast_path_estimate_near_the_mm1_breaking_point(slo_us: float) -> None:
    """With the planner's p99 heuristic (service part from the device law's lognormal tail, not the
    exponential's): close, not exact; the DES check below closes the gap."""
    g = fast_breaking_factor(mm1(), slo_us)
    assert g.factor == pytest.approx(analytic_factor(slo_us), rel=0.02)


def test_des_verifies_the_breaking_point() -> None:
    """At rho ~0.85 (SLO 300 us) a 150,000-I/O run is ~1,000 relaxation times long: the DES p99 is
    trustworthy there (at rho 0.95 such a short run reads the tail low; use the default run settings)."""
    slo = 300.0
    growth = breaking_point(mm1(max_ios=150_000, warmup_ios=5_000), slo, des_steps=3)
    assert growth.des, "the DES ran at the fast-path breaking point"
    assert growth.des[0].factor == growth.factor
    best = growth.best_factor
    assert best is not None and best == pytest.approx(analytic_factor(slo), rel=0.02)
    # the DES p99 at the DES answer brackets the SLO: below it at the low end, above at the high end
    for check in growth.des:
        theory = math.log(100) / (MU - BASE * check.factor) * 1e6 if BASE * check.factor < MU else math.inf
        assert check.p99.value == pytest.approx(theory, rel=0.15) or check.validity == "unstable"


def test_years_and_date() -> None:
    growth = fast_breaking_factor(mm1(), 1_000.0)
    g = growth.factor
    assert g is not None
    assert growth.years(0.25) == pytest.approx(math.log(g) / math.log(1.25))
    start = dt.date(2026, 11, 25)
    assert growth.breaks_on(0.25, start) == start + dt.timedelta(days=math.log(g) / math.log(1.25) * 365.25)


def test_slo_already_broken_and_never_broken() -> None:
    broken = fast_breaking_factor(mm1(), 50.0)  # today: p99 ~ 65 us estimated
    assert broken.factor is not None and broken.factor < 1
    never = fast_breaking_factor(mm1(rate=1_000), 1e9, max_factor=10)
    assert never.factor is None and "holds up to 10" in never.note


def test_scaling_a_closed_workload_adds_jobs() -> None:
    closed = scenario_from_data({**mm1().model_dump(mode="json"), "workload": {"kind": "closed", "jobs": 4, "queue_depth": 2}})
    assert scaled(closed, 2.6).workload.jobs == 10  # type: ignore[union-attr]
    assert scaled(closed, 0.01).workload.jobs == 1  # type: ignore[union-attr]


def test_a_consolidation_grows_every_workload_by_the_same_factor() -> None:
    base = scenario_from_data({**mm1().model_dump(mode="json", exclude={"workload"}), "workloads": [
        {"name": "oltp", "kind": "open", "rate_iops": 2_000},
        {"name": "batch", "kind": "closed", "jobs": 4, "queue_depth": 1}]})
    grown = scaled(base, 2.5)
    assert [w.name for w in grown.workloads or []] == ["oltp", "batch"]
    assert grown.workloads[0].rate_iops == pytest.approx(5_000)  # type: ignore[index, union-attr]
    assert grown.workloads[1].jobs == 10  # type: ignore[index, union-attr]
    # two open classes on one M/M/1 break where one class with their summed rate breaks
    one = scenario_from_data({**mm1().model_dump(mode="json"), "workload": {"kind": "open", "rate_iops": BASE}})
    two = scenario_from_data({**mm1().model_dump(mode="json", exclude={"workload"}), "workloads": [
        {"name": "a", "kind": "open", "rate_iops": BASE / 4}, {"name": "b", "kind": "open", "rate_iops": 3 * BASE / 4}]})
    assert fast_breaking_factor(two, 1_000.0).factor == pytest.approx(fast_breaking_factor(one, 1_000.0).factor, rel=1e-2)


def test_growth_of_a_profile_uses_its_worst_interval() -> None:
    data = mm1().model_dump(mode="json")
    data["workload"] = {"kind": "profile", "read_fraction": 1.0,
                        "intervals": [{"duration_s": 1, "rate_iops": 10_000}, {"duration_s": 1, "rate_iops": BASE}]}
    g = fast_breaking_factor(scenario_from_data(data), 1_000.0)
    assert g.factor == fast_breaking_factor(mm1(), 1_000.0).factor  # the busier interval decides


def test_growth_cli(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["growth", str(EXAMPLES / "mm1.yaml"), "--slo-p99-us", "1000", "--rate-per-year", "0.25", "--start", "2026-11-25",
                 "--set", "workload.rate_iops=50000", "--no-verify", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["breaking_factor"] == pytest.approx(analytic_factor(1_000.0), rel=0.02)
    assert doc["breaks_on"].startswith("2029-")
    code = main(["growth", str(EXAMPLES / "mm1.yaml"), "--slo-p99-us", "1000", "--no-verify"])
    out = capsys.readouterr().out
    assert code == 0 and "fast path: the SLO breaks at x" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--slo-p99-us", "0"], "--slo-p99-us: must be a number > 0, got 0"),
    (["--slo-p99-us", "100", "--rate-per-year", "-1"], "--rate-per-year: must be > 0"),
    (["--slo-p99-us", "100", "--rate-per-year", "0.2", "--start", "25.11.2026"], "--start: not a date YYYY-MM-DD"),
    (["--slo-p99-us", "100", "--max-factor", "1"], "--max-factor: must be > 1"),
])
def test_growth_bad_input(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["growth", str(EXAMPLES / "mm1.yaml"), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_planner_sizes_for_a_growth_horizon() -> None:
    """"Meet the SLO for 3 years at 25% a year": the planner's design rate is the target x 1.25^3 (x the headroom)."""
    from models.requirements import load_requirements

    base = load_requirements(EXAMPLES / "plan" / "linuxone_ycsb.yaml")
    grown = load_requirements(EXAMPLES / "plan" / "linuxone_ycsb.yaml", {"growth": {"rate_per_year": 0.25, "years": 3}})
    assert grown.design_iops == pytest.approx(base.design_iops * 1.25**3)
    assert grown.target_iops == pytest.approx(base.target_iops)
    assert "3 years at 25% a year: x1.95" in grown.growth_words()
