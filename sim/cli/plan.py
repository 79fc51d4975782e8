"""``flashplan plan`` and ``flashplan cost``.

    flashplan plan REQUIREMENTS [--set dotted.path=VALUE ...] [--verify-top N] [--show N] [--space grid|wide]
                   [--jobs N] [--quiet] [--json]
    flashplan cost FILE [FILE2] [--set ...] [--perf X [--perf Y]] [--storage-only]
                   [--equal-raw-capacity] [--server-share F] [--lun-size-gb G] [--json]

``plan`` reads a requirements file (models/requirements.py), runs the planner
(sim/plan/planner.py) and prints the candidates ranked by cost, the DES-verified winner and
why every cheaper candidate was rejected; requirements no allowed configuration meets
exit 2 with the binding requirement named.

``cost`` prices one scenario, or two against each other: capex line by line, raw and
usable TB, $/usable TB, and $/KIOPS from a simulation (or from ``--perf``, a measured
throughput in any unit); with FILE2, price-performance of FILE against FILE2 in both
forms (models/cost.py explains them).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from models.common import dumps_json
from models.cost import AT_BOUND, AT_SIMULATED, Capex, Comparison, CostError, capex, price_performance, usd_per_kiops, usd_per_usable_tb
from models.requirements import ConsolidationRequirements, consolidation_from_data, load_requirements
from models.result import Metric
from models.scenario import Scenario, ScenarioFileError, format_validation_error, parse_override, read_scenario_data
from models.topology import San

MAX_JOBS = 256

def _bad(problems: list[tuple[str, str]]) -> Exception:
    from sim.errors import BadInput

    return BadInput(problems)


def _money(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.2f}"


def _num(x: float | None, digits: int = 0) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:,.{digits}f}"


def _q(x: float) -> str:
    """A throughput: whole numbers when large, 4 significant digits when small (relative figures)."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _ci(m: Metric) -> str:
    return f"{m.value:,.0f} ({m.ci95[0]:,.0f}..{m.ci95[1]:,.0f})" if m.has_ci else f"{m.value:,.0f} (CI unknown)"


# -- plan ------------------------------------------------------------------------------------

def cmd_plan(args: argparse.Namespace, out: Console) -> int:
    from sim.plan.planner import NoFeasiblePlan, plan

    req = _requirements(args)
    if isinstance(req, ConsolidationRequirements):
        return _plan_consolidated(req, args, out)
    try:
        with _progress(args.quiet) as progress:
            if args.space == "wide":
                from sim.plan.space import hardware_key, wide_candidates

                result = plan(req, verify_top=args.verify_top, space=wide_candidates(req, progress=progress), distinct=hardware_key,
                              jobs=args.jobs, progress=progress)
            else:
                result = plan(req, verify_top=args.verify_top, jobs=args.jobs, progress=progress)
    except NoFeasiblePlan as exc:
        raise _bad(exc.problems) from None
    if args.json:
        print(dumps_json(result.as_dict(), default=float))
        return 0
    _print_plan(result, out, args.show)
    return 0


def _requirements(args: argparse.Namespace) -> Any:
    """The requirements file with its overrides, after the plan options are checked (BadInput otherwise)."""
    try:
        overrides = dict(parse_override(s) for s in args.set or [])
        for failure in args.survive or []:
            overrides[f"survive.{failure}"] = True
        if "workloads" in read_scenario_data(args.file):
            return consolidation_from_data(read_scenario_data(args.file), overrides)
        req = load_requirements(args.file, overrides)
    except ScenarioFileError as exc:
        raise _bad(exc.problems) from None
    except ValidationError as exc:
        raise _bad(format_validation_error(exc)) from None
    if not 1 <= args.verify_top <= 1_000:
        raise _bad([("--verify-top", f"must be 1 .. 1,000, got {args.verify_top}")])
    if not 0 <= args.show <= 1_000_000:
        raise _bad([("--show", f"rows to print: must be 0 .. 1,000,000, got {args.show}")])
    if not 1 <= args.jobs <= MAX_JOBS:
        raise _bad([("--jobs", f"processes: must be 1 .. {MAX_JOBS}, got {args.jobs}")])
    return req


