"""``flashplan drive from-fio``: a catalog drive derived from a user's fio results (calibration/own_drive.py).

    flashplan drive from-fio RESULTS.json [RESULTS2.json ...] --name NAME [--base DRIVE] [--capacity-tb TB]
                             [--derive-up-to-qd N] [--out DIR] [--des] [--des-ios N] [--json]

Prints each derived figure with the fio record (file, job, queue depth) it came from, the die layout the
model builds from them, and the points the derivation did not use, predicted by the drive (fast path, and
with ``--des`` the simulation) next to what fio measured. The drive is written to ``DIR``/drives.yaml
(``--out``, by default ``$FLASHPLAN_CATALOG_DIR``), where every command and the web app find it once
``FLASHPLAN_CATALOG_DIR`` points at that folder.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.console import Console
from rich.table import Table

from calibration.own_drive import METRICS, Check, DriveFromFio, derive, held_out_check, read_points, write_override
from models.catalog import load_catalog
from models.common import dumps_json
from models.loading import MAX_MEASUREMENT_BYTES, BadInput, read_bytes
from models.numbers import format_number as _fmt

DEFAULT_DES_IOS = 40_000
MIN_DES_IOS, MAX_DES_IOS = 2_000, 2_000_000


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:+.1f}%"


def _base(name: str | None) -> Any:
    if name is None:
        return None
    drives = load_catalog().drives
    if name not in drives:
        raise BadInput([("--base", f"unknown drive {name!r}; known drives: {', '.join(sorted(drives))}")])
    return drives[name]


def _options(args: argparse.Namespace) -> None:
    if not MIN_DES_IOS <= args.des_ios <= MAX_DES_IOS:
        raise BadInput([("--des-ios", f"must be {MIN_DES_IOS:,}..{MAX_DES_IOS:,}, got {args.des_ios}")])
    if args.derive_up_to_qd is not None and args.derive_up_to_qd < 1:
        raise BadInput([("--derive-up-to-qd", f"must be at least 1, got {args.derive_up_to_qd}")])


def summary(drive: DriveFromFio, checks: list[Check], written: str | None) -> dict[str, Any]:
    """The command's --json output."""
    return {
        "name": drive.name,
        "derived": [{"field": d.field, "value": d.value, "unit": d.unit, "from": d.source, "how": d.how} for d in drive.derived],
        "die_layout": {"dies": drive.layout.dies, "channels": drive.layout.channels, "die_read_us": drive.layout.die_read_us,
                       "controller_kiops": drive.layout.controller_kiops},
        "used": [p.label for p in drive.used],
        "held_out": [{"point": c.point.label, "qd": c.point.qd, "metric": c.metric, "measured": c.measured,
                      "fast": c.fast, "fast_error": c.fast_error, "des": c.des, "des_error": c.des_error} for c in checks],
        "notes": drive.notes,
        "written": written,
        "entry": drive.entry(),
    }


def worst_errors(checks: list[Check], des: bool) -> list[str]:
    """One line per metric: the largest |error| over the held-out points, fast path (and DES)."""
    lines = []
    for metric, label in METRICS:
        mine = [c for c in checks if c.metric == metric]
        fast = [abs(c.fast_error) for c in mine if c.fast_error is not None]
        if not fast:
            continue
        text = f"worst |error| {label}: fast path {100 * max(fast):.1f}% over {len(fast)} point(s)"
        sims = [abs(c.des_error) for c in mine if c.des_error is not None]
        if des and sims:
            text += f", DES {100 * max(sims):.1f}%"
        lines.append(text)
    return lines


