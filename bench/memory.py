"""Peak resident memory of flashplan runs, measured on child processes.

``python -m bench.memory [--quick] [--limit-mb N]`` prints peak RSS against size for what grows with the
request: the wide planner (examples/plan/ibmi_oltp.yaml, the README's example, by drive-count limit), a
profile's intervals (``flashplan simulate`` on a generated profile), a sweep's grid (refused beyond
``sim.plan.sweep.MAX_RUNS`` runs) and a direct-NVMe topology's namespaces (refused beyond
``models.topology.MAX_NAMESPACES``). Each row is one ``flashplan`` command in a child process that reports
its own peak (``RUSAGE_SELF`` at exit); ``--limit-mb`` runs every child under that address-space limit.

The child is ``python -m bench.mm8 --ios N``; its peak RSS is read from
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after it exits. That figure is the maximum
over every child this process has waited for, so ``measure_peak`` checks it against the
child's own ``RUSAGE_SELF`` report and uses the latter if an earlier, larger child masks it.

Caveat (Linux): a child's ru_maxrss is at least the parent's RSS when it forked and
exec'd (the kernel folds the pre-exec address space into the child's maxrss), so measure
while the parent is small; ``bench.run`` does this before it runs anything heavy.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def kib_to_mb(kib: int) -> float:
    """ru_maxrss (KiB on Linux, bytes on macOS) in MB (10**6 bytes)."""
    nbytes = kib if sys.platform == "darwin" else kib * 1024
    return nbytes / 1e6


@dataclass
class MemoryRun:
    """A child run: I/Os simulated, child wall time and peak RSS in MB (10**6 bytes)."""

    ios: int
    wall_s: float
    sim_wall_s: float
    peak_mb: float
    self_report_mb: float
    mean_response_us: float
    source: str


def measure_peak(ios: int, seed: int = 1, timeout_s: float = 3_600.0) -> MemoryRun:
    """Run flashplan's M/M/8 for ``ios`` completions in a child process and return its peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bench.mm8", "--ios", str(ios), "--seed", str(seed)],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout_s, check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"bench.mm8 child failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    self_kib = int(out["self_maxrss_kib"])
    if after > before or after == self_kib:
        peak, source = after, "RUSAGE_CHILDREN"
    else:  # an earlier child was bigger and masks this one
        peak, source = self_kib, "child RUSAGE_SELF"
    return MemoryRun(
        ios=int(out["customers"]), wall_s=wall, sim_wall_s=float(out["wall_s"]),
        peak_mb=kib_to_mb(peak), self_report_mb=kib_to_mb(self_kib),
        mean_response_us=float(out["mean_response_us"]), source=source,
    )


# -- peak RSS against size ---------------------------------------------------------------------

_WRAP = ("import atexit, resource, runpy, sys\n"
         "atexit.register(lambda: sys.stderr.write('\\nPEAK_KIB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
         "sys.argv = sys.argv[1:]\n"
         "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)\n")
"""Runs a module as ``python -m`` would and reports the process's own peak RSS on stderr at exit."""


@dataclass
class SizeRow:
    """One child command: what it measures, its size, exit code, wall time, peak RSS and the last line it printed."""

    case: str
    size: str
    exit_code: int
    wall_s: float
    peak_mb: float
    message: str


def run_child(argv: list[str], limit_mb: int | None = None, timeout_s: float = 3_600.0) -> tuple[int, float, float, str]:
    """(exit code, wall s, peak RSS MB, last stderr/stdout line) of ``python -m argv...`` in a child process."""
    def limit() -> None:
        if limit_mb is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAP, *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout_s, check=False, preexec_fn=limit if limit_mb else None)
    wall = time.perf_counter() - t0
    peak = 0
    lines = []
    for line in proc.stderr.splitlines():
        if line.startswith("PEAK_KIB "):
            peak = int(line.split()[1])
        elif line.strip() and "RuntimeWarning" not in line:
            lines.append(line.strip())
    last = lines[-1] if lines else (proc.stdout.strip().splitlines() or [""])[-1]
    return proc.returncode, wall, kib_to_mb(peak), last[:160]


def profile_scenario(intervals: int, duration_s: float = 0.01, rate_iops: float = 200.0) -> dict[str, Any]:
    """A profile of ``intervals`` short intervals (a few I/Os each) on S1's LinuxONE NVMe RAID-10."""
    return {"name": f"{intervals} intervals",
            "topology": {"kind": "direct_nvme", "host": {"model": "LinuxONE-Emperor4-LPAR30", "stack": "linux_nvme"},
                         "drive": "PM1733-1.92TB", "drives": 4, "adapter": "IBM-NVMe-Carrier-0448", "adapters": 4,
                         "layout": "raid10", "chunk_kib": 256},
            "workload": {"kind": "profile", "block_size_kib": 8, "read_fraction": 0.7, "access": "random",
                         "intervals": [{"duration_s": duration_s, "rate_iops": rate_iops * (1 + (i % 7) / 7)} for i in range(intervals)]},
            "run": {"seed": 1, "max_ios": 10_000_000, "max_wall_s": 3_600}}


