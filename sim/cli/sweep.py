"""``flashplan sweep FILE [--out results.parquet|.csv] [--scheduler tcp://HOST:PORT] [--workers N] [--resume]``.

Runs every point of a sweep file (see ``sim.plan.sweep``) with a progress bar on stderr, writes
the results (one row per run) to ``--out`` and prints a summary table. Runs go to local
processes (``--workers``, default one per core) or to a Dask cluster (``--scheduler``).
A failed point is a row with ``status`` "invalid" or "error"; the sweep goes on and exits 0.
"""

from __future__ import annotations

import argparse
import math
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    import pandas as pd

SHOWN_ROWS = 60
SUMMARY_METRICS = (("iops", "IOPS"), ("mbps", "MB/s"), ("latency_mean_us", "mean us"), ("latency_p99_us", "p99 us"))


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        a = abs(value)
        return f"{value:,.0f}" if a >= 1e4 else f"{value:,.1f}" if a >= 100 else f"{value:.3g}"
    return str(value)


def _short_names(factors: list[str]) -> dict[str, str]:
    """Column headers for factors: the last part of each dotted path, or the whole path where two would clash."""
    last = [f.rsplit(".", 1)[-1] for f in factors]
    return {f: (short if last.count(short) == 1 else f) for f, short in zip(factors, last, strict=True)}


def summary_table(frame: pd.DataFrame, factors: list[str], title: str) -> Table:
    """The first rows of a sweep's results: factors, headline metrics with their relative 95% CI, bottleneck or error."""
    table = Table(title=title, title_justify="left", caption="± is the 95% CI half-width relative to the value", caption_justify="left")
    show_replication = bool(len(frame)) and frame["replication"].max() > 0
    names = _short_names(factors)
    table.add_column("point", justify="right")
    if show_replication:
        table.add_column("rep", justify="right")
    for f in factors:
        table.add_column(names[f], justify="right")
    for _, label in SUMMARY_METRICS:
        table.add_column(label, justify="right", no_wrap=True)
    table.add_column("validity")
    table.add_column("bottleneck / error", overflow="fold")
    for _, row in frame.head(SHOWN_ROWS).iterrows():
        cells = [str(row["point"]), *([str(row["replication"])] if show_replication else []), *(_cell(row[f]) for f in factors)]
        ok = row["status"] == "ok"
        for key, _ in SUMMARY_METRICS:
            value, half = row[key], (row[f"{key}_ci95_hi"] - row[f"{key}_ci95_lo"]) / 2
            cells.append(f"{_cell(value)} ±{half / abs(value):.1%}" if ok and value else _cell(value) if ok else "-")
        cells.append(str(row.get("validity") or "-") if ok else "-")
        unstable = ok and row.get("validity") == "unstable"
        cells.append(f"[red]UNSTABLE[/]: {row['bottleneck']} saturated" if unstable else str(row["bottleneck"]) if ok
                     else f"[red]{row['status']}[/]: {row['error']}")
        table.add_row(*cells)
    return table


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C while the sweep runs, so the worker pool and the cluster's runs are cancelled."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_sweep(args: argparse.Namespace, out: Console) -> int:
    from models.scenario import ScenarioFileError, parse_override
    from sim.errors import BadInput
    from sim.plan.sweep import SweepInputError, journal_path, load_sweep, read_journal, run_sweep

    err = Console(stderr=True, highlight=False)
    try:
        overrides = dict(parse_override(s) for s in args.set or [])
        spec = load_sweep(args.file, overrides)
        if args.out and not args.resume:
            earlier = read_journal(journal_path(args.out))
            if earlier:
                err.print(f"note: starting afresh; {len(earlier)} runs journalled by an interrupted sweep are discarded "
                          "(use --resume to keep them)", markup=False)
        with _sigterm_as_interrupt():
            frame = run_sweep(spec, out=args.out, scheduler=args.scheduler, workers=args.workers, resume=args.resume,
                              progress=not args.no_progress)
    except KeyboardInterrupt:
        if args.out and journal_path(args.out).exists():
            err.print(f"the finished runs are journalled in {journal_path(args.out)}: rerun with --resume to go on", markup=False)
        raise
    except ScenarioFileError as exc:
        raise BadInput(exc.problems) from None
    except SweepInputError as exc:
        raise BadInput(exc.problems) from None
    factors = list(spec.factors)
    title = spec.name or Path(args.file).stem
    out.print(summary_table(frame, factors, title))
    if len(frame) > SHOWN_ROWS:
        out.print(f"... {len(frame) - SHOWN_ROWS} more rows" + (f" in {args.out}" if args.out else ""))
    failed = int((frame["status"] != "ok").sum())
    where = f"; wrote {args.out}" if args.out else ""
    unstable = int((frame["validity"] == "unstable").sum()) if "validity" in frame else 0
    out.print(f"{len(frame)} runs ({frame.attrs['ran']} run now, {frame.attrs['reused']} reused from an earlier run), "
              f"{failed} failed, {unstable} unstable (offered load at or past a component's capacity: "
              f"their latency means nothing), {frame.attrs['wall_seconds']:.1f} s{where}")
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("sweep", help="run a sweep file: a base scenario over factors (grid or zip), with replications")
    p.add_argument("file", help="sweep file (YAML, TOML or JSON)")
    p.add_argument("--out", metavar="results.parquet|.csv", help="write one row per run; journalled as each run finishes")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the points on this Dask scheduler's workers")
    p.add_argument("--workers", type=int, metavar="N", help="local worker processes (default: one per core; 1 = this process)")
    p.add_argument("--resume", action="store_true", help="reuse the runs already journalled or written to --out")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a base-scenario field at every point (repeatable)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)
