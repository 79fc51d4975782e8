"""Instructions per logical I/O of a scenario's simulation, counted by valgrind's callgrind: machine-independent for one
build, unlike CPU seconds on a shared host (``bench.device_model_cost`` and ``bench.events --instructions`` use it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _instructions(path: Path, ios: int, model: str) -> int:
    """Instructions executed by one fresh child run (valgrind's callgrind: ``Collected``), model build and start-up
    included; machine-independent for one build, unlike CPU seconds on a shared host."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-m",
                          "bench.device_model_cost", "--child", str(path), str(ios), model],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", out.stderr)
    if match is None:
        raise RuntimeError(f"callgrind printed no instruction count: {out.stderr[-500:]}")
    return int(match.group(1))


def instructions_per_io(path: Path, ios: int, model: str) -> float:
    """``path``'s instructions per logical I/O under ``model`` ('pooled', 'dies', or 'default': the scenario's own):
    the difference of runs of ``ios`` and 3 x ``ios`` I/Os over 2 x ``ios`` (start-up, imports and the model build
    cancel)."""
    short, long = _instructions(path, ios, model), _instructions(path, 3 * ios, model)
    print(f"  {path.stem} {model}: {short:,} / {long:,} instructions at {ios:,} / {3 * ios:,} I/Os", file=sys.stderr)
    return (long - short) / (2 * ios)
