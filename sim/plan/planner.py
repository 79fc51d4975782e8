"""The capacity planner: the cheapest configuration that meets a set of requirements.

``plan(requirements)`` works in three steps:

1. **Enumerate** every configuration the platform allows (models/requirements.py
   ``PLATFORMS``): drive model x drive count x namespaces per drive x layout x adapter
   model and count for direct NVMe; storage server x host adapters x LUNs x front-end
   ports for SAN; DIMM model x count x layout x driver threads for eXFlash; drives x base
   EDEVs x HyperPAV aliases for z/VM. Each candidate is a full ``Scenario`` validated by the
   topology rules (raid10 needs an even drive count >= 4, an EJ1Y holds 8 drives, ...);
   combinations the rules refuse are not candidates. The workload keeps the requirement's
   mix and arrives as an open (Poisson) stream at the design rate, target x (1 + growth
   headroom); a bursty preset keeps its on/off shape, scaled to that mean rate.
2. **Screen** each candidate, cheapest checks first: usable capacity, budget, then the
   analytic fast path (sim/analytic) at the design rate: it must be stable, its
   throughput bound above the design rate and its latency within the SLO. A p99 SLO is
   screened with the fast path's p99 estimate (``p99_estimate_us``: the die-level mechanism
   under ``device_model: dies``, a named heuristic under ``pooled``) and a slack factor, so
   that the screen errs towards keeping candidates; the DES decides.
3. **Verify** the survivors with the discrete-event simulator in order of cost (then
   $/KIOPS): a candidate whose DES latency misses the SLO is rejected with the measured
   figure, and verification goes on until ``verify_top`` candidates have passed (or the
   run cap is spent). The winner is the cheapest candidate the DES confirmed.

Every candidate cheaper than the winner carries the reason it was rejected. When nothing
can meet the requirements, ``NoFeasiblePlan`` names the binding requirement and how far
the best allowed configuration gets.

Costs are catalog prices (models/cost.py). $/KIOPS uses the SPC-1 convention, price over
the highest throughput the configuration sustains (the fast path's throughput bound);
headroom is that bound over the target, minus one.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from models.catalog import lookup
from models.cost import CostError, capex
from models.hardware import FlashDeviceSpec
from models.requirements import PLATFORMS, PROTECTION_LAYOUTS, PlatformOptions, Requirements, SurviveFailures
from models.scenario import Scenario
from sim.analytic import FastResult, clear_cache, evaluate, with_tails
from sim.des.engine import simulate
from sim.plan.candidate import Candidate, FailureState, scenario_data
from sim.plan.capacity_check import cross_checked
from sim.plan.screen import Progress, Verification, cpu_seconds, screen_all, verify_in_order
from sim.route.host import DEFAULT_STACK, IBMI_STACK

P99_SCREEN_SLACK = 1.25
"""A p99 SLO screens out a candidate only when the estimated p99 exceeds SLO x this factor."""

DELIVERY_TOLERANCE = 0.02
"""An open workload's DES throughput whose 95% CI lies this far below the offered rate means the path cannot keep up."""

EXTRA_DES_RUNS = 6
"""DES runs allowed beyond ``verify_top`` for candidates the DES rejects."""

DEFAULT_DEVICE_COUNTS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32)
NAMESPACE_CHOICES = (1, 2, 4, 8, 16, 32, 64)
SAN_HOST_ADAPTERS = (1, 2, 3, 4)
SAN_LUNS = (1, 2, 4, 8, 16)
SAN_FRONT_END_PORTS = (2, 4, 8, 16)
SAN_LUN_QUEUE_DEPTH = 32
"""Per-LUN SCSI queue depth of SAN candidates (the value of examples/s1_linuxone_fcp_ds8950f.yaml)."""
IBMI_NAMESPACE_QUEUE_DEPTH = 32
"""I/Os IBM i keeps outstanding per disk unit (namespace) in IBM i candidates: an assumption, the value of
examples/s2_ibmi_8x4_mirrored.yaml; seed 001 shows the effect ('+ namespaces = + bras disque') but not the limit."""
ZVM_BASE_DEVICES = (1, 2, 4, 8)
ZVM_ALIASES = (0, 1, 3, 7, 11, 15, 31, 59)


