"""``python -m calibration.ext.write_loops [--max-ios N] [--seed S] [CASE ...]``: closed write loops over several
drives under ``device_model: dies``, the fast path's p99 / p99.9 against the DES's.

Each case is examples/s2_ibmi_8x4_mirrored.yaml (24 jobs x QD4 of 4 KiB random writes on ES5F drives, which
saturate the drives' dies) with its layout, drive count or jobs changed (``CASES``). Such a loop fills the drives'
write caches; the waiting writes gather at the one drive whose cache is full (``sim.analytic.dies.WriteLaw.gather``).
The DES stops on an I/O count, so the table is the same on any machine; calibration/ext/die_solvers_writes.md
("Gathered waits") gives it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from models import load_scenario
from models.scenario import Scenario
from sim.analytic import evaluate
from sim.des.engine import simulate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "s2_ibmi_8x4_mirrored.yaml"

CASES: dict[str, dict[str, Any]] = {
    "8 mirrored": {},
    "8 mirrored, 8 jobs": {"workload": {"jobs": 8}},
    "8 mirrored, 12 jobs": {"workload": {"jobs": 12}},
    "4 RAID-0": {"topology": {"layout": "raid0", "drives": 4, "namespaces": {"per_drive": 1}}},
    "4 RAID-10": {"topology": {"layout": "raid10", "drives": 4, "namespaces": {"per_drive": 1}}},
    "2 RAID-1": {"topology": {"layout": "raid1", "drives": 2, "namespaces": {"per_drive": 1}}},
    "2 mirrored": {"topology": {"drives": 2}},
    "8 RAID-0, 30% reads": {"topology": {"layout": "raid0"}, "workload": {"read_fraction": 0.3}},
    "8 P4510 mirrored": {"topology": {"drive": "P4510-4TB", "namespaces": {"per_drive": 1}}},
    "4 RAID-0, 64 KiB sequential": {"topology": {"layout": "raid0", "drives": 4, "namespaces": {"per_drive": 1}},
                                    "workload": {"access": "sequential", "block_size_kib": 64}},
    "2 P4510 RAID-0, 16 KiB sequential, 2 jobs": {
        "topology": {"drive": "P4510-4TB", "layout": "raid0", "drives": 2, "namespaces": {"per_drive": 1}},
        "workload": {"jobs": 2, "access": "sequential", "block_size_kib": 16}},
}
"""Changes to examples/s2_ibmi_8x4_mirrored.yaml, by case (nested fields merged into the example's)."""


def _merged(base: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in change.items():
        out[key] = _merged(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def scenario(case: str, max_ios: int, seed: int = 1) -> Scenario:
    """The example with ``CASES[case]`` under ``dies``, stopped by ``max_ios`` completions (a tenth warm-up)."""
    data = load_scenario(EXAMPLE).model_dump(mode="json", exclude_none=True)
    data = _merged(data, CASES[case])
    data["device_model"] = "dies"
    data["run"] = {**data["run"], "seed": seed, "max_ios": max_ios, "warmup_ios": max(1_000, max_ios // 10),
                   "target_rel_ci": 1e-9, "max_wall_s": 86_400.0}
    return Scenario.model_validate(data)


def table(cases: Sequence[str], max_ios: int, seed: int = 1) -> str:
    """A Markdown table: per case the DES's and the fast path's IOPS, mean, p99 and p99.9, with the differences."""
    lines = ["| case | IOPS DES | IOPS fast | mean DES | mean fast | p50 DES | p99 DES | p99 fast | diff "
             "| p99.9 DES | p99.9 fast | diff |", "|---|" + "---:|" * 11]
    for case in cases:
        sc = scenario(case, max_ios, seed)
        fast, des = evaluate(sc), simulate(sc)
        p99, p999 = des.latency_p99_us.value, des.latency_p999_us.value
        f99, f999 = fast.latency_p99_us, fast.latency_p999_us
        assert p99 is not None and p999 is not None and f99 is not None and f999 is not None
        lines.append(f"| {case} | {des.iops.value:,.0f} | {fast.iops:,.0f} | {des.latency_mean_us.value:.1f} | "
                     f"{fast.latency_mean_us:.1f} | {des.latency_p50_us.value:.0f} | {p99:.1f} | {f99:.1f} | "
                     f"{f99 / p99 - 1:+.1%} | {p999:.1f} | {f999:.1f} | {f999 / p999 - 1:+.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m calibration.ext.write_loops", description=__doc__.splitlines()[0])
    parser.add_argument("--max-ios", type=int, default=150_000, help="DES I/Os per case (default 150,000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("cases", nargs="*", metavar="CASE", help=f"cases (default all): {', '.join(CASES)}")
    args = parser.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES]
    if unknown or args.max_ios < 1_000:
        print(f"write_loops: cases must be among {list(CASES)} (got {unknown}) and --max-ios >= 1000 "
              f"(got {args.max_ios})", file=sys.stderr)
        return 2
    print(table(args.cases or list(CASES), args.max_ios, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
