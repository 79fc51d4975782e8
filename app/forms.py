"""Scenarios from widgets: the platform, attachment and workload pickers of the Size page.

The working scenario (the *draft*) lives in the session as plain data, so it survives a
visit to another page, may be invalid while someone types, and can be replaced at once
by a scenario loaded from the library, a file or a preset. Every widget is seeded from
the draft and writes back to it; the draft is validated by the scenario models
themselves (``scenario_from_data``), and each problem is shown under the widget of the
field it names (``format_validation_error``: field path + message), with the range the
model allows. Nothing here runs a simulation.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import annotated_types
import streamlit as st
from pydantic import BaseModel, ValidationError
from streamlit.delta_generator import DeltaGenerator

from models.catalog import load_catalog
from models.presets import PRESETS
from models.scenario import RunSettings, Scenario, ScenarioFileError, format_validation_error, read_scenario_data, scenario_from_data
from models.topology import TOPOLOGY_KINDS, DirectNvme, Exflash, Namespaces, NvmeQueues, San, StorageCache, ZvmEdev
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, SizeWeight, WorkloadBase

T = TypeVar("T")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DRAFT = "draft"
MEMORY = "draft.topologies"

ATTACHMENTS: dict[str, str] = {
    "direct_nvme": "Direct-attached NVMe (drives, namespaces, RAID / IBM i mirroring, JBOF adapters)",
    "san": "SAN storage server (FCP or NVMe/FC host adapters, cache)",
    "exflash": "eXFlash memory-channel DIMMs",
    "zvm_edev": "z/VM NVMe EDEVs with HyperPAV aliases",
    "generic": "Textbook queueing network (from a file)",
}
STACKS_BY_ATTACHMENT: dict[str, tuple[str, ...]] = {
    "direct_nvme": ("linux_nvme", "ibmi_nvme"),
    "san": ("scsi_fcp", "nvme_fc"),
    "exflash": ("exflash_driver",),
    "zvm_edev": ("zvm_cp",),
}
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
    "Quick: ±5%, at most 5 s": {"target_rel_ci": 0.05, "max_wall_s": 5.0, "max_ios": 500_000},
    "Standard: ±2%, at most 20 s": {"target_rel_ci": 0.02, "max_wall_s": 20.0, "max_ios": 3_000_000},
    "Precise: ±1%, at most 90 s": {"target_rel_ci": 0.01, "max_wall_s": 90.0, "max_ios": 30_000_000},
}
CUSTOM_PRECISION = "Custom"


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


def default_draft() -> dict[str, Any]:
    """What the Size page shows first: the seeds' LinuxONE NVMe RAID-10 under YCSB read-mostly, quick precision."""
    data = example_data(STARTING_POINTS["direct_nvme"]) or {
        "topology": FALLBACK_TOPOLOGIES["direct_nvme"], "workload": dict(PRESETS["ycsb_read_mostly"].data)}
    data = copy.deepcopy(data)
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


# -- the form --------------------------------------------------------------------------------

@dataclass
class _Field:
    path: str
    label: str
    allowed: str
    slot: DeltaGenerator


