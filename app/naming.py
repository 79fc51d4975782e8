"""A scenario's name generated from its configuration, so a header, a report or a library entry never
names a configuration it no longer is (a user-typed name is kept: see ``forms`` and ``is_generated``).

One function for every page: ``scenario_name`` takes a Scenario or the raw draft data
(which may be half-typed), and never raises.
"""

from __future__ import annotations

from typing import Any

from models.scenario import Scenario

LAYOUTS = {"jbod": "JBOD", "raid0": "RAID-0", "raid1": "RAID-1", "raid10": "RAID-10", "raid5": "RAID-5", "raid6": "RAID-6",
           "ibmi_mirror": "IBM i mirrored"}


def _workload_words(wl: dict[str, Any]) -> str:
    from app.presets import matching_preset
    from models.presets import PRESETS

    try:
        key = matching_preset(wl)
    except Exception:
        key = None
    if key:
        return PRESETS[key].title.split(" (")[0].split(":")[0]
    kind = wl.get("kind")
    read = f"{float(wl.get('read_fraction', 0.7)) * 100:.0f}% read"
    size = "mixed sizes" if wl.get("sizes") else f"{float(wl.get('block_size_kib', 4) or 4):g}K"
    if kind == "open":
        return f"{size} {read} at {float(wl.get('rate_iops', 0) or 0):,.0f} IOPS"
    if kind == "bursty":
        return f"{size} {read}, bursty"
    return f"{size} {read}, {wl.get('jobs', 1)} jobs x QD{wl.get('queue_depth', 1)}"


def _topology_words(t: dict[str, Any]) -> str:
    kind = t.get("kind")
    host = (t.get("host") or {}).get("model")
    on = f" on {host}" if host else ""
    if kind == "direct_nvme":
        ns = (t.get("namespaces") or {}).get("per_drive", 1)
        ns_text = f" x {ns} namespaces" if ns and ns != 1 else ""
        return f"{t.get('drives', 4)} x {t.get('drive', 'NVMe')}{ns_text} {LAYOUTS.get(str(t.get('layout')), t.get('layout'))}{on}"
    if kind == "san":
        proto = "NVMe/FC" if t.get("protocol") == "nvme_fc" else "FCP"
        return f"{t.get('luns', 4)} {proto} LUNs of {t.get('storage_server', 'a storage server')}{on}"
    if kind == "exflash":
        return f"{t.get('dimms', 4)} x {t.get('dimm', 'eXFlash')} DIMMs{on}"
    if kind == "zvm_edev":
        return f"z/VM EDEV on {t.get('drives', 1)} x {t.get('drive', 'NVMe')}, {t.get('aliases', 0)} HyperPAV aliases"
    return "textbook queueing network"


def scenario_name(scenario: Scenario | dict[str, Any]) -> str:
    """"4 x PM1733-1.92TB RAID-10 on LinuxONE-Emperor4-LPAR30: YCSB read-mostly on PostgreSQL" from the configuration."""
    data = scenario.model_dump(mode="json", exclude_none=True) if isinstance(scenario, Scenario) else scenario
    raw_topo, raw_wl = data.get("topology"), data.get("workload")
    topo: dict[str, Any] = raw_topo if isinstance(raw_topo, dict) else {}
    wl: dict[str, Any] = raw_wl if isinstance(raw_wl, dict) else {}
    try:
        return f"{_topology_words(topo)}: {_workload_words(wl)}"
    except Exception:  # a half-typed draft: a plain name rather than an error
        return "unnamed configuration"


def display_name(scenario: Scenario) -> str:
    """The name to show: the scenario's own, or the generated one."""
    return scenario.name or scenario_name(scenario)


def plain(text: str) -> str:
    """A name as literal text in Markdown (``**bold**``, ``$x$``, ``[link](...)`` are shown, not rendered)."""
    out = []
    for ch in text:
        if ch in "\\`*_{}[]()#+-.!|$~<>:":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
