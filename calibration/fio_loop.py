"""The loop from a prediction to the delivered hardware and back: fio job files that reproduce a scenario's
workloads, a manifest of what each job is predicted to measure, and fio's results set beside it.

``forecast`` predicts a scenario (the DES, or the analytic fast path) per fio job: one job per steady
workload, one per interval of a profile. ``fio_jobs`` writes the job file:

* closed loop: ``numjobs`` = jobs, ``iodepth`` = queue depth, ``thinktime`` = think time. fio's thinktime
  stalls the whole job after ``thinktime_blocks`` I/Os, the model's think time holds each I/O slot on its
  own: with a think time and a depth above 1 every slot becomes a job of depth 1 (``numjobs`` = jobs x depth).
* open load: ``rate_iops`` per direction (reads and writes at the mix's shares) with ``rate_process=poisson``,
  split over enough jobs that none is asked more than ``iops_per_job``; ``iodepth`` leaves room for twice the
  I/Os the prediction has in flight at its p99.9 latency, so fio's arrivals are not held back by the depth.
* on/off bursts: the on rate, paused ``mean_off_ms`` after the I/Os of a mean on period (``thinktime``,
  ``thinktime_blocks``): fixed periods where the model's are exponential.
* a profile: one job per interval, each in turn (``stonewall``); beside other workloads each starts at its
  interval's time (``startdelay``), the others running through the whole profile.
* several workloads: concurrent jobs, each its own reporting group (``new_group``).

The targets are placeholders (``/dev/REPLACE_ME...``, ``/dev/md/REPLACE_ME...``) the user replaces with the
volume or devices the scenario describes. ``compare`` reads fio's results (``calibration.importers.fio``) and
sets each job's measurements beside its prediction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from calibration.importers.fio import FioJob, FioResult, describe_workload
from models.loading import MAX_MEASUREMENT_BYTES, BadInput, decode, format_validation_error, parse_document
from models.result import Metric, Result
from models.scenario import Scenario, ScenarioFileError, parse_override, read_scenario_data, scenario_from_data, volume_members
from models.topology import DirectNvme, Exflash, San, ZvmEdev
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload, ProfileWorkload

MANIFEST_NAME = "manifest.json"
JOB_FILE_NAME = "jobs.fio"
MANIFEST_FORMAT = "flashplan-fio-export"
MANIFEST_VERSION = 1

PERCENTILES = (50.0, 95.0, 99.0, 99.9)
"""The latency percentiles a prediction reports (``models.result.RunMetrics``): fio's ``percentile_list``."""

PREDICTED = ("iops", "latency_mean_us", "latency_p50_us", "latency_p95_us", "latency_p99_us", "latency_p999_us")
COMPARED = ("iops", "latency_mean_us", "latency_p50_us", "latency_p99_us", "latency_p999_us")
LABELS = {"iops": "IOPS", "latency_mean_us": "mean (us)", "latency_p50_us": "p50 (us)", "latency_p95_us": "p95 (us)",
          "latency_p99_us": "p99 (us)", "latency_p999_us": "p99.9 (us)"}

ENGINES = ("libaio", "io_uring")
DEFAULT_RUNTIME_S = 60.0
DEFAULT_IOPS_PER_JOB = 100_000
MIN_OPEN_DEPTH = 16
MAX_OPEN_DEPTH = 4096
PLACEHOLDER = "REPLACE_ME"


@dataclass(frozen=True)
class Figure:
    """A predicted value and its 95% confidence interval (None: the fast path, or fewer than two batches)."""

    value: float
    ci95: tuple[float, float] | None = None

    @classmethod
    def of(cls, m: Metric) -> Figure:
        ci = m.ci95 if m.has_ci and all(math.isfinite(c) for c in m.ci95) else None
        return cls(m.value, ci)

    def as_dict(self) -> dict[str, Any]:
        finite = math.isfinite(self.value)
        return {"value": self.value if finite else None, "ci95": list(self.ci95) if self.ci95 and finite else None}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Figure | None:
        if not isinstance(data, dict) or "value" not in data:
            raise BadInput([(where, "expected {value, ci95}")])
        value, ci = data["value"], data.get("ci95")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BadInput([(f"{where}.value", f"expected a number, got {value!r}")])
        if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(
                isinstance(c, int | float) and not isinstance(c, bool) for c in ci)):
            raise BadInput([(f"{where}.ci95", f"expected [low, high] or null, got {ci!r}")])
        return cls(float(value), (float(ci[0]), float(ci[1])) if ci is not None else None)

    def words(self, digits: int = 1) -> str:
        if math.isnan(self.value):
            return "not measured (the run ended before it)"
        if not math.isfinite(self.value):
            return "unbounded (unstable)"
        ci = f" (95% CI {self.ci95[0]:,.{digits}f} .. {self.ci95[1]:,.{digits}f})" if self.ci95 else " (no CI)"
        return f"{self.value:,.{digits}f}{ci}"


