"""Capacity-planning requirements: what a configuration must deliver, on which platform, within what budget.

A requirements file (YAML, TOML or JSON) is read by ``load_requirements`` and checked here,
field by field, before the planner (sim/plan/planner.py) enumerates a single candidate::

    name: OLTP on IBM i
    platform: power10_ibmi            # power10_ibmi | linuxone | x86_exflash | zvm_edev
    workload: oltp_4k_70_30           # a preset key (models/presets.py) or an inline workload
    target: {iops: 400000}            # or {mbps: 3000}
    latency_slo: {statistic: p99, us: 1000}
    usable_tb: 6                      # optional: no capacity requirement when left out
    protection: redundant             # none | redundant | mirror | parity
    growth_headroom_pct: 25           # plan for target x 1.25
    growth: {rate_per_year: 0.25, years: 3}   # optional: and for the load in 3 years at 25% a year
    budget_usd: 60000                 # optional
    candidates:                       # optional limits on what the planner tries (CandidateSpace)
      devices: [ES5F, ES5H]           # drive / DIMM models the platform takes (platform_devices)
      layouts: [ibmi_mirror]
      include_san: false              # LinuxONE: also try DS8950F / FS9100 over FCP (default true)

``PLATFORMS`` says what each platform can be built from (drive models, adapters, layouts,
device counts, SAN) and where that comes from in the seeds.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from models.catalog import load_catalog
from models.common import StrictModel, field_problem
from models.faults import Rebuild
from models.loading import check_tree
from models.presets import PRESETS, AnyWorkload, preset_workload
from models.scenario import MAX_WORKLOADS, DeviceModel, Scenario, apply_overrides, read_scenario_data
from models.slo import WorkloadSlo
from models.topology import HostConfig, Layout
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, Workload

Platform = Literal["power10_ibmi", "linuxone", "x86_exflash", "zvm_edev"]
Protection = Literal["none", "redundant", "mirror", "parity"]

PROTECTION_LAYOUTS: dict[str, tuple[str, ...]] = {
    "none": ("jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "ibmi_mirror"),
    "redundant": ("raid1", "raid10", "raid5", "raid6", "ibmi_mirror"),
    "mirror": ("raid1", "raid10", "ibmi_mirror"),
    "parity": ("raid5", "raid6"),
}
"""Volume layouts that give each protection level. A SAN storage server protects its own
back end, so SAN candidates meet ``none`` and ``redundant`` (not a specific host layout)."""


@dataclass(frozen=True)
class PlatformOptions:
    """What a platform's storage can be built from, and the seed that says so."""

    title: str
    host_model: str
    device_section: Literal["drives", "dimms"]
    devices: tuple[str, ...]
    adapters: tuple[str, ...]
    layouts: tuple[str, ...]
    max_devices: int
    san: bool
    source: str


