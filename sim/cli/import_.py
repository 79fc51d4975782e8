"""``flashplan import fio|iostat``: workloads and calibration checks from real measurements.

    flashplan import fio RESULT.json [--job NAME] [--scenario FILE [--set k=v ...]] [--compare]
                                     [--out FILE.yaml] [--records FILE.yaml] [--tolerance REL] [--json]
    flashplan import fio RESULT.json --against DIR|SCENARIO [--set k=v ...] [--solver des|fast] [--job NAME] [--json]
    flashplan import iostat FILE [--device GLOB ...] [--keep-first] [--peak iops|mbps]
                                 [--as open|closed] [--access random|sequential] [--profile [--interval-s S]]
    flashplan import csv FILE [--interval-s S] [--access random|sequential]
                                 [--scenario FILE [--set k=v ...]] [--out FILE.yaml] [--json]

``--profile`` (iostat) and ``import csv`` write a profile workload (load over time: one interval per
report or row) instead of one steady workload. ``--out`` writes the imported workload (``workload:`` only), or with ``--scenario`` the whole
scenario with its workload replaced - a file ``flashplan simulate`` and sweep bases accept.
``--records`` writes the fio measurements as calibration records (system ``user``) that refer
to ``--scenario`` by a path relative to the records file. ``--compare`` simulates the scenario
with each fio job's workload and prints measured vs predicted with relative errors. ``--against`` reads the results
of jobs ``flashplan export fio`` wrote: each job beside the prediction it was exported with (the export's
directory, whose manifest.json holds them), or predicted again from the scenario or requirements file. Files are
written only after everything has been checked, each in one step; nothing is written on error.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from calibration.importers import MeasurementFileError, scenario_data_with_workload, to_yaml, workload_data
from calibration.importers.fio import FioJob, FioResult, parse_fio, workload_yaml
from calibration.importers.iostat import Interval, IostatReport, parse_iostat
from calibration.measured import compare_fio, fio_record_file, record_file_yaml
from models.common import dumps_json
from models.loading import MAX_MEASUREMENT_BYTES, read_bytes
from models.numbers import format_number as _fmt
from models.profile import profile_from_csv
from models.scenario import ScenarioFileError, format_validation_error, parse_override, read_scenario_data, scenario_from_data
from models.workload import ProfileWorkload

if TYPE_CHECKING:
    from calibration.evaluate import Outcome

METRIC_LABELS = {
    "iops": "IOPS", "read_iops": "read IOPS", "write_iops": "write IOPS", "mbps": "throughput (MB/s)",
    "latency_mean_us": "latency mean (us)", "read_latency_mean_us": "read latency mean (us)",
    "write_latency_mean_us": "write latency mean (us)", "latency_p50_us": "latency p50 (us)",
    "latency_p95_us": "latency p95 (us)", "latency_p99_us": "latency p99 (us)", "latency_p999_us": "latency p99.9 (us)",
}


def _bad(problems: list[tuple[str, str]]) -> Exception:
    from sim.errors import BadInput

    return BadInput(problems)




def read_input(path: str) -> bytes:
    """The bytes of a measurement file (``models.loading.read_bytes``), or BadInput naming the path."""
    return read_bytes(path, MAX_MEASUREMENT_BYTES)


def _output_path(value: str | None, flag: str) -> Path | None:
    if value is None:
        return None
    p = Path(value)
    if p.suffix.lower() not in (".yaml", ".yml"):
        raise _bad([(flag, f"write to a .yaml or .yml file, got {value!r}")])
    if p.is_dir():
        raise _bad([(flag, f"{value} is a directory")])
    if not p.parent.resolve().is_dir():
        raise _bad([(flag, f"directory {p.parent} does not exist")])
    return p


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step (a temporary file in the same directory, then rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent.resolve(), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _scenario_inputs(args: argparse.Namespace) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(scenario data or None, --set overrides); BadInput for an unreadable file or a malformed override."""
    try:
        overrides = dict(parse_override(s) for s in args.set or [])
        if args.scenario is None:
            if overrides:
                raise _bad([("--set", "overrides apply to --scenario; give the scenario file too")])
            return None, overrides
        return read_scenario_data(args.scenario), overrides
    except ScenarioFileError as exc:
        raise _bad(exc.problems) from None


