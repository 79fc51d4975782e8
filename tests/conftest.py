"""Shared test helpers: small, fast run settings and paths; the slow tests' scheduling; the browser tests' app."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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


settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
"""Hypothesis tests check properties, not speed: no per-example deadline or too-slow health check that a loaded
machine trips (a test's own ``@settings`` may still set them)."""

HANG_S = 600.0
"""A deadline that only guards against a hang (a process or page that will never answer): a run that is slow
because the machine is loaded finishes well inside it. Tests wait on a condition and use this as its bound."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the tests marked ``slow`` (long simulations, the browser walks) first: pytest-xdist's load scheduling
    hands the collection out in order (``make test``: 4 tests at a time to whichever process is free), so both
    processes start on them and the many short tests fill in around them, instead of one long test running
    alone at the end of the run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: the rest keep their order


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web app (``streamlit run app/main.py``, headless, its own empty scenario library) started once per test
    process for the browser tests, and stopped with its worker processes at the end; yields its URL."""
    from tests.browser.server import streamlit_server

    tmp = tmp_path_factory.mktemp("app")
    env = {"FLASHPLAN_DB_URL": f"sqlite:///{tmp / 'library.sqlite'}", "FLASHPLAN_APP_WORKERS": "2"}
    with streamlit_server(env, tmp / "streamlit.log") as url:
        yield url