class NoFeasiblePlan(ValueError):
    """No allowed configuration meets the requirements; ``problems`` are (field, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))
        self.problems = problems


@dataclass
class PlanResult:
    """The planner's answer: candidates ranked by cost, the DES-verified winner, and the bookkeeping."""

    requirements: Requirements
    target_iops: float
    design_iops: float
    ranked: list[Candidate]
    rejected: list[Candidate]
    screened: int
    fast_evaluated: int
    des_runs: int
    invalid_combinations: int
    screen_wall_s: float
    des_wall_s: float
    notes: list[str] = field(default_factory=list)
    screen_cpu_s: float = 0.0
    """CPU seconds of the screen, this process and its workers (not in ``as_dict``: it varies run to run)."""
    des_cpu_s: float = 0.0

    @property
    def winner(self) -> Candidate:
        return self.ranked[0]

    @property
    def wall_s(self) -> float:
        return self.screen_wall_s + self.des_wall_s

    @property
    def cheaper_rejected(self) -> list[Candidate]:
        """Every candidate cheaper than the winner, closest in price first, each with its rejection reason."""
        limit = self.winner.capex_usd
        out = [c for c in self.rejected if c.capex_usd < limit]
        return sorted(out, key=lambda c: (-c.capex_usd, c.label))

    def rejection_counts(self) -> dict[str, int]:
        return dict(Counter(c.stage for c in self.rejected))

    def as_dict(self) -> dict[str, Any]:
        t = self.target_iops
        return {
            "requirements": self.requirements.model_dump(mode="json", exclude_none=True),
            "target_iops": t,
            "design_iops": self.design_iops,
            "winner": self.winner.as_dict(t, detail=True),
            "ranked": [c.as_dict(t, detail=c.verified) for c in self.ranked],
            "cheaper_rejected": [c.as_dict(t) for c in self.cheaper_rejected],
            "rejection_counts": self.rejection_counts(),
            "screened": self.screened,
            "fast_evaluated": self.fast_evaluated,
            "des_runs": self.des_runs,
            "invalid_combinations": self.invalid_combinations,
            "screen_wall_s": self.screen_wall_s,
            "des_wall_s": self.des_wall_s,
            "notes": self.notes,
        }


# -- the workload and the candidates --------------------------------------------------------

def design_workload(req: Requirements) -> dict[str, Any]:
    """The requirement's workload mix arriving at the design rate (open Poisson, or bursty scaled to that mean)."""
    wl = req.workload_model
    data = wl.model_dump(mode="json", exclude_none=True)
    rate = req.design_iops
    if data["kind"] == "bursty":
        scale = rate / wl.mean_rate_iops  # type: ignore[union-attr]
        data["on_rate_iops"] = data["on_rate_iops"] * scale
        data["off_rate_iops"] = data["off_rate_iops"] * scale
        return data
    keep: dict[str, Any] = {k: data[k] for k in ("read_fraction", "block_size_kib", "sizes", "access") if k in data}
    return {"kind": "open", "rate_iops": rate, **keep}


def platform_host(req: Requirements, options: PlatformOptions, stack: str) -> dict[str, Any]:
    """The host of every candidate: the requirement's own, else the platform's catalog host, with ``stack``."""
    if req.host is not None:
        host = req.host.model_dump(mode="json", exclude_none=True)
        host.setdefault("stack", stack)
        return host
    return {"model": options.host_model, "stack": stack}


def _device_counts(req: Requirements, options: PlatformOptions) -> list[int]:
    space = req.candidates
    cap = min(options.max_devices, space.max_devices or options.max_devices)
    counts = space.device_counts or [n for n in DEFAULT_DEVICE_COUNTS if n <= cap]
    return sorted({n for n in counts if n <= cap})


def allowed_layouts(req: Requirements, options: PlatformOptions) -> list[str]:
    """The platform's layouts (or the requirement's list) that give the protection asked for."""
    allowed = PROTECTION_LAYOUTS[req.protection]
    return [lo for lo in (req.candidates.layouts or options.layouts) if lo in allowed]


