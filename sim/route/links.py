"""Link bandwidths: PCIe lanes, adapter uplinks, a z/VM EDEV drive's path (DESIGN.md section 3, "link").

A link is full duplex: one transfer at a time in each direction, ``bytes / GB/s``. The GB/s
come from ``PcieLink`` (models/hardware.py: generation x lanes, 128b/130b coding) and the
catalog's adapters (models/catalog/adapters.yaml).
"""

from __future__ import annotations

from functools import lru_cache

from models.hardware import PcieLink


def us_per_byte(gbs: float) -> float:
    """Transfer time in us of one byte at ``gbs`` GB/s (decimal GB)."""
    return 1.0 / (gbs * 1e3)


@lru_cache(maxsize=64)
def pcie_gbs(gen: int | None, lanes: int | None) -> float | None:
    """GB/s per direction of a PCIe link, or None for a device without one (a DIMM); once per (generation, lanes)."""
    if gen is None or lanes is None:
        return None
    return PcieLink(generation=gen, lanes=lanes).gbs  # type: ignore[arg-type]


def zvm_link_gbs(gen: int | None, lanes: int | None, adapter_uplink_gbs: float) -> float:
    """An EDEV drive's link: the slower of its own PCIe link (``gen`` x ``lanes``) and the adapter's slot."""
    gbs = pcie_gbs(gen, lanes)
    return min(gbs, adapter_uplink_gbs) if gbs else adapter_uplink_gbs
