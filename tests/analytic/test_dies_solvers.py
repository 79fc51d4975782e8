"""The ``dies`` device model (issue 18): both solvers read the same die layout and agree on it.

Small budgets (10,000 reads per point); the full sweep over every catalog device is
``python -m calibration.ext.die_solvers`` (table in calibration/ext/DIE_LEVEL.md).
"""

from __future__ import annotations

import pytest

from calibration.ext.die_solvers import compare, scenario_for
from models.catalog import lookup
from sim.analytic import evaluate
from sim.route.describe import describe
from sim.route.flash import die_layout


@pytest.mark.parametrize(("section", "name", "qd"), [("drives", "P4510-4TB", 1), ("drives", "P4510-4TB", 16),
                                                     ("drives", "ES4C", 64), ("dimms", "eXFlash-400GB", 8),
                                                     ("dimms", "eXFlash-400GB", 256)])
def test_fast_path_agrees_with_the_des_on_dies(section: str, name: str, qd: int) -> None:
    """IOPS and mean within 5%, p99 within 15% (the issue's bounds; the full sweep: DIE_LEVEL.md)."""
    row = compare(section, name, qd, 10_000)
    d_iops, d_mean, d_p99, _ = row.diffs()
    assert abs(d_iops) < 0.05
    assert abs(d_mean) < 0.05
    assert abs(d_p99) < 0.15


def test_qd1_latency_is_the_datasheet_and_the_knee_is_gradual() -> None:
    """QD1: controller + tR + the drive link's 4 KiB transfer = the datasheet QD1 latency (the transfer
    counted once); latency already rises at QD16 (die collisions), while the IOPS reach the datasheet
    only at depth."""
    spec = lookup("drives", "P4510-4TB")
    qd1 = evaluate(scenario_for("drives", "P4510-4TB", 1, 10_000))
    assert qd1.latency_mean_us == pytest.approx(spec.read_latency_us, rel=0.01)
    qd16 = evaluate(scenario_for("drives", "P4510-4TB", 16, 10_000))
    assert qd16.latency_mean_us > 1.05 * qd1.latency_mean_us
    deep = evaluate(scenario_for("drives", "P4510-4TB", 256, 10_000))
    assert 0.95 * spec.read_kiops * 1e3 < deep.iops <= spec.read_kiops * 1e3 * (1 + 1e-9)


def test_reads_wait_behind_programs_in_both_solvers() -> None:
    """A 70/30 mix: reads find their die programming (a program holds its die N / write IOPS, 500 us on
    the P4510) and wait, in the DES and the fast path alike: the read latency rises well above the
    reads-only figure at the same depth."""
    from sim.des.engine import simulate

    base = scenario_for("drives", "P4510-4TB", 32, 10_000)
    mix = base.model_copy(update={"workload": base.workload.model_copy(update={"read_fraction": 0.7})})
    alone_fast, mix_fast, mix_des = evaluate(base), evaluate(mix), simulate(mix)
    assert mix_fast.read_latency_mean_us > 1.5 * alone_fast.read_latency_mean_us
    assert mix_fast.iops == pytest.approx(mix_des.iops.value, rel=0.05)
    assert mix_fast.read_latency_mean_us == pytest.approx(mix_des.read_latency_mean_us.value, rel=0.05)


def test_the_description_carries_the_layout_only_under_dies() -> None:
    sc = scenario_for("drives", "ES5F", 4, 10_000)
    dies = describe(sc).devices.dies  # type: ignore[union-attr]
    assert dies == die_layout(lookup("drives", "ES5F"))
    pooled = sc.model_copy(update={"device_model": "pooled"})
    assert describe(pooled).devices.dies is None  # type: ignore[union-attr]
    assert "device_model" not in pooled.model_dump()


