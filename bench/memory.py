"""Peak resident memory of a long flashplan run, measured on a child process.

The child is ``python -m bench.mm8 --ios N``; its peak RSS is read from
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after it exits. That figure is the maximum
over every child this process has waited for, so ``measure_peak`` checks it against the
child's own ``RUSAGE_SELF`` report and uses the latter if an earlier, larger child masks it.

Caveat (Linux): a child's ru_maxrss is at least the parent's RSS when it forked and
exec'd (the kernel folds the pre-exec address space into the child's maxrss), so measure
while the parent is small; ``bench.run`` does this before it runs anything heavy.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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
