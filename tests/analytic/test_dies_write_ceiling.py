"""The die model's controller ceiling comes from the drive's figures, so each operation keeps its own ceiling.

A read holds the controller 1 / read IOPS; a write command 1 / the higher of the read and write IOPS
(``sim.route.flash.controller_write_kiops``): a drive measured with more write than read IOPS (fresh, or with a
large write cache) then reaches its write figure instead of being clipped at the read one, in both solvers; reads
keep the read figure; a drive whose writes are slower than its reads is unchanged (its programs limit writes).
"""

from __future__ import annotations

import pytest

from calibration.ext.die_solvers import scenario_for
from models.catalog import lookup
from models.hardware import FlashDeviceSpec
from models.scenario import Scenario
from models.topology import DirectNvme
from sim.analytic import evaluate
from sim.des.engine import simulate
from sim.route.flash import controller_write_kiops, die_layout

WRITE_KIOPS = 600.0


def _drive_scenario(qd: int, read_fraction: float) -> Scenario:
    """The P3700 with a write figure above its 460K read IOPS (and the write bandwidth to carry it)."""
    spec = lookup("drives", "P3700-800GB")
    faster = spec.model_copy(update={"write_kiops": WRITE_KIOPS, "write_bw_gbs": 4.0, "random_write_bw_gbs": None})
    sc = scenario_for("drives", "P3700-800GB", qd, 10_000)
    return sc.model_copy(update={"topology": sc.topology.model_copy(update={"drive": faster}),
                                 "workload": sc.workload.model_copy(update={"read_fraction": read_fraction})})


def test_the_ceiling_is_the_higher_of_the_read_and_write_figures() -> None:
    for name in ("P3700-800GB", "P4510-4TB", "ES4G"):
        spec = lookup("drives", name)
        layout = die_layout(spec)
        assert layout.write_kiops == controller_write_kiops(spec) == layout.controller_kiops == spec.read_kiops
    topo = _drive_scenario(1, 0.0).topology
    assert isinstance(topo, DirectNvme) and isinstance(topo.drive, FlashDeviceSpec)
    layout = die_layout(topo.drive)
    assert (layout.controller_kiops, layout.write_kiops) == (460.0, WRITE_KIOPS)


def test_writes_reach_their_own_figure_above_the_read_iops() -> None:
    """Writes at depth: the fast path and the DES reach the 600K write figure (not the 460K read one) and agree."""
    sc = _drive_scenario(128, 0.0)
    fast = evaluate(sc)
    assert 0.95 * WRITE_KIOPS * 1e3 < fast.iops <= WRITE_KIOPS * 1e3 * (1 + 1e-9)
    des = simulate(sc)
    assert des.iops.value == pytest.approx(fast.iops, rel=0.05)


def test_reads_keep_the_ceiling_their_dies_give() -> None:
    """Reads at depth stay at the rated read IOPS (the controller's read ceiling)."""
    fast = evaluate(_drive_scenario(256, 1.0))
    assert 0.9 * 460e3 < fast.iops <= 460e3 * (1 + 1e-9)
