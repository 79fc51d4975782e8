"""Service-level objectives per workload of a consolidated scenario: "OLTP p99 <= 1 ms while
the backup gets >= 500 MB/s".

An objective names one of the scenario's workloads and bounds its latency (mean, p95, p99 or p99.9,
at most ``us``) and / or its throughput (at least ``min_mbps`` or ``min_iops``). ``verdicts`` checks
them against per-workload figures (a DES Result's or the fast path's), saying for each whether it is met
and by how much; with a DES interval, "met" means the whole 95% interval is on the right side
("uncertain" when the interval straddles the bound).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from models.common import StrictModel, field_problem

LatencyStatistic = Literal["mean", "p95", "p99", "p999"]
STATISTIC_KEYS = {"mean": "latency_mean_us", "p95": "latency_p95_us", "p99": "latency_p99_us", "p999": "latency_p999_us"}
"""The Result metric each latency statistic reads."""


class WorkloadSlo(StrictModel):
    """One workload's objective: a latency ceiling and / or a throughput floor."""

    workload: str = Field(min_length=1, description="the name of one of the scenario's workloads")
    statistic: LatencyStatistic = "p99"
    us: float | None = Field(default=None, gt=0, le=1e9, description="the latency statistic must stay at or below this")
    min_mbps: float | None = Field(default=None, gt=0, le=1e7, description="MB/s (10^6 bytes) the workload must get")
    min_iops: float | None = Field(default=None, gt=0, le=1e9, description="I/Os per second the workload must get")

    @model_validator(mode="after")
    def _bounds_something(self) -> WorkloadSlo:
        if self.us is None and self.min_mbps is None and self.min_iops is None:
            raise field_problem("us", "an objective needs a latency ceiling (us) or a throughput floor (min_mbps, min_iops)")
        return self

    def checks(self) -> list[tuple[str, str, float]]:
        """(metric key, "max" or "min", bound) for every bound the objective sets."""
        out: list[tuple[str, str, float]] = []
        if self.us is not None:
            out.append((STATISTIC_KEYS[self.statistic], "max", self.us))
        if self.min_mbps is not None:
            out.append(("mbps", "min", self.min_mbps))
        if self.min_iops is not None:
            out.append(("iops", "min", self.min_iops))
        return out


Verdict = Literal["met", "missed", "uncertain", "unknown"]


def verdict(kind: str, bound: float, value: float | None, low: float | None = None, high: float | None = None) -> Verdict:
    """Whether ``value`` (with its 95% interval ``low`` .. ``high`` when known) keeps a "max" or "min" bound."""
    if value is None or value != value:
        return "unknown"
    ok = value <= bound if kind == "max" else value >= bound
    if low is None or high is None:
        return "met" if ok else "missed"
    surely = high <= bound if kind == "max" else low >= bound
    surely_not = low > bound if kind == "max" else high < bound
    return "met" if surely else "missed" if surely_not else "uncertain"
