"""Calibration records: the data files are valid, the checks behave, and a CI subset holds."""

from __future__ import annotations

import json
import math

import pytest

from calibration.evaluate import QUICK_RUN, Outcome, evaluate, metric_of, predict, settle_conflicts
from calibration.fit import PARAMETERS, residual
from calibration.records import SYSTEMS, Record, load_records
from calibration.report import parity_figure, summary
from sim.cli.flashplan import main

RECORDS = load_records()


def test_every_system_has_records_and_far_fewer_parameters():
    by_system = {s: [r for r in RECORDS if r.system == s] for s in SYSTEMS}
    assert all(len(v) >= 10 for v in by_system.values()), {k: len(v) for k, v in by_system.items()}
    fitted = [r for r in RECORDS if r.fit]
    assert len(PARAMETERS) * 4 < len(fitted)


def test_conflicting_sources_are_documented_both_ways():
    conflicts = {r.id for r in RECORDS if r.conflict}
    assert {"s5.qd512.scsi_limit_220k", "s5.knee.scsi_270k"} <= conflicts
    assert {"s2.p10.32ns_2nvme.bw", "s2.p10.32ns_2nvme.busy_write_slide"} <= conflicts


def test_no_record_uses_a_withheld_value():
    for r in RECORDS:
        assert "withheld" not in json.dumps(r.model_dump()).lower() or (r.note and "withheld" in r.note)


def _record(**kw):
    base = {"id": "t", "system": "S1", "source": {"seed": "x", "where": "y"}, "scenario": {"file": "s3_exflash.yaml"},
            "metric": "iops", "measured": 100.0, "unit": "IOPS", "tolerance": {"rel": 0.1, "why": "test"}}
    base.update(kw)
    return Record.model_validate(base)


def test_tolerances_and_bounds():
    r = _record()
    assert r.holds(109) and not r.holds(111)
    b = _record(kind="bound", at_least=True, tolerance=None, measured=1.0, baseline={"file": "s3_exflash.yaml"})
    assert b.holds(1.2) and not b.holds(0.9)
    assert residual(Outcome(b, 1.2)) == 0.0 and residual(Outcome(b, 0.9)) < 0
    assert residual(Outcome(r, 110.0)) == pytest.approx(1.0)


def test_a_record_without_tolerance_is_refused():
    with pytest.raises(Exception, match="tolerance"):
        _record(tolerance=None)


def test_quick_subset_runs_and_reports(tmp_path):
    subset = [r for r in RECORDS if r.id in ("s3.table5.lat_rr.2dimm", "s5.qd32.half_cpu", "s3.writenow.latency")]
    outcomes = evaluate(subset, run=QUICK_RUN, workers=1)
    rows = [o.as_dict() for o in outcomes]
    assert all(r["error"] is None and math.isfinite(r["predicted"]) for r in rows)
    assert {r["id"]: r["within"] for r in rows}["s5.qd32.half_cpu"]
    s = summary(rows)
    assert s[-1]["system"] == "all" and s[-1]["records"] == 3
    assert parity_figure(rows).data


def test_unknown_metric_is_reported_not_raised():
    r = _record(metric="no_such_metric")
    o = predict(r, {})
    assert o.error and not o.within


def test_metric_of_busy_needs_a_matching_component():
    from calibration.evaluate import load_ref
    from calibration.records import ScenarioRef
    from sim.des.engine import simulate

    res = simulate(load_ref(ScenarioRef(file="s3_exflash.yaml"), {"run.max_ios": 5000}))
    assert metric_of(res, "busy:dimm0.*")[0] > 0
    with pytest.raises(KeyError, match="no component"):
        metric_of(res, "busy:nothing*")


def test_cli_json_for_one_system(tmp_path, capsys):
    code = main(["calibrate", "--only", "S5", "--quick", "--json", "--parity", str(tmp_path / "p.html")])
    rows = json.loads(capsys.readouterr().out)
    assert rows and {"id", "system", "source", "metric", "unit", "measured", "predicted", "ci95", "rel_error", "tolerance", "within"} <= set(rows[0])
    assert code == (0 if all(r["within"] or r["status"] == "conflict" for r in rows) else 1)
    assert (tmp_path / "p.html").exists()


def test_a_record_whose_source_is_contradicted_by_a_record_that_holds_is_settled_not_a_miss():
    table = _record(id="table", measured=100.0)
    slide = _record(id="slide", measured=150.0, conflict="the slide quotes another figure", conflicts_with=["table"])
    lonely = _record(id="lonely", measured=150.0)
    outcomes = [Outcome(table, 105.0), Outcome(slide, 105.0), Outcome(lonely, 105.0)]
    settle_conflicts(outcomes)
    assert [o.status for o in outcomes] == ["within", "conflict", "outside"]
    assert outcomes[1].settled_by == "table" and not outcomes[1].within
    markers = [m for trace in parity_figure([o.as_dict() for o in outcomes]).data[2:] for m in trace.marker.symbol]
    assert markers == ["circle", "diamond-open", "x"]
    outcomes = [Outcome(table, 200.0), Outcome(slide, 200.0)]  # both sources missed: a model miss
    settle_conflicts(outcomes)
    assert [o.status for o in outcomes] == ["outside", "outside"]


