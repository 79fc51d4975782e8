"""Shared test helpers: small, fast run settings and paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

FAST_RUN = {"run.max_ios": 30_000, "run.warmup_ios": 2_000, "run.min_batches": 10, "run.target_rel_ci": 0.03}


def fast(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run-setting overrides for a quick simulation, plus any extra overrides."""
    return {**FAST_RUN, **(overrides or {})}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run long simulations marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    # long simulations are opt-in (DEVELOPERS guide: keep them behind an explicit flag)
    skip_slow = pytest.mark.skip(reason="long simulation: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