@dataclass
class JobPrediction:
    """One fio job: the workload (or profile interval) it reproduces and what it is predicted to measure."""

    name: str
    workload: str
    interval: int | None
    label: str
    describe: str
    predicted: dict[str, Figure]
    idle: bool = False
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "workload": self.workload, "interval": self.interval, "label": self.label,
                "describe": self.describe, "idle": self.idle, "notes": list(self.notes),
                "predicted": {k: f.as_dict() for k, f in self.predicted.items()}}


@dataclass
class Forecast:
    """What a scenario is predicted to do, per fio job; the solver, its seed and the run's warm-up."""

    scenario: Scenario
    solver: str
    seed: int | None
    validity: str
    warmup_s: float
    warmup_words: str
    jobs: dict[tuple[str, int | None], dict[str, Figure]]
    source: str = ""

    def words(self) -> str:
        if self.solver == "des":
            return f"the DES, seed {self.seed}, {self.validity}"
        return "the analytic fast path (mean values and tail estimates, no confidence intervals)"


# -------------------------------------------------------------------------------------------- prediction


def _metrics_figures(metrics: Any) -> dict[str, Figure]:
    get = metrics.get if isinstance(metrics, dict) else (lambda k: getattr(metrics, k, None))
    return {k: Figure.of(m) for k in PREDICTED if (m := get(k)) is not None}


def des_forecast(scenario: Scenario, result: Result, source: str = "") -> Forecast:
    """The per-job figures of a DES Result (its workloads and profile intervals)."""
    jobs: dict[tuple[str, int | None], dict[str, Figure]] = {}
    several = scenario.workloads is not None
    for name, wl in scenario.named_workloads():
        own = result.workloads[name] if several and result.workloads else result
        if isinstance(wl, ProfileWorkload):
            for iv in own.intervals or []:
                jobs[(name, iv.index)] = _metrics_figures(iv.metrics)
        else:
            jobs[(name, None)] = _metrics_figures(own)
    profile = _profile_of(scenario)
    if profile is not None:
        warm, words = profile.warmup_s, f"the profile's warm-up, {profile.warmup_s:g} s"
    else:
        done = max(result.simulated_ios, 1)
        warm = result.simulated_seconds * (result.simulated_ios - result.measured_ios) / done
        words = (f"the DES run's warm-up, {result.simulated_ios - result.measured_ios:,} I/Os = "
                 f"{warm * 1000:,.3g} ms simulated")
    return Forecast(scenario, "des", result.seed, result.validity, warm, words, jobs, source)


def _fast_figures(fast: Any) -> dict[str, Figure]:
    out = {"iops": Figure(fast.iops), "latency_mean_us": Figure(fast.latency_mean_us)}
    if fast.latency_p99_us is not None:
        out["latency_p99_us"] = Figure(fast.latency_p99_us)
    if getattr(fast, "latency_p999_us", None) is not None:
        out["latency_p999_us"] = Figure(fast.latency_p999_us)
    return out


def fast_forecast(scenario: Scenario, source: str = "") -> Forecast:
    """The analytic fast path's figures per job (a profile interval by interval, ``sim.plan.profile_fast``)."""
    from sim.analytic import evaluate
    from sim.plan.profile_fast import evaluate_profile

    jobs: dict[tuple[str, int | None], dict[str, Figure]] = {}
    profile = _profile_of(scenario)
    if profile is not None:
        estimate = evaluate_profile(scenario)
        for iv in estimate.intervals:
            for name, wl in scenario.named_workloads():
                if isinstance(wl, ProfileWorkload):
                    figs = _fast_figures(iv.fast.workloads[name] if iv.fast and iv.fast.workloads else iv.fast) if iv.fast else {}
                    p99 = iv.p99_by_workload.get(name, iv.p99_estimate_us)
                    if math.isfinite(p99):
                        figs["latency_p99_us"] = Figure(p99)
                    jobs[(name, iv.index)] = figs
                elif iv.index == 0:  # a steady workload beside a profile: the first interval's figures
                    jobs[(name, None)] = _fast_figures(iv.fast.workloads[name]) if iv.fast and iv.fast.workloads else {}
        return Forecast(scenario, "fast", None, "fast path", profile.warmup_s,
                        f"the profile's warm-up, {profile.warmup_s:g} s", jobs, source)
    fast = evaluate(scenario)
    for name, _ in scenario.named_workloads():
        own = fast.workloads[name] if scenario.workloads is not None and fast.workloads else fast
        jobs[(name, None)] = _fast_figures(own)
    warm = scenario.run.warmup_ios / fast.iops if fast.iops > 0 else 0.0
    return Forecast(scenario, "fast", None, "fast path" if fast.stable else "unstable", warm,
                    f"the run's warm-up, {scenario.run.warmup_ios:,} I/Os at the predicted rate = {warm * 1000:,.3g} ms", jobs,
                    source)


