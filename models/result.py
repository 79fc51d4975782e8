"""The Result of a run: every metric with its 95% confidence interval, and what produced it."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from models.bottleneck import consistent_bottleneck
from models.common import StrictModel
from models.scenario import Scenario


class Metric(StrictModel):
    """A point estimate with its 95% confidence interval (batch means, Student t).

    ``ci95`` is (nan, nan) when only one batch holds the metric (a rare op in a short run):
    the interval is unknown, not zero-wide. ``summary()`` (every ``--json``) writes it as null
    with a ``ci95_note``; the model's own JSON (``model_dump_json``, the library) keeps NaN.
    """

    model_config = ConfigDict(ser_json_inf_nan="constants", allow_inf_nan=True)

    value: float
    ci95: tuple[float, float]

    @property
    def has_ci(self) -> bool:
        """Whether the interval is known (at least two batches held the metric)."""
        return self.ci95[0] == self.ci95[0] and self.ci95[1] == self.ci95[1]

    @property
    def half_width(self) -> float:
        return (self.ci95[1] - self.ci95[0]) / 2

    @property
    def rel_half_width(self) -> float:
        return self.half_width / abs(self.value) if self.value else float("inf")

    def contains(self, x: float) -> bool:
        return self.ci95[0] <= x <= self.ci95[1]

    def summary(self) -> dict[str, Any]:
        """The strict-JSON form: an unknown value or interval is null, with ``ci95_note`` saying why."""
        if not math.isfinite(self.value):
            return {"value": None, "ci95": None, "ci95_note": "nothing was measured"}
        if not self.has_ci or not all(math.isfinite(c) for c in self.ci95):
            return {"value": self.value, "ci95": None, "ci95_note": "unknown: fewer than two batches held this metric"}
        return {"value": self.value, "ci95": [self.ci95[0], self.ci95[1]]}


METRIC_KEYS = (
    "iops", "read_iops", "write_iops", "mbps",
    "latency_mean_us", "latency_p50_us", "latency_p95_us", "latency_p99_us", "latency_p999_us",
    "read_latency_mean_us", "write_latency_mean_us", "cpu_us_per_io", "mean_outstanding_ios",
)


INTERVAL_METRICS = (
    "iops", "read_iops", "write_iops", "mbps",
    "latency_mean_us", "latency_p50_us", "latency_p95_us", "latency_p99_us", "latency_p999_us",
    "read_latency_mean_us", "write_latency_mean_us",
)
"""The metrics every interval reports: throughput counts the completions inside the interval
(what the path carried), latency the I/Os that arrived in it (what they waited, drained to the end)."""


class IntervalResult(StrictModel):
    """One interval of a replayed profile: throughput carried, latency of the I/Os it offered."""

    model_config = ConfigDict(allow_inf_nan=True)

    index: int
    label: str = ""
    start_s: float = Field(description="simulated time the interval starts, after the warm-up")
    duration_s: float
    offered_iops: float | None = Field(description="the interval's arrival rate (None: a closed interval)")
    arrived_ios: int = Field(description="I/Os issued in the interval")
    completed_ios: int = Field(description="I/Os completed in the interval, whenever they arrived")
    backlog_start: int = Field(description="I/Os in flight when the interval starts")
    backlog_end: int = Field(description="I/Os in flight when it ends (backlog_start + arrived - completed)")
    metrics: dict[str, Metric]
    ci_notes: dict[str, str] = Field(default_factory=dict, description="why a metric has no interval")
    busiest: str = Field(description="the component with the highest utilization in the interval")
    busiest_utilization: float
    saturated: bool = Field(description="an open interval kept a station busy >= 99%: its queue grows through the interval")

    def summary(self) -> dict[str, Any]:
        """Strict-JSON form: a metric without an interval has ``ci95`` null and the reason."""
        metrics: dict[str, Any] = {}
        for key in INTERVAL_METRICS:
            m = self.metrics[key].summary()
            if m.get("ci95") is None and key in self.ci_notes:
                m["ci95_note"] = self.ci_notes[key]
            metrics[key] = m
        return {
            "index": self.index, "label": self.label, "start_s": self.start_s, "duration_s": self.duration_s,
            "offered_iops": self.offered_iops, "arrived_ios": self.arrived_ios, "completed_ios": self.completed_ios,
            "backlog_start": self.backlog_start, "backlog_end": self.backlog_end, **metrics,
            "busiest": self.busiest, "busiest_utilization": self.busiest_utilization, "saturated": self.saturated,
        }


class PeakInterval(StrictModel):
    """The interval a sizer designs for: the worst p99 (ties: the earlier), with why, and the interval
    of the highest offered load (they differ when a backlog carries over into a quieter interval)."""

    index: int
    reason: str
    worst_p99_index: int | None
    highest_load_index: int


Validity = Literal["precise", "cut_short", "unstable"]
"""How far a Result can be trusted: ``precise`` (the requested CI half-width was reached),
``cut_short`` (a budget ended the run first: the values are indicative, their CIs are wide or
unknown) or ``unstable`` (offered load meets or exceeds a component's capacity: the latency only
says how long the run lasted). Tables, charts, sweeps, the planner and caches treat only
``precise`` as a final answer."""


def _add_intervals(out: dict[str, Any], intervals: list[IntervalResult] | None, peak: PeakInterval | None) -> None:
    """Into a summary ``out``: a replayed profile's intervals and peak, and a note on each run-wide metric without
    an interval (pooled over a changing load: no steady-state interval to give)."""
    if intervals is None:
        return
    out["intervals"] = [iv.summary() for iv in intervals]
    out["peak_interval"] = peak.model_dump(mode="json") if peak else None
    for key in METRIC_KEYS:
        if out[key].get("ci95") is None and out[key].get("value") is not None:
            out[key]["ci95_note"] = "run-wide over a changing load: see the per-interval intervals"


class RunMetrics(StrictModel):
    """The metrics of a run, each with its 95% interval (``METRIC_KEYS``, in that order): held once for the
    whole run's ``Result`` and each workload's ``WorkloadResult``."""

    model_config = ConfigDict(allow_inf_nan=True)

    iops: Metric
    read_iops: Metric
    write_iops: Metric
    mbps: Metric
    latency_mean_us: Metric
    latency_p50_us: Metric
    latency_p95_us: Metric
    latency_p99_us: Metric
    latency_p999_us: Metric
    read_latency_mean_us: Metric
    write_latency_mean_us: Metric
    cpu_us_per_io: Metric
    mean_outstanding_ios: Metric = Field(description="time-average I/Os issued and not yet completed (Little's L)")

    def metrics_summary(self) -> dict[str, Any]:
        """Every metric's strict-JSON form (``Metric.summary``), by key, in ``METRIC_KEYS`` order."""
        out: dict[str, Any] = {}
        for key in METRIC_KEYS:
            m: Metric = getattr(self, key)
            out[key] = m.summary()
        return out


