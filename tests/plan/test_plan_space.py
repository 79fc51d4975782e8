"""The planner's wide candidate space (sim/plan/space.py): its size, its validity, and that it contains
the planner's own grid."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from models.requirements import load_requirements
from sim.plan.planner import _screen, enumerate_candidates
from sim.plan.space import WideSpace, candidate, wide_candidates, wide_topologies

PLANS = Path(__file__).resolve().parent.parent.parent / "examples" / "plan"


@pytest.fixture(scope="module")
def ibmi() -> tuple[Any, list[Any], int]:
    req = load_requirements(PLANS / "ibmi_oltp.yaml")
    candidates, invalid = wide_candidates(req)
    return req, candidates, invalid


def test_ibmi_space_reaches_ten_thousand_valid_candidates(ibmi: tuple[Any, list[Any], int]) -> None:
    _, candidates, invalid = ibmi
    assert len(candidates) >= 10_000
    assert invalid > 0  # the topology rules refuse some combinations (odd mirror members, 1-drive mirrors)
    labels = [c.label for c in candidates]
    assert len(set(labels)) == len(labels)
    for c in candidates[::97]:  # every candidate is a validated, priced scenario of the platform
        topo = c.scenario.topology
        assert topo.kind == "direct_nvme" and topo.host.model == "Power10-S1024-LPAR32"
        assert topo.layout in ("ibmi_mirror",)  # protection: mirror
        assert topo.namespaces.per_drive <= topo.drive_spec.max_namespaces
        assert topo.drives <= 16 and c.capex_usd > 0 and c.usable_tb > 0
        assert c.scenario.workload.kind == "open"


def test_wide_space_contains_the_planner_grid(ibmi: tuple[Any, list[Any], int]) -> None:
    """Every hardware configuration the planner's own grid tries is also in the wide space."""
    req, candidates, _ = ibmi
    narrow, _ = enumerate_candidates(req)

    def hardware(c: Any) -> tuple[Any, ...]:
        t = c.scenario.topology
        return (t.drive, t.drives, t.adapter, t.adapters, t.layout, t.namespaces.per_drive, t.namespaces.queue_depth)

    wide = {hardware(c) for c in candidates}
    assert {hardware(c) for c in narrow} <= wide
    assert len(wide) > 5 * len(narrow)


def test_strided_shares_partition_the_space() -> None:
    """Two workers' shares (index 0 and 1, stride 2) together are the whole space, without overlap."""
    req = load_requirements(PLANS / "zvm_paging.toml")
    whole, invalid = wide_candidates(req)
    a, ia = wide_candidates(req, index=0, stride=2)
    b, ib = wide_candidates(req, index=1, stride=2)
    assert sorted(c.label for c in a + b) == sorted(c.label for c in whole)
    assert ia + ib == invalid


def test_linuxone_space_has_san_and_every_drive() -> None:
    req = load_requirements(PLANS / "linuxone_ycsb.yaml")
    topologies = list(wide_topologies(req, WideSpace(san_luns=(4,), san_lun_queue_depths=(32,))))
    kinds = {t["kind"] for _, t in topologies}
    assert kinds == {"direct_nvme", "san"}
    drives = {t["drive"] for _, t in topologies if t["kind"] == "direct_nvme"}
    assert {"PM1733-1.92TB", "CM6-R-1.92TB", "CM6-V-1.6TB", "P4510-4TB"} <= drives
    assert {t["storage_server"] for _, t in topologies if t["kind"] == "san"} == {"DS8950F", "FS9100"}


def test_a_wide_candidate_screens_like_a_planner_candidate() -> None:
    """The planner's screen takes a wide-space candidate as it is: the grid's own configuration gives the same verdict."""
    req = load_requirements(PLANS / "ibmi_oltp.yaml")
    narrow, _ = enumerate_candidates(req)
    grid = next(c for c in narrow if getattr(c.scenario.topology, "drives", 0) == 4
                and getattr(c.scenario.topology, "drive", "") == "ES5F")
    topo = grid.scenario.topology.model_dump(mode="json", exclude_none=True)
    wide = candidate(req, "same hardware", topo)
    assert wide is not None
    _screen(grid, req)
    _screen(wide, req)
    assert (wide.stage, wide.capex_usd) == (grid.stage, grid.capex_usd)
    assert wide.fast is not None and grid.fast is not None
    assert wide.fast.bounds.x_max_iops == pytest.approx(grid.fast.bounds.x_max_iops)


def test_planner_scale_bench_runs_every_stage() -> None:
    """bench.planner_scale on a small space (z/VM paging, 576 candidates): both paths run, screen the same
    survivors, and the winner is DES-verified (no timing asserted)."""
    from bench.planner_scale import measure

    m = measure(PLANS / "zvm_paging.toml", verify_top=1, jobs=2, overrides={"verify.max_ios": 5_000, "verify.warmup_ios": 1_000})
    now = m["now"]
    assert now["candidates"] == m["before"]["candidates"] == 576
    assert m["same_screen"] and now["fast_evaluated"] > 0
    assert now["des_runs"] >= 1 and len(now["verified"]) == 1
    assert now["build_screen_cpu_s"] > 0 and m["speedup_build_screen"] > 0


def test_plan_over_the_wide_space_verifies_distinct_purchases() -> None:
    """``flashplan plan --space wide``: the planner screens the wide space and, once a purchase is
    verified, does not spend DES runs on other settings of the same purchase."""
    from sim.plan.planner import plan
    from sim.plan.space import hardware_key

    # one drive model's wide space (636 candidates): many settings of each purchase, as with every model
    req = load_requirements(PLANS / "ibmi_oltp.yaml", {"verify.max_ios": 30_000, "verify.warmup_ios": 3_000,
                                                       "candidates.devices": ["ES5F"]})
    space = wide_candidates(req, WideSpace(extra_adapters=0))
    result = plan(req, verify_top=2, space=space, distinct=hardware_key)
    verified = [c for c in result.ranked if c.verified]
    assert result.screened == len(space[0]) >= 500
    # other settings of a verified purchase were screened as well, and left unverified
    assert any(not c.verified and hardware_key(c) == hardware_key(verified[0]) for c in result.ranked)
    assert 1 <= len(verified) <= 2
    assert len({hardware_key(c) for c in verified}) == len(verified)
    assert result.winner.verified and result.winner.capex_usd == min(c.capex_usd for c in result.ranked)