def _profile_of(scenario: Scenario) -> ProfileWorkload | None:
    return next((wl for _, wl in scenario.named_workloads() if isinstance(wl, ProfileWorkload)), None)


def is_requirements(data: dict[str, Any]) -> bool:
    """A requirements file (``flashplan plan``'s input) has a target or a platform and no topology."""
    return "topology" not in data and ("target" in data or "platform" in data)


def _screened_consolidation(req: Any) -> Any:
    """The cheapest configuration the fast path finds meeting every objective of a consolidation plan (the
    planner's screen, ``sim.plan.consolidated``, without its DES verification)."""
    from sim.plan.consolidated import candidates_of, screen

    candidates = candidates_of(req)
    for c in candidates:
        screen(c, req)
    screened = sorted((c for c in candidates if c.stage == "screened"),
                      key=lambda c: (c.capex.total_usd, c.fast.latency_mean_us if c.fast else 0.0, c.label))
    if not screened:
        reasons: dict[str, int] = {}
        for c in candidates:
            reasons[c.stage] = reasons.get(c.stage, 0) + 1
        raise BadInput([("requirements", "no configuration passes the fast path's screen: "
                                         + ", ".join(f"{n} rejected at {stage}" for stage, n in reasons.items()))])
    return screened[0]


def _plan_forecast(path: str, data: dict[str, Any], overrides: dict[str, Any], solver: str, verify_top: int) -> Forecast:
    """Plan ``path`` as ``flashplan plan`` does and forecast its winner (the planner's own DES run, or the fast path).

    A consolidation plan (``workloads``) under the fast path stops at the planner's screen: its cheapest candidate
    that meets every objective, not DES-verified."""
    from models.requirements import consolidation_from_data, requirements_from_data
    from sim.plan.planner import NoFeasiblePlan, plan

    source = f"{path}: the plan's winner"
    try:
        if "workloads" in data:
            from sim.plan.consolidated import plan_consolidated

            req = consolidation_from_data(data, overrides)
            if solver == "fast":
                winner: Any = _screened_consolidation(req)
                source = f"{path}: the plan's winner by the fast path's screen (not DES-verified)"
            else:
                winner = plan_consolidated(req, verify_top=verify_top).winner
        else:
            winner = plan(requirements_from_data(data, overrides), verify_top=verify_top).winner
    except NoFeasiblePlan as exc:
        raise BadInput(exc.problems) from None
    check_exportable(winner.scenario)
    source += f", {winner.label}"
    if solver == "fast" or winner.des is None:
        return fast_forecast(winner.scenario, source)
    return des_forecast(winner.scenario, winner.des, source)


def check_exportable(scenario: Scenario) -> None:
    """BadInput for a workload fio cannot reproduce (checked before anything is predicted)."""
    for n, (_, wl) in enumerate(scenario.named_workloads()):
        where = "workload" if scenario.workloads is None else f"workloads.{n}"
        if isinstance(wl, BurstyWorkload) and wl.off_rate_iops > 0:
            raise BadInput([(f"{where}.off_rate_iops", f"must be 0 to export: fio's thinktime stops a job's I/O between "
                                                       f"bursts, so an off rate ({wl.off_rate_iops:g} IOPS) cannot be "
                                                       "reproduced; model it as an open workload of its own")])


def forecast_source(path: str, sets: list[str] | None, solver: str, verify_top: int = 3) -> Forecast:
    """The forecast of a scenario file, or of a requirements file's plan winner; BadInput on bad input."""
    try:
        data = read_scenario_data(path)
        overrides = dict(parse_override(s) for s in sets or [])
        if is_requirements(data):
            return _plan_forecast(path, data, overrides, solver, verify_top)
        scenario = scenario_from_data(data, overrides)
        check_exportable(scenario)
    except ScenarioFileError as exc:
        raise BadInput(exc.problems) from None
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc)) from None
    if solver == "fast":
        return fast_forecast(scenario, path)
    from sim.des.engine import simulate

    return des_forecast(scenario, simulate(scenario), path)


