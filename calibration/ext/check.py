"""``python -m calibration.ext.check [--max-ios N] [--markdown]``: EXT records against today's model.

For every EXT sweep point it prints the measured value next to the discrete-event prediction (a
short run that stops on an I/O count, so the table is the same on any machine) and the analytic
fast path's (``sim.analytic.evaluate``; means only, it has no percentiles): IOPS, mean latency and
p99 per queue depth, whichever the source published. ``--markdown`` prints the table committed as
``calibration/ext/BEFORE.md``. Records are loaded with ``calibration.ext.records`` and simulated with
``calibration.evaluate`` (one run per distinct scenario).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from calibration.evaluate import load_ref, metric_of, simulate_refs
from calibration.ext.records import EXT_FILE, EXT_SCENARIO_DIR, ExtRecord, load_ext_records
from models.result import Result

DEFAULT_MAX_IOS = 40_000
MIN_MAX_IOS, MAX_MAX_IOS = 2_000, 5_000_000
COLUMNS = (("iops", "IOPS"), ("latency_mean_us", "mean us"), ("latency_p99_us", "p99 us"), ("latency_p999_us", "p99.9 us"))
FAST_METRICS = {"iops": "iops", "latency_mean_us": "latency_mean_us"}


def run_budget(max_ios: int) -> dict[str, Any]:
    """A run that ends on ``max_ios`` completions (the CI target is out of reach, the wall budget generous)."""
    return {"run.max_ios": max_ios, "run.warmup_ios": min(5_000, max_ios // 5),
            "run.target_rel_ci": 1e-4, "run.max_wall_s": 3_600.0}


@dataclass
class Point:
    """One queue depth of one sweep: what was measured and what the model predicts."""

    sweep: str
    qd: int
    measured: dict[str, float] = field(default_factory=dict)
    tolerance: dict[str, float] = field(default_factory=dict)
    des: dict[str, float] = field(default_factory=dict)
    fast: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def _fast(record: ExtRecord, run: dict[str, Any]) -> dict[str, float]:
    from sim.analytic import evaluate

    assert record.scenario is not None
    fr = evaluate(load_ref(record.scenario, run, EXT_SCENARIO_DIR))
    return {metric: float(getattr(fr, attr)) for metric, attr in FAST_METRICS.items()}


def compare(records: Sequence[ExtRecord], max_ios: int = DEFAULT_MAX_IOS, device_model: str = "auto") -> list[Point]:
    """Simulate each record's scenario once (DES and fast path) and gather the points by sweep and QD
    (``device_model``: the scenarios' device model)."""
    run = run_budget(max_ios) | ({"device_model": device_model} if device_model != "auto" else {})
    refs = [r.scenario for r in records if r.scenario is not None]
    results = simulate_refs(refs, run, workers=1, base=EXT_SCENARIO_DIR)
    points: dict[tuple[str, int], Point] = {}
    for r in records:
        assert r.scenario is not None
        key = (r.sweep, r.conditions.total_qd)
        p = points.setdefault(key, Point(r.sweep, r.conditions.total_qd))
        p.measured[r.metric] = r.measured
        if r.tolerance is not None and r.tolerance.rel is not None:
            p.tolerance[r.metric] = r.tolerance.rel
        res = results.get(r.scenario.key())
        if isinstance(res, Result):
            for metric, _ in COLUMNS:
                p.des[metric] = metric_of(res, metric)[0]
            p.fast = _fast(r, run)
        else:
            p.error = f"{type(res).__name__}: {res}"
    return sorted(points.values(), key=lambda p: (p.sweep, p.qd))


def _num(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"


def _err(measured: float | None, predicted: float | None) -> str:
    if measured is None or predicted is None or not measured or not math.isfinite(predicted):
        return ""
    return f" ({(predicted - measured) / measured:+.0%})"


def table(points: Sequence[Point]) -> list[str]:
    """Markdown table lines: per sweep and QD, measured / DES / fast path for each published metric."""
    lines = ["| sweep | QD | metric | measured | DES | fast path | tolerance | DES within |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for p in points:
        if p.error:
            lines.append(f"| {p.sweep} | {p.qd} | - | - | {p.error} | - | - | - |")
            continue
        for metric, label in COLUMNS:
            m = p.measured.get(metric)
            d = p.des.get(metric)
            f = p.fast.get(metric)
            if m is None and metric not in ("iops", "latency_mean_us", "latency_p99_us"):
                continue
            tol = p.tolerance.get(metric)
            within = "" if m is None or tol is None or d is None else ("yes" if abs(d - m) <= tol * abs(m) else "no")
            lines.append(f"| {p.sweep} | {p.qd} | {label} | {_num(m)} | {_num(d)}{_err(m, d)} | {_num(f)}{_err(m, f)} | "
                         f"{'' if tol is None else f'{tol:.0%}'} | {within} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m calibration.ext.check", description=__doc__.splitlines()[0])
    parser.add_argument("--max-ios", type=int, default=DEFAULT_MAX_IOS,
                        help=f"DES completions per scenario, {MIN_MAX_IOS}..{MAX_MAX_IOS} (default {DEFAULT_MAX_IOS})")
    parser.add_argument("--markdown", action="store_true", help="print the BEFORE.md document")
    parser.add_argument("--device-model", choices=("auto", "pooled", "dies"), default="auto",
                        help="the EXT scenarios' device model (default auto, the scenarios' default: dies for drives)")
    args = parser.parse_args(argv)
    if not MIN_MAX_IOS <= args.max_ios <= MAX_MAX_IOS:
        print(f"error: --max-ios must be in {MIN_MAX_IOS}..{MAX_MAX_IOS}, got {args.max_ios}", file=sys.stderr)
        return 2
    try:
        records = load_ext_records()
    except (OSError, ValueError) as exc:
        print(f"error: {EXT_FILE}: {exc}", file=sys.stderr)
        return 2
    points = compare(records, args.max_ios, args.device_model)
    lines = table(points)
    if args.markdown:
        cmd = "python -m calibration.ext.check --markdown" + (f" --max-ios {args.max_ios}" if args.max_ios != DEFAULT_MAX_IOS else "")
        head = [
            "# EXT records against today's device model (before the die-level model)",
            "",
            f"Generated {dt.date.today().isoformat()} with `{cmd}` (DES: one run per scenario, "
            f"{args.max_ios:,} completions after {run_budget(args.max_ios)['run.warmup_ios']:,} warm-up, seed 1; "
            "fast path: `sim.analytic.evaluate`, means only). Relative error in brackets. '-' = not published "
            "(measured) or not computed (the fast path has no percentiles).",
            "",
        ]
        print("\n".join(head + lines))
    else:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
