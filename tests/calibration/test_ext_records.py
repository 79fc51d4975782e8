"""EXT records (calibration/ext): they load, cite a source, and each scenario reproduces the record's test conditions."""

from __future__ import annotations

import pytest

from calibration.evaluate import load_ref
from calibration.ext.check import compare, main, run_budget, table
from calibration.ext.records import EXT_SCENARIO_DIR, load_ext_records
from calibration.records import load_records
from models.catalog import load_catalog

RECORDS = load_ext_records()


def test_records_load_with_unique_ids() -> None:
    assert RECORDS, "calibration/ext/ext.yaml holds no record"
    assert len({r.id for r in RECORDS}) == len(RECORDS)
    assert all(r.system == "EXT" for r in RECORDS)


def test_ext_ids_are_not_ids_of_the_seed_records() -> None:
    """EXT runs in the gate beside calibration/data's records (calibration.cli.gate_records): no id is shared."""
    assert not {r.id for r in RECORDS} & {r.id for r in load_records()}


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.id)
def test_every_record_cites_a_source(record) -> None:  # type: ignore[no-untyped-def]
    assert record.source.seed.strip() and record.source.where.strip()
    assert record.source.quote, "EXT values are printed in the source's text or table: quote it"
    assert record.tolerance is not None and record.tolerance.why.strip()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.id)
def test_scenario_reproduces_the_test_conditions(record) -> None:  # type: ignore[no-untyped-def]
    assert record.scenario is not None
    scenario = load_ref(record.scenario, run_budget(2_000), EXT_SCENARIO_DIR)
    wl, c = scenario.workload, record.conditions
    assert wl.jobs * wl.queue_depth == c.total_qd
    assert wl.block_size_kib == c.block_size_kib
    assert wl.read_fraction == c.read_fraction
    assert wl.access == c.access
    assert scenario.topology.drive in load_catalog().drives


def test_check_compares_every_measured_value() -> None:
    points = compare(RECORDS, max_ios=2_000)
    by_key = {(p.sweep, p.qd): p for p in points}
    for r in RECORDS:
        point = by_key[(r.sweep, r.conditions.total_qd)]
        assert point.measured[r.metric] == r.measured
        assert point.des[r.metric] > 0
    assert all(p.error is None and p.fast["iops"] > 0 for p in points)
    rows = table(points)[2:]
    assert len(rows) >= len(RECORDS) and all(row.count("|") == 9 for row in rows)


def test_check_rejects_a_bad_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--max-ios", "5"]) == 2
    assert "--max-ios must be in" in capsys.readouterr().err
