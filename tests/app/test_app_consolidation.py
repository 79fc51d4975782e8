"""The Consolidation page: a scenario's workloads, the fast path per workload at once, and the DES's
per-workload latency with intervals on request."""

from __future__ import annotations

import json

from tests.app.test_app import clean, figures, start
from tests.app.test_app import small_runs as small_runs  # the autouse fixture: one worker, a fresh library

TWO_CLASSES = {"name": "two classes at one M/M/1",
               "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": 10,
                                                              "distribution": "exponential"}]},
               "workloads": [{"name": "reads", "kind": "open", "rate_iops": 30_000, "read_fraction": 1.0},
                             {"name": "writes", "kind": "open", "rate_iops": 40_000, "read_fraction": 0.0}],
               "run": {"max_ios": 30_000, "warmup_ios": 2_000, "target_rel_ci": 0.05}}


def test_the_example_shows_each_workload_and_its_fast_path_share() -> None:
    at = start("consolidation")
    described, fast = at.dataframe[0].value, at.dataframe[1].value
    assert list(described["workload"]) == ["oltp", "batch", "backup"]
    assert list(fast["workload"]) == ["oltp", "batch", "backup"]
    bars, objectives = figures(at)
    # IOPS and MB/s of each workload in panels of their own (the 500-IOPS backup on its own scale)
    assert [trace["x"][0] for trace in bars["data"]] == ["oltp", "oltp", "batch", "batch", "backup", "backup"]
    assert len({trace["yaxis"] for trace in bars["data"]}) == 6
    # each objective against its line: the OLTP p99 under 1 ms, the backup's MB/s over 500
    lines = sorted(shape["y0"] for shape in objectives["layout"]["shapes"])
    assert lines == [500.0, 1000.0]


def test_an_uploaded_scenario_is_simulated_per_workload() -> None:
    at = start("consolidation")
    at.selectbox(key="consolidation:source").set_value("Upload a file").run()
    at.get("file_uploader")[0].upload("two.json", json.dumps(TWO_CLASSES).encode(), "application/json")
    at.run()
    clean(at)
    fast = at.dataframe[1].value
    assert [float(v.replace(",", "")) for v in fast["IOPS"]] == [30_000, 40_000]
    at.button(key="consolidation:simulate").click()
    at.run()
    clean(at)
    des = at.dataframe[2].value
    assert list(des["workload"]) == ["reads", "writes"]
    means = [float(v.split(" ± ")[0]) for v in des["mean us"]]
    assert all(25 < m < 45 for m in means)  # 1 / (mu - lambda_total) = 33.3 us for both classes
