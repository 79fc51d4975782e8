"""Failures under ``placement`` (several workloads, each on its own members) through both solvers.

A placed workload has its own volume of the topology's layout over its members; a failed drive takes away
the members of that volume it holds, so the workload's device I/Os per logical I/O become what
models.faults.degraded_io_cost gives for its own volume (its members, its failed members), while a workload
placed on other drives keeps its healthy figures and an unplaced one pays the whole volume's degraded cost.
A workload whose own volume loses every copy of some data is refused (exit 2) naming it; a failure that loses
data only where no workload is placed is not data loss.

The drive is the Intel P4510 4 TB (catalog, seed 003) behind one EJ1Y adapter each, with a zero-cost host, as in
tests/plan/test_faults_solvers.py: a drive's link carries its reads' bytes towards the host and its writes' towards
the device, so the links' busy shares are the drives' read and write traffic.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from models.faults import (
    DataLoss,
    degraded_io_cost,
    rebuild_member_bytes,
    rebuild_sources,
    rebuild_volumes,
    volume_rebuild_sources,
)
from models.loading import format_validation_error
from models.scenario import Scenario, load_scenario, scenario_from_data
from sim.analytic import evaluate
from sim.cli.flashplan import main
from sim.des.engine import simulate
from sim.plan.faults import fast_rebuild_figures
from sim.route.describe import DirectRoute, describe

SHORT_RUN = {"seed": 3, "warmup_ios": 2_000, "max_ios": 16_000, "min_batches": 5, "target_rel_ci": 0.5}


def open_load(name: str, rate: float, read_fraction: float, placement: list[int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "kind": "open", "rate_iops": rate, "read_fraction": read_fraction, "block_size_kib": 4,
                           "access": "random"}
    if placement is not None:
        out["placement"] = placement
    return out


def scenario(layout: str, drives: int, workloads: list[dict[str, Any]], failed: list[int] | None = None) -> Scenario:
    data: dict[str, Any] = {
        "topology": {"kind": "direct_nvme", "drive": "P4510-4TB", "drives": drives, "adapter": "EJ1Y", "adapters": drives,
                     "layout": layout, "host": {"cpu_us_per_io": 0}},
        "workloads": workloads, "run": SHORT_RUN}
    if failed:
        data["faults"] = {"failed_drives": failed}
    return scenario_from_data(data)


def traffic(utilization: dict[str, float], drives: range, direction: str) -> float:
    """The busy share of the drive links of ``drives`` towards the host (reads) or the device (writes)."""
    return sum(utilization[f"drive{d}.link.{direction}"] for d in drives)


def drive_busy(utilization: dict[str, float], drive: int) -> float:
    return sum(u for name, u in utilization.items() if name.startswith(f"drive{drive}."))


# -- RAID-5: a placed workload's reads reconstruct within its own volume ---------------------------------------


def _raid5(b_placed: bool) -> tuple[Scenario, Scenario]:
    workloads = [open_load("a", 20_000, 1.0, [0, 1, 2, 3]), open_load("b", 20_000, 1.0, [4, 5, 6, 7] if b_placed else None)]
    return scenario("raid5", 8, workloads), scenario("raid5", 8, workloads, [0])


@pytest.mark.parametrize("b_placed", [True, False])
def test_fast_path_raid5_read_traffic_follows_each_workloads_degraded_cost(b_placed: bool) -> None:
    """Drive 0 fails. Workload a (placed on drives 0-3: its own 4-member RAID-5) reads 2(N-1)/N = 1.5 member
    chunks per read; b, on drives 4-7, is untouched, or, unplaced, pays the 8-member volume's 1.75."""
    healthy, degraded = (evaluate(s) for s in _raid5(b_placed))
    own = degraded_io_cost("raid5", 4, frozenset({0})).reads_per_read
    whole = degraded_io_cost("raid5", 8, frozenset({0})).reads_per_read
    assert (own, whole) == (pytest.approx(1.5), pytest.approx(1.75))
    assert drive_busy(degraded.utilization, 0) == 0.0
    ratio = traffic(degraded.utilization, range(8), "to_host") / traffic(healthy.utilization, range(8), "to_host")
    if b_placed:
        assert traffic(degraded.utilization, range(4), "to_host") / traffic(healthy.utilization, range(4), "to_host") == \
            pytest.approx(own, rel=1e-6)
        assert traffic(degraded.utilization, range(4, 8), "to_host") == pytest.approx(traffic(healthy.utilization, range(4, 8), "to_host"),
                                                                                        rel=1e-9)
        assert ratio == pytest.approx((own + 1.0) / 2, rel=1e-6)
    else:
        assert ratio == pytest.approx((own + whole) / 2, rel=1e-6)


