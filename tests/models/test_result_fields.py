"""The run metrics are held once (``models.result.RunMetrics``) for the whole run's Result and each
workload's WorkloadResult, and each model keeps its JSON key order."""

from __future__ import annotations

import json

from models.result import METRIC_KEYS, Metric, Result, RunMetrics, WorkloadResult


def test_the_metric_fields_are_the_metric_keys_in_order() -> None:
    assert tuple(RunMetrics.model_fields) == METRIC_KEYS
    assert tuple(Result.model_fields)[:len(METRIC_KEYS)] == METRIC_KEYS
    assert tuple(WorkloadResult.model_fields)[:len(METRIC_KEYS) + 1] == ("kind", *METRIC_KEYS)


def test_a_workload_result_keeps_its_json_key_order() -> None:
    metric = Metric(value=2.0, ci95=(1.0, 3.0))
    wl = WorkloadResult(kind="open", **dict.fromkeys(METRIC_KEYS, metric), offered_iops=5.0, measured_ios=9)
    # a profile workload's intervals and peak come last (None for a steady workload, left out of its summary)
    assert list(json.loads(wl.model_dump_json())) == ["kind", *METRIC_KEYS, "offered_iops", "measured_ios", "intervals",
                                                      "peak_interval"]
    assert list(wl.summary()) == ["kind", *METRIC_KEYS, "offered_iops", "measured_ios"]
    assert wl.summary()["iops"] == {"value": 2.0, "ci95": [1.0, 3.0]}


def test_each_model_keeps_its_own_description_of_the_outstanding_ios() -> None:
    assert "this workload" in (WorkloadResult.model_fields["mean_outstanding_ios"].description or "")
    assert "Little's L" in (Result.model_fields["mean_outstanding_ios"].description or "")
