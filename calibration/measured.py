"""fio measurements as calibration records, and a measured-vs-predicted comparison (``flashplan import fio``).

The parsing of fio's JSON is calibration/importers/fio.py; this module is the calibration side: each
measured metric becomes a Record (system "user") against a scenario, with a tolerance from fio's
own interval-to-interval spread, and ``compare_fio`` runs those records like any other.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from calibration.evaluate import Outcome, evaluate
from calibration.importers import to_yaml, workload_data
from calibration.importers.fio import (
    METRIC_UNITS,
    PERCENTILE_METRICS,
    PERCENTILE_TOLERANCE_FLOOR,
    THROUGHPUT_TOLERANCE_FLOOR,
    WORKLOAD_OPTIONS,
    FioJob,
)
from calibration.records import Record, RecordFile, ScenarioRef, Source, Tolerance


def tolerance_for(job: FioJob, metric: str, rel: float | None = None) -> tuple[float, str]:
    """(relative tolerance, why) for one metric of a job.

    Default: the larger of a floor (10% for rates and means, 25% for percentiles) and the
    interval-to-interval spread of fio's own IOPS samples (1 sd / mean) in this run.
    """
    if rel is not None:
        return rel, "set by the user (--tolerance)"
    percentile = metric in PERCENTILE_METRICS.values()
    floor = PERCENTILE_TOLERANCE_FLOOR if percentile else THROUGHPUT_TOLERANCE_FLOOR
    why = (f"floor {floor:.0%} for the run-to-run spread of fio "
           f"{'tail percentiles' if percentile else 'throughput and mean latency'}")
    cv = job.iops_sample_cv
    if cv is not None:
        why += f"; fio's {job.iops_samples} per-interval IOPS samples in this run varied by {cv:.1%} (1 sd / mean)"
        if cv > floor:
            return min(1.0, round(cv, 4)), why + ", which sets the tolerance"
    return floor, why


def fio_records(job: FioJob, scenario_file: str, *, source_name: str = "fio result",
                overrides: Mapping[str, Any] | None = None, tolerance: float | None = None) -> list[Record]:
    """Calibration records (system "user"), one per measured metric, against ``scenario_file``.

    The scenario is referenced with its workload replaced by the imported one (``set.workload``)
    and then ``overrides`` applied, so nothing is written into the user's scenario.
    """
    ref = ScenarioRef(file=scenario_file, set={"workload": workload_data(job.workload), **dict(overrides or {})})
    records = []
    for metric, value in job.measured.items():
        rel, why = tolerance_for(job, metric, tolerance)
        note = f"fio {job.processes} process(es): {job.describe_workload()}"
        if metric in PERCENTILE_METRICS.values():
            if len(job.directions) == 2:
                note += "; percentile of reads and writes together, from fio's merged latency histograms (json+)"
            elif next(iter(job.directions.values())).percentile_source == "clat+slat":
                note += "; percentile = fio clat percentile + mean slat"
        records.append(Record(
            id=job.record_id(metric),
            system="user",
            source=Source(seed=source_name, where=f"fio job '{job.name}' (group {job.group})", column=metric,
                          quote=", ".join(f"{k}={job.options[k]}" for k in (*WORKLOAD_OPTIONS, "numjobs", "runtime") if k in job.options)),
            kind="value",
            scenario=ref,
            metric=metric,
            measured=value,
            unit=METRIC_UNITS[metric],
            tolerance=Tolerance(rel=rel, why=why),
            fit=False,
            note=note,
        ))
    return records


def fio_record_file(jobs: Iterable[FioJob], scenario_file: str, *, source_name: str = "fio result",
                    overrides: Mapping[str, Any] | None = None, tolerance: float | None = None) -> RecordFile:
    """A calibration.records.RecordFile (system "user") holding every job's records."""
    records = [r for job in jobs for r in fio_records(job, scenario_file, source_name=source_name, overrides=overrides, tolerance=tolerance)]
    return RecordFile(system="user", description=f"measured by fio ({source_name}), imported by flashplan import fio", records=records)


def record_file_yaml(record_file: RecordFile) -> str:
    """A RecordFile as YAML (fields at their defaults left out)."""
    return to_yaml(record_file.model_dump(mode="json", exclude_none=True, exclude_defaults=True),
                   header="calibration records imported from a fio result by `flashplan import fio`")


def compare_fio(jobs: Sequence[FioJob], scenario_data: Mapping[str, Any], *, source_name: str = "fio result",
                overrides: Mapping[str, Any] | None = None, tolerance: float | None = None, workers: int = 1) -> list[Outcome]:
    """Simulate ``scenario_data`` with each job's workload and compare with fio's measurements.

    Returns calibration.evaluate.Outcome objects (predicted, ci95, rel_error, within), one per
    record. The scenario is written to a temporary directory for the run only. The run budget
    is the scenario's own ``run`` section plus ``overrides``.
    """
    with tempfile.TemporaryDirectory(prefix="flashplan-fio-") as tmp:
        base = Path(tmp)
        (base / "scenario.yaml").write_text(to_yaml(scenario_data), encoding="utf-8")
        records = [r for job in jobs for r in fio_records(job, "scenario.yaml", source_name=source_name,
                                                          overrides=overrides, tolerance=tolerance)]
        return evaluate(records, run={}, workers=workers, base=base)
