"""How flashplan prints a measured or predicted number in tables and reports (CLI, web app, calibration)."""

from __future__ import annotations

import math


def format_number(value: float | None) -> str:
    """Thousands separators for large values, 3-4 significant digits for small ones, '-' for missing/NaN/inf."""
    if value is None or not math.isfinite(value):
        return "-"
    a = abs(value)
    if a >= 1e4:
        return f"{value:,.0f}"
    if a >= 100:
        return f"{value:,.1f}"
    if a >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"
