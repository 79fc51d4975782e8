"""What a customer reads at a glance on every page, in a real browser (streamlit run headless, Debian's chromium
driven by Playwright, the app started once per test process: ``app_url``).

* every page opens at its own address (``/sizing`` is the Size page, not "Page not found");
* Consolidation draws each workload against its objective (the figure with its 95% interval against the
  objective's line), each workload's throughput on its own scale, says "not final: cut short" for a run its
  budget stopped (never a plain "met"), and names components in the user's words, "the bottleneck" only for
  one that limits;
* Load over time handles a day of hourly intervals: the fast path's p99 for every interval against the
  objective, on a latency axis labelled in us / ms (no bare "2 ... 9" ticks), and the simulation of the peak
  interval only;
* the Size page's default preset (YCSB read-mostly, 256 threads) carries its calibrated think time and says so.

Screenshots go to test-artifacts/screenshots/ (``pages-*.png``); the time of each page's main action, from the
click to the answer on screen, to test-artifacts/browser-timings.txt. Each check waits for what the page shows
(bounded by tests/browser/server.py's ``HANG_MS``, a guard against a hung app only), never for a time.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.browser.server import (
    CHROMIUM,
    MAIN,
    ROOT,
    SCREENSHOTS,
    idle,
    launch,
    page_text,
    plotly_rendered,
    screenshot,
    set_number,
)

TIMINGS = ROOT / "test-artifacts" / "browser-timings.txt"

ADDRESSES = {"": "Size a configuration", "sizing": "Size a configuration", "size": "Size a configuration",
             "compare": "Compare configurations", "what-if": "What-if", "plan": "Plan", "consolidation": "Consolidation",
             "load-over-time": "Load over time", "calibration": "Calibration", "library": "Scenario library"}
"""Every page's address (app/main.py) and the title it shows."""

INTERNAL_NAME = re.compile(r"\b(?:adapter|drive|dimm|hba|lun|port)\d+\.[a-z_.]+")
"""A model component's internal name (``adapter2.uplink.to_host``): never shown where the user's words belong."""


def record(action: str, seconds: float) -> None:
    """One timing line in test-artifacts/browser-timings.txt (and on the test's output)."""
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    with TIMINGS.open("a", encoding="utf-8") as out:
        out.write(f"{action}: {seconds:.1f} s\n")
    print(f"{action}: {seconds:.1f} s")


def timed(page: Any, action: str, act: Callable[[], None], answer: Any) -> None:
    """Do ``act``, wait for ``answer`` to show and the app to be idle; record how long it took."""
    start = time.monotonic()
    act()
    answer.first.wait_for()
    idle(page)
    record(action, time.monotonic() - start)


@pytest.fixture
def browser_page(app_url: str) -> Iterator[Any]:
    assert CHROMIUM.exists(), "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page = launch(pw)
        try:
            yield page
        except Exception:
            screenshot(page, "pages-failure")
            raise
        finally:
            browser.close()


def chart_shot(plot: Any, name: str) -> None:
    """A screenshot of one chart (the page's own scrolls inside the app, so a full-page shot holds the viewport)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    plot.scroll_into_view_if_needed()
    plot.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def open_page(page: Any, url: str, heading: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=heading, exact=True).first.wait_for()
    idle(page)


def chart(page: Any, title: str) -> Any:
    """The plotly chart whose text holds ``title``, once drawn."""
    found = page.locator(".js-plotly-plot:has(.main-svg)").filter(has_text=title).first
    found.wait_for()
    return found


@pytest.mark.slow
def test_every_page_opens_at_its_address(app_url: str, browser_page: Any) -> None:
    page = browser_page
    for path, heading in ADDRESSES.items():
        start = time.monotonic()
        open_page(page, f"{app_url}/{path}", heading)
        record(f"open /{path}", time.monotonic() - start)
        assert page.get_by_text("Page not found").count() == 0, f"/{path} shows 'Page not found'"
        assert page.get_by_role("heading", name=heading, exact=True).first.is_visible()
        if path == "sizing":
            screenshot(page, "pages-sizing-address")


@pytest.mark.slow
def test_consolidation_judges_each_workload_against_its_objective(app_url: str, browser_page: Any) -> None:
    from playwright.sync_api import expect

    page = browser_page
    open_page(page, f"{app_url}/consolidation", "Consolidation")
    # before any simulation: each workload's throughput on its own scale, each objective against its line
    throughput = chart(page, "Throughput per workload")
    for panel in ("oltp: IOPS", "batch: IOPS", "backup: IOPS", "backup: MB/s"):
        expect(throughput).to_contain_text(panel)
    objectives = chart(page, "Objectives per workload")
    expect(objectives).to_contain_text("objective p99 latency <= 1 ms")
    expect(objectives).to_contain_text("objective MB/s >= 500")
    text = page_text(page)
    # a component in the user's words; 29% busy is not "the bottleneck"
    assert not INTERNAL_NAME.search(text), INTERNAL_NAME.search(text)
    assert "No bottleneck: the busiest component, NVMe adapter" in text
    assert "Bottleneck:" not in text

    # a budget that stops the run before its precision: every verdict says it is not final
    set_number(page, "Simulation budget (I/Os)", 30_000)
    timed(page, "Consolidation: Simulate (30,000 I/Os, cut short)",
          page.get_by_role("button", name="Simulate (DES, per-workload latency with 95% intervals)").click,
          page.get_by_text("Simulation: each workload against its objectives"))
    assert plotly_rendered(page, at_least=4) >= 4
    des = chart(page, "simulation (DES) with 95% intervals")
    expect(des).to_contain_text("not final: cut short")
    chart_shot(des, "pages-consolidation-objectives")
    chart_shot(chart(page, "Throughput per workload (DES"), "pages-consolidation-throughput")
    table = page.locator('[data-testid="stTable"]').last
    verdicts = table.locator("tbody tr td:last-child").all_inner_texts()
    assert len(verdicts) == 2 and all(v.startswith("not final: cut short") for v in verdicts), verdicts
    text = page_text(page)
    assert not INTERNAL_NAME.search(text), INTERNAL_NAME.search(text)
    assert "Bottleneck:" not in text or re.search(r"Bottleneck: [^\n]*\((8\d|9\d|1\d\d)% busy\)", text)
    screenshot(page, "pages-consolidation")


def latency_ticks(plot: Any) -> list[str]:
    """The tick labels of a chart's first y axis (the latency axis)."""
    return [t.strip() for t in plot.locator("g.ytick text").all_text_contents() if t and t.strip()]


