"""What a customer must be able to trust, in a real browser (issue 24): /size opens the Size page, RAID-5 over
namespaces of one drive is flagged, an overloaded open load reads "unstable" with no price-performance and no "inf",
and a cut-short sweep point is marked as such. Debian's chromium driven by Playwright, like test_app_browser.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.browser.server import (
    CHROMIUM,
    CHROMIUM_ARGS,
    choose,
    go,
    idle,
    page_text,
    plotly_rendered,
    screenshot,
    set_number,
    streamlit_server,
)


def test_results_a_customer_can_trust_in_a_real_browser(tmp_path: Path) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    from playwright.sync_api import sync_playwright

    env = {"FLASHPLAN_DB_URL": f"sqlite:///{tmp_path / 'library.sqlite'}", "FLASHPLAN_APP_WORKERS": "2"}
    with streamlit_server(env, tmp_path / "streamlit.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        try:
            # /size is the Size page, not "Page not found"
            page.goto(f"{url}/size")
            page.get_by_role("heading", name="Size a configuration").wait_for()
            idle(page)
            assert "Page not found" not in page.content()

            # RAID-5 over 8 drives x 4 namespaces: one drive failure takes out 4 members
            choose(page, "Drive model", "ES5F")
            set_number(page, "Drives", 8)
            set_number(page, "Namespaces per drive", 4)
            choose(page, "Layout", "RAID-5")
            warning = page.locator('[data-testid="stAlert"]').filter(has_text="one drive failure takes out 4 members")
            warning.first.wait_for()
            assert "survives 0 drive failure(s), not 1" in warning.first.inner_text()
            assert "Adapters raised to 8" in page_text(page)  # one-drive carriers: the adapters followed the drives
            screenshot(page, "trust-raid5-namespaces")

            # 5M IOPS offered: unstable, with the capacity and what limits it; no $/KIOPS; never "inf"
            # (the fast path re-solves 32 members on each input: give it the budget the Size button's run gets, as the
            # suite's other worker loads the 2 cores)
            choose(page, "Load model", "Open: Poisson")
            set_number(page, "Arrival rate (IOPS)", 5_000_000)
            page.get_by_text(re.compile(r"unstable: offered 5,000,000 IOPS > capacity [\d,]+ IOPS of ")).first.wait_for(timeout=90_000)
            page.get_by_role("button", name="Size it").click()
            page.locator('[data-testid="stMetric"]').first.wait_for(timeout=90_000)
            idle(page)
            text = page_text(page)
            assert "⛔ unstable" in text
            price = page.locator('[data-testid="stMetric"]').filter(has_text="$ per KIOPS").first
            assert price.locator('[data-testid="stMetricValue"]').inner_text().strip() == "-"
            assert not re.search(r"\binf\b", text)
            screenshot(page, "trust-overload")

            # a sweep whose points stop on their I/O budget before their precision: marked cut short, hollow, not the best
            choose(page, "Load model", "Closed: jobs")
            choose(page, "Precision", "Custom")
            set_number(page, "Target ± (fraction)", 0.001)
            set_number(page, "Budget (I/Os)", 20_000)
            go(page, "What-if", "What-if")
            choose(page, "Parameter 1", "Drives")
            box = page.get_by_role("textbox", name="Drives: values", exact=True)
            box.fill("4, 8")
            box.press("Enter")
            idle(page)
            page.get_by_text("Simulation (DES, with 95% CIs)").click()
            idle(page)
            choose(page, "Simulation precision", "As set for the configuration")
            page.get_by_role("button", name="Run the sweep").click()
            page.get_by_text(re.compile(r"2 point\(s\) are not final answers")).first.wait_for(timeout=120_000)
            idle(page)
            assert plotly_rendered(page) >= 1
            assert "hollow markers" in page_text(page)
            screenshot(page, "trust-cut-short-sweep")
        except Exception:
            screenshot(page, "trust-failure")
            raise
        finally:
            browser.close()