# -------------------------------------------------------------------------------------------- targets


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "job"


def target(scenario: Scenario, name: str, members: Sequence[int] | None) -> tuple[str, str]:
    """(fio ``filename``, what it stands for): a placeholder for the volume or the devices a workload runs on."""
    topo = scenario.topology
    vol = volume_members(topo)
    suffix = "" if members is None else f"_{_slug(name)}"
    if vol is None:
        return f"/dev/{PLACEHOLDER}", "the measured disk the generic station chain stands for"
    layout, count = vol
    ids = list(members) if members is not None else list(range(count))
    member_kind = {DirectNvme: "namespaces", San: "LUNs (multipath devices)", Exflash: "eXFlash DIMMs",
                   ZvmEdev: "base EDEVs (the guest's DASDs; HyperPAV aliases stay with z/VM)"}[type(topo)]
    over = (f"{len(ids)} {member_kind}" + ("" if members is None else f" (members {', '.join(map(str, ids))})"))
    if layout != "jbod":
        what = f"the md {layout} volume over {over}"
        if isinstance(topo, DirectNvme | Exflash | San) and getattr(topo, "chunk_kib", None):
            what += f", chunk {topo.chunk_kib} KiB"
        if layout == "ibmi_mirror":
            what = (f"the mirrored set over {over}: IBM i runs no fio; on a Linux host with the same drives an md "
                    f"raid10 over these namespaces stands for it")
        return f"/dev/md/{PLACEHOLDER}{suffix}", what
    prefix = "/dev/mapper/" if isinstance(topo, San) else "/dev/"
    return ":".join(f"{prefix}{PLACEHOLDER}_{i}" for i in ids), f"each of the {over}, I/Os spread at random over them"


# -------------------------------------------------------------------------------------------- job sections


@dataclass(frozen=True)
class ExportOptions:
    engine: str = "libaio"
    runtime_s: float = DEFAULT_RUNTIME_S
    ramp_s: float | None = None
    iops_per_job: float = DEFAULT_IOPS_PER_JOB

    def problems(self) -> list[tuple[str, str]]:
        out = []
        if self.engine not in ENGINES:
            out.append(("--engine", f"allowed: {', '.join(ENGINES)}; got {self.engine!r}"))
        if not (0.001 <= self.runtime_s <= 86_400):
            out.append(("--runtime-s", f"seconds each steady job runs: must be 0.001 .. 86,400, got {self.runtime_s:g}"))
        if self.ramp_s is not None and not (0 <= self.ramp_s <= 86_400):
            out.append(("--ramp-s", f"seconds of ramp before fio measures: must be 0 .. 86,400, got {self.ramp_s:g}"))
        if not (1 <= self.iops_per_job <= 10_000_000):
            out.append(("--iops-per-job", f"most IOPS one fio job is asked for: must be 1 .. 10,000,000, got {self.iops_per_job:g}"))
        return out


def _seconds(s: float) -> str:
    """A duration in fio's syntax: whole milliseconds (fio's time options take an ``ms`` suffix)."""
    ms = max(1, math.ceil(s * 1000 - 1e-9))
    return f"{ms // 1000}" if ms % 1000 == 0 else f"{ms}ms"


def _mix(wl: Any, notes: list[str]) -> dict[str, str]:
    """rw, rwmixread and bs / bssplit of a workload (sizes in bytes, fio's default unit)."""
    rf = wl.read_fraction
    random = wl.access == "random"
    out: dict[str, str] = {}
    if rf >= 1:
        out["rw"] = "randread" if random else "read"
    elif rf <= 0:
        out["rw"] = "randwrite" if random else "write"
    else:
        out["rw"] = "randrw" if random else "rw"
        pct = round(rf * 100)
        pct = min(99, max(1, pct))
        if abs(pct - rf * 100) > 1e-6:
            notes.append(f"read share {rf:.4g} rounded to rwmixread={pct} (fio takes a whole percent)")
        out["rwmixread"] = str(pct)
    if not wl.sizes:
        out["bs"] = str(max(1, round(wl.block_size_kib * 1024)))
        return out
    parts = []
    for op in ("read", "write"):
        share = rf if op == "read" else 1 - rf
        table = wl.size_table(op) if share > 0 else wl.size_table("read" if op == "write" else "write")
        parts.append(_bssplit(table))
    out["bssplit"] = parts[0] if parts[0] == parts[1] else ",".join(parts)
    return out


