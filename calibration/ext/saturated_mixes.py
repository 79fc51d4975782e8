"""``python -m calibration.ext.saturated_mixes [--max-ios N]``: closed 4 KiB random mixes at QD64 on one drive
under ``device_model: dies``, the fast path against the DES (calibration/ext/DIE_LEVEL.md,
"A closed mix whose programs saturate the dies"): IOPS, the read and write means and the p99, with the DES's die
utilization. The DES stops on an I/O count, so the table is the same on any machine.
"""

from __future__ import annotations

import argparse
import sys

from sim.analytic import evaluate
from sim.des.engine import simulate
from sim.plan.qd_sweep import des_run, device_scenario

DEVICES = ("ES5F", "P4510-4TB", "CM6-R-1.92TB", "ES4G")
READ_FRACTIONS = (0.05, 0.3, 0.7)
DEPTH = 64


def table(max_ios: int) -> str:
    """A Markdown table of every device and read fraction at ``DEPTH``."""
    lines = ["| case | dies busy (DES) | IOPS DES | IOPS fast | read DES | read fast | diff | write DES | write fast | diff "
             "| p99 DES | p99 fast | diff |", "|---|" + "---:|" * 12]
    for device in DEVICES:
        for rf in READ_FRACTIONS:
            sc = device_scenario(device, DEPTH, rf, 4, des_run(max_ios, 0.001), "dies")
            f, d = evaluate(sc), simulate(sc)
            read, write, p99 = d.read_latency_mean_us.value, d.write_latency_mean_us.value, d.latency_p99_us.value
            assert f.latency_p99_us is not None and p99 is not None
            lines.append(f"| {device} {rf:.0%} reads QD{DEPTH} | {d.utilization.get('drive0.dies', 0.0):.2f} | "
                         f"{d.iops.value:,.0f} | {f.iops:,.0f} | {read:.1f} | {f.read_latency_mean_us:.1f} | "
                         f"{f.read_latency_mean_us / read - 1:+.1%} | {write:.1f} | {f.write_latency_mean_us:.1f} | "
                         f"{f.write_latency_mean_us / write - 1:+.1%} | {p99:.0f} | {f.latency_p99_us:.0f} | "
                         f"{f.latency_p99_us / p99 - 1:+.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m calibration.ext.saturated_mixes", description=__doc__.splitlines()[0])
    parser.add_argument("--max-ios", type=int, default=30_000, help="DES I/Os per case (default 30,000)")
    args = parser.parse_args(argv)
    if args.max_ios < 1_000:
        print(f"saturated_mixes: --max-ios must be >= 1000, got {args.max_ios}", file=sys.stderr)
        return 2
    print(table(args.max_ios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