PLATFORMS: dict[str, PlatformOptions] = {
    "power10_ibmi": PlatformOptions(
        title="IBM Power10 IBM i: U.2 NVMe in EJ1Y / EJ1X JBOF cages, namespaces as disk units, IBM i mirroring",
        host_model="Power10-S1024-LPAR32",
        device_section="drives",
        devices=("ES5B", "ES5D", "ES5F", "ES5H", "EC5W", "ES4C", "ES4E", "ES4G", "ECTB"),
        adapters=("EJ1Y", "EJ1X"),
        layouts=("ibmi_mirror", "raid0"),
        max_devices=16,
        san=False,
        source="seed 001: drives of 'Unités NVMe supportées par IBM i en natif'; EJ1Y up to 8 NVMe, EJ1X up to 4; "
               "'Protection des namespaces par mirroring IBM i - seule protection disponible' (raid0 here stands for "
               "an unprotected ASP, data spread over every unit); two cages of 8 = 16 drives",
    ),
    "linuxone": PlatformOptions(
        title="IBM LinuxONE: U.2 NVMe drives in IBM NVMe Carriers under md RAID, or FCP LUNs on a DS8950F",
        host_model="LinuxONE-Emperor4-LPAR30",
        device_section="drives",
        devices=("PM1733-1.92TB", "CM6-R-1.92TB", "CM6-V-1.6TB"),
        adapters=("IBM-NVMe-Carrier-0448",),
        layouts=("jbod", "raid0", "raid1", "raid10", "raid5", "raid6"),
        max_devices=16,
        san=True,
        source="seed 000 section 3 (SSDs tested on LinuxONE Emperor 4, one per IBM NVMe Carrier FC 0448, mdadm RAID) "
               "and section 4.2.3 ('limited to 16 devices'); SAN: FCP LUNs on a DS8950F over FICON Express32S",
    ),
    "x86_exflash": PlatformOptions(
        title="x86 (Lenovo System x3850 X6): eXFlash memory-channel DIMMs, raw devices or md RAID-0",
        host_model="x3850-X6",
        device_section="dimms",
        devices=("eXFlash-400GB", "eXFlash-200GB"),
        adapters=(),
        layouts=("jbod", "raid0"),
        max_devices=32,
        san=False,
        source="seed 002: up to 32 eXFlash DIMMs (12.8 TB) in an x3850 X6; no redundant layout is modelled for DIMMs",
    ),
    "zvm_edev": PlatformOptions(
        title="z/VM NVMe EDEVs on IBM Adapters for NVMe, HyperPAV alias EDEVs",
        host_model="z14-M05-LPAR4",
        device_section="drives",
        devices=("P4510-4TB",),
        adapters=("IBM-Adapter-for-NVMe",),
        layouts=("jbod",),
        max_devices=8,
        san=False,
        source="seed 003: Intel P4510 4 TB on the IBM Adapter for NVMe, one to four base EDEVs, up to 59 aliases; "
               "EDEVs are single devices (no RAID across them is modelled)",
    ),
}


PLATFORM_DEVICE_RULES: dict[str, str] = {
    "power10_ibmi": "IBM i takes its own NVMe feature codes in EJ1Y / EJ1X cages (seed 001's list of supported drives)",
    "linuxone": "LinuxONE takes U.2 / U.3 NVMe drives, one per IBM NVMe Carrier FC 0448 (seed 000 section 3): the drives "
                "seed 000 tested and every other catalog U.2 drive that is not an IBM i feature code",
    "x86_exflash": "the x3850 X6 takes eXFlash memory-channel DIMMs (seed 002)",
    "zvm_edev": "z/VM EDEVs are the Intel P4510 on the IBM Adapter for NVMe (seed 003)",
}
"""Which hardware each platform takes, in words: the reason a refusal gives."""


def platform_devices(platform: str) -> tuple[str, ...]:
    """Every catalog device ``platform`` takes (the one rule: requirements, planner, ``simulate`` and the app).

    IBM i, x86 eXFlash and z/VM: the devices their seed names (``PLATFORMS``). LinuxONE: the drives seed 000
    tested, then every other catalog U.2 NVMe drive that is not an IBM i feature code (a U.2 drive fits the
    IBM NVMe Carrier; an IBM i feature code is firmware for IBM i, an add-in card does not fit a carrier).
    """
    options = PLATFORMS[platform]
    if platform != "linuxone":
        return options.devices
    ibmi = set(PLATFORMS["power10_ibmi"].devices)
    drives = load_catalog().drives
    extra = sorted(n for n, spec in drives.items() if n not in ibmi and n not in options.devices and spec.form_factor == "U.2")
    return (*options.devices, *extra)


def device_refusal(platform: str, device: str) -> str | None:
    """Why ``platform`` does not take the catalog ``device`` (None when it does)."""
    allowed = platform_devices(platform)
    if device in allowed:
        return None
    return f"{device!r} is not available on {platform}: {PLATFORM_DEVICE_RULES[platform]}; allowed: {', '.join(allowed)}"


def platform_of_host(host_model: str | None) -> str | None:
    """The platform whose catalog host ``host_model`` is (None for any other host, e.g. x86-Linux-server)."""
    return next((name for name, options in PLATFORMS.items() if options.host_model == host_model), None)