@pytest.mark.parametrize("b_placed", [True, False])
def test_des_raid5_read_traffic_follows_each_workloads_degraded_cost(b_placed: bool) -> None:
    healthy, degraded = (simulate(s) for s in _raid5(b_placed))
    own = degraded_io_cost("raid5", 4, frozenset({0})).reads_per_read
    whole = degraded_io_cost("raid5", 8, frozenset({0})).reads_per_read
    assert drive_busy(degraded.utilization, 0) == 0.0
    ratio = traffic(degraded.utilization, range(8), "to_host") / traffic(healthy.utilization, range(8), "to_host")
    if b_placed:
        assert traffic(degraded.utilization, range(4), "to_host") / traffic(healthy.utilization, range(4), "to_host") == \
            pytest.approx(own, rel=0.06)
        assert ratio == pytest.approx((own + 1.0) / 2, rel=0.06)
    else:
        assert ratio == pytest.approx((own + whole) / 2, rel=0.06)


# -- RAID-10: a lost copy of a placed pair, the other pair's workload unchanged -------------------------------


def _mirrors() -> tuple[Scenario, Scenario]:
    workloads = [open_load("writer", 20_000, 0.0, [0, 1]), open_load("reader", 20_000, 1.0, [2, 3])]
    return scenario("raid10", 4, workloads), scenario("raid10", 4, workloads, [0])


def test_fast_path_raid10_pair_loses_a_copy_and_the_other_pair_is_unchanged() -> None:
    """Drive 0 fails under the writer's pair: its writes go to the survivor alone (degraded_io_cost: 1 write per
    write, 2 healthy), drive 0 is idle, and the reader on the other pair keeps its figures."""
    healthy, degraded = (evaluate(s) for s in _mirrors())
    cost = degraded_io_cost("raid10", 2, frozenset({0})).writes_per_write / degraded_io_cost("raid10", 2).writes_per_write
    assert cost == 0.5
    assert traffic(degraded.utilization, range(2), "to_device") / traffic(healthy.utilization, range(2), "to_device") == \
        pytest.approx(cost, rel=1e-6)
    assert drive_busy(degraded.utilization, 0) == 0.0 < drive_busy(healthy.utilization, 0)
    assert healthy.workloads is not None and degraded.workloads is not None
    assert degraded.workloads["reader"].latency_mean_us == pytest.approx(healthy.workloads["reader"].latency_mean_us, rel=1e-3)
    assert degraded.workloads["reader"].iops == healthy.workloads["reader"].iops


def test_des_raid10_pair_loses_a_copy_and_the_other_pair_is_unchanged() -> None:
    healthy, degraded = (simulate(s) for s in _mirrors())
    assert traffic(degraded.utilization, range(2), "to_device") / traffic(healthy.utilization, range(2), "to_device") == \
        pytest.approx(0.5, rel=0.06)
    assert drive_busy(degraded.utilization, 0) == 0.0 < drive_busy(healthy.utilization, 0)
    assert healthy.workloads is not None and degraded.workloads is not None
    before, after = healthy.workloads["reader"], degraded.workloads["reader"]
    for metric in ("iops", "latency_mean_us"):
        a, b = getattr(before, metric), getattr(after, metric)
        assert abs(a.value - b.value) <= a.half_width + b.half_width, metric


# -- data loss is each workload's -----------------------------------------------------------------------------


