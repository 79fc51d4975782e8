"""The Size page's failure states, through Streamlit's AppTest (no browser)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import forms
from tests.conftest import HANG_S

MAIN = str(Path(__file__).resolve().parent.parent.parent / "app" / "main.py")
SMALL_RUN = {"target_rel_ci": 0.05, "max_wall_s": 60.0, "max_ios": 12_000, "warmup_ios": 2_000}


@pytest.fixture(autouse=True)
def small_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLASHPLAN_APP_WORKERS", "1")
    monkeypatch.setenv("FLASHPLAN_DB_URL", f"sqlite:///{tmp_path / 'library.sqlite'}")
    label = next(iter(forms.PRECISIONS))
    monkeypatch.setitem(forms.PRECISIONS, label, SMALL_RUN)


@pytest.mark.slow
def test_size_page_shows_every_failure_state_with_the_rebuild() -> None:
    at = AppTest.from_file(MAIN, default_timeout=HANG_S)
    at.run()
    at.multiselect(key="size:faults:drives").set_value([1])
    at.run()
    at.checkbox(key="size:faults:rebuild").check()
    at.run()
    at.number_input(key="size:faults:rate").set_value(300.0)
    at.number_input(key="size:faults:slo").set_value(2000.0)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="size:run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(h.value == "Failure states" for h in at.subheader)
    shown = " ".join(m.value for m in at.markdown)
    for state in ("**healthy**", "**degraded**", "**rebuilding**", "**Rebuild:**", "**Lowest SLO margin:**"):
        assert state in shown, shown
    tables = [d.value for d in at.dataframe if list(d.value.columns)[:2] == ["metric", "value"]]
    assert len(tables) >= 3  # one per state (the sizing's own table may be one more)
    course = next(json.loads(el.proto.spec) for el in at.get("plotly_chart") if "failure" in json.loads(el.proto.spec)["layout"]["title"]["text"])
    progress = next(t for t in course["data"] if t["name"].startswith("rebuild progress"))
    y = progress["y"]
    values = np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]) if isinstance(y, dict) else np.asarray(y)
    assert values.min() == 0 and values.max() == 100


def test_a_data_loss_is_shown_not_simulated() -> None:
    at = AppTest.from_file(MAIN, default_timeout=HANG_S)
    at.run()
    at.multiselect(key="size:faults:drives").set_value([0, 1])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button(key="size:run").disabled
    assert "data loss" in " ".join(str(e.value) for e in at.error) + " ".join(str(c.value) for c in at.caption) + \
        " ".join(str(m.value) for m in at.markdown)
