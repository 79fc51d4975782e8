"""Planner benchmark: candidates screened and wall time to a DES-verified winner.

Target (issue: capacity planning): >= 500 candidates screened and the winner DES-verified
in <= 10 s on 2 cores. The requirements are examples/plan/ibmi_oltp.yaml (IBM i on Power10,
OLTP 4K 70/30, 600K IOPS + 25% growth, p99 <= 1 ms, 6 TB mirrored), whose candidate space
is every IBM i drive x count x namespaces x EJ1Y/EJ1X adapter count the topology rules allow.

    python -m bench.planner [--quick]

``--quick`` verifies one finalist instead of three (the winner is still DES-verified).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "examples" / "plan" / "ibmi_oltp.yaml"
TARGET_CANDIDATES = 500
TARGET_WALL_S = 10.0


def measure(quick: bool = False, path: Path = REQUIREMENTS) -> dict[str, Any]:
    """Plan ``path`` once and return the figures: candidates screened, DES runs, wall times, the winner.

    The wall time covers enumeration, screening and DES verification (reading the file excluded).
    """
    from models.requirements import load_requirements
    from sim.plan.planner import plan

    req = load_requirements(path)
    verify_top = 1 if quick else 3
    t0 = time.perf_counter()
    result = plan(req, verify_top=verify_top)
    wall = time.perf_counter() - t0
    w = result.winner
    assert w.des is not None
    slo = req.latency_slo
    metric = w.des.latency_mean_us if slo.statistic == "mean" else w.des.latency_p99_us
    return {
        "requirements": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "verify_top": verify_top,
        "candidates_screened": result.screened,
        "fast_path_evaluations": result.fast_evaluated,
        "invalid_combinations": result.invalid_combinations,
        "des_runs": result.des_runs,
        "screen_wall_s": result.screen_wall_s,
        "des_wall_s": result.des_wall_s,
        "wall_s": wall,
        "winner": w.label,
        "winner_capex_usd": w.capex_usd,
        "winner_des_latency_us": metric.value,
        "winner_des_latency_ci95": list(metric.ci95),
        "slo": f"{slo.statistic} <= {slo.us:g} us",
        "cpus": os.cpu_count(),
        "target_candidates": TARGET_CANDIDATES,
        "target_wall_s": TARGET_WALL_S,
        "meets_target": result.screened >= TARGET_CANDIDATES and wall <= TARGET_WALL_S,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.planner", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="verify one finalist instead of three")
    args = parser.parse_args(argv)
    m = measure(quick=args.quick)
    print(f"Planner benchmark ({m['requirements']}, verify_top={m['verify_top']}, {m['cpus']} CPUs visible)")
    print(f"  candidates screened      {m['candidates_screened']:>8,}   (target >= {TARGET_CANDIDATES})")
    print(f"  by the fast path         {m['fast_path_evaluations']:>8,}")
    print(f"  refused by the topology  {m['invalid_combinations']:>8,}")
    print(f"  screening wall time      {m['screen_wall_s']:>8.2f} s")
    print(f"  DES runs                 {m['des_runs']:>8}     in {m['des_wall_s']:.2f} s")
    print(f"  total wall time          {m['wall_s']:>8.2f} s   (target <= {TARGET_WALL_S:g} s)   "
          f"ratio {m['wall_s'] / TARGET_WALL_S:.2f} of the target")
    lo, hi = m["winner_des_latency_ci95"]
    print(f"  winner: {m['winner']} (${m['winner_capex_usd']:,.0f}); DES {m['slo'].split()[0]} "
          f"{m['winner_des_latency_us']:,.0f} us (95% CI {lo:,.0f}..{hi:,.0f}), SLO {m['slo']}")
    print(f"  target met: {'yes' if m['meets_target'] else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
