"""Reads spanning several dies next to another workload's programs, fast path against the DES."""

from __future__ import annotations

import pytest

from models.scenario import Scenario
from sim.analytic import evaluate
from sim.analytic.dies import slowest_rest_us

BACKUP = {"name": "backup", "kind": "open", "rate_iops": 200, "read_fraction": 1.0, "block_size_kib": 1024,
          "access": "sequential"}
WRITES = {"name": "writes", "kind": "open", "rate_iops": 26_000, "read_fraction": 0.0, "block_size_kib": 4,
          "access": "random"}


def _backup_next_to_writes(alone: bool = False, seed: int = 1, max_ios: int = 40_000) -> Scenario:
    """One PM1733 under the dies model: 1 MiB sequential reads (64 pages, 64 dies at once) at 200 IOPS next to
    26,000 random 4 KiB writes per second, whose programs keep about a tenth of the dies busy (``alone``: no writes)."""
    load = {"workload": {k: v for k, v in BACKUP.items() if k != "name"}} if alone else {"workloads": [WRITES, BACKUP]}
    return Scenario.model_validate({
        "name": "dies: 1 MiB sequential reads next to random writes", "device_model": "dies",
        "topology": {"kind": "direct_nvme", "host": {"stack": "none"}, "drive": "PM1733-1.92TB", "drives": 1,
                     "adapter": "EJ1Y", "adapters": 1, "layout": "jbod"},
        **load,
        "run": {"seed": seed, "max_ios": max_ios, "target_rel_ci": 1e-4, "max_wall_s": 3_600.0},
    })


def test_a_read_spanning_many_dies_waits_for_the_longest_program_rest_in_both_solvers() -> None:
    """Each of the 64 dies a 1 MiB read takes is programming with chance ~0.11, so the read waits for the longest of
    ~7 program rests (~790 us), not for one. DES backup means at seeds 1..5 (40,000 I/Os): 1,192, 1,158, 1,201,
    1,148, 1,190 us (spread +-2.5% about 1,178; each run's own 95% CI about +-3.5%); the fast path gives 1,223 (it
    gave 432 before the fork/join's wait for programs counted under dies). 12% covers the seeds' spread, the CI and
    the fast path's +4% with room; the writes (acknowledged from the cache) agree closely."""
    from sim.des.engine import simulate

    scenario = _backup_next_to_writes()
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.workloads is not None and des.workloads is not None
    backup_fast = fast.workloads["backup"].latency_mean_us
    backup_des = des.workloads["backup"].latency_mean_us.value
    assert backup_fast == pytest.approx(backup_des, rel=0.12)
    assert fast.workloads["writes"].latency_mean_us == pytest.approx(des.workloads["writes"].latency_mean_us.value, rel=0.10)
    # the wait is the fork/join's: well above one page's mean wait for a program (p x mean rest)
    alone = evaluate(_backup_next_to_writes(alone=True))
    assert backup_fast - alone.latency_mean_us > 500.0


@pytest.mark.parametrize("cv", [0.0, 0.3])
def test_slowest_rest_is_one_rest_for_one_page_and_bounded_by_the_program_for_many(cv: float) -> None:
    """k = 1: the chance of meeting a program times its mean rest E[T^2] / 2E[T] = T (1 + cv^2) / 2. Many pages all
    meeting programs: about the longest program (for a fixed T exactly T k / (k + 1)), never beyond T's tail."""
    mean = 700.0
    one = slowest_rest_us(1.0, 0.2, mean, cv)
    assert one == pytest.approx(0.2 * mean * (1 + cv * cv) / 2, rel=0.01)
    assert slowest_rest_us(8.0, 0.2, mean, cv) > one
    many = slowest_rest_us(64.0, 1.0, mean, cv)
    if cv == 0:
        assert many == pytest.approx(mean * 64 / 65, rel=1e-9)
    else:
        assert mean < many < 3.0 * mean


