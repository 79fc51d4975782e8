"""``flashplan growth FILE --slo-p99-us X [--rate-per-year R] [--start YYYY-MM-DD] ...``.

How far the scenario's load can grow before its p99 breaks the SLO (``sim.plan.growth``): a fast-path
bisection on a load multiplier, then a DES run at the breaking point (``--no-verify`` skips it);
with ``--rate-per-year`` the date it breaks, counted from ``--start`` (default: today).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
from typing import Any

from rich.console import Console

from models.common import dumps_json
from models.numbers import format_number as _fmt
from sim.cli.flashplan import load_with_overrides
from sim.errors import EXIT_OK, BadInput
from sim.plan.growth import Growth, breaking_point


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("growth", help="load growth until a p99 SLO breaks (fast path, DES-verified), and when")
    p.add_argument("file")
    p.add_argument("--slo-p99-us", type=float, required=True, metavar="US", help="the p99 latency SLO in microseconds")
    p.add_argument("--rate-per-year", type=float, metavar="R", help="yearly load growth, e.g. 0.25 for 25%% a year")
    p.add_argument("--start", metavar="YYYY-MM-DD", help="the date today's load is measured (default: today)")
    p.add_argument("--max-factor", type=float, default=100.0, help="largest load multiplier searched (default 100)")
    p.add_argument("--des-steps", type=int, default=4, help="extra DES runs when the DES disagrees with the fast path (default 4)")
    p.add_argument("--no-verify", action="store_true", help="fast path only: skip the DES run at the breaking point")
    p.add_argument("--set", action="append", metavar="dotted.path=VALUE", help="override a field (repeatable), e.g. --set run.max_ios=200000")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_growth)


def _checked(args: argparse.Namespace) -> dt.date | None:
    """The start date; BadInput naming the first bad option."""
    if not (math.isfinite(args.slo_p99_us) and args.slo_p99_us > 0):
        raise BadInput([("--slo-p99-us", f"must be a number > 0, got {args.slo_p99_us:g}")])
    if not (math.isfinite(args.max_factor) and 1 < args.max_factor <= 1e6):
        raise BadInput([("--max-factor", f"must be > 1 and <= 1,000,000, got {args.max_factor:g}")])
    if not 0 <= args.des_steps <= 20:
        raise BadInput([("--des-steps", f"must be 0 .. 20, got {args.des_steps}")])
    if args.rate_per_year is not None and not (math.isfinite(args.rate_per_year) and 0 < args.rate_per_year <= 10):
        raise BadInput([("--rate-per-year", f"must be > 0 and <= 10 (1000% a year), got {args.rate_per_year:g}")])
    if args.start is None:
        return dt.date.today() if args.rate_per_year is not None else None
    try:
        return dt.date.fromisoformat(args.start)
    except ValueError:
        raise BadInput([("--start", f"not a date YYYY-MM-DD, got {args.start!r}")]) from None


def print_growth(name: str, g: Growth, rate: float | None, start: dt.date | None, out: Console) -> None:
    def say(text: str) -> None:
        out.print(text, markup=False, highlight=False)

    say(f"growth of {name}: p99 SLO {_fmt(g.slo_p99_us)} us")
    say(f"  today (x1): estimated p99 {_fmt(g.today_p99_us)} us (fast path)")
    if g.factor is None:
        say(f"  {g.note}")
        return
    if g.note:
        say(f"  {g.note}")
    say(f"  fast path: the SLO breaks at x{g.factor:.4g} today's load ({(g.factor - 1):+.1%}), "
        f"{len(g.evaluations)} evaluations")
    for d in g.des:
        p = d.p99
        ci = f"95% CI {_fmt(p.ci95[0])} .. {_fmt(p.ci95[1])}" if p.has_ci else "no CI"
        say(f"  DES at x{d.factor:.4g}: p99 {_fmt(p.value)} us ({ci}, {d.validity}): {d.verdict(g.slo_p99_us)}")
    _print_answer(g, rate, start, say)


def _print_answer(g: Growth, rate: float | None, start: dt.date | None, say: Any) -> None:
    """The DES and fast-path breaking points side by side, the trusted one with why, and its date."""
    des = g.des_factor
    if g.des:
        lo, hi = g.des_bracket
        bracket = f"bracket x{_fmt(lo) if lo else '?'} .. x{_fmt(hi) if hi else '?'}"
        des_text = f"x{des:.4g} ({bracket})" if des is not None and not g.confirmed else (
            f"x{des:.4g} (confirmed: the SLO lies within the 95% interval)" if des is not None else f"open ({bracket})")
        say(f"  breaking point: DES {des_text}; fast path x{g.factor:.4g}")
    best = g.best_factor
    if best is None:
        return
    say(f"  trusted: {'DES' if g.trusted == 'des' else 'fast path'} x{best:.4g} - {g.trusted_because}")
    if rate is None or start is None:
        return
    years = g.years(rate)
    if years is None:
        return
    if years < 0:
        say(f"  at {rate * 100:.4g}% a year: already broken (the SLO breaks at x{best:.4g}, below today's load)")
    else:
        when = g.date_words(rate, start)
        say(f"  at {rate * 100:.4g}% a year from {start.isoformat()}: breaks after {years:,.2f} years, "
            + (f"on {when}" if g.breaks_on(rate, start) is not None else when))


def cmd_growth(args: argparse.Namespace, out: Console) -> int:
    start = _checked(args)
    scenario = load_with_overrides(args.file, args.set or [])
    growth = breaking_point(scenario, args.slo_p99_us, max_factor=args.max_factor, verify=not args.no_verify,
                            des_steps=args.des_steps)
    if args.json:
        print(dumps_json({"scenario": scenario.name, **growth.as_dict(args.rate_per_year, start)}))
    else:
        print_growth(scenario.name or args.file, growth, args.rate_per_year, start, out)
    return EXIT_OK