def scenario_device_problems(scenario: Scenario) -> list[tuple[str, str]]:
    """(field, reason) when a scenario on a platform's catalog host uses a catalog device that platform does not
    take (``platform_devices``); an inline device spec or another host is the user's own and is not checked."""
    topo = scenario.topology
    host = getattr(getattr(topo, "host", None), "model", None)
    platform = platform_of_host(host)
    for field in ("drive", "dimm"):
        device = getattr(topo, field, None)
        if platform is not None and isinstance(device, str):
            why = device_refusal(platform, device)
            if why:
                return [(f"topology.{field}", f"{why} (the host {host} is {platform}'s)")]
    return []


def _workload_tag(value: Any) -> str | None:
    """A preset key is tagged ``str``; an inline workload by its ``kind`` (so errors read ``workload.jobs``)."""
    if isinstance(value, str):
        return "str"
    if isinstance(value, dict):
        kind = value.get("kind")
        return kind if isinstance(kind, str) else None
    return getattr(value, "kind", None)


PresetOrWorkload = Annotated[
    Annotated[str, Tag("str")]
    | Annotated[ClosedWorkload, Tag("closed")]
    | Annotated[OpenWorkload, Tag("open")]
    | Annotated[BurstyWorkload, Tag("bursty")],
    Discriminator(
        _workload_tag,
        custom_error_type="workload_kind",
        custom_error_message="give a preset key or an inline workload with kind: closed, open or bursty",
    ),
]


class Target(StrictModel):
    """The throughput to deliver: IOPS or MB/s (one of them)."""

    iops: float | None = Field(default=None, gt=0, le=1e9, description="I/Os per second to sustain")
    mbps: float | None = Field(default=None, gt=0, le=1e7, description="MB/s (10^6 bytes) to sustain")

    @model_validator(mode="after")
    def _exactly_one(self) -> Target:
        if (self.iops is None) == (self.mbps is None):
            raise field_problem("iops", "give exactly one of target.iops or target.mbps")
        return self


class LatencySlo(StrictModel):
    """The latency the workload must see at the target rate: a mean or a 99th percentile."""

    statistic: Literal["mean", "p99"] = "mean"
    us: float = Field(gt=0, le=1e7, description="microseconds")


def _per_platform(values: Any) -> str:
    return "; ".join(f"{name}: {values(options)}" for name, options in PLATFORMS.items())


CANDIDATE_DEVICES = (
    "drive or DIMM models to try, each one the platform takes ("
    + _per_platform(lambda o: ", ".join(o.devices))
    + "; LinuxONE also every other catalog U.2 drive that is not an IBM i feature code, e.g. P4510-4TB); default: "
      "the models listed here (plan --space wide: every model the platform takes)")
CANDIDATE_MAX_DEVICES = "at most this many drives / DIMMs; default: the platform's limit (" + _per_platform(lambda o: o.max_devices) + ")"
CANDIDATE_LAYOUTS = ("volume layouts to try, among those the platform offers (" + _per_platform(lambda o: ", ".join(o.layouts))
                     + ") and the protection allows; default: all of them")
CANDIDATE_ADAPTERS = ("JBOF adapter / carrier models to try (" + _per_platform(lambda o: ", ".join(o.adapters) or "none")
                      + "); default: all of them")