def test_qd_sweep_under_dies_gives_the_die_level_tails() -> None:
    """`flashplan qd-sweep --device-model dies`: a reads-only fast sweep's p99 and p99.9 are the die-level
    estimate (tight at QD1: the datasheet latency plus the die's lognormal spread, far below the pooled
    model's screening p99); pooled keeps the planner's p99 and no p99.9; a bad model names the field."""
    from models.loading import BadInput
    from sim.plan.qd_sweep import qd_sweep

    dies = qd_sweep("P4510-4TB", [1, 16], device_model="dies")
    pooled = qd_sweep("P4510-4TB", [1, 16])
    spec = lookup("drives", "P4510-4TB")
    assert all(p.latency_p999_us is not None and p.latency_p99_us is not None for p in dies)
    assert all(p.latency_p999_us is None for p in pooled)
    qd1 = dies[0]
    assert qd1.latency_p99_us is not None and pooled[0].latency_p99_us is not None
    assert spec.read_latency_us < qd1.latency_p99_us < 1.3 * spec.read_latency_us < pooled[0].latency_p99_us
    with pytest.raises(BadInput) as err:
        qd_sweep("P4510-4TB", [1], device_model="die")
    assert "device_model" in str(err.value.problems)


def test_write_point_takes_idle_dies_oldest_first_and_waits_when_none() -> None:
    """The FTL's rule (sim/route/flash.py WritePoint): an idle die, the one idle longest; -1 while every die is
    busy; a die queued once however often it falls idle."""
    from sim.route.flash import WritePoint

    wp = WritePoint(3)
    busy = [False, True, False]
    assert wp.take(busy) == 0
    busy[0] = True
    assert wp.take(busy) == 2  # die 1 was busy when its turn came: dropped
    busy[2] = True
    assert wp.take(busy) == -1
    busy[1] = False
    wp.idle(1)
    wp.idle(1)
    assert wp.take(busy) == 1
    busy[1] = True
    assert wp.take(busy) == -1


@pytest.mark.parametrize(("section", "name", "qd", "read_fraction"), [("dimms", "eXFlash-400GB", 16, 0.0),
                                                                     ("dimms", "eXFlash-400GB", 16, 0.67),
                                                                     ("drives", "P4510-4TB", 32, 0.7),
                                                                     ("drives", "ES4C", 64, 0.67)])
def test_writes_on_the_write_point_agree_in_both_solvers(section: str, name: str, qd: int, read_fraction: float) -> None:
    """Programs on idle dies (DES) and as die locks met at random (fast path): IOPS and mean within 5%."""
    from calibration.ext.die_solvers import compare_mix

    row = compare_mix(section, name, qd, read_fraction, 10_000)
    d_iops, d_mean, _, _ = row.diffs()
    assert abs(d_iops) < 0.05
    assert abs(d_mean) < 0.05


def test_random_writes_reach_the_datasheet_write_iops_under_dies() -> None:
    """eXFlash (2-slot write cache, reads and programs on the same 24 dies): with programs on idle dies the DES
    sustains the datasheet's 44K random 4 KiB writes per DIMM (a random die left it at 14K, -68%)."""
    from sim.des.engine import simulate

    spec = lookup("dimms", "eXFlash-400GB")
    res = simulate(scenario_for("dimms", "eXFlash-400GB", 16, 10_000, read_fraction=0.0))
    assert res.iops.value == pytest.approx(spec.write_kiops * 1e3, rel=0.05)


def test_a_write_holds_the_controller_no_longer_than_its_acknowledgement() -> None:
    """eXFlash acknowledges writes in 5.0 us (seed 002 Figure 11) but its command-rate ceiling is 1 / 142K = 7.04 us
    per command: a write's time at the controller is the acknowledgement there, the ceiling's elsewhere."""
    from sim.route.flash import flash_parameters, write_command_us

    for section, name in (("dimms", "eXFlash-400GB"), ("drives", "P4510-4TB")):
        spec = lookup(section, name)
        d, p = die_layout(spec), flash_parameters(spec, "random")
        assert write_command_us(d, p) == min(p.write_ack_us, 1e3 / spec.read_kiops)
    exflash = lookup("dimms", "eXFlash-400GB")
    assert write_command_us(die_layout(exflash), flash_parameters(exflash, "random")) == pytest.approx(5.0)