class ScenarioForm:
    """Widgets bound to a draft scenario; ``validate()`` returns the Scenario or shows each problem under its widget."""

    def __init__(self, data: dict[str, Any], prefix: str = "size"):
        self.data = copy.deepcopy(data)
        self.prefix = prefix
        self.scope = "top"
        self.fields: dict[str, _Field] = {}
        self.general: DeltaGenerator | None = None
        self.extras: dict[str, Any] = {}

    def key(self, path: str) -> str:
        return f"{self.prefix}:{self.scope}:{path}"

    def _seed(self, path: str, value: Any) -> str:
        key = self.key(path)
        if key not in st.session_state:
            st.session_state[key] = value
        return key

    def _register(self, where: DeltaGenerator, path: str, label: str, allowed: str = "") -> None:
        self.fields[path] = _Field(path, label, allowed, where.empty())

    # -- widget kinds ------------------------------------------------------------------------
    def number(self, where: DeltaGenerator, path: str, label: str, model: type[BaseModel], field: str, *,
               default: float, integer: bool, step: float | None = None, help: str = "", fmt: str | None = None) -> float | None:
        """A number field. The widget itself takes any number, so the model's range is what the user sees enforced."""
        value = get_path(self.data, path, default)
        if value is None:
            value = default
        try:
            value = int(value) if integer else float(value)
        except (TypeError, ValueError):
            value = int(default) if integer else float(default)
        key = self._seed(path, value)
        if integer and not _prefers_int(st.session_state[key]):
            st.session_state[key] = int(st.session_state[key])
        if not integer and not isinstance(st.session_state[key], float):
            st.session_state[key] = float(st.session_state[key])
        allowed = allowed_range(model, field)
        tip = " ".join(x for x in (help, f"Allowed: {allowed}." if allowed else "") if x)
        if fmt is None and not integer and (step or 0) >= 1 and abs(default) >= 100:
            fmt = "%.0f"  # rates, budgets, microseconds: whole numbers read better than 600000.00
        v = where.number_input(label, key=key, step=(step if step is not None else (1 if integer else None)),
                               format=fmt, help=tip or None)
        self._register(where, path, label, allowed)
        set_path(self.data, path, v)
        return v

    def select(self, where: DeltaGenerator, path: str, label: str, options: Sequence[Any], *, default: Any = None,
               format_func: Callable[[Any], str] = str, help: str = "", write: bool = True) -> Any:
        options = list(options)
        value = get_path(self.data, path, default)
        if value not in options:
            value = default if default in options else options[0]
        key = self._seed(path, value)
        if st.session_state[key] not in options:
            st.session_state[key] = value
        v = where.selectbox(label, options, key=key, format_func=format_func, help=help or None)
        self._register(where, path, label, "one of: " + ", ".join(format_func(o) for o in options))
        if write:
            set_path(self.data, path, v)
        return v

    def checkbox(self, where: DeltaGenerator, path: str, label: str, *, default: bool, help: str = "", write: bool = True) -> bool:
        value = get_path(self.data, path, default) if write else default
        key = self._seed(path, bool(value))
        v = bool(where.checkbox(label, key=key, help=help or None))
        if write:
            self._register(where, path, label)
            set_path(self.data, path, v)
        return v

    def percent(self, where: DeltaGenerator, path: str, label: str, *, default: float, help: str = "") -> float:
        """A 0..1 fraction shown as a 0..100 % slider (0.1 % steps; a value set elsewhere, e.g. 91.4 %, is kept exactly)."""
        value = get_path(self.data, path, default)
        try:
            pct = round(float(value) * 100, 4)
        except (TypeError, ValueError):
            pct = round(default * 100, 4)
        key = self._seed(path, float(min(100.0, max(0.0, pct))))
        if not isinstance(st.session_state[key], float):
            st.session_state[key] = float(st.session_state[key])
        v = where.slider(label, 0.0, 100.0, key=key, step=0.1, format="%.1f%%", help=help or None)
        self._register(where, path, label, "0 .. 100 %")
        fraction = round(v / 100.0, 6)
        set_path(self.data, path, fraction)
        return fraction

    # -- the sections ------------------------------------------------------------------------
    def name(self, where: DeltaGenerator) -> None:
        """The scenario name; call it after ``topology()`` (into a container placed above) so a change of attachment can rename."""
        self.scope = "top"
        key = self._seed("name", str(self.data.get("name", "")))
        self.data["name"] = where.text_input("Scenario name", key=key, placeholder="e.g. ACME Db2 on Power10",
                                             help="Shown on the report and used when you save it to the library.")
        self._register(where, "name", "Scenario name")

    def topology(self, where: DeltaGenerator) -> str:
        """Platform and attachment widgets; returns the attachment kind."""
        cat = load_catalog()
        raw = self.data.get("topology")
        topo: dict[str, Any] = raw if isinstance(raw, dict) else {}
        current_kind = topo.get("kind") if topo.get("kind") in TOPOLOGY_KINDS else "direct_nvme"
        kinds = [k for k in ATTACHMENTS if k != "generic" or current_kind == "generic"]
        self.scope = "top"
        kind = self.select(where, "topology.kind", "Attachment", kinds, default=current_kind,
                           format_func=lambda k: ATTACHMENTS[k], write=False)
        memory: dict[str, dict[str, Any]] = st.session_state.setdefault(f"{self.prefix}.{MEMORY}", {})
        if kind != current_kind:
            topo = copy.deepcopy(memory.get(kind) or starting_topology(kind))
            if self.data.get("name") == example_name(str(current_kind)):
                # still the name of the example it started from: name it after the new starting point
                self.data["name"] = example_name(kind)
                st.session_state[f"{self.prefix}:top:name"] = self.data["name"]
        self.data["topology"] = topo
        self.scope = kind
        if kind == "direct_nvme":
            self._direct_nvme(where, cat)
        elif kind == "san":
            self._san(where, cat)
        elif kind == "exflash":
            self._exflash(where, cat)
        elif kind == "zvm_edev":
            self._zvm(where, cat)
        else:
            where.info("This scenario models textbook queues (stations with their own service laws); it is simulated as "
                       "loaded. Edit it as a file and import it in the Scenario library.")
            where.json(topo, expanded=False)
        memory[kind] = copy.deepcopy(self.data["topology"])
        return kind

    def _host(self, where: DeltaGenerator, kind: str, cat: Any, protocol_stack: str | None = None) -> None:
        stacks = STACKS_BY_ATTACHMENT[kind] if protocol_stack is None else (protocol_stack,)
        hosts = [name for name, h in cat.hosts.items() if any(s in h.cpu_us_per_io for s in stacks)]
        none = "(no host CPU model)"
        options = [*hosts, none]
        current = get_path(self.data, "topology.host.model") or none
        model = self.select(where, "topology.host.model", "Host", options, default=current if current in options else options[0],
                            format_func=lambda h: h if h == none else f"{h}: {cat.hosts[h].description}",
                            help="The host's cores and CPU microseconds per I/O come from the catalog.", write=False)
        host: dict[str, Any] = dict(get_path(self.data, "topology.host", {}) or {})
        if model == none:
            host.pop("model", None)
            host.pop("stack", None)
        else:
            host["model"] = model
            supported = [s for s in stacks if s in cat.hosts[model].cpu_us_per_io]
            if protocol_stack is not None:
                host["stack"] = protocol_stack
            elif len(supported) > 1:
                host["stack"] = self.select(where, "topology.host.stack", "Host storage stack", supported,
                                            default=host.get("stack"), format_func=lambda s: STACK_NAMES.get(s, s), write=False)
            else:
                host["stack"] = supported[0]
        self.data["topology"]["host"] = host

    def _direct_nvme(self, where: DeltaGenerator, cat: Any) -> None:
        self._host(where, "direct_nvme", cat)
        drives = list(cat.drives)
        drive = self.select(where, "topology.drive", "Drive model", drives, default="ES5F" if "ES5F" in drives else drives[0],
                            format_func=lambda d: f"{d}: {cat.drives[d].capacity_tb:g} TB, {cat.drives[d].read_kiops:g}k read IOPS")
        spec = cat.drives[drive]
        c1, c2 = where.columns(2)
        self.number(c1, "topology.drives", "Drives", DirectNvme, "drives", default=4, integer=True)
        self.number(c2, "topology.namespaces.per_drive", "Namespaces per drive", Namespaces, "per_drive", default=1, integer=True,
                    help=f"{drive} supports up to {spec.max_namespaces} namespaces.")
        layout = self.select(where, "topology.layout", "Layout", list(LAYOUT_NAMES), default="raid10",
                             format_func=lambda x: LAYOUT_NAMES[x])
        adapters = list(cat.adapters)
        c1, c2 = where.columns(2)
        adapter = self.select(c1, "topology.adapter", "JBOF adapter / carrier", adapters,
                              format_func=lambda a: f"{a} (holds {cat.adapters[a].max_drives})")
        self.number(c2, "topology.adapters", "Adapters", DirectNvme, "adapters", default=1, integer=True,
                    help=f"An {adapter} holds {cat.adapters[adapter].max_drives} drive(s).")
        more = where.expander("More: queues, chunk, mirror placement")
        if layout in MIRRORED:
            self.select(more, "topology.mirror_protection", "Mirror copies on different", ["drive", "planar", "bus"],
                        help="IBM i protection level: copies on different drives, or behind different adapters.")
        if layout in STRIPED:
            self.number(more, "topology.chunk_kib", "Chunk (KiB)", DirectNvme, "chunk_kib", default=256, integer=True)
        limit = self.checkbox(more, "ns_limit", "Limit I/Os outstanding per namespace (IBM i disk unit)",
                              default=get_path(self.data, "topology.namespaces.queue_depth") is not None, write=False)
        if limit:
            self.number(more, "topology.namespaces.queue_depth", "I/Os per namespace", Namespaces, "queue_depth", default=32, integer=True)
        else:
            set_path(self.data, "topology.namespaces.queue_depth", None)
        c1, c2 = more.columns(2)
        self.number(c1, "topology.nvme_queues.count", "NVMe queue pairs per drive", NvmeQueues, "count", default=32, integer=True)
        self.number(c2, "topology.nvme_queues.depth", "Entries per queue", NvmeQueues, "depth", default=1024, integer=True)

    def _san(self, where: DeltaGenerator, cat: Any) -> None:
        protocol = self.select(where, "topology.protocol", "Protocol", ["fcp", "nvme_fc"], default="fcp",
                               format_func=lambda p: {"fcp": "FCP (SCSI)", "nvme_fc": "NVMe over FC"}[p])
        self._host(where, "san", cat, protocol_stack="scsi_fcp" if protocol == "fcp" else "nvme_fc")
        hbas = [n for n, a in cat.san_adapters.items() if protocol in a.protocols] or list(cat.san_adapters)
        c1, c2 = where.columns(2)
        self.select(c1, "topology.host_adapter", "Host adapter", hbas,
                    format_func=lambda a: f"{a} ({cat.san_adapters[a].ports} x {cat.san_adapters[a].port_gbps:g} Gb/s)")
        self.number(c2, "topology.host_adapters", "Host adapters", San, "host_adapters", default=2, integer=True)
        servers = list(cat.storage_servers)
        c1, c2 = where.columns(2)
        server = self.select(c1, "topology.storage_server", "Storage server", servers,
                             format_func=lambda s: f"{s} ({cat.storage_servers[s].cache_gb:,.0f} GB cache)")
        self.number(c2, "topology.front_end_ports", "Front-end ports", San, "front_end_ports", default=4, integer=True,
                    help=f"{server} has at most {cat.storage_servers[server].max_front_end_ports}.")
        c1, c2 = where.columns(2)
        self.number(c1, "topology.luns", "LUNs" if protocol == "fcp" else "Namespaces", San, "luns", default=4, integer=True)
        if protocol == "fcp":
            self.number(c2, "topology.lun_queue_depth", "LUN queue depth", San, "lun_queue_depth", default=32, integer=True)
        else:
            self.number(c2, "topology.associations", "NVMe/FC associations", San, "associations", default=4, integer=True)
        hit_range = allowed_range(StorageCache, "read_hit_ratio", 100, "%")
        self.percent(where, "topology.cache.read_hit_ratio", "Read cache hits", default=0.5,
                     help=f"Share of reads served from the storage server's cache. Allowed: {hit_range}.")
        c1, c2 = where.columns(2)
        self.checkbox(c1, "topology.cache.write_back", "Write-back cache (acknowledge writes from cache)", default=True)
        self.select(c2, "topology.layout", "Host volume over the LUNs", ["raid0", "jbod"], format_func=lambda x: LAYOUT_NAMES[x])
        more = where.expander("More: fabric, price share")
        self.number(more, "topology.fabric_latency_us", "Fabric latency, one way (us)", San, "fabric_latency_us", default=5.0,
                    integer=False)
        key = f"{self.prefix}:cost:storage_server_share"
        st.session_state.setdefault(key, 1.0)
        share = more.number_input("Share of the storage server's price charged", key=key, step=0.05,
                                  help="1 = the server is bought for this workload; 0.25 = a quarter of a shared server. Allowed: > 0 .. 1.")
        self.extras["storage_server_share"] = share
        self.fields["cost.storage_server_share"] = _Field("cost.storage_server_share", "price share", "> 0 .. 1", more.empty())

    def _exflash(self, where: DeltaGenerator, cat: Any) -> None:
        self._host(where, "exflash", cat)
        dimms = list(cat.dimms)
        c1, c2 = where.columns(2)
        self.select(c1, "topology.dimm", "DIMM model", dimms, format_func=lambda d: f"{d}: {cat.dimms[d].capacity_tb * 1000:g} GB")
        self.number(c2, "topology.dimms", "DIMMs", Exflash, "dimms", default=4, integer=True)
        c1, c2 = where.columns(2)
        self.checkbox(c1, "topology.max_occupancy", "One driver thread per DIMM (max occupancy)", default=True)
        self.select(c2, "topology.layout", "Layout", ["jbod", "raid0"], format_func=lambda x: LAYOUT_NAMES[x])

    def _zvm(self, where: DeltaGenerator, cat: Any) -> None:
        self._host(where, "zvm_edev", cat)
        drives = list(cat.drives)
        c1, c2 = where.columns(2)
        self.select(c1, "topology.drive", "Drive model", drives, default="P4510-4TB" if "P4510-4TB" in drives else drives[0])
        self.number(c2, "topology.drives", "Drives", ZvmEdev, "drives", default=1, integer=True)
        c1, c2 = where.columns(2)
        self.number(c1, "topology.base_devices", "Base EDEVs", ZvmEdev, "base_devices", default=1, integer=True,
                    help="A base EDEV runs one I/O at a time.")
        self.number(c2, "topology.aliases", "HyperPAV aliases", ZvmEdev, "aliases", default=0, integer=True,
                    help="Each alias adds one concurrent I/O path.")
        self.select(where, "topology.adapter", "NVMe adapter", list(cat.adapters), default="IBM-Adapter-for-NVMe")

    def workload(self, where: DeltaGenerator) -> str:
        """Workload widgets (the preset picker fills them); returns the workload kind."""
        raw = self.data.get("workload")
        wl: dict[str, Any] = raw if isinstance(raw, dict) else {}
        current_kind = wl.get("kind") if wl.get("kind") in WORKLOAD_DEFAULTS else "closed"
        self.scope = "workload"
        kind = self.select(where, "workload.kind", "Load model", list(WORKLOAD_DEFAULTS), default=current_kind, write=False,
                           format_func=lambda k: {"closed": "Closed: jobs x queue depth (fio numjobs x iodepth)",
                                                  "open": "Open: Poisson arrivals at a rate",
                                                  "bursty": "Bursty: on/off arrivals"}[k])
        if kind != current_kind:
            wl = {"kind": kind, **{k: wl[k] for k in COMMON_WORKLOAD_FIELDS if k in wl}, **WORKLOAD_DEFAULTS[kind]}
        self.data["workload"] = wl
        self.scope = f"workload.{kind}"
        if kind == "closed":
            c1, c2 = where.columns(2)
            self.number(c1, "workload.jobs", "Jobs (threads)", ClosedWorkload, "jobs", default=16, integer=True)
            self.number(c2, "workload.queue_depth", "Queue depth per job", ClosedWorkload, "queue_depth", default=1, integer=True)
            c3, c4 = where.columns(2)
            self.number(c3, "workload.think_time_us", "Think time between I/Os (us)", ClosedWorkload, "think_time_us",
                        default=0.0, integer=False)
            self.number(c4, "workload.app_us_per_io", "App time per I/O (us)", ClosedWorkload,
                        "app_us_per_io", default=0.0, integer=False,
                        help="The benchmark's or application's own work per I/O (fio's completion and submission handling): "
                             "it lengthens each job's cycle but is not part of the latency it measures.")
        elif kind == "open":
            self.number(where, "workload.rate_iops", "Arrival rate (IOPS)", OpenWorkload, "rate_iops", default=50_000.0,
                        integer=False, step=1000.0)
        else:
            c1, c2 = where.columns(2)
            self.number(c1, "workload.on_rate_iops", "Rate during bursts (IOPS)", BurstyWorkload, "on_rate_iops",
                        default=50_000.0, integer=False, step=1000.0)
            self.number(c2, "workload.off_rate_iops", "Rate between bursts (IOPS)", BurstyWorkload, "off_rate_iops",
                        default=2_000.0, integer=False, step=100.0)
            self.number(c1, "workload.mean_on_ms", "Mean burst length (ms)", BurstyWorkload, "mean_on_ms", default=100.0, integer=False)
            self.number(c2, "workload.mean_off_ms", "Mean gap between bursts (ms)", BurstyWorkload, "mean_off_ms",
                        default=900.0, integer=False)
        self.percent(where, "workload.read_fraction", "Reads", default=0.7)
        c1, c2 = where.columns(2)
        self.select(c1, "workload.access", "Access", ["random", "sequential"])
        mix = self.checkbox(c2, "size_mix", "Block-size mix", default=bool(wl.get("sizes")), write=False)
        if mix:
            self._size_mix(where, wl)
        else:
            self.data["workload"].pop("sizes", None)
            self.number(c1, "workload.block_size_kib", "Block size (KiB)", WorkloadBase, "block_size_kib", default=4.0,
                        integer=False, step=4.0)
        return kind

    def _size_mix(self, where: DeltaGenerator, wl: dict[str, Any]) -> None:
        import pandas as pd

        key = self.key("workload.sizes")
        base_key = f"{key}:base"
        if base_key not in st.session_state:
            # the editor keeps its edits relative to the frame it was given, so that frame must not change while editing
            rows = wl.get("sizes") or [{"kib": float(wl.get("block_size_kib", 4)), "weight": 1.0, "op": "any"}]
            st.session_state[base_key] = [{"kib": float(r.get("kib", 4)), "weight": float(r.get("weight", 1.0)),
                                           "op": r.get("op", "any")} for r in rows if isinstance(r, dict)]
        frame = pd.DataFrame(st.session_state[base_key], columns=["kib", "weight", "op"])
        edited = where.data_editor(
            frame, key=key, num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                "kib": st.column_config.NumberColumn("KiB", help=f"Allowed: {allowed_range(SizeWeight, 'kib')}"),
                "weight": st.column_config.NumberColumn("weight", help="relative frequency, > 0"),
                "op": st.column_config.SelectboxColumn("applies to", options=["any", "read", "write"]),
            })
        sizes = []
        for rec in edited.to_dict("records"):
            if rec.get("kib") is None or (isinstance(rec.get("kib"), float) and math.isnan(rec["kib"])):
                continue
            sizes.append({"kib": float(rec["kib"]), "weight": float(rec.get("weight") or 1.0), "op": rec.get("op") or "any"})
        self.data["workload"]["sizes"] = sizes
        self._register(where, "workload.sizes", "Block-size mix")

    def run_settings(self, where: DeltaGenerator) -> None:
        self.scope = "run"
        run = self.data.setdefault("run", {})
        labels = [*PRECISIONS, CUSTOM_PRECISION]
        matching = next((k for k, v in PRECISIONS.items() if all(run.get(f) == x for f, x in v.items())), CUSTOM_PRECISION)
        c1, c2 = where.columns([3, 1])
        choice = self.select(c1, "run.precision", "Precision", labels, default=matching, write=False,
                             help="The run stops when the 95% confidence interval of IOPS and latency is this tight, or at the time budget.")
        self.number(c2, "run.seed", "Seed", RunSettings, "seed", default=1, integer=True,
                    help="The same seed gives the same result.")
        if choice == CUSTOM_PRECISION:
            c1, c2, c3 = where.columns(3)
            self.number(c1, "run.target_rel_ci", "Target ± (fraction)", RunSettings, "target_rel_ci", default=0.02,
                        integer=False, step=0.01, fmt="%.3f")
            self.number(c2, "run.max_ios", "Budget (I/Os)", RunSettings, "max_ios", default=3_000_000, integer=True, step=100_000)
            self.number(c3, "run.max_wall_s", "Budget (seconds)", RunSettings, "max_wall_s", default=20.0, integer=False)
        else:
            run.update(PRECISIONS[choice])

    # -- validation --------------------------------------------------------------------------
    def check(self, build: Callable[[dict[str, Any]], T]) -> tuple[T | None, list[tuple[str, str]]]:
        """``build(data)`` (a model's validation), or its problems, each shown under the widget of its field."""
        try:
            built = build(self.data)
        except ValidationError as exc:
            problems = format_validation_error(exc)
        except ScenarioFileError as exc:
            problems = list(exc.problems)
        else:
            self.show([])
            return built, []
        self.show(problems)
        return None, problems

    def validate(self) -> tuple[Scenario | None, list[tuple[str, str]]]:
        """The draft as a Scenario, or the problems, each shown under the widget of its field."""
        problems: list[tuple[str, str]] = []
        scenario: Scenario | None = None
        try:
            scenario = scenario_from_data(self.data)
        except ValidationError as exc:
            problems = format_validation_error(exc)
        except ScenarioFileError as exc:
            problems = list(exc.problems)
        share = self.extras.get("storage_server_share")
        if share is not None and not (isinstance(share, int | float) and 0 < share <= 1):
            problems.append(("cost.storage_server_share", f"must be > 0 and <= 1, got {share}"))
            scenario = None
        self.show(problems)
        return scenario, problems

    def show(self, problems: Sequence[tuple[str, str]]) -> None:
        unplaced: list[tuple[str, str]] = []
        by_slot: dict[str, list[str]] = {}
        for path, message in problems:
            target = path
            while target and target not in self.fields:
                target = target.rpartition(".")[0]
            if not target:
                unplaced.append((path, message))
                continue
            by_slot.setdefault(target, []).append(f"**{path}**: {message}")
        for target, messages in by_slot.items():
            f = self.fields[target]
            allowed = f"  \nAllowed: {f.allowed}." if f.allowed and not any("allowed" in m.lower() for m in messages) else ""
            f.slot.error("  \n".join(messages) + allowed, icon=":material/error:")
        if unplaced and self.general is not None:
            self.general.error("  \n".join(f"**{p}**: {m}" for p, m in unplaced), icon=":material/error:")
        elif unplaced:
            st.error("  \n".join(f"**{p}**: {m}" for p, m in unplaced), icon=":material/error:")


