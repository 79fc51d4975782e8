"""The planner: requirements validation, candidates that obey the topology rules, and answers a brute-force DES confirms."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from models.presets import PRESETS, preset_workload
from models.requirements import PLATFORMS, Requirements, load_requirements, requirements_from_data
from models.scenario import format_validation_error
from models.topology import DirectNvme
from sim.analytic import Bounds, FastResult
from sim.cli.flashplan import main
from sim.des.engine import simulate
from sim.plan.planner import NoFeasiblePlan, design_workload, enumerate_candidates, p99_estimate_us, plan
from tests.conftest import ROOT

PLAN_EXAMPLES = sorted((ROOT / "examples" / "plan").glob("*.*"))
QUICK_VERIFY = {"target_rel_ci": 0.05, "warmup_ios": 2_000, "max_ios": 40_000, "max_wall_s": 300.0}


def _requirements(**fields: Any) -> Requirements:
    base: dict[str, Any] = {"platform": "linuxone", "workload": "ycsb_read_mostly", "target": {"iops": 200_000},
                            "latency_slo": {"us": 500}, "usable_tb": 3, "verify": QUICK_VERIFY}
    base.update(fields)
    return requirements_from_data(base)


def _problems(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ValidationError) as info:
        requirements_from_data(data)
    return dict(format_validation_error(info.value))


# -- requirements and presets ---------------------------------------------------------------

@pytest.mark.parametrize("path", PLAN_EXAMPLES, ids=lambda p: p.name)
def test_example_requirement_files_load(path: Path) -> None:
    from models.requirements import consolidation_from_data
    from models.scenario import read_scenario_data

    data = read_scenario_data(path)
    if "workloads" in data:  # a consolidation: several workloads with objectives each (sim/plan/consolidated.py)
        consolidated = consolidation_from_data(data)
        assert consolidated.slos and len(consolidated.workloads) >= 2
        return
    req = load_requirements(path)
    assert req.design_iops == pytest.approx(req.target_iops * (1 + req.growth_headroom_pct / 100))
    assert req.design_iops > 0


def test_every_preset_is_a_valid_workload_citing_a_seed() -> None:
    for key, preset in PRESETS.items():
        assert preset.key == key
        assert "seed 00" in preset.source
        assert preset_workload(key).mean_bytes() > 0
    with pytest.raises(KeyError, match="known presets"):
        preset_workload("tpc_c")


def test_requirement_errors_name_the_field_and_the_allowed_values() -> None:
    problems = _problems({"platform": "linuxone", "workload": "nosuch", "target": {"iops": 1, "mbps": 1},
                          "latency_slo": {"statistic": "p95", "us": 100}, "usable_tb": 0})
    assert "allowed: oltp_4k_70_30" in problems["workload"]
    assert "exactly one" in problems["target.iops"]
    assert "'mean' or 'p99'" in problems["latency_slo.statistic"]
    assert "greater than 0" in problems["usable_tb"]
    problems = _problems({"platform": "x86_exflash", "workload": "oltp_4k_70_30", "target": {"iops": 1},
                          "latency_slo": {"us": 100}, "usable_tb": 1})
    assert "allowed: none" in problems["protection"]
    problems = _problems({"platform": "power10_ibmi", "workload": {"kind": "closed", "jobs": 0}, "target": {"iops": 1},
                          "latency_slo": {"us": 100}, "usable_tb": 1})
    assert "greater than or equal to 1" in problems["workload.jobs"]
    problems = _problems({"platform": "power10_ibmi", "workload": "io3390", "target": {"iops": 1},
                          "latency_slo": {"us": 100}, "usable_tb": 1, "candidates": {"devices": ["PM1733-1.92TB"]}})
    assert "allowed: ES5B" in problems["candidates.devices"]


def test_mbps_target_and_growth_set_the_design_rate() -> None:
    req = _requirements(target={"mbps": 800}, growth_headroom_pct=25)
    assert req.target_iops == pytest.approx(800e6 / 8192)
    assert req.design_iops == pytest.approx(1.25 * 800e6 / 8192)


def test_design_workload_keeps_the_mix_at_the_design_rate() -> None:
    req = _requirements(growth_headroom_pct=50)
    wl = design_workload(req)
    assert wl["kind"] == "open" and wl["rate_iops"] == pytest.approx(300_000)
    assert wl["read_fraction"] == PRESETS["ycsb_read_mostly"].workload.read_fraction
    bursty = design_workload(_requirements(workload="db2_bdi_bursty", target={"iops": 10_000}))
    source = PRESETS["db2_bdi_bursty"].workload
    on, off = bursty["mean_on_ms"], bursty["mean_off_ms"]
    assert (bursty["on_rate_iops"] * on + bursty["off_rate_iops"] * off) / (on + off) == pytest.approx(10_000)
    assert bursty["on_rate_iops"] / bursty["off_rate_iops"] == pytest.approx(source.on_rate_iops / source.off_rate_iops)


# -- candidates ----------------------------------------------------------------------------------

def test_ibmi_candidates_obey_the_topology_rules() -> None:
    req = load_requirements(ROOT / "examples" / "plan" / "ibmi_oltp.yaml")
    candidates, refused = enumerate_candidates(req)
    assert len(candidates) >= 500 and refused > 0
    options = PLATFORMS["power10_ibmi"]
    for c in candidates:
        topo = c.scenario.topology
        assert isinstance(topo, DirectNvme)
        assert topo.drive in options.devices and topo.adapter in options.adapters
        assert topo.layout == "ibmi_mirror"  # protection: mirror
        assert topo.drives >= 2 and (topo.drives * topo.namespaces.per_drive) % 2 == 0
        assert math.ceil(topo.drives / topo.adapters) <= (8 if topo.adapter == "EJ1Y" else 4)
        assert topo.namespaces.per_drive <= topo.drive_spec.max_namespaces
        assert c.scenario.workload.kind == "open"
        assert c.scenario.workload.rate_iops == pytest.approx(req.design_iops)  # type: ignore[union-attr]
    labels = [c.label for c in candidates]
    assert len(labels) == len(set(labels))


def test_linuxone_candidates_include_md_raid_and_san() -> None:
    candidates, _ = enumerate_candidates(_requirements())
    kinds = {c.scenario.topology.kind for c in candidates}
    assert kinds == {"direct_nvme", "san"}
    for c in candidates:
        topo = c.scenario.topology
        if isinstance(topo, DirectNvme):
            assert topo.adapters == topo.drives  # one drive per IBM NVMe Carrier
            assert topo.layout in ("raid1", "raid10", "raid5", "raid6")
            assert topo.layout != "raid10" or (topo.drives >= 4 and topo.drives % 2 == 0)
    no_san, _ = enumerate_candidates(_requirements(protection="mirror"))
    assert {c.scenario.topology.kind for c in no_san} == {"direct_nvme"}


@settings(max_examples=50, deadline=None)
@given(r_min=st.floats(1, 1_000), wait=st.floats(0, 10_000))
def test_p99_estimate_is_never_below_the_mean(r_min: float, wait: float) -> None:
    mean = r_min + wait
    fast = FastResult(iops=1.0, read_iops=1.0, write_iops=0.0, mbps=0.0, latency_mean_us=mean, read_latency_mean_us=mean,
                      write_latency_mean_us=mean, utilization={}, bottleneck="x", bounds=Bounds(1e6, r_min, 1.0),
                      cpu_us_per_io=0.0, stable=True)
    assert p99_estimate_us(fast) >= mean * (1 - 1e-12)


# -- answers ------------------------------------------------------------------------------------

BRUTE_FORCE_SPACE = {"devices": ["PM1733-1.92TB"], "device_counts": [2, 4, 6, 8], "layouts": ["raid10", "raid5"],
                     "include_san": False}


def _des_meets(req: Requirements, scenario: Any) -> bool:
    """The DES keeps up with the offered rate and the SLO statistic is within the SLO."""
    result = simulate(scenario)
    metric = result.latency_mean_us if req.latency_slo.statistic == "mean" else result.latency_p99_us
    keeps_up = result.iops.ci95[1] >= 0.98 * req.design_iops and not result.stop_reason.startswith("unstable")
    return keeps_up and metric.value <= req.latency_slo.us


def test_planner_answer_matches_brute_force_des() -> None:
    """On a small space, DES on every candidate finds the same cheapest configuration as the planner.

    4 x PM1733 (raid10 or raid5) cannot carry 2.5M IOPS of 8 KiB YCSB I/O (their fast-path
    bounds are 2.1M and 1.75M), 6 drives can; the planner must reject both 4-drive candidates.
    """
    req = _requirements(target={"iops": 2_500_000}, latency_slo={"us": 400}, usable_tb=3, candidates=BRUTE_FORCE_SPACE,
                        verify={"target_rel_ci": 0.1, "warmup_ios": 1_000, "max_ios": 20_000, "max_wall_s": 300.0})
    result = plan(req, verify_top=1)
    candidates, _ = enumerate_candidates(req)
    assert 4 <= len(candidates) <= 8
    meets = [c for c in candidates if c.usable_tb >= req.usable_tb and _des_meets(req, c.scenario)]
    assert meets, "the brute-force space must contain an answer"
    cheapest = min(c.capex_usd for c in meets)
    assert result.winner.capex_usd == pytest.approx(cheapest)
    assert result.winner.label in {c.label for c in meets if c.capex_usd == pytest.approx(cheapest)}
    cheaper = [c for c in candidates if c.capex_usd < cheapest]
    assert cheaper, "the space must hold cheaper candidates the planner has to reject"
    assert {c.label for c in result.cheaper_rejected} == {c.label for c in cheaper}
    assert all(c.rejection for c in result.cheaper_rejected)


def test_plan_ranks_by_cost_and_verifies_the_winner() -> None:
    req = _requirements(target={"iops": 300_000}, latency_slo={"statistic": "p99", "us": 1_000})
    result = plan(req, verify_top=2)
    costs = [c.capex_usd for c in result.ranked]
    assert costs == sorted(costs)
    winner = result.winner
    assert winner.verified and winner.des is not None
    assert winner.des.latency_p99_us.value <= 1_000
    assert winner.usable_tb >= 3
    assert winner.headroom_pct(result.target_iops) is not None and winner.headroom_pct(result.target_iops) >= 0  # type: ignore[operator]
    assert result.des_runs >= 1 and result.screened == len(result.ranked) + len(result.rejected)
    for c in result.cheaper_rejected:
        assert c.rejection and c.capex_usd < winner.capex_usd
    data = result.as_dict()
    assert data["winner"]["des"]["latency_p99_us"]["ci95"][0] <= data["winner"]["des"]["latency_p99_us"]["value"]
    json.dumps(data)


def test_budget_and_capacity_rejections_carry_reasons() -> None:
    req = _requirements(usable_tb=5, budget_usd=12_000)
    result = plan(req, verify_top=1)
    stages = {c.stage for c in result.rejected}
    assert "capacity" in stages and "budget" in stages
    assert all(c.capex_usd <= 12_000 for c in result.ranked)
    assert any("TB required" in (c.rejection or "") for c in result.rejected)


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"usable_tb": 500}, "usable_tb"),
     ({"budget_usd": 1_000}, "budget_usd"),
     ({"target": {"iops": 50_000_000}}, "target.iops"),
     ({"target": {"mbps": 500_000}}, "target.mbps"),
     ({"latency_slo": {"us": 1}}, "latency_slo.us")],
)
def test_requirements_nothing_can_meet_name_the_binding_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(NoFeasiblePlan) as info:
        plan(_requirements(**fields))
    assert [f for f, _ in info.value.problems] == [field]
    assert "allowed:" in info.value.problems[0][1]


def test_plan_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "req.yaml"
    path.write_text("platform: linuxone\nworkload: ycsb_read_mostly\ntarget: {iops: 200000}\n"
                    "latency_slo: {us: 500}\nusable_tb: 3\n"
                    "verify: {max_ios: 40000, max_wall_s: 2.0, target_rel_ci: 0.05}\n")
    assert main(["plan", str(path), "--json", "--verify-top", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["winner"]["des"]["latency_mean_us"]["value"] <= 500
    assert main(["plan", str(path), "--set", "usable_tb=1000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usable_tb: ") and "Traceback" not in err
    assert main(["plan", str(path), "--set", "platform=mainframe"]) == 2
    assert "platform:" in capsys.readouterr().err
    assert main(["plan", str(tmp_path / "missing.yaml")]) == 2
    assert main(["plan", str(path), "--show", "3"]) == 0
    out = capsys.readouterr().out
    assert "winner:" in out and "cheaper candidates rejected" in out


def test_planner_benchmark_reports_its_figures() -> None:
    from bench.planner import TARGET_CANDIDATES, measure

    m = measure(quick=True)
    assert m["candidates_screened"] >= TARGET_CANDIDATES
    assert m["fast_path_evaluations"] >= 1 and m["des_runs"] >= 1
    assert m["wall_s"] >= m["des_wall_s"] > 0
    lo, hi = m["winner_des_latency_ci95"]
    assert lo <= m["winner_des_latency_us"] <= hi


def test_a_requirements_device_model_reaches_every_candidate_and_the_screen() -> None:
    """``device_model: dies`` in the requirements: every candidate's scenario carries it, the fast path screens the p99 SLO
    with the die-level tail (``tail_method`` dies) and the DES verifies the winner under the same model; a bad value
    names the field (exit 2 from the command)."""
    req = _requirements(target={"iops": 300_000}, latency_slo={"statistic": "p99", "us": 1_000}, device_model="dies")
    candidates, _ = enumerate_candidates(req)
    flash = [c for c in candidates if c.scenario.topology.kind != "san"]
    assert flash and all(c.scenario.device_model == "dies" for c in flash)
    assert all(c.scenario.device_model == "auto" for c in candidates if c.scenario.topology.kind == "san")  # no flash of its own
    result = plan(req, verify_top=1)
    winner = result.winner
    assert winner.scenario.device_model == "dies"
    assert winner.fast is not None and winner.fast.tail_method.startswith("dies")
    assert winner.des is not None and winner.des.scenario.device_model == "dies"
    assert winner.des.latency_p99_us.value <= 1_000
    default = _requirements(target={"iops": 300_000}, latency_slo={"statistic": "p99", "us": 1_000})
    assert default.device_model == "auto"  # dies for the drives, pooled for the eXFlash DIMMs
    assert all(c.scenario.device_model == "auto" for c in enumerate_candidates(default)[0])
    pooled = _requirements(target={"iops": 300_000}, latency_slo={"statistic": "p99", "us": 1_000}, device_model="pooled")
    assert all(c.scenario.device_model == ("auto" if c.scenario.topology.kind == "san" else "pooled")
               for c in enumerate_candidates(pooled)[0])
    assert _problems({**pooled.model_dump(mode="json", exclude_none=True), "device_model": "die"}) == {
        "device_model": "Input should be 'auto', 'pooled' or 'dies', got 'die'"}


def test_plan_command_refuses_an_unknown_device_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "req.yaml"
    path.write_text("platform: linuxone\nworkload: ycsb_read_mostly\ntarget: {iops: 200000}\nlatency_slo: {us: 500}\nusable_tb: 3\n")
    assert main(["plan", str(path), "--set", "device_model=die"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("device_model: ") and "'pooled' or 'dies'" in err and "Traceback" not in err


def test_a_consolidations_device_model_reaches_every_candidate() -> None:
    """examples/plan/linuxone_consolidation.yaml with ``device_model: dies``: every flash candidate's scenario is under
    dies (the default, auto, leaves it to each device: dies for drives, pooled for the eXFlash DIMMs)."""
    from models.requirements import consolidation_from_data
    from models.scenario import read_scenario_data
    from sim.plan.consolidated import candidates_of

    data = read_scenario_data(ROOT / "examples" / "plan" / "linuxone_consolidation.yaml")
    dies = candidates_of(consolidation_from_data({**data, "device_model": "dies"}))
    default = candidates_of(consolidation_from_data(data))
    assert dies and len(dies) == len(default)
    assert all(c.scenario.device_model == ("auto" if c.scenario.topology.kind == "san" else "dies") for c in dies)
    assert all(c.scenario.device_model == "auto" for c in default)
