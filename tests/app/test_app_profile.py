"""The web app's Load over time page through Streamlit's AppTest: a profile from the
library is replayed, its latency-over-time chart draws every interval's p99 against the SLO with
the peak marked, and the growth search draws p99 against the load multiplier and gives the date."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.library import Library
from models.scenario import scenario_from_data
from tests.app.test_app import MAIN, TIMEOUT, clean, figures

S_US = 10.0


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")


def saved_profile() -> int:
    """A small M/M/1 profile (light, heavy, light) in the test's library."""
    scenario = scenario_from_data({
        "name": "tiny profile",
        "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                      "distribution": "exponential"}]},
        "workload": {"kind": "profile", "read_fraction": 1.0, "intervals": [
            {"duration_s": 0.1, "rate_iops": 30_000}, {"duration_s": 0.1, "rate_iops": 90_000},
            {"duration_s": 0.1, "rate_iops": 30_000}]},
        "run": {"seed": 4, "max_wall_s": 30},
    })
    return Library(os.environ["FLASHPLAN_DB_URL"]).save_scenario("tiny profile", scenario)


@pytest.mark.slow
def test_a_profile_is_replayed_with_latency_over_time_and_a_growth_date() -> None:
    entry = saved_profile()
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("page_scripts/timeline.py").run()
    clean(at)
    source = at.selectbox(key="timeline:source")
    assert "Library: tiny profile" in source.options
    source.set_value(f"library:{entry}").run()
    at.number_input(key="timeline:slo").set_value(500.0).run()
    at.button(key="timeline:replay").click().run()
    clean(at)
    estimate, chart = figures(at)  # every interval's fast-path p99 against the SLO, then the replay
    assert estimate["layout"]["title"]["text"].startswith("p99 per interval against the objective")
    p99 = next(t for t in chart["data"] if t.get("name") == "p99")
    assert len(p99["y"]) == 3 and p99["y"][1] > p99["y"][0]  # the heavy interval waits longest
    peak = next(t for t in chart["data"] if t.get("name") == "peak interval")
    assert peak["y"] == [p99["y"][1]]
    assert any(s.get("y0") == 500.0 for s in chart["layout"]["shapes"])  # the SLO line
    assert any("Peak interval 1" in m.value for m in at.markdown)

    at.checkbox(key="timeline:verify").set_value(False)
    at.number_input(key="timeline:rate").set_value(25.0)
    at.button(key="timeline:growth").click().run()
    clean(at)
    growth = figures(at)[-1]
    assert growth["layout"]["xaxis"]["title"]["text"].startswith("load multiplier")
    sentence = next(m.value for m in at.markdown if "The p99 SLO breaks at" in m.value)
    # the heavy interval (90K of a 100K server) decides: p99 500 us at mu - ln(100) / 500 us ~ 90.8K
    factor = float(sentence.split("**x")[1].split("**")[0])
    assert factor == pytest.approx((1e5 - math.log(100) / 500e-6) / 90_000, rel=0.03)
    assert "a year: on " in sentence
