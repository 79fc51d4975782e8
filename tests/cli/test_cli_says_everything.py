"""A CLI that says everything: no table cell is elided, every result names its validity, a faults scenario's
analysis shows every state, the FAULTS calibration records print as every system's do, every $/KIOPS figure
names its basis (the plan, the app and ``cost`` computing the same figure for the same basis), and the shipped
examples end precise with the S1 examples at the calibrated think time."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.table import Table

from models.catalog import load_catalog
from models.scenario import load_scenario
from sim.cli.flashplan import main
from sim.cli.output import FullConsole

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "examples"
FAULTS_EXAMPLE = str(EXAMPLES / "faults_s1_raid10_degraded.yaml")
S1_NVME = str(EXAMPLES / "s1_linuxone_nvme_raid10.yaml")
ZVM_PLAN = str(ROOT / "examples" / "plan" / "zvm_paging.toml")
SMALL = ["--set", "run.max_ios=6000", "--set", "run.warmup_ios=1000", "--set", "run.min_batches=5"]
ELLIPSIS = ("…", "...")


def _printed(table: Table, width: int, terminal: bool) -> str:
    buffer = io.StringIO()
    FullConsole(file=buffer, width=width, force_terminal=terminal, color_system=None).print(table)
    return buffer.getvalue()


LONG = ("PM1733-1.92TB", "s1.nvme.ycsb.read_iops.qd1.256_threads", "IBM-NVMe-Carrier-0448", "measured 1,450,000 IOPS")


@pytest.mark.parametrize("width", [40, 80, 120])
def test_a_table_printed_to_a_pipe_keeps_every_cell_whole(width: int) -> None:
    """However narrow the console, each cell's every word is printed on one line (the console widens)."""
    table = Table(title="t")
    for name in ("model", "record", "adapter", "measured"):
        table.add_column(name)
    table.add_row(*LONG)
    text = _printed(table, width, terminal=False)
    for cell in LONG:
        for word in cell.split():
            assert word in text, word
    assert not any(mark in text for mark in ELLIPSIS)


def test_a_table_on_a_narrow_terminal_folds_instead_of_eliding() -> None:
    table = Table()
    for name in ("model", "record", "adapter", "measured"):
        table.add_column(name)
    table.add_row(*LONG)
    text = _printed(table, 30, terminal=True)
    assert not any(mark in text for mark in ELLIPSIS)
    shown = sorted(re.sub(r"[^A-Za-z0-9.,_-]", "", text))
    for char in "".join(["model", "record", "adapter", "measured", *LONG]).replace(" ", ""):
        assert char in shown, char
        shown.remove(char)  # every character of every cell and header is printed


