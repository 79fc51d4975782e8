"""Scenario models: validation rules, overrides, and the one-way data flow (no SimPy in models/)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from models import (
    DirectNvme,
    PcieLink,
    Scenario,
    apply_overrides,
    format_validation_error,
    load_scenario,
    scenario_from_data,
    with_overrides,
)
from tests.conftest import EXAMPLES


def test_models_do_not_import_simpy() -> None:
    code = "import sys, models; import models.catalog; print('simpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


@pytest.mark.parametrize(("gen", "per_lane"), [(3, 0.985), (4, 1.969), (5, 3.938)])
def test_pcie_effective_bandwidth(gen: int, per_lane: float) -> None:
    assert PcieLink(generation=gen, lanes=16).gbs == pytest.approx(16 * per_lane)  # type: ignore[arg-type]


def problems(data: dict) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as info:
        Scenario.model_validate(data)
    return format_validation_error(info.value)


BASE = {"topology": {"kind": "direct_nvme", "drive": "ES5F", "drives": 4, "layout": "raid10"},
        "workload": {"kind": "closed", "jobs": 2}}


@pytest.mark.parametrize(("layout", "drives", "ns", "ok"), [
    ("raid10", 4, 1, True), ("raid10", 2, 1, False), ("raid10", 6, 1, True), ("raid10", 5, 1, False),
    ("raid1", 1, 1, False), ("raid1", 2, 1, True), ("raid5", 2, 1, False), ("raid5", 3, 1, True),
    ("raid6", 3, 1, False), ("raid6", 4, 1, True), ("ibmi_mirror", 1, 2, False), ("ibmi_mirror", 2, 1, True),
    ("ibmi_mirror", 3, 1, False), ("jbod", 1, 1, True), ("raid0", 1, 1, True),
])
def test_layout_member_rules(layout: str, drives: int, ns: int, ok: bool) -> None:
    data = apply_overrides(BASE, {"topology.layout": layout, "topology.drives": drives, "topology.namespaces.per_drive": ns})
    if ok:
        assert Scenario.model_validate(data).topology.layout == layout  # type: ignore[union-attr]
    else:
        (path, message), = problems(data)
        assert path == "topology.layout" and layout in message


def test_namespace_capacity_and_protection_rules() -> None:
    data = apply_overrides(BASE, {"topology.namespaces": {"per_drive": 4, "size_gb": 900}})
    assert problems(data) == [("topology.namespaces.size_gb", "4 x 900.0 GB exceeds the 3200 GB of ES5F")]
    data = apply_overrides(BASE, {"topology.layout": "ibmi_mirror", "topology.mirror_protection": "bus"})
    assert problems(data)[0][0] == "topology.mirror_protection"
    ok = apply_overrides(data, {"topology.adapters": 2})
    assert isinstance(Scenario.model_validate(ok).topology, DirectNvme)


def test_inline_drive_spec() -> None:
    spec = {"description": "lab drive", "capacity_tb": 1, "read_bw_gbs": 3, "write_bw_gbs": 2, "read_kiops": 500,
            "write_kiops": 100, "read_latency_us": 90, "write_latency_us": 20}
    sc = Scenario.model_validate(apply_overrides(BASE, {"topology.drive": spec}))
    assert sc.topology.drive_spec.read_kiops == 500  # type: ignore[union-attr]


def test_overrides_create_missing_mappings_and_index_lists() -> None:
    sc = load_scenario(EXAMPLES / "mm1.yaml", {"run.seed": 7, "topology.stations.0.servers": 3})
    assert sc.run.seed == 7 and sc.topology.stations[0].servers == 3  # type: ignore[union-attr]
    again = with_overrides(sc, {"workload.rate_iops": 1000})
    assert again.workload.rate_iops == 1000 and again.run.seed == 7  # type: ignore[union-attr]


def test_size_mix_needs_an_entry_for_each_direction() -> None:
    data = {"topology": {"kind": "generic", "stations": [{"service_time_us": 1}]},
            "workload": {"kind": "open", "rate_iops": 10, "read_fraction": 0.5, "sizes": [{"kib": 4, "op": "read"}]}}
    assert problems(data) == [("workload.sizes", "no size entry applies to writes (op 'any' or 'write')")]
    data["workload"]["sizes"].append({"kib": 64, "op": "write", "weight": 1})
    sc = scenario_from_data(data)
    assert sc.workload.mean_bytes() == pytest.approx(0.5 * 4096 + 0.5 * 65536)


def test_every_example_validates() -> None:
    for path in EXAMPLES.glob("*.yaml"):
        assert load_scenario(path).name, path