class CandidateSpace(StrictModel):
    """The requirements file's ``candidates:`` block: optional limits on the configurations the planner tries
    (each left out means everything the platform allows), for instance
    ``candidates: {devices: [P4510-4TB], layouts: [raid10], include_san: false}``."""

    devices: list[str] | None = Field(
        default=None, min_length=1,
        description=CANDIDATE_DEVICES)
    device_counts: list[int] | None = Field(default=None, min_length=1,
                                            description="drive / DIMM counts to try, each 1..1024; default: 1 up to max_devices")
    max_devices: int | None = Field(default=None, ge=1, le=256,
                                    description=CANDIDATE_MAX_DEVICES)
    namespaces: list[int] | None = Field(default=None, min_length=1, description="namespaces per drive to try, each 1..1024")
    layouts: list[Layout] | None = Field(
        default=None, min_length=1,
        description=CANDIDATE_LAYOUTS)
    adapters: list[str] | None = Field(default=None, min_length=1,
                                       description=CANDIDATE_ADAPTERS)
    include_san: bool = Field(default=True, description="also try SAN storage servers (DS8950F, FS9100 over FCP) where the "
                                                        "platform has them (LinuxONE) and the protection is none or redundant")
    namespace_queue_depth: int | None = Field(
        default=None, ge=1, le=65_535,
        description="I/Os the host keeps outstanding per namespace; default: 32 on IBM i (one disk unit per namespace), no limit elsewhere",
    )

    @field_validator("device_counts", "namespaces")
    @classmethod
    def _positive(cls, values: list[int] | None) -> list[int] | None:
        if values is not None:
            for v in values:
                if not 1 <= v <= 1024:
                    raise ValueError(f"every entry must be in 1..1024, got {v}")
        return values


CANDIDATES_BLOCK = inspect.cleandoc(CandidateSpace.__doc__ or "")


class GrowthHorizon(StrictModel):
    """Size for the load ``years`` from now at ``rate_per_year`` compound growth: the target x (1 + rate)^years
    ("meet the SLO for 3 years at 25% a year": x1.95). ``flashplan growth`` answers the reverse question."""

    rate_per_year: float = Field(gt=0, le=10, description="yearly load growth, 0.25 = 25% a year")
    years: float = Field(gt=0, le=50)

    @property
    def factor(self) -> float:
        return float((1.0 + self.rate_per_year) ** self.years)


class VerifySettings(StrictModel):
    """Run settings of the DES runs that verify the finalists: precision (5%) or the I/O count ends a run,
    so a plan is the same on any machine and load; the wall time is only a safety net (a run it ends is
    cut short and never counts as verified)."""

    seed: int = Field(default=1, ge=0, le=2**63 - 1)
    target_rel_ci: float = Field(default=0.05, gt=0, lt=1)
    warmup_ios: int = Field(default=2_000, ge=0, le=10**8)
    max_ios: int = Field(default=300_000, ge=1_000, le=10**9)
    max_wall_s: float = Field(default=60.0, gt=0, le=3_600)


class SurviveFailures(StrictModel):
    """Failure states in which the latency SLO must hold too: one drive failed (degraded, then
    rebuilding onto its replacement at ``rebuild``'s settings, md's defaults unless given), one adapter
    failed (a JBOF adapter, or a SAN host adapter). Candidates that lose data in a state are rejected."""

    drive: bool = Field(default=False, description="the SLO must hold with one drive failed and while it rebuilds")
    adapter: bool = Field(default=False, description="the SLO must hold with one JBOF / SAN host adapter failed")
    rebuild: Rebuild = Field(default_factory=Rebuild, description="the rebuild after a drive failure (rate cap, depth)")

    @property
    def any(self) -> bool:
        return self.drive or self.adapter


USABLE_TB = ("usable decimal TB after protection the configuration must offer; leave it out when the question has no "
             "capacity (every configuration qualifies on capacity)")
CANDIDATES_DEVICE_MODEL = ("the flash device model of every candidate with flash of its own (a scenario's device_model): "
                           "'auto' (the default: dies for NVMe drives, pooled for the eXFlash DIMMs), 'pooled', or 'dies' "
                           "(addressed NAND dies behind a controller: the fast path screens p99 objectives "
                           "with the die-level tail)")