CROSSED = [open_load("a", 1_000, 0.5, [0, 2]), open_load("b", 1_000, 0.5, [1, 3])]
"""Workload a mirrors drives 0 and 2, b drives 1 and 3 (the whole volume's pairs would be 0-1 and 2-3)."""


def test_losing_both_copies_of_a_placed_pair_exits_2_naming_the_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lost.json"
    path.write_text(json.dumps({"topology": {"kind": "direct_nvme", "drives": 4, "layout": "raid10"}, "workloads": CROSSED,
                                "faults": {"failed_drives": [0, 2]}}))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "faults.failed_drives" in err and "data loss" in err and "'a'" in err and "[0, 2]" in err
    assert "Traceback" not in err
    assert main(["analyze", str(path)]) == 2


def test_a_failure_that_loses_no_workloads_data_is_accepted() -> None:
    """Drives 0 and 1 would be a whole pair of the 4-member volume, but a and b each keep a copy of theirs."""
    s = scenario("raid10", 4, CROSSED, [0, 1])
    fast = evaluate(s)
    assert fast.stable and drive_busy(fast.utilization, 0) == drive_busy(fast.utilization, 1) == 0.0
    assert fast.workloads is not None and fast.workloads["a"].iops == pytest.approx(1_000)
    des = simulate(s)
    assert drive_busy(des.utilization, 0) == drive_busy(des.utilization, 1) == 0.0 < drive_busy(des.utilization, 2)
    with pytest.raises(ValidationError) as info:
        scenario("raid10", 4, [{k: v for k, v in wl.items() if k != "placement"} for wl in CROSSED], [0, 1])
    assert "faults.failed_drives" in [path for path, _ in format_validation_error(info.value)]


# -- the failure states of a consolidation scenario ------------------------------------------------------------

CONSOLIDATED_YAML = """\
# two workloads on the S1 configuration of examples/consolidation_oltp_batch_backup.yaml (four PM1733 in md
# RAID-10 on a LinuxONE LPAR), each placed on its own mirror pair; drive 0 (of the oltp pair) failed
name: S1 RAID-10, oltp and reports on their own pairs, drive 0 failed
topology:
  kind: direct_nvme
  host: {model: LinuxONE-Emperor4-LPAR30, stack: linux_nvme}
  drive: PM1733-1.92TB
  drives: 4
  adapter: IBM-NVMe-Carrier-0448
  adapters: 4
  layout: raid10
  chunk_kib: 256
workloads:
  - {name: oltp, kind: open, rate_iops: 20000, read_fraction: 0.7, block_size_kib: 8, access: random, placement: [0, 1]}
  - {name: reports, kind: open, rate_iops: 20000, read_fraction: 0.7, block_size_kib: 8, access: random, placement: [2, 3]}
faults:
  failed_drives: [0]
run: {seed: 1, warmup_ios: 2000, max_ios: 12000, min_batches: 5, target_rel_ci: 0.5}
"""


