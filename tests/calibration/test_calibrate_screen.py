"""The screened calibration (``evaluate(screen=...)``): a first pass with fewer batches settles the records whose
95% interval lies wholly inside or outside their tolerance; the others take the full budget's value, exactly."""

from __future__ import annotations

import math
from typing import Any

import pytest

from calibration.evaluate import Outcome, Schedule, evaluate, verdict_settled
from calibration.records import Record

# small budgets so the test is quick; the screen lowers the batches needed, as SCREEN_RUN does
RUN = {"run.max_ios": 6_000, "run.warmup_ios": 500, "run.batch_ios": 200, "run.min_batches": 12, "run.target_rel_ci": 0.02}
SCREEN = {"run.min_batches": 6}
MINIDISK = {"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 1.0}}
MINIDISK_ALIASES = {"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 1.0, "topology.aliases": 3}}


def _record(**kw: Any) -> Record:
    base: dict[str, Any] = {"id": "t", "system": "S4", "source": {"seed": "x", "where": "y"}, "scenario": MINIDISK,
                            "metric": "iops", "measured": 100.0, "unit": "IOPS", "tolerance": {"rel": 0.1, "why": "test"}}
    base.update(kw)
    return Record.model_validate(base)


def test_a_verdict_is_settled_only_when_the_interval_is_wholly_inside_or_outside_the_tolerance() -> None:
    r = _record()  # 100 +- 10%: the band is 90..110
    assert verdict_settled(r, Outcome(r, 100.0, (98.0, 102.0)), {})  # wholly inside
    assert verdict_settled(r, Outcome(r, 130.0, (128.0, 132.0)), {})  # wholly outside
    assert not verdict_settled(r, Outcome(r, 109.0, (107.0, 111.0)), {})  # across the upper edge
    assert not verdict_settled(r, Outcome(r, 89.5, (88.0, 91.0)), {})  # across the lower edge
    assert not verdict_settled(r, Outcome(r, error="KeyError: x"), {})
    assert not verdict_settled(r, Outcome(r, 100.0, (math.nan, math.nan)), {})
    points = _record(tolerance={"abs": 10.0, "why": "test"}, metric="cpu_cores", measured=50.0)  # 40..60
    assert verdict_settled(points, Outcome(points, 55.0, (52.0, 58.0)), {})
    assert not verdict_settled(points, Outcome(points, 59.0, (57.0, 61.0)), {})


def test_a_bound_is_settled_when_the_interval_is_on_one_side_and_an_up_to_record_never() -> None:
    at_least = _record(kind="bound", at_least=True, tolerance=None, measured=1.0, baseline=MINIDISK_ALIASES)
    assert verdict_settled(at_least, Outcome(at_least, 1.05, (1.01, 1.09)), {})  # holds for sure
    assert verdict_settled(at_least, Outcome(at_least, 0.9, (0.85, 0.95)), {})  # misses for sure
    assert not verdict_settled(at_least, Outcome(at_least, 1.02, (0.98, 1.06)), {})
    at_most = _record(kind="bound", at_most=True, tolerance=None, measured=1.0, baseline=MINIDISK_ALIASES)
    assert verdict_settled(at_most, Outcome(at_most, 0.9, (0.85, 0.95)), {})
    assert not verdict_settled(at_most, Outcome(at_most, 0.99, (0.95, 1.03)), {})
    pair = {"scenario": MINIDISK_ALIASES, "baseline": MINIDISK}
    up_to = _record(kind="ratio", scenario=None, alternatives=[pair, {**pair, "label": "b"}], measured=2.0)
    assert not verdict_settled(up_to, Outcome(up_to, 2.0, (1.99, 2.01)), {})


def test_settled_records_keep_the_screen_value_and_the_others_take_the_full_runs_exactly() -> None:
    """A record far outside its tolerance is settled by the screen; a bound set at the screen's own value is not, so
    its scenarios run again: its value is then the full budget's, bit for bit, as is every record on those scenarios."""
    probe = _record(id="probe")
    screened = evaluate([probe], run=RUN | SCREEN, workers=1)[0].predicted
    full = evaluate([probe], run=RUN, workers=1)[0].predicted
    assert screened != full  # the passes differ, or the test shows nothing
    far = _record(id="far", measured=screened * 10)
    edge = _record(id="edge", kind="bound", at_least=True, tolerance=None, measured=screened, scenario=MINIDISK_ALIASES,
                   baseline=MINIDISK)
    near = _record(id="near", scenario={"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 1.0,
                                                                            "topology.aliases": 0}})
    schedule = Schedule()
    edge_ratio = evaluate([edge], run=RUN | SCREEN, workers=1)[0]
    edge_at = edge.model_copy(update={"measured": edge_ratio.predicted})  # the bound right at the screen's ratio
    outcomes = {o.record.id: o for o in evaluate([far, edge_at, near], run=RUN, workers=1, schedule=schedule, screen=SCREEN)}
    assert outcomes["far"].budget == "full" and outcomes["far"].predicted == full  # shares MINIDISK with edge
    assert outcomes["near"].budget == "full" and outcomes["near"].predicted == full  # the same scenario, spelt apart
    assert outcomes["edge"].budget == "full"
    assert outcomes["edge"].predicted == evaluate([edge_at], run=RUN, workers=1)[0].predicted
    assert any(k.endswith(" [full]") for k in schedule.costs)
    alone = {o.record.id: o for o in evaluate([far], run=RUN, workers=1, screen=SCREEN)}
    assert alone["far"].budget == "screen" and alone["far"].predicted == screened and alone["far"].status == "outside"


@pytest.mark.slow
def test_the_cli_screens_by_default_and_full_budget_runs_everything_at_the_full_budget(tmp_path: Any) -> None:
    """S5 (10 records, 4 scenarios): the default run says its screen in the results and which pass gave each value;
    --full-budget gives every value from the full budget, and every record the same status."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent.parent

    def run(*extra: str) -> dict[str, Any]:
        out = tmp_path / f"results{len(extra)}.json"
        done = subprocess.run([sys.executable, "-m", "sim.cli", "calibrate", "--only", "S5", "--jobs", "1", "--results", str(out),
                               "--parity", str(tmp_path / "parity.html"), *extra],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root)}, cwd=root, timeout=900)
        assert done.returncode in (0, 1), done.stderr
        doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
        return doc

    screened, full = run(), run("--full-budget")
    assert screened["screen"] == {"run.min_batches": 8} and full["screen"] is None
    assert {r["budget"] for r in full["records"]} == {"full"}
    assert {r["budget"] for r in screened["records"]} <= {"screen", "full", "screen+full"}
    assert [(r["id"], r["status"]) for r in screened["records"]] == [(r["id"], r["status"]) for r in full["records"]]


def test_two_processes_give_every_record_what_one_gives_with_the_passes_overlapped() -> None:
    """In a pool the full runs start as soon as a record's screen runs are in (no barrier between the passes); every
    record's value, interval, pass and status, and the runs whose costs are filed, are those of one process: a
    settled record, a record whose scenarios run again (with another record on the same scenario, spelt apart), a
    ratio of one settled and one rerun scenario (screen+full) and a record whose scenario does not load."""
    probe = _record(id="probe")
    screened = evaluate([probe], run=RUN | SCREEN, workers=1)[0].predicted
    other = {"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 0.5}}
    records = [
        _record(id="far", measured=screened * 10, scenario=other),  # settled: outside for sure
        _record(id="edge", kind="bound", at_least=True, tolerance=None, measured=screened, scenario=MINIDISK),
        _record(id="near", scenario={"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 1.0,
                                                                         "topology.aliases": 0}}),
        _record(id="mixed", kind="ratio", scenario=other, baseline=MINIDISK, measured=1.0),
        _record(id="broken", scenario={"file": "no_such_scenario.yaml"}),
    ]
    runs = {}
    for workers in (1, 2):
        schedule = Schedule(hints={"s4_minidisk.yaml|workload.read_fraction=1.0": 5.0})
        outcomes = evaluate(records, run=RUN, workers=workers, schedule=schedule, screen=SCREEN)
        runs[workers] = ([(o.record.id, o.predicted, o.ci95, o.budget, o.status, o.error) for o in outcomes],
                         sorted(schedule.costs))
    assert runs[2] == runs[1]
    by_id = {row[0]: row for row in runs[1][0]}
    assert by_id["far"][3] == "screen" and by_id["edge"][3] == "full" and by_id["near"][3] == "full"
    assert by_id["mixed"][3] == "screen+full"
    assert by_id["broken"][5] is not None and by_id["broken"][4] == "outside"
    assert any(k.endswith(" [full]") for k in runs[1][1])


def _dump(result: Any) -> dict[str, Any]:
    """A Result as JSON, less its wall seconds (the one field that depends on the machine)."""
    doc: dict[str, Any] = result.model_dump(mode="json")
    doc.pop("wall_seconds")
    return doc


def test_a_screened_run_gives_the_screen_runs_result_and_carried_on_the_full_runs_exactly() -> None:
    """``ScreenedRun``: one run gives what a run of the screen scenario gives, then, carried on from its pause, what a run
    of the full scenario gives from the start: every field of both Results. The precision rule stops the runs: the full
    one later than the screen (MINIDISK, 2,500 and 3,700 I/Os; with 3 aliases 2,300 and 3,700), or at the same batch
    (read fraction 0.5: 8,900 I/Os, both rules met at one check). A budget that ends the run before either rule is
    met ends both at one place."""
    from calibration.evaluate import load_ref
    from calibration.records import ScenarioRef
    from sim.des.engine import ScreenedRun, simulate

    run = RUN | {"run.max_ios": 60_000}  # precision, not the budget, stops these
    later = []
    for spec in (MINIDISK, MINIDISK_ALIASES, {"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 0.5}}):
        ref = ScenarioRef.model_validate(spec)
        screen, full = load_ref(ref, run | SCREEN), load_ref(ref, run)
        held = ScreenedRun(screen, full)
        first = held.screen()
        assert first is not None
        screen_alone, full_alone = simulate(screen), simulate(full)
        assert _dump(first) == _dump(screen_alone)
        assert _dump(held.extend()) == _dump(full_alone)
        assert screen_alone.stop_reason.startswith("precision") and full_alone.stop_reason.startswith("precision")
        later.append(full_alone.simulated_ios > first.simulated_ios)
    assert later == [True, True, False]
    short = {"run.max_ios": 2_000}  # within the 12 batches of 200 after a 500 warm-up: the budget stops both
    screen, full = load_ref(ScenarioRef.model_validate(MINIDISK), RUN | SCREEN | short), load_ref(ScenarioRef.model_validate(MINIDISK), RUN | short)
    held = ScreenedRun(screen, full)
    first = held.screen()
    assert first is not None and first.stop_reason.startswith("budget")
    assert _dump(first) == _dump(simulate(screen)) and _dump(held.extend()) == _dump(simulate(full))


def test_a_screened_run_takes_only_the_same_scenario_with_fewer_batches() -> None:
    from calibration.evaluate import load_ref
    from calibration.records import ScenarioRef
    from sim.des.engine import ScreenedRun, screened_pair

    ref = ScenarioRef.model_validate(MINIDISK)
    screen, full = load_ref(ref, RUN | SCREEN), load_ref(ref, RUN)
    assert screened_pair(screen, full) and not screened_pair(full, screen) and not screened_pair(full, full)
    other = load_ref(ScenarioRef.model_validate({"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 0.5}}), RUN)
    assert not screened_pair(screen, other)
    try:
        ScreenedRun(screen, other)
    except ValueError as exc:
        assert "min_batches" in str(exc)
    else:
        raise AssertionError("ScreenedRun took two different scenarios")


def test_the_workers_carry_on_the_screen_runs_they_hold_and_let_the_others_go() -> None:
    """The pool's bookkeeping, driven in this process (two workers, one job at a time): a record that is not settled has
    its full run carried on in the worker that holds its screen run, with the full run's value; every other held run
    is let go; nothing is held at the end."""
    from pathlib import Path

    from calibration import evaluate as ev
    from calibration.records import SCENARIO_DIR

    probe = _record(id="probe")
    screened = evaluate([probe], run=RUN | SCREEN, workers=1)[0].predicted
    other = {"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 0.5}}
    records = [_record(id="far", measured=screened * 10, scenario=other),
               _record(id="edge", kind="bound", at_least=True, tolerance=None, measured=screened, scenario=MINIDISK),
               _record(id="near", scenario={"file": "s4_minidisk.yaml", "set": {"workload.read_fraction": 1.0,
                                                                                "topology.aliases": 0}})]
    held: list[dict[str, Any]] = [{}, {}]
    kinds = []
    passes = ev._Passes(records, RUN, SCREEN, Path(SCENARIO_DIR), Schedule(), None)
    turn, idle = 0, 0
    while idle < 2:
        job = passes.next_job(turn, set())
        if job is None:
            idle, turn = idle + 1, 1 - turn
            continue
        idle = 0
        kind, head, key, scenario, full = job
        kinds.append(kind)
        ev._HELD.clear()
        ev._HELD.update(held[turn])
        drop = passes.drops.pop(turn, [])
        got: Any
        if kind == "screen":
            got = ev._screen_job(head, scenario, full, drop)
        elif kind == "extend":
            got = ev._extend_job(key, scenario, drop)
        else:
            got = ev._fresh_job(scenario, drop)
        held[turn] = dict(ev._HELD)
        passes.take(head, kind != "screen", got, turn)
        turn = 1 - turn
    for w, keys in passes.drops.items():
        for k in keys:
            held[w].pop(k, None)
    ev._HELD.clear()
    assert held == [{}, {}]
    assert kinds.count("extend") == 1 and "full" not in kinds  # MINIDISK and its alias spelling: one full run
    outcomes = {o.record.id: o for o in passes.outcomes()}
    alone = {o.record.id: o for o in evaluate(records, run=RUN, workers=1, screen=SCREEN)}
    assert [(o.predicted, o.ci95, o.budget) for o in outcomes.values()] == [(o.predicted, o.ci95, o.budget) for o in alone.values()]
    assert outcomes["edge"].budget == "full" and outcomes["far"].budget == "screen"
