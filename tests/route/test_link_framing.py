"""Links carry their protocol's packet overhead (sim/route/links.py ``Framing``): a route's link runs at its payload rate.

PCIe: 256 B max payload, 24 B of TLP overhead and 8 B of DLLP per TLP (``PCIE_FRAMING``): 88.9% of the coded rate,
3.50 GB/s on x4 Gen3 (3.94 GB/s coded), about what NVMe drives read sequentially over such a link. FC: 2048 B data
frames with 36 B of frame fields and 24 B of idles (97.2%), a limit the catalog's FCIA payload figures sit below. A
DDR3 memory channel loses tRFC / tREFI to refresh (JESD79-3: 260 ns every 7.8 us)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calibration.ext.die_solvers import scenario_for
from models.catalog import lookup
from models.hardware import PcieLink
from sim.analytic import evaluate
from sim.route.describe import DirectRoute, describe
from sim.route.flash import host_transfer_us
from sim.route.links import (
    DDR_REFRESH_EFFICIENCY,
    FC_FRAMING,
    PCIE_FRAMING,
    fc_payload_gbs,
    fc_port_gbs,
    memory_channel_payload_gbs,
    pcie_gbs,
)


def test_pcie_payload_rate_is_full_tlps_of_256_bytes() -> None:
    assert PCIE_FRAMING.full_packet_efficiency == pytest.approx(256 / 288)
    coded = PcieLink(generation=3, lanes=4).gbs
    assert coded == pytest.approx(3.94)
    assert pcie_gbs(3, 4) == pytest.approx(3.502, abs=0.001)  # x4 Gen3: about 3.5 GB/s of data
    assert pcie_gbs(4, 4) == pytest.approx(7.001, abs=0.001)  # x4 Gen4 (1.969 GB/s per lane coded)
    assert pcie_gbs(None, None) is None


@given(st.integers(min_value=1, max_value=1 << 20))
def test_efficiency_rises_with_size_to_the_full_packet_rate(size: int) -> None:
    """A transfer's data share never exceeds a full packet's; any whole number of packets reaches it exactly."""
    for framing in (PCIE_FRAMING, FC_FRAMING):
        share = framing.efficiency(size)
        assert 0.0 < share <= framing.full_packet_efficiency + 1e-12
        whole = framing.payload_bytes * math.ceil(size / framing.payload_bytes)
        assert framing.efficiency(whole) == pytest.approx(framing.full_packet_efficiency)
        assert framing.efficiency(size) <= framing.efficiency(whole) + 1e-12


def test_small_transfers_pay_a_whole_packet() -> None:
    assert PCIE_FRAMING.efficiency(64) == pytest.approx(64 / 96)  # an NVMe command: one TLP of 64 B
    assert PCIE_FRAMING.efficiency(4096) == pytest.approx(4096 / (4096 + 16 * 32))  # 16 TLPs
    assert FC_FRAMING.efficiency(4096) == pytest.approx(4096 / (4096 + 2 * 60))  # two FCP_DATA frames


def test_fc_catalog_figures_stand_below_the_frame_limit() -> None:
    """32GFC: 28.05 GBd x 256/257 / 8 = 3.49 GB/s coded, 3.39 in full frames; the catalog's 3.2 (FCIA) stands."""
    assert fc_payload_gbs(32) == pytest.approx(3.393, abs=0.001)
    assert fc_payload_gbs(16) == pytest.approx(1.652, abs=0.001)
    assert fc_payload_gbs(8) == pytest.approx(0.826, abs=0.001)
    assert fc_payload_gbs(10) is None
    hba = lookup("san_adapters", "FC-HBA-32G")
    assert fc_port_gbs(hba.port_gbs, hba.port_gbps) == hba.port_gbs == 3.2
    assert fc_port_gbs(4.0, 32) == fc_payload_gbs(32)  # a figure above what the line carries is clipped


def test_memory_channel_loses_refresh() -> None:
    assert pytest.approx(1 - 0.26 / 7.8) == DDR_REFRESH_EFFICIENCY
    assert memory_channel_payload_gbs(12.8) == pytest.approx(12.373, abs=0.001)


def test_the_route_and_the_die_layout_use_the_payload_rate() -> None:
    """The drive's link and the adapter's uplink in the description, and the 4 KiB transfer inside the QD1 latency."""
    route = describe(scenario_for("drives", "P3700-800GB", 1, 10_000))
    assert isinstance(route, DirectRoute) and route.drive_links is not None
    spec = lookup("drives", "P3700-800GB")
    assert spec.link is not None
    assert route.drive_links.gbs == pytest.approx(spec.link.gbs * 256 / 288)
    assert route.uplinks.gbs == pytest.approx(PcieLink(generation=4, lanes=16).gbs * 256 / 288)
    assert host_transfer_us(spec) == pytest.approx(4096 / (spec.link.gbs * 256 / 288 * 1e3))


def test_a_sequential_stream_tops_out_at_the_links_payload_rate() -> None:
    """A drive rated above its x4 Gen3 link reads 128 KiB sequentially at about 3.5 GB/s, not the 3.94 coded."""
    spec = lookup("drives", "P3700-800GB")
    fast_drive = spec.model_copy(update={"read_bw_gbs": 6.0, "random_read_bw_gbs": None})
    sc = scenario_for("drives", "P3700-800GB", 32, 10_000, block_kib=128)
    sc = sc.model_copy(update={"topology": sc.topology.model_copy(update={"drive": fast_drive}),
                               "workload": sc.workload.model_copy(update={"access": "sequential"})})
    got = evaluate(sc)
    assert got.mbps / 1e3 == pytest.approx(pcie_gbs(3, 4), rel=0.01)
    assert got.bottleneck is not None and got.bottleneck.startswith("drive0.link")