def test_simulate_states_differ_as_the_placement_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``flashplan simulate --json``: in the degraded state drive 0 is idle, its pair-mate serves the oltp pair's
    reads alone (degraded_io_cost: one member read per read, from the survivor), the reports pair is as healthy."""
    path = tmp_path / "placed.yaml"
    path.write_text(CONSOLIDATED_YAML)
    assert main(["simulate", str(path), "--json"]) == 0
    states = json.loads(capsys.readouterr().out)["states"]
    healthy, degraded = states["healthy"], states["degraded"]
    assert drive_busy(degraded["utilization"], 0) == 0.0 < drive_busy(healthy["utilization"], 0)
    read = degraded_io_cost("raid10", 2, frozenset({0})).reads_per_read  # one read per read, all from the survivor
    assert degraded["utilization"]["drive1.link.to_host"] == pytest.approx(
        read * traffic(healthy["utilization"], range(2), "to_host"), rel=0.1)
    before, after = healthy["workloads"]["reports"], degraded["workloads"]["reports"]
    for metric in ("iops", "latency_mean_us"):
        (lo_b, hi_b), (lo_a, hi_a) = before[metric]["ci95"], after[metric]["ci95"]
        assert lo_a <= hi_b and lo_b <= hi_a, metric  # the intervals overlap
    assert degraded["utilization"]["drive2.link.to_host"] == pytest.approx(healthy["utilization"]["drive2.link.to_host"], rel=0.1)


@pytest.mark.slow
def test_fast_path_placement_on_every_member_in_order_is_no_placement() -> None:
    """A workload placed on all members in their order has the whole volume as its own: each fast-path state of the
    consolidation example (its sequential backup included) is the unplaced scenario's to the last digit, with no
    note, and the degraded state leaves drive 0 idle."""
    path = "examples/consolidation_oltp_batch_backup.yaml"
    everywhere = {f"workloads.{i}.placement": [0, 1, 2, 3] for i in range(3)}
    for faults in ({}, {"faults.failed_drives": [0]}):
        assert evaluate(load_scenario(path, {**faults, **everywhere})) == evaluate(load_scenario(path, faults))
    healthy, degraded = (evaluate(load_scenario(path, {**faults, **everywhere})) for faults in ({}, {"faults.failed_drives": [0]}))
    assert degraded.utilization["drive0.dies"] == 0.0 < healthy.utilization["drive0.dies"]


# -- a rebuild reads within the placed volume that holds the rebuilt member -----------------------------------

REBUILD_AT = {"rate_mbps": 200}
"""An explicit rebuild rate (no throttle): each source reads at it, so its link carries 200 MB/s towards the host."""


def rebuilding(layout: str, drives: int, workloads: list[dict[str, Any]], failed: list[int],
               rebuild: dict[str, Any] | None = None) -> Scenario:
    data = scenario(layout, drives, workloads, failed).model_dump(mode="json", exclude_none=True)
    data["faults"]["rebuild"] = rebuild or REBUILD_AT
    return scenario_from_data(data)


def solve(solver: str, s: Scenario) -> dict[str, float]:
    return evaluate(s).utilization if solver == "fast" else simulate(s).utilization


def rebuild_read_share(s: Scenario) -> float:
    """The busy share of one source drive's link that the rebuild's reads take (200 MB/s)."""
    route = describe(s)
    assert isinstance(route, DirectRoute) and route.drive_links is not None
    return REBUILD_AT["rate_mbps"] * route.drive_links.us_per_byte


@pytest.mark.parametrize("solver", ["fast", "des"])
def test_placed_raid5_rebuild_reads_only_its_own_volumes_survivors(solver: str) -> None:
    """Drive 0 fails and is rebuilt; workload a's own RAID-5 is drives 0-3, so the rebuild reads drives 1-3 (every
    other member of a's volume, each at the rebuild's rate) and nothing of drives 4-7, b's volume (b reads at 1 IOPS)."""
    s = rebuilding("raid5", 8, [open_load("a", 20_000, 1.0, [0, 1, 2, 3]), open_load("b", 1, 1.0, [4, 5, 6, 7])], [0])
    u = solve(solver, s)
    share = rebuild_read_share(s)
    for d in (1, 2, 3):
        assert u[f"drive{d}.link.to_host"] > share
    assert traffic(u, range(4, 8), "to_host") < 1e-3 * share


CROSSED_WRITERS = [open_load("a", 20_000, 0.0, [0, 2]), open_load("b", 20_000, 0.0, [1, 3])]
"""Crossed mirror pairs, writes only: a drive's link carries data towards the host only for the rebuild's reads."""


@pytest.mark.parametrize("solver", ["fast", "des"])
@pytest.mark.parametrize("failed", [[0], [0, 1]])
def test_crossed_mirror_rebuild_reads_the_partner_within_the_placement(solver: str, failed: list[int]) -> None:
    """a mirrors drives 0 and 2, b drives 1 and 3. Rebuilding drive 0 reads drive 2 (its copy in a's volume), not
    drive 1 (its whole-volume pair-mate, b's); with drives 0 and 1 lost, neither failed drive is read and drive 1
    is rebuilt from drive 3."""
    s = rebuilding("raid10", 4, CROSSED_WRITERS, failed)
    u = solve(solver, s)
    share = rebuild_read_share(s)
    assert u["drive2.link.to_host"] == pytest.approx(share, rel=0.05)
    assert u["drive0.link.to_host"] == u["drive1.link.to_host"] == 0.0
    if failed == [0, 1]:
        assert u["drive3.link.to_host"] == pytest.approx(share, rel=0.05)
    else:
        assert u["drive3.link.to_host"] == 0.0


