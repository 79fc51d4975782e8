"""How long ``flashplan calibrate`` takes and what costs it: wall and CPU seconds, the costliest runs and records.

    python -m bench.calibration_timing                 # the full calibration, screened, --jobs 2
    python -m bench.calibration_timing --full-budget   # every scenario at the full budget (the old run)
    python -m bench.calibration_timing --only S3 --top 5

It runs ``calibration.evaluate.evaluate`` as ``flashplan calibrate`` does (same budgets, same screen,
``--jobs`` worker processes) and prints:

* wall seconds and CPU seconds (this process plus its worker processes, user + system): on a machine
  shared with other work the CPU seconds are the figure to compare, the wall follows from them;
* the phases in this process: loading the records, simulating, predicting;
* the runs (distinct scenarios; ``[full]`` = a screened record's second pass: with ``--jobs`` above 1 the screen run
  carried on from its pause to the full budget, so its CPU seconds are the part after the screen) by CPU seconds;
* the records by CPU seconds: each record is charged its scenarios' runs, a run shared by n records
  one n-th to each (``alone``: the runs it needs, unshared);
* which pass gave each record's value (screen, full, screen+full) and the gate's counts.

The run stops on precision or I/O counts: every figure but the seconds is the same run to run.
Nothing is written (no latest.json, no parity plot). Build the compiled engine first for figures that
mean something (``python -m sim.native.build``); ``FLASHPLAN_INTERPRETED=1`` is several times slower.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence

from calibration.evaluate import FULL_COST_SUFFIX, FULL_RUN, SCREEN_RUN, Outcome, Schedule, evaluate
from calibration.records import SYSTEMS, Record, load_records


def _cpu_split() -> tuple[float, float]:
    """User + system CPU seconds of this process, and of its reaped children (the pool's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its reaped children (the pool's workers)."""
    return sum(_cpu_split(), 0.0)


def record_costs(records: Sequence[Record], costs: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Per record id: (share, alone) CPU seconds. ``costs`` are per scenario key (a second pass's under the key plus
    ``FULL_COST_SUFFIX``); a key no run was filed under (another key of the same scenario ran it) costs nothing here."""
    users: dict[str, int] = defaultdict(int)
    for r in records:
        for key in {ref.key() for ref in r.scenarios()}:
            users[key] += 1
    out = {}
    for r in records:
        keys = {ref.key() for ref in r.scenarios()}
        runs = [(costs.get(k, 0.0) + costs.get(k + FULL_COST_SUFFIX, 0.0), users[k]) for k in keys]
        out[r.id] = (sum((c / n for c, n in runs), 0.0), sum((c for c, _ in runs), 0.0))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.calibration_timing", description=__doc__.split("\n")[0])
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--only", choices=SYSTEMS, help="one system's records")
    p.add_argument("--full-budget", action="store_true", help="no screen: every scenario at the full budget")
    p.add_argument("--top", type=int, default=10, help="rows of the run and record tables (default 10)")
    args = p.parse_args(argv)
    if not 1 <= args.jobs <= 256 or args.top < 1:
        print("--jobs must be 1..256 and --top at least 1", file=sys.stderr)
        return 2

    t0, c0, (p0, k0) = time.perf_counter(), _cpu_seconds(), _cpu_split()
    records = load_records(only=args.only)
    t1 = time.perf_counter()
    schedule = Schedule()
    outcomes: list[Outcome] = evaluate(records, run=FULL_RUN, workers=args.jobs, schedule=schedule,
                                       screen=None if args.full_budget else SCREEN_RUN)
    t2 = time.perf_counter()
    rows = [o.as_dict() for o in outcomes]
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    runs = schedule.costs

    mode = "full budget" if args.full_budget else f"screened ({', '.join(f'{k}={v}' for k, v in SCREEN_RUN.items())})"
    print(f"calibration timing: {len(records)} records{f' of {args.only}' if args.only else ''}, {mode}, --jobs {args.jobs}")
    print(f"  wall {wall:.1f} s   CPU {cpu:.1f} s (this process and its workers, user + system)")
    print(f"  load records {t1 - t0:.2f} s wall; load + simulate + predict {t2 - t1:.1f} s wall")
    p1, k1 = _cpu_split()
    if args.jobs > 1:  # how well the runs fill the workers: the wall they were given against the CPU they used
        print(f"  this process {p1 - p0:.1f} CPU-s, the workers {k1 - k0:.1f} CPU-s: {k1 - k0:.1f} / {args.jobs} = "
              f"{(k1 - k0) / args.jobs:.1f} s if they never wait; the workers idle or wait "
              f"{max(0.0, args.jobs * (t2 - t1) - (k1 - k0)):.1f} worker-seconds of {args.jobs} x {t2 - t1:.1f}")
    first = sum(v for k, v in runs.items() if not k.endswith(FULL_COST_SUFFIX))
    second = sum(v for k, v in runs.items() if k.endswith(FULL_COST_SUFFIX))
    n_second = sum(1 for k in runs if k.endswith(FULL_COST_SUFFIX))
    print(f"  runs: {len(runs) - n_second} first pass ({first:.1f} CPU-s), {n_second} second pass ({second:.1f} CPU-s); "
          f"everything else {max(0.0, cpu - first - second):.1f} CPU-s")
    budgets = Counter(r["budget"] for r in rows)
    print(f"  values from: {', '.join(f'{k} {v}' for k, v in sorted(budgets.items()))}")
    statuses = Counter(r["status"] for r in rows)
    print(f"  statuses: {statuses['within']} within, {statuses['conflict']} conflict, {statuses['known_gap']} known gap, "
          f"{statuses['outside']} outside")

    if schedule.timeline:  # the screened pool: what each worker ran and when it ended (the other may end sooner)
        end = max(e for *_, e in schedule.timeline)
        for w in sorted({w for w, *_ in schedule.timeline}):
            mine = [(k, s, e) for x, k, _, s, e in schedule.timeline if x == w]
            kinds = Counter(k for k, _, _ in mine)
            busy = sum((e - s for _, s, e in mine), 0.0)
            last = max(e for *_, e in mine)
            print(f"  worker {w}: {len(mine)} runs ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), busy "
                  f"{busy:.1f} s wall, done {last:.1f} s of {end:.1f} s")
    print(f"\ncostliest runs (CPU s, top {args.top}):")
    for key, sec in sorted(runs.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {sec:6.2f}  {key[:140]}")
    per_record = record_costs(records, runs)
    print(f"\ncostliest records (CPU s: share of shared runs / alone, top {args.top}):")
    by_id = {r["id"]: r for r in rows}
    for rid, (share, alone) in sorted(per_record.items(), key=lambda kv: (-kv[1][0], kv[0]))[:args.top]:
        print(f"  {share:6.2f} / {alone:6.2f}  {rid}  ({by_id[rid]['budget']}, {by_id[rid]['status']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