class _WorkloadKind(StrictModel):
    """``WorkloadResult``'s first field, before the metrics (its JSON key order)."""

    kind: str


class WorkloadResult(RunMetrics, _WorkloadKind):
    """One workload's share of a consolidated run: its own throughput and latency (the same metric
    objects as the whole Result), over the same measured window. The hardware is shared: utilization,
    the bottleneck and validity are the whole scenario's. ``cpu_us_per_io`` is the host CPU's busy
    time per I/O of the whole run (one CPU, not metered per workload)."""

    mean_outstanding_ios: Metric = Field(description="time-average I/Os of this workload issued and not yet completed")
    offered_iops: float | None = Field(default=None, description="the mean arrival rate of an open or bursty workload")
    measured_ios: int = Field(description="this workload's I/Os completed in the measured window")
    intervals: list[IntervalResult] | None = Field(default=None, description=(
        "a replay with a profile among the workloads: this workload's figures in each of the profile's intervals "
        "(the same windows for every workload: 'OLTP latency during the batch peak')"))
    peak_interval: PeakInterval | None = Field(default=None, description="the interval to size this workload for (worst p99)")

    def summary(self) -> dict[str, Any]:
        """The strict-JSON form (as ``Result.summary`` writes its metrics)."""
        out: dict[str, Any] = {"kind": self.kind, **self.metrics_summary()}
        out.update(offered_iops=self.offered_iops, measured_ios=self.measured_ios)
        _add_intervals(out, self.intervals, self.peak_interval)
        return out


