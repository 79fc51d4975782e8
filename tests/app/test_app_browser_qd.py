"""The Calibration page's queue-depth sweep in a real browser (streamlit run headless, Debian's chromium, Playwright).

Opens /calibration, waits for the sweep section's chart (the fast path draws it at once for the
default drive, the P3700, whose published AnandTech points are stars), picks a drive with no
published point and checks the page says so, then runs the simulation (40,000 I/Os per depth) and
checks that every point the page calls not final is named under the chart. A screenshot is saved as
test-artifacts/screenshots/qd-sweep.png. Each check waits for what the page shows, never for a time.
"""

from __future__ import annotations

import pytest

from tests.browser.server import CHROMIUM, choose, idle, launch, page_text, plotly_rendered, screenshot


@pytest.mark.slow
def test_queue_depth_sweep_in_a_real_browser(app_url: str) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser, page = launch(pw)
        try:
            page.goto(f"{app_url}/calibration")
            page.get_by_role("heading", name="Calibration").first.wait_for()
            idle(page)  # the stored run's tables and parity plot come first
            page.get_by_text("Queue-depth sweep of one drive or DIMM").wait_for()
            assert plotly_rendered(page) >= 1
            chart = page.locator(".js-plotly-plot").filter(has_text="P3700-800GB")
            expect(chart.first).to_contain_text("published IOPS")

            choose(page, "Drive or DIMM", "ES5F")
            page.get_by_text("No published queue-depth measurement of this device").wait_for()
            es5f = page.locator(".js-plotly-plot").filter(has_text="ES5F").first
            es5f.wait_for()
            expect(es5f).not_to_contain_text("published IOPS")

            page.get_by_text("Simulation (DES, with 95% CIs)").click()
            idle(page)
            page.get_by_role("button", name="Run the queue-depth sweep").click()
            page.locator(".js-plotly-plot").filter(has_text="(DES)").first.wait_for()
            idle(page)
            text = page_text(page)
            assert "not final" not in text or "point(s) are not final answers" in text
            screenshot(page, "qd-sweep")
        except Exception:
            screenshot(page, "qd-sweep-failure")
            raise
        finally:
            browser.close()
