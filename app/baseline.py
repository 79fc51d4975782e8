"""The baseline step (Disk Magic / StorM: import -> base model matched to the measurement -> what-if -> report).

A measurement (fio JSON or an ``iostat -x`` peak, parsed by ``calibration.importers``) is taken
with the system it was measured on: the configuration on the Size page, with the
measured workload. The base is that scenario; ``comparison_rows`` sets what was
measured beside what the model predicts for it (IOPS, MB/s, mean latency, the latency
percentiles fio measured well enough) with the gap, and the What-if page and the report
carry the base along.

No Streamlit here: the session keeps a ``Baseline`` as plain data (``as_dict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.result import Result
from models.scenario import Scenario

LABELS = {
    "iops": ("IOPS", ""), "read_iops": ("read IOPS", ""), "write_iops": ("write IOPS", ""), "mbps": ("throughput", "MB/s"),
    "latency_mean_us": ("latency mean", "us"), "read_latency_mean_us": ("read latency mean", "us"),
    "write_latency_mean_us": ("write latency mean", "us"), "latency_p50_us": ("latency p50", "us"),
    "latency_p95_us": ("latency p95", "us"), "latency_p99_us": ("latency p99", "us"), "latency_p999_us": ("latency p99.9", "us"),
}
"""Measured figures a Result predicts too (``calibration.importers.fio.FioJob.measured`` names them the same)."""


@dataclass(frozen=True)
class Baseline:
    """A measurement and the scenario that models it (the system it ran on, with the measured workload)."""

    source: str
    measured: dict[str, float]
    scenario_json: str
    jobs: list[dict[str, Any]] = field(default_factory=list)
    """Jobs written by ``flashplan export fio``, each beside the prediction it was exported with (``export_tables``)."""

    @property
    def scenario(self) -> Scenario:
        return Scenario.model_validate_json(self.scenario_json)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "measured": dict(self.measured), "scenario_json": self.scenario_json,
                "jobs": list(self.jobs)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Baseline:
        return cls(str(data["source"]), {k: float(v) for k, v in data["measured"].items()}, str(data["scenario_json"]),
                   list(data.get("jobs") or []))


def export_tables(fio: Any, manifest: bytes, origin: str) -> list[dict[str, Any]]:
    """One measured-vs-predicted table per job of a fio result whose jobs ``flashplan export fio`` wrote: IOPS, mean,
    p50, p99, p99.9 beside the prediction in the export's manifest (its 95% CI and the error, predicted / measured
    - 1). Raises ``models.loading.BadInput`` for a manifest that is not one, or a job it does not hold."""
    from calibration.fio_loop import compare, comparison_rows, read_manifest

    predictions = read_manifest(manifest, origin)
    out = []
    for c in compare(fio, predictions):
        p = c.prediction
        title = f"fio job '{c.job.name}': workload {p.workload}"
        if p.interval is not None:
            title += f", interval {p.interval}" + (f" ({p.label})" if p.label else "")
        out.append({"title": f"{title} - {p.describe}", "rows": comparison_rows(c)})
    return out


def iostat_measured(summary: dict[str, Any]) -> dict[str, float]:
    """What an iostat peak measured, in Result metric names (``await`` is the mean time per I/O, queue included)."""
    out = {"iops": float(summary["iops"]), "mbps": float(summary["mbps"])}
    if summary.get("await_ms") is not None:
        out["latency_mean_us"] = float(summary["await_ms"]) * 1000.0
    return out


def comparison_rows(measured: dict[str, float], result: Result) -> list[dict[str, Any]]:
    """Measured vs predicted per figure: the prediction's 95% CI and the gap (predicted / measured - 1)."""
    rows = []
    for key, (label, unit) in LABELS.items():
        if key not in measured:
            continue
        m = getattr(result, key)
        value = measured[key]
        gap = m.value / value - 1.0 if value else float("nan")
        rows.append({"figure": label, "measured": value, "predicted": m.value,
                     "predicted 95% CI": f"{m.ci95[0]:,.1f} .. {m.ci95[1]:,.1f}" if m.has_ci else "unknown",
                     "gap": f"{gap:+.1%}", "unit": unit, "inside CI": bool(m.has_ci and m.contains(value))})
    return rows


def gap_sentence(rows: list[dict[str, Any]]) -> str:
    """One line: how far the base model is from the measurement on throughput and mean latency."""
    parts = [f"{r['figure']} {r['gap']}" for r in rows if r["figure"] in ("IOPS", "latency mean", "latency p99")]
    return "Model against measurement: " + ", ".join(parts) if parts else ""
