"""The user's words for the model's internal component names (``adapter2.uplink.to_host`` -> "NVMe adapter 3: PCIe uplink, to the host").

One mapping, used by every utilization chart, bottleneck sentence and overload message of
the app. Unknown names are shown as they are (a textbook station is named by its file).
"""

from __future__ import annotations

import re

from models.bottleneck import LIMITING_UTILIZATION as BOTTLENECK_UTILIZATION
from models.bottleneck import limits

_DEVICE = {"adapter": "NVMe adapter", "drive": "drive", "dimm": "eXFlash DIMM", "hba": "host adapter", "lun": "LUN",
           "association": "NVMe/FC association", "driver_thread": "eXFlash driver thread", "ns": "namespace", "port": "port"}
_PART = {
    "uplink": "PCIe uplink", "link": "PCIe link", "memory_channel": "memory channel", "nvme_queues": "NVMe queues",
    "program_units": "flash program (write) units", "read_units": "flash read units", "read_bw": "read bandwidth",
    "write_bw": "write bandwidth", "write_cache": "write cache", "nand_dies": "NAND dies", "queue": "queue",
    "queues": "queues", "backend": "back-end drives", "backend_bw": "back-end bandwidth", "controller": "controllers",
    "destage": "cache destage", "subchannels": "subchannels (base + alias devices)",
}
_FLASH_PART = {"controller": "flash controller (command rate)", "dies": "NAND dies"}
"""A drive's or DIMM's parts under the die-level device model (``sim/route/elements.py``: ``.controller``, ``.dies``)."""
_WHOLE = {
    "host_cpu": "host CPU cores", "host_stack.serial": "host I/O stack (serialised part)", "edev": "z/VM EDEV",
    "server": "storage server", "servers": "servers", "to_host": "to the host", "to_device": "to the device",
}
_INDEXED = re.compile(r"^([a-z_]+?)(\d+)$")


def _piece(piece: str) -> str:
    m = _INDEXED.match(piece)
    if m and m.group(1) in _DEVICE:
        return f"{_DEVICE[m.group(1)]} {int(m.group(2)) + 1}"
    return _WHOLE.get(piece) or _PART.get(piece) or piece.replace("_", " ")


def component_words(name: str) -> str:
    """A component's name as a customer reads it (indices from 1): ``drive0.read_units`` -> "drive 1: flash read units"."""
    if name in _WHOLE:
        return _WHOLE[name]
    raw = name.split(".")
    pieces = [_piece(p) for p in raw]
    if len(pieces) == 1:
        return pieces[0]
    m = _INDEXED.match(raw[0])
    if m and m.group(1) in ("drive", "dimm"):
        pieces[1:] = [_FLASH_PART.get(r, w) for r, w in zip(raw[1:], pieces[1:], strict=True)]
    head, *rest = pieces
    tail = ", ".join(rest)
    return f"{head}: {tail}"


def limiting_sentence(bottleneck: str, utilization: float) -> str:
    """"Bottleneck: X (93% busy)" when X is near saturation, else that nothing is (the load, not the hardware, limits it)."""
    words = component_words(bottleneck)
    if utilization == utilization and utilization >= BOTTLENECK_UTILIZATION:
        return f"Bottleneck: **{words}** ({utilization:.0%} busy)"
    busy = f"{utilization:.0%}" if utilization == utilization else "-"
    return (f"No bottleneck: the busiest component, {words}, is {busy} busy; the offered load (jobs, queue depth, "
            "think time), not the hardware, sets the throughput")


BUSIEST = "busiest component"
"""A table's column of the most utilized component: "the bottleneck" only where it limits (``busiest_words``)."""


def busiest_words(name: str, utilization: float | None = None) -> str:
    """A table cell for the most utilized component: "NVMe adapter 3: PCIe uplink, to the host (29% busy)", and
    ", the bottleneck" only when it is near saturation (``BOTTLENECK_UTILIZATION``)."""
    words = component_words(name)
    if utilization is None or utilization != utilization:
        return words
    return f"{words} ({utilization:.0%} busy{', the bottleneck' if is_bottleneck(utilization) else ''})"


def is_bottleneck(utilization: float) -> bool:
    """Whether the component limits the throughput (``models.bottleneck.limits``: the CLI's and the planner's rule)."""
    return limits(utilization)
