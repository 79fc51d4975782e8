"""The web app's first page runs a simulation through the public API (Streamlit AppTest, no browser)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def test_app_simulates_an_example() -> None:
    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=120)
    at.run()
    assert not at.exception
    at.selectbox[0].select_index([o for o in at.selectbox[0].options].index("mm1"))
    at.number_input[0].set_value(20_000)
    at.button[0].click()
    at.run()
    assert not at.exception
    labels = {m.label: m.value for m in at.metric}
    iops = float(labels["IOPS"].replace(",", ""))
    assert 80_000 < iops < 100_000  # M/M/1 at 90,000 IOPS offered
    assert at.caption[-1].value.startswith(("precision reached", "budget"))