def workload_summary(workload: dict[str, Any]) -> str:
    """One line describing a workload, in the words of fio / a storage engineer."""
    kind = workload.get("kind")
    read = float(workload.get("read_fraction", 0.7)) * 100
    if workload.get("sizes"):
        size = " / ".join(f"{s['kib']:g}K{'' if s.get('op', 'any') == 'any' else ' ' + s['op']}" for s in workload["sizes"])
    else:
        size = f"{float(workload.get('block_size_kib', 4)):g}K"
    mix = f"{size} {workload.get('access', 'random')}, {read:.0f}% read"
    if kind == "closed":
        return f"{mix}; {workload.get('jobs', 1)} jobs x QD {workload.get('queue_depth', 1)}"
    if kind == "open":
        return f"{mix}; Poisson at {float(workload.get('rate_iops', 0)):,.0f} IOPS"
    if kind == "bursty":
        return (f"{mix}; bursts of {float(workload.get('on_rate_iops', 0)):,.0f} IOPS for ~{workload.get('mean_on_ms')} ms, "
                f"{float(workload.get('off_rate_iops', 0)):,.0f} IOPS for ~{workload.get('mean_off_ms')} ms between")
    return json.dumps(workload)


# -- workload presets and imported workloads ---------------------------------------------------

def matching_preset(workload: Any) -> str | None:
    """The key of the preset this workload is exactly (after validation), if any."""
    from pydantic import TypeAdapter

    from models.workload import Workload

    try:
        model = TypeAdapter(Workload).validate_python(workload)
    except ValidationError:
        return None
    return next((key for key, p in PRESETS.items() if p.workload == model), None)