def _bssplit(table: list[tuple[int, float]]) -> str:
    """``size/percent:...`` with whole percents summing to 100 (largest remainders)."""
    raw = [p * 100 for _, p in table]
    whole = [math.floor(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: whole[i] - raw[i])[: 100 - sum(whole)]:
        whole[i] += 1
    return ":".join(f"{b}/{w}" for (b, _), w in zip(table, whole, strict=True) if w > 0) or f"{table[0][0]}/100"


def _open_depth(rate: float, figures: Mapping[str, Figure]) -> int:
    """Room for twice the I/Os in flight at the p99.9 latency (else ten times the mean) at ``rate``."""
    lat = figures.get("latency_p999_us") or figures.get("latency_p99_us")
    mean = figures.get("latency_mean_us")
    us = lat.value if lat else (10 * mean.value if mean else 1000.0)
    if not math.isfinite(us):
        return MAX_OPEN_DEPTH
    need = 2 * rate * us / 1e6 + 1
    return int(min(MAX_OPEN_DEPTH, max(MIN_OPEN_DEPTH, 2 ** math.ceil(math.log2(need)))))


def _rate(rate: float, read_fraction: float, notes: list[str]) -> str:
    """fio's ``rate_iops`` (whole IOPS per direction) for ``rate`` I/Os per second at the mix's shares."""
    if 0 < read_fraction < 1:
        r, w = max(1, round(rate * read_fraction)), max(1, round(rate * (1 - read_fraction)))
        return f"{r},{w}"
    whole = max(1, round(rate))
    if abs(whole - rate) > 0.5:
        notes.append(f"rate {rate:g} IOPS per job raised to fio's smallest, 1")
    return str(whole)


def _closed(wl: ClosedWorkload, notes: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    jobs, depth = wl.jobs, wl.queue_depth
    think = wl.think_time_us
    if think > 0 and depth > 1:
        notes.append(f"think time with {depth} I/Os per job: each I/O slot a job of its own ({jobs} x {depth} jobs, "
                     "iodepth 1), as the model thinks per slot and fio per job")
        jobs, depth = jobs * depth, 1
    out["numjobs"] = str(jobs)
    out["iodepth"] = str(depth)
    if think > 0:
        whole = max(1, round(think))
        out["thinktime"] = f"{whole}us"
        if wl.think_distribution == "exponential":
            notes.append("fio's thinktime is fixed; the model's is exponential with that mean")
    if wl.app_us_per_io:
        notes.append(f"app_us_per_io {wl.app_us_per_io:g} us is fio's own handling per I/O: not added to thinktime")
    return out


def _open(rate: float, wl: Any, figures: Mapping[str, Figure], options: ExportOptions, notes: list[str]) -> dict[str, str]:
    n = max(1, math.ceil(rate / options.iops_per_job - 1e-9))
    per_job = rate / n
    out = {"numjobs": str(n), "iodepth": str(_open_depth(per_job, figures)),
           "rate_iops": _rate(per_job, wl.read_fraction, notes), "rate_process": "poisson"}
    if n > 1:
        notes.append(f"{rate:,.0f} IOPS split over {n} jobs of {per_job:,.0f} (at most {options.iops_per_job:,.0f} each)")
    return out


def _bursty(wl: BurstyWorkload, options: ExportOptions, notes: list[str]) -> dict[str, str]:
    n = max(1, math.ceil(wl.on_rate_iops / options.iops_per_job - 1e-9))
    per_job = wl.on_rate_iops / n
    blocks = max(1, round(per_job * wl.mean_on_ms / 1000))
    notes.append(f"on/off bursts: {wl.on_rate_iops:,.0f} IOPS for {blocks:,} I/Os per job (a mean on period of "
                 f"{wl.mean_on_ms:g} ms), then {wl.mean_off_ms:g} ms idle; fio's periods are fixed, the model's exponential, "
                 "and fio's rate catches up a little after each pause")
    return {"numjobs": str(n), "iodepth": str(MIN_OPEN_DEPTH), "rate_iops": _rate(per_job, wl.read_fraction, notes),
            "rate_process": "poisson", "thinktime": f"{max(1, round(wl.mean_off_ms * 1000))}us",
            "thinktime_blocks": str(blocks)}


def _sequential_spread(section: dict[str, str], wl: Any) -> None:
    n = int(section.get("numjobs", "1"))
    if wl.access == "sequential" and 1 < n <= 100:
        section["offset_increment"] = f"{100 // n}%"


@dataclass
class _Job:
    name: str
    options: dict[str, str]
    prediction: JobPrediction


def _steady_job(name: str, wl: Any, figures: dict[str, Figure], options: ExportOptions) -> _Job:
    notes: list[str] = []
    section = _mix(wl, notes)
    if isinstance(wl, ClosedWorkload):
        section.update(_closed(wl, notes))
    elif isinstance(wl, OpenWorkload):
        section.update(_open(wl.rate_iops, wl, figures, options, notes))
    elif isinstance(wl, BurstyWorkload):
        section.update(_bursty(wl, options, notes))
    _sequential_spread(section, wl)
    describe = describe_workload(wl) if not isinstance(wl, BurstyWorkload) else (
        f"bursty, {wl.on_rate_iops:,.0f} IOPS on ({wl.mean_on_ms:g} ms) / {wl.off_rate_iops:,.0f} off ({wl.mean_off_ms:g} ms), "
        f"{wl.read_fraction:.0%} reads, {wl.access}")
    return _Job(_slug(name), section, JobPrediction(_slug(name), name, None, "", describe, figures, notes=notes))


def _interval_job(name: str, profile: ProfileWorkload, index: int, figures: dict[str, Figure], options: ExportOptions) -> _Job:
    iv = profile.intervals[index]
    wl = profile.interval_workload(index)
    notes: list[str] = []
    job_name = f"{_slug(name)}.i{index}"
    label = iv.label
    if iv.rate_iops is not None and iv.rate_iops <= 0:
        section = {"ioengine": "null", "rw": "read", "bs": "4096", "size": "1m", "rate_iops": "1", "filename": "idle"}
        return _Job(job_name, section, JobPrediction(job_name, name, index, label, "idle", {}, idle=True,
                                                     notes=["an idle interval: fio's null engine waits it out"]))
    section = _mix(wl, notes)
    if isinstance(wl, ClosedWorkload):
        section.update(numjobs="1", iodepth=str(iv.queue_depth))
    else:
        section.update(_open(wl.rate_iops, wl, figures, options, notes))
    _sequential_spread(section, wl)
    return _Job(job_name, section, JobPrediction(job_name, name, index, label, describe_workload(wl), figures, notes=notes))


def _spread(filename: str) -> dict[str, str]:
    """Several devices: each I/O to one of them at random, as the model spreads a jbod's I/Os."""
    return {"file_service_type": "random"} if ":" in filename else {}


def _ramp(forecast: Forecast, options: ExportOptions) -> tuple[float, str]:
    if options.ramp_s is not None:
        return options.ramp_s, "--ramp-s"
    return forecast.warmup_s, forecast.warmup_words


def _jobs(forecast: Forecast, options: ExportOptions) -> list[_Job]:
    """Every fio job of the scenario with its timing (runtime, ramp, stonewall / startdelay, groups) and target."""
    scenario = forecast.scenario
    ramp, _ = _ramp(forecast, options)
    profile = _profile_of(scenario)
    alone = len(scenario.named_workloads()) == 1
    steady_runtime = profile.duration_s if profile is not None else options.runtime_s
    out: list[_Job] = []
    for name, wl in scenario.named_workloads():
        filename, _ = target(scenario, name, wl.placement)
        if isinstance(wl, ProfileWorkload):
            start = 0.0
            for i, iv in enumerate(wl.intervals):
                job = _interval_job(name, wl, i, forecast.jobs.get((name, i), {}), options)
                timing = {"runtime": _seconds(iv.duration_s)}
                if i == 0 and ramp > 0:
                    timing["ramp_time"] = _seconds(ramp)
                if i > 0 and alone:
                    timing["stonewall"] = ""
                elif i > 0:
                    timing["startdelay"] = _seconds(ramp + start)
                if i > 0 or not alone:
                    timing["new_group"] = ""
                own = {"filename": filename, **_spread(filename)} if "filename" not in job.options else {}
                job.options = {**own, **job.options, **timing}
                start += iv.duration_s
                out.append(job)
            continue
        job = _steady_job(name, wl, forecast.jobs.get((name, None), {}), options)
        timing = {"runtime": _seconds(steady_runtime), **({"ramp_time": _seconds(ramp)} if ramp > 0 else {})}
        if out:
            timing["new_group"] = ""
        job.options = {"filename": filename, **_spread(filename), **job.options, **timing}
        out.append(job)
    return out


# -------------------------------------------------------------------------------------------- the file


def _prediction_lines(p: JobPrediction, forecast: Forecast) -> list[str]:
    f = p.predicted
    title = f"job {p.name}: workload {p.workload}"
    if p.interval is not None:
        title += f", interval {p.interval}" + (f" ({p.label})" if p.label else "")
    lines = [title]
    lines.append(f"  {p.describe}")
    if p.idle:
        lines.append("  idle: nothing to check")
    else:
        lines.append(f"  predicted by {forecast.words()}:")
        for key in PREDICTED:
            if key in f:
                lines.append(f"    {LABELS[key]:<11} {f[key].words(0 if key == 'iops' else 1)}")
    lines.extend(f"  note: {n}" for n in p.notes)
    return lines


def _header(forecast: Forecast, jobs: list[_Job], options: ExportOptions) -> list[str]:
    s = forecast.scenario
    ramp, ramp_words = _ramp(forecast, options)
    lines = [f"flashplan export fio: {s.name or 'scenario'}"]
    if forecast.source:
        lines.append(f"from {forecast.source}")
    lines.append(f"predictions: {forecast.words()}")
    if s.faults is not None:
        lines.append("the scenario has faults (failed hardware or a rebuild): put the hardware in that state before running")
    lines.append("targets: replace every REPLACE_ME with your volume or devices (nothing here is guessed):")
    seen: set[str] = set()
    for name, wl in s.named_workloads():
        filename, what = target(s, name, wl.placement)
        if filename not in seen:
            seen.add(filename)
            lines.append(f"  {filename if len(filename) <= 60 else filename[:57] + '...'}: {what}")
    lines.append(f"ramp_time: {_seconds(ramp) if ramp > 0 else 'none'} ({ramp_words}); raise it (--ramp-s) for a drive that "
                 "needs preconditioning")
    lines.append(f"run:   fio --output-format=json+ --output=results.json {JOB_FILE_NAME}")
    lines.append(f"check: flashplan import fio results.json --against DIR (the directory holding {MANIFEST_NAME})")
    lines.append("")
    for job in jobs:
        lines.extend(_prediction_lines(job.prediction, forecast))
    return lines


def _global(options: ExportOptions) -> dict[str, str]:
    return {"ioengine": options.engine, "direct": "1", "randrepeat": "0", "norandommap": "1", "time_based": "1",
            "group_reporting": "1", "lat_percentiles": "1",
            "percentile_list": ":".join(f"{q:g}" for q in PERCENTILES)}


def _section(name: str, options: Mapping[str, str]) -> list[str]:
    return [f"[{name}]", *(k if v == "" else f"{k}={v}" for k, v in options.items())]


@dataclass(frozen=True)
class Export:
    """The job file's text and the manifest (JSON-ready) of the predictions its jobs are checked against."""

    job_file: str
    manifest: dict[str, Any]


def fio_jobs(forecast: Forecast, options: ExportOptions | None = None) -> Export:
    """The fio job file reproducing ``forecast.scenario``'s workloads, and its manifest."""
    options = options or ExportOptions()
    problems = options.problems()
    if problems:
        raise BadInput(problems)
    check_exportable(forecast.scenario)
    jobs = _jobs(forecast, options)
    lines = [f"; {ln}" if ln else ";" for ln in _header(forecast, jobs, options)]
    lines += ["", *_section("global", _global(options))]
    for job in jobs:
        lines += ["", *_section(job.name, job.options)]
    manifest = {
        "format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "scenario": forecast.scenario.name,
        "source": forecast.source, "solver": forecast.solver, "seed": forecast.seed, "validity": forecast.validity,
        "percentiles": list(PERCENTILES), "job_file": JOB_FILE_NAME,
        "jobs": [j.prediction.as_dict() for j in jobs],
    }
    return Export("\n".join(lines) + "\n", manifest)


# -------------------------------------------------------------------------------------------- the comparison


def read_manifest(data: bytes | str, origin: str) -> list[JobPrediction]:
    """The jobs of an exported manifest (read as every document is, ``models.loading``); BadInput naming the field on
    anything else."""
    doc = parse_document(decode(data, origin), "json", origin, MAX_MEASUREMENT_BYTES)
    if doc.get("format") != MANIFEST_FORMAT:
        raise BadInput([(origin, f"not a manifest written by `flashplan export fio` (format {MANIFEST_FORMAT!r})")])
    if doc.get("version") != MANIFEST_VERSION:
        raise BadInput([(f"{origin}: version", f"this flashplan reads version {MANIFEST_VERSION}, got {doc.get('version')!r}")])
    raw = doc.get("jobs")
    if not isinstance(raw, list) or not raw:
        raise BadInput([(f"{origin}: jobs", "expected a non-empty list")])
    out = []
    for i, j in enumerate(raw):
        where = f"{origin}: jobs[{i}]"
        if not isinstance(j, dict) or not isinstance(j.get("name"), str) or not isinstance(j.get("predicted"), dict):
            raise BadInput([(where, "expected {name, predicted, ...}")])
        figs = {k: f for k, v in j["predicted"].items() if k in PREDICTED
                and (f := Figure.from_dict(v, f"{where}.predicted.{k}")) is not None}
        interval = j.get("interval")
        out.append(JobPrediction(j["name"], str(j.get("workload", "")), interval if isinstance(interval, int) else None,
                                 str(j.get("label", "")), str(j.get("describe", "")), figs, bool(j.get("idle", False)),
                                 [str(n) for n in j.get("notes", []) if isinstance(n, str)]))
    return out


def forecast_jobs(forecast: Forecast, options: ExportOptions | None = None) -> list[JobPrediction]:
    """The job predictions an export of ``forecast`` holds (what ``--against SCENARIO`` compares with)."""
    return [j.prediction for j in _jobs(forecast, options or ExportOptions())]


@dataclass(frozen=True)
class Row:
    metric: str
    measured: float
    predicted: Figure | None

    @property
    def rel_error(self) -> float | None:
        """(predicted - measured) / measured, as ``calibration.evaluate.Outcome.rel_error``."""
        if self.predicted is None or not self.measured or not math.isfinite(self.predicted.value):
            return None
        return (self.predicted.value - self.measured) / abs(self.measured)

    @property
    def inside_ci(self) -> bool | None:
        ci = self.predicted.ci95 if self.predicted else None
        return None if ci is None else ci[0] <= self.measured <= ci[1]

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "measured": self.measured,
                "predicted": self.predicted.as_dict() if self.predicted else None,
                "rel_error": self.rel_error, "inside_ci": self.inside_ci}


@dataclass(frozen=True)
class JobComparison:
    job: FioJob
    prediction: JobPrediction
    rows: list[Row]

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.job.name, "group": self.job.group, "workload": self.prediction.workload,
                "interval": self.prediction.interval, "label": self.prediction.label, "describe": self.prediction.describe,
                "runtime_s": self.job.runtime_s, "ios": self.job.total_ios, "notes": list(self.job.notes),
                "rows": [r.as_dict() for r in self.rows]}


