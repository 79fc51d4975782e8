"""``flashplan analyze FILE [--set dotted.path=VALUE ...] [--json] [--compare]``.

Prints the analytic fast path's prediction (sim/analytic): mean throughput and latency,
utilization, bottleneck and the asymptotic bounds Xmax, Rmin and N*, in well under a
millisecond. ``--compare`` also runs the discrete-event simulation of the same scenario
and prints both side by side with the fast path's relative error and whether the DES
95% interval contains the analytic value.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from rich.console import Console
from rich.table import Table

from models.bottleneck import limit_label, solvers_agree
from models.common import dumps_json
from models.numbers import format_number as _fmt
from models.result import Result
from models.scenario import Scenario
from sim.analytic import FastResult, evaluate
from sim.cli.flashplan import device_model_line, fast_rebuild_line, load_with_overrides, print_slos, rebuild_line, validity_words
from sim.errors import EXIT_OK, EXIT_UNSTABLE
from sim.plan.slo_check import fast_figure, slo_verdicts

COMPARED = (
    ("iops", "IOPS", ""),
    ("read_iops", "read IOPS", ""),
    ("write_iops", "write IOPS", ""),
    ("mbps", "throughput", "MB/s"),
    ("latency_mean_us", "latency mean", "us"),
    ("read_latency_mean_us", "read latency mean", "us"),
    ("write_latency_mean_us", "write latency mean", "us"),
    ("cpu_us_per_io", "host CPU per I/O", "us"),
)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("analyze", help="analytic fast path: mean throughput, latency, utilization and bounds (no simulation)")
    p.add_argument("file")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE",
                   help="override a field, e.g. --set topology.drives=8 (repeatable; list items by index)")
    p.add_argument("--json", action="store_true", help="print the prediction (and with --compare the DES result) as JSON")
    p.add_argument("--compare", action="store_true", help="also run the discrete-event simulation and print both with relative errors")
    p.add_argument("--top", type=int, default=8, help="components listed in the utilization table (default 8)")
    p.set_defaults(func=cmd_analyze)


def _value(v: float) -> str:
    return _fmt(v) if math.isfinite(v) else "unbounded"


def relative_errors(fast: FastResult, des: Result) -> dict[str, float | None]:
    """(fast - DES) / DES for every compared metric (None where the DES value is 0 or the fast one infinite)."""
    out: dict[str, float | None] = {}
    for key, _, _ in COMPARED:
        f = getattr(fast, key)
        d = getattr(des, key).value
        out[key] = (f - d) / d if d and math.isfinite(f) else None
    return out


PER_WORKLOAD = (("iops", "IOPS"), ("mbps", "MB/s"), ("latency_mean_us", "mean us"),
                ("read_latency_mean_us", "read us"), ("write_latency_mean_us", "write us"))


def print_workloads(fast: FastResult, des: Result | None, out: Console) -> None:
    """One row per workload of a consolidated scenario: the fast path's figure, and with ``--compare``
    the DES's and the relative error (* = outside the DES 95% CI)."""
    assert fast.workloads is not None
    table = Table(title="per workload" + (" (fast path / DES, error)" if des is not None else " (fast path)"), title_justify="left")
    table.add_column("workload")
    for _, label in PER_WORKLOAD:
        table.add_column(label, justify="right")
    for name, w in fast.workloads.items():
        other = des.workloads.get(name) if des is not None and des.workloads is not None else None
        cells = [name]
        for key, _ in PER_WORKLOAD:
            f = getattr(w, key)
            cell = _value(f)
            if other is not None:
                m = getattr(other, key)
                err = (f - m.value) / m.value if m.value and math.isfinite(f) else None
                cell += f" / {_fmt(m.value)}" + ("" if err is None else f" {err:+.1%}{'' if m.contains(f) else ' *'}")
            cells.append(cell)
        table.add_row(*cells)
    out.print(table)


