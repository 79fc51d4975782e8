"""Queue-depth sweep of one catalog device: IOPS and latency (mean, p50, p99, p99.9) at QD 1, 2, 4, ... 256.

``qd_sweep("P3700-800GB")`` builds one single-device scenario per queue depth and solves it with
the public solver entry points only, so it reads whatever device model they implement:

* ``solver="fast"``: the analytic fast path (``sim.analytic.evaluate``), milliseconds per point. It
  gives means; its tail figures are the ones the planner screens with (``FastResult.latency_p99_us``: the
  die-level estimate under ``dies``, with its p99.9; under ``pooled`` the pooled devices' own law, also with its
  p99.9),
  marked ``tail="estimate"``;
* ``solver="des"``: the discrete-event simulator through ``sim.plan.sweep.sweep_frame`` (each point's
  seed derived from its queue depth), every run stopping on its precision (``target_rel_ci``) or on
  ``max_ios`` completions, never on the clock, so the rows are the same on any machine.

The scenario is the EXT calibration setup (calibration/ext/scenarios/ext_drive.yaml): one drive
alone, as a datasheet or a published fio sweep measures it - one namespace, no RAID, no host CPU
in the path (``stack: none``), a closed loop of ``qd`` outstanding I/Os; a DIMM alone with its own
driver thread. Every row carries its validity (``precise``, ``cut_short``, ``unstable``): a cut
short point's figures are indicative only (see app/validity.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from models.catalog import load_catalog
from models.loading import BadInput, format_validation_error
from models.result import Result
from models.scenario import Scenario

Solver = Literal["fast", "des"]
SOLVERS: tuple[Solver, ...] = ("fast", "des")
DEFAULT_DEPTHS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256)
MAX_DEPTH = 4096
MAX_POINTS = 32
DEFAULT_MAX_IOS = 40_000
"""DES completions per point (warm-up included): QD 1..256 on one drive in about 10 s interpreted."""
MIN_MAX_IOS, MAX_MAX_IOS = 2_000, 5_000_000
DEFAULT_TARGET_REL_CI = 0.02
SAFETY_WALL_S = 3_600.0
"""The wall budget of a DES point: a safety net only (the I/O count or the precision ends the run first)."""
ADAPTER = "EJ1Y"
"""The JBOF adapter of a drive's scenario, as in ext_drive.yaml: its PCIe Gen4 x16 uplink never binds one drive."""
TAIL_METRICS = ("latency_p50_us", "latency_p99_us", "latency_p999_us")
METRICS = ("iops", "latency_mean_us", *TAIL_METRICS)


@dataclass(frozen=True)
class QdPoint:
    """One queue depth: throughput and latency (us), with 95% CIs where the solver gives them."""

    qd: int
    iops: float
    latency_mean_us: float
    latency_p50_us: float | None
    latency_p99_us: float | None
    latency_p999_us: float | None
    validity: str
    """precise | cut_short | unstable | unknown (app/validity.py): only precise is a final answer."""
    solver: Solver
    note: str = ""
    tail: Literal["measured", "estimate", "none"] = "measured"
    """measured: the DES's percentiles; estimate: the fast path's screening estimate; none: not available."""
    ci95: dict[str, tuple[float, float]] = field(default_factory=dict)
    """metric -> 95% interval (DES only; a metric with no known interval is left out)."""

    def as_dict(self) -> dict[str, Any]:
        """Plain data (JSON-friendly; intervals as two-element lists)."""
        data = asdict(self)
        data["ci95"] = {k: [lo, hi] for k, (lo, hi) in self.ci95.items()}
        return data


def device_section(device: str) -> str:
    """``drives`` or ``dimms``: where ``device`` is in the catalog; BadInput naming ``drive`` otherwise."""
    catalog = load_catalog()
    for section in ("drives", "dimms"):
        if device in catalog.section(section):
            return section
    known = ", ".join(sorted([*catalog.drives, *catalog.dimms]))
    raise BadInput([("drive", f"unknown catalog drive or DIMM {device!r}; known: {known}")])


TAIL_ESTIMATES = {"dies": "the die-level tail estimate (sim.analytic.dies)",
                  "pooled": "the pooled devices' tail law (service, a read's wait for a program, the queue's wait; "
                            "sim.analytic.tails.pooled_tails)"}
"""What a fast sweep's p99 / p99.9 are under each resolved device model (``resolved_device_model``), in words."""