class Requirements(StrictModel):
    """What a configuration must deliver; see the module docstring for a file."""

    name: str = ""
    description: str = ""
    platform: Platform
    workload: PresetOrWorkload = Field(description="a preset key (models/presets.py) or an inline workload")
    target: Target
    latency_slo: LatencySlo
    usable_tb: float | None = Field(default=None, gt=0, le=100_000, description=USABLE_TB)
    protection: Protection = "redundant"
    growth_headroom_pct: float = Field(default=0.0, ge=0, le=1000, description="plan for target x (1 + pct/100)")
    growth: GrowthHorizon | None = Field(default=None, description="plan for the load after years of growth (x (1 + rate)^years, "
                                                                    "on top of growth_headroom_pct)")
    budget_usd: float | None = Field(default=None, gt=0)
    storage_server_share: float = Field(default=1.0, gt=0, le=1, description="share of a SAN storage server's price charged")
    host: HostConfig | None = Field(default=None, description="host override; default: the platform's catalog host")
    candidates: CandidateSpace = Field(default_factory=CandidateSpace, description=CANDIDATES_BLOCK)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    survive: SurviveFailures | None = Field(default=None, description="failure states the SLO must hold in")
    device_model: DeviceModel = Field(default="auto", description=CANDIDATES_DEVICE_MODEL)

    @field_validator("workload")
    @classmethod
    def _known_preset(cls, value: Any) -> Any:
        if isinstance(value, str) and value not in PRESETS:
            raise ValueError(f"unknown workload preset {value!r}; allowed: {', '.join(PRESETS)} or an inline workload")
        return value

    @model_validator(mode="after")
    def _fits_platform(self) -> Requirements:
        options = PLATFORMS[self.platform]
        space = self.candidates
        for device in space.devices or ():
            why = device_refusal(self.platform, device)
            if why:
                raise field_problem("candidates.devices", why)
        for field, chosen, allowed in (("candidates.adapters", space.adapters, options.adapters),
                                       ("candidates.layouts", space.layouts, options.layouts)):
            for value in chosen or ():
                if value not in allowed:
                    raise field_problem(field, f"{value!r} is not available on {self.platform}; allowed: {', '.join(allowed) or '(none)'}")
        layouts = [lo for lo in (space.layouts or options.layouts) if lo in PROTECTION_LAYOUTS[self.protection]]
        san = options.san and space.include_san and self.protection in ("none", "redundant")
        if not layouts and not san:
            offered = list(space.layouts or options.layouts)
            levels = sorted({p for p, los in PROTECTION_LAYOUTS.items() if set(los) & set(offered)})
            raise field_problem(
                "protection",
                f"{self.platform} offers no {self.protection!r} protection (its layouts: {', '.join(offered)}); "
                f"allowed: {', '.join(levels)}",
            )
        return self

    @property
    def workload_model(self) -> AnyWorkload:
        """The workload mix: the preset's, or the inline one."""
        if isinstance(self.workload, str):
            return preset_workload(self.workload)
        return self.workload

    @property
    def design_iops(self) -> float:
        """The rate to plan for: the target (MB/s converted with the mean transfer size) x (1 + growth headroom)."""
        if self.target.iops is not None:
            base = self.target.iops
        else:
            assert self.target.mbps is not None
            base = self.target.mbps * 1e6 / self.workload_model.mean_bytes()
        return base * self.growth_factor

    @property
    def growth_factor(self) -> float:
        """Design rate / target: (1 + growth headroom) x the growth horizon's (1 + rate)^years."""
        return (1.0 + self.growth_headroom_pct / 100.0) * (self.growth.factor if self.growth else 1.0)

    def growth_words(self) -> str:
        """What the design rate adds to the target, in words."""
        parts = [f"+{self.growth_headroom_pct:g}% growth"] if self.growth_headroom_pct or not self.growth else []
        if self.growth:
            parts.append(f"{self.growth.years:g} years at {self.growth.rate_per_year:.0%} a year: x{self.growth.factor:.3g}")
        return ", ".join(parts)

    @property
    def target_iops(self) -> float:
        """The target as IOPS, before the growth headroom."""
        return self.design_iops / self.growth_factor