def cmd_analyze_profile(scenario: Scenario, args: argparse.Namespace, out: Console) -> int:
    """A profile: every interval as a steady state, flagged where that is unreliable (``sim.plan.profile_fast``)."""
    from sim.plan.profile_fast import evaluate_profile

    est = evaluate_profile(scenario)
    if args.json:
        print(dumps_json({"fast_profile": est.summary()}))
        return EXIT_OK
    table = Table(title=f"{scenario.name or 'scenario'}  (analytic fast path, each interval as a steady state)", title_justify="left")
    for col in ("#", "length s", "offered IOPS", "IOPS", "mean us", "p99 est. us", "settling s", "bottleneck", "note"):
        table.add_column(col, justify="left" if col in ("bottleneck", "note") else "right")
    for e in est.intervals:
        f = e.fast
        table.add_row(f"{e.index}{' *' if e.index == est.peak_index else ''}", f"{e.duration_s:g}",
                      "closed" if e.offered_iops is None else _fmt(e.offered_iops), _value(f.iops) if f else "0",
                      _value(f.latency_mean_us) if f else "-", _value(e.p99_estimate_us) if f else "-",
                      _value(e.settling_s) if f else "-", f.bottleneck if f else "-", e.note)
    out.print(table)
    out.print(f"peak interval (*): {est.peak_index}: {est.peak_reason}", markup=False, highlight=False)
    if scenario.consolidated:  # the profile among several workloads: each one in every interval
        per = Table(title="per workload and interval (fast path)", title_justify="left")
        for col in ("#", "workload", "IOPS", "mean us", "read us", "write us", "p99 est. us"):
            per.add_column(col, justify="left" if col == "workload" else "right")
        for e in est.intervals:
            for name, w in ((e.fast.workloads or {}) if e.fast else {}).items():
                per.add_row(f"{e.index}{' *' if e.index == est.peak_index else ''}", name, _value(w.iops), _value(w.latency_mean_us),
                            _value(w.read_latency_mean_us), _value(w.write_latency_mean_us),
                            _value(e.p99_by_workload.get(name, math.inf)))
        out.print(per)
    notes = sorted({note for e in est.intervals if e.fast for note in e.fast.notes})
    for note in notes:
        out.print(f"note: {note}", markup=False, highlight=False)
    return EXIT_OK


def _compared_table(title: str, fast: FastResult, des: Result | None) -> Table:
    """The fast path's figures, beside the DES's (value, 95% CI, relative error) when it ran."""
    table = Table(title=f"{title}  (analytic fast path)", title_justify="left")
    table.add_column("metric")
    table.add_column("fast path", justify="right")
    if des is not None:
        table.add_column(f"DES (seed {des.seed})", justify="right")
        table.add_column("DES 95% CI", justify="right")
        table.add_column("error", justify="right")
    table.add_column("unit")
    errors = relative_errors(fast, des) if des is not None else {}
    for key, label, unit in COMPARED:
        f = getattr(fast, key)
        row = [label, _value(f)]
        if des is not None:
            m = getattr(des, key)
            err = errors[key]
            inside = m.contains(f)
            row += [_fmt(m.value), f"{_fmt(m.ci95[0])} .. {_fmt(m.ci95[1])}",
                    "-" if err is None else f"{err:+.1%}{'' if inside else ' *'}"]
        row.append(unit)
        table.add_row(*row)
    return table


def _utilization_table(fast: FastResult, des: Result | None, top: int) -> Table:
    """The ``top`` busiest components by the fast path, with the DES's utilization beside when it ran."""
    util = Table(title=f"utilization (top {top})", title_justify="left")
    util.add_column("component")
    util.add_column("fast path", justify="right")
    if des is not None:
        util.add_column("DES", justify="right")
    for name, u in sorted(fast.utilization.items(), key=lambda kv: -kv[1])[:top]:
        cells = [name, f"{u:6.1%}"]
        if des is not None:
            cells.append(f"{des.utilization[name]:6.1%}" if name in des.utilization else "-")
        util.add_row(*cells)
    return util


