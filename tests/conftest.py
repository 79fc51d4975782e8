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

    def kinds(data: dict[str, Any]) -> list[str]:
        return [(wl or {}).get("kind", "closed") for wl in data.get("workloads") or [data.get("workload")]]

    return [p for p in sorted(EXAMPLES.glob("*.yaml")) if "profile" not in kinds(yaml.safe_load(p.read_text(encoding="utf-8")))]


def profile_examples() -> list[Path]:
    """examples/*.yaml with a profile workload, alone or among several (the rest of ``steady_examples``)."""
    steady = set(steady_examples())
    return [p for p in sorted(EXAMPLES.glob("*.yaml")) if p not in steady]