def apply_workload(workload: dict[str, Any], prefix: str = "size") -> None:
    """Put a workload (a preset's, an imported one) into the draft and reset the workload widgets."""
    data = draft(prefix)
    data["workload"] = copy.deepcopy(workload)
    clear_widgets(prefix, "workload")


CUSTOM_WORKLOAD = "custom"


def preset_picker(where: DeltaGenerator, prefix: str = "size") -> str | None:
    """The workload preset picker (models.presets); picking one fills the workload fields. Returns the matching preset."""
    key = f"{prefix}:preset"
    current = matching_preset(draft(prefix).get("workload")) or CUSTOM_WORKLOAD
    st.session_state[key] = current

    def picked() -> None:
        choice = st.session_state[key]
        if choice in PRESETS:
            apply_workload(PRESETS[choice].data, prefix)

    options = [CUSTOM_WORKLOAD, *PRESETS]
    where.selectbox("Workload preset", options, key=key, on_change=picked,
                    format_func=lambda k: "Custom (edit the fields below)" if k == CUSTOM_WORKLOAD else PRESETS[k].title,
                    help="The I/O patterns measured in the source documents; picking one fills the fields below.")
    if current in PRESETS:
        p = PRESETS[current]
        where.caption(f"Source: {p.source}. Assumed: {p.assumptions}.")
    return current if current in PRESETS else None
