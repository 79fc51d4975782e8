"""Response times of the web app's answers in a real browser: ``python -m tests.browser.timings``.

Starts the app headless (as tests/app/test_app_browser.py does), then times, from the click to the
answer on screen, with the pages' defaults and a cold cache: Size it (the seed-000 NVMe RAID-10
under YCSB, Quick precision; the first run also starts the worker processes, so it is timed again
with another seed), a What-if sweep on the fast path and on the simulation (drives
4, 8, 12, 16; Quick), Plan (the IBM i OLTP requirements), the Consolidation example's simulation
(its file's budget) and the Load over time example's peak interval (a day of hourly intervals).
Prints one line per answer. The browser tests of tests/app/test_app_browser_pages.py time their
pages' main actions the same way, into test-artifacts/browser-timings.txt.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.browser.server import HANG_MS, go, idle, launch, set_number, streamlit_server


def _timed(page: Any, click: Any, wait: Any, timeout_ms: float = HANG_MS) -> float:
    start = time.monotonic()
    click()
    wait.first.wait_for(timeout=timeout_ms)
    idle(page, timeout_ms)
    return time.monotonic() - start


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        env = {"FLASHPLAN_DB_URL": f"sqlite:///{Path(tmp) / 'library.sqlite'}"}
        with streamlit_server(env, Path(tmp) / "streamlit.log") as url, sync_playwright() as pw:
            browser, page = launch(pw)
            page.goto(url)
            page.get_by_role("heading", name="Size a configuration").wait_for()
            idle(page)
            rows = []
            rows.append(("Size it (S1 NVMe RAID-10, YCSB, Quick)", _timed(
                page, page.get_by_role("button", name="Size it").click, page.locator('[data-testid="stMetric"]'))))
            set_number(page, "Seed", 2)  # a new run, the worker pool now warm
            rows.append(("Size it again (seed 2, workers warm)", _timed(
                page, page.get_by_role("button", name="Size it").click, page.locator('[data-testid="stMetric"]'))))
            go(page, "What-if", "What-if")
            rows.append(("What-if, fast path (drives 4, 8, 12, 16)", _timed(
                page, page.get_by_role("button", name="Run the sweep").click, page.get_by_role("button", name="Download CSV"))))
            page.get_by_text("Simulation (DES, with 95% CIs)").click()
            idle(page)
            rows.append(("What-if, simulation (drives 4, 8, 12, 16, Quick)", _timed(
                page, page.get_by_role("button", name="Run the sweep").click, page.get_by_role("button", name="Download CSV"))))
            go(page, "Plan", "Plan")
            rows.append(("Plan (IBM i OLTP, 3 finalists verified)", _timed(
                page, page.get_by_role("button", name="Plan", exact=True).click,
                page.get_by_text("Cheapest configuration that meets the requirements"))))
            go(page, "Consolidation", "Consolidation")
            rows.append(("Consolidation, simulate (OLTP + batch + backup, the file's budget)", _timed(
                page, page.get_by_role("button", name="Simulate (DES, per-workload latency with 95% intervals)").click,
                page.get_by_text("Simulation: each workload against its objectives"))))
            go(page, "Load over time", "Load over time")
            rows.append(("Load over time, simulate the peak interval (a day of hourly intervals)", _timed(
                page, page.get_by_role("button", name="Simulate the peak interval").click,
                page.get_by_text(re.compile(r"^Peak interval \d+ ")))))
            browser.close()
    for label, seconds in rows:
        print(f"{label}: {seconds:.1f} s")


if __name__ == "__main__":
    main()