def test_a_spanning_read_waits_for_the_longest_of_its_own_workloads_programs_on_its_dies() -> None:
    """One workload of 256 KiB random I/Os, 70% reads, at 4,000 IOPS on one PM1733 under dies: a read's 16 pages each
    find one of the workload's own programs with chance ~0.0055, so it waits for ~16 times one page's wait. DES read
    means at seeds 1..4 (20,000 I/Os): 312.1, 314.9, 314.3, 314.3 us (spread +-0.5%); the fast path gives 283 (-9.6%:
    the rest is the read channel's queue, the fork/join's other waits still left out) where it gave 251 (-20%) with
    one page's wait; 12% covers the -9.6% and the seeds' spread, not the old -20%."""
    from sim.des.engine import simulate

    scenario = Scenario.model_validate({
        "name": "dies: 256 KiB random mix", "device_model": "dies",
        "topology": {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30", "stack": "linux_nvme"},
                     "drive": "PM1733-1.92TB", "drives": 1, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 1,
                     "layout": "jbod"},
        "workload": {"kind": "open", "rate_iops": 4_000, "read_fraction": 0.7, "block_size_kib": 256, "access": "random"},
        "run": {"seed": 1, "max_ios": 20_000, "target_rel_ci": 0.01},
    })
    fast = evaluate(scenario)
    des = simulate(scenario)
    assert fast.read_latency_mean_us == pytest.approx(des.read_latency_mean_us.value, rel=0.12)
    assert fast.write_latency_mean_us == pytest.approx(des.write_latency_mean_us.value, rel=0.05)


@pytest.mark.parametrize(("drive", "qd", "read_fraction", "kib", "access"), [
    ("P4510-4TB", 16, 0.7, 64, "random"), ("ES4G", 8, 0.67, 64, "random"), ("P4510-4TB", 8, 0.5, 64, "sequential")])
def test_reads_over_several_pages_among_their_own_programs_have_page_by_page_tails(
        drive: str, qd: int, read_fraction: float, kib: int, access: str) -> None:
    """One workload mixing reads of several pages with writes: each page waits at its own die (its queue and the rest
    of one program operation met there, ``DieGroupLoad.page_wait_us``), the read for the slowest page
    (``spanning_read_above``). Taking one die's law with the slowest-of-k mean made the p99 +68..+100% and the p99.9
    +72..+182% here (ES5F 128 KiB: +178%; the 8 x ES4C 256 KiB case +104%); now p99 +2..+8%, p99.9 +1..+12%
    (DES 30,000 I/Os). Bounds: the issue's 15% at p99, 25% at p99.9."""
    from calibration.ext.die_solvers import scenario_for
    from sim.des.engine import simulate

    base = scenario_for("drives", drive, qd, 30_000, read_fraction=read_fraction)
    sc = base.model_copy(update={"workload": base.workload.model_copy(update={"block_size_kib": float(kib), "access": access})})
    fast, des = evaluate(sc), simulate(sc)
    assert fast.tail_method == "dies"
    assert des.latency_p99_us.value is not None and des.latency_p999_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=0.15)
    assert fast.latency_p999_us == pytest.approx(des.latency_p999_us.value, rel=0.25)


def test_shared_dies_keep_the_one_die_law_for_reads_over_several_pages() -> None:
    """eXFlash (reads and programs share the dies: programs queue with the reads) keeps the one-die law: 64 KiB 67/33 at
    QD16, fast p99 16,072 us against the DES's 15,258 (+5%); page by page it came out 23,146 (+52%)."""
    from calibration.ext.die_solvers import scenario_for
    from sim.des.engine import simulate

    base = scenario_for("dimms", "eXFlash-400GB", 16, 30_000, read_fraction=0.67)
    sc = base.model_copy(update={"workload": base.workload.model_copy(update={"block_size_kib": 64.0})})
    fast, des = evaluate(sc), simulate(sc)
    assert des.latency_p99_us.value is not None
    assert fast.latency_p99_us == pytest.approx(des.latency_p99_us.value, rel=0.15)
