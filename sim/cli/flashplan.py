"""The ``flashplan`` command.

    flashplan simulate FILE [--set dotted.path=VALUE ...] [--json]
    flashplan growth FILE --slo-p99-us X [--rate-per-year R] [--start YYYY-MM-DD]
    flashplan schema
    flashplan catalog [--json]
    flashplan app [--port N]
    flashplan qd-sweep DRIVE [--qd 1,2,4,...] [--solver fast|des] [--json]   (sim/cli/qd_sweep.py)

Bad input exits with code 2 and one ``field.path: message`` line per problem on
stderr; an unexpected failure exits 1 with one line (``FLASHPLAN_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from models.bottleneck import both_words, limit_label
from models.catalog import CatalogError, load_catalog
from models.common import dumps_json
from models.faults import throttle_words
from models.loading import format_validation_error
from models.numbers import format_number as _fmt
from models.placement import check_placement
from models.requirements import scenario_device_problems
from models.result import IntervalResult, PeakInterval, RebuildFigures, Result
from models.scenario import Scenario, parse_override, read_scenario_data, scenario_from_data
from models.topology import DirectNvme
from sim.cli.output import command_console
from sim.errors import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNSTABLE,
    BadInput,
    format_problems,
)
from sim.plan.faults import FaultStates, simulate_states

# Modules that add their own subcommands: each has ``register(subparsers)`` which adds
# its parser(s) with ``set_defaults(func=handler)``; a handler takes (args, console) and
# returns the exit code, raising BadInput for the user's mistakes.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "calibration.cli",
    "sim.cli.sweep",
    "sim.cli.import_",
    "sim.cli.export",
    "sim.cli.plan",
    "sim.cli.analyze",
    "sim.cli.qd_sweep",
    "sim.cli.growth",
    "sim.cli.drive",
)

def load_with_overrides(path: str, sets: Sequence[str]) -> Scenario:
    """Read FILE, apply ``--set`` overrides, validate; raise BadInput with every problem found."""
    try:
        data = read_scenario_data(path)
        overrides = dict(parse_override(s) for s in sets)
        scenario = scenario_from_data(data, overrides)
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc)) from None
    problems = scenario_device_problems(scenario)
    if problems:
        raise BadInput(problems)
    return scenario


METRIC_LABELS = [
    ("iops", "IOPS", ""),
    ("read_iops", "read IOPS", ""),
    ("write_iops", "write IOPS", ""),
    ("mbps", "throughput", "MB/s"),
    ("latency_mean_us", "latency mean", "us"),
    ("latency_p50_us", "latency p50", "us"),
    ("latency_p95_us", "latency p95", "us"),
    ("latency_p99_us", "latency p99", "us"),
    ("latency_p999_us", "latency p99.9", "us"),
    ("read_latency_mean_us", "read latency mean", "us"),
    ("write_latency_mean_us", "write latency mean", "us"),
    ("cpu_us_per_io", "host CPU per I/O", "us"),
    ("mean_outstanding_ios", "I/Os in flight (mean)", ""),
]


def device_model_line(scenario: Scenario) -> str | None:
    """Which flash device model the scenario's devices run under (None where it has no flash of its own: a SAN, a
    generic network), so the reader knows what the tails rest on."""
    from sim.route.describe import describe

    devices = getattr(describe(scenario), "devices", None)
    if devices is None:
        return None
    model = "addressed NAND dies behind a controller" if devices.dies is not None else "pooled units"
    how = "the default" if scenario.device_model == "auto" else f"device_model: {scenario.device_model}"
    if scenario.device_model == "auto" and devices.dies is None and not devices.params.shared_dies:
        how += (f": the drive's rated read latency {devices.params.read_latency_us:g} us leaves the die model no NAND "
                f"read time")
    return f"flash device model: {model} ({how}; --set device_model=auto|pooled|dies)"


def bottleneck_words(result: Result) -> str:
    """The DES's bottleneck (the most utilized component of its table, ``models.bottleneck``), followed by the fast
    path's where the two solvers disagree (a steady scenario: a profile has no one fast-path answer)."""
    from sim.analytic import evaluate

    if result.scenario.profile_index() is not None:
        return result.bottleneck
    fast = evaluate(result.scenario)
    return both_words(result.bottleneck, fast.utilization, fast.bottleneck)


