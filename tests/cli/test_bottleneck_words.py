"""One rule for the word "bottleneck" (``models.bottleneck.limits``): the CLI, the planner and the web app call the most
utilized component the bottleneck only when it is at least ``LIMITING_UTILIZATION`` busy; below, it is the busiest
component and the offered load sets the throughput."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from app.words import busiest_words, is_bottleneck
from models.bottleneck import LIMITING_UTILIZATION, limit_label, limits
from sim.cli.flashplan import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("busy, limiting", [(0.0, False), (0.221, False), (0.799, False), (0.8, True), (1.0, True),
                                            (math.nan, False)])
def test_the_app_and_the_cli_draw_the_line_at_one_utilization(busy: float, limiting: bool) -> None:
    assert limits(busy) is limiting and is_bottleneck(busy) is limiting
    assert limit_label("x", {"x": busy}).startswith("bottleneck") is limiting
    assert ("the bottleneck" in busiest_words("adapter2.uplink.to_host", busy)) is limiting
    assert LIMITING_UTILIZATION == 0.8


def test_a_lightly_loaded_configuration_names_its_busiest_component_not_a_bottleneck(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(ROOT / "examples/s1_linuxone_nvme_raid10.yaml")]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "busiest component" in x or x.startswith("bottleneck"))
    assert line.startswith("no bottleneck (nothing 80% busy); busiest component ("), line


def test_a_saturated_queue_is_the_bottleneck(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(ROOT / "examples/mm1.yaml")]) == 0  # rho = 0.9
    out = capsys.readouterr().out
    assert any(x.startswith("bottleneck: server") for x in out.splitlines()), out
