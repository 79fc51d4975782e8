"""Shared test helpers: small, fast run settings and paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

FAST_RUN = {"run.max_ios": 30_000, "run.warmup_ios": 2_000, "run.min_batches": 10, "run.target_rel_ci": 0.03}


def fast(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run-setting overrides for a quick simulation, plus any extra overrides."""
    return {**FAST_RUN, **(overrides or {})}


def steady_examples() -> list[Path]:
    """examples/*.yaml with a steady workload: a profile (load over time) has no single steady state,
    no run-wide confidence interval and no one fast-path answer (tests/des/test_profile.py covers it)."""
    import yaml

    return [p for p in sorted(EXAMPLES.glob("*.yaml"))
            if (yaml.safe_load(p.read_text(encoding="utf-8")).get("workload") or {}).get("kind") != "profile"]
