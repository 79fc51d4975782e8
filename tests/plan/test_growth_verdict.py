"""Growth answers that hold: the DES and fast-path breaking points side by side, the date from the trusted one,
the DES checks run to a verdict (a saturated load is unstable by either solver), and dates past the calendar.

Theory: an M/M/1 queue's response time is exponential with rate mu - lambda, so its p99 is ln(100) / (mu - lambda)
and a p99 SLO breaks at lambda* = mu - ln(100) / SLO (tests/plan/test_growth.py checks the search itself).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pytest

from models.scenario import Scenario, load_scenario, with_overrides
from sim.cli.flashplan import main
from sim.des.engine import simulate
from sim.plan.capacity_check import cross_checked, fast_saturation
from sim.plan.growth import breaking_point, date_after
from tests.conftest import EXAMPLES

MU = 1e5  # examples/mm1.yaml: one exponential server of 10 us


def mm1(rate: float, **run: Any) -> Scenario:
    base = load_scenario(EXAMPLES / "mm1.yaml")
    return with_overrides(base, {"workload.rate_iops": rate, **{f"run.{k}": v for k, v in run.items()}})


def test_des_and_fast_path_agree_on_the_mm1_example() -> None:
    """examples/mm1.yaml at 50,000 IOPS, SLO 300 us: lambda* = 1e5 - ln(100) / 3e-4 = 84,649 IOPS, x1.693 (rho 0.85).
    The fast path's and the DES's breaking points agree within 3% of it and of each other; the answer (the trusted
    one) too, and the date is taken from it. The runs are bounded by I/Os, not wall time."""
    scenario = mm1(50_000, max_ios=400_000, max_wall_s=3_600)
    theory = (MU - math.log(100) / 3e-4) / 50_000
    growth = breaking_point(scenario, 300.0, des_steps=3)
    assert growth.factor == pytest.approx(theory, rel=0.03)
    des = growth.des_factor
    assert des is not None, growth.trusted_because
    assert des == pytest.approx(theory, rel=0.03)
    assert des == pytest.approx(growth.factor, rel=0.03)
    best = growth.best_factor
    assert best is not None and best == (des if growth.trusted == "des" else growth.factor)
    assert growth.years(0.25) == pytest.approx(math.log(best) / math.log(1.25))
    if growth.trusted == "fast":
        assert "cut short" in growth.trusted_because


def test_a_des_run_cut_short_is_not_trusted() -> None:
    """A budget too small to reach a verdict near capacity (rho ~0.95, 4,000 I/Os against the ~23,000 its relaxation
    time asks): the fast path's point is used, and the reason says the DES runs gave no verdict."""
    growth = breaking_point(mm1(90_000, max_ios=4_000, warmup_ios=500, min_batches=5), 1_000.0, des_steps=2)
    assert growth.des and growth.des[0].validity == "cut_short"
    assert "relaxation" in growth.des[0].note
    assert growth.trusted == "fast"
    assert growth.best_factor == growth.factor
    assert "cut short" in growth.trusted_because or "still open" in growth.trusted_because


def test_a_result_that_missed_the_saturation_is_unstable_by_the_fast_path() -> None:
    """A DES Result that did not see the load past capacity (here: one taken at half the rate) checked against the
    scenario offering 1.1 x mu: the fast path's capacity makes it unstable, naming the server; a stable scenario's
    Result is left as it is."""
    unseen = simulate(mm1(50_000, max_ios=3_000, warmup_ios=500))
    assert unseen.validity != "unstable"
    over = mm1(110_000)
    assert fast_saturation(over) is not None
    checked = cross_checked(over, unseen)
    assert checked.validity == "unstable"
    assert "server" in checked.validity_note and "fast path" in checked.validity_note
    assert cross_checked(mm1(50_000), unseen) == unseen


def test_dates_beyond_the_calendar() -> None:
    start = dt.date(2026, 11, 25)
    assert date_after(start, 1.0) == start + dt.timedelta(days=365.25)
    assert date_after(start, 10_000.0) is None
    assert date_after(start, 1e300) is None
    assert date_after(start, -3_000.0) is None


def test_growth_with_a_small_rate_prints_years_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """At 0.0001% a year the SLO of examples/mm1.yaml breaks after ~58,900 years: no date, and no crash."""
    args = ["growth", str(EXAMPLES / "mm1.yaml"), "--slo-p99-us", "1000", "--rate-per-year", "0.000001", "--start", "2026-11-25",
            "--no-verify"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "beyond year 9999" in out and "years" in out
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["breaks_on"] is None and doc["breaks_on_words"] == "beyond year 9999"
    assert doc["years"] == pytest.approx(math.log(doc["breaking_factor"]) / math.log1p(1e-6))
    assert doc["trusted"] == "fast"
