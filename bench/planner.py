"""Planner benchmark: candidates screened and wall time to a DES-verified winner.

Target (issue: capacity planning): >= 500 candidates screened and the winner DES-verified
in <= 10 s on 2 cores. The requirements are examples/plan/ibmi_oltp.yaml (IBM i on Power10,
OLTP 4K 70/30, 600K IOPS + 25% growth, p99 <= 1 ms, 6 TB mirrored), whose candidate space
is every IBM i drive x count x namespaces x EJ1Y/EJ1X adapter count the topology rules allow.

    python -m bench.planner [--quick] [--device-model pooled|dies]

``--quick`` verifies one finalist instead of three (the winner is still DES-verified).
``--device-model`` plans every candidate under one device model (``auto``, the default, is the
scenarios as written: dies for the drives) and prints, for each DES-verified finalist, the fast path's p99
(``FastResult.latency_p99_us``, the planner's screening figure) against the DES p99 and its 95% CI.
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


TAIL_TOLERANCE = 0.15
"""The issue's bound on the fast path's p99 against the DES p99 of the planner's winners."""


def with_device_model(space: tuple[list[Any], int], device_model: str) -> tuple[list[Any], int]:
    """The planner's candidate space with every candidate's scenario under ``device_model``."""
    from models.scenario import Scenario

    candidates, invalid = space
    if device_model == "auto":
        return space
    for c in candidates:
        c.scenario = Scenario.model_validate({**c.scenario.model_dump(mode="json", exclude_none=True), "device_model": device_model})
    return candidates, invalid


def tail_rows(result: Any) -> list[dict[str, Any]]:
    """Each DES-verified candidate (the finalists, and those the DES rejected): fast p99 / p99.9 vs the DES's."""
    rows = []
    for c in [*result.ranked, *result.rejected]:
        if c.des is None or c.fast is None:
            continue
        des, fast = c.des, c.fast
        p99, p999 = fast.latency_p99_us, fast.latency_p999_us
        rows.append({"label": c.label, "verified": c.verified, "tail_method": fast.tail_method,
                     "fast_mean_us": fast.latency_mean_us, "des_mean_us": des.latency_mean_us.value,
                     "fast_p99_us": p99, "des_p99_us": des.latency_p99_us.value, "des_p99_ci95": list(des.latency_p99_us.ci95),
                     "p99_diff": p99 / des.latency_p99_us.value - 1 if p99 is not None and des.latency_p99_us.value > 0 else None,
                     "fast_p999_us": p999, "des_p999_us": des.latency_p999_us.value,
                     "p999_diff": p999 / des.latency_p999_us.value - 1 if p999 is not None and des.latency_p999_us.value > 0 else None})
    return rows


def measure(quick: bool = False, path: Path = REQUIREMENTS, device_model: str = "auto") -> dict[str, Any]:
    """Plan ``path`` once and return the figures: candidates screened, DES runs, wall times, the winner,
    and (``tails``) each DES-verified candidate's fast p99 against the DES's.

    The wall time covers enumeration, screening and DES verification (reading the file excluded).
    """
    from models.requirements import load_requirements
    from sim.plan.planner import enumerate_candidates, plan

    req = load_requirements(path)
    verify_top = 1 if quick else 3
    t0 = time.perf_counter()
    space = with_device_model(enumerate_candidates(req), device_model)
    result = plan(req, verify_top=verify_top, space=space)
    wall = time.perf_counter() - t0
    w = result.winner
    assert w.des is not None
    slo = req.latency_slo
    metric = w.des.latency_mean_us if slo.statistic == "mean" else w.des.latency_p99_us
    return {
        "requirements": str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path),
        "device_model": device_model,
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
        "tails": tail_rows(result),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.planner", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="verify one finalist instead of three")
    parser.add_argument("--device-model", choices=("auto", "pooled", "dies"), default="auto",
                        help="the flash device model of every candidate (default: auto, the scenarios as written: dies for drives)")
    args = parser.parse_args(argv)
    m = measure(quick=args.quick, device_model=args.device_model)
    print(f"Planner benchmark ({m['requirements']}, device_model={m['device_model']}, verify_top={m['verify_top']}, "
          f"{m['cpus']} CPUs visible)")
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
    print()
    print("Fast path p99 / p99.9 vs DES of each DES-run candidate (target: p99 within "
          f"{TAIL_TOLERANCE:.0%} on the winners)")
    print("| candidate | DES verdict | tail method | DES mean | fast mean | DES p99 (95% CI) | fast p99 | diff | "
          "DES p99.9 | fast p99.9 | diff |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")

    def pct(v: float | None) -> str:
        return f"{v:+.1%}" if v is not None else "-"

    def us(v: float | None) -> str:
        return f"{v:,.0f}" if v is not None and v == v and v not in (float("inf"), float("-inf")) else "-"

    for r in m["tails"]:
        lo, hi = r["des_p99_ci95"]
        print(f"| {r['label']} | {'passed' if r['verified'] else 'rejected'} | {r['tail_method']} | {us(r['des_mean_us'])} | "
              f"{us(r['fast_mean_us'])} | {us(r['des_p99_us'])} ({us(lo)}..{us(hi)}) | {us(r['fast_p99_us'])} | "
              f"{pct(r['p99_diff'])} | {us(r['des_p999_us'])} | {us(r['fast_p999_us'])} | {pct(r['p999_diff'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
