"""``flashplan calibrate [--json] [--only S1..S5|EXT|FAULTS] [--fit] [--quick] [--strict] [--parity FILE] [--jobs N] [--results FILE]
[--full-budget]``.

Runs every calibration record, prints record / measured / predicted (95% CI) / relative
error / tolerance / pass and a per-system summary, writes the parity plot and
calibration/results/latest.json, and exits 1 when any record is outside its tolerance, except
a record whose source is contradicted by another source's record that holds (both are kept and
documented, ``conflicts_with``; the model cannot meet both): that one is shown as settled by
the conflict; and a declared known gap (``known_gap``: the hypotheses tried with their figures and
the data that would settle it). ``--strict`` exits 1 on those too, and on a known-gap declaration
whose record is now within tolerance (always reported: remove the declaration).
A full run screens (``--full-budget`` does not, and never writes latest.json): every scenario first runs with
8 batches at least (calibration.evaluate.SCREEN_RUN); a record whose 95% interval lies wholly inside or outside
its tolerance keeps that value, the scenarios of the others run again at the full budget (``budget`` of a row; with
``--jobs`` above 1 a screen run is carried on from where it stopped, ``calibration.evaluate._screened_in_pool``).
``--fit [--fit-steps N]`` first refits the free parameters (calibration/fit.py) and saves them to
models/catalog/fitted.yaml.
The EXT system (published queue-depth sweeps of NVMe drives, calibration/ext/ext.yaml) runs with S1-S5 and alone with
``--only EXT``: its records are checked, never fitted, and run under the device model their file names (``dies``, the
mechanism they check; ``--device-model`` forces another for every record).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import Any, cast, get_args

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from calibration.evaluate import FULL_RUN, QUICK_RUN, SCREEN_RUN, Schedule, evaluate, stale_known_gap, with_conflict_partners
from calibration.records import EXT_SYSTEM, SYSTEMS, Record, load_records
from calibration.report import summary, write_parity, write_results, write_run_info
from models.common import dumps_json
from models.numbers import format_number as _fmt

RESULTS_DIR = Path(__file__).resolve().parent / "results"


FIT_STEPS = 4
MAX_FIT_STEPS = 50
MAX_JOBS = 256


def register(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="run the calibration records against the seeds' measurements")
    p.add_argument("--only", choices=(*SYSTEMS, EXT_SYSTEM, "FAULTS"),
                   help="one system's records (EXT: the published queue-depth sweeps, calibration/ext/ext.yaml, under "
                        "the die-level device model; FAULTS: the failure / rebuild records, calibration/faults/check.py)")
    p.add_argument("--json", action="store_true", help="print the records as a JSON list")
    p.add_argument("--fit", action="store_true", help="refit the free parameters first (slow: minutes)")
    p.add_argument("--quick", action="store_true", help="only the CI subset, with +-4%% run precision")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 also when a record is outside its tolerance because its source contradicts another "
                        "source whose record holds (documented conflicts), or is a declared known gap, or is declared "
                        "one but now holds")
    p.add_argument("--parity", type=Path, default=RESULTS_DIR / "parity.html", help="where to write the parity plot")
    p.add_argument("--jobs", dest="jobs", type=int, default=None, metavar="N",
                   help="simulation processes (default: the cores available; 1 = in this process); every record's value "
                        "is the same for any N (runs stop on precision or I/O counts)")
    p.add_argument("--workers", dest="workers", type=int, default=None, metavar="N",
                   help="the older name of --jobs (kept for scripts; an error names the option given)")
    p.add_argument("--full-budget", action="store_true",
                   help="run every scenario at the full budget (20 batches at least); by default a first pass with 8 "
                        "batches at least settles every record whose 95%% interval lies wholly inside or outside its "
                        "tolerance, and only the scenarios of the others run again at the full budget")
    p.add_argument("--results", type=Path, default=None, metavar="FILE",
                   help="also write the results JSON (latest.json's format) here, for any subset (--only, --quick)")
    p.add_argument("--fit-steps", type=int, default=FIT_STEPS,
                   help=f"with --fit: least-squares steps per system, 1..{MAX_FIT_STEPS} (default {FIT_STEPS}); each step "
                        "simulates the system's records once per free parameter, plus once")
    p.add_argument("--device-model", choices=("auto", "pooled", "dies"), default=None,
                   help="force every record's scenario to this flash device model (default: as the records "
                        "say: S1-S5 as their scenarios, auto (dies for NVMe drives, pooled for the eXFlash DIMMs); EXT "
                        "as its file, dies); a forced run never writes latest.json (use --results)")
    p.set_defaults(func=cmd_calibrate)


SCENARIO_CPU_S = "scenario_cpu_seconds"
"""latest.run.json's CPU seconds per distinct scenario: the next run starts the longest first (``Schedule``)."""