def test_a_conflict_must_be_explained_and_name_a_record_of_the_same_system(tmp_path):
    with pytest.raises(Exception, match="conflict"):
        _record(conflicts_with=["x"])
    doc = {"system": "S1", "records": [_record(id="a").model_dump(exclude_none=True),
                                        _record(id="b", conflict="c", conflicts_with=["nope"]).model_dump(exclude_none=True)]}
    (tmp_path / "s1.yaml").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="'nope', which is not another record"):
        load_records(tmp_path)


def test_calibrate_exits_0_when_only_contradicted_sources_miss_and_1_with_strict(tmp_path, monkeypatch, capsys):
    import calibration.cli as cli

    table = _record(id="table", measured=100.0)
    slide = _record(id="slide", measured=150.0, conflict="the slide quotes another figure", conflicts_with=["table"])

    def canned(records, **_):
        outcomes = [Outcome(table, 105.0), Outcome(slide, 105.0)]
        settle_conflicts(outcomes)
        return outcomes

    monkeypatch.setattr(cli, "evaluate", canned)
    args = ["calibrate", "--only", "S1", "--quick", "--parity", str(tmp_path / "p.html")]
    assert main(args) == 0
    assert "slide" in capsys.readouterr().out
    assert main([*args, "--strict"]) == 1


