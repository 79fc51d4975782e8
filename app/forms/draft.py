"""The Size page's working scenario (the *draft*): constants, the draft in the session, nested data, allowed ranges.

The draft lives in the session as plain data, so it survives a visit to another page,
may be invalid while someone types, and can be replaced at once by a scenario loaded
from the library, a file or a preset.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import annotated_types
import streamlit as st
from pydantic import BaseModel, ValidationError

from app.presets import preset_data
from models.scenario import Scenario, ScenarioFileError, read_scenario_data, scenario_from_data
from sim.route.host import stack_choices

DEFAULT_PRESET = "ycsb_read_mostly"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
DRAFT = "draft"
MEMORY = "draft.topologies"

ATTACHMENTS: dict[str, str] = {
    "direct_nvme": "Direct-attached NVMe (drives, namespaces, RAID / IBM i mirroring, JBOF adapters)",
    "san": "SAN storage server (FCP or NVMe/FC host adapters, cache)",
    "exflash": "eXFlash memory-channel DIMMs",
    "zvm_edev": "z/VM NVMe EDEVs with HyperPAV aliases",
    "generic": "Textbook queueing network (from a file)",
}
STACKS_BY_ATTACHMENT: dict[str, tuple[str, ...]] = {kind: stack_choices(kind) for kind in ("direct_nvme", "san", "exflash", "zvm_edev")}
"""The host stacks the form offers per attachment, the model's default first (sim/route/host.py)."""
STACK_NAMES = {"linux_nvme": "Linux NVMe", "ibmi_nvme": "IBM i NVMe", "scsi_fcp": "SCSI over FCP", "nvme_fc": "NVMe over FC",
               "exflash_driver": "eXFlash driver", "zvm_cp": "z/VM CP (EDEV)"}
LAYOUT_NAMES = {"jbod": "JBOD (each namespace its own volume)", "raid0": "RAID-0 stripe", "raid1": "RAID-1 mirror",
                "raid10": "RAID-10", "raid5": "RAID-5", "raid6": "RAID-6", "ibmi_mirror": "IBM i mirroring"}
MIRRORED = ("raid1", "raid10", "ibmi_mirror")
STRIPED = ("raid0", "raid10", "raid5", "raid6")

# Example files each attachment starts from when first picked (examples/ holds the seeds' configurations).
STARTING_POINTS = {
    "direct_nvme": "s1_linuxone_nvme_raid10.yaml",
    "san": "s1_linuxone_fcp_ds8950f.yaml",
    "exflash": "s3_exflash_4dimms.yaml",
    "zvm_edev": "s4_zvm_edev_aliases.yaml",
}
FALLBACK_TOPOLOGIES: dict[str, dict[str, Any]] = {
    "direct_nvme": {"kind": "direct_nvme", "drive": "ES5F", "drives": 4, "adapter": "EJ1Y", "layout": "raid10"},
    "san": {"kind": "san"},
    "exflash": {"kind": "exflash"},
    "zvm_edev": {"kind": "zvm_edev"},
}
WORKLOAD_DEFAULTS: dict[str, dict[str, Any]] = {
    "closed": {"jobs": 16, "queue_depth": 8, "think_time_us": 0.0},
    "open": {"rate_iops": 50_000.0},
    "bursty": {"on_rate_iops": 50_000.0, "off_rate_iops": 2_000.0, "mean_on_ms": 100.0, "mean_off_ms": 900.0},
}
COMMON_WORKLOAD_FIELDS = ("read_fraction", "block_size_kib", "sizes", "access")

PRECISIONS: dict[str, dict[str, Any]] = {
    # 10 s: the seed-000 comparison (256 threads with think time) needs ~58,000 I/Os for ±5%, 4-5 s on a busy 2-core
    # machine; a run stops at its precision, so a faster machine answers sooner
    "Quick: ±5%, at most 10 s": {"target_rel_ci": 0.05, "max_wall_s": 10.0, "max_ios": 500_000},
    "Standard: ±2%, at most 20 s": {"target_rel_ci": 0.02, "max_wall_s": 20.0, "max_ios": 3_000_000},
    "Precise: ±1%, at most 90 s": {"target_rel_ci": 0.01, "max_wall_s": 90.0, "max_ios": 30_000_000},
}
CUSTOM_PRECISION = "Custom"
DEVICE_MODELS = {"auto": "Default", "pooled": "Pooled units", "dies": "Addressed dies (die-level)"}
"""A scenario's (and a requirement's) ``device_model`` choices, as the Size, Plan and QD-sweep pages name them."""
DEVICE_MODEL_HELP = ("Default: addressed dies for NVMe drives, pooled units for the eXFlash DIMMs (whose reads share "
                     "the program dies); pooled: identical read units behind one queue (the p99 is a screening estimate); dies: an I/O's "
                     "address picks one of N NAND dies behind a controller, so I/Os collide on busy dies and reads wait "
                     "out program operations: the fast path's p99 and p99.9 come from that mechanism "
                     "(calibration/ext/DIE_LEVEL.md)")