def _direct_nvme(req: Requirements, options: PlatformOptions) -> Iterator[tuple[str, dict[str, Any]]]:
    space = req.candidates
    ibmi = req.platform == "power10_ibmi"
    host = platform_host(req, options, IBMI_STACK if ibmi else DEFAULT_STACK["direct_nvme"])
    for drive in space.devices or options.devices:
        spec: FlashDeviceSpec = lookup("drives", drive)
        namespaces = [n for n in (space.namespaces or NAMESPACE_CHOICES) if n <= spec.max_namespaces]
        for count in _device_counts(req, options):
            for layout in allowed_layouts(req, options):
                if layout == "raid1" and count != 2:
                    continue  # md raid1 is an n-way mirror: beyond 2 drives raid10 is the configuration to buy
                for per_drive in namespaces:
                    for adapter in space.adapters or options.adapters:
                        max_drives = lookup("adapters", adapter).max_drives
                        fewest = math.ceil(count / max_drives)
                        for adapters in sorted({fewest, min(count, fewest + 1)}):
                            ns: dict[str, Any] = {"per_drive": per_drive}
                            depth = space.namespace_queue_depth or (IBMI_NAMESPACE_QUEUE_DEPTH if ibmi else None)
                            if depth is not None:
                                ns["queue_depth"] = depth
                            topo = {
                                "kind": "direct_nvme", "host": host, "drive": drive, "drives": count,
                                "adapter": adapter, "adapters": adapters, "namespaces": ns, "layout": layout,
                                "mirror_protection": "planar" if layout == "ibmi_mirror" and adapters >= 2 else "drive",
                            }
                            ns_text = f", {per_drive} ns/drive" if spec.max_namespaces > 1 else ""
                            where = f"{adapters} x {adapter}" if max_drives > 1 else "carriers"
                            yield f"{count} x {drive}{ns_text}, {layout}, {where}", topo


def _san(req: Requirements, options: PlatformOptions) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["san.fcp"])
    for hbas in SAN_HOST_ADAPTERS:
        for luns in SAN_LUNS:
            for ports in SAN_FRONT_END_PORTS:
                topo = {
                    "kind": "san", "host": host, "protocol": "fcp", "host_adapter": "FICON-Express32S",
                    "host_adapters": hbas, "luns": luns, "lun_queue_depth": SAN_LUN_QUEUE_DEPTH,
                    "storage_server": "DS8950F", "front_end_ports": ports, "layout": "raid0",
                }
                yield f"DS8950F: {luns} LUNs, {ports} FE ports, {hbas} x FICON-Express32S", topo


def _exflash(req: Requirements, options: PlatformOptions) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["exflash"])
    for dimm in req.candidates.devices or options.devices:
        for count in _device_counts(req, options):
            for layout in allowed_layouts(req, options):
                for max_occupancy in (True, False):
                    topo = {"kind": "exflash", "host": host, "dimm": dimm, "dimms": count, "layout": layout,
                            "max_occupancy": max_occupancy}
                    threads = "1 driver thread/DIMM" if max_occupancy else "1 driver thread/2 DIMMs"
                    yield f"{count} x {dimm}, {layout}, {threads}", topo


def _zvm(req: Requirements, options: PlatformOptions) -> Iterator[tuple[str, dict[str, Any]]]:
    host = platform_host(req, options, DEFAULT_STACK["zvm_edev"])
    for drive in req.candidates.devices or options.devices:
        for count in _device_counts(req, options):
            for base in ZVM_BASE_DEVICES:
                for aliases in ZVM_ALIASES:
                    topo = {"kind": "zvm_edev", "host": host, "drive": drive, "drives": count,
                            "adapter": options.adapters[0], "base_devices": base, "aliases": aliases}
                    yield f"{count} x {drive}, {base} base EDEVs + {aliases} aliases", topo


def _topologies(req: Requirements) -> Iterator[tuple[str, dict[str, Any]]]:
    options = PLATFORMS[req.platform]
    if req.platform in ("power10_ibmi", "linuxone"):
        yield from _direct_nvme(req, options)
    elif req.platform == "x86_exflash":
        yield from _exflash(req, options)
    else:
        yield from _zvm(req, options)
    if options.san and req.candidates.include_san and req.protection in ("none", "redundant"):
        yield from _san(req, options)


