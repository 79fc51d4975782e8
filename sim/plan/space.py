"""The planner's wide candidate space: the configurations a sizer would ask about.

``sim.plan.planner.enumerate_candidates`` tries a fixed grid per platform (about 1,600 IBM i candidates for
examples/plan/ibmi_oltp.yaml). This module widens every axis to what the catalog and the topology
rules allow, without changing the planner: the candidates are the same ``sim.plan.candidate.Candidate``
objects (a validated ``Scenario`` with its catalog ``capex``), so the planner's screen, DES
verification and ranking take them as they are.

Direct NVMe (IBM i, LinuxONE): every catalog drive of the platform (LinuxONE: every catalog U.2 drive
that is not an IBM i feature code) x every drive count up to the platform's limit x namespaces per
drive (up to the drive's own ``max_namespaces``) x every layout the protection allows x every adapter
model, from the fewest adapters that hold the drives to ``extra_adapters`` more (spreading drives over
more JBOF uplinks) x, on IBM i, the disk units' queue depth x, for striped layouts on Linux, the md chunk.
SAN (LinuxONE): both catalog storage servers x FCP host adapter count x LUNs x front-end ports x LUN
queue depth x cache size (the server's full cache, or a share of it: the catalog prices a server as
listed, so a smaller cache is a what-if that never costs less). eXFlash and z/VM: every DIMM or drive
count x layout / driver threads, or base EDEVs x aliases.

Combinations the topology rules refuse are counted, not returned. The axes are data (``WideSpace``);
nothing here is fitted.

``flashplan plan --space wide`` plans over it (``sim.plan.planner.plan(req, space=wide_candidates(req),
distinct=hardware_key)``). ``CandidateBuilder`` builds the candidates at a fraction of the cost of
validating a whole ``Scenario`` each: the design workload, run settings and host are validated
once, each combination's topology alone (the topology rules still decide), and the scenario is the
validated template with that topology; the result equals the fully validated scenario
(tests/plan/test_plan_space.py). ``sim.plan.planner.candidate`` remains the one-at-a-time path (``fast=False``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from models.catalog import lookup, pinned_catalog
from models.cost import CostError, capex
from models.requirements import PLATFORMS, PlatformOptions, Requirements, platform_devices
from models.scenario import Scenario
from models.topology import HostConfig, NvmeQueues, Topology
from sim.plan.planner import (
    IBMI_NAMESPACE_QUEUE_DEPTH,
    Candidate,
    NoFeasiblePlan,
    allowed_layouts,
    candidate,
    design_workload,
    platform_host,
)
from sim.route.host import DEFAULT_STACK, IBMI_STACK

STRIPED = ("raid0", "raid10", "raid5", "raid6")
PROGRESS_EVERY = 512
"""Combinations built between two progress reports."""


@dataclass(frozen=True)
class WideSpace:
    """The axes of the wide space. Defaults: what a pre-sales sizer varies (no number here is a measurement)."""

    namespaces: tuple[int, ...] = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    """Namespaces per drive tried, each kept only up to the drive's ``max_namespaces``."""
    extra_adapters: int = 2
    """Adapters beyond the fewest that hold the drives (more JBOF uplinks, planar mirror protection)."""
    ibmi_queue_depths: tuple[int, ...] = (16, IBMI_NAMESPACE_QUEUE_DEPTH, 64)
    """Outstanding I/Os per IBM i disk unit (the planner's default 32 and a step either side)."""
    chunk_kib: tuple[int, ...] = (64, 256, 1024)
    """md chunk sizes for striped Linux layouts (seed 000 used 256K)."""
    san_servers: tuple[str, ...] = ("DS8950F", "FS9100")
    san_host_adapters: tuple[int, ...] = (1, 2, 3, 4)
    san_luns: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
    san_front_end_ports: tuple[int, ...] = (2, 4, 8, 16)
    san_lun_queue_depths: tuple[int, ...] = (16, 32, 64)
    san_cache_shares: tuple[float, ...] = (1.0, 0.5)
    """Cache size as a share of the server's catalog cache."""
    zvm_base_devices: tuple[int, ...] = (1, 2, 3, 4, 6, 8)
    zvm_aliases: tuple[int, ...] = (0, 1, 2, 3, 5, 7, 11, 15, 23, 31, 47, 59)


def _device_counts(req: Requirements, options: PlatformOptions) -> list[int]:
    space = req.candidates
    cap = min(options.max_devices, space.max_devices or options.max_devices)
    return sorted({n for n in (space.device_counts or range(1, cap + 1)) if n <= cap})


