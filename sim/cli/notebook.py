"""What the what-if notebooks (notebooks/) share: the run budget switch and the PNG chart export.

``FLASHPLAN_NOTEBOOK_BUDGET=small|full`` (default ``full``): ``small`` caps each simulation at a
fixed I/O count, so a notebook runs in seconds and its results do not depend on how busy the
machine is (the tests use it); ``full`` runs every point to a 2% confidence interval.
``FLASHPLAN_NOTEBOOK_PNG_DIR=DIR`` also writes each notebook's main chart to ``DIR/<name>.png``
(plotly's kaleido >= 1 and a Chrome or Chromium it can drive).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

BUDGET_ENV = "FLASHPLAN_NOTEBOOK_BUDGET"
PNG_DIR_ENV = "FLASHPLAN_NOTEBOOK_PNG_DIR"
BUDGETS = ("small", "full")

SMALL_RUN: dict[str, Any] = {"max_ios": 20_000, "warmup_ios": 2_000, "target_rel_ci": 0.05, "max_wall_s": 10.0}
"""Small budget: max_ios binds (max_wall_s is only a safety net)."""
FULL_RUN: dict[str, Any] = {"target_rel_ci": 0.02, "max_wall_s": 20.0}
"""Full budget: every point to a +-2% 95% confidence interval."""


def notebook_budget() -> str:
    """The budget named by FLASHPLAN_NOTEBOOK_BUDGET; a clear error for anything but small or full."""
    budget = os.environ.get(BUDGET_ENV, "full").strip().lower()
    if budget not in BUDGETS:
        raise ValueError(f"{BUDGET_ENV} must be 'small' or 'full', got {budget!r}")
    return budget


def run_settings(budget: str) -> dict[str, Any]:
    """RunSettings fields for a budget (prefix them with ``run.`` to use them as scenario overrides)."""
    return dict(SMALL_RUN if budget == "small" else FULL_RUN)


def budget_note(budget: str) -> str:
    """The conclusions' line saying how the numbers were obtained."""
    return f"* Run budget: `{budget}`" + (
        f" (short runs: rerun with {BUDGET_ENV}=full for 2% intervals)." if budget == "small" else ".")


def export_png(figure: Any, name: str) -> Path | None:
    """Write ``figure`` to $FLASHPLAN_NOTEBOOK_PNG_DIR/<name>.png when that variable is set; else do nothing."""
    folder = os.environ.get(PNG_DIR_ENV)
    if not folder:
        return None
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        figure.write_image(path, width=figure.layout.width, height=figure.layout.height)
    except Exception as exc:  # kaleido missing, or no Chrome/Chromium for it to drive
        print(f"PNG export failed ({type(exc).__name__}: {exc}). It needs `pip install kaleido` (>= 1.0) and Chrome or "
              "Chromium: on Debian `apt-get install chromium`, or point BROWSER_PATH at a Chrome binary.")
        return None
    print(f"chart written to {path} ({path.stat().st_size:,} bytes)")
    return path