# -- the draft -------------------------------------------------------------------------------

def example_data(name: str) -> dict[str, Any] | None:
    """Raw data of an example scenario file, or None if it is missing or unreadable."""
    try:
        return read_scenario_data(EXAMPLES / name)
    except ScenarioFileError:
        return None


def starting_topology(kind: str) -> dict[str, Any]:
    data = example_data(STARTING_POINTS.get(kind, ""))
    if data and data.get("topology", {}).get("kind") == kind:
        return copy.deepcopy(data["topology"])
    return copy.deepcopy(FALLBACK_TOPOLOGIES.get(kind, {"kind": kind}))


def example_name(kind: str) -> str:
    """The scenario name of the example an attachment starts from ("" if none)."""
    data = example_data(STARTING_POINTS.get(kind, ""))
    return str(data.get("name", "")) if data else ""


@functools.lru_cache(maxsize=1)
def example_names() -> frozenset[str]:
    """The scenario names of every example file (a draft still named after one gets a generated name)."""
    names = set()
    for path in EXAMPLES.glob("*.yaml"):
        data = example_data(path.name)
        if data and data.get("name"):
            names.add(str(data["name"]))
    return frozenset(names)


def default_draft() -> dict[str, Any]:
    """What the Size page shows first: the seeds' LinuxONE NVMe RAID-10 under YCSB read-mostly, quick precision."""
    data = copy.deepcopy(example_data(STARTING_POINTS["direct_nvme"]) or {"topology": FALLBACK_TOPOLOGIES["direct_nvme"]})
    data["workload"] = preset_data(DEFAULT_PRESET)  # with the think time its source's throughput comes from
    data.setdefault("run", {}).update(PRECISIONS[next(iter(PRECISIONS))])
    return data


def draft(prefix: str = "size") -> dict[str, Any]:
    """The session's working scenario (raw data; it may be invalid)."""
    key = f"{prefix}.{DRAFT}"
    if key not in st.session_state:
        st.session_state[key] = default_draft()
    data: dict[str, Any] = st.session_state[key]
    return data


def set_draft(data: dict[str, Any] | Scenario, prefix: str = "size") -> None:
    """Replace the working scenario (a loaded or imported one) and reset the widgets to show it."""
    if isinstance(data, Scenario):
        data = data.model_dump(mode="json", exclude_none=True)
    st.session_state[f"{prefix}.{DRAFT}"] = copy.deepcopy(data)
    st.session_state.pop(f"{prefix}.{MEMORY}", None)
    clear_widgets(prefix)


def clear_widgets(prefix: str, scope: str = "") -> None:
    """Forget the widget states of a form (or of one part of it) so they are seeded from the draft again."""
    start = f"{prefix}:{scope}"
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(start)]:
        del st.session_state[key]


def current_scenario(prefix: str = "size") -> Scenario | None:
    """The draft as a validated Scenario, or None while it has problems."""
    try:
        return scenario_from_data(draft(prefix))
    except (ValidationError, ScenarioFileError):
        return None


# -- nested data ---------------------------------------------------------------------------

def get_path(data: dict[str, Any], path: str, default: Any = None) -> Any:
    node: Any = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def allowed_range(model: type[BaseModel], field: str, scale: float = 1.0, unit: str = "") -> str:
    """The range a model field allows, as text: ``1 .. 65,536`` or ``> 0``."""
    info = model.model_fields[field]
    lo: Any = None
    hi: Any = None
    lo_open = hi_open = False
    for m in info.metadata:
        if isinstance(m, annotated_types.Ge):
            lo = m.ge
        elif isinstance(m, annotated_types.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, annotated_types.Le):
            hi = m.le
        elif isinstance(m, annotated_types.Lt):
            hi, hi_open = m.lt, True

    def fmt(x: Any) -> str:
        v = float(x) * scale
        return f"{v:,.0f}" if v.is_integer() and abs(v) >= 1 else f"{v:g}"

    suffix = f" {unit}" if unit else ""
    if lo is not None and hi is not None:
        if not lo_open and not hi_open:
            return f"{fmt(lo)} .. {fmt(hi)}{suffix}"
        return f"{'>' if lo_open else '>='} {fmt(lo)} and {'<' if hi_open else '<='} {fmt(hi)}{suffix}"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {fmt(lo)}{suffix}"
    if hi is not None:
        return f"{'<' if hi_open else '<='} {fmt(hi)}{suffix}"
    return ""


def _prefers_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