def _schedule(run_info: Path) -> Schedule:
    """The previous full run's CPU seconds per scenario as the order hints (none when there is no readable record)."""
    try:
        hints = json.loads(run_info.read_text(encoding="utf-8")).get(SCENARIO_CPU_S, {})
    except (OSError, ValueError, AttributeError):
        hints = {}
    if not isinstance(hints, dict):
        hints = {}
    return Schedule(hints={str(k): float(v) for k, v in hints.items() if isinstance(v, int | float)})


def _tol(row: dict[str, Any]) -> str:
    if row["tolerance_kind"] == "bound":
        return str(row["tolerance"])
    if row["tolerance_kind"] == "rel":
        return f"±{row['tolerance']:.0%}"
    if row["tolerance_kind"] == "none":
        return "-"
    return f"±{row['tolerance']:g} pt"


def _run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run budget of every record's scenario, with a forced device model (``--device-model``) when one is given."""
    run = QUICK_RUN if args.quick else FULL_RUN
    return run | {"device_model": args.device_model} if args.device_model is not None else run


def gate_records(only: str | None, device_model: str | None = None) -> list[Record]:
    """The records ``flashplan calibrate`` runs: S1-S5 (calibration/data) and EXT (calibration/ext/ext.yaml, each
    scenario under the file's device model, or ``device_model`` when forced), or ``only`` one system's; ids unique
    across the two (BadInput naming the id)."""
    from calibration.ext.records import gate_records as ext_records
    from models.scenario import DeviceModel
    from sim.errors import BadInput

    records = [] if only == EXT_SYSTEM else load_records(only=only)
    if only in (None, EXT_SYSTEM):
        forced = cast(DeviceModel, device_model) if device_model in get_args(DeviceModel) else None
        ext = ext_records(device_model=forced)
        clash = sorted({r.id for r in records} & {r.id for r in ext})
        if clash:
            raise BadInput([("ext.yaml: id", f"{clash[0]!r} is also a record of calibration/data")])
        records += ext
    return records


def _check_options(args: argparse.Namespace) -> None:
    """Bad --jobs, --workers or --fit-steps -> BadInput naming each; --workers stands for --jobs when alone."""
    from sim.errors import BadInput

    problems = []
    if args.jobs is not None and not 1 <= args.jobs <= MAX_JOBS:
        problems.append(("--jobs", f"processes: must be 1 .. {MAX_JOBS}, got {args.jobs}"))
    if args.workers is not None:
        if args.workers < 1:
            problems.append(("--workers", f"must be at least 1, got {args.workers}"))
        elif args.workers > MAX_JOBS:
            problems.append(("--workers", f"must be at most {MAX_JOBS}, got {args.workers}"))
        elif args.jobs is None:
            args.jobs = args.workers
    if not 1 <= args.fit_steps <= MAX_FIT_STEPS:
        problems.append(("--fit-steps", f"must be 1 .. {MAX_FIT_STEPS}, got {args.fit_steps}"))
    if problems:
        raise BadInput(problems)


