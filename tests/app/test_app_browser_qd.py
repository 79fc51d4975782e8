"""The Calibration page's queue-depth sweep in a real browser (streamlit run headless, Debian's chromium, Playwright).

Opens /calibration, waits for the sweep section's chart (the fast path draws it at once for the
default drive, the P3700, whose published AnandTech points are stars), picks a drive with no
published point and checks the page says so, then runs the simulation (40,000 I/Os per depth) and
checks that every point the page calls not final is named under the chart. A screenshot is saved as
test-artifacts/screenshots/qd-sweep.png.
"""

from __future__ import annotations

from pathlib import Path

from tests.browser.server import CHROMIUM, CHROMIUM_ARGS, choose, idle, page_text, plotly_rendered, screenshot, streamlit_server


def test_queue_depth_sweep_in_a_real_browser(tmp_path: Path) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    from playwright.sync_api import sync_playwright

    env = {"FLASHPLAN_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}", "FLASHPLAN_APP_WORKERS": "1"}
    with streamlit_server(env, tmp_path / "streamlit.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        try:
            page.goto(f"{url}/calibration")
            page.get_by_role("heading", name="Calibration").first.wait_for()
            idle(page, timeout_ms=180_000)  # the stored run's tables and parity plot come first
            page.get_by_text("Queue-depth sweep of one drive or DIMM").wait_for()
            assert plotly_rendered(page) >= 1
            chart = page.locator(".js-plotly-plot").filter(has_text="P3700-800GB")
            chart.first.wait_for()
            assert "published IOPS" in chart.first.inner_text()

            choose(page, "Drive or DIMM", "ES5F")
            page.get_by_text("No published queue-depth measurement of this device").wait_for()
            assert "published IOPS" not in page.locator(".js-plotly-plot").filter(has_text="ES5F").first.inner_text()

            page.get_by_text("Simulation (DES, with 95% CIs)").click()
            idle(page)
            page.get_by_role("button", name="Run the queue-depth sweep").click()
            page.locator(".js-plotly-plot").filter(has_text="(DES)").first.wait_for(timeout=180_000)
            idle(page, timeout_ms=180_000)
            text = page_text(page)
            assert "not final" not in text or "point(s) are not final answers" in text
            screenshot(page, "qd-sweep")
        except Exception:
            screenshot(page, "qd-sweep-failure")
            raise
        finally:
            browser.close()