def candidate(req: Requirements, label: str, topo: dict[str, Any], workload: dict[str, Any] | None = None,
              run: dict[str, Any] | None = None) -> Candidate | None:
    """The priced candidate of one combination, or None when the topology rules refuse it.

    ``workload`` and ``run`` default to the requirement's design workload and verification settings
    (pass them in when building many: they are the same for every candidate).
    """
    data = scenario_data(label, topo, req.device_model, workload=workload or design_workload(req),
                         run=run or req.verify.model_dump())
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError:
        return None
    try:
        cost = capex(scenario.topology, storage_server_share=req.storage_server_share)  # type: ignore[arg-type]
    except CostError as exc:
        raise NoFeasiblePlan([("platform", str(exc))]) from None
    return Candidate(label=label, scenario=scenario, capex=cost)


def enumerate_candidates(req: Requirements) -> tuple[list[Candidate], int]:
    """Every configuration of the planner's grid the platform and the topology rules allow, priced; and how many
    combinations the rules refused (``sim.plan.space.wide_candidates`` is the wide space)."""
    workload = design_workload(req)
    run = req.verify.model_dump()
    candidates: list[Candidate] = []
    invalid = 0
    seen: set[str] = set()
    for label, topo in _topologies(req):
        if label in seen:
            continue
        seen.add(label)
        c = candidate(req, label, topo, workload, run)
        if c is None:
            invalid += 1
        else:
            candidates.append(c)
    return candidates, invalid


# -- screening and verification -----------------------------------------------------------

def p99_estimate_us(fast: FastResult) -> float:
    """The fast path's own p99 estimate (``FastResult.latency_p99_us``, ``sim.analytic.TAIL_METHODS``): under
    ``device_model: dies`` the die-level mechanism, under ``pooled`` the named screening heuristic
    (``sim.analytic.heuristic_quantile_us``). A result built outside ``sim.analytic.evaluate`` without one
    gets the heuristic (``sim.analytic.with_tails``). Infinite when unstable; the DES measures the real p99."""
    if fast.latency_p99_us is None:
        fast = with_tails(fast)
    assert fast.latency_p99_us is not None
    return fast.latency_p99_us


def screen_evaluate(scenario: Scenario) -> FastResult:
    """The fast path's prediction for one candidate, kept at the size ranking needs.

    The utilization by component (hundreds of entries on a large configuration) is left out: only a
    DES-verified candidate shows it, and ``_verify`` evaluates it again in full. The compiled network is not
    kept for reuse (``sim.analytic.clear_cache``): no two candidates share their hardware, and the fast path's
    cache of 512 networks held about 2 GB on the IBM i wide space (bench/memory.py).
    """
    try:
        fast = evaluate(scenario)
    finally:
        clear_cache()
    return dataclasses.replace(fast, utilization={})


def _fmt_iops(x: float) -> str:
    return f"{x:,.0f} IOPS"


def _screen(c: Candidate, req: Requirements) -> None:
    """Run the cheap checks and the fast path; set ``stage``/``rejection`` on failure."""
    if req.usable_tb is not None and c.usable_tb < req.usable_tb * (1 - 1e-9):
        c.stage, c.rejection = "capacity", f"usable {c.usable_tb:.2f} TB < {req.usable_tb:g} TB required"
        return
    if req.budget_usd is not None and c.capex_usd > req.budget_usd:
        c.stage, c.rejection = "budget", f"capex ${c.capex_usd:,.0f} > budget ${req.budget_usd:,.0f}"
        return
    try:
        fast = screen_evaluate(c.scenario)
    except (ValueError, NotImplementedError) as exc:
        c.stage, c.rejection = "fast path", f"fast path cannot evaluate it: {exc}"
        return
    c.fast = fast
    c.p99_estimate_us = p99_estimate_us(fast)
    design = req.design_iops
    if not fast.stable or fast.bounds.x_max_iops < design:
        c.stage = "throughput"
        c.rejection = (f"saturates: at most {_fmt_iops(fast.bounds.x_max_iops)} < {_fmt_iops(design)} design "
                       f"(bottleneck {fast.bottleneck})")
        return
    slo = req.latency_slo
    if slo.statistic == "mean" and fast.latency_mean_us > slo.us:
        c.stage = "latency"
        c.rejection = f"fast path mean latency {fast.latency_mean_us:,.0f} us > SLO {slo.us:g} us (bottleneck {fast.bottleneck})"
        return
    if slo.statistic == "p99" and c.p99_estimate_us > slo.us * P99_SCREEN_SLACK:
        c.stage = "latency"
        c.rejection = (f"estimated p99 {c.p99_estimate_us:,.0f} us > SLO {slo.us:g} us x {P99_SCREEN_SLACK:g} "
                       f"(fast path mean {fast.latency_mean_us:,.0f} us, bottleneck {fast.bottleneck})")
        return
    c.stage = "screened"
    if req.survive is not None and req.survive.any:
        _screen_failures(c, req, req.survive)


