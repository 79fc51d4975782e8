"""Fit the model's free parameters to the calibration records (``flashplan calibrate --fit``).

The free parameters are the numbers no datasheet publishes: host path lengths, each host's
SCSI stack serialized section, z/VM's subchannel turnaround and CP cost per page, controller
latencies and port rates, and the two workload descriptors the seeds leave out (a job's own
work between I/Os). Each is fitted only against the records of the systems it touches, with
``scipy.optimize.least_squares`` on residuals scaled by each record's tolerance:

    value / ratio record:  log(predicted / measured) / log(1 + tolerance)
    bound record:          the same scaled shortfall when the bound is violated, else 0

The loss is soft-L1 with its bend at one tolerance: a record inside its tolerance pulls as in
least squares, one far outside (a run anomaly, a source error not yet recognised) pulls only
linearly, so it cannot drag the records around it out of theirs.

The simulator is run with fixed seeds (common random numbers), so the objective is a
deterministic function of the parameters; finite-difference steps of 10% keep the
Jacobian above the remaining statistical noise. The result is written, versioned, to
models/catalog/fitted.yaml, which the models read by default.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.optimize import least_squares

from calibration.evaluate import Outcome, evaluate
from calibration.parameters import BLOCKS, PARAMETERS, FreeParameter
from calibration.records import Record
from models.catalog import FITTED_FILE, fitted_path, read_fitted
from models.common import write_text_atomically

FIT_RUN = {"run.target_rel_ci": 0.03, "run.max_ios": 1_000_000, "run.max_wall_s": 300.0}
"""Precision or an I/O count ends a fit's run, never the clock (the wall time is a safety net that fails the record)."""
FITTED_VERSION = 1





def current_values() -> dict[str, float]:
    """The fitted values in use, falling back to each parameter's initial value."""
    path = fitted_path()
    stored = read_fitted(path).get("values", {}) if path else {}
    return {p.path: float(stored.get(p.path, p.initial)) for p in PARAMETERS}


ROBUST_LOSS = "soft_l1"
"""scipy's robust loss for the fit (residuals are in units of each record's tolerance, f_scale 1)."""


def residual(outcome: Outcome) -> float:
    """A record's misfit in units of its tolerance (0 when a bound holds)."""
    r = outcome.record
    if outcome.error is not None or not math.isfinite(outcome.predicted) or outcome.predicted <= 0:
        return 10.0
    ratio = math.log(outcome.predicted / r.measured) if r.measured > 0 else 0.0
    if r.kind == "bound":
        violated = (r.at_least and outcome.predicted < r.measured) or (r.at_most and outcome.predicted > r.measured)
        return ratio / math.log(1.15) if violated else 0.0
    assert r.tolerance is not None
    if r.tolerance.rel is not None:
        return ratio / math.log(1.0 + r.tolerance.rel)
    assert r.tolerance.abs is not None
    return (outcome.predicted - r.measured) / r.tolerance.abs


def write_fitted(values: dict[str, float], path: Path, meta: dict[str, Any] | None = None) -> None:
    doc: dict[str, Any] = {
        "version": FITTED_VERSION,
        "fitted_on": dt.date.today().isoformat(),
        "how": "flashplan calibrate --fit (calibration/fit.py): scipy.optimize.least_squares, soft-L1 loss, on tolerance-scaled log errors",
        **(meta or {}),
        "values": {k: round(float(v), 4) for k, v in values.items()},
    }
    write_text_atomically(path, "# Fitted free parameters, read by default by models/catalog.py (FLASHPLAN_FITTED=none disables).\n"
                          "# Written by `flashplan calibrate --fit`; do not edit by hand.\n" + yaml.safe_dump(doc, sort_keys=False))


def evaluate_with(values: dict[str, float], records: Sequence[Record], workers: int) -> list[Outcome]:
    """Evaluate records with a candidate set of values (a fresh fitted file per call)."""
    fd, name = tempfile.mkstemp(prefix="flashplan-fit-", suffix=".yaml")
    os.close(fd)
    old = os.environ.get("FLASHPLAN_FITTED")
    try:
        write_fitted(values, Path(name))
        os.environ["FLASHPLAN_FITTED"] = name
        return evaluate(records, run=FIT_RUN, workers=workers)
    finally:
        if old is None:
            os.environ.pop("FLASHPLAN_FITTED", None)
        else:
            os.environ["FLASHPLAN_FITTED"] = old
        Path(name).unlink(missing_ok=True)


def fit(records: Sequence[Record], workers: int = 2, max_evals: int = 4, only: str | None = None,
        log: Callable[[str], None] = print) -> dict[str, float]:
    """Fit every block of systems in turn; returns all parameter values (fitted or kept)."""
    values = current_values()
    for block in BLOCKS:
        if only and only not in block:
            continue
        params = [p for p in PARAMETERS if set(p.systems) & set(block)]
        recs = [r for r in records if r.fit and r.system in block]
        if not params or not recs:
            continue
        scale = np.array([max(p.initial, 1e-3) for p in params])
        x0 = np.array([values[p.path] for p in params]) / scale
        lo = np.array([p.low for p in params]) / scale
        hi = np.array([p.high for p in params]) / scale
        x0 = np.clip(x0, lo + 1e-9, hi - 1e-9)

        def resid(x: np.ndarray, params: list[FreeParameter] = params, recs: list[Record] = recs,
                  scale: np.ndarray = scale, label: str = "+".join(block)) -> np.ndarray:
            trial = dict(values)
            trial.update({p.path: float(v) for p, v in zip(params, x * scale, strict=True)})
            res = np.array([residual(o) for o in evaluate_with(trial, recs, workers)])
            soft_l1 = float(np.sum(2.0 * (np.sqrt(1.0 + res * res) - 1.0)))
            log(f"  {label}: cost {0.5 * soft_l1:9.3f}  " +
                ", ".join(f"{p.path.split('/')[-1]}={v:.4g}" for p, v in zip(params, x * scale, strict=True)))
            return res

        log(f"fitting {len(params)} parameters of {'+'.join(block)} against {len(recs)} records")
        sol = least_squares(resid, x0, bounds=(lo, hi), diff_step=0.1, max_nfev=max_evals, x_scale=1.0,
                            loss=ROBUST_LOSS, f_scale=1.0)
        values.update({p.path: float(v) for p, v in zip(params, sol.x * scale, strict=True)})
    return values


def save(values: dict[str, float], records: Sequence[Record], path: Path = FITTED_FILE) -> None:
    fit_records = [r for r in records if r.fit]
    meta = {"parameters": len(values), "records_fitted": len(fit_records), "records_total": len(records),
            "parameter_meaning": {p.path: p.meaning for p in PARAMETERS}}
    write_fitted(values, path, meta)