class ConsolidationRequirements(StrictModel):
    """Size one configuration for several workloads, each with its own objectives::

        name: OLTP + backup on LinuxONE
        platform: linuxone
        workloads:                       # as in a scenario: named, each its own kind, mix and load
          - {name: oltp, kind: closed, jobs: 64, read_fraction: 0.9, block_size_kib: 8}
          - {name: backup, kind: open, rate_iops: 500, read_fraction: 1.0, block_size_kib: 1024, access: sequential}
        slos:
          - {workload: oltp, statistic: p99, us: 1000}
          - {workload: backup, min_mbps: 500}
        usable_tb: 3
        protection: redundant

    The candidates are the planner's grid for the platform (``sim.plan.planner``); the fast path screens them
    against every objective, the DES verifies the cheapest (sim/plan/consolidated.py). Placements are
    not planned (every workload uses the whole volume).
    """

    name: str = ""
    description: str = ""
    platform: Platform
    workloads: list[Workload] = Field(min_length=1, max_length=MAX_WORKLOADS)
    slos: list[WorkloadSlo] = Field(min_length=1, max_length=64)
    usable_tb: float | None = Field(default=None, gt=0, le=100_000, description=USABLE_TB)
    protection: Protection = "redundant"
    budget_usd: float | None = Field(default=None, gt=0)
    storage_server_share: float = Field(default=1.0, gt=0, le=1, description="share of a SAN storage server's price charged")
    host: HostConfig | None = Field(default=None, description="host override; default: the platform's catalog host")
    candidates: CandidateSpace = Field(default_factory=CandidateSpace, description=CANDIDATES_BLOCK)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    device_model: DeviceModel = Field(default="auto", description=CANDIDATES_DEVICE_MODEL)

    @model_validator(mode="after")
    def _named_and_placed_nowhere(self) -> ConsolidationRequirements:
        names: list[str] = []
        for i, wl in enumerate(self.workloads):
            if not wl.name or wl.name in names:
                raise field_problem(f"workloads.{i}.name", "each workload needs a name of its own")
            if wl.placement is not None:
                raise field_problem(f"workloads.{i}.placement", "the planner spreads every workload over the whole volume")
            names.append(wl.name)
        for i, slo in enumerate(self.slos):
            if slo.workload not in names:
                raise field_problem(f"slos.{i}.workload", f"no workload is called {slo.workload!r}; the workloads: {', '.join(names)}")
        self.grid()  # the platform, the candidate space and the protection checked as a plan's are
        return self

    def grid(self) -> Requirements:
        """The single-workload requirements whose candidate grid (platform, devices, layouts, capacity,
        protection) this plan searches; its workload, target and SLO are placeholders the plan never reads."""
        return Requirements(platform=self.platform, workload=self.workloads[0].model_copy(update={"name": None}),
                            target=Target(iops=1.0), latency_slo=LatencySlo(us=1e7), usable_tb=self.usable_tb,
                            protection=self.protection, budget_usd=self.budget_usd,
                            storage_server_share=self.storage_server_share, host=self.host, candidates=self.candidates,
                            verify=self.verify)


def consolidation_from_data(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> ConsolidationRequirements:
    """Validate raw data (after dotted-path overrides) into ConsolidationRequirements."""
    data = apply_overrides(data, overrides) if overrides else data
    check_tree(data)
    return ConsolidationRequirements.model_validate(data)


def requirements_from_data(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> Requirements:
    """Validate raw data (after dotted-path overrides) into Requirements; raises pydantic.ValidationError."""
    if overrides:
        data = apply_overrides(data, overrides)
    else:
        check_tree(data)
    return Requirements.model_validate(data)


def load_requirements(path: str | Path, overrides: dict[str, Any] | None = None) -> Requirements:
    """Read a requirements file (.yaml/.yml, .toml, .json), apply overrides and validate.

    Raises models.loading.BadInput for an unreadable file and pydantic.ValidationError for bad fields
    (``models.scenario.format_validation_error`` turns either into field-named messages).
    """
    return requirements_from_data(read_scenario_data(path), overrides)


__all__ = [
    "PLATFORMS",
    "PLATFORM_DEVICE_RULES",
    "PROTECTION_LAYOUTS",
    "CandidateSpace",
    "ConsolidationRequirements",
    "LatencySlo",
    "Platform",
    "PlatformOptions",
    "Protection",
    "Requirements",
    "SurviveFailures",
    "Target",
    "VerifySettings",
    "consolidation_from_data",
    "device_refusal",
    "load_requirements",
    "platform_devices",
    "platform_of_host",
    "requirements_from_data",
    "scenario_device_problems",
]