def _print_tables(rows: list[dict[str, Any]], out: Console) -> None:
    """The records table and the per-system summary."""
    table = Table(title=f"calibration records ({len(rows)})", title_justify="left")
    for col in ("record", "measured", "predicted (95% CI)", "rel. error", "tolerance", "pass"):
        table.add_column(col, justify="left" if col in ("record", "pass") else "right")
    for r in rows:
        ci = f" ({_fmt(r['ci95'][0])}..{_fmt(r['ci95'][1])})" if r["ci95"] else ""
        err_txt = "-" if r["rel_error"] is None else f"{r['rel_error']:+.1%}"
        table.add_row(r["id"], f"{_fmt(r['measured'])} {r['unit']}", f"{_fmt(r['predicted'])}{ci}", err_txt, _tol(r),
                      _verdict(r))
    out.print(table)
    s = Table(title="per system", title_justify="left")
    for col in ("system", "records", "within tolerance", "settled by a conflict", "known gap", "outside", "median |rel. error|",
                "max |rel. error|", "bounds held"):
        s.add_column(col, justify="right")
    for row in summary(rows):
        s.add_row(row["system"], str(row["records"]), str(row["within"]), str(row["settled_by_conflict"]), str(row["known_gap"]),
                  str(row["outside"]),
                  "-" if row["median_abs_rel_error"] is None else f"{row['median_abs_rel_error']:.1%}",
                  "-" if row["max_abs_rel_error"] is None else f"{row['max_abs_rel_error']:.1%}",
                  f"{row['bounds_held']}/{row['bounds']}")
    out.print(s)


