"""Wall time of the S1 example (LinuxONE, direct NVMe, RAID-10) to a +-2% relative confidence interval."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
S1_PATH = ROOT / "examples" / "s1_linuxone_nvme_raid10.yaml"
TARGET_REL_CI = 0.02


@dataclass
class S1Run:
    """The outcome of the S1 row; ``status`` is "ok", "missing" or "error" (then ``detail`` says why)."""

    status: str
    path: Path
    wall_s: float = 0.0
    simulated_ios: int = 0
    stop_reason: str = ""
    iops: float = 0.0
    latency_mean_us: float = 0.0
    latency_rel_ci: float = 0.0
    detail: str = ""


def run_s1(path: Path = S1_PATH, target_rel_ci: float = TARGET_REL_CI) -> S1Run:
    """Load ``path``, set ``run.target_rel_ci`` (other run settings: the file's own / defaults) and simulate.

    The timer covers ``simulate`` only (model build and run), not reading the file.
    A missing file gives status "missing"; a file that fails to load or run gives "error".
    """
    if not path.exists():
        return S1Run("missing", path, detail=f"{path.name} not found")
    try:
        from models import load_scenario, with_overrides
        from sim import simulate

        scenario = with_overrides(load_scenario(path), {"run.target_rel_ci": target_rel_ci})
        t0 = time.perf_counter()
        result = simulate(scenario)
        wall = time.perf_counter() - t0
    except Exception as exc:  # the example is under construction; report, do not crash the bench
        return S1Run("error", path, detail=f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    lat = result.latency_mean_us
    lo, hi = lat.ci95
    rel = (hi - lo) / 2 / lat.value if lat.value else 0.0
    return S1Run("ok", path, wall, result.simulated_ios, result.stop_reason, result.iops.value, lat.value, rel)
