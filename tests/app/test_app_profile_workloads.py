"""The Load over time page with a profile among several workloads: such an example is listed
there (and not on the Size/Compare forms nor the Consolidation page, which size steady workloads), and a
replay draws latency over time for all workloads together and for each one over the same intervals."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app.library import Library
from app.views.common import example_names, holds_profile
from models.scenario import scenario_from_data
from tests.app.test_app import MAIN, TIMEOUT, clean, figures

S_US = 10.0
EXAMPLE = "linuxone_bdi_batch_and_ycsb.yaml"


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")


def test_a_profile_among_workloads_is_listed_for_load_over_time_only() -> None:
    assert EXAMPLE in example_names(profiles=True)
    assert "linuxone_bdi_batch_profile.yaml" in example_names(profiles=True)
    assert EXAMPLE not in example_names()  # the Size / Compare / What-if forms size one steady workload
    assert "consolidation_oltp_batch_backup.yaml" not in example_names(profiles=True)
    from app.views.consolidation import consolidated_examples

    listed = consolidated_examples()
    assert EXAMPLE not in listed and "consolidation_oltp_batch_backup.yaml" in listed
    assert holds_profile({"workloads": [{"kind": "open"}, {"kind": "profile"}]})
    assert not holds_profile({"workloads": [{"kind": "open"}]}) and not holds_profile({"workload": {"kind": "closed"}})


@pytest.mark.slow
def test_the_example_is_offered_on_the_page() -> None:
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("page_scripts/timeline.py").run()
    clean(at)
    source = at.selectbox(key="timeline:source")
    assert "Example: S1 LinuxONE NVMe RAID-10, Db2 BDI batch bursts next to YCSB" in source.options
    source.set_value(f"example:{EXAMPLE}").run()
    clean(at)
    assert any("next to the steady workload(s) ycsb" in c.value for c in at.caption)
    assert at.button(key="timeline:replay") is not None


@pytest.mark.slow
def test_a_replay_draws_every_workload_over_time() -> None:
    scenario = scenario_from_data({
        "name": "tiny mixed profile",
        "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": S_US,
                                                      "distribution": "exponential"}]},
        "workloads": [
            {"name": "batch", "kind": "profile", "read_fraction": 1.0, "intervals": [
                {"duration_s": 0.05, "rate_iops": 10_000}, {"duration_s": 0.05, "rate_iops": 50_000},
                {"duration_s": 0.05, "rate_iops": 10_000}]},
            {"name": "oltp", "kind": "open", "rate_iops": 30_000, "read_fraction": 0.0}],
        "run": {"seed": 4, "max_wall_s": 30},
    })
    entry = Library(os.environ["FLASHPLAN_DB_URL"]).save_scenario("tiny mixed profile", scenario)
    at = AppTest.from_file(MAIN, default_timeout=TIMEOUT)
    at.run()
    at.switch_page("page_scripts/timeline.py").run()
    at.selectbox(key="timeline:source").set_value(f"library:{entry}").run()
    at.button(key="timeline:replay").click().run()
    clean(at)
    estimate, *charts = figures(at)  # the fast path's p99 per interval first
    assert estimate["layout"]["title"]["text"].startswith("p99 per interval against the objective")
    assert len(charts) == 3  # all workloads, then batch and oltp
    titles = [c["layout"]["title"]["text"] for c in charts]
    assert titles[0].endswith("(all workloads)") and "workload batch (profile)" in titles[1] and "workload oltp (open)" in titles[2]
    oltp = next(t for t in charts[2]["data"] if t.get("name") == "p99")
    assert len(oltp["y"]) == 3 and oltp["y"][1] > oltp["y"][0]  # the steady workload waits longest during the burst
    assert at.button(key="timeline:growth") is not None  # growth scales every workload by the same factor