class RebuildFigures(StrictModel):
    """A rebuild measured while host I/O runs (a scenario's ``faults.rebuild``): the rate it achieved against
    its cap, and the time it would take to rebuild each replacement drive at that rate."""

    model_config = ConfigDict(allow_inf_nan=True)

    rate_mbps: Metric = Field(description="MB/s written to each replacement drive (batch means over the measured window)")
    cap_mbps: float = Field(description="the configured cap per replacement drive (rate_mbps, or md speed_limit_max)")
    floor_mbps: float = Field(description="md speed_limit_min per replacement drive (0 with an explicit rate)")
    drive_bytes: int = Field(description="bytes to rebuild on each replacement drive")
    time_s: float = Field(description="drive_bytes / rate: the rebuild's duration at the achieved rate")
    replacement_drives: int
    idle_rate_mbps: float = Field(default=0.0, description="MB/s per replacement drive with no host I/O: min(cap, what "
                                                            "the drives do at the rebuild's depth)")
    throttle: str = Field(default="none", description="how the rebuild yields to host I/O: md's md_throttle "
                                                       "(legacy | sync_io_depth), or none (an explicit rate_mbps)")

    @property
    def idle_time_s(self) -> float:
        """drive_bytes / idle rate: the rebuild's duration on an idle array (the best case)."""
        return self.drive_bytes / (self.idle_rate_mbps * 1e6) if self.idle_rate_mbps > 0 else math.inf

    def summary(self) -> dict[str, Any]:
        finite = math.isfinite(self.time_s)
        idle = self.idle_time_s
        return {"rate_mbps": self.rate_mbps.summary(), "cap_mbps": self.cap_mbps, "floor_mbps": self.floor_mbps,
                "drive_bytes": self.drive_bytes, "time_s": self.time_s if finite else None,
                "time_h": self.time_s / 3600 if finite else None, "replacement_drives": self.replacement_drives,
                "throttle": self.throttle, "idle_rate_mbps": self.idle_rate_mbps,
                "idle_time_h": idle / 3600 if math.isfinite(idle) else None}


class Result(RunMetrics):
    """Predicted performance of one scenario, with the scenario and seed that produced it.

    ``utilization`` maps every component (stations: busy servers / servers; concurrency
    limits such as namespace queues, NVMe queues, z/VM subchannels: slots in use / slots)
    to its time-average over the measured window; ``busy`` maps the same names to the
    fraction of time at least one server or slot was in use (IBM i's "disk busy %"). ``bottleneck`` is
    the most utilized component of that table (``models.bottleneck``): a name the table does not have at
    its top is replaced by the table's ``most_utilized``.
    """

    utilization: dict[str, float]
    busy: dict[str, float]
    bottleneck: str

    @field_validator("bottleneck")
    @classmethod
    def _most_utilized(cls, value: str, info: ValidationInfo) -> str:
        utilization = info.data.get("utilization")
        return consistent_bottleneck(value, utilization) if utilization else value
    stop_reason: str
    validity: Validity = Field(description="precise | cut_short | unstable (see Validity)")
    validity_note: str = Field(default="", description="why the result is cut short or unstable, in the user's words")
    simulated_ios: int = Field(description="logical I/Os completed, warm-up included")
    measured_ios: int = Field(description="logical I/Os completed after the warm-up")
    issued_ios: int
    in_flight_ios: int
    batches: int
    simulated_seconds: float
    wall_seconds: float
    seed: int
    scenario: Scenario
    workloads: dict[str, WorkloadResult] | None = Field(default=None, description=(
        "per workload, by name (a scenario with a workloads list): each one's metrics over the same window"))
    rebuild: RebuildFigures | None = Field(default=None, description="a rebuild in progress (scenario faults.rebuild)")
    intervals: list[IntervalResult] | None = Field(default=None, description="a replayed profile: one entry per interval")
    peak_interval: PeakInterval | None = Field(default=None, description="a replayed profile: the interval to size for")

    def summary(self) -> dict[str, Any]:
        """The JSON shape of ``flashplan simulate --json``.

        Wall time is left out: it is the machine's, not the prediction's, and without it
        the same seed gives byte-identical JSON on any machine.
        """
        out: dict[str, Any] = self.metrics_summary()
        out.update(
            utilization=self.utilization,
            busy=self.busy,
            bottleneck=self.bottleneck,
            stop_reason=self.stop_reason,
            validity=self.validity,
            validity_note=self.validity_note,
            simulated_ios=self.simulated_ios,
            measured_ios=self.measured_ios,
            issued_ios=self.issued_ios,
            in_flight_ios=self.in_flight_ios,
            batches=self.batches,
            simulated_seconds=self.simulated_seconds,
            seed=self.seed,
            scenario=self.scenario.model_dump(mode="json", exclude_none=True),
        )
        if self.workloads is not None:
            out["workloads"] = {name: w.summary() for name, w in self.workloads.items()}
        if self.rebuild is not None:
            out["rebuild"] = self.rebuild.summary()
        _add_intervals(out, self.intervals, self.peak_interval)
        return out
