"""The Size form's platform and attachment section: host, drives / DIMMs / LUNs, layout, adapters, SAN settings."""

from __future__ import annotations

import copy
import math
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app.forms.draft import (
    ATTACHMENTS,
    DEVICE_MODEL_HELP,
    DEVICE_MODELS,
    LAYOUT_NAMES,
    MEMORY,
    MIRRORED,
    STACK_NAMES,
    STACKS_BY_ATTACHMENT,
    STRIPED,
    allowed_range,
    example_names,
    get_path,
    set_path,
    starting_topology,
)
from app.forms.fields import FormBase, _Field
from models.catalog import load_catalog
from models.topology import FLASH_KINDS, TOPOLOGY_KINDS, DirectNvme, Exflash, Namespaces, NvmeQueues, San, StorageCache, ZvmEdev
from sim.route.host import DEFAULT_STACK


class TopologySection(FormBase):
    """The scenario name and the attachment widgets of the Size form."""

    def name(self, where: DeltaGenerator) -> None:
        """The scenario name: generated from the configuration (``app.naming.scenario_name``) unless the user typed one.

        Call it after ``topology()`` and ``workload()`` (into a container placed above), so the generated name
        follows every change. A name is the user's once it differs from the last generated one and from the
        examples' names (a scenario opened from the library keeps its name).
        """
        from app.naming import scenario_name

        self.scope = "top"
        key = self._seed("name", str(self.data.get("name", "")))
        auto_key = f"{self.prefix}.auto_name"
        generated = scenario_name(self.data)
        current = str(st.session_state[key] or "").strip()
        if not current or current == st.session_state.get(auto_key) or current in example_names():
            st.session_state[key] = generated
        st.session_state[auto_key] = generated
        self.data["name"] = where.text_input("Scenario name", key=key, placeholder=generated,
                                             help="Generated from the configuration until you type your own; shown on the "
                                                  "report and used when you save it to the library.")
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
        if kind in FLASH_KINDS:
            self.select(where, "device_model", "Flash device model", list(DEVICE_MODELS), default="auto",
                        format_func=DEVICE_MODELS.__getitem__, help=DEVICE_MODEL_HELP)
        else:
            self.data.pop("device_model", None)  # a SAN's back end and textbook queues have no flash device model
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
                    help="Namespaces split each drive into volumes of their own.",
                    allowed=f"1 .. {spec.max_namespaces:,} for the {drive}")
        layout = self.select(where, "topology.layout", "Layout", list(LAYOUT_NAMES), default="raid10",
                             format_func=lambda x: LAYOUT_NAMES[x])
        adapters = list(cat.adapters)
        c1, c2 = where.columns(2)
        adapter = self.select(c1, "topology.adapter", "JBOF adapter / carrier", adapters,
                              format_func=lambda a: f"{a} (holds {cat.adapters[a].max_drives})")
        self._enough_adapters(c2, adapter, cat)
        self.number(c2, "topology.adapters", "Adapters", DirectNvme, "adapters", default=1, integer=True,
                    help=f"An {adapter} holds {cat.adapters[adapter].max_drives} drive(s).")
        if self.extras.get("adapters_added"):
            c2.caption(self.extras["adapters_added"])
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

    def _enough_adapters(self, where: DeltaGenerator, adapter: str, cat: Any) -> None:
        """More drives than the adapters hold add adapters (as What-if does), before the Adapters field is drawn."""
        drives = get_path(self.data, "topology.drives")
        if not isinstance(drives, int) or drives < 1:
            return
        holds = cat.adapters[adapter].max_drives
        needed = math.ceil(drives / holds)
        key = self.key("topology.adapters")
        current = st.session_state.get(key, get_path(self.data, "topology.adapters", 1))
        raised = st.session_state.setdefault(f"{self.prefix}.adapters_raised", {})
        if isinstance(current, int) and current < needed:
            st.session_state[key] = needed
            set_path(self.data, "topology.adapters", needed)
            raised[(drives, adapter)] = needed
        if raised.get((drives, adapter)) == st.session_state.get(key):
            self.extras["adapters_added"] = f"Adapters raised to {needed}: {drives} drives, an {adapter} holds {holds}."

    def _san(self, where: DeltaGenerator, cat: Any) -> None:
        protocol = self.select(where, "topology.protocol", "Protocol", ["fcp", "nvme_fc"], default="fcp",
                               format_func=lambda p: {"fcp": "FCP (SCSI)", "nvme_fc": "NVMe over FC"}[p])
        self._host(where, "san", cat, protocol_stack=DEFAULT_STACK[f"san.{protocol}"])
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