def _direct_candidate(host: dict[str, Any], drive: str, count: int, adapter: str, adapters: int, max_drives: int, per_drive: int,
                      depth: int | None, layout: str, chunk: int, ibmi: bool) -> tuple[str, dict[str, Any]]:
    """One direct-NVMe candidate: its label and topology."""
    ns: dict[str, Any] = {"per_drive": per_drive}
    if depth is not None:
        ns["queue_depth"] = depth
    topo = {
        "kind": "direct_nvme", "host": host, "drive": drive, "drives": count,
        "adapter": adapter, "adapters": adapters, "namespaces": ns, "layout": layout,
        "chunk_kib": chunk,
        "mirror_protection": "planar" if layout == "ibmi_mirror" and adapters >= 2 else "drive",
    }
    where = f"{adapters} x {adapter}" if max_drives > 1 else "carriers"
    label = f"{count} x {drive}, {per_drive} ns/drive, {layout}, {where}"
    if depth is not None:
        label += f", qd {depth}/ns"
    if layout in STRIPED and not ibmi:
        label += f", {chunk}K chunk"
    return label, topo


def _direct_nvme(req: Requirements, options: PlatformOptions, space: WideSpace) -> Iterator[tuple[str, dict[str, Any]]]:
    ibmi = req.platform == "power10_ibmi"
    host = platform_host(req, options, IBMI_STACK if ibmi else DEFAULT_STACK["direct_nvme"])
    depths: tuple[int | None, ...] = ((req.candidates.namespace_queue_depth,) if req.candidates.namespace_queue_depth
                                      else space.ibmi_queue_depths if ibmi else (None,))
    for drive in req.candidates.devices or platform_devices(req.platform):
        max_ns = lookup("drives", drive).max_namespaces
        namespaces = [n for n in (req.candidates.namespaces or space.namespaces) if n <= max_ns]
        for count in _device_counts(req, options):
            for layout in allowed_layouts(req, options):
                if layout == "raid1" and count != 2:
                    continue  # md raid1 is an n-way mirror: beyond 2 drives raid10 is the configuration to buy
                chunks = space.chunk_kib if layout in STRIPED and not ibmi else (256,)
                for per_drive in namespaces:
                    for adapter in req.candidates.adapters or options.adapters:
                        max_drives = lookup("adapters", adapter).max_drives
                        fewest = math.ceil(count / max_drives)
                        for adapters in sorted({min(count, fewest + k) for k in range(space.extra_adapters + 1)}):
                            for depth in depths:
                                for chunk in chunks:
                                    yield _direct_candidate(host, drive, count, adapter, adapters, max_drives, per_drive, depth,
                                                            layout, chunk, ibmi)


def _san(req: Requirements, options: PlatformOptions, space: WideSpace) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["san.fcp"])
    for server in space.san_servers:
        cache_gb = lookup("storage_servers", server).cache_gb
        for hbas in space.san_host_adapters:
            for luns in space.san_luns:
                for ports in space.san_front_end_ports:
                    for depth in space.san_lun_queue_depths:
                        for share in space.san_cache_shares:
                            topo = {
                                "kind": "san", "host": host, "protocol": "fcp", "host_adapter": "FICON-Express32S",
                                "host_adapters": hbas, "luns": luns, "lun_queue_depth": depth, "storage_server": server,
                                "front_end_ports": ports, "layout": "raid0",
                                "cache": {"size_gb": cache_gb * share},
                            }
                            cache = "" if share == 1.0 else f", {share:.0%} cache"
                            yield (f"{server}: {luns} LUNs (qd {depth}), {ports} FE ports, {hbas} x FICON-Express32S{cache}",
                                   topo)


def _exflash(req: Requirements, options: PlatformOptions, space: WideSpace) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["exflash"])
    for dimm in req.candidates.devices or options.devices:
        for count in _device_counts(req, options):
            for layout in allowed_layouts(req, options):
                for chunk in space.chunk_kib if layout == "raid0" else (256,):
                    for max_occupancy in (True, False):
                        topo = {"kind": "exflash", "host": host, "dimm": dimm, "dimms": count, "layout": layout,
                                "max_occupancy": max_occupancy, "chunk_kib": chunk}
                        threads = "1 driver thread/DIMM" if max_occupancy else "1 driver thread/2 DIMMs"
                        stripe = f", {chunk}K chunk" if layout == "raid0" else ""
                        yield f"{count} x {dimm}, {layout}{stripe}, {threads}", topo


def _zvm(req: Requirements, options: PlatformOptions, space: WideSpace) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["zvm_edev"])
    for drive in req.candidates.devices or options.devices:
        for count in _device_counts(req, options):
            for base in space.zvm_base_devices:
                for aliases in space.zvm_aliases:
                    topo = {"kind": "zvm_edev", "host": host, "drive": drive, "drives": count,
                            "adapter": options.adapters[0], "base_devices": base, "aliases": aliases}
                    yield f"{count} x {drive}, {base} base EDEVs + {aliases} aliases", topo