@pytest.mark.slow
def test_load_over_time_handles_a_day_by_the_fast_path_and_simulates_the_peak(app_url: str, browser_page: Any) -> None:
    from playwright.sync_api import expect

    page = browser_page
    open_page(page, f"{app_url}/load-over-time", "Load over time")
    expect(page.locator(MAIN)).to_contain_text("24 intervals over 86400 s")
    estimates = chart(page, "p99 per interval against the objective")
    expect(estimates).to_contain_text("objective: p99 <= 2 ms")
    ticks = latency_ticks(estimates)
    assert ticks and all(re.fullmatch(r"[\d.,]+ (us|ms|s)", t) for t in ticks), ticks  # no bare "2 ... 9"
    text = page_text(page)
    assert re.search(r"would simulate about [\d,]+ I/Os", text)
    timed(page, "Load over time: Simulate the peak interval (a day of hourly intervals)",
          page.get_by_role("button", name="Simulate the peak interval").click,
          page.get_by_text(re.compile(r"^Peak interval 15 \(15:00 OLTP\): p99 ")))
    sentence = page.get_by_text(re.compile(r"^Peak interval 15 ")).first.inner_text()
    assert "against the p99 objective of 2 ms" in sentence
    assert re.search(r": (met|missed|uncertain|not final: [a-z ]+ \(so far: \w+\))\.$", sentence), sentence
    with_des = chart(page, "and the simulation of the peak")
    expect(with_des).to_contain_text("simulation of the peak interval")
    assert all(re.fullmatch(r"[\d.,]+ (us|ms|s)", t) for t in latency_ticks(with_des))
    expect(with_des).to_contain_text("objective: p99 <= 2 ms")
    chart_shot(with_des, "pages-load-over-time-day-chart")
    assert not INTERNAL_NAME.search(page_text(page))
    screenshot(page, "pages-load-over-time-day")


@pytest.mark.slow
def test_the_default_size_preset_carries_its_calibrated_think_time(app_url: str, browser_page: Any) -> None:
    from playwright.sync_api import expect

    page = browser_page
    open_page(page, f"{app_url}/sizing", "Size a configuration")
    expect(page.get_by_role("combobox", name="Workload preset", exact=True)).to_have_value(
        "YCSB read-mostly on PostgreSQL (256 threads)")
    caption = page.get_by_text(re.compile(r"Think time [\d.,]+ us per I/O")).first
    caption.wait_for()
    said = re.search(r"Think time ([\d.,]+) us", caption.inner_text())
    assert said is not None
    think = float(said.group(1).replace(",", ""))
    assert 400 < think < 600  # the fitted value (models/catalog/fitted.yaml), about 502 us
    box = page.get_by_role("spinbutton", name="Think time between I/Os (us)", exact=True)
    assert float(box.input_value().replace(",", "")) == pytest.approx(think, abs=0.05)
    metrics = page.locator('[data-testid="stMetric"]')
    timed(page, "Size: Size it (default preset, Quick)", page.get_by_role("button", name="Size it").click, metrics)
    iops = float(re.sub(r"[^0-9.]", "", metrics.filter(has_text="IOPS").first.locator(
        '[data-testid="stMetricValue"]').inner_text().split()[0]))
    # 256 threads each thinking ~502 us between I/Os: at most 256 / 502 us = 510,000 IOPS, not the 1.4 million of
    # threads issuing back to back
    assert 0 < iops < 256 / (think * 1e-6)
    screenshot(page, "pages-size-default-preset")


@pytest.fixture(scope="module", autouse=True)
def _fresh_timings() -> None:
    TIMINGS.unlink(missing_ok=True)