def _combined_scenario(data: dict[str, Any], workload: Any, overrides: dict[str, Any]) -> dict[str, Any]:
    """The scenario with the imported workload, validated; BadInput naming every problem."""
    try:
        combined = scenario_data_with_workload(data, workload, overrides)
        scenario_from_data(combined)
    except ScenarioFileError as exc:
        raise _bad(exc.problems) from None
    except ValidationError as exc:
        raise _bad(format_validation_error(exc)) from None
    return combined


def _parsed(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except MeasurementFileError as exc:
        raise _bad(exc.problems) from None


# ------------------------------------------------------------------------------------------ fio


def _job_title(job: FioJob) -> str:
    return (f"fio job '{job.name}' (group {job.group}): {job.processes} process(es), {job.runtime_s:.1f} s, "
            f"{job.total_ios:,} I/Os")


def _print_job(job: FioJob, outcomes: list[Outcome] | None, console: Console) -> None:
    console.print(_job_title(job), markup=False, highlight=False)
    table = Table()
    table.add_column("metric")
    table.add_column("measured", justify="right")
    if outcomes is None:
        for metric, value in job.measured.items():
            table.add_row(METRIC_LABELS[metric], _fmt(value))
    else:
        for col in ("predicted", "95% CI", "error", "tolerance", "within"):
            table.add_column(col, justify="right")
        for o in outcomes:
            r = o.record
            tol = r.tolerance.rel if r.tolerance and r.tolerance.rel is not None else None
            if o.error:
                table.add_row(METRIC_LABELS.get(r.metric, r.metric), _fmt(r.measured), "-", "-", "-", "-", f"[red]{o.error}[/]")
                continue
            rel = o.rel_error
            table.add_row(METRIC_LABELS.get(r.metric, r.metric), _fmt(r.measured), _fmt(o.predicted),
                          f"{_fmt(o.ci95[0])} .. {_fmt(o.ci95[1])}", f"{rel:+.1%}" if math.isfinite(rel) else "-",
                          f"±{tol:.0%}" if tol is not None else "-", "yes" if o.within else "[red]no[/]")
    console.print(table)
    console.print(f"workload: {job.describe_workload()}", markup=False, highlight=False)
    for note in job.notes:
        console.print(f"note: {note}", markup=False, highlight=False)


def _report_fio(args: argparse.Namespace, result: FioResult, jobs: list[FioJob], outcomes: dict[int, list[Outcome]],
                source: str, console: Console) -> None:
    """The parsed job groups (and their comparison with the prediction), as JSON or as text."""
    if args.json:
        doc = {
            "file": source, "fio_version": result.fio_version, "notes": list(result.notes),
            "jobs": [{
                "name": j.name, "group": j.group, "processes": j.processes, "runtime_s": j.runtime_s, "ios": j.total_ios,
                "workload": workload_data(j.workload), "measured": j.measured, "notes": list(j.notes),
                **({"comparison": [o.as_dict() for o in outcomes[j.group]]} if args.compare else {}),
            } for j in jobs],
        }
        print(dumps_json(doc))
    else:
        console.print(f"{source}: {result.fio_version}, {len(jobs)} job group(s)", markup=False, highlight=False)
        for note in result.notes:
            console.print(f"note: {note}", markup=False, highlight=False)
        for job in jobs:
            _print_job(job, outcomes.get(job.group) if args.compare else None, console)
        if args.compare:
            every = [o for os_ in outcomes.values() for o in os_]
            within = sum(o.within for o in every)
            console.print(f"{within} of {len(every)} measurements within tolerance of the prediction for {args.scenario}",
                          markup=False, highlight=False)


def _check_fio_options(args: argparse.Namespace) -> None:
    """--compare and --records need --scenario; --tolerance in (0, 1]; --workers >= 1."""
    if (args.compare or args.records) and not args.scenario:
        raise _bad([("--scenario", "--compare and --records need the scenario that describes the measured system")])
    if args.tolerance is not None and not 0 < args.tolerance <= 1:
        raise _bad([("--tolerance", f"a relative tolerance must be in (0, 1], got {args.tolerance:g}")])
    if args.workers < 1:
        raise _bad([("--workers", f"must be >= 1, got {args.workers}")])


def _against_predictions(args: argparse.Namespace) -> tuple[list[Any], str]:
    """The job predictions ``--against`` names: an export directory's manifest, or a scenario / requirements file
    predicted as ``flashplan export fio`` does."""
    from calibration.fio_loop import MANIFEST_NAME, forecast_jobs, forecast_source, read_manifest

    path = Path(args.against)
    if path.is_dir():
        if args.set:
            raise _bad([("--set", "an export directory holds its predictions; --set applies to a scenario file")])
        manifest = path / MANIFEST_NAME
        return read_manifest(read_bytes(manifest, MAX_MEASUREMENT_BYTES), str(manifest)), f"the predictions exported to {args.against}"
    forecast = forecast_source(args.against, args.set, args.solver)
    return forecast_jobs(forecast), f"{args.against}, predicted by {forecast.words()}"


def _print_against(comparisons: list[Any], source: str, what: str, console: Console) -> None:
    from calibration.fio_loop import LABELS

    console.print(f"{source} against {what}", markup=False, highlight=False)
    for c in comparisons:
        p = c.prediction
        title = f"fio job '{c.job.name}' (group {c.job.group}): workload {p.workload}"
        if p.interval is not None:
            title += f", interval {p.interval}" + (f" ({p.label})" if p.label else "")
        title += f"; {c.job.runtime_s:.1f} s, {c.job.total_ios:,} I/Os"
        table = Table(title=title, title_justify="left")
        for col in ("metric", "measured", "predicted", "95% CI", "error", "inside CI"):
            table.add_column(col, justify="left" if col == "metric" else "right")
        for r in c.rows:
            f = r.predicted
            rel = r.rel_error
            inside = "-" if r.inside_ci is None else ("yes" if r.inside_ci else "[red]no[/]")
            table.add_row(LABELS[r.metric], _fmt(r.measured), _fmt(f.value) if f else "-",
                          f"{_fmt(f.ci95[0])} .. {_fmt(f.ci95[1])}" if f and f.ci95 else "-",
                          f"{rel:+.1%}" if rel is not None else "-", inside)
        console.print(table)
        console.print(f"workload: {p.describe}", markup=False, highlight=False)
        for note in c.job.notes:
            console.print(f"note: {note}", markup=False, highlight=False)
    console.print("error = (predicted - measured) / measured", markup=False, highlight=False)


def cmd_import_against(args: argparse.Namespace, console: Console) -> int:
    """``import fio RESULT --against DIR|SCENARIO``: each exported job's measurements beside its prediction."""
    from calibration.fio_loop import compare

    for flag in ("compare", "records", "out", "scenario"):
        if getattr(args, flag):
            raise _bad([(f"--{flag}", "cannot be combined with --against (which names the predictions to compare with)")])
    source = Path(args.result).name
    result = _parsed(parse_fio, read_input(args.result), origin=source)
    jobs: list[FioJob] = _parsed(result.select, args.job)
    predictions, what = _against_predictions(args)
    comparisons = compare(replace(result, jobs=jobs), predictions)
    if args.json:
        print(dumps_json({"file": source, "fio_version": result.fio_version, "against": what,
                          "jobs": [c.as_dict() for c in comparisons]}))
    else:
        _print_against(comparisons, source, what, console)
    return 0


def cmd_import_fio(args: argparse.Namespace, console: Console) -> int:
    if args.against:
        return cmd_import_against(args, console)
    _check_fio_options(args)
    out_path = _output_path(args.out, "--out")
    records_path = _output_path(args.records, "--records")
    if out_path and records_path and out_path.resolve() == records_path.resolve():
        raise _bad([("--records", "must be a different file from --out")])
    source = Path(args.result).name
    result = _parsed(parse_fio, read_input(args.result), origin=source)
    jobs: list[FioJob] = _parsed(result.select, args.job)
    if out_path and len(jobs) > 1:
        names = ", ".join(f"{j.name!r} (group {j.group})" for j in jobs)
        raise _bad([("--out", f"the result holds {len(jobs)} job groups ({names}); choose one with --job NAME")])
    scenario, overrides = _scenario_inputs(args)
    combined = [_combined_scenario(scenario, j.workload, overrides) for j in jobs] if scenario is not None else []

    out_text = records_text = None
    if out_path:
        job = jobs[0]
        if scenario is not None:
            header = (f"{args.scenario} with the workload of fio job '{job.name}' (group {job.group}) from {source}\n"
                      f"{job.describe_workload()}\nwritten by `flashplan import fio`")
            out_text = to_yaml(combined[0], header=header)
        else:
            out_text = workload_yaml(job, source)
    if records_path:
        assert args.scenario is not None
        scenario_ref = os.path.relpath(Path(args.scenario).resolve(), records_path.parent.resolve())
        records_text = record_file_yaml(fio_record_file(jobs, scenario_ref, source_name=source, overrides=overrides,
                                                        tolerance=args.tolerance))

    outcomes: dict[int, list[Outcome]] = {}
    if args.compare:
        assert scenario is not None
        found = compare_fio(jobs, scenario, source_name=source, overrides=overrides, tolerance=args.tolerance, workers=args.workers)
        for job in jobs:
            ids = {job.record_id(m) for m in job.measured}
            outcomes[job.group] = [o for o in found if o.record.id in ids]

    _report_fio(args, result, jobs, outcomes, source, console)

    for path, text in ((out_path, out_text), (records_path, records_text)):
        if path is not None and text is not None:
            write_atomically(path, text)
            if not args.json:
                console.print(f"wrote {path}", markup=False, highlight=False)
    return 0


# ------------------------------------------------------------------------------------------ iostat


def _peak_table(report: IostatReport) -> Table:
    table = Table()
    table.add_column("")
    table.add_column("peak by IOPS", justify="right")
    table.add_column("peak by MB/s", justify="right")
    peaks = (report.peak_iops, report.peak_mbps)
    rows: list[tuple[str, Any]] = [
        ("report", lambda i: i.label()),
        ("IOPS (r/s + w/s)", lambda i: _fmt(i.iops)),
        ("r/s", lambda i: _fmt(i.reads_per_s)),
        ("w/s", lambda i: _fmt(i.writes_per_s)),
        ("read %", lambda i: f"{i.read_fraction:.1%}"),
        ("MB/s (10^6 B)", lambda i: _fmt(i.mbps)),
        ("read size (KiB)", lambda i: _fmt(i.read_kib) if i.reads_per_s else "-"),
        ("write size (KiB)", lambda i: _fmt(i.write_kib) if i.writes_per_s else "-"),
        ("queue size (aqu-sz)", lambda i: _fmt(i.queue_size)),
        ("await (ms)", lambda i: _fmt(i.await_ms)),
        ("max %util", lambda i: _fmt(i.max_util_pct)),
    ]
    for label, get in rows:
        table.add_row(label, *(get(p) for p in peaks))
    return table


def _write_profile(args: argparse.Namespace, console: Console, profile: ProfileWorkload, what: str) -> int:
    """Print a profile's summary (or JSON) and write it, alone or into --scenario, with --out."""
    out_path = _output_path(args.out, "--out")
    scenario, overrides = _scenario_inputs(args)
    rates = [iv.rate_iops for iv in profile.intervals if iv.rate_iops is not None]
    peak_rate = max(rates) if rates else None
    summary = {"intervals": len(profile.intervals), "duration_s": profile.duration_s, "peak_rate_iops": peak_rate, "what": what}
    out_text = None
    if scenario is not None:
        combined = _combined_scenario(scenario, profile, overrides)
        out_text = to_yaml(combined, header=f"{args.scenario} with {what}\nwritten by `flashplan import`")
    elif out_path:
        out_text = to_yaml({"workload": workload_data(profile)}, header=f"{what}\ncombine with a topology: --scenario FILE")
    if args.json:
        print(dumps_json({**summary, "workload": workload_data(profile)}))
    else:
        peak = f", peak {_fmt(peak_rate)} IOPS" if rates else ""
        console.print(f"{what}: {len(profile.intervals)} intervals, {profile.duration_s:g} s{peak}", markup=False, highlight=False)
    if out_path and out_text is not None:
        write_atomically(out_path, out_text)
        if not args.json:
            console.print(f"wrote {out_path}", markup=False, highlight=False)
    return 0


def cmd_import_csv(args: argparse.Namespace, console: Console) -> int:
    """``flashplan import csv FILE``: a profile from per-interval IOPS, MB/s and read % (``models.profile``)."""
    source = Path(args.file).name
    profile = _parsed(profile_from_csv, read_bytes(args.file), origin=source, interval_s=args.interval_s, access=args.access)
    return _write_profile(args, console, profile, f"the load profile of {source}")


def _report_iostat(args: argparse.Namespace, report: IostatReport, peaks: dict[str, Interval], workloads: dict[str, Any], source: str,
                   console: Console) -> None:
    """The report's devices, peaks and the workload at each peak, as JSON or as text."""
    from calibration.importers.fio import describe_workload

    if args.json:
        doc = {
            "file": source, "system": report.system, "devices": report.devices, "all_devices": report.all_devices,
            "reports": len(report.intervals), "skipped_first": report.skipped_first, "notes": list(report.notes),
            "peaks": {k: {**peaks[k].summary(), "workload": workload_data(w)} for k, w in workloads.items()},
        }
        print(dumps_json(doc))
    else:
        if report.system:
            console.print(report.system, markup=False, highlight=False)
        console.print(f"{report.origin}: {len(report.intervals)} reports, devices {', '.join(report.devices)}", markup=False, highlight=False)
        console.print(_peak_table(report))
        for key, w in workloads.items():
            console.print(f"workload at the peak by {'IOPS' if key == 'iops' else 'MB/s'}: {describe_workload(w)}", markup=False, highlight=False)
        for note in report.notes:
            console.print(f"note: {note}", markup=False, highlight=False)


def cmd_import_iostat(args: argparse.Namespace, console: Console) -> int:
    from calibration.importers.fio import describe_workload

    source = Path(args.file).name
    report: IostatReport = _parsed(parse_iostat, read_input(args.file), origin=source, devices=args.device,
                                   keep_first=args.keep_first)
    if args.profile:
        profile = _parsed(report.profile, args.as_kind, args.access, args.interval_s)
        what = f"every report of {source} as a profile ({', '.join(report.devices)} summed; --as {args.as_kind})"
        for note in report.notes:
            if not args.json:
                console.print(f"note: {note}", markup=False, highlight=False)
        return _write_profile(args, console, profile, what)
    out_path = _output_path(args.out, "--out")
    scenario, overrides = _scenario_inputs(args)
    peaks: dict[str, Interval] = {"iops": report.peak_iops, "mbps": report.peak_mbps}
    workloads = {k: _parsed(i.workload, args.as_kind, args.access) for k, i in peaks.items()}
    chosen = workloads[args.peak]
    out_text = None
    if out_path:
        interval = peaks[args.peak]
        what = f"the peak-{'IOPS' if args.peak == 'iops' else 'MB/s'} interval ({interval.label()}) of {source}"
        if scenario is not None:
            combined = _combined_scenario(scenario, chosen, overrides)
            header = f"{args.scenario} with the workload of {what}\n{describe_workload(chosen)}\nwritten by `flashplan import iostat`"
            out_text = to_yaml(combined, header=header)
        else:
            header = (f"workload of {what}, devices {', '.join(report.devices)}\n{describe_workload(chosen)}\n"
                      "combine with a topology: flashplan import iostat ... --scenario FILE --out scenario.yaml")
            out_text = to_yaml({"workload": workload_data(chosen)}, header=header)
    elif scenario is not None:
        _combined_scenario(scenario, chosen, overrides)

    _report_iostat(args, report, peaks, workloads, source, console)
    if out_path and out_text is not None:
        write_atomically(out_path, out_text)
        if not args.json:
            console.print(f"wrote {out_path}", markup=False, highlight=False)
    return 0


def register(subparsers: Any) -> None:
    """Add ``flashplan import fio`` and ``flashplan import iostat``."""
    parser = subparsers.add_parser("import", help="turn fio results or iostat logs into workloads and calibration records")
    kinds = parser.add_subparsers(dest="import_kind", required=True, metavar="{fio,iostat,csv}")

    def scenario_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--scenario", metavar="FILE", help="scenario describing the measured system (its workload is replaced)")
        p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a field of --scenario (repeatable)")
        p.add_argument("--out", metavar="FILE.yaml", help="write the workload, or with --scenario the whole scenario")
        p.add_argument("--json", action="store_true", help="print JSON instead of tables")

    fio = kinds.add_parser("fio", help="fio JSON output (--output-format=json)")
    fio.add_argument("result", help="fio result file")
    fio.add_argument("--job", metavar="NAME|GROUP", help="only this job (by name or group number)")
    fio.add_argument("--compare", action="store_true", help="simulate --scenario with each job's workload; print measured vs predicted")
    fio.add_argument("--records", metavar="FILE.yaml", help="write calibration records (system: user) against --scenario")
    fio.add_argument("--tolerance", type=float, metavar="REL", help="relative tolerance for every record (default: from fio's own spread)")
    fio.add_argument("--workers", type=int, default=1, help="processes for --compare (default 1)")
    fio.add_argument("--against", metavar="DIR|SCENARIO",
                     help="jobs written by `flashplan export fio`: compare each with its prediction (the export directory, "
                          "or the scenario / requirements file predicted again; --set applies to it)")
    fio.add_argument("--solver", choices=("des", "fast"), default="des", help="--against a file: predict with the DES "
                                                                          "(default) or the fast path")
    scenario_options(fio)
    fio.set_defaults(func=cmd_import_fio)

    iostat = kinds.add_parser("iostat", help="iostat -x text output (sysstat 12.x)")
    iostat.add_argument("file", help="iostat -x output")
    iostat.add_argument("--device", action="append", metavar="GLOB", help="devices to sum (repeatable; default: every disk)")
    iostat.add_argument("--keep-first", action="store_true", help="keep the first report (iostat -y output)")
    iostat.add_argument("--peak", choices=("iops", "mbps"), default="iops", help="which peak --out writes (default iops)")
    iostat.add_argument("--as", dest="as_kind", choices=("open", "closed"), default="open",
                        help="open: the measured rate; closed: aqu-sz I/Os in flight (default open)")
    iostat.add_argument("--access", choices=("random", "sequential"), default="random", help="iostat cannot tell (default random)")
    iostat.add_argument("--profile", action="store_true",
                        help="write every report as one interval of a profile workload (load over time) instead of the peak")
    iostat.add_argument("--interval-s", type=float, metavar="S", help="--profile: seconds per report (default: from -t timestamps)")
    scenario_options(iostat)
    iostat.set_defaults(func=cmd_import_iostat)

    table = kinds.add_parser("csv", help="a CSV of per-interval iops, mbps, read_pct (and duration_s, label) as a profile workload")
    table.add_argument("file", help="CSV with a header row")
    table.add_argument("--interval-s", type=float, metavar="S", help="seconds per row when there is no duration_s column")
    table.add_argument("--access", choices=("random", "sequential"), default="random", help="the CSV cannot tell (default random)")
    scenario_options(table)
    table.set_defaults(func=cmd_import_csv)
