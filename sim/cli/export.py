"""``flashplan export fio``: fio job files that reproduce a scenario's (or a plan's winner's) workloads.

    flashplan export fio SCENARIO_OR_REQUIREMENTS [--out DIR] [--set dotted.path=VALUE ...] [--solver des|fast]
                         [--engine libaio|io_uring] [--runtime-s S] [--ramp-s S] [--iops-per-job N]
                         [--verify-top N] [--json]

A requirements file (it has a ``target``; ``flashplan plan`` reads it) is planned first, as ``flashplan plan``
does, and its DES-verified winner exported. ``--out DIR`` writes ``jobs.fio`` and ``manifest.json`` (the
predictions each job is checked against: ``flashplan import fio RESULTS.json --against DIR``); without it the
job file goes to stdout. The job file and the predictions are in ``calibration/fio_loop.py``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from calibration.fio_loop import ENGINES, JOB_FILE_NAME, MANIFEST_NAME, ExportOptions, fio_jobs, forecast_source
from models.common import dumps_json
from models.loading import BadInput


def _out_dir(value: str | None) -> Path | None:
    if value is None:
        return None
    p = Path(value)
    if p.exists() and not p.is_dir():
        raise BadInput([("--out", f"{value} exists and is not a directory")])
    if not p.exists() and not p.parent.resolve().is_dir():
        raise BadInput([("--out", f"directory {p.parent} does not exist")])
    return p


def _check(args: argparse.Namespace) -> ExportOptions:
    options = ExportOptions(engine=args.engine, runtime_s=args.runtime_s, ramp_s=args.ramp_s, iops_per_job=args.iops_per_job)
    problems = options.problems()
    if not 1 <= args.verify_top <= 1_000:
        problems.append(("--verify-top", f"must be 1 .. 1,000, got {args.verify_top}"))
    if problems:
        raise BadInput(problems)
    return options


def cmd_export_fio(args: argparse.Namespace, console: Console) -> int:
    from sim.cli.import_ import write_atomically

    options = _check(args)
    out = _out_dir(args.out)
    forecast = forecast_source(args.source, args.set, args.solver, args.verify_top)
    export = fio_jobs(forecast, options)
    if out is None:
        if args.json:
            print(dumps_json({"job_file": export.job_file, "manifest": export.manifest}))
        else:
            print(export.job_file, end="")
        return 0
    out.mkdir(exist_ok=True)
    write_atomically(out / JOB_FILE_NAME, export.job_file)
    write_atomically(out / MANIFEST_NAME, json.dumps(export.manifest, indent=1, allow_nan=False) + "\n")
    if args.json:
        print(dumps_json({"job_file": str(out / JOB_FILE_NAME), "manifest": str(out / MANIFEST_NAME),
                          "jobs": [j["name"] for j in export.manifest["jobs"]]}))
    else:
        console.print(f"wrote {out / JOB_FILE_NAME} ({len(export.manifest['jobs'])} job(s)) and {out / MANIFEST_NAME}",
                      markup=False, highlight=False)
        console.print(f"replace every REPLACE_ME in {out / JOB_FILE_NAME}, then: fio --output-format=json+ "
                      f"--output=results.json {out / JOB_FILE_NAME}; flashplan import fio results.json --against {out}",
                      markup=False, highlight=False)
    return 0


def register(subparsers: Any) -> None:
    """Add ``flashplan export fio``."""
    parser = subparsers.add_parser("export", help="fio job files that reproduce a scenario's or a plan's workloads")
    kinds = parser.add_subparsers(dest="export_kind", required=True, metavar="{fio}")
    p = kinds.add_parser("fio", help="fio job file + manifest of the predictions each job is checked against")
    p.add_argument("source", help="scenario file, or a requirements file (planned as `flashplan plan` does; its winner exported)")
    p.add_argument("--out", metavar="DIR", help="write DIR/jobs.fio and DIR/manifest.json (default: the job file on stdout)")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a field of the source (repeatable)")
    p.add_argument("--solver", choices=("des", "fast"), default="des",
                   help="predict with the DES (default: figures with 95%% CIs) or the analytic fast path (quick, no CIs)")
    p.add_argument("--engine", choices=ENGINES, default="libaio", help="fio ioengine (default libaio)")
    p.add_argument("--runtime-s", type=float, default=60.0, metavar="S",
                   help="seconds each steady job measures (default 60; a profile's intervals keep their durations)")
    p.add_argument("--ramp-s", type=float, metavar="S", help="fio ramp_time (default: the run's warm-up)")
    p.add_argument("--iops-per-job", type=float, default=100_000, metavar="N",
                   help="an open load is split over jobs of at most N IOPS each (default 100,000)")
    p.add_argument("--verify-top", type=int, default=3, metavar="N", help="a plan: candidates the DES confirms (default 3)")
    p.add_argument("--json", action="store_true", help="print JSON (the job file and manifest, or the paths written)")
    p.set_defaults(func=cmd_export_fio)
