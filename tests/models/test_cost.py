"""Cost: capex from catalog prices, usable capacity after protection, $/KIOPS, price-performance."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import load_scenario, lookup, scenario_from_data, with_overrides
from models.cost import (
    CostError,
    capex,
    data_fraction,
    price_performance,
    price_performance_between,
    raw_capacity_tb,
    usable_capacity_tb,
    usd_per_kiops,
    usd_per_usable_tb,
)
from models.topology import DirectNvme, Exflash
from sim.cli.flashplan import main
from sim.route.volume import Volume
from tests.conftest import EXAMPLES, FAST_RUN

S1_NVME = EXAMPLES / "s1_linuxone_nvme_raid10.yaml"
S1_FCP = EXAMPLES / "s1_linuxone_fcp_ds8950f.yaml"
S2_IBMI = EXAMPLES / "s2_ibmi_8x4_mirrored.yaml"


def _price(section: str, name: str) -> float:
    return float(lookup(section, name).price.usd)


@pytest.mark.parametrize(
    ("layout", "members", "fraction"),
    [("jbod", 3, 1.0), ("raid0", 4, 1.0), ("raid10", 4, 0.5), ("ibmi_mirror", 32, 0.5), ("raid1", 2, 0.5),
     ("raid5", 4, 0.75), ("raid5", 3, 2 / 3), ("raid6", 6, 4 / 6), ("raid6", 4, 0.5)],
)
def test_protection_keeps_the_textbook_share_of_space(layout: str, members: int, fraction: float) -> None:
    assert data_fraction(layout, members) == pytest.approx(fraction)


DRIVES = st.sampled_from(["ES5B", "ES5F", "ECTB", "ES4E"])


@settings(max_examples=40, deadline=None)
@given(drive=DRIVES, drives=st.integers(1, 16), per_drive=st.sampled_from([1, 2, 4, 8]),
       layout=st.sampled_from(["jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "ibmi_mirror"]),
       fill=st.sampled_from([None, 0.5, 0.9]))
def test_usable_capacity_is_what_the_engine_volume_offers(drive: str, drives: int, per_drive: int, layout: str,
                                                          fill: float | None) -> None:
    """The priced capacity equals the capacity of the simulated volume (sim/route/volume.py), namespaces included."""
    spec = lookup("drives", drive)
    size_gb = None if fill is None else spec.capacity_tb * 1000 * fill / per_drive
    data = {"kind": "direct_nvme", "drive": drive, "drives": drives, "adapter": "EJ1Y", "adapters": 2,
            "namespaces": {"per_drive": per_drive, **({"size_gb": size_gb} if size_gb else {})}, "layout": layout}
    try:
        topo = DirectNvme.model_validate(data)
    except ValueError:
        return  # a combination the topology rules refuse has no capacity to check
    members = drives * per_drive
    ns_bytes = int((size_gb or spec.capacity_tb * 1000 / per_drive) * 1e9)
    volume = Volume(layout, members, 256 * 1024, ns_bytes, lambda m: 0, False)
    assert usable_capacity_tb(topo) * 1e12 == pytest.approx(volume.capacity, rel=1e-6)
    assert usable_capacity_tb(topo) <= raw_capacity_tb(topo) * (1 + 1e-9)


@pytest.mark.parametrize("layout", ["jbod", "raid0"])
def test_exflash_usable_capacity_is_what_the_engine_volume_offers(layout: str) -> None:
    """eXFlash DIMMs are the volume's members: usable capacity follows the volume's rule (``data_members``) for
    every host layout the topology takes, as it does for drives (so a mirrored layout added later costs space)."""
    scenario = with_overrides(load_scenario(EXAMPLES / "s3_exflash_4dimms.yaml"), {"topology.layout": layout})
    topo = scenario.topology
    assert isinstance(topo, Exflash)
    volume = Volume(layout, topo.dimms, 256 * 1024, int(topo.dimm_spec.capacity_tb * 1e12), lambda m: 0, False)
    assert usable_capacity_tb(topo) * 1e12 == pytest.approx(volume.capacity, rel=1e-9)


def test_namespaces_may_leave_part_of_the_drive_unallocated() -> None:
    s2 = load_scenario(S2_IBMI)  # 8 x ES5F (3.2 TB), 4 namespaces of 200 GB each, IBM i mirrored
    cost = capex(s2.topology)  # type: ignore[arg-type]
    assert cost.raw_tb == pytest.approx(8 * 3.2)
    assert cost.usable_tb == pytest.approx(8 * 4 * 0.200 / 2)
    whole = with_overrides(s2, {"topology.namespaces.size_gb": 800})
    assert capex(whole.topology).usable_tb == pytest.approx(8 * 3.2 / 2)  # type: ignore[arg-type]


def test_direct_nvme_capex_is_drives_plus_carriers_from_the_catalog() -> None:
    s1 = load_scenario(S1_NVME)  # 4 x PM1733 in 4 IBM NVMe Carriers, md RAID-10
    cost = capex(s1.topology)  # type: ignore[arg-type]
    expected = 4 * _price("drives", "PM1733-1.92TB") + 4 * _price("adapters", "IBM-NVMe-Carrier-0448")
    assert cost.total_usd == pytest.approx(expected)
    assert {line.model for line in cost.lines} == {"PM1733-1.92TB", "IBM-NVMe-Carrier-0448"}
    assert all(line.source for line in cost.lines)
    assert cost.usable_tb == pytest.approx(4 * 1.92 / 2)
    assert cost.as_dict()["total_usd"] == pytest.approx(expected)


def test_san_capex_counts_host_adapters_and_a_share_of_the_server() -> None:
    fcp = load_scenario(S1_FCP)  # 2 x FICON Express32S, DS8950F
    server = _price("storage_servers", "DS8950F")
    hba = _price("san_adapters", "FICON-Express32S")
    assert capex(fcp.topology).total_usd == pytest.approx(2 * hba + server)  # type: ignore[arg-type]
    assert capex(fcp.topology, storage_only=True).total_usd == pytest.approx(server)  # type: ignore[arg-type]
    half = capex(fcp.topology, storage_server_share=0.5, storage_only=True)  # type: ignore[arg-type]
    assert half.total_usd == pytest.approx(server / 2)
    raw = lookup("storage_servers", "DS8950F").raw_capacity_tb
    assert half.raw_tb == pytest.approx(raw / 2) and half.usable_tb == pytest.approx(raw / 2)
    # LUN count x LUN size when the size is given (4 x 3.8 TB in seed 000), else the server's capacity
    assert usable_capacity_tb(fcp.topology, lun_size_gb=3800) == pytest.approx(4 * 3.8)  # type: ignore[arg-type]
    assert usable_capacity_tb(fcp.topology) == pytest.approx(raw)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="storage_server_share"):
        capex(fcp.topology, storage_server_share=0)  # type: ignore[arg-type]


def test_exflash_and_zvm_price_their_devices() -> None:
    ex = load_scenario(EXAMPLES / "s3_exflash_4dimms.yaml")
    assert capex(ex.topology).total_usd == pytest.approx(4 * _price("dimms", "eXFlash-400GB"))  # type: ignore[arg-type]
    assert capex(ex.topology).usable_tb == pytest.approx(4 * 0.4)  # type: ignore[arg-type]
    zvm = load_scenario(EXAMPLES / "s4_zvm_edev_aliases.yaml")
    expected = _price("drives", "P4510-4TB") + _price("adapters", "IBM-Adapter-for-NVMe")
    assert capex(zvm.topology).total_usd == pytest.approx(expected)  # type: ignore[arg-type]


def test_what_cannot_be_priced_says_why() -> None:
    mm1 = load_scenario(EXAMPLES / "mm1.yaml")
    with pytest.raises(CostError, match="generic"):
        capex(mm1.topology)  # type: ignore[arg-type]
    spec = lookup("drives", "ES5F").model_dump()
    spec.pop("price")
    unpriced = scenario_from_data({"topology": {"kind": "direct_nvme", "drive": spec, "drives": 4, "layout": "raid10"},
                                   "workload": {"kind": "open", "rate_iops": 1000}})
    with pytest.raises(CostError, match="no price"):
        capex(unpriced.topology)  # type: ignore[arg-type]


def test_spc1_price_performance_units() -> None:
    assert usd_per_kiops(100_000, 50_000) == pytest.approx(2_000)  # $ per thousand IOPS
    assert usd_per_usable_tb(30_000, 6) == pytest.approx(5_000)
    assert math.isinf(usd_per_kiops(1, 0)) and math.isinf(usd_per_usable_tb(1, 0))


@settings(max_examples=60, deadline=None)
@given(cost_a=st.floats(1, 1e7), perf_a=st.floats(1e-3, 1e7), cost_b=st.floats(1, 1e7), perf_b=st.floats(1e-3, 1e7))
def test_the_two_forms_of_price_performance_agree(cost_a: float, perf_a: float, cost_b: float, perf_b: float) -> None:
    pp = price_performance(cost_a, perf_a, cost_b, perf_b)
    # "x% better" = x% lower cost per unit of throughput; the ratio form is throughput per dollar
    assert pp.better_pct == pytest.approx(100 * (1 - (cost_a / perf_a) / (cost_b / perf_b)), rel=1e-9, abs=1e-9)
    assert pp.perf_per_dollar_ratio == pytest.approx((perf_a / cost_a) / (perf_b / cost_b), rel=1e-9)
    assert pp.better_pct / 100 == pytest.approx(1 - 1 / pp.perf_per_dollar_ratio, rel=1e-9, abs=1e-9)
    swapped = price_performance(cost_b, perf_b, cost_a, perf_a)
    assert swapped.perf_per_dollar_ratio == pytest.approx(1 / pp.perf_per_dollar_ratio, rel=1e-9)
    assert (pp.better_pct > 0) == (pp.cost_per_unit_a < pp.cost_per_unit_b)


def test_equal_throughput_makes_better_the_cost_saving() -> None:
    pp = price_performance(4_000, 100, 100_000, 100)
    assert pp.better_pct == pytest.approx(96.0)
    assert pp.perf_per_dollar_ratio == pytest.approx(25.0)
    assert pp.perf_per_dollar_gain_pct == pytest.approx(2_400.0)
    with pytest.raises(ValueError, match="perf_b"):
        price_performance(1, 1, 1, 0)


def test_seed000_convention_prorates_the_server_to_equal_raw_capacity() -> None:
    """Seed 000 section 4.2: drives + carriers against a DS8950F of the same raw capacity, storage costs only."""
    nvme, fcp = load_scenario(S1_NVME), load_scenario(S1_FCP)
    cmp = price_performance_between(nvme, 1.16, fcp, 1.0, storage_only=True, equal_raw_capacity=True)
    share = 4 * 1.92 / lookup("storage_servers", "DS8950F").raw_capacity_tb
    nvme_cost = 4 * _price("drives", "PM1733-1.92TB") + 4 * _price("adapters", "IBM-NVMe-Carrier-0448")
    server_cost = share * _price("storage_servers", "DS8950F")
    assert cmp.capex_a.total_usd == pytest.approx(nvme_cost)
    assert cmp.capex_b.total_usd == pytest.approx(server_cost)
    assert cmp.capex_b.raw_tb == pytest.approx(cmp.capex_a.raw_tb)
    assert cmp.result.better_pct == pytest.approx(100 * (1 - (nvme_cost / 1.16) / server_cost))
    # the same comparison the other way round, and a faster SAN side, lower the NVMe advantage
    reverse = price_performance_between(fcp, 1.0, nvme, 1.16, storage_only=True, equal_raw_capacity=True)
    assert reverse.result.perf_per_dollar_ratio == pytest.approx(1 / cmp.result.perf_per_dollar_ratio)
    slower = price_performance_between(nvme, 0.93, fcp, 1.0, storage_only=True, equal_raw_capacity=True)
    assert slower.result.better_pct < cmp.result.better_pct
    with pytest.raises(ValueError, match="exactly one side"):
        price_performance_between(nvme, 1.0, nvme, 1.0, equal_raw_capacity=True)


def test_cost_command_compares_two_files_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["cost", str(S1_NVME), str(S1_FCP), "--perf", "1.16", "--perf", "1", "--storage-only",
                 "--equal-raw-capacity", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    expected = price_performance_between(load_scenario(S1_NVME), 1.16, load_scenario(S1_FCP), 1.0,
                                         storage_only=True, equal_raw_capacity=True)
    assert data["price_performance"]["better_pct"] == pytest.approx(expected.result.better_pct)
    assert data["configurations"][0]["capex"]["total_usd"] == pytest.approx(expected.capex_a.total_usd)


def test_cost_command_simulates_for_kiops(capsys: pytest.CaptureFixture[str]) -> None:
    sets = [f"--set={k}={v}" for k, v in FAST_RUN.items()]
    code = main(["cost", str(S1_NVME), *sets, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    conf = json.loads(out)["configurations"][0]
    iops, (lo, hi) = conf["throughput"]["value"], conf["throughput"]["ci95"]
    assert lo <= iops <= hi and iops > 0
    assert conf["usd_per_kiops"]["value"] == pytest.approx(conf["capex"]["total_usd"] / (iops / 1000))
    k_lo, k_hi = conf["usd_per_kiops"]["ci95"]
    assert k_lo <= conf["usd_per_kiops"]["value"] <= k_hi


def test_cost_command_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cost", str(EXAMPLES / "mm1.yaml")]) == 2
    assert "topology.kind" in capsys.readouterr().err
    assert main(["cost", str(S1_NVME), "--equal-raw-capacity", "--perf", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--equal-raw-capacity" in err and "--perf" in err
    assert main(["cost", str(S1_NVME), str(S2_IBMI), "--equal-raw-capacity", "--perf", "1", "--perf", "1"]) == 2
    assert "exactly one" in capsys.readouterr().err
