"""``flashplan qd-sweep DRIVE [--qd 1,2,4,...] [--solver fast|des] [--read-fraction F] [--block-kib B] [--max-ios N] [--json]``.

A queue-depth sweep of one catalog drive or DIMM alone (``sim.plan.qd_sweep``): IOPS, mean, p50, p99
and p99.9 per queue depth, each row with its validity, and the published EXT points measured on
that device at the same mix (``calibration.ext.published``). ``--qd`` takes a comma list
(``1,4,16``) or a doubling range (``1..256``). ``--json`` is strict JSON. Bad input exits 2 naming
the option.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from models.common import dumps_json
from models.numbers import format_number as _fmt
from sim.errors import EXIT_OK, BadInput

OPTION_OF = {"drive": "DRIVE", "qd": "--qd", "solver": "--solver", "read_fraction": "--read-fraction",
             "block_size_kib": "--block-kib", "max_ios": "--max-ios", "device_model": "--device-model"}
"""The sweep function's argument names -> the command line's words for them."""
MAX_RANGE_POINTS = 32
DEFAULT_QD = "1..256"
VALIDITY_WORDS = {"precise": "precise", "cut_short": "CUT SHORT", "unstable": "UNSTABLE", "unknown": "UNKNOWN"}


def parse_depths(text: str) -> list[int]:
    """``1,2,8`` or ``1..256`` (doubling from the first to at most the last); BadInput naming --qd."""
    text = text.strip()
    try:
        if ".." in text:
            lo_text, hi_text = text.split("..", 1)
            lo, hi = int(lo_text), int(hi_text)
            if lo < 1 or hi < lo:
                raise BadInput([("--qd", f"a range A..B needs 1 <= A <= B, got {text!r}")])
            depths = [lo]
            while depths[-1] * 2 <= hi and len(depths) <= MAX_RANGE_POINTS:
                depths.append(depths[-1] * 2)
            return depths
        return [int(part) for part in text.split(",")]
    except ValueError:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise BadInput([("--qd", f"give integers separated by commas (1,4,16) or a range (1..256), got {shown!r}")]) from None


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("qd-sweep", help="IOPS and latency of one catalog drive or DIMM against queue depth, "
                                               "with the published points where an EXT record exists")
    p.add_argument("drive", help="catalog drive or DIMM model (see `flashplan catalog`)")
    p.add_argument("--qd", default=DEFAULT_QD, help=f"queue depths: 1,2,8 or a doubling range A..B (default {DEFAULT_QD})")
    p.add_argument("--solver", default="fast", help="fast (analytic fast path, default) or des (discrete-event simulation)")
    p.add_argument("--read-fraction", type=float, default=1.0, help="share of reads, 0..1 (default 1.0)")
    p.add_argument("--block-kib", type=float, default=4.0, help="I/O size in KiB (default 4)")
    p.add_argument("--max-ios", type=int, default=None, help="DES completions per point (default 40,000)")
    p.add_argument("--device-model", default="auto",
                   help="flash device model: auto (default: dies for NVMe drives, pooled for memory-channel DIMMs), dies "
                        "(addressed NAND dies behind a controller) or pooled (identical read units)")
    p.add_argument("--json", action="store_true", help="print the rows and the published points as JSON")
    p.set_defaults(func=cmd_qd_sweep)


def _row_cells(point: Any) -> list[str]:
    def us(v: float | None) -> str:
        return "-" if v is None else _fmt(v)

    tail = "" if point.tail != "estimate" else " (est.)"
    return [str(point.qd), _fmt(point.iops), us(point.latency_mean_us), us(point.latency_p50_us),
            us(point.latency_p99_us) + tail, us(point.latency_p999_us) + (tail if point.latency_p999_us is not None else ""),
            VALIDITY_WORDS.get(point.validity, point.validity)]


def _print(args: argparse.Namespace, points: list[Any], published: list[Any], out: Console) -> None:
    table = Table(title=f"{args.drive}: {args.block_kib:g} KiB random, {args.read_fraction:.0%} read, solver {args.solver}",
                  title_justify="left")
    for col in ("QD", "IOPS", "mean us", "p50 us", "p99 us", "p99.9 us", "validity"):
        table.add_column(col, justify="left" if col == "validity" else "right")
    for p in points:
        table.add_row(*_row_cells(p))
    out.print(table)
    if any(p.validity != "precise" for p in points):
        out.print("CUT SHORT / UNSTABLE / UNKNOWN rows are not final: their figures are indicative (raise --max-ios)", markup=False)
    if any(p.tail == "estimate" for p in points):
        from sim.plan.qd_sweep import TAIL_ESTIMATES, resolved_device_model

        out.print(f"(est.) = {TAIL_ESTIMATES[resolved_device_model(args.drive, args.device_model)]} (the planner screens "
                  "with it); run --solver des for measured tails", markup=False)
    for pp in published:
        out.print(f"published: QD {pp.qd} {pp.metric} = {_fmt(pp.value)} ({pp.sweep}; record {pp.record})",
                  markup=False, highlight=False)


def cmd_qd_sweep(args: argparse.Namespace, out: Console) -> int:
    from calibration.ext.published import published_points
    from sim.plan.qd_sweep import DEFAULT_MAX_IOS, device_section, qd_sweep

    try:
        depths = parse_depths(args.qd)
        section = device_section(args.drive)
        points = qd_sweep(args.drive, depths, solver=args.solver, read_fraction=args.read_fraction,
                          block_size_kib=args.block_kib, max_ios=DEFAULT_MAX_IOS if args.max_ios is None else args.max_ios,
                          device_model=args.device_model)
    except BadInput as exc:
        raise BadInput([(OPTION_OF.get(f, f), m) for f, m in exc.problems]) from None
    published = published_points(args.drive, args.read_fraction, args.block_kib)
    if args.json:
        print(dumps_json({
            "device": args.drive, "catalog_section": section, "solver": args.solver,
            "workload": {"kind": "closed", "jobs": 1, "access": "random", "read_fraction": args.read_fraction,
                         "block_size_kib": args.block_kib},
            "points": [p.as_dict() for p in points], "published": [p.as_dict() for p in published]}))
    else:
        _print(args, points, published, out)
    return EXIT_OK