def test_the_catalog_lists_every_model_whole(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    catalog = load_catalog()
    for name in [*catalog.drives, *catalog.dimms, *catalog.adapters, *catalog.hosts, *catalog.storage_servers]:
        assert re.search(rf"│ {re.escape(name)}\s", out), name
    assert not any(mark in out for mark in ELLIPSIS)


def test_the_calibration_tables_print_full_ids_and_units() -> None:
    from calibration.cli import _print_tables

    row = {"id": "s1.nvme.ycsb.read_iops.qd1.256_threads.a_long_record_id", "system": "S1", "measured": 1.0e6,
           "unit": "IOPS (reads per second, the whole array)", "predicted": 1.01e6, "ci95": [0.99e6, 1.03e6],
           "rel_error": 0.01, "tolerance": 0.15, "tolerance_kind": "rel", "kind": "rel", "within": True, "status": "within",
           "settled_by": None, "known_gap": None, "error": None}
    buffer = io.StringIO()
    _print_tables([row], FullConsole(file=buffer, width=80, color_system=None))
    text = buffer.getvalue()
    assert row["id"] in text
    assert all(word in text for word in str(row["unit"]).split())  # wrapped between words, never cut


def test_every_result_names_its_validity_precise_ones_too(capsys: pytest.CaptureFixture[str]) -> None:
    mm1 = str(EXAMPLES / "mm1.yaml")
    assert main(["simulate", mm1, "--set", "run.max_ios=3000"]) == 0
    assert "validity: cut_short;" in capsys.readouterr().out
    assert main(["simulate", mm1, "--set", "run.target_rel_ci=0.3", "--set", "run.min_batches=5",
                 "--set", "run.warmup_ios=1000"]) == 0
    out = capsys.readouterr().out
    assert "validity: precise; stop: precision reached" in out


def test_analyze_prints_every_state_of_a_faults_scenario_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", FAULTS_EXAMPLE]) == 0
    out = capsys.readouterr().out
    for state in ("healthy", "degraded", "rebuilding"):
        assert f"== state: {state} (" in out
    assert " ".join(out.split()).count("(analytic fast path)") == 3
    assert len(re.findall(r"SLO p99 <= 1000 us: margin [+-]\d", out)) == 3
    assert "lowest SLO margin" in out and "rebuild (" in out
    assert main(["analyze", FAULTS_EXAMPLE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["states"]) == ["healthy", "degraded", "rebuilding"]
    degraded, healthy = data["states"]["degraded"]["fast"], data["states"]["healthy"]["fast"]
    assert degraded["latency_mean_us"] > healthy["latency_mean_us"]  # half the reads on one survivor of the pair
    assert set(data["slo"]["margin_pct"]) == set(data["states"])


def _faults_checks() -> list[Any]:
    from calibration.faults.check import Check

    return [
        Check("faults.a.idle_time", 193_200.0, "s", "conflict", 300_000.0, 299_000.0, tolerance=0.15, cap_share=1.0, passed=False,
              note="the study raised speed_limit_max"),
        Check("faults.a.rate_under_load", 10.5, "MB/s", "gap", 60.0, 58.0, floor=60.0, ceiling=120.0, cap_share=1.0,
              note="known gap: no host workload in the source"),
        Check("faults.b.resync", 86_400.0, "s", "bound", 63_000.0, 63_100.0, floor=63_000.0, tolerance=0.25, cap_share=1.0,
              passed=True, note="the idle floor"),
        Check("faults.c.xiraid", 19_320.0, "s", "out_of_scope", note="xiRAID rebuilds into spare zones"),
    ]


def test_calibrate_only_faults_prints_a_summary_and_a_gate_line(capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import calibration.faults.check as check

    monkeypatch.setattr(check, "check_records", _faults_checks)
    assert main(["calibrate", "--only", "FAULTS"]) == 0
    out = capsys.readouterr().out
    assert "calibration records (4)" in out and "per system" in out
    assert re.search(r"│\s+FAULTS │\s+4 │\s+1 │\s+1 │\s+1 │\s+0 │", out)
    assert "gate: pass; 1 within tolerance, 1 settled by a conflict, 1 declared known gaps, 0 outside, 1 out of scope" in out
    assert "None" not in out and "MISS" not in out
    assert all(word in out for word in ["out", "of", "scope:", "xiRAID", "rebuilds", "into", "spare", "zones"])


def test_a_faults_record_that_misses_its_bound_fails_the_gate(capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import calibration.faults.check as check

    missed = _faults_checks()
    missed[2].passed = False
    monkeypatch.setattr(check, "check_records", lambda: missed)
    assert main(["calibrate", "--only", "FAULTS"]) == 1
    assert "gate: FAIL (1 failing: faults.b.resync)" in capsys.readouterr().out


def test_cost_names_both_bases_and_the_bound_figure_is_the_plan_and_app_figure(capsys: pytest.CaptureFixture[str]) -> None:
    from app.sizing import price_at_bound
    from models.cost import capex, usd_per_kiops
    from sim.analytic import evaluate
    from sim.plan.candidate import Candidate

    assert main(["cost", S1_NVME, *SMALL]) == 0
    out = capsys.readouterr().out
    assert "per KIOPS at the simulated IOPS" in out and "per KIOPS at the throughput bound" in out
    assert main(["cost", S1_NVME, *SMALL, "--json"]) == 0
    conf = json.loads(capsys.readouterr().out)["configurations"][0]
    assert conf["usd_per_kiops"]["basis"] == "at the simulated IOPS"
    bound = conf["usd_per_kiops_at_bound"]
    assert bound["basis"] == "at the throughput bound"
    scenario = load_scenario(S1_NVME)
    fast = evaluate(scenario)
    cost = capex(scenario.topology)  # type: ignore[arg-type]
    candidate = Candidate(label="s1", scenario=scenario, capex=cost, fast=fast)
    assert bound["value"] == pytest.approx(candidate.usd_per_kiops, rel=1e-9)
    assert bound["value"] == pytest.approx(price_at_bound(scenario, fast.bounds.x_max_iops), rel=1e-9)
    assert bound["value"] == pytest.approx(usd_per_kiops(cost.total_usd, fast.bounds.x_max_iops), rel=1e-9)
    assert conf["usd_per_kiops"]["value"] == pytest.approx(usd_per_kiops(cost.total_usd, conf["throughput"]["value"]), rel=1e-9)


def test_the_plan_names_the_basis_of_every_kiops_figure(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", ZVM_PLAN, "--verify-top", "1", "--show", "3", "--quiet",
                 "--set", "verify.max_ios=4000", "--set", "verify.warmup_ios=500"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "$/KIOPS at the throughput bound, the fast path's max IOPS" in out  # the table's title: its column's basis
    winner = re.search(r"\$([\d,.]+)/KIOPS at the throughput bound, \$([\d,.]+)/KIOPS at the simulated IOPS", out)
    assert winner is not None, out
    assert main(["plan", ZVM_PLAN, "--verify-top", "1", "--quiet", "--json",
                 "--set", "verify.max_ios=4000", "--set", "verify.warmup_ios=500"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["winner"]["usd_per_kiops_basis"] == "at the throughput bound"


FITTED_THINK_US = "s1_ycsb_think_us"


@pytest.mark.parametrize("name", ["s1_linuxone_nvme_raid10.yaml", "s1_linuxone_fcp_ds8950f.yaml"])
def test_the_s1_examples_run_at_the_calibrated_think_time(name: str) -> None:
    from calibration.evaluate import fitted_workload_value

    scenario = load_scenario(EXAMPLES / name)
    assert scenario.workload.think_time_us == pytest.approx(round(fitted_workload_value(FITTED_THINK_US), 1))  # type: ignore[union-attr]
    assert "models/catalog/fitted.yaml" in (EXAMPLES / name).read_text(encoding="utf-8")


def test_nvme_and_fcp_differ_by_what_the_seed_measured_at_the_calibrated_think_time() -> None:
    """Seed 000: direct NVMe up to 16% above the DS8950F over FCP under YCSB; without the think time the model
    compared the two at saturation (3.8x)."""
    from sim.analytic import evaluate

    nvme = evaluate(load_scenario(EXAMPLES / "s1_linuxone_nvme_raid10.yaml")).iops
    fcp = evaluate(load_scenario(EXAMPLES / "s1_linuxone_fcp_ds8950f.yaml")).iops
    assert 1.0 < nvme / fcp < 1.3


def _run(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data.get("run") or {}


@pytest.mark.parametrize("name", ["mm1.yaml", "mm8.yaml", "consolidation_oltp_batch_backup.yaml"])
def test_the_long_examples_leave_the_stop_to_precision_not_the_machine(name: str) -> None:
    """Their wall-time budget is a safety net far above what their I/O budget takes (the run stops on precision
    or the I/O count: the same output on any machine)."""
    run = _run(EXAMPLES / name)
    assert run.get("max_wall_s", 120) >= 900


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mm1.yaml", "mm8.yaml", "consolidation_oltp_batch_backup.yaml"])
def test_the_examples_end_precise(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / name), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["validity"] == "precise", data["validity_note"]
    assert data["stop_reason"].startswith("precision reached")