def test_a_failed_drive_in_no_placement_is_not_rebuilt() -> None:
    """a and b are placed on drives 0-1 and 2-3 of six: drive 4 holds no workload's data. Failed with drive 0, only
    drive 0 is rebuilt (one replacement, read from drive 1, drive 5 untouched); failed alone, a rebuild has nothing
    to do and is refused naming faults.rebuild."""
    pairs = [open_load("a", 20_000, 0.0, [0, 1]), open_load("b", 20_000, 0.0, [2, 3])]
    s = rebuilding("raid10", 6, pairs, [0, 4])
    route = describe(s)
    stream = route.volume.rebuild
    assert stream is not None and stream.rebuilt == (0,) and stream.replacement_drives == 1
    for u in (evaluate(s).utilization, simulate(s).utilization):
        assert u["drive1.link.to_host"] == pytest.approx(rebuild_read_share(s), rel=0.05)
        assert u.get("drive5.link.to_host", 0.0) == 0.0 and u.get("drive4.link.to_device", 0.0) == 0.0
    with pytest.raises(ValidationError) as info:
        scenario_from_data({**s.model_dump(mode="json", exclude_none=True),
                            "faults": {"failed_drives": [4], "rebuild": REBUILD_AT}})
    problems = format_validation_error(info.value)
    assert [path for path, _ in problems] == ["faults.rebuild"] and "nothing to rebuild" in problems[0][1]


def test_fast_path_loaded_rebuild_rate_ignores_another_volumes_load() -> None:
    """md's throttle (legacy, the cap out of the way): the rate under load is set by the rebuild's sources, drives
    1-3 of a's volume, so b's load on drives 4-7 leaves it unchanged."""
    md = {"md_throttle": "legacy", "speed_limit_max_kib_s": 10**7}
    figures = [fast_rebuild_figures(rebuilding("raid5", 8, [open_load("a", 20_000, 1.0, [0, 1, 2, 3]),
                                                            open_load("b", rate, 1.0, [4, 5, 6, 7])], [0], md))
               for rate in (1, 150_000)]
    assert figures[0] is not None and figures[1] is not None
    assert figures[0]["loaded_mbps"] < figures[0]["idle_mbps"]
    assert figures[1]["loaded_mbps"] == pytest.approx(figures[0]["loaded_mbps"], rel=1e-9)


def test_rebuild_sources_within_a_volume_map_its_members() -> None:
    """The member a volume holds is rebuilt from that volume's own layout over its members: crossed pairs read the
    partner in the placement (the whole volume's pair-mate is failed and never read), a placed RAID-5 reads every
    other member of its own volume; with no placement each failed member is rebuilt in the whole volume."""
    assert volume_rebuild_sources("raid10", frozenset({0, 1}), 0, 0, (0, 2)) == [2]
    with pytest.raises(DataLoss):
        rebuild_sources("raid10", 4, frozenset({0, 1}), 0, 0)
    assert {m for s in range(4) for m in volume_rebuild_sources("raid5", frozenset({0}), 0, s, (0, 1, 2, 3))} == {1, 2, 3}
    placements: list[tuple[str, list[int] | None]] = [("a", [0, 1, 2, 3]), ("b", [4, 5, 6, 7])]
    assert rebuild_volumes(8, frozenset({0}), placements) == ((0,), (((0, 1, 2, 3),),))
    assert rebuild_volumes(8, frozenset({0}), None) == ((0,), ())
    assert rebuild_volumes(10, frozenset({8}), placements) == ((), ())
    moved = rebuild_member_bytes("raid5", 8, frozenset({0}), (0,), 1.0, (((0, 1, 2, 3),),))
    assert [round(r, 12) for r, _ in moved] == [0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0] and moved[0][1] == 1.0