def unstable_line(fast: FastResult) -> str:
    """What an unstable fast-path result says first: the rate it exceeds (Xmax, or below it the rate where a
    concurrency limit whose holding time grows with the load fills its slots)."""
    if fast.iops < fast.bounds.x_max_iops * (1 - 1e-6):
        return (f"UNSTABLE: the offered rate exceeds the {_value(fast.iops)} IOPS at which {fast.bottleneck}'s slots are "
                f"all held (its holding time grows with the load; Xmax = {_value(fast.bounds.x_max_iops)} IOPS takes "
                f"zero-load holds); the queue grows without bound")
    return (f"UNSTABLE: the offered rate exceeds Xmax = {_value(fast.bounds.x_max_iops)} IOPS (D_max at "
            f"{fast.bounds.bottleneck}); the queue grows without bound")


def _print_notes(scenario: Scenario, fast: FastResult, out: Console) -> None:
    """The flash device model the figures rest on, then the fast path's notes."""
    model = device_model_line(scenario)
    if model is not None:
        out.print(model, markup=False, highlight=False)
    for note in fast.notes:
        out.print(f"note: {note}", markup=False, highlight=False)


def cmd_analyze(args: argparse.Namespace, out: Console) -> int:
    scenario = load_with_overrides(args.file, args.set or [])
    if scenario.profile_index() is not None and not args.compare:
        return cmd_analyze_profile(scenario, args, out)
    if scenario.faults is not None:
        return _analyze_states(scenario, args, out)
    fast, des = _solve(scenario, args.compare)
    if args.json:
        data: dict[str, Any] = {"fast": fast.summary()}
        if des is not None:
            data["des"] = des.summary()
            data["relative_error"] = relative_errors(fast, des)
        if scenario.slos:
            data["slos"] = slo_verdicts(scenario, fast_figure(fast))
        print(dumps_json(data))
        return EXIT_OK if fast.stable else EXIT_UNSTABLE
    _print_analysis(scenario, scenario.name or "scenario", fast, des, args.top, out)
    if scenario.slos:
        print_slos(slo_verdicts(scenario, fast_figure(fast)), out, "fast path; p99 is the planner's screening estimate")
    return EXIT_OK if fast.stable else EXIT_UNSTABLE


def _solve(scenario: Scenario, compare: bool) -> tuple[FastResult, Result | None]:
    """The fast path's prediction of ``scenario``, and with ``compare`` the DES's result beside it."""
    fast = evaluate(scenario)
    if not compare:
        return fast, None
    from sim.des.engine import simulate
    from sim.plan.capacity_check import cross_checked

    return fast, cross_checked(scenario, simulate(scenario), fast)


def _print_analysis(scenario: Scenario, title: str, fast: FastResult, des: Result | None, top: int, out: Console) -> None:
    """One steady state: the figures (beside the DES's), the bounds, the utilization, the bottleneck and the notes."""
    if not fast.stable:  # first, as simulate does: no figure below is a steady state
        out.print(unstable_line(fast), markup=False)
    if des is not None:
        out.print(f"DES validity: {validity_words(des)}", markup=False, highlight=False)
    out.print(_compared_table(title, fast, des))
    if fast.workloads is not None:
        print_workloads(fast, des, out)
    b = fast.bounds
    out.print(f"bounds: Xmax = {_value(b.x_max_iops)} IOPS (D_max at {b.bottleneck}), Rmin = {_value(b.r_min_us)} us, "
              f"N* = {b.n_star:.1f} I/Os in flight", markup=False)
    out.print(_utilization_table(fast, des, top))
    line = f"{limit_label(fast.bottleneck, fast.utilization)}: {fast.bottleneck}"
    if des is not None:
        same = solvers_agree(des.bottleneck, fast.utilization, fast.bottleneck)
        line += f" ({'the DES agrees' if same else f'DES: {des.bottleneck}'}); DES stop: {des.stop_reason}"
        if any(not getattr(des, key).contains(getattr(fast, key)) for key, _, _ in COMPARED):
            line += "; * = fast path outside the DES 95% CI"
    out.print(line, markup=False)
    _print_notes(scenario, fast, out)


