"""What the die-level device model costs the DES against the pooled one (at most 1.3x on S2).

For each seed scenario with NVMe drives of its own (the S1, S2 and S4 EDEV examples and the S4 paging calibration
scenario) the DES runs under ``device_model: pooled`` and under ``dies``, with the scenario's own seed, until
``--ios`` logical I/Os are done (never on the clock). Each run is a fresh child process (``OPENBLAS_NUM_THREADS=1``),
the two models alternating (pooled, dies, pooled, dies, ...) so a busy neighbour slows both alike and neither
inherits the other's heap; the faster of ``--repeat`` runs counts. It prints the events per logical I/O of each
(exact, machine-independent: ``bench.events.count_events``) and the ratio of their CPU seconds (model build and run).

    python -m bench.device_model_cost [--ios 100000] [--repeat 5]

On a shared host whose CPU seconds wander (the same run 1.1 to 1.9 s), ``--instructions`` counts what the S2 runs
execute instead (valgrind's callgrind; runs of N and 3N I/Os, so start-up and the model build cancel): a ratio that
is the same on every run of one build.

    python -m bench.device_model_cost --instructions [--ios 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from bench.instructions import instructions_per_io

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = (ROOT / "examples" / "s1_linuxone_nvme_raid10.yaml", ROOT / "examples" / "s2_ibmi_8x4_mirrored.yaml",
             ROOT / "examples" / "s4_zvm_edev_aliases.yaml", ROOT / "calibration" / "scenarios" / "s4_paging.yaml")
MODELS = ("pooled", "dies")
TARGET = 1.3
"""The target: the S2 example's per-I/O cost under dies at most 1.3x the pooled model's."""


def child(path: Path, ios: int, model: str) -> dict[str, float | str]:
    """One run in this process: events per I/O and CPU seconds (``bench.events.count_events``), and the engine mode."""
    from bench.events import count_events
    from sim.native import guard as native

    r = count_events(path, ios, device_model=None if model == "default" else model)
    return {"events_per_io": r.events_per_io, "cpu_s": r.cpu_s, "engine": native.status()}


def _spawn(path: Path, ios: int, model: str) -> dict[str, float | str]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "bench.device_model_cost", "--child", str(path), str(ios), model],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    doc: dict[str, float | str] = json.loads(out.stdout)
    return doc


def measure(ios: int, repeat: int) -> tuple[list[dict[str, float | str]], str]:
    """One row per scenario: events per I/O and the best CPU seconds under each model, their ratio; the engine mode."""
    rows: list[dict[str, float | str]] = []
    engine = ""
    for path in SCENARIOS:
        best: dict[str, tuple[float, float]] = {}
        for _ in range(repeat):
            for model in MODELS:
                r = _spawn(path, ios, model)
                engine = str(r["engine"])
                events, cpu = float(r["events_per_io"]), float(r["cpu_s"])
                if model not in best or cpu < best[model][1]:
                    best[model] = (events, cpu)
                print(f"  {path.stem} {model}: {events:.2f} events per I/O, {cpu:.2f} CPU-s", file=sys.stderr)
        rows.append({"scenario": path.stem, "events_pooled": best["pooled"][0], "events_dies": best["dies"][0],
                     "cpu_pooled": best["pooled"][1], "cpu_dies": best["dies"][1],
                     "ratio": best["dies"][1] / best["pooled"][1]})
    return rows, engine


def s2_instructions_per_io(ios: int) -> dict[str, float]:
    """The S2 example's instructions per logical I/O under each model (``instructions_per_io``)."""
    return {model: instructions_per_io(SCENARIOS[1], ios, model) for model in MODELS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.device_model_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--ios", type=int, default=100_000, help="logical I/Os per run (default 100,000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per scenario and model; the fastest counts (default 5)")
    parser.add_argument("--child", nargs=3, metavar=("PATH", "IOS", "MODEL"), help=argparse.SUPPRESS)
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions with valgrind (callgrind) instead of CPU seconds, S2 only: runs of "
                             "--ios and 3 x --ios I/Os per model (default --ios here 10,000; about 5 minutes)")
    args = parser.parse_args(argv)
    if args.child:
        path, ios, model = args.child
        print(json.dumps(child(Path(path), int(ios), model)))
        return 0
    if args.instructions:
        if shutil.which("valgrind") is None:
            print("error: --instructions needs valgrind (apt-get install valgrind)", file=sys.stderr)
            return 2
        ios = args.ios if args.ios != 100_000 else 10_000
        if not 1_000 <= ios <= 1_000_000:
            print(f"error: --ios must be in 1,000..1,000,000 with --instructions, got {ios}", file=sys.stderr)
            return 2
        per = s2_instructions_per_io(ios)
        ratio = per["dies"] / per["pooled"]
        print(f"S2 example, instructions per logical I/O (callgrind, {ios:,} -> {3 * ios:,} I/Os): pooled "
              f"{per['pooled']:,.0f}, dies {per['dies']:,.0f}: {ratio:.3f}x (target: at most {TARGET}x)")
        return 0
    if not 1_000 <= args.ios <= 10_000_000 or not 1 <= args.repeat <= 20:
        print(f"error: --ios must be in 1,000..10,000,000 and --repeat in 1..20, got {args.ios} and {args.repeat}", file=sys.stderr)
        return 2
    rows, engine = measure(args.ios, args.repeat)
    print(f"Die-level vs pooled device model, DES cost ({args.ios:,} I/Os, best of {args.repeat} fresh processes each, "
          f"engine {engine})")
    print(f"{'scenario':28s} {'events/IO pooled':>16s} {'dies':>6s} {'CPU-s pooled':>12s} {'dies':>6s} {'dies/pooled':>11s}")
    for r in rows:
        print(f"{r['scenario']!s:28s} {r['events_pooled']:16.2f} {r['events_dies']:6.2f} {r['cpu_pooled']:12.2f} "
              f"{r['cpu_dies']:6.2f} {r['ratio']:10.2f}x")
    s2 = next(r for r in rows if r["scenario"] == "s2_ibmi_8x4_mirrored")
    print(f"S2 example: {s2['ratio']:.2f}x (target: at most {TARGET}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