def topology_scenario(drives: int, per_drive: int) -> dict[str, Any]:
    """IBM i direct NVMe: ``drives`` x an ECTB-like drive allowing 1,024 namespaces, ``per_drive`` each, raid0."""
    from models.catalog import lookup

    spec = lookup("drives", "ECTB").model_dump(mode="json", exclude_none=True)
    spec.pop("price", None)
    spec.pop("sources", None)
    spec["max_namespaces"] = 1024
    return {"name": f"{drives} x {per_drive} namespaces",
            "topology": {"kind": "direct_nvme", "host": {"model": "Power10-S1024-LPAR32", "stack": "ibmi_nvme"}, "drive": spec,
                         "drives": drives, "adapter": "EJ1Y", "adapters": max(1, -(-drives // 8)),
                         "namespaces": {"per_drive": per_drive}, "layout": "raid0"},
            "workload": {"kind": "closed", "jobs": 1, "queue_depth": 8, "read_fraction": 0.7, "block_size_kib": 4},
            "run": {"seed": 1, "max_ios": 2000, "warmup_ios": 200}}


def sweep_file(base: str, exponent: int) -> dict[str, Any]:
    """A grid sweep of 10**exponent points: factors of 10,000 values (and one of the remainder)."""
    factors: dict[str, Any] = {}
    paths = ["workload.block_size_kib", "workload.queue_depth", "workload.jobs", "run.max_ios"]
    left = exponent
    for path in paths:
        if left <= 0:
            break
        step = min(4, left)
        factors[path] = {"start": 1, "stop": 10**step}
        left -= step
    return {"base": base, "factors": factors}


def size_rows(quick: bool, limit_mb: int | None) -> Iterator[SizeRow]:
    """Every row of the table, as each child ends (``quick``: smaller sizes, the wide planner up to 4 drives; 16 is
    IBM i's limit, the README's example whole)."""
    plan = ["4"] if quick else ["4", "16"]
    with TemporaryDirectory() as tmp:
        for cap in plan:
            code, wall, peak, msg = run_child(["sim.cli.flashplan", "plan", "examples/plan/ibmi_oltp.yaml", "--space", "wide", "--quiet",
                                               "--set", f"candidates.max_devices={cap}"], limit_mb)
            yield SizeRow("wide planner, ibmi_oltp", f"<= {cap} drives", code, wall, peak, "" if code == 0 else msg)
        for n in ((500, 2_000) if quick else (1_000, 4_000, 10_000)):
            path = Path(tmp) / f"profile_{n}.json"
            path.write_text(json.dumps(profile_scenario(n)))
            code, wall, peak, msg = run_child(["sim.cli.flashplan", "simulate", str(path), "--json"], limit_mb)
            yield SizeRow("profile, DES replay", f"{n:,} intervals", code, wall, peak, "" if code == 0 else msg)
        base = str(ROOT / "examples/s4_zvm_edev_aliases.yaml")
        for exponent in (6, 9, 12):
            path = Path(tmp) / f"sweep_{exponent}.json"
            path.write_text(json.dumps(sweep_file(base, exponent)))
            code, wall, peak, msg = run_child(["sim.cli.flashplan", "sweep", str(path), "--no-progress"], limit_mb)
            yield SizeRow("sweep grid (refused)", f"10^{exponent} points", code, wall, peak, msg)
        for drives, per_drive in ((8, 64), (32, 128)) + (() if quick else ((64, 256),)) + ((256, 1024),):
            path = Path(tmp) / f"topology_{drives}_{per_drive}.json"
            path.write_text(json.dumps(topology_scenario(drives, per_drive)))
            code, wall, peak, msg = run_child(["sim.cli.flashplan", "simulate", str(path)], limit_mb)
            yield SizeRow("topology, DES", f"{drives} x {per_drive} = {drives * per_drive:,} ns", code, wall, peak,
                                "" if code == 0 else msg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.memory", description="peak RSS against size, each case in a child process")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a few minutes)")
    ap.add_argument("--limit-mb", type=int, default=None, help="run every child under this address-space limit (RLIMIT_AS)")
    args = ap.parse_args(argv)
    if args.limit_mb is not None and not 256 <= args.limit_mb <= 1 << 20:
        print(f"--limit-mb: must be 256 .. {1 << 20:,}, got {args.limit_mb}", file=sys.stderr)
        return 2
    print(f"{'case':<26} {'size':<26} {'exit':>4} {'wall s':>8} {'peak MB':>8}  message")
    for row in size_rows(args.quick, args.limit_mb):
        print(f"{row.case:<26} {row.size:<26} {row.exit_code:>4} {row.wall_s:>8.1f} {row.peak_mb:>8.0f}  {row.message}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