def _verify(c: Candidate, req: Requirements) -> None:
    """Run the DES on a screened candidate and judge it against the SLO (and evaluate its fast path in full)."""
    c.fast = evaluate(c.scenario)
    result = cross_checked(c.scenario, simulate(c.scenario), c.fast)
    c.des = result
    slo = req.latency_slo
    metric = result.latency_mean_us if slo.statistic == "mean" else result.latency_p99_us
    lo, hi = metric.ci95
    open_arrivals = c.scenario.workload.kind == "open"
    if result.validity == "unstable":
        # never ranked: an unstable point's latency only says how long its run lasted
        c.stage, c.rejection = "DES", f"DES: unstable at {_fmt_iops(req.design_iops)} ({result.validity_note})"
    elif open_arrivals and result.iops.ci95[1] < req.design_iops * (1 - DELIVERY_TOLERANCE):
        c.stage = "DES"
        c.rejection = (f"DES delivers {_fmt_iops(result.iops.value)} (95% CI {result.iops.ci95[0]:,.0f}..{result.iops.ci95[1]:,.0f}) "
                       f"of the {_fmt_iops(req.design_iops)} offered (bottleneck {result.bottleneck})")
    elif metric.value > slo.us:
        c.stage = "DES"
        c.rejection = (f"DES {slo.statistic} latency {metric.value:,.0f} us (95% CI {lo:,.0f}..{hi:,.0f}) > SLO "
                       f"{slo.us:g} us (bottleneck {result.bottleneck})")
    else:
        c.stage = "verified"
        if c.failure_states:
            _verify_failures(c, req)


def _rank_key(c: Candidate, statistic: str) -> tuple[float, float, float, str]:
    """Cheapest first; among equal prices the lowest $/KIOPS, then the lowest latency in the SLO's statistic."""
    if c.fast is None:
        latency = math.inf
    else:
        latency = c.fast.latency_mean_us if statistic == "mean" else (c.p99_estimate_us or math.inf)
    return (round(c.capex_usd, 2), c.usd_per_kiops or math.inf, latency, c.label)