def wide_topologies(req: Requirements, space: WideSpace | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, topology data) of every combination of the wide space for ``req`` (not yet validated)."""
    space = space or WideSpace()
    options = PLATFORMS[req.platform]
    if req.platform in ("power10_ibmi", "linuxone"):
        yield from _direct_nvme(req, options, space)
    elif req.platform == "x86_exflash":
        yield from _exflash(req, options, space)
    else:
        yield from _zvm(req, options, space)
    if options.san and req.candidates.include_san and req.protection in ("none", "redundant"):
        yield from _san(req, options, space)


def hardware_key(c: Candidate) -> tuple[Any, ...]:
    """What a candidate buys and how it protects data: its capex lines (item, model, quantity) and layout.

    Candidates of the wide space that differ only in settings (namespaces per drive, queue depths,
    md chunk, cache share) share a key and a price; verifying the best of each key gives a sizer
    distinct configurations to choose from instead of five settings of one purchase.
    """
    lines = tuple((line.item, line.model, line.quantity) for line in c.capex.lines)
    return (*lines, getattr(c.scenario.topology, "layout", ""))


_TOPOLOGY: TypeAdapter[Any] = TypeAdapter(Topology)


class CandidateBuilder:
    """Builds many candidates of one requirement, validating only what differs between them.

    The first combination is validated whole (``sim.plan.planner.candidate``), which checks the design
    workload and run settings against the scenario rules; its scenario becomes the template. Every
    other combination validates its topology (the topology rules refuse what they refuse, as before)
    with the host and NVMe queues already validated, and takes the template's workload and run
    (``model_copy``: shared, not copied; nothing in the planner modifies a scenario).
    """

    def __init__(self, req: Requirements):
        self.req = req
        self.workload = design_workload(req)
        self.run = req.verify.model_dump()
        self.template: Scenario | None = None
        self.shared: dict[str, Any] = {"nvme_queues": NvmeQueues()}
        self.hosts: dict[int, tuple[dict[str, Any], HostConfig]] = {}

    def __call__(self, label: str, topo: dict[str, Any]) -> Candidate | None:
        """The priced candidate of one combination, or None when the topology rules refuse it."""
        if self.template is None:
            first = candidate(self.req, label, topo, self.workload, self.run)
            if first is not None:
                self.template = first.scenario
            return first
        try:
            topology = _TOPOLOGY.validate_python(self._prepared(topo))
        except ValidationError:
            return None
        try:
            cost = capex(topology, storage_server_share=self.req.storage_server_share)
        except CostError as exc:
            raise NoFeasiblePlan([("platform", str(exc))]) from None
        scenario = self.template.model_copy(update={"name": label, "topology": topology})
        return Candidate(label=label, scenario=scenario, capex=cost)

    def _prepared(self, topo: dict[str, Any]) -> dict[str, Any]:
        """The topology data with its host (validated once per host mapping) and default NVMe queues as models."""
        data = dict(topo)
        host = data.get("host")
        if isinstance(host, dict):
            known = self.hosts.get(id(host))
            if known is None or known[0] is not host:  # the generators pass one host dict to every combination
                known = self.hosts[id(host)] = (host, HostConfig.model_validate(host))
            data["host"] = known[1]
        if data.get("kind") == "direct_nvme" and "nvme_queues" not in data:
            data["nvme_queues"] = self.shared["nvme_queues"]
        return data


def wide_candidates(req: Requirements, space: WideSpace | None = None, index: int = 0, stride: int = 1,
                    fast: bool = True, progress: Callable[[str, int, int], None] | None = None) -> tuple[list[Candidate], int]:
    """Every configuration of the wide space the topology rules accept, priced; and how many they refused.

    The same contract as ``sim.plan.planner.enumerate_candidates``: each candidate's scenario runs the
    requirement's design workload with its verification settings. ``index`` and ``stride`` take every
    ``stride``-th combination from ``index`` (one worker's share; the order is fixed). ``fast`` builds
    them with ``CandidateBuilder``; ``fast=False`` validates each whole scenario (the same candidates,
    the slower path, kept for the benchmark's ratio). ``progress("build", done, total)`` follows
    the combinations.
    """
    workload, run = design_workload(req), req.verify.model_dump()
    build: Callable[[str, dict[str, Any]], Candidate | None] = (
        CandidateBuilder(req) if fast else functools.partial(candidate, req, workload=workload, run=run))
    combinations = list(wide_topologies(req, space))[index::stride]
    candidates: list[Candidate] = []
    with pinned_catalog() if fast else nullcontext():
        for i, (label, topo) in enumerate(combinations, start=1):
            c = build(label, topo)
            if c is not None:
                candidates.append(c)
            if progress and (i % PROGRESS_EVERY == 0 or i == len(combinations)):
                progress("build", i, len(combinations))
    return candidates, len(combinations) - len(candidates)