def cmd_calibrate(args: argparse.Namespace, out: Console) -> int:
    from sim.errors import EXIT_FAILURE, EXIT_OK, BadInput

    _check_options(args)
    if args.only == "FAULTS":  # checked, never fitted: their own check (calibration/faults/check.py)
        if args.fit:
            raise BadInput([("--fit", "the FAULTS records are checked, never fitted")])
        return _calibrate_faults(args, out)
    if args.only == EXT_SYSTEM and args.fit:
        raise BadInput([("--fit", "the EXT records are checked, never fitted")])
    records = gate_records(args.only, args.device_model)
    if args.quick:
        records = with_conflict_partners([r for r in records if r.ci], records)
    workers = args.jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    err = Console(stderr=True)
    if args.fit:
        from calibration.fit import fit, save

        values = fit(load_records(), workers=workers, max_evals=args.fit_steps, only=args.only,
                     log=lambda m: err.print(m, markup=False))
        save(values, load_records())
        err.print(f"fitted parameters written to models/catalog/fitted.yaml ({len(values)} parameters)")
        from models.catalog import _load

        _load.cache_clear()
    t0 = time.perf_counter()
    with Progress(TextColumn("calibrating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err, transient=True, disable=args.json or not err.is_terminal) as progress:
        n = len({ref.key() for r in records for ref in r.scenarios()})
        task = progress.add_task("scenarios", total=n)
        schedule = _schedule(RESULTS_DIR / "latest.run.json")

        def done(_key: str) -> None:  # the screened second pass adds runs: the total grows with them
            state = progress.tasks[0]
            if state.total is not None and state.completed >= state.total:
                progress.update(task, total=state.completed + 1)
            progress.advance(task)

        outcomes = evaluate(records, run=_run_settings(args), workers=workers, on_done=done, schedule=schedule,
                            screen=None if args.full_budget or args.quick else SCREEN_RUN)
    wall = time.perf_counter() - t0
    rows = [o.as_dict() for o in outcomes]
    meta: dict[str, Any] = {"quick": args.quick, "only": args.only,
                            "screen": None if args.full_budget or args.quick else SCREEN_RUN} | (
        {"device_model": args.device_model} if args.device_model is not None else {})
    if not args.quick and not args.only and args.device_model is None and not args.full_budget:
        # latest.json holds only what the commit determines (byte-identical run to run); when and how long beside it
        write_results(rows, RESULTS_DIR / "latest.json", meta)
        write_run_info(RESULTS_DIR / "latest.run.json",
                       {"run_at": dt.datetime.now().isoformat(timespec="seconds"), "wall_seconds": round(wall, 1), "jobs": workers,
                        SCENARIO_CPU_S: {k: round(v, 2) for k, v in sorted(schedule.costs.items())}})
    if args.results is not None:
        write_results(rows, args.results, meta)
    parity = write_parity(rows, args.parity)
    if args.json:
        keys = ("id", "system", "source", "metric", "unit", "measured", "predicted", "ci95", "rel_error", "tolerance", "within",
                "status", "settled_by", "known_gap")
        print(dumps_json([{k: r[k] for k in keys} for r in rows], indent=1))
    else:
        _print_tables(rows, out)
        out.print(f"parity plot: {parity}; {wall:.0f} s wall")
    (err if args.json else out).print(gate_message(rows, args.strict), markup=False)
    return EXIT_FAILURE if gate_failures(rows, args.strict) else EXIT_OK


def _calibrate_faults(args: argparse.Namespace, out: Console) -> int:
    """``--only FAULTS``: the failure / rebuild records checked against the solvers (calibration/faults/check.py),
    printed as every system's are: the records table, the per-system summary and the gate line."""
    from dataclasses import asdict

    from calibration.faults.check import as_row, check_records
    from sim.errors import EXIT_FAILURE, EXIT_OK

    t0 = time.perf_counter()
    checks = check_records()
    rows = [as_row(c) for c in checks]
    if args.json:
        print(dumps_json([asdict(c) for c in checks], indent=1))
    else:
        _print_tables(rows, out)
        out.print(f"{time.perf_counter() - t0:.0f} s wall", markup=False)
    (Console(stderr=True) if args.json else out).print(gate_message(rows, args.strict), markup=False)
    return EXIT_FAILURE if gate_failures(rows, args.strict) else EXIT_OK


def gate_failures(rows: list[dict[str, Any]], strict: bool) -> list[dict[str, Any]]:
    """The records that fail ``flashplan calibrate``: those outside their tolerance (or not predicted);
    with ``strict`` also those settled by a conflict of sources, declared known gaps, and known-gap
    declarations whose record now holds."""
    failing = {"outside", "conflict", "known_gap"} if strict else {"outside"}
    return [r for r in rows if r["status"] in failing or (strict and stale_known_gap(r))]


def gate_message(rows: list[dict[str, Any]], strict: bool) -> str:
    """What the gate decided and why, with one line per stale known-gap declaration."""
    lines = [f"known gap now within tolerance: remove the declaration: {r['id']} (measured {_fmt(r['measured'])}, "
             f"predicted {_fmt(r['predicted'])})" for r in rows if stale_known_gap(r)]
    counts = {k: sum(1 for r in rows if r["status"] == k) for k in ("within", "conflict", "known_gap", "outside", "out_of_scope")}
    failing = gate_failures(rows, strict)
    verdict = f"FAIL ({len(failing)} failing: {', '.join(r['id'] for r in failing[:5])}{', ...' if len(failing) > 5 else ''})" \
        if failing else "pass"
    lines.append(f"gate{' (--strict)' if strict else ''}: {verdict}; {counts['within']} within tolerance, {counts['conflict']} settled by "
                 f"a conflict, {counts['known_gap']} declared known gaps, {counts['outside']} outside"
                 + (f", {counts['out_of_scope']} out of scope" if counts["out_of_scope"] else ""))
    return "\n".join(lines)


def _verdict(row: dict[str, Any]) -> str:
    """The pass column: yes, NO (with the error, if the record could not be predicted), the
    contradicting record that holds instead, or known gap."""
    if row["within"]:
        return "[green]yes[/] (known gap: remove the declaration)" if stale_known_gap(row) else "[green]yes[/]"
    if row["status"] == "conflict":
        held = f"{row['settled_by']} holds" if row.get("settled_by") else "the record documents the sources' conflict"
        return f"[yellow]conflict[/]: {held}"
    if row["status"] == "known_gap":
        return "[magenta]known gap[/]"
    if row["status"] == "out_of_scope":
        return f"out of scope: {row['error']}"
    return f"[red]NO[/] {row['error'] or ''}"