def resolved_device_model(device: str, device_model: str) -> str:
    """``dies`` or ``pooled``: the model ``device_model`` gives catalog ``device`` (``auto`` resolves per device,
    ``sim.route.flash.uses_die_layout``); BadInput naming ``drive`` for an unknown device."""
    from sim.route.flash import uses_die_layout

    spec = load_catalog().section(device_section(device))[device]
    return "dies" if uses_die_layout(device_model, spec) else "pooled"


def _topology(device: str) -> dict[str, Any]:
    if device_section(device) == "dimms":
        return {"kind": "exflash", "host": {"stack": "none"}, "dimm": device, "dimms": 1, "layout": "jbod", "max_occupancy": True}
    return {"kind": "direct_nvme", "host": {"stack": "none"}, "drive": device, "drives": 1, "adapter": ADAPTER,
            "adapters": 1, "layout": "jbod"}


def des_run(max_ios: int = DEFAULT_MAX_IOS, target_rel_ci: float = DEFAULT_TARGET_REL_CI) -> dict[str, Any]:
    """Run settings of a DES point: ends on precision or on ``max_ios`` completions (the wall budget is a safety net)."""
    return {"seed": 1, "max_ios": max_ios, "warmup_ios": min(5_000, max_ios // 5), "target_rel_ci": target_rel_ci,
            "max_wall_s": SAFETY_WALL_S}


def device_scenario(device: str, qd: int, read_fraction: float = 1.0, block_size_kib: float = 4.0,
                    run: dict[str, Any] | None = None, device_model: str = "auto") -> Scenario:
    """One device alone under a closed loop of ``qd`` random I/Os (one job); BadInput names the bad field."""
    data: dict[str, Any] = {
        "name": f"{device}, {block_size_kib:g} KiB random, {read_fraction:.0%} read, QD {qd}",
        "topology": _topology(device),
        "workload": {"kind": "closed", "jobs": 1, "queue_depth": qd, "read_fraction": read_fraction,
                     "block_size_kib": block_size_kib, "access": "random"},
        "run": run or des_run(),
    }
    if device_model != "auto":
        data["device_model"] = device_model
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise BadInput([(f.removeprefix("workload."), m) for f, m in format_validation_error(exc)]) from None


def check_depths(depths: Any) -> list[int]:
    """The queue depths, each an integer in 1..MAX_DEPTH, distinct, at most MAX_POINTS; BadInput naming ``qd``."""
    if not isinstance(depths, list | tuple) or not depths:
        raise BadInput([("qd", f"give at least one queue depth, got {depths!r}")])
    if len(depths) > MAX_POINTS:
        raise BadInput([("qd", f"at most {MAX_POINTS} queue depths, got {len(depths)}")])
    bad = [d for d in depths if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= MAX_DEPTH]
    if bad:
        raise BadInput([("qd", f"each queue depth must be an integer in 1..{MAX_DEPTH}, got {bad[0]!r}")])
    if len(set(depths)) != len(depths):
        raise BadInput([("qd", f"queue depths must be distinct, got {list(depths)}")])
    return sorted(depths)


def _check_budget(max_ios: int, target_rel_ci: float) -> None:
    if isinstance(max_ios, bool) or not isinstance(max_ios, int) or not MIN_MAX_IOS <= max_ios <= MAX_MAX_IOS:
        raise BadInput([("max_ios", f"must be an integer in {MIN_MAX_IOS}..{MAX_MAX_IOS}, got {max_ios!r}")])
    if not isinstance(target_rel_ci, int | float) or not 0 < target_rel_ci < 1:
        raise BadInput([("target_rel_ci", f"must be in (0, 1), got {target_rel_ci!r}")])


# -- the fast path --------------------------------------------------------------------------------

def _finite(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def fast_tails(fast: Any) -> dict[str, float | None]:
    """p50, p99, p99.9 of a fast-path result: its own estimate (``FastResult.latency_p99_us``, the planner's screening
    figure too); the p99.9 only from a mechanism (``FastResult.tails_from_mechanism``; the pooled model's
    heuristic is a p99 screening figure, not offered as a p99.9); no p50. None when unstable."""
    from sim.plan.planner import p99_estimate_us

    tails: dict[str, float | None] = {k: None for k in TAIL_METRICS}
    if not fast.stable:
        return tails
    tails["latency_p99_us"] = _finite(p99_estimate_us(fast))
    if getattr(fast, "tails_from_mechanism", False):
        tails["latency_p999_us"] = _finite(fast.latency_p999_us)
    return tails


def _fast_validity(fast: Any) -> tuple[str, str]:
    """precise for a stable solution; unstable above Xmax; unknown when a stable solution has no finite mean
    latency (the fast path's eXFlash write-cache approximation can give one: tests/plan/test_qd_sweep.py)."""
    if not fast.stable:
        return "unstable", f"offered load above Xmax ({fast.bounds.bottleneck})"
    if not math.isfinite(fast.latency_mean_us) or not math.isfinite(fast.iops):
        return "unknown", "the fast path gives no finite mean latency here: run the simulation"
    return "precise", ""


def fast_point(scenario: Scenario) -> QdPoint:
    """The fast path's prediction for one queue depth's scenario."""
    from sim.analytic import evaluate

    fast = evaluate(scenario)
    qd = scenario.workload.queue_depth  # type: ignore[union-attr]
    tails = fast_tails(fast)
    known = any(v is not None for v in tails.values())
    validity, note = _fast_validity(fast)
    return QdPoint(qd=qd, iops=fast.iops, latency_mean_us=fast.latency_mean_us, solver="fast", validity=validity, note=note,
                   tail="estimate" if known else "none", latency_p50_us=tails["latency_p50_us"],
                   latency_p99_us=tails["latency_p99_us"], latency_p999_us=tails["latency_p999_us"])


# -- the discrete-event simulator -----------------------------------------------------------------

def _interval(row: dict[str, Any], metric: str) -> tuple[float, float] | None:
    lo, hi = _finite(row.get(f"{metric}_ci95_lo")), _finite(row.get(f"{metric}_ci95_hi"))
    if lo is None or hi is None:
        return None
    return lo, hi


def des_point(qd: int, row: dict[str, Any]) -> QdPoint:
    """A QdPoint from one DES row (``sim.plan.sweep.run_point``'s columns, or ``result_row`` of a Result)."""
    if row.get("status", "ok") != "ok":
        raise RuntimeError(f"queue depth {qd}: {row.get('error')}")
    intervals = {m: iv for m in METRICS if (iv := _interval(row, m)) is not None}
    return QdPoint(qd=qd, iops=float(row["iops"]), latency_mean_us=float(row["latency_mean_us"]),
                   latency_p50_us=_finite(row["latency_p50_us"]), latency_p99_us=_finite(row["latency_p99_us"]),
                   latency_p999_us=_finite(row["latency_p999_us"]), validity=str(row["validity"]), solver="des",
                   note=str(row.get("validity_note") or row.get("stop_reason") or ""), tail="measured", ci95=intervals)


def result_row(result: Result) -> dict[str, Any]:
    """The sweep-row columns ``des_point`` reads, from a Result (the web app runs points in its worker pool)."""
    row: dict[str, Any] = {"status": "ok", "validity": result.validity, "validity_note": result.validity_note,
                           "stop_reason": result.stop_reason}
    for m in METRICS:
        metric = getattr(result, m)
        row[m] = metric.value
        row[f"{m}_ci95_lo"], row[f"{m}_ci95_hi"] = metric.ci95
    return row


def _des_points(base: Scenario, depths: list[int]) -> list[QdPoint]:
    from sim.plan.sweep import sweep_frame

    frame = sweep_frame(base, {"workload.queue_depth": depths}, workers=1)
    rows = {int(r["workload.queue_depth"]): r for r in frame.to_dict(orient="records")}
    return [des_point(qd, rows[qd]) for qd in depths]


# -- the sweep ------------------------------------------------------------------------------------

def qd_sweep(device: str, depths: Any = DEFAULT_DEPTHS, solver: Solver = "fast", read_fraction: float = 1.0,
             block_size_kib: float = 4.0, max_ios: int = DEFAULT_MAX_IOS,
             target_rel_ci: float = DEFAULT_TARGET_REL_CI, device_model: str = "auto") -> list[QdPoint]:
    """One row per queue depth (ascending) for catalog drive or DIMM ``device``; BadInput names a bad argument.

    ``max_ios`` and ``target_rel_ci`` set each DES point's budget (the fast path ignores them).
    ``device_model``: the flash device model (``pooled`` or ``dies``); under ``dies`` a fast sweep's
    p99 and p99.9 are the die-level estimate (``FastResult.latency_p99_us``, ``sim.analytic.TAIL_METHODS``).
    """
    if solver not in SOLVERS:
        raise BadInput([("solver", f"must be one of {', '.join(SOLVERS)}, got {solver!r}")])
    qds = check_depths(list(depths) if isinstance(depths, range) else depths)
    _check_budget(max_ios, target_rel_ci)
    run = des_run(max_ios, target_rel_ci)
    scenarios = [device_scenario(device, qd, read_fraction, block_size_kib, run, device_model) for qd in qds]
    if solver == "fast":
        return [fast_point(s) for s in scenarios]
    return _des_points(scenarios[0], qds)
