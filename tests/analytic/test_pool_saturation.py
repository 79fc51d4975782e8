"""A namespace pool whose holding time grows with the load (the planner's "4 x ES5F, 1 ns/drive,
ibmi_mirror, 1 x EJ1X", open 70/30 4 KiB under ``--device-model dies``).

Under dies a read that finds its die programming waits out the rest of the program operation while it holds its
namespace slot, so the slot's hold grows with the load and the 32 slots of each namespace fill near 828K IOPS, far
below Xmax (1.67M IOPS: zero-load holds). The DES says unstable at 850K (it sustains 825K); the fast path used to
answer stable there: its pipeline blocking estimate stood in for a pool wait that was infinite. (With a write's
NAND work held as one 686 us program, before the program operations of tPROG, the slots filled near 735K.) Small
budgets (30,000 I/Os per DES run). The fast path's bound Xmax is that rate (``Network.capacities``: a limit's slots
fill where its hold at the load fills them), not slots / zero-load hold.
"""

from __future__ import annotations

from typing import Any

import pytest

from models.scenario import Scenario, scenario_from_data
from sim.analytic import evaluate
from sim.des.engine import simulate

CANDIDATE: dict[str, Any] = {
    "name": "4 x ES5F, 1 ns/drive, ibmi_mirror, 1 x EJ1X",
    "device_model": "dies",
    "run": {"max_ios": 30000, "warmup_ios": 2000, "min_batches": 20, "seed": 1, "target_rel_ci": 0.05},
    "topology": {"kind": "direct_nvme", "adapter": "EJ1X", "adapters": 1, "chunk_kib": 256, "drive": "ES5F", "drives": 4,
                 "host": {"model": "Power10-S1024-LPAR32", "stack": "ibmi_nvme"}, "layout": "ibmi_mirror",
                 "mirror_protection": "drive", "namespaces": {"per_drive": 1, "queue_depth": 32},
                 "nvme_queues": {"count": 32, "depth": 1024}},
    "workload": {"kind": "open", "access": "random", "block_size_kib": 4.0, "rate_iops": 850000.0, "read_fraction": 0.7},
}


def candidate(rate_iops: float, device_model: str = "dies") -> Scenario:
    return scenario_from_data(CANDIDATE, {"workload.rate_iops": rate_iops, "device_model": device_model})


def test_a_namespace_pool_that_fills_below_xmax_is_unstable_in_both_solvers() -> None:
    """850K IOPS: both solvers unstable at drive*.ns0, the fast path's saturation rate (where the slots fill) within
    3% of the throughput the DES sustains while its queue grows (828K against 825K); it is the bound Xmax, set by the
    namespace, far below the 1.67M IOPS of the zero-load holds."""
    fast = evaluate(candidate(850_000))
    assert not fast.stable
    assert fast.bottleneck.endswith(".ns0")
    assert fast.utilization[fast.bottleneck] == pytest.approx(1.0)
    assert fast.bounds.x_max_iops == pytest.approx(fast.iops, rel=1e-6)
    assert fast.bounds.bottleneck.endswith(".ns0")
    assert 750_000 < fast.iops < 850_000
    des = simulate(candidate(850_000))
    assert des.validity == "unstable"
    assert des.bottleneck.endswith(".ns0")
    assert fast.iops == pytest.approx(des.iops.value, rel=0.03)


def test_below_saturation_the_pool_wait_grows_as_in_the_des() -> None:
    """790K IOPS (94% of the slots in the fast path, 92% in the DES): stable in both, the mean latency and the write
    latency (a write holds its slot ~15 us, so it is mostly the wait for a slot) within 10% / 15% of the DES;
    the fast path's wait keeps growing towards saturation (the write latency at 818K several times 790K's)."""
    near = candidate(790_000)
    fast, des = evaluate(near), simulate(near)
    assert fast.stable and des.validity != "unstable"
    assert fast.utilization["drive0.ns0"] > 0.9
    assert fast.latency_mean_us == pytest.approx(des.latency_mean_us.value, rel=0.10)
    assert fast.write_latency_mean_us == pytest.approx(des.write_latency_mean_us.value, rel=0.15)
    closer = evaluate(candidate(818_000))
    assert closer.stable
    assert closer.write_latency_mean_us > 5 * fast.write_latency_mean_us


def test_the_pooled_device_model_keeps_the_candidate_stable() -> None:
    """Pooled, the same candidate is stable at 750K (no program met inside the read's hold: the DES's 84%)."""
    fast = evaluate(candidate(750_000, "pooled"))
    assert fast.stable
    assert 0.75 < fast.utilization["drive0.ns0"] < 0.95


def test_analyze_names_the_filling_pool_as_the_bound() -> None:
    """`flashplan analyze`'s first line for it: the offered rate exceeds Xmax, the rate where drive0.ns0's slots fill."""
    from sim.cli.analyze import unstable_line

    fast = evaluate(candidate(850_000))
    line = unstable_line(fast)
    assert line.startswith("UNSTABLE: the offered rate exceeds Xmax = ")
    assert f"{fast.iops:,.0f}" in line and "drive0.ns0" in line


def test_a_profile_interval_past_the_filling_pool_counts_its_backlog_from_that_rate() -> None:
    """A profile interval at 850K: overloaded, its backlog (850K - the rate where the slots fill, Xmax) x its length;
    the 600K interval beside it is stable."""
    from models.workload import ProfileWorkload
    from sim.plan.profile_fast import estimate_interval

    data = {**CANDIDATE, "workload": {"kind": "profile", "access": "random", "block_size_kib": 4.0, "read_fraction": 0.7,
                                      "intervals": [{"duration_s": 0.5, "rate_iops": 600000.0},
                                                    {"duration_s": 0.5, "rate_iops": 850000.0}]}}
    sc = scenario_from_data(data)
    profile = sc.workload
    assert isinstance(profile, ProfileWorkload)
    calm, over = estimate_interval(sc, profile, 0), estimate_interval(sc, profile, 1)
    assert calm.fast is not None and calm.fast.stable
    assert over.fast is not None and not over.fast.stable
    expected = (850_000 - over.fast.iops) * 0.5
    assert 0 < expected < 850_000 * 0.5 * 0.1
    assert f"~{expected:,.0f} I/Os" in over.note and "drive0.ns0" in over.note


def test_a_closed_loop_backs_off_where_the_subchannel_floor_fills() -> None:
    """Pooled, closed: examples/s4_zvm_edev_aliases.yaml at 70% reads (20 jobs on 5 subchannels; a read's pages
    each may wait out a program while the subchannel is held). The blocking estimate used to hide the full
    subchannels (fast 69,206 IOPS, +17% against the DES's ~59K); the closed solver now stays where the hold floor
    keeps them below full: IOPS and mean within 5% of the DES."""
    from pathlib import Path

    from models import load_scenario, with_overrides

    path = Path(__file__).resolve().parents[2] / "examples" / "s4_zvm_edev_aliases.yaml"
    sc = with_overrides(load_scenario(path), {"workload.read_fraction": 0.7, "run.max_ios": 40_000})
    fast, des = evaluate(sc), simulate(sc)
    assert fast.stable
    assert fast.iops == pytest.approx(des.iops.value, rel=0.05)
    assert fast.latency_mean_us == pytest.approx(des.latency_mean_us.value, rel=0.05)
