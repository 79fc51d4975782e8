"""``flashplan calibrate --only EXT``: the EXT records (calibration/ext/ext.yaml) as a system of the calibration gate.

Each record's scenario runs under the file's device model (``dies``), at the gate's own deterministic budget; the
P3700 QD8 IOPS record is a declared known gap, every other EXT record within its tolerance, so the gate passes
(``--strict`` counts the gap). ``--device-model pooled`` runs the same records pooled, where the PM1733 QD1 tails
miss by far (DIE_LEVEL.md: the pooled p99 is +85%). A bad ext.yaml is refused with exit 2 naming the field.
Each CLI run is one process (``--jobs 1``) of three short scenarios (about 2 s interpreted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import calibration.ext.records as ext_records
from calibration.cli import gate_failures, gate_records
from calibration.evaluate import load_ref
from calibration.ext.records import EXT_FILE, load_ext_records
from calibration.records import SCENARIO_DIR, load_records
from sim.cli.flashplan import main

QD8_GAP = "ext.anandtech-p3700.rr4k.qd8.iops"


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _calibrate(capsys: pytest.CaptureFixture[str], tmp_path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    code = main(["calibrate", "--only", "EXT", "--jobs", "1", "--json", "--parity", str(tmp_path / "parity.html"), *extra])
    out = capsys.readouterr()
    return code, _strict(out.out), out.err


@pytest.mark.slow
def test_gate_records_run_every_ext_record_under_the_files_device_model() -> None:
    ext = gate_records("EXT")
    assert [r.id for r in ext] == [r.id for r in load_ext_records()]
    for r in ext:
        assert r.scenario is not None and r.scenario.set["device_model"] == "dies"
        assert load_ref(r.scenario, None, SCENARIO_DIR).device_model == "dies"
    assert {r.scenario.set["device_model"] for r in gate_records("EXT", "pooled") if r.scenario} == {"pooled"}
    everything = gate_records(None)
    assert {r.system for r in everything} == {"S1", "S2", "S3", "S4", "S5", "EXT"}
    assert len(everything) == len(load_records()) + len(ext) == len({r.id for r in everything})
    assert not any(r.system == "EXT" for r in gate_records("S3"))


@pytest.mark.slow
def test_calibrate_only_ext_reports_every_record_and_passes_with_the_known_gap(capsys: pytest.CaptureFixture[str],
                                                                                tmp_path: Path) -> None:
    code, rows, err = _calibrate(capsys, tmp_path, "--results", str(tmp_path / "ext.json"))
    assert code == 0, err
    assert [r["id"] for r in rows] == [r.id for r in load_ext_records()]
    assert all(r["system"] == "EXT" for r in rows)
    declared = {r.id for r in load_ext_records() if r.known_gap is not None}
    assert QD8_GAP in declared
    # a declared gap is reported as one (not within: the declaration is not stale); every other record within
    assert {r["id"]: r["status"] for r in rows} == {r["id"]: "known_gap" if r["id"] in declared else "within" for r in rows}
    gap = next(r for r in rows if r["id"] == QD8_GAP)
    assert gap["rel_error"] < -0.15 and gap["known_gap"]["hypotheses"]
    said = " ".join(err.split())  # the console wraps the line
    assert "gate: pass" in said and f"{len(declared)} declared known gaps, 0 outside" in said
    doc = _strict((tmp_path / "ext.json").read_text(encoding="utf-8"))
    assert doc["only"] == "EXT" and [s["system"] for s in doc["summary"]] == ["EXT", "all"]
    ext = doc["summary"][0]
    assert (ext["records"], ext["within"], ext["known_gap"], ext["outside"]) == (len(rows), len(rows) - len(declared),
                                                                                 len(declared), 0)
    assert [(r["id"], r["status"]) for r in doc["records"]] == [(r["id"], r["status"]) for r in rows]
    # the gate's budget stops on precision or I/O counts: a second run gives the same values to the bit
    _, again, _ = _calibrate(capsys, tmp_path)
    assert [r["predicted"] for r in again] == [r["predicted"] for r in rows]
    # --strict counts the declared gap
    assert {r["id"] for r in gate_failures(doc["records"], strict=True)} == declared


def test_calibrate_only_ext_pooled_runs_the_records_pooled(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, rows, _ = _calibrate(capsys, tmp_path, "--device-model", "pooled")
    by_id = {r["id"]: r for r in rows}
    p99 = by_id["ext.ignalina-pm1733.rr4k.qd1.p99"]
    assert p99["status"] == "outside" and p99["predicted"] > 1.25 * p99["measured"]  # the pooled tail (+85%)
    assert code == 1


def test_calibrate_refuses_fitting_ext(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--only", "EXT", "--fit"]) == 2
    assert "--fit" in capsys.readouterr().err


def _write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_a_record_missing_its_source_exits_2_naming_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    data = yaml.safe_load(EXT_FILE.read_text(encoding="utf-8"))
    del data["records"][1]["source"]
    monkeypatch.setattr(ext_records, "EXT_FILE", _write(tmp_path / "ext.yaml", data))
    assert main(["calibrate", "--only", "EXT", "--jobs", "1", "--parity", str(tmp_path / "p.html")]) == 2
    assert "ext.yaml.records.1.source: Field required" in capsys.readouterr().err


def test_the_ext_file_is_read_through_the_one_loading_path(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Duplicate keys, an unknown device model and a duplicate id are refused (exit 2) naming what is wrong."""
    bad = tmp_path / "ext.yaml"
    monkeypatch.setattr(ext_records, "EXT_FILE", bad)
    bad.write_text("system: EXT\nsystem: EXT\nrecords: []\n", encoding="utf-8")
    assert main(["calibrate", "--only", "EXT"]) == 2
    assert "duplicate key 'system'" in capsys.readouterr().err
    data = yaml.safe_load(EXT_FILE.read_text(encoding="utf-8"))
    _write(bad, {**data, "device_model": "quantum"})
    assert main(["calibrate", "--only", "EXT"]) == 2
    assert "ext.yaml.device_model" in capsys.readouterr().err
    _write(bad, {**data, "records": [data["records"][0], data["records"][0]]})
    assert main(["calibrate", "--only", "EXT"]) == 2
    assert "ext.yaml.records.1.id: duplicate EXT record id" in capsys.readouterr().err