VALIDITY_WORDS = {
    "precise": "the run met its precision target: every reported 95% CI is within run.target_rel_ci",
    "cut_short": "the values are indicative, their CIs wide or unknown",
    "unstable": "the latency only says how long the run lasted",
}


def validity_words(result: Result) -> str:
    """A result's validity (precise, cut_short or unstable) and why, in one phrase."""
    why = result.validity_note or VALIDITY_WORDS[result.validity]
    return f"{result.validity} ({why})"


def print_result(result: Result, console: Console, top: int = 8) -> None:
    """The human-readable report of ``flashplan simulate``: an unstable or cut-short result says so first."""
    if result.validity == "unstable":
        console.print(f"UNSTABLE: {result.validity_note} - the latency below only says how long the run lasted",
                      markup=False, highlight=False)
    elif result.validity == "cut_short":
        console.print(f"cut short: {result.validity_note} - the values are indicative, their CIs wide or unknown",
                      markup=False, highlight=False)
    title = result.scenario.name or "scenario"
    table = Table(title=f"{title}  (seed {result.seed})", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("unit")
    for key, label, unit in METRIC_LABELS:
        m = getattr(result, key)
        table.add_row(label, _fmt(m.value), f"{_fmt(m.ci95[0])} .. {_fmt(m.ci95[1])}", unit)
    console.print(table)
    if result.workloads is not None:
        print_workloads(result, console)
    util = Table(title=f"utilization (top {top})", title_justify="left")
    util.add_column("component")
    util.add_column("utilization", justify="right")
    util.add_column("busy", justify="right")
    for name, u in sorted(result.utilization.items(), key=lambda kv: -kv[1])[:top]:
        util.add_row(name, f"{u:6.1%}", f"{result.busy[name]:6.1%}")
    console.print(util)
    console.print(f"{limit_label(result.bottleneck, result.utilization)}: {bottleneck_words(result)}", markup=False)
    model = device_model_line(result.scenario)
    if model is not None:
        console.print(model, markup=False, highlight=False)
    console.print(
        f"validity: {result.validity}; stop: {result.stop_reason}; {result.simulated_ios:,} I/Os simulated "
        f"({result.measured_ios:,} measured in {result.batches} batches), "
        f"{result.simulated_seconds:.3f} s simulated in {result.wall_seconds:.2f} s wall"
    )


WORKLOAD_COLUMNS = (
    ("iops", "IOPS"), ("mbps", "MB/s"), ("latency_mean_us", "mean us"), ("latency_p99_us", "p99 us"),
    ("read_latency_mean_us", "read us"), ("write_latency_mean_us", "write us"), ("mean_outstanding_ios", "in flight"),
)


def print_workloads(result: Result, console: Console) -> None:
    """One row per workload of a consolidated scenario (value and 95% CI of each metric); the hardware's
    utilization and bottleneck, shared by all, follow in the scenario's tables."""
    assert result.workloads is not None
    table = Table(title="per workload (value ± 95% CI half-width)", title_justify="left")
    table.add_column("workload")
    table.add_column("kind")
    for _, label in WORKLOAD_COLUMNS:
        table.add_column(label, justify="right")
    for name, w in result.workloads.items():
        cells = [name, w.kind]
        for key, _ in WORKLOAD_COLUMNS:
            m = getattr(w, key)
            ci = f" ±{_fmt(m.half_width)}" if m.has_ci and m.half_width > 0 else ""
            cells.append(f"{_fmt(m.value)}{ci}")
        table.add_row(*cells)
    console.print(table)


def print_slos(rows: list[dict[str, Any]], console: Console, solver: str) -> None:
    table = Table(title=f"objectives ({solver})", title_justify="left")
    for column in ("workload", "objective", "value", "verdict"):
        table.add_column(column, justify="right" if column == "value" else "left")
    for row in rows:
        sign = "<=" if row["kind"] == "max" else ">="
        value = "-" if row["value"] is None else _fmt(row["value"])
        table.add_row(row["workload"], f"{row['metric']} {sign} {_fmt(row['bound'])}", value, row["verdict"])
    console.print(table)


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if math.isfinite(seconds) else "never (no progress)"


def rebuild_line(rb: RebuildFigures) -> str:
    """The rebuild under the run's host load and on an idle array: rate per replacement drive and time to rebuild it."""
    tb = rb.drive_bytes / 1e12
    return (f"rebuild ({throttle_words(rb.throttle)}): under load {_fmt(rb.rate_mbps.value)} MB/s per replacement drive -> "
            f"{tb:g} TB in {_hours(rb.time_s)}; idle {_fmt(rb.idle_rate_mbps)} MB/s -> {_hours(rb.idle_time_s)} "
            f"(cap {rb.cap_mbps:g} MB/s, floor {rb.floor_mbps:g} MB/s)")


def fast_rebuild_line(figures: dict[str, float | None], throttle: str) -> str:
    """The fast path's rebuild figures (``sim.plan.faults.fast_rebuild_figures``, an endless time as None) as one line."""
    def hours(h: float | None) -> str:
        return _hours(h * 3600 if h is not None else math.inf)

    return (f"rebuild ({throttle_words(throttle)}, fast path): under load {_fmt(figures['loaded_mbps'] or 0.0)} MB/s per "
            f"replacement drive -> {hours(figures['loaded_time_h'])}; idle {_fmt(figures['idle_mbps'] or 0.0)} MB/s -> "
            f"{hours(figures['idle_time_h'])}")


def print_states(states: FaultStates, console: Console) -> None:
    """``flashplan simulate`` of a scenario with faults: one table per state, the rebuild, the SLO margins."""
    margins = states.margins()
    statistic, slo_us = states.slo
    for name, result in states.results.items():
        console.print(f"\n== state: {name} ==", markup=False, highlight=False)
        print_result(result, console, top=5)
        if margins.get(name) is not None:
            console.print(f"SLO {statistic} <= {slo_us:g} us: margin {margins[name]:+.1f}%", markup=False, highlight=False)
    rebuilding = states.results.get("rebuilding")
    if rebuilding is not None and rebuilding.rebuild is not None:
        console.print("\n" + rebuild_line(rebuilding.rebuild), markup=False, highlight=False)
    lowest = states.lowest_margin()
    if lowest is not None:
        console.print(f"lowest SLO margin: {lowest[1]:+.1f}% ({lowest[0]})", markup=False, highlight=False)


def _simulate_states(scenario: Scenario, args: argparse.Namespace, out: Console) -> int:
    states = simulate_states(scenario)
    if args.json:
        print(dumps_json(states.summary()))
    else:
        print_states(states, out)
    return EXIT_UNSTABLE if states.worst_validity == "unstable" else EXIT_OK


INTERVAL_ROWS = 40
"""Intervals a profile's table shows (the peak always among them); ``--json`` has every one."""


def _ci_text(m: Any) -> str:
    if not math.isfinite(m.value):
        return "-"
    return f"{_fmt(m.value)} ±{_fmt(m.half_width)}" if m.has_ci else f"{_fmt(m.value)} (no CI)"


def print_intervals(result: Result, console: Console) -> None:
    """The per-interval tables of a replayed profile, the peak interval marked: the whole run's, and with
    several workloads each workload's over the same intervals."""
    _interval_table(result.intervals or [], result.peak_interval, "all workloads: " if result.workloads else "", console)
    for name, w in (result.workloads or {}).items():
        if w.intervals is not None:
            _interval_table(w.intervals, w.peak_interval, f"workload {name} ({w.kind}): ", console)


def _interval_table(intervals: list[IntervalResult], peak_interval: PeakInterval | None, what: str, console: Console) -> None:
    peak = peak_interval.index if peak_interval else -1
    shown = list(range(len(intervals))) if len(intervals) <= INTERVAL_ROWS else sorted(
        {*range(INTERVAL_ROWS - 1), peak} & set(range(len(intervals))))
    labels = any(iv.label for iv in intervals)
    table = Table(title=f"{what}intervals (IOPS: completions in the interval; latency: I/Os that arrived in it; ± 95% CI)",
                  title_justify="left")
    for col in ("#", *(["label"] if labels else []), "start s", "length s", "offered IOPS", "IOPS", "MB/s", "mean us", "p99 us",
                "backlog", "busiest"):
        table.add_column(col, justify="left" if col in ("label", "busiest") else "right")
    for i in shown:
        iv = intervals[i]
        m = iv.metrics
        busiest = f"{iv.busiest} {iv.busiest_utilization:.0%}" + (" SATURATED" if iv.saturated else "")
        table.add_row(f"{iv.index}{' *' if iv.index == peak else ''}", *([iv.label] if labels else []), f"{iv.start_s:g}",
                      f"{iv.duration_s:g}", "closed" if iv.offered_iops is None else _fmt(iv.offered_iops), _fmt(m["iops"].value),
                      _fmt(m["mbps"].value), _ci_text(m["latency_mean_us"]), _ci_text(m["latency_p99_us"]),
                      f"{iv.backlog_end:,}", busiest)
    console.print(table)
    if len(shown) < len(intervals):
        console.print(f"({len(intervals) - len(shown)} more intervals: --json lists every one)", markup=False)
    if peak_interval:
        console.print(f"{what}peak interval (*): {peak_interval.index}: {peak_interval.reason}", markup=False, highlight=False)


def cmd_simulate(args: argparse.Namespace, out: Console) -> int:
    from sim.des.engine import simulate
    from sim.plan.capacity_check import cross_checked

    scenario = load_with_overrides(args.file, args.set or [])
    if scenario.faults is not None:
        return _simulate_states(scenario, args, out)
    result = cross_checked(scenario, simulate(scenario))
    if isinstance(scenario.topology, DirectNvme):
        warning = check_placement(scenario.topology).warning()
        if warning:  # the figures are right; the protection the layout promises is not there
            Console(stderr=True).print(f"warning: {warning}", markup=False, highlight=False)
    from sim.plan.slo_check import des_figure, slo_verdicts

    slos = slo_verdicts(scenario, des_figure(result)) if scenario.slos else []
    if args.json:
        print(dumps_json(result.summary() | ({"slos": slos} if scenario.slos else {})))
    else:
        print_result(result, out)
        if slos:
            print_slos(slos, out, f"DES, seed {result.seed}: met = the whole 95% interval keeps the bound")
        if result.intervals is not None:
            print_intervals(result, out)
    return EXIT_UNSTABLE if result.validity == "unstable" else EXIT_OK


def cmd_schema(args: argparse.Namespace, out: Console) -> int:
    if args.requirements:
        from models.requirements import Requirements

        print(dumps_json(Requirements.model_json_schema()))
        return EXIT_OK
    print(dumps_json(Scenario.model_json_schema()))
    return EXIT_OK


def catalog_as_data() -> dict[str, Any]:
    cat = load_catalog()
    sections = ("drives", "dimms", "adapters", "san_adapters", "storage_servers", "hosts")
    return {s: {k: v.model_dump(mode="json", exclude_none=True) for k, v in cat.section(s).items()} for s in sections}


def cmd_catalog(args: argparse.Namespace, out: Console) -> int:
    data = catalog_as_data()
    if args.json:
        print(dumps_json(data))
        return EXIT_OK
    cat = load_catalog()
    drives = Table(title="NVMe drives and flash DIMMs", title_justify="left")
    for col in ("model", "vendor", "TB", "read GB/s", "write GB/s", "read kIOPS", "write kIOPS",
                "read us", "write us", "namespaces", "list price $"):
        drives.add_column(col, justify="left" if col in ("model", "vendor") else "right")
    for name, d in {**cat.drives, **cat.dimms}.items():
        drives.add_row(name, d.vendor, f"{d.capacity_tb:g}", f"{d.read_bw_gbs:g}", f"{d.write_bw_gbs:g}",
                       f"{d.read_kiops:g}", f"{d.write_kiops:g}", f"{d.read_latency_us:g}", f"{d.write_latency_us:g}",
                       str(d.max_namespaces), f"{d.price.usd:,.0f}" if d.price else "-")
    out.print(drives)
    adapters = Table(title="NVMe adapters and carriers", title_justify="left")
    for col in ("model", "description", "max drives", "uplink", "list price $"):
        adapters.add_column(col)
    for name, a in cat.adapters.items():
        adapters.add_row(name, a.description, str(a.max_drives), f"PCIe Gen{a.uplink_generation} x{a.uplink_lanes}",
                         f"{a.price.usd:,.0f}" if a.price else "-")
    out.print(adapters)
    san = Table(title="SAN adapters and storage servers", title_justify="left")
    for col in ("model", "description", "ports", "Gb/s per port", "list price $"):
        san.add_column(col)
    for name, s in cat.san_adapters.items():
        san.add_row(name, s.description, str(s.ports), f"{s.port_gbps:g}", f"{s.price.usd:,.0f}" if s.price else "-")
    for name, srv in cat.storage_servers.items():
        san.add_row(name, srv.description, str(srv.max_front_end_ports), f"{srv.port_gbps:g}",
                    f"{srv.price.usd:,.0f}" if srv.price else "-")
    out.print(san)
    hosts = Table(title="Hosts (CPU us per I/O by stack)", title_justify="left")
    for col in ("model", "description", "cores", "path lengths"):
        hosts.add_column(col)
    for name, h in cat.hosts.items():
        hosts.add_row(name, h.description, str(h.cores), ", ".join(f"{k} {v:g}" for k, v in h.cpu_us_per_io.items()))
    out.print(hosts)
    out.print("Prices are list-price assumptions (see each entry's price.source); override with FLASHPLAN_CATALOG_DIR.")
    return EXIT_OK


LOCAL_ADDRESS = "127.0.0.1"


def check_db_url() -> None:
    """BadInput naming FLASHPLAN_DB_URL when it is set and not a URL (its password is never printed)."""
    url = os.environ.get("FLASHPLAN_DB_URL", "").strip()
    if not url:
        return
    from sqlalchemy.engine import make_url

    try:
        make_url(url)
    except Exception:
        raise BadInput([("FLASHPLAN_DB_URL", "not a database URL (expected e.g. sqlite:///path or "
                                             "postgresql://user:***@host/db); value not shown, it may hold a password")]) from None


def cmd_app(args: argparse.Namespace, out: Console) -> int:
    if not 1 <= args.port <= 65535:
        raise BadInput([("--port", f"must be 1 .. 65535, got {args.port}")])
    check_db_url()
    app = Path(__file__).resolve().parent.parent.parent / "app" / "main.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true", "--server.address", args.address,
           "--server.port", str(args.port), "--browser.gatherUsageStats", "false", "--client.toolbarMode", "viewer"]
    if args.address != LOCAL_ADDRESS:
        _print_lines([f"WARNING: serving on {args.address}:{args.port}: reachable from other machines, with no authentication"])
    out.print(f"flashplan web app: http://{args.address}:{args.port}", markup=False, highlight=False)
    return subprocess.call(cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flashplan", description="Performance simulator and capacity planner for flash storage.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("simulate", help="simulate one scenario file (YAML, TOML or JSON)")
    p.add_argument("file")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE",
                   help="override a field, e.g. --set workload.queue_depth=16 (repeatable; list items by index)")
    p.add_argument("--json", action="store_true", help="print the Result as JSON")
    p.set_defaults(func=cmd_simulate)
    p = sub.add_parser("schema", help="print the scenario JSON Schema")
    p.add_argument("--requirements", action="store_true", help="the requirements file's schema (flashplan plan) instead")
    p.set_defaults(func=cmd_schema)
    p = sub.add_parser("catalog", help="list the hardware catalog")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_catalog)
    p = sub.add_parser("app", help="start the web app")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default=LOCAL_ADDRESS,
                   help="address to serve on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    p.set_defaults(func=cmd_app)
    for module in SUBCOMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out = command_console()
    try:
        if os.environ.get("FLASHPLAN_CATALOG_DIR"):
            load_catalog()  # a user's catalog is checked before any work, whether or not the command looks it up
        return int(args.func(args, out))
    except BadInput as exc:
        _print_lines(format_problems(exc.problems))
        return EXIT_BAD_INPUT
    except ValidationError as exc:
        _print_lines(format_problems(format_validation_error(exc)))
        return EXIT_BAD_INPUT
    except CatalogError as exc:
        _print_lines([f"catalog: {line}" for line in format_problems(exc.problems)])
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _print_lines(["interrupted (nothing half-written: results files are replaced in one step)"])
        return EXIT_INTERRUPTED
    except Exception as exc:
        if os.environ.get("FLASHPLAN_DEBUG"):
            raise
        _print_lines([f"error: {type(exc).__name__}: {exc}"])
        return EXIT_FAILURE


def _print_lines(lines: Sequence[str]) -> None:
    """Write lines to stderr; a character the terminal cannot show is escaped, never an error."""
    for line in lines:
        sys.stderr.write(line.encode("utf-8", "backslashreplace").decode("utf-8", "replace") + "\n")
    sys.stderr.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