def compare(result: FioResult, predictions: Sequence[JobPrediction]) -> list[JobComparison]:
    """Each fio job group set beside the prediction of the job of the same name (idle intervals left out).

    Raises BadInput when a job of the results is not in the export, naming the jobs it holds."""
    by_name = {p.name: p for p in predictions}
    unknown = [j.name for j in result.jobs if j.name not in by_name]
    if unknown:
        raise BadInput([("--against", f"fio job(s) {', '.join(map(repr, unknown))} are not in the export; it holds "
                                      f"{', '.join(by_name)}")])
    out = []
    for job in result.jobs:
        pred = by_name[job.name]
        if pred.idle:
            continue
        measured = job.measured
        rows = [Row(k, measured[k], pred.predicted.get(k)) for k in COMPARED if k in measured]
        out.append(JobComparison(job, pred, rows))
    return out


def comparison_rows(c: JobComparison) -> list[dict[str, Any]]:
    """One job's table as plain rows of one type per column (the web app and the HTML report show these)."""
    rows = []
    for r in c.rows:
        p = r.predicted
        rel = r.rel_error
        rows.append({"figure": LABELS[r.metric], "measured": r.measured, "predicted": p.value if p else None,
                     "predicted 95% CI": f"{p.ci95[0]:,.1f} .. {p.ci95[1]:,.1f}" if p and p.ci95 else "unknown",
                     "error": f"{rel:+.1%}" if rel is not None else "-",
                     "inside CI": "-" if r.inside_ci is None else ("yes" if r.inside_ci else "no")})
    return rows


__all__ = [
    "COMPARED",
    "Export",
    "ExportOptions",
    "Figure",
    "Forecast",
    "JobComparison",
    "JobPrediction",
    "compare",
    "comparison_rows",
    "des_forecast",
    "fast_forecast",
    "fio_jobs",
    "forecast_jobs",
    "forecast_source",
    "read_manifest",
    "target",
]
