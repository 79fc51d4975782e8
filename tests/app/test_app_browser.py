"""The web app in a real browser: streamlit run headless, Debian's chromium driven by Playwright.

One walk through every page, as a pre-sales engineer would: a wrong value shows its
inline error, a sizing shows its metrics and plotly charts, the scenario is saved and
opened again from the library, two configurations are compared, a what-if sweep and a
plan run, the calibration page opens. A screenshot of each page is saved under
test-artifacts/screenshots/. ``make test`` installs chromium when it is missing; without
it this test fails rather than skips. Each check waits for what the page shows (bounded by
tests/browser/server.py's ``HANG_MS``, a guard against a hung app only), never for a time.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.server import (
    CHROMIUM,
    SCREENSHOTS,
    go,
    idle,
    launch,
    plotly_rendered,
    screenshot,
    set_number,
    set_text,
)


def _number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text.split()[0]))


@pytest.mark.slow
def test_every_page_in_a_real_browser(app_url: str) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    from playwright.sync_api import expect, sync_playwright

    (SCREENSHOTS / "failure.png").unlink(missing_ok=True)
    shots: list[Path] = []
    with sync_playwright() as pw:
        browser, page = launch(pw)
        try:
            page.goto(app_url)
            page.get_by_role("heading", name="Size a configuration").wait_for()
            idle(page)

            # an impossible value: the error names the field and the allowed range, under the field
            set_number(page, "Drives", 0)
            error = page.locator('[data-testid="stAlert"]').filter(has_text="topology.drives")
            error.first.wait_for()
            assert "Allowed: 1 .. 256" in error.first.inner_text()
            expect(page.get_by_role("button", name="Size it")).to_be_disabled()  # waits for the rerun, as a user would
            shots.append(screenshot(page, "size-invalid-input"))
            set_number(page, "Drives", 4)
            expect(error).to_have_count(0)

            # a sizing: metrics with their intervals, the utilization chart and the latency curve
            set_text(page, "Scenario name", "Browser test option")
            page.get_by_role("button", name="Size it").click()
            metrics = page.locator('[data-testid="stMetric"]')
            metrics.first.wait_for()
            idle(page)
            iops = metrics.filter(has_text="IOPS").first.locator('[data-testid="stMetricValue"]').inner_text()
            assert _number(iops) > 0
            expect(page.get_by_text(re.compile(r"^95% CI ")).nth(3)).to_be_visible()  # at least 4
            assert plotly_rendered(page, at_least=2) >= 2
            shots.append(screenshot(page, "size"))

            # save it, find it in the library, open it again
            page.get_by_text("Save to library", exact=True).click()
            idle(page)
            page.get_by_role("button", name="Save", exact=True).click()
            idle(page)
            page.get_by_text("Saved as 'Browser test option'").first.wait_for()
            go(page, "Scenario library", "Scenario library")
            expect(page.get_by_role("combobox", name="Scenario", exact=True)).to_have_value("Browser test option")
            shots.append(screenshot(page, "library"))
            page.get_by_role("button", name="Open on the Size page").click()
            page.get_by_role("heading", name="Size a configuration").wait_for()
            idle(page)
            expect(page.get_by_role("textbox", name="Scenario name", exact=True)).to_have_value("Browser test option")

            # the seeds' comparison: NVMe RAID-10 against FCP LUNs on a DS8950F
            go(page, "Compare", "Compare configurations")
            page.get_by_role("button", name="Compare", exact=True).click()
            page.get_by_text(re.compile(r"^Conditions: ")).first.wait_for()
            idle(page)
            # the app's Quick precision stops at 10 s of wall time: on a loaded machine a result may be cut short,
            # and a cut-short result is not compared on price-performance (it says so instead)
            if page.locator('[data-testid="stAlert"]').filter(has_text="cut short").count():
                page.get_by_text("no price-performance: not compared").first.wait_for()
            else:
                page.get_by_text("better price-performance").first.wait_for()
            assert plotly_rendered(page) >= 1
            shots.append(screenshot(page, "compare"))

            # a what-if sweep on the fast path
            go(page, "What-if", "What-if")
            page.get_by_role("button", name="Run the sweep").click()
            idle(page)
            assert plotly_rendered(page) >= 1
            page.get_by_role("button", name="Download CSV").wait_for()
            shots.append(screenshot(page, "what-if"))

            # the planner's default requirements (IBM i OLTP)
            go(page, "Plan", "Plan")
            page.get_by_role("button", name="Plan", exact=True).click()
            page.get_by_text("Cheapest configuration that meets the requirements").first.wait_for()
            idle(page)
            shots.append(screenshot(page, "plan"))

            # the calibration: the stored run's parity plot when there is one, else the offer to run the quick set
            go(page, "Calibration", "Calibration")
            page.get_by_text("Run a system's quick set now").wait_for()
            if page.get_by_text(re.compile(r"^Stored run")).count():
                assert plotly_rendered(page) >= 1
            shots.append(screenshot(page, "calibration"))
        except Exception:
            screenshot(page, "failure")
            raise
        finally:
            browser.close()
    assert all(p.stat().st_size > 10_000 for p in shots)
    if not shots:
        pytest.fail("no screenshot taken")
