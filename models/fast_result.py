"""What the analytic fast path (sim/analytic) predicts for one scenario: ``FastResult`` and its ``Bounds``.

Plain data, kept out of the compiled fast path (sim/native/guard.py) so that results pickle (Dask, the
web app's caches) and compare the same whether the fast path runs compiled or interpreted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from models.bottleneck import consistent_bottleneck

MECHANISM_TAIL_METHODS = ("dies", "dies, closed reads", "pooled")
"""``FastResult.tail_method`` values that come from a queueing mechanism (``sim.analytic.TAIL_METHODS``)."""


@dataclass(frozen=True)
class Bounds:
    """Asymptotic bounds of the I/O path (per logical I/O)."""

    x_max_iops: float
    """1 / D_max: the throughput no population can exceed."""
    r_min_us: float
    """Latency with no queueing (the sum of the demands along the critical path)."""
    n_star: float
    """(R_min + Z) / D_max, Z = think time: I/Os in flight at the knee."""
    bottleneck: str = ""
    """The component with the largest demand (the one that saturates first)."""


@dataclass(frozen=True)
class FastResult:
    """The analytic prediction for one scenario (mean values and a p99 / p99.9 estimate; no confidence intervals)."""

    iops: float
    read_iops: float
    write_iops: float
    mbps: float
    latency_mean_us: float
    read_latency_mean_us: float
    write_latency_mean_us: float
    utilization: dict[str, float]
    """Component name (as in the DES Result.utilization) -> busy servers / servers, or slots in use / slots."""
    bottleneck: str
    """The most utilized component of ``utilization`` (``models.bottleneck``; a name the table does not have at its top
    is replaced by the table's ``most_utilized``). Empty when the utilization was not computed."""
    bounds: Bounds
    cpu_us_per_io: float
    stable: bool
    """False when an open or bursty workload's mean rate exceeds Xmax (latency is then infinite)."""
    workloads: dict[str, FastResult] | None = None
    """Per workload, by name (a scenario with a ``workloads`` list; sim/analytic/classes.py): each
    one's throughput and latency, and its own share of each component's utilization."""
    notes: tuple[str, ...] = ()
    """What the prediction leaves out for this scenario (a workload's placement), in the user's words."""
    latency_p99_us: float | None = None
    """The fast path's p99 latency estimate (``tail_method`` says how; infinite when unstable). Set by
    ``sim.analytic.evaluate`` on every result it returns (None only on a result built elsewhere)."""
    latency_p999_us: float | None = None
    """The p99.9 estimate, as ``latency_p99_us``."""
    tail_method: str = ""
    """How the p99 / p99.9 were estimated (``sim.analytic.TAIL_METHODS``): ``dies`` (the die-level mechanism),
    ``dies, closed reads`` (a device's closed read loop, ``sim.analytic.dies.closed_read_quantile_us``), ``pooled``
    (one workload on pooled flash devices: service, program and queue waits, ``sim.analytic.tails.pooled_tails``) or
    ``heuristic`` (the pooled model's screening heuristic, ``sim.analytic.heuristic_quantile_us``)."""

    def __post_init__(self) -> None:
        if self.utilization:
            object.__setattr__(self, "bottleneck", consistent_bottleneck(self.bottleneck, self.utilization))

    @property
    def tails_from_mechanism(self) -> bool:
        """Whether the p99 / p99.9 come from a queueing mechanism (``MECHANISM_TAIL_METHODS``), not the screening
        heuristic (whose p99.9 is not offered)."""
        return self.tail_method in MECHANISM_TAIL_METHODS

    def summary(self) -> dict[str, object]:
        """A JSON-friendly dictionary (infinite latencies as None)."""
        def num(v: float | None) -> float | None:
            return v if v is not None and math.isfinite(v) else None

        return {
            "iops": self.iops, "read_iops": self.read_iops, "write_iops": self.write_iops, "mbps": self.mbps,
            "latency_mean_us": num(self.latency_mean_us), "read_latency_mean_us": num(self.read_latency_mean_us),
            "write_latency_mean_us": num(self.write_latency_mean_us), "cpu_us_per_io": self.cpu_us_per_io,
            "utilization": self.utilization, "bottleneck": self.bottleneck, "stable": self.stable,
            "bounds": {"x_max_iops": self.bounds.x_max_iops, "r_min_us": self.bounds.r_min_us,
                       "n_star": self.bounds.n_star, "bottleneck": self.bounds.bottleneck},
        } | ({"latency_p99_us": num(self.latency_p99_us), "latency_p999_us": num(self.latency_p999_us),
              "tail_method": self.tail_method} if self.tail_method else {}) | (
            {"workloads": {name: w.summary() for name, w in self.workloads.items()}} if self.workloads is not None else {}) | (
            {"notes": list(self.notes)} if self.notes else {})
