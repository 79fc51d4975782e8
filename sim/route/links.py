"""Link bandwidths: PCIe lanes, adapter uplinks, a z/VM EDEV drive's path, memory channels, FC ports
(DESIGN.md section 3, "link").

A link is full duplex: one transfer at a time in each direction, ``bytes / GB/s``. The GB/s a route
gives a link are its payload rate: the signalling rate after line coding (``PcieLink``, models/hardware.py:
generation x lanes, 128b/130b coding; the catalog's adapters, models/catalog/adapters.yaml) less the
protocol's per-packet overhead at the link's maximum payload (``Framing``). Block I/O moves whole packets
(every multiple of 512 B is a whole number of 256 B TLPs or of 2048 B FC frames but its last), so the
payload rate holds for every transfer of the route; ``Framing.efficiency`` gives a transfer's own share,
which falls below it only for a transfer shorter than one packet.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from models.hardware import PcieLink


def us_per_byte(gbs: float) -> float:
    """Transfer time in us of one byte at ``gbs`` GB/s (decimal GB)."""
    return 1.0 / (gbs * 1e3)


@dataclass(frozen=True)
class Framing:
    """A link protocol's packets: at most ``payload_bytes`` of data each, each costing ``overhead_bytes`` more on the
    wire (headers, framing, CRC and the link-layer packets sent per data packet)."""

    payload_bytes: int
    overhead_bytes: float

    def efficiency(self, size: float) -> float:
        """The share of the line a transfer of ``size`` bytes carries as data: size / (size + packets x overhead)."""
        if size <= 0:
            return 0.0
        packets = math.ceil(size / self.payload_bytes)
        return size / (size + packets * self.overhead_bytes)

    @property
    def full_packet_efficiency(self) -> float:
        """The payload share of a stream of full packets: the rate a link gives any transfer of whole packets."""
        return self.efficiency(self.payload_bytes)


PCIE_FRAMING = Framing(payload_bytes=256, overhead_bytes=24 + 8)
"""PCIe data TLPs at a 256 B max payload size, 24 B of TLP overhead plus 8 B of DLLP each.

Overhead per TLP: a 4-dword (16 B) header (64-bit addresses: NVMe data buffers in host memory), the 4 B LCRC, and the
framing: 1 B STP + 2 B sequence number + 1 B END at 2.5 / 5 GT/s, a 4 B STP token carrying the sequence number at
8 GT/s and above; no ECRC (optional). Intel FPGA AN 708 "PCI Express DMA Reference Design Using External Memory"
(2017), section "Understanding PCI Express Throughput": TLP overhead 5-7 dwords, DLLPs two dwords each (ACK/NAK and
flow-control updates). DLLPs: the PLX PEX 8532 data book (2007), section 8.4.1 "PCI Express Efficiency Upper Bound",
brackets them between none (one-way traffic) and one ACK plus one UpdateFC DLLP (16 B) per TLP (both directions
loaded); one DLLP (8 B) per TLP is the middle of that range (assumption). Max payload size: the PCIe base
specification allows 128-4096 B; NVMe SSDs and server root ports commonly run 256 B (e.g. ``lspci -vv`` of a Samsung
PM981: "DevCap: MaxPayload 256 bytes ... DevCtl: MaxPayload 256 bytes"; PEX 8532: "supports MPS of up to 256 bytes").
Result: 256 / 288 = 88.9% of the coded rate, 3.50 GB/s on a x4 Gen3 link of 3.94 GB/s (NVMe drives on x4 Gen3 read
sequentially at up to about 3.5 GB/s). Not charged: the NVMe command fetch, completion entry, interrupt and doorbell
TLPs, about 92 B towards the host and 130 B towards the device per command (2% of a 4 KiB read's 4,608 wire bytes)."""


def pcie_payload_gbs(coded_gbs: float) -> float:
    """The payload GB/s of a PCIe link whose rate after line coding is ``coded_gbs`` (``PCIE_FRAMING``)."""
    return coded_gbs * PCIE_FRAMING.full_packet_efficiency


@lru_cache(maxsize=64)
def pcie_gbs(gen: int | None, lanes: int | None) -> float | None:
    """Payload GB/s per direction of a PCIe link, or None for a device without one (a DIMM); once per (generation, lanes)."""
    if gen is None or lanes is None:
        return None
    return pcie_payload_gbs(PcieLink(generation=gen, lanes=lanes).gbs)  # type: ignore[arg-type]


DDR_REFRESH_EFFICIENCY = 1.0 - 0.260 / 7.8
"""The share of a DDR3 memory channel's peak left by refresh: the rank is unavailable for tRFC every tREFI. JEDEC
JESD79-3 (DDR3 SDRAM): tREFI 7.8 us (0-85 C), tRFC 260 ns for a 4 Gb device (350 ns for 8 Gb); 96.7%. A flash DIMM's
reads and writes are DDR bursts of 64 B with no packet header, so refresh is the channel's per-transfer-independent
loss; bus turnarounds and row misses are not charged."""


def memory_channel_payload_gbs(peak_gbs: float) -> float:
    """A DDR memory channel's usable GB/s from its peak (transfers x bus width): the peak less refresh."""
    return peak_gbs * DDR_REFRESH_EFFICIENCY


FC_FRAMING = Framing(payload_bytes=2048, overhead_bytes=36 + 24)
"""Fibre Channel data frames (FCP_DATA) of 2048 B payload: SOF 4 B, frame header 24 B, CRC 4 B, EOF 4 B, and at least
six ordered sets (24 B) of idle between frames (FC-FS). The frame field allows 2112 B; FCP data frames carry 2048 B
(a whole number of 512 B blocks). 97.2% of the line rate after coding."""

FC_CODED_GBS = {8: 8.5 * 8 / 10 / 8, 16: 14.025 * 64 / 66 / 8, 32: 28.05 * 256 / 257 / 8, 64: 57.8 * 256 / 257 / 8}
"""GB/s after line coding per direction of the FC generations (nominal Gb/s -> GBd x code rate / 8): 8GFC 8.5 GBd
8b/10b; 16GFC 14.025 GBd 64b/66b; 32GFC 28.05 GBd 256b/257b; 64GFC 28.9 GBd PAM4 (57.8 Gb/s) 256b/257b (FCIA
speedmap; fibrechannel.org 64GFC FAQ)."""


def fc_payload_gbs(port_gbps: float) -> float | None:
    """The frame-limited payload GB/s of an FC port of nominal ``port_gbps`` (None for a rate not in FC_CODED_GBS)."""
    coded = FC_CODED_GBS.get(round(port_gbps))
    return None if coded is None else coded * FC_FRAMING.full_packet_efficiency


def fc_port_gbs(catalog_gbs: float, port_gbps: float) -> float:
    """An FC port's payload GB/s: the catalog's figure, never above what its line carries in full frames. The
    catalog's FCIA figures (3,200 MB/s for 32GFC) sit below the frame limit (3.39 GB/s), so they stand."""
    limit = fc_payload_gbs(port_gbps)
    return catalog_gbs if limit is None else min(catalog_gbs, limit)


def zvm_link_gbs(gen: int | None, lanes: int | None, adapter_uplink_gbs: float) -> float:
    """An EDEV drive's link: the slower of its own PCIe link (``gen`` x ``lanes``) and the adapter's slot."""
    gbs = pcie_gbs(gen, lanes)
    return min(gbs, adapter_uplink_gbs) if gbs else adapter_uplink_gbs
