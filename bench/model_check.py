"""Check that an engine change kept the model: every metric of every example inside the 95% interval of a
run recorded before the change, at the same seed and I/O budget.

Byte-identical results are not required when an engine change only reorders random draws (a station that
draws a service time when a job arrives rather than when it starts): the runs then differ as two seeds of
one model do, and each metric of the new run must lie inside the old run's 95% interval (a 5% miss rate per
metric is what two honest runs give at worst; a changed model misses systematically). Utilizations have
no interval: they must agree to ``UTIL_TOL`` (absolute).

    python -m bench.model_check record -o /tmp/before.json [--max-ios 60000]
    python -m bench.model_check compare /tmp/before.json      # exit 1 when a metric left its interval

The cases: every example (examples/*.yaml), the calibration scenarios in ``SCENARIOS``, plus bench/check_identical.py's variants that reach mechanisms
the files alone do not (reads and writes mixed, RAID-5, sequential, a write-through SAN cache ...).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from bench.check_identical import EXTRA

ROOT = Path(__file__).resolve().parent.parent
REL_TOL = 1e-9
SCENARIOS = ("s4_paging",)
"""Calibration scenarios (calibration/scenarios/) run as cases too: those an engine change was made for."""
UTIL_TOL = 0.02
"""Largest utilization difference (absolute) accepted between two runs of one model."""


def cases() -> list[tuple[str, Path, dict[str, Any]]]:
    out: list[tuple[str, Path, dict[str, Any]]] = [(p.stem, p, {}) for p in sorted((ROOT / "examples").glob("*.yaml"))]
    out += [(name, ROOT / path, overrides) for name, (path, overrides) in sorted(EXTRA.items())]
    out += [(p.stem, p, {}) for p in (ROOT / "calibration" / "scenarios" / f"{name}.yaml" for name in SCENARIOS)]
    return out


def run_case(path: Path, overrides: dict[str, Any], max_ios: int) -> dict[str, Any]:
    from models import load_scenario, with_overrides
    from sim.des.engine import simulate

    scenario = load_scenario(path)
    warm = min(scenario.run.warmup_ios, max_ios // 5)
    scenario = with_overrides(scenario, {**overrides, "run.max_ios": max_ios, "run.warmup_ios": warm,
                                         "run.target_rel_ci": 1e-9, "run.max_wall_s": 86_400.0})
    summary: dict[str, Any] = simulate(scenario).summary()
    return summary


def record(max_ios: int, only: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"max_ios": max_ios, "cases": {}}
    for name, path, overrides in cases():
        if only and not any(s in name for s in only):
            continue
        print(f"  {name}", file=sys.stderr, flush=True)
        out["cases"][name] = run_case(path, overrides, max_ios)
    return out


def _metrics(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every metric with an interval (the run's, and each workload's as ``workload/name/key``)."""
    out = {k: v for k, v in summary.items() if isinstance(v, dict) and "ci95" in v}
    for wname, wl in (summary.get("workloads") or {}).items():
        out.update({f"workload/{wname}/{k}": v for k, v in wl.items() if isinstance(v, dict) and "ci95" in v})
    return out


def compare_case(before: dict[str, Any], after: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(metrics checked, metrics outside the old interval, notes)."""
    checked, misses, notes = 0, 0, []
    b_m, a_m = _metrics(before), _metrics(after)
    for key, bm in b_m.items():
        am = a_m.get(key)
        if am is None or bm["value"] is None or am["value"] is None or bm["ci95"] is None:
            continue
        lo, hi = bm["ci95"]
        slack = REL_TOL * max(abs(lo), abs(hi))  # a constant metric (an interval of width 0) may differ in its last bits
        checked += 1
        if not lo - slack <= am["value"] <= hi + slack:
            misses += 1
            notes.append(f"{key}: {am['value']:.6g} outside [{lo:.6g}, {hi:.6g}] (before {bm['value']:.6g})")
    bu, au = before.get("utilization", {}), after.get("utilization", {})
    for key, u in bu.items():
        if key in au and abs(au[key] - u) > UTIL_TOL:
            notes.append(f"utilization {key}: {au[key]:.4f} vs {u:.4f}")
            misses += 1
    if set(bu) != set(au):
        notes.append(f"utilization keys differ: {sorted(set(bu) ^ set(au))}")
        misses += 1
    return checked, misses, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.model_check", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record", help="run every case and write the results")
    rec.add_argument("-o", "--output", type=Path, required=True)
    rec.add_argument("--max-ios", type=int, default=60_000)
    rec.add_argument("--only", nargs="+", default=[])
    cmp_ = sub.add_parser("compare", help="rerun every recorded case and check each metric against its old interval")
    cmp_.add_argument("baseline", type=Path)
    cmp_.add_argument("--only", nargs="+", default=[])
    args = parser.parse_args(argv)
    if args.cmd == "record":
        args.output.write_text(json.dumps(record(args.max_ios, args.only), allow_nan=False))
        return 0
    base = json.loads(args.baseline.read_text())
    after = record(int(base["max_ios"]), args.only or [])
    total_checked, total_misses, failed = 0, 0, 0
    for name, b in base["cases"].items():
        if name not in after["cases"]:
            continue
        checked, misses, notes = compare_case(b, after["cases"][name])
        total_checked += checked
        total_misses += misses
        status = "ok" if not misses else f"{misses} outside"
        print(f"{name}: {checked} metrics, {status}")
        for note in notes:
            print(f"    {note}")
        failed += bool(misses)
    rate = total_misses / total_checked if total_checked else math.nan
    print(f"{total_checked} metrics checked, {total_misses} outside the old 95% interval ({rate:.1%}); "
          f"{failed} case(s) with a miss")
    return 1 if total_misses else 0


if __name__ == "__main__":
    sys.exit(main())
