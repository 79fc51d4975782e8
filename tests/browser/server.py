"""Start ``streamlit run app/main.py`` headless on a free loopback port, and drive Streamlit pages with Playwright.

The browser is Debian's chromium (``/usr/bin/chromium``, installed once by ``make browser``; ``chromium`` or
``chromium-browser`` on the PATH otherwise), launched by Playwright's sync API; ``playwright install`` is never needed.

Every wait here is on a condition (the server's health endpoint answers, an element shows, the app's script run is
over); ``HANG_MS`` bounds each of them only so that a hung app fails the test instead of blocking the suite: a page
that is slow because the machine is loaded still passes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEBIAN_CHROMIUM = Path("/usr/bin/chromium")


def find_chromium() -> Path:
    """Debian's chromium where apt puts it, else the first ``chromium``/``chromium-browser`` on the PATH (the
    Debian path, missing, when there is none: the tests then fail naming it)."""
    if DEBIAN_CHROMIUM.exists():
        return DEBIAN_CHROMIUM
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else DEBIAN_CHROMIUM


CHROMIUM = find_chromium()
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
HANG_MS = 600_000.0
START_TIMEOUT_S = HANG_MS / 1000


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def streamlit_server(env: dict[str, str], log: Path) -> Iterator[str]:
    """Run the app headless on a free loopback port; yields its URL; stops it (and its worker processes) afterwards."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"), "--server.headless", "true",
           "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", "--client.toolbarMode", "viewer"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {proc.returncode}:\n{log.read_text()[-3000:]}")
            # not listening yet: OSError
            with contextlib.suppress(OSError), urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer on {url} within {START_TIMEOUT_S:.0f} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield url
    finally:
        # the server and the simulation workers it spawned share the session started above
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def launch(pw: Any) -> tuple[Any, Any]:
    """Debian's chromium and a new page on it, every wait (actions, ``wait_for``, ``expect``) bounded by ``HANG_MS``."""
    from playwright.sync_api import expect

    expect.set_options(timeout=HANG_MS)
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(HANG_MS)
    return browser, page


def idle(page: Any, timeout_ms: float = HANG_MS) -> None:
    """Wait until the app has finished its current script run: the app reports its script as not running and
    Streamlit's "Running..." widget is gone. A rerun the last action asked for may not have reached the server
    yet (the browser sends it over the websocket): callers then wait for what that run shows, not for a time."""
    with suppress(Exception):  # a short run may be over before it is seen
        page.locator('[data-testid="stApp"]:not([data-test-script-state="notRunning"])').wait_for(state="attached",
                                                                                                    timeout=700)
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(state="attached", timeout=timeout_ms)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=timeout_ms)


def go(page: Any, link: str, heading: str) -> None:
    """Open a page from the sidebar and wait for its title."""
    page.get_by_role("link", name=link, exact=True).click()
    page.get_by_role("heading", name=heading, exact=True).first.wait_for(timeout=HANG_MS)
    idle(page)


INPUT_ATTEMPTS = 3
"""How often an input is entered again when the page lost it: an input made while a rerun the previous one asked
for had not yet reached the server (a loaded machine) can be reset by that rerun."""


def _number_holds(box: Any, value: float | int) -> bool:
    try:
        return float(str(box.input_value()).replace(",", "")) == float(value)
    except ValueError:
        return False


def set_number(page: Any, label: str, value: float | int) -> None:
    """Enter ``value`` in the number input labelled ``label`` and wait until the app has run with it (entered
    again while the page does not show it)."""
    box = page.get_by_role("spinbutton", name=label, exact=True)
    for _ in range(INPUT_ATTEMPTS):
        box.fill(str(value))
        box.press("Enter")
        idle(page)
        if _number_holds(box, value):
            return
    raise AssertionError(f"the number input {label!r} does not keep {value}: it shows {box.input_value()!r}")


def set_text(page: Any, label: str, value: str) -> None:
    box = page.get_by_role("textbox", name=label, exact=True)
    box.fill(value)
    box.press("Enter")
    idle(page)


def plotly_rendered(page: Any, at_least: int = 1, timeout_ms: float = HANG_MS) -> int:
    """Wait until ``at_least`` plotly charts are drawn as SVG (not just their containers); returns how many
    charts are on the page then."""
    page.locator(".js-plotly-plot:has(.main-svg)").nth(at_least - 1).wait_for(timeout=timeout_ms)
    return int(page.locator(".js-plotly-plot").count())


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def choose(page: Any, label: str, text: str) -> None:
    """Pick the first option of the selectbox labelled ``label`` that matches ``text`` (typed into its filter), and
    wait until the app has run with it (picked again while the selectbox does not show it)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    widget = page.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True))
    for _ in range(INPUT_ATTEMPTS):
        box.click()
        box.fill(text)
        page.keyboard.press("Enter")
        idle(page)
        if widget.count() != 1 or text.lower() in _shown(widget.first, box).lower():
            return
    raise AssertionError(f"the selectbox {label!r} does not keep {text!r}: it shows {_shown(widget.first, box)!r}")


def _shown(widget: Any, box: Any) -> str:
    """What a selectbox shows: its text, the value of its input and its value's title."""
    return " ".join([str(widget.inner_text()), str(box.input_value()),
                     str(widget.locator("[title]").evaluate_all("els => els.map(e => e.title).join(' ')"))])


MAIN = '[data-testid="stMain"]'


def page_text(page: Any) -> str:
    """The visible text of the app's main area."""
    return str(page.locator(MAIN).inner_text())