def test_cli_bad_fit_steps_and_workers_exit_2_naming_the_option(tmp_path, capsys):
    parity = tmp_path / "p.html"
    code = main(["calibrate", "--fit", "--fit-steps", "0", "--workers", "0", "--parity", str(parity)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--fit-steps: must be 1 .. 50, got 0" in err and "--workers: must be at least 1, got 0" in err
    assert not parity.exists()


def test_the_fit_is_not_dragged_by_one_record_far_outside_its_tolerance(monkeypatch):
    """Soft-L1 loss (calibration/fit.py ROBUST_LOSS): five records agree on a value, a sixth (a run
    anomaly) sits at twice it; the fitted parameter stays near the five, less than half as far from
    them as plain least squares would land (the log-mean, 11.2)."""
    import calibration.fit as fit_module

    cpu = "hosts/z14-M05-LPAR4/cpu_us_per_io/zvm_cp"
    base = next(r for r in RECORDS if r.id == "s4.table2.write.aliases3.cp_cpu")
    records = [base.model_copy(update={"id": f"agree{i}", "measured": 10.0, "fit": True}) for i in range(5)]
    records.append(base.model_copy(update={"id": "anomaly", "measured": 20.0, "fit": True}))

    def predicted_is_the_parameter(values, recs, workers):
        return [Outcome(record=r, predicted=values[cpu]) for r in recs]

    monkeypatch.setattr(fit_module, "evaluate_with", predicted_is_the_parameter)
    values = fit_module.fit(records, workers=1, max_evals=60, only="S4", log=lambda _: None)
    least_squares_answer = math.exp((5 * math.log(10.0) + math.log(20.0)) / 6)  # 11.2
    assert values[cpu] == pytest.approx(10.0, rel=0.06)
    assert abs(values[cpu] - 10.0) < 0.5 * abs(least_squares_answer - 10.0)


GAP = {"hypotheses": [{"mechanism": "reads wait out a program on their die", "figure": "82.1K against 72K measured (+14%)"}],
       "missing_data": "the NAND's read and program times and die count", "declared": "2026-11-25"}


def _canned(monkeypatch, outcomes):
    """Make ``flashplan calibrate`` judge the given outcomes instead of simulating (the gate is under test, not the model)."""
    import calibration.cli as cli

    def canned(records, **_):
        settle_conflicts(outcomes)
        return outcomes

    monkeypatch.setattr(cli, "evaluate", canned)


def test_the_gate_passes_within_conflict_and_known_gap_and_strict_fails_on_the_known_gap(tmp_path, monkeypatch, capsys):
    table = _record(id="table", measured=100.0)
    slide = _record(id="slide", measured=150.0, conflict="the slide quotes another figure", conflicts_with=["table"])
    gap = _record(id="gap", measured=72.0, known_gap=GAP)
    outcomes = [Outcome(table, 105.0), Outcome(slide, 105.0), Outcome(gap, 82.1)]
    _canned(monkeypatch, outcomes)
    args = ["calibrate", "--only", "S1", "--quick", "--parity", str(tmp_path / "p.html")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "gate: pass; 1 within tolerance, 1 settled by a conflict, 1 declared known gaps, 0 outside" in out
    assert [o.status for o in outcomes] == ["within", "conflict", "known_gap"]
    assert main([*args, "--strict"]) == 1
    assert "gate (--strict): FAIL (2 failing: slide, gap)" in capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in rows] == ["within", "conflict", "known_gap"]
    assert rows[2]["known_gap"]["missing_data"] == GAP["missing_data"]
    s = summary([o.as_dict() for o in outcomes])[-1]
    assert (s["within"], s["settled_by_conflict"], s["known_gap"], s["outside"]) == (1, 1, 1, 0)


def test_an_undeclared_miss_fails_the_gate_and_a_known_gap_that_cannot_be_predicted_is_a_miss(tmp_path, monkeypatch, capsys):
    gap = _record(id="gap", measured=72.0, known_gap=GAP)
    miss = _record(id="miss", measured=72.0)
    outcomes = [Outcome(gap, 82.1), Outcome(miss, 82.1)]
    _canned(monkeypatch, outcomes)
    args = ["calibrate", "--only", "S1", "--quick", "--parity", str(tmp_path / "p.html")]
    assert main(args) == 1
    assert "gate: FAIL (1 failing: miss)" in capsys.readouterr().out
    broken = Outcome(gap, error="KeyError: no component matches")
    assert broken.status == "outside"
    _canned(monkeypatch, [broken])
    assert main(args) == 1


def test_a_known_gap_now_within_tolerance_is_flagged_for_removal(tmp_path, monkeypatch, capsys):
    gap = _record(id="gap", measured=72.0, known_gap=GAP)
    _canned(monkeypatch, [Outcome(gap, 74.0)])
    args = ["calibrate", "--only", "S1", "--quick", "--parity", str(tmp_path / "p.html")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "known gap now within tolerance: remove the declaration: gap" in out
    assert main([*args, "--strict"]) == 1
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    assert "known gap now within tolerance: remove the declaration: gap" in captured.err
    assert json.loads(captured.out)[0]["status"] == "within"
    assert summary([Outcome(gap, 74.0).as_dict()])[-1]["stale_known_gaps"] == 1


def test_the_parity_plot_marks_known_gaps_apart():
    gap = _record(id="gap", measured=72.0, known_gap=GAP)
    miss = _record(id="miss", measured=72.0)
    rows = [Outcome(gap, 82.1).as_dict(), Outcome(miss, 82.1).as_dict(), Outcome(gap, 73.0).as_dict()]
    for row, within in zip(rows, (False, False, True), strict=True):
        assert row["within"] is within
    fig = parity_figure(rows)
    trace = fig.data[2]
    assert list(trace.marker.symbol) == ["square-open", "x", "circle"]
    assert "known gap (declared 2026-11-25)" in trace.text[0] and "remove the declaration" in trace.text[2]


@pytest.mark.parametrize("field", ["hypotheses", "missing_data", "declared"])
def test_a_known_gap_missing_a_required_field_is_refused_by_the_loader_naming_it(tmp_path, field):
    gap = {k: v for k, v in GAP.items() if k != field}
    doc = {"system": "S1", "records": [{**_record(id="a").model_dump(exclude_none=True), "known_gap": gap}]}
    (tmp_path / "s1.yaml").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(Exception, match=field):
        load_records(tmp_path)


def test_a_known_gap_hypothesis_needs_its_figure_and_the_date_must_be_real():
    with pytest.raises(Exception, match="figure"):
        _record(known_gap={**GAP, "hypotheses": [{"mechanism": "die binding"}]})
    with pytest.raises(Exception, match="hypotheses"):
        _record(known_gap={**GAP, "hypotheses": []})
    with pytest.raises(Exception, match="not a calendar date"):
        _record(known_gap={**GAP, "declared": "2026-13-40"})


def test_every_declared_known_gap_is_complete_and_dated():
    gaps = [r for r in RECORDS if r.known_gap]
    for r in gaps:
        assert r.known_gap is not None
        assert all(h.figure and any(c.isdigit() for c in h.figure) for h in r.known_gap.hypotheses), r.id


def test_the_web_page_counts_known_gaps_and_names_a_stale_declaration():
    from app.calibration_data import system_summary
    from app.views.calibration import record_table

    gap = _record(id="gap", measured=72.0, known_gap=GAP)
    rows = [Outcome(gap, 82.1).as_dict(), Outcome(_record(id="ok"), 100.0).as_dict(),
            Outcome(gap.model_copy(update={"id": "stale"}), 73.0).as_dict()]
    for row, outcome_status in zip(rows, ("known_gap", "within", "within"), strict=True):
        assert row["status"] == outcome_status
    (s1,) = system_summary(rows)
    assert (s1["known_gap"], s1["within"], s1["outside"], s1["stale_known_gaps"]) == (1, 2, 0, 1)
    column = [r["known gap"] for r in record_table(rows)]
    assert column[0].startswith("declared 2026-11-25; needs the NAND's read and program times")
    assert column[1] == "" and column[2] == "now within tolerance: remove the declaration"
