"""Analytic fast-path speed: scenario evaluations per second, beside the DES in the same process.

``measure(quick)`` returns a dictionary; ``python -m bench.fastpath [--quick]`` prints it, beside the
same passes of the interpreted fast path (``FLASHPLAN_INTERPRETED=1``, in a child process, since one
process imports ``sim.analytic`` once) when this process runs the mypyc build (sim/native/guard.py).

The scenario set is every example plus a seeded random set of every attachment kind
and workload kind (bench/scenario_space.py), each a distinct configuration. Four rates:

* **cold** - the compiled-network cache is cleared before every evaluation, so each one
  compiles the I/O path from scratch (the planner screening new candidates);
* **warm** - the same scenarios again: the cache holds their compiled networks;
* **sweep** - each configuration at four other rates or populations (a rate / queue-depth
  sweep, the web app's what-if sliders): the network is reused, the solve is new;
* **first sight** - as cold, but the tables compiled networks are built from (parameters
  derived from the catalog, volume-layer plans of each layout and mix, component names) are
  emptied before the pass too, so they fill up during it as in a planner's first run.

Rates are evaluations per CPU-second of this process (the development machine is shared,
so wall time also counts the neighbours' work) and per wall-second, best of the repetitions.
The target (>= 10,000 evaluations per second) is judged on the cold CPU-time rate. The
DES row runs flash examples to their own precision targets and gives the ratio.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from models import Scenario, load_scenario, with_overrides
from models.workload import BurstyWorkload, ClosedWorkload, OpenWorkload
from sim.analytic import clear_cache, evaluate
from sim.native import guard as native

TARGET_EVALS_PER_S = 10_000.0
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DES_EXAMPLES = ("s3_exflash_4dimms.yaml", "s5_fs9100_nvmefc.yaml", "s4_zvm_edev_aliases.yaml", "s1_linuxone_nvme_raid10.yaml")


def scenario_set(quick: bool) -> list[Scenario]:
    """Every example plus a seeded random set (distinct configurations)."""
    from bench.scenario_space import random_scenarios

    # one steady workload each (sweep_variants scales `workload`; a consolidation or a profile is solved per class/interval)
    examples = [sc for sc in (load_scenario(p) for p in sorted(EXAMPLES.glob("*.yaml")))
                if not sc.consolidated and sc.profile_index() is None]
    return examples + random_scenarios(2026, 40 if quick else 150)


def sweep_variants(scenarios: list[Scenario]) -> list[Scenario]:
    """Each scenario at four other loads: open/bursty rates x 0.25..1, closed populations / 2..x 2."""
    out = []
    for sc in scenarios:
        wl = sc.workload
        for f in (0.25, 0.5, 0.75, 1.0):
            if isinstance(wl, OpenWorkload):
                out.append(with_overrides(sc, {"workload.rate_iops": wl.rate_iops * f}))
            elif isinstance(wl, BurstyWorkload):
                out.append(with_overrides(sc, {"workload.on_rate_iops": wl.on_rate_iops * f,
                                               "workload.off_rate_iops": wl.off_rate_iops * f}))
            elif isinstance(wl, ClosedWorkload):
                out.append(with_overrides(sc, {"workload.queue_depth": max(1, round(wl.queue_depth * 2 * f))}))
    return out


def _rates(scenarios: list[Scenario], repeat: int, cold: bool, first_sight: bool = False) -> tuple[float, float]:
    """(evaluations per CPU-second, per wall-second), best of ``repeat`` passes."""
    best_cpu = best_wall = 0.0
    for _ in range(repeat):
        gc.collect()
        if first_sight:
            clear_cache(everything=True)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if cold:
            for sc in scenarios:
                clear_cache()
                evaluate(sc)
        else:
            for sc in scenarios:
                evaluate(sc)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        best_cpu = max(best_cpu, len(scenarios) / cpu if cpu > 0 else 0.0)
        best_wall = max(best_wall, len(scenarios) / wall if wall > 0 else 0.0)
    return best_cpu, best_wall


def measure(quick: bool = False, des: bool = True) -> dict[str, Any]:
    """Fast-path rates (cold, warm, sweep) and the DES rate on the flash examples, measured now."""
    scenarios = scenario_set(quick)
    variants = sweep_variants(scenarios)
    repeat = 2 if quick else 3
    for sc in scenarios:  # one untimed pass: imports, catalog, order-statistics table, volume plans
        evaluate(sc)
    cold_cpu, cold_wall = _rates(scenarios, repeat, cold=True)
    first_cpu, first_wall = _rates(scenarios, repeat, cold=True, first_sight=True)
    for sc in scenarios:  # refill the tables for the warm and sweep passes
        evaluate(sc)
    warm_cpu, warm_wall = _rates(scenarios, repeat, cold=False)
    clear_cache()
    for sc in scenarios:
        evaluate(sc)
    sweep_cpu, sweep_wall = _rates(variants, repeat, cold=False)
    per_kind: dict[str, list[float]] = {}
    for sc in scenarios:
        clear_cache()
        t = time.process_time()
        evaluate(sc)
        per_kind.setdefault(f"{sc.topology.kind}/{sc.workload.kind}", []).append(time.process_time() - t)
    des_names = (DES_EXAMPLES[:2] if quick else DES_EXAMPLES) if des else ()
    des_cpu = 0.0
    des_wall = 0.0
    for name in des_names:
        sc = load_scenario(EXAMPLES / name)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        from sim.des.engine import simulate

        simulate(sc)
        des_cpu += time.process_time() - cpu0
        des_wall += time.perf_counter() - wall0
    des_rate_cpu = len(des_names) / des_cpu if des_cpu > 0 else 0.0
    return {
        "fast_path": native.status(),
        "scenarios": len(scenarios),
        "sweep_evaluations": len(variants),
        "cold_evals_per_cpu_s": cold_cpu,
        "cold_evals_per_wall_s": cold_wall,
        "first_sight_evals_per_cpu_s": first_cpu,
        "first_sight_evals_per_wall_s": first_wall,
        "warm_evals_per_cpu_s": warm_cpu,
        "warm_evals_per_wall_s": warm_wall,
        "sweep_evals_per_cpu_s": sweep_cpu,
        "sweep_evals_per_wall_s": sweep_wall,
        "cold_us_by_kind": {k: 1e6 * sum(v) / len(v) for k, v in sorted(per_kind.items())},
        "des_examples": list(des_names),
        "des_runs_per_cpu_s": des_rate_cpu,
        "des_wall_s_per_run": des_wall / len(des_names) if des_names else 0.0,
        "ratio_cold_vs_des": cold_cpu / des_rate_cpu if des_rate_cpu > 0 else 0.0,
        "target_evals_per_s": TARGET_EVALS_PER_S,
        "target_met": cold_cpu >= TARGET_EVALS_PER_S,
    }


def interpreted_baseline(quick: bool) -> dict[str, Any]:
    """The same passes with the interpreted fast path, in a child process (no DES)."""
    env = {**os.environ, native.ENV_INTERPRETED: "1"}
    args = [sys.executable, "-m", "bench.fastpath", "--json", "--no-des", "--no-baseline"] + (["--quick"] if quick else [])
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    return dict(json.loads(out.stdout))


def report(m: dict[str, Any]) -> str:
    """The measurements as text lines."""
    met = "met" if m["target_met"] else "MISSED"
    lines = [
        f"analytic fast path, {m['fast_path']}, {m['scenarios']} distinct scenarios (examples + seeded random set of every kind):",
        f"  cold  (compile + solve): {m['cold_evals_per_cpu_s']:>9,.0f} evaluations per CPU-s "
        f"({m['cold_evals_per_wall_s']:,.0f} per wall-s)   target >= {m['target_evals_per_s']:,.0f}: {met}",
        f"  first sight (tables emptied too): {m['first_sight_evals_per_cpu_s']:,.0f} evaluations per CPU-s "
        f"({m['first_sight_evals_per_wall_s']:,.0f} per wall-s)",
        f"  warm  (cached network):  {m['warm_evals_per_cpu_s']:>9,.0f} evaluations per CPU-s ({m['warm_evals_per_wall_s']:,.0f} per wall-s)",
        f"  sweep ({m['sweep_evaluations']} new loads):  {m['sweep_evals_per_cpu_s']:>9,.0f} evaluations per CPU-s "
        f"({m['sweep_evals_per_wall_s']:,.0f} per wall-s)",
    ]
    if m["des_examples"]:
        lines.append(f"  DES on {', '.join(m['des_examples'])}: {m['des_runs_per_cpu_s']:.2f} runs per CPU-s "
                     f"({m['des_wall_s_per_run']:.2f} s wall each); cold fast path / DES = {m['ratio_cold_vs_des']:,.0f}x")
    lines.append("  cold us per evaluation by kind: " + ", ".join(f"{k} {v:.0f}" for k, v in m["cold_us_by_kind"].items()))
    base = m.get("interpreted")
    if base:
        lines.append(f"  {base['fast_path']}, same passes: cold {base['cold_evals_per_cpu_s']:,.0f}, "
                     f"first sight {base['first_sight_evals_per_cpu_s']:,.0f}, warm {base['warm_evals_per_cpu_s']:,.0f}, "
                     f"sweep {base['sweep_evals_per_cpu_s']:,.0f} per CPU-s; compiled / interpreted: "
                     + ", ".join(f"{k} {m[k + '_evals_per_cpu_s'] / base[k + '_evals_per_cpu_s']:.2f}x"
                                 for k in ("cold", "first_sight", "warm", "sweep")))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer scenarios and DES runs")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.add_argument("--no-des", action="store_true", help="skip the DES runs")
    parser.add_argument("--no-baseline", action="store_true", help="skip the interpreted baseline")
    args = parser.parse_args()
    m = measure(args.quick, des=not args.no_des)
    if not args.no_baseline and m["fast_path"].startswith("compiled"):
        m["interpreted"] = interpreted_baseline(args.quick)
    print(json.dumps(m, indent=2) if args.json else report(m))


if __name__ == "__main__":
    main()
