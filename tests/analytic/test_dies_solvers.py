"""The ``dies`` device model: both solvers read the same die layout and agree on it.

Small budgets (10,000 reads per point); the full sweep over every catalog device is
``python -m calibration.ext.die_solvers`` (table in calibration/ext/DIE_LEVEL.md).
"""

from __future__ import annotations

from pathlib import Path

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
    assert pooled.model_dump()["device_model"] == "pooled"
    auto = sc.model_copy(update={"device_model": "auto"})  # the default: a drive gets its dies, and dumps leave it out
    assert describe(auto).devices.dies == dies  # type: ignore[union-attr]
    assert "device_model" not in auto.model_dump()


def test_qd_sweep_under_dies_gives_the_die_level_tails() -> None:
    """`flashplan qd-sweep --device-model dies`: a reads-only fast sweep's p99 and p99.9 are the die-level
    estimate (tight at QD1: the datasheet latency plus the die's lognormal spread, far below the pooled
    model's, whose service law is the engine's wide lognormal); pooled gives its own law's p99 and p99.9
    (``TAIL_METHODS``: ``pooled``); a bad model names the field."""
    from models.loading import BadInput
    from sim.plan.qd_sweep import qd_sweep

    dies = qd_sweep("P4510-4TB", [1, 16], device_model="dies")
    pooled = qd_sweep("P4510-4TB", [1, 16], device_model="pooled")
    assert qd_sweep("P4510-4TB", [1, 16]) == dies  # the default (auto) gives a drive its dies
    spec = lookup("drives", "P4510-4TB")
    assert all(p.latency_p999_us is not None and p.latency_p99_us is not None for p in dies)
    assert all(p.latency_p99_us is not None and p.latency_p999_us is not None and p.latency_p999_us > p.latency_p99_us
               for p in pooled)
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


def test_a_writes_nand_work_is_operations_of_one_program_time() -> None:
    """``ProgramOperations``: N / W of die time per write in operations of tPROG; ``OperationCount`` hands out whole
    operations whose running mean is the rule's, floor or ceiling each time, the same sequence every run."""
    from sim.route.flash import OperationCount, flash_parameters, program_operations

    for name, access in (("ES4C", "random"), ("ES5F", "random"), ("P4510-4TB", "random"), ("P4510-4TB", "sequential")):
        spec = lookup("drives", name)
        d, p = die_layout(spec), flash_parameters(spec, access)
        ops = program_operations(p, d)
        assert ops.operation_us == p.program_time_us
        assert ops.die_us_per_write == pytest.approx(d.dies / (p.program_units / p.program_time_us * 1e6) * 1e6)
        counter = OperationCount(ops.per_write)
        counts = [counter.next() for _ in range(10_000)]
        assert set(counts) <= {int(ops.per_write), int(ops.per_write) + 1}
        assert sum(counts) / len(counts) == pytest.approx(ops.per_write, abs=1e-3)
        again = OperationCount(ops.per_write)
        assert [again.next() for _ in range(10_000)] == counts
    es4c = program_operations(flash_parameters(lookup("drives", "ES4C"), "random"), die_layout(lookup("drives", "ES4C")))
    assert es4c.per_write > 9  # 1,480 dies at 320K writes/s: nine program times a write
    seq = program_operations(flash_parameters(lookup("drives", "P4510-4TB"), "sequential"), die_layout(lookup("drives", "P4510-4TB")))
    assert seq.per_write < 0.2  # a sequential stream at the write bandwidth: a page carries six writes


def test_large_reads_among_writes_on_many_dies_agree_in_both_solvers() -> None:
    """8 x ES4C RAID-10, 256 KiB random 50/50, 4 jobs x QD4 (hypothesis's draw that found the gap): reads span 16 dies
    and meet programming dies; with a write's work as nine 500 us operations, not one 4.6 ms hold, both solvers put
    the reads near the pooled model's (DES 358 us, fast 332; one hold gave 950 and 735, IOPS +20%): within 5%."""
    from models.scenario import scenario_from_data
    from sim.des.engine import simulate

    sc = scenario_from_data({
        "name": "es4c raid10 256k 50/50",
        "topology": {"kind": "direct_nvme", "host": {"model": "Power10-S1024-LPAR32"}, "drive": "ES4C", "drives": 8,
                     "adapter": "EJ1Y", "adapters": 2, "namespaces": {"per_drive": 2, "queue_depth": 32},
                     "nvme_queues": {"count": 32, "depth": 1024}, "layout": "raid10", "chunk_kib": 256,
                     "mirror_protection": "drive"},
        "workload": {"read_fraction": 0.5, "block_size_kib": 256.0, "access": "random", "kind": "closed", "jobs": 4,
                     "queue_depth": 4},
        "run": {"seed": 1, "warmup_ios": 4000, "max_ios": 30000},
        "device_model": "dies"})
    fast, des = evaluate(sc), simulate(sc)
    assert fast.iops == pytest.approx(des.iops.value, rel=0.05)
    assert fast.latency_mean_us == pytest.approx(des.latency_mean_us.value, rel=0.05)
    assert des.read_latency_mean_us.value < 500
    # and its tail page by page (``DieGroupLoad.page_wait_us``): fast p99 894 us against the DES's 843 at 40,000 I/Os
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=0.15)


def test_sequential_writes_hold_dies_for_whole_program_times() -> None:
    """S4's CP paging on one P4510 (seed 003 Table 3: 1,280 us per paging SSCH): its sequential writes program pages of
    tPROG each carrying about six writes, so the 7-page reads meet 500 us operations (one 79 us hold per write gave
    962 us, -25%): both solvers within 15% of the record, the fast path within 10% of the DES."""
    from models.scenario import load_scenario
    from sim.des.engine import simulate

    sc = load_scenario(Path(__file__).resolve().parents[2] / "calibration" / "scenarios" / "s4_paging.yaml")
    sc = sc.model_copy(update={"device_model": "dies", "run": sc.run.model_copy(update={"max_ios": 30_000})})
    fast, des = evaluate(sc), simulate(sc)
    assert des.latency_mean_us.value == pytest.approx(1280, rel=0.15)
    assert fast.latency_mean_us == pytest.approx(1280, rel=0.15)
    assert fast.latency_mean_us == pytest.approx(des.latency_mean_us.value, rel=0.10)
