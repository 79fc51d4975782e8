"""Requirements for real questions: the ``candidates:`` block documented where users look (the JSON schema the
docs are generated from, ``plan --help``), capacity optional, and one rule for which devices a platform takes,
applied alike by the requirements, the planner's wide space and ``simulate`` (a refusal exits 2 with the reason)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from models.catalog import load_catalog
from models.requirements import (
    PLATFORMS,
    CandidateSpace,
    Requirements,
    device_refusal,
    platform_devices,
    requirements_from_data,
)
from sim.cli.flashplan import main

ROOT = Path(__file__).resolve().parent.parent.parent
S1_NVME = str(ROOT / "examples" / "s1_linuxone_nvme_raid10.yaml")
ZVM_PLAN = str(ROOT / "examples" / "plan" / "zvm_paging.toml")


def base(platform: str = "linuxone", **extra: object) -> dict[str, object]:
    return {"platform": platform, "workload": "oltp_4k_70_30", "target": {"iops": 50_000},
            "latency_slo": {"statistic": "mean", "us": 1_000}, "protection": "none", **extra}


def test_every_candidates_field_is_described_in_the_requirements_schema() -> None:
    schema = Requirements.model_json_schema()
    block = schema["$defs"]["CandidateSpace"]
    assert "candidates:" in block["description"]
    for name, prop in block["properties"].items():
        assert len(prop.get("description", "")) > 20, f"candidates.{name} has no description"
    devices = block["properties"]["devices"]["description"]
    for options in PLATFORMS.values():
        assert all(d in devices for d in options.devices)


def test_plan_help_documents_the_requirements_file_and_its_candidates_block(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for name in CandidateSpace.model_fields:
        assert f"  {name}: " in text, name
    assert "usable_tb" in text and "optional" in text
    assert "P4510-4TB" in text.split("models each platform takes")[1]
    lowered = text.lower()
    for developer_words in ("2-core", "shared", "readme", "issue ", "session", "sim/", "models/"):
        assert developer_words not in lowered


def test_the_requirements_schema_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--requirements"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "usable_tb" not in schema.get("required", [])
    assert "CandidateSpace" in schema["$defs"]


def test_capacity_is_optional_and_every_configuration_then_qualifies_on_capacity() -> None:
    from sim.plan.planner import _screen, enumerate_candidates

    without = requirements_from_data(base("zvm_edev", workload="virstor_paging", target={"iops": 20_000},
                                          latency_slo={"statistic": "mean", "us": 2_000}))
    assert without.usable_tb is None
    candidates = enumerate_candidates(without)[0][:6]
    roomy = without.model_copy(update={"usable_tb": 1_000.0})
    for c in candidates:
        _screen(c, without)
        assert c.stage != "capacity"
        _screen(c, roomy)
        assert c.stage == "capacity" and "1000 TB required" in (c.rejection or "")


def test_a_plan_without_capacity_runs_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", ZVM_PLAN, "--set", "usable_tb=null", "--verify-top", "1", "--show", "2", "--quiet",
                 "--set", "verify.max_ios=4000", "--set", "verify.warmup_ios=500"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no capacity requirement" in out


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_one_rule_decides_which_devices_a_platform_takes(platform: str) -> None:
    """A device the rule allows is accepted as a candidate; any other catalog device is refused with the rule."""
    catalog = load_catalog()
    takes = set(platform_devices(platform))
    assert set(PLATFORMS[platform].devices) <= takes
    for device in [*catalog.drives, *catalog.dimms]:
        data = base(platform, candidates={"devices": [device]})
        if device in takes:
            assert device_refusal(platform, device) is None
            assert requirements_from_data(data).candidates.devices == [device]
        else:
            with pytest.raises(ValidationError) as exc:
                requirements_from_data(data)
            assert "not available on" in str(exc.value) and "allowed:" in str(exc.value)


def test_linuxone_takes_the_p4510_and_no_ibm_i_feature_code() -> None:
    takes = platform_devices("linuxone")
    assert "P4510-4TB" in takes
    assert not set(takes) & set(PLATFORMS["power10_ibmi"].devices)
    assert "P3700-800GB" not in takes  # an add-in card does not fit an NVMe carrier


def test_the_wide_space_tries_every_device_the_platform_takes() -> None:
    from sim.plan.space import wide_topologies

    req = requirements_from_data(base(candidates={"device_counts": [2], "namespaces": [1], "layouts": ["raid1"],
                                                  "include_san": False}))
    tried = {topo["drive"] for _, topo in wide_topologies(req)}
    assert tried == set(platform_devices("linuxone"))


def test_simulate_and_plan_agree_on_the_p4510_on_linuxone(capsys: pytest.CaptureFixture[str]) -> None:
    assert requirements_from_data(base(candidates={"devices": ["P4510-4TB"]})).candidates.devices == ["P4510-4TB"]
    code = main(["simulate", S1_NVME, "--set", "topology.drive=P4510-4TB", "--set", "run.max_ios=3000",
                 "--set", "run.warmup_ios=500", "--json"])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("command", ["simulate", "analyze", "cost"])
def test_a_device_the_platform_does_not_take_is_refused_with_the_reason(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main([command, S1_NVME, "--set", "topology.drive=ES5F"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("topology.drive: 'ES5F' is not available on linuxone")
    assert "IBM NVMe Carrier" in err and "P4510-4TB" in err and "Traceback" not in err


def test_plan_refuses_a_device_the_platform_does_not_take_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", ZVM_PLAN, "--set", 'candidates.devices=["PM1733-1.92TB"]'])
    err = capsys.readouterr().err
    assert code == 2
    assert "candidates.devices" in err and "P4510 on the IBM Adapter for NVMe" in err and "allowed: P4510-4TB" in err


def test_a_scenario_on_another_host_is_not_held_to_a_platform(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["analyze", S1_NVME, "--set", "topology.drive=ES5F", "--set", "topology.host.model=x86-Linux-server"])
    assert code == 0, capsys.readouterr().err
