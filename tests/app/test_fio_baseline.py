"""The web app's baseline with the jobs of a ``flashplan export fio`` run: each job's measurements beside the
prediction it was exported with, on the Size page and in the HTML report (fio runs the exported jobs on a
temporary file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app import forms
from calibration.importers import scenario_with_workload
from calibration.importers.fio import parse_fio
from tests.app.test_app import SMALL_RUN, clean, start
from tests.calibration.test_fio_loop import run_fio

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("fio") is None, reason="Debian's fio is not installed (make fio)")]


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")
    monkeypatch.setitem(forms.PRECISIONS, next(iter(forms.PRECISIONS)), SMALL_RUN)


def test_exported_fio_jobs_sit_beside_their_predictions_in_the_baseline_and_report(tmp_path: Path) -> None:
    from app.baseline import Baseline, export_tables
    from app.runner import scenario_key, simulate_one
    from app.views.size import BASELINE, SIZED, build_report
    from sim.cli.flashplan import main

    data: dict[str, Any] = forms.default_draft()
    data["run"].update(SMALL_RUN)
    (tmp_path / "draft.json").write_text(json.dumps(data))
    assert main(["export", "fio", str(tmp_path / "draft.json"), "--solver", "fast", "--runtime-s", "1", "--ramp-s", "0.1",
                 "--out", str(tmp_path / "export")]) == 0
    results = run_fio(tmp_path / "export", tmp_path)
    fio = parse_fio(results.read_bytes(), origin=results.name)
    tables = export_tables(fio, (tmp_path / "export" / "manifest.json").read_bytes(), "manifest.json")
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert [t["title"].split("'")[1] for t in tables] == [j["name"] for j in manifest["jobs"]]
    iops = next(r for r in tables[0]["rows"] if r["figure"] == "IOPS")
    assert iops["predicted"] == manifest["jobs"][0]["predicted"]["iops"]["value"]
    assert iops["error"] == f"{iops['predicted'] / iops['measured'] - 1:+.1%}"

    job = fio.jobs[0]
    scenario = scenario_with_workload(data, job.workload)
    at = start()
    at.session_state[BASELINE] = Baseline(f"fio job '{job.name}'", job.measured, scenario_key(scenario), tables).as_dict()
    at.session_state[SIZED] = scenario_key(scenario)
    at.session_state["size.draft"] = scenario.model_dump(mode="json", exclude_none=True)
    at.run()
    clean(at)
    assert any("fio jobs against the predictions they were exported with" in str(m.value) for m in at.markdown)
    assert any(str(c.value) == tables[0]["title"] for c in at.caption)
    html = build_report(scenario, simulate_one(scenario), baseline=Baseline.from_dict(at.session_state[BASELINE]))
    assert "fio jobs: measured against the exported predictions" in html and "p50 (us)" in html


def test_the_import_box_compares_every_exported_job_and_the_baseline_keeps_them(tmp_path: Path) -> None:
    from app.views.size import BASELINE
    from sim.cli.flashplan import main
    from tests.app.test_app import errors

    data: dict[str, Any] = forms.default_draft()
    data["run"].update(SMALL_RUN)
    (tmp_path / "draft.json").write_text(json.dumps(data))
    assert main(["export", "fio", str(tmp_path / "draft.json"), "--solver", "fast", "--runtime-s", "1", "--ramp-s", "0.1",
                 "--out", str(tmp_path / "export")]) == 0
    results = run_fio(tmp_path / "export", tmp_path)
    at = start()
    uploader = next(u for u in at.get("file_uploader") if u.proto.id.endswith("size.import_file.fio"))
    uploader.upload("results.json", results.read_bytes(), "application/json")
    at.run()
    manifest = next(u for u in at.get("file_uploader") if u.proto.id.endswith("size.import_manifest"))
    manifest.upload("manifest.json", (tmp_path / "export" / "manifest.json").read_bytes(), "application/json")
    at.run()
    clean(at)
    assert not at.error, errors(at)
    assert any(str(c.value).startswith("fio job 'main': workload main") for c in at.caption)
    at.button(key="size.import_baseline").click()
    at.run()
    clean(at)
    jobs = at.session_state[BASELINE]["jobs"]
    assert [j["title"].split("'")[1] for j in jobs] == ["main"]
    assert {r["figure"] for r in jobs[0]["rows"]} >= {"IOPS", "mean (us)"}