def _infeasible(req: Requirements, candidates: list[Candidate]) -> NoFeasiblePlan:
    """Explain which requirement binds, with how far the best allowed configuration gets."""
    where = f"{req.platform} with {req.protection!r} protection"
    if not candidates:
        return NoFeasiblePlan([("candidates", f"no configuration of {where} passes the topology rules with these candidate limits")])
    by_stage: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_stage.setdefault(c.stage, []).append(c)
    if req.usable_tb is not None and len(by_stage.get("capacity", ())) == len(candidates):
        best = max(candidates, key=lambda c: c.usable_tb)
        return NoFeasiblePlan([("usable_tb", f"{req.usable_tb:g} TB is more than any configuration of {where} offers; "
                                             f"allowed: <= {best.usable_tb:.2f} TB ({best.label})")])
    roomy = [c for c in candidates if c.stage != "capacity"]
    if all(c.stage == "budget" for c in roomy):
        best = min(roomy, key=lambda c: c.capex_usd)
        roomy_words = "" if req.usable_tb is None else f" with >= {req.usable_tb:g} TB usable"
        return NoFeasiblePlan([("budget_usd", f"the cheapest configuration{roomy_words} costs "
                                              f"${best.capex_usd:,.0f} ({best.label}); allowed: >= {best.capex_usd:,.0f}")])
    evaluated = [c for c in roomy if c.fast is not None]
    field_name = "target.iops" if req.target.iops is not None else "target.mbps"
    if evaluated and all(c.stage == "throughput" for c in evaluated):
        best = max(evaluated, key=lambda c: c.max_iops or 0.0)
        assert best.fast is not None
        limit = best.fast.bounds.x_max_iops / req.growth_factor
        if req.target.iops is None:
            limit_text = f"{limit * req.workload_model.mean_bytes() / 1e6:,.0f} MB/s"
        else:
            limit_text = f"{limit:,.0f} IOPS"
        return NoFeasiblePlan([(field_name, f"no configuration of {where} within capacity and budget sustains "
                                            f"{_fmt_iops(req.design_iops)} (target, {req.growth_words()}); "
                                            f"the fastest reaches {_fmt_iops(best.fast.bounds.x_max_iops)} ({best.label}); "
                                            f"allowed: <= {limit_text}")])
    latency = [c for c in evaluated if c.stage in ("latency", "DES")]
    if latency:
        slo = req.latency_slo

        def achieved(c: Candidate) -> float:
            if c.des is not None:
                return (c.des.latency_mean_us if slo.statistic == "mean" else c.des.latency_p99_us).value
            assert c.fast is not None
            return c.fast.latency_mean_us if slo.statistic == "mean" else (c.p99_estimate_us or math.inf)

        best = min(latency, key=achieved)
        how = "DES" if best.des is not None else ("fast path" if slo.statistic == "mean" else "estimated")
        return NoFeasiblePlan([("latency_slo.us", f"no configuration of {where} that sustains {_fmt_iops(req.design_iops)} "
                                                  f"gets the {slo.statistic} latency down to {slo.us:g} us; the best "
                                                  f"reaches {achieved(best):,.0f} us ({how}, {best.label}); "
                                                  f"allowed: >= {achieved(best):,.0f}")])
    reasons = Counter(c.stage for c in candidates)
    return NoFeasiblePlan([("requirements", "no configuration meets them: " + ", ".join(f"{n} rejected at {s}" for s, n in reasons.items()))])


def plan(req: Requirements, verify_top: int = 3, space: tuple[list[Candidate], int] | None = None,
         distinct: Callable[[Candidate], Hashable] | None = None, jobs: int = 1,
         progress: Progress | None = None) -> PlanResult:
    """Enumerate, screen with the fast path, verify the cheapest with the DES; raise NoFeasiblePlan if nothing fits.

    ``space`` is (candidates, refused combinations), by default the planner's grid (``enumerate_candidates``);
    ``distinct`` maps a candidate to what it buys (``sim.plan.space.hardware_key``): once one candidate of a
    purchase is verified, other settings of the same purchase are not verified again, so the finalists are
    distinct configurations. ``jobs`` processes screen and verify (sim/plan/screen.py: the same plan for any
    count); ``progress(stage, done, total)`` follows the screen and the DES runs.
    """
    if verify_top < 1:
        raise ValueError(f"verify_top must be >= 1, got {verify_top}")
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    candidates, invalid = space if space is not None else enumerate_candidates(req)
    screen_all(candidates, functools.partial(_screen, req=req), jobs, progress)
    screened = sorted((c for c in candidates if c.stage == "screened"), key=lambda c: _rank_key(c, req.latency_slo.statistic))
    t1, cpu1 = time.perf_counter(), cpu_seconds()
    rule = verify_in_order(screened, functools.partial(_verify, req=req),
                           Verification(verify_top, verify_top + EXTRA_DES_RUNS, distinct), jobs, progress)
    des_runs = rule.runs + sum(state.des is not None for c in screened for state in c.failure_states.values())
    passed = rule.passed
    t2, cpu2 = time.perf_counter(), cpu_seconds()
    ranked = [c for c in screened if c.rejection is None]
    notes: list[str] = []
    if not ranked:
        raise _infeasible(req, candidates)
    if not ranked[0].verified:
        failed = [c for c in screened if c.stage == "DES"]
        raise NoFeasiblePlan([("latency_slo.us", f"the DES rejected the {len(failed)} cheapest candidates the fast path accepted "
                                             f"(first: {failed[0].label}: {failed[0].rejection}); {len(ranked)} more were not "
                                             f"simulated; relax the SLO or run with a larger verify_top")])
    if passed < verify_top and len(ranked) > passed:
        notes.append(f"{des_runs} DES runs spent; {passed} of the requested {verify_top} finalists verified")
    rejected = [c for c in candidates if c.rejection is not None]
    return PlanResult(
        requirements=req,
        target_iops=req.target_iops,
        design_iops=req.design_iops,
        ranked=ranked,
        rejected=rejected,
        screened=len(candidates),
        fast_evaluated=sum(c.fast is not None for c in candidates),
        des_runs=des_runs,
        invalid_combinations=invalid,
        screen_wall_s=t1 - t0,
        des_wall_s=t2 - t1,
        notes=notes,
        screen_cpu_s=cpu1 - cpu0,
        des_cpu_s=cpu2 - cpu1,
    )