def _print(drive: DriveFromFio, checks: list[Check], des: bool, console: Console) -> None:
    table = Table(title=f"{drive.name}: derived figures")
    for col in ("field", "value", "from", "how"):
        table.add_column(col, justify="right" if col == "value" else "left")
    for d in drive.derived:
        value = str(d.value) if isinstance(d.value, int) else _fmt(float(d.value))
        table.add_row(d.field, f"{value} {d.unit}".strip(), d.source, d.how)
    console.print(table)
    lay = drive.layout
    console.print(f"die layout (sim/route/flash.py die_layout): {lay.dies} dies on {lay.channels} channels, die read "
                  f"{lay.die_read_us:.2f} us, controller {lay.controller_us:g} us fixed, ceiling {lay.controller_kiops:,.1f} K "
                  f"commands/s", markup=False, highlight=False)
    if not checks:
        console.print("held-out check: every point was used by the derivation; give more points (a deeper queue depth, "
                      "or --derive-up-to-qd) to see how the drive predicts the rest", markup=False, highlight=False)
    else:
        check = Table(title="held-out points: measured vs predicted (one drive alone, no host stack)")
        for col in ("point", "metric", "measured", "fast path", "error", *(("DES", "error") if des else ())):
            check.add_column(col, justify="left" if col in ("point", "metric") else "right")
        labels = dict(METRICS)
        for c in checks:
            row = [c.point.label, labels[c.metric], _fmt(c.measured), _fmt(c.fast), _percent(c.fast_error)]
            if des:
                row += [_fmt(c.des), _percent(c.des_error)]
            check.add_row(*row)
        console.print(check)
        for line in worst_errors(checks, des):
            console.print(line, markup=False, highlight=False)
    for note in drive.notes:
        console.print(f"note: {note}", markup=False, highlight=False)


def cmd_drive_from_fio(args: argparse.Namespace, console: Console) -> int:
    _options(args)
    files = [(path, read_bytes(path, MAX_MEASUREMENT_BYTES)) for path in args.results]
    points = read_points(files)
    drive = derive(points, args.name, base=_base(args.base), base_name=args.base, capacity_tb=args.capacity_tb,
                   derive_up_to_qd=args.derive_up_to_qd)
    checks = held_out_check(drive, des_max_ios=args.des_ios if args.des else None)
    folder = args.out or os.environ.get("FLASHPLAN_CATALOG_DIR") or None
    written = str(write_override(drive, folder)) if folder else None
    if args.json:
        print(dumps_json(summary(drive, checks, written)))
        return 0
    _print(drive, checks, args.des, console)
    if written:
        console.print(f"wrote {drive.name} to {written}; with FLASHPLAN_CATALOG_DIR={os.path.dirname(written)} every command "
                      f"and the web app offer it (topology.drive: {drive.name})", markup=False, highlight=False)
    else:
        console.print("not written: give --out DIR (a FLASHPLAN_CATALOG_DIR folder) or set FLASHPLAN_CATALOG_DIR",
                      markup=False, highlight=False)
    return 0


def register(subparsers: Any) -> None:
    """Add ``flashplan drive from-fio``."""
    parser = subparsers.add_parser("drive", help="add a drive of your own to the catalog")
    kinds = parser.add_subparsers(dest="drive_kind", required=True, metavar="{from-fio}")
    p = kinds.add_parser("from-fio", help="derive a drive from fio JSON results (a queue-depth sweep or a few points)")
    p.add_argument("results", nargs="+", metavar="RESULTS.json", help="fio --output-format=json (or json+) files")
    p.add_argument("--name", required=True, help="catalog name of the drive (not a built-in drive's)")
    p.add_argument("--base", metavar="DRIVE", help="catalog drive giving what fio does not measure (link, capacity, bandwidths)")
    p.add_argument("--capacity-tb", type=float, metavar="TB", help="the drive's capacity (default: --base's)")
    p.add_argument("--derive-up-to-qd", type=int, metavar="N",
                   help="derive from the points at queue depth <= N only; the rest are held out for the check")
    p.add_argument("--out", metavar="DIR", help="FLASHPLAN_CATALOG_DIR folder to write drives.yaml into (default: $FLASHPLAN_CATALOG_DIR)")
    p.add_argument("--des", action="store_true", help="also simulate each held-out point (slower)")
    p.add_argument("--des-ios", type=int, default=DEFAULT_DES_IOS, metavar="N", help=f"I/Os per DES run (default {DEFAULT_DES_IOS:,})")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")
    p.set_defaults(func=cmd_drive_from_fio)