def _state_slo_figure(fast: FastResult, statistic: str) -> float | None:
    """The fast path's figure for a faults SLO statistic: the mean, or its p99 / p99.9 estimate (None for p50 / p95)."""
    if statistic == "mean":
        return fast.latency_mean_us
    from sim.plan.planner import p99_estimate_us

    if statistic == "p99":
        return p99_estimate_us(fast)
    return fast.latency_p999_us if statistic == "p999" else None


def _analyze_states(scenario: Scenario, args: argparse.Namespace, out: Console) -> int:
    """A scenario with ``faults``: every state (healthy, degraded, rebuilding), each labelled, then the rebuild and
    the SLO margin of each state by the fast path."""
    from sim.plan.faults import margin_pct, state_scenarios

    assert scenario.faults is not None
    statistic, slo_us = scenario.faults.slo_statistic, scenario.faults.slo_us
    solved = {name: _solve(s, args.compare) for name, s in state_scenarios(scenario)}
    margins = {name: margin_pct(slo_us, figure) if (figure := _state_slo_figure(fast, statistic)) is not None else None
               for name, (fast, _) in solved.items()}
    stable = all(fast.stable for fast, _ in solved.values())
    if args.json:
        states: dict[str, Any] = {}
        for name, (fast, des) in solved.items():
            states[name] = {"fast": fast.summary()} | ({"des": des.summary(), "relative_error": relative_errors(fast, des)}
                                                       if des is not None else {})
        as_given = solved[list(solved)[-1]][0]
        print(dumps_json({"fast": as_given.summary(), "states": states, "rebuild": _rebuild(scenario),
                          "slo": {"statistic": statistic, "us": slo_us, "margin_pct": margins}}))
        return EXIT_OK if stable else EXIT_UNSTABLE
    for name, (fast, des) in solved.items():
        out.print(f"\n== state: {name} ({STATE_WORDS[name]}) ==", markup=False, highlight=False)
        _print_analysis(scenario, f"{scenario.name or 'scenario'}: {name}", fast, des, min(args.top, 5), out)
        if margins[name] is not None:
            out.print(f"SLO {statistic} <= {slo_us:g} us: margin {margins[name]:+.1f}% (fast path)", markup=False, highlight=False)
    out.print("")
    last_fast, last_des = solved[list(solved)[-1]]
    _print_rebuild(scenario, last_fast, last_des, out)
    known = [(m, name) for name, m in margins.items() if m is not None]
    if known:
        m, name = min(known)
        out.print(f"lowest SLO margin: {m:+.1f}% ({name}, fast path)", markup=False, highlight=False)
    elif slo_us is not None:
        out.print(f"SLO {statistic} <= {slo_us:g} us: the fast path gives no {statistic}; `flashplan simulate` measures it",
                  markup=False, highlight=False)
    return EXIT_OK if stable else EXIT_UNSTABLE


STATE_WORDS = {
    "healthy": "the faults removed",
    "degraded": "the failed hardware gone, no rebuild",
    "rebuilding": "degraded, and the rebuild onto the replacements running",
}


def _print_rebuild(scenario: Scenario, fast: FastResult, des: Result | None, out: Console) -> None:
    """The rebuild under load and idle (fast path; the DES's too with ``--compare``)."""
    rebuild = _rebuild(scenario)
    if rebuild is None or scenario.faults is None or scenario.faults.rebuild is None:
        return
    out.print(fast_rebuild_line(rebuild, scenario.faults.rebuild.throttle), markup=False, highlight=False)
    if des is not None and des.rebuild is not None:
        out.print("DES " + rebuild_line(des.rebuild), markup=False, highlight=False)


def _rebuild(scenario: Scenario) -> dict[str, float | None] | None:
    """The fast path's rebuild figures of a scenario with a rebuild (JSON-safe: an endless rebuild's time as None)."""
    from sim.plan.faults import fast_rebuild_figures

    if scenario.faults is None or scenario.faults.rebuild is None:
        return None
    figures = fast_rebuild_figures(scenario)
    return None if figures is None else {k: (v if math.isfinite(v) else None) for k, v in figures.items()}