@contextmanager
def _progress(quiet: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar of the screen and the DES runs on stderr (a terminal only; stdout stays the plan or its JSON)."""
    err = Console(stderr=True)
    if quiet or not err.is_terminal:
        yield None
        return
    labels = {"build": "building candidates", "screen": "screening (fast path)", "verify": "verifying (DES runs)"}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(labels.get(stage, stage), total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _plan_consolidated(req: ConsolidationRequirements, args: argparse.Namespace, out: Console) -> int:
    """``plan`` of a requirements file with a ``workloads`` list (sim/plan/consolidated.py)."""
    from sim.plan.consolidated import plan_consolidated
    from sim.plan.planner import NoFeasiblePlan

    try:
        result = plan_consolidated(req, verify_top=max(1, min(args.verify_top, 1_000)))
    except NoFeasiblePlan as exc:
        raise _bad(exc.problems) from None
    if args.json:
        print(dumps_json(result.as_dict(), default=float))
        return 0
    w = result.winner
    out.print(f"{req.name or 'plan'}: {w.label}, ${w.capex.total_usd:,.0f}, {w.capex.usable_tb:.2f} TB usable "
              f"(DES-verified; {len(result.rejected)} configurations rejected, {result.des_runs} DES runs)", markup=False)
    table = Table(title="objectives on the winner", title_justify="left")
    for column in ("workload", "objective", "fast path", "DES", "DES verdict (95% CI)"):
        table.add_column(column)
    for fast, des in zip(w.fast_verdicts, w.des_verdicts, strict=True):
        sign = "<=" if fast["kind"] == "max" else ">="
        table.add_row(fast["workload"], f"{fast['metric']} {sign} {fast['bound']:,.0f}", _num(fast["value"], 1),
                      _num(des["value"], 1), des["verdict"])
    out.print(table)
    reasons: dict[str, int] = {}
    for c in result.rejected:
        reasons[c.stage] = reasons.get(c.stage, 0) + 1
    out.print("rejected: " + (", ".join(f"{n} at {s}" for s, n in reasons.items()) or "none"), markup=False)
    return 0


def _print_failure_states(w: Any, req: Any, out: Console) -> None:
    """The winner's failure states (``survive``): DES latency, rebuild and SLO margin of each."""
    slo = req.latency_slo
    for name, state in w.failure_states.items():
        if state.des is None:
            continue
        d = state.des
        metric = d.latency_mean_us if slo.statistic == "mean" else d.latency_p99_us
        rebuild = (f", rebuild {d.rebuild.rate_mbps.value:,.0f} MB/s per drive: {d.rebuild.time_s / 3600:,.2f} h"
                   if d.rebuild is not None else "")
        out.print(f"  {name}: DES {slo.statistic} {_ci(metric)} us at {d.iops.value:,.0f} IOPS ({d.validity}), SLO margin "
                  f"{state.margin_pct(req):+.1f}%{rebuild} (bottleneck {state.bottleneck_words})", markup=False)


def _ranked_table(result: Any, show: int) -> Table:
    """The ``show`` cheapest candidates that meet the requirements (DES-verified ones marked)."""
    stat = result.requirements.latency_slo.statistic
    t = result.target_iops
    table = Table(title=f"Candidates that meet the requirements, cheapest first (* = DES-verified: {stat} latency "
                        f"with 95% CI; others: fast path{'' if stat == 'mean' else ' estimate'}; headroom = max IOPS "
                        f"over the target; $/KIOPS {AT_BOUND}, the fast path's max IOPS)", title_justify="left")
    for col in ("#", "configuration", "capex $", "TB", "$/KIOPS at bound", "headroom", f"{stat} us", "bottleneck"):
        table.add_column(col, justify="left" if col in ("configuration", "bottleneck") else "right",
                         no_wrap=col not in ("bottleneck", "configuration"), overflow="fold",
                         min_width=12 if col == "bottleneck" else None)
    for i, c in enumerate(result.ranked[:show], start=1):
        if c.des is not None:
            latency = _ci(c.des.latency_mean_us if stat == "mean" else c.des.latency_p99_us)
        elif c.fast is not None:
            latency = _num(c.fast.latency_mean_us if stat == "mean" else c.p99_estimate_us)
        else:
            latency = "-"
        table.add_row(f"{i}{'*' if c.verified else ''}", c.label, _money(c.capex_usd), f"{c.usable_tb:.2f}",
                      _money(c.usd_per_kiops), f"{_num(c.headroom_pct(t))}%", latency,
                      c.bottleneck_words or "-")
    return table


def _print_plan(result: Any, out: Console, show: int) -> None:
    req = result.requirements
    slo = req.latency_slo
    wl = req.workload if isinstance(req.workload, str) else f"inline {req.workload.kind}"
    if req.target.iops is not None:
        target = f"{req.target.iops:,.0f} IOPS"
    else:
        target = f"{req.target.mbps:,.0f} MB/s = {result.target_iops:,.0f} IOPS"
    out.print(f"Plan: {req.name or 'requirements'}", markup=False)
    out.print(
        f"  {req.platform}, workload {wl}, target {target}, design rate "
        f"{result.design_iops:,.0f} IOPS ({req.growth_words()}); {slo.statistic} latency <= {slo.us:g} us"
        + ("; no capacity requirement" if req.usable_tb is None else f"; >= {req.usable_tb:g} TB usable")
        + f", protection {req.protection}"
        + (f"; budget ${req.budget_usd:,.0f}" if req.budget_usd else ""),
        markup=False,
    )
    out.print(
        f"  {result.screened:,} candidates screened ({result.fast_evaluated:,} by the fast path, "
        f"{result.invalid_combinations:,} combinations refused by the topology rules) in {result.screen_wall_s:.2f} s; "
        f"{result.des_runs} DES runs in {result.des_wall_s:.2f} s",
        markup=False,
    )
    out.print(_ranked_table(result, show))
    t = result.target_iops
    w = result.winner
    assert w.des is not None
    out.print(
        f"winner: {w.label}: ${w.capex_usd:,.0f}, {w.usable_tb:.2f} TB usable (${w.usd_per_usable_tb:,.0f}/TB, "
        f"${_money(w.usd_per_kiops)}/KIOPS {AT_BOUND}, ${_money(usd_per_kiops(w.capex_usd, w.des.iops.value))}/KIOPS "
        f"{AT_SIMULATED}), DES {slo.statistic} latency "
        f"{_ci(w.des.latency_mean_us if slo.statistic == 'mean' else w.des.latency_p99_us)} us at "
        f"{w.des.iops.value:,.0f} IOPS (DES validity: {w.des.validity}), headroom {_num(w.headroom_pct(t))}% over the target, "
        f"bottleneck {w.bottleneck_words}",
        markup=False,
    )
    _print_failure_states(w, req, out)
    cheaper = result.cheaper_rejected
    counts: dict[str, int] = {}
    for c in cheaper:
        counts[c.stage] = counts.get(c.stage, 0) + 1
    summary = ", ".join(f"{n:,} at {stage}" for stage, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "none"
    if not cheaper:
        out.print("no cheaper candidate was rejected: the winner is the cheapest allowed configuration", markup=False)
        for note in result.notes:
            out.print(f"note: {note}", markup=False)
        return
    rej = Table(title=f"{len(cheaper):,} cheaper candidates rejected ({summary}); closest in price first", title_justify="left")
    for col in ("capex $", "configuration", "why rejected"):
        rej.add_column(col, justify="right" if col == "capex $" else "left")
    for c in cheaper[:show]:
        rej.add_row(_money(c.capex_usd), c.label, c.rejection or "")
    if len(cheaper) > show:
        rej.add_row("...", f"{len(cheaper) - show:,} more (--show N, or --json for all)", "")
    out.print(rej)
    for note in result.notes:
        out.print(f"note: {note}", markup=False)


# -- cost ------------------------------------------------------------------------------------

def _load(path: str, sets: list[str]) -> Scenario:
    from sim.cli.flashplan import load_with_overrides

    return load_with_overrides(path, sets)


def _throughput(scenario: Scenario, perf: float | None) -> tuple[float, tuple[float, float], str]:
    """(value, 95% interval, unit): a given throughput, or the simulated IOPS with its CI."""
    if perf is not None:
        return perf, (perf, perf), "as given (--perf)"
    from sim.des.engine import simulate

    result = simulate(scenario)
    return result.iops.value, result.iops.ci95, "simulated IOPS"


def _throughput_bound(scenario: Scenario) -> float | None:
    """The fast path's throughput bound Xmax of a steady scenario (None for a load profile or an unbounded one)."""
    if scenario.profile_index() is not None:
        return None
    from sim.analytic import evaluate

    x_max = evaluate(scenario).bounds.x_max_iops
    return x_max if math.isfinite(x_max) and x_max > 0 else None


def _capex_or_bad(scenario: Scenario, field: str, **kwargs: Any) -> Capex:
    try:
        return capex(scenario.topology, **kwargs)  # type: ignore[arg-type]
    except CostError as exc:
        raise _bad([(field, str(exc))]) from None


def _check_cost_options(args: argparse.Namespace, files: list[str]) -> list[float]:
    """The throughputs given with --perf, after every option of ``flashplan cost`` is checked (BadInput otherwise)."""
    perfs: list[float] = args.perf or []
    problems: list[tuple[str, str]] = []
    if len(perfs) > len(files):
        problems.append(("--perf", f"give at most one --perf per file ({len(files)}), got {len(perfs)}"))
    for p in perfs:
        if not (p > 0 and math.isfinite(p)):
            problems.append(("--perf", f"must be a throughput > 0, got {p}"))
    if args.server_share is not None and not 0 < args.server_share <= 1:  # also refuses nan
        problems.append(("--server-share", f"must be in (0, 1], got {args.server_share}"))
    if args.lun_size_gb is not None and not 0 < args.lun_size_gb < 1e9:
        problems.append(("--lun-size-gb", f"must be a size in GB > 0 and < 1e9, got {args.lun_size_gb}"))
    if args.equal_raw_capacity and not args.file2:
        problems.append(("--equal-raw-capacity", "compares two files: give FILE2"))
    if args.equal_raw_capacity and args.server_share is not None:
        problems.append(("--server-share", "cannot be combined with --equal-raw-capacity, which sets the share"))
    if problems:
        raise _bad(problems)
    return perfs


def _cost_report(args: argparse.Namespace, files: list[str], perfs: list[float]) -> dict[str, Any]:
    """Capex, throughput and $/KIOPS of each file, and the price-performance of the first against the second."""
    scenarios = [_load(f, args.set or []) for f in files]
    for f, s in zip(files, scenarios, strict=True):
        if s.topology.kind == "generic":
            raise _bad([(f"{f}: topology.kind", "a generic (textbook) topology has no hardware to price; "
                                              "allowed: direct_nvme, san, exflash, zvm_edev")])
    shares = [args.server_share or 1.0] * len(files)
    if args.equal_raw_capacity:
        sans = [isinstance(s.topology, San) for s in scenarios]
        if sans.count(True) != 1:
            raise _bad([("--equal-raw-capacity", "pro-rates a storage server to the other file's raw capacity: "
                                                 "exactly one of the two files must be a SAN scenario")])
        san_i = sans.index(True)
        other = _capex_or_bad(scenarios[1 - san_i], files[1 - san_i])
        server_raw = _capex_or_bad(scenarios[san_i], files[san_i]).raw_tb
        shares[san_i] = min(1.0, other.raw_tb / server_raw)
    caps = [_capex_or_bad(s, f, storage_server_share=share, storage_only=args.storage_only, lun_size_gb=args.lun_size_gb)
            for s, f, share in zip(scenarios, files, shares, strict=True)]
    throughputs = [_throughput(s, perfs[i] if i < len(perfs) else None) for i, s in enumerate(scenarios)]
    report: dict[str, Any] = {"configurations": []}
    for f, s, cap, (value, ci, unit) in zip(files, scenarios, caps, throughputs, strict=True):
        bound = _throughput_bound(s)
        report["configurations"].append({
            "file": f, "name": s.name, "capex": cap.as_dict(), "throughput": {"value": value, "ci95": list(ci), "unit": unit},
            "usd_per_kiops": {"value": usd_per_kiops(cap.total_usd, value),
                              "ci95": [usd_per_kiops(cap.total_usd, ci[1]), usd_per_kiops(cap.total_usd, ci[0])],
                              "basis": AT_SIMULATED if unit == "simulated IOPS" else "at the given throughput"},
            "usd_per_kiops_at_bound": None if bound is None else {
                "value": usd_per_kiops(cap.total_usd, bound), "x_max_iops": bound, "basis": AT_BOUND},
            "usd_per_usable_tb": usd_per_usable_tb(cap.total_usd, cap.usable_tb),
        })
    if len(files) == 2:
        (va, cia, _), (vb, cib, _) = throughputs
        cmp = Comparison(caps[0], caps[1], price_performance(caps[0].total_usd, va, caps[1].total_usd, vb))
        low = price_performance(caps[0].total_usd, cia[0], caps[1].total_usd, cib[1])
        high = price_performance(caps[0].total_usd, cia[1], caps[1].total_usd, cib[0])
        report["price_performance"] = {
            **cmp.result.as_dict(),
            "better_pct_ci95": [low.better_pct, high.better_pct],
            "perf_per_dollar_ratio_ci95": [low.perf_per_dollar_ratio, high.perf_per_dollar_ratio],
            "definition": "better_pct = 100 * (1 - (cost_a/perf_a) / (cost_b/perf_b)); "
                          "perf_per_dollar_ratio = (perf_a/cost_a) / (perf_b/cost_b)",
            "storage_only": args.storage_only, "equal_raw_capacity": args.equal_raw_capacity,
        }
    return report


def _print_cost_report(report: dict[str, Any], out: Console) -> None:
    for conf in report["configurations"]:
        title = conf["name"] or conf["file"]
        table = Table(title=f"{title}: capex", title_justify="left")
        for col in ("item", "model", "quantity", "unit $", "total $", "price source"):
            table.add_column(col, justify="right" if col in ("quantity", "unit $", "total $") else "left", overflow="fold")
        for ln in conf["capex"]["lines"]:
            table.add_row(ln["item"], ln["model"], f"{ln['quantity']:g}", _money(ln["unit_usd"]), _money(ln["total_usd"]),
                          ln["source"])
        out.print(table)
        c = conf["capex"]
        tp = conf["throughput"]
        kiops = conf["usd_per_kiops"]
        out.print(f"  capex ${c['total_usd']:,.0f}; raw {c['raw_tb']:.2f} TB, usable {c['usable_tb']:.2f} TB, "
                  f"${conf['usd_per_usable_tb']:,.0f} per usable TB", markup=False)
        per = f"KIOPS {AT_SIMULATED}" if tp["unit"] == "simulated IOPS" else "1,000 units of the given throughput"
        out.print(f"  throughput {_q(tp['value'])} ({tp['unit']}; 95% CI {_q(tp['ci95'][0])}..{_q(tp['ci95'][1])}); "
                  f"${kiops['value']:,.2f} per {per} (95% CI {kiops['ci95'][0]:,.2f}..{kiops['ci95'][1]:,.2f})", markup=False)
        bound = conf["usd_per_kiops_at_bound"]
        if bound is not None:
            out.print(f"  ${bound['value']:,.2f} per KIOPS {AT_BOUND} ({_q(bound['x_max_iops'])} IOPS, the fast path's Xmax: "
                      "the figure `flashplan plan` ranks by)", markup=False)
        for note in c["notes"]:
            out.print(f"  note: {note}", markup=False)
    if "price_performance" in report:
        pp = report["price_performance"]
        a, b = (conf["name"] or conf["file"] for conf in report["configurations"])
        out.print(f"price-performance of {a} against {b}:", markup=False)
        out.print(f"  cost per unit of throughput: {pp['cost_per_unit_a']:,.4g} vs {pp['cost_per_unit_b']:,.4g} -> "
                  f"{pp['better_pct']:.1f}% better (lower cost per unit; 95% CI {pp['better_pct_ci95'][0]:.1f}.."
                  f"{pp['better_pct_ci95'][1]:.1f}%)", markup=False)
        out.print(f"  throughput per dollar: {pp['perf_per_dollar_ratio']:.3g}x ({pp['perf_per_dollar_gain_pct']:+,.0f}%; 95% CI "
                  f"{pp['perf_per_dollar_ratio_ci95'][0]:.3g}x..{pp['perf_per_dollar_ratio_ci95'][1]:.3g}x)", markup=False)
        out.print("  (better % = 1 - (cost_a/perf_a)/(cost_b/perf_b), the reading of seed 000's 'x% better'; "
                  "the ratio form divides throughput per dollar)", markup=False)


def cmd_cost(args: argparse.Namespace, out: Console) -> int:
    files = [args.file] + ([args.file2] if args.file2 else [])
    report = _cost_report(args, files, _check_cost_options(args, files))
    if args.json:
        print(dumps_json(report))
    else:
        _print_cost_report(report, out)
    return 0


REQUIREMENTS_EXAMPLE = """\
requirements file (YAML, TOML or JSON; `flashplan plan examples/plan/ibmi_oltp.yaml`):
  name: OLTP on IBM i
  platform: power10_ibmi            # power10_ibmi | linuxone | x86_exflash | zvm_edev
  workload: oltp_4k_70_30           # a preset key or an inline workload (kind: closed | open | bursty)
  target: {iops: 400000}            # or {mbps: 3000}
  latency_slo: {statistic: p99, us: 1000}
  usable_tb: 6                      # optional: leave it out when the question has no capacity
  protection: redundant             # none | redundant | mirror | parity
  growth_headroom_pct: 25           # optional: plan for the target x 1.25
  budget_usd: 60000                 # optional
  candidates:                       # optional: limits on what the planner tries
    devices: [ES5F, ES5H]
    layouts: [ibmi_mirror]
"""


def requirements_help() -> str:
    """The requirements file and its ``candidates:`` block, for ``plan --help`` (from the model's field descriptions)."""
    import textwrap

    from models.catalog import CatalogError
    from models.requirements import CANDIDATES_BLOCK, PLATFORMS, CandidateSpace, platform_devices

    lines = [REQUIREMENTS_EXAMPLE, textwrap.fill(" ".join(CANDIDATES_BLOCK.split()).replace("``", "`"), width=100)]
    for name, field in CandidateSpace.model_fields.items():
        lines.append(textwrap.fill(f"{name}: {field.description or ''}", width=100, initial_indent="  ",
                                   subsequent_indent="      ", break_on_hyphens=False))
    lines.append("")
    try:
        takes = "; ".join(f"{p}: {', '.join(platform_devices(p))}" for p in PLATFORMS)
    except CatalogError:  # the catalog is read again, with its error, by the command that needs it
        takes = "see `flashplan catalog` (the catalog could not be read)"
    lines.append(textwrap.fill(f"models each platform takes (simulate, plan and the app apply the same rule): {takes}",
                               width=100, break_on_hyphens=False))
    lines.append("Every field: `flashplan schema --requirements` prints the JSON schema.")
    return "\n".join(lines)


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("plan", help="find the cheapest configuration that meets a requirements file",
                              description="Find the cheapest configuration that meets a requirements file: the planner\n"
                                          "screens every candidate with the fast path and confirms the cheapest with the DES.",
                              epilog=requirements_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", help="requirements file (YAML, TOML or JSON)")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a requirements field (repeatable)")
    p.add_argument("--verify-top", type=int, default=3, metavar="N", help="candidates to confirm with the DES (default 3)")
    p.add_argument("--show", type=int, default=10, metavar="N", help="rows of each table to print (default 10)")
    p.add_argument("--space", choices=("grid", "wide"), default="grid",
                   help="candidates: the planner's grid (default) or every catalog device, count, namespaces, adapters and "
                        "settings (about 15,000 for IBM i), finalists verified as distinct purchases")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="processes that screen and verify (default 1: in this process; more help only with spare cores); "
                        "the plan is the same for any N")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr (it is shown only on a terminal)")
    p.add_argument("--json", action="store_true", help="print the whole plan as JSON")
    p.add_argument("--survive", action="append", choices=("drive", "adapter"),
                   help="the SLO must also hold with one drive failed (and while it rebuilds) / one adapter failed "
                        "(repeatable; sets survive.drive / survive.adapter; rebuild settings: --set survive.rebuild.rate_mbps=...)")
    p.set_defaults(func=cmd_plan)
    p = subparsers.add_parser("cost", help="capex, usable TB, $/KIOPS of a scenario; price-performance of two")
    p.add_argument("file")
    p.add_argument("file2", nargs="?", help="a second scenario: price-performance of FILE against FILE2")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a field of both scenarios (repeatable)")
    p.add_argument("--perf", action="append", type=float, metavar="X",
                   help="use this throughput (any unit, the same for both) instead of simulating; once per file, in order")
    p.add_argument("--storage-only", action="store_true", help="leave host SAN adapters out (seed 000's storage costs)")
    p.add_argument("--equal-raw-capacity", action="store_true",
                   help="charge the SAN side only the storage-server share matching the other side's raw capacity (seed 000)")
    p.add_argument("--server-share", type=float, metavar="F", help="fraction (0..1] of a storage server's price to charge")
    p.add_argument("--lun-size-gb", type=float, metavar="G", help="SAN LUN size for the usable capacity (default: the server's capacity)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cost)
