"""Any drive a user can define runs under the default device model (``device_model: auto``,
sim/route/flash.py ``uses_die_layout``): a storage-class-memory drive whose rated QD1 read latency is below the die
model's fixed controller cost and host transfer has no NAND read time to derive dies from, so ``auto`` keeps it
pooled, in both solvers; asking for ``dies`` on it is bad input (exit 2) naming ``device_model``.

The drive is an Intel Optane SSD DC P4800X 375 GB given in a catalog override ($FLASHPLAN_CATALOG_DIR). Its
figures: 4 KiB random read QD1 mean latency 8.9 us (AnandTech, "Intel Optane SSD DC P4800X Review", page 4, QD1
table: https://www.anandtech.com/show/11209/intel-optane-ssd-dc-p4800x-review-a-deep-dive-into-3d-xpoint-enterprise-performance/4);
PCIe 3.0 x4, 375 GB, 550K random-read / 500K random-write IOPS (QD16), 2,400 / 2,000 MB/s sequential read /
write, typical latency < 10 us (AnandTech's specification table of the P4800X, "Intel Optane SSD DC P4800X 750GB
Hands-On Review": https://www.anandtech.com/show/11930/intel-optane-ssd-dc-p4800x-750gb-handson-review); the write
latency is the "< 10 us" typical figure taken at 10 us."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from models import scenario_from_data, with_overrides
from models.catalog import lookup
from models.loading import BadInput
from sim.route.flash import die_layout, die_read_room_us, uses_die_layout
from tests.conftest import fast

OPTANE = {
    "description": "Intel Optane SSD DC P4800X 375 GB (3D XPoint), PCIe 3.0 x4 NVMe",
    "vendor": "Intel",
    "interface": "nvme_pcie",
    "pcie_generation": 3,
    "pcie_lanes": 4,
    "capacity_tb": 0.375,
    "read_bw_gbs": 2.4,
    "write_bw_gbs": 2.0,
    "read_kiops": 550.0,
    "write_kiops": 500.0,
    "read_latency_us": 8.9,
    "write_latency_us": 10.0,
    "sources": {"read_latency_us": "AnandTech P4800X review, page 4: 4 KiB random read QD1 mean 8.9 us",
                "read_kiops": "AnandTech P4800X 750GB review, specification table: 550,000 4 KiB random read IOPS (QD16)",
                "write_kiops": "AnandTech P4800X 750GB review, specification table: 500,000 4 KiB random write IOPS (QD16)",
                "read_bw_gbs": "AnandTech P4800X 750GB review, specification table: 2,400 MB/s sequential read",
                "write_bw_gbs": "AnandTech P4800X 750GB review, specification table: 2,000 MB/s sequential write",
                "write_latency_us": "AnandTech P4800X 750GB review, specification table: typical latency < 10 us"},
}


def _scenario(device_model: str = "auto") -> Any:
    return scenario_from_data({
        "name": "one Optane P4800X",
        "topology": {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30", "stack": "linux_nvme"},
                     "drive": "P4800X-375GB", "drives": 1, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 1, "layout": "jbod"},
        "workload": {"kind": "closed", "jobs": 16, "queue_depth": 1, "read_fraction": 0.7, "block_size_kib": 4},
        "device_model": device_model,
    })


@pytest.fixture
def optane_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from sim.analytic import clear_cache

    (tmp_path / "drives.yaml").write_text(yaml.safe_dump({"P4800X-375GB": OPTANE}))
    monkeypatch.setenv("FLASHPLAN_CATALOG_DIR", str(tmp_path))
    clear_cache(everything=True)
    yield tmp_path
    monkeypatch.undo()
    clear_cache(everything=True)


def test_auto_keeps_a_drive_without_nand_read_time_pooled(optane_catalog: Path) -> None:
    from sim import simulate
    from sim.analytic import evaluate

    spec = lookup("drives", "P4800X-375GB")
    assert die_read_room_us(spec) < 0 and not uses_die_layout("auto", spec)
    assert uses_die_layout("auto", lookup("drives", "P4510-4TB"))  # a NAND drive keeps its dies
    auto, pooled = evaluate(_scenario()), evaluate(_scenario("pooled"))
    assert auto == pooled and auto.stable and "drive0.read_units" in auto.utilization
    des = simulate(with_overrides(_scenario(), fast({"run.max_ios": 10_000})))
    assert des.iops.value > 0 and "drive0.read_units" in des.utilization


def test_dies_on_such_a_drive_is_bad_input_naming_the_field(optane_catalog: Path) -> None:
    from sim.analytic import evaluate

    with pytest.raises(BadInput) as err:
        die_layout(lookup("drives", "P4800X-375GB"))
    (field, message), = err.value.problems
    assert field == "device_model" and "8.9" in message and "above 13.04 us" in message
    with pytest.raises(BadInput):
        evaluate(_scenario("dies"))


@pytest.mark.parametrize(("command", "extra"), [("simulate", ["--set", "run.max_ios=8000", "--set", "run.warmup_ios=1000"]),
                                                ("analyze", [])])
def test_the_cli_runs_it_by_default_and_refuses_dies_with_exit_2(optane_catalog: Path, tmp_path: Path, command: str,
                                                                 extra: list[str]) -> None:
    from sim.cli.flashplan import main

    path = tmp_path / "optane.yaml"
    path.write_text(yaml.safe_dump(_scenario().model_dump(mode="json", exclude_none=True)))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([command, str(path), "--json", *extra])
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    assert "drive0.read_units" in (data["fast"] if command == "analyze" else data)["utilization"]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([command, str(path), "--set", "device_model=dies", *extra])
    assert code == 2
    assert err.getvalue().startswith("device_model: 'dies' needs a device whose read_latency_us is above")
    assert "Traceback" not in err.getvalue()