# -- failure states: the SLO must hold with a drive or an adapter failed ----------------------


def failure_scenarios(scenario: Scenario, survive: SurviveFailures) -> dict[str, Scenario] | str:
    """The failure states of a candidate (name -> scenario), or why it cannot survive them (data loss, no path)."""
    topo = scenario.topology
    wanted: dict[str, dict[str, Any]] = {}
    if survive.drive and topo.kind != "san":  # a SAN storage server protects its own drives
        wanted["drive 0 failed"] = {"failed_drives": [0]}
        wanted["drive 0 rebuilding"] = {"failed_drives": [0], "rebuild": survive.rebuild.model_dump(mode="json", exclude_none=True)}
    if survive.adapter and topo.kind in ("direct_nvme", "san"):
        wanted["adapter 0 failed"] = {"failed_adapters": [0]}
    out: dict[str, Scenario] = {}
    data = scenario.model_dump(mode="json", exclude_none=True)
    for name, faults in wanted.items():
        try:
            out[name] = Scenario.model_validate({**data, "faults": faults})
        except ValidationError as exc:
            return f"{name}: " + "; ".join(str(e["msg"]) for e in exc.errors())
    return out


def _fast_rejection(fast: FastResult, p99: float, req: Requirements) -> str | None:
    """Why the fast path rejects a prediction at the design rate (None: it passes the screen)."""
    if not fast.stable or fast.bounds.x_max_iops < req.design_iops:
        return f"saturates at {_fmt_iops(fast.bounds.x_max_iops)} (bottleneck {fast.bottleneck})"
    slo = req.latency_slo
    if slo.statistic == "mean" and fast.latency_mean_us > slo.us:
        return f"fast path mean latency {fast.latency_mean_us:,.0f} us > SLO {slo.us:g} us (bottleneck {fast.bottleneck})"
    if slo.statistic == "p99" and p99 > slo.us * P99_SCREEN_SLACK:
        return f"estimated p99 {p99:,.0f} us > SLO {slo.us:g} us x {P99_SCREEN_SLACK:g} (bottleneck {fast.bottleneck})"
    return None


def _screen_failures(c: Candidate, req: Requirements, survive: SurviveFailures) -> None:
    """Screen a candidate's failure states with the fast path; reject it at stage ``failure`` when one fails."""
    states = failure_scenarios(c.scenario, survive)
    if isinstance(states, str):
        c.stage, c.rejection = "failure", states
        return
    for name, scenario in states.items():
        fast = screen_evaluate(scenario)
        state = c.failure_states[name] = FailureState(scenario, fast, p99_estimate_us(fast))
        assert state.p99_estimate_us is not None
        why = _fast_rejection(fast, state.p99_estimate_us, req)
        if why is not None:
            c.stage, c.rejection = "failure", f"{name}: {why}"
            return


def _verify_failures(c: Candidate, req: Requirements) -> None:
    """Simulate every failure state of a verified candidate; the SLO must hold in each (else stage ``DES``)."""
    slo = req.latency_slo
    for name, state in c.failure_states.items():
        result = state.des = cross_checked(state.scenario, simulate(state.scenario))
        metric = result.latency_mean_us if slo.statistic == "mean" else result.latency_p99_us
        if result.validity == "unstable":
            c.stage, c.rejection = "DES", f"DES, {name}: unstable ({result.validity_note})"
            return
        if metric.value > slo.us:
            c.stage, c.rejection = "DES", (f"DES, {name}: {slo.statistic} latency {metric.value:,.0f} us > SLO {slo.us:g} us "
                                           f"(bottleneck {result.bottleneck})")
            return
