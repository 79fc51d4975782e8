"""bench/calibration_timing.py: how a record is charged for the runs it needs."""

from __future__ import annotations

from typing import Any

import pytest

from bench.calibration_timing import main, record_costs
from calibration.evaluate import FULL_COST_SUFFIX
from calibration.records import Record


def _record(rid: str, **kw: Any) -> Record:
    base: dict[str, Any] = {"id": rid, "system": "S4", "source": {"seed": "x", "where": "y"},
                            "scenario": {"file": "a.yaml"}, "metric": "iops", "measured": 1.0, "unit": "IOPS",
                            "tolerance": {"rel": 0.1, "why": "test"}}
    base.update(kw)
    return Record.model_validate(base)


def test_a_shared_run_is_split_between_its_records_and_a_second_pass_adds_to_its_scenario() -> None:
    a = _record("a")
    b = _record("b", kind="ratio", baseline={"file": "b.yaml"})  # a.yaml (shared with a) over b.yaml
    c = _record("c", scenario={"file": "c.yaml"})  # its run was filed under no key: another key of it ran
    costs = {"a.yaml|": 4.0, "b.yaml|": 1.0, "b.yaml|" + FULL_COST_SUFFIX: 3.0}
    out = record_costs([a, b, c], costs)
    assert out["a"] == pytest.approx((2.0, 4.0))
    assert out["b"] == pytest.approx((2.0 + 4.0, 4.0 + 4.0))
    assert out["c"] == (0.0, 0.0)
    assert sum(share for share, _ in out.values()) == pytest.approx(sum(costs.values()))  # every second charged once


def test_bad_options_exit_2() -> None:
    assert main(["--jobs", "0"]) == 2
