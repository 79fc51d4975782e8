"""The web app's "Add a drive from fio results" (app/views/own_drive.py) through Streamlit's AppTest: uploaded fio
results give the derived figures and the held-out check, and the drive is saved to the catalog folder."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import FileUploader

from models.catalog import load_catalog
from tests.conftest import HANG_S, ROOT

AIO = sorted((ROOT / "calibration" / "ext" / "fio_sweeps" / "spdk661-aio").glob("qd*.json"))
SCRIPT = "from app.views import own_drive\nown_drive.render_section()\n"
MINE = ("Mine:\n  description: a drive already in the folder\n  capacity_tb: 1\n  read_bw_gbs: 3\n  write_bw_gbs: 2\n"
        "  read_kiops: 500\n  write_kiops: 100\n  read_latency_us: 80\n  write_latency_us: 20\n")


def _page(files: list[Path], name: str, base: str) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=HANG_S)
    at.run()
    cast(FileUploader, at.get("file_uploader")[0]).set_value([(f.name, f.read_bytes(), "application/json") for f in files])
    at.text_input(key="own_drive:name").input(name)
    at.selectbox(key="own_drive:base").set_value(base)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_uploaded_results_give_the_figures_the_check_and_a_saved_drive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "drives.yaml").write_text(MINE)
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    at = _page([AIO[0], AIO[4], AIO[-1]], "AIO-drive", "P4510-4TB")
    derived = at.dataframe[0].value
    assert derived.set_index("field").loc["read_latency_us", "from"].startswith("qd001.json")
    check = at.dataframe[1].value
    assert set(check["point"]) == {"qd016.json job 'aio-randread-qd16' (group 0), QD 16"}
    errors = [float(e.rstrip("%")) for e in check["error"]]
    assert max(abs(e) for e in errors) < 15.0
    at.button(key="own_drive:save").click()
    at.run()
    assert any("every page now offers AIO-drive" in s.value for s in at.success)
    drives = load_catalog().drives
    assert "AIO-drive" in drives and "Mine" in drives


def test_bad_input_is_shown_with_its_field_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLASHPLAN_CATALOG_DIR", raising=False)
    at = _page([AIO[0]], "P4510-4TB", "(none)")
    assert not at.dataframe
    assert any("built-in catalog drive" in e.value for e in at.error), [e.value for e in at.error]
