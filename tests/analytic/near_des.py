"""The one check the die-tail tests make of a fast-path figure against a DES metric: inside the DES's 95% interval
widened by a tolerance (tests only)."""

from __future__ import annotations

from typing import Any


def assert_near_ci(value: float, metric: Any, tolerance: float, *context: object) -> None:
    """``value`` within ``tolerance`` (a fraction) beyond ``metric``'s 95% confidence interval."""
    assert metric.ci95 is not None, context
    lo, hi = metric.ci95
    assert (1 - tolerance) * lo <= value <= (1 + tolerance) * hi, (*context, value, lo, hi)
