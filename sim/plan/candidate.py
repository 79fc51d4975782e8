"""One configuration the planner weighs (``Candidate``) and its failure states (``FailureState``): what the
screen (sim/plan/screen.py) and the planner (sim/plan/planner.py) both handle, below both of them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from models.bottleneck import both_words, solvers_agree
from models.cost import AT_BOUND, Capex, usd_per_kiops, usd_per_usable_tb
from models.requirements import Requirements
from models.result import Result
from models.scenario import Scenario
from models.topology import FLASH_KINDS
from sim.analytic import FastResult
from sim.plan.faults import margin_pct


@dataclass
class Candidate:
    """One configuration: its scenario, its price, what the fast path and the DES predict, and its verdict."""

    label: str
    scenario: Scenario
    capex: Capex
    fast: FastResult | None = None
    p99_estimate_us: float | None = None
    des: Result | None = None
    stage: str = "enumerated"
    rejection: str | None = None
    failure_states: dict[str, FailureState] = field(default_factory=dict)
    """The failure states the requirements ask to survive (``Requirements.survive``), by name."""

    @property
    def capex_usd(self) -> float:
        return self.capex.total_usd

    @property
    def usable_tb(self) -> float:
        return self.capex.usable_tb

    @property
    def max_iops(self) -> float | None:
        """The fast path's throughput bound (None before the fast path ran)."""
        return self.fast.bounds.x_max_iops if self.fast else None

    @property
    def usd_per_kiops(self) -> float | None:
        """$/KIOPS at the throughput bound (``models.cost.AT_BOUND``): capex / the fast path's Xmax."""
        return usd_per_kiops(self.capex_usd, self.max_iops) if self.max_iops else None

    @property
    def usd_per_usable_tb(self) -> float:
        return usd_per_usable_tb(self.capex_usd, self.usable_tb)

    @property
    def verified(self) -> bool:
        return self.des is not None and self.rejection is None

    @property
    def feasible(self) -> bool:
        return self.rejection is None and self.fast is not None

    @property
    def bottleneck(self) -> str | None:
        """The DES's bottleneck once it ran, else the fast path's (each the most utilized component of its own
        table, ``models.bottleneck``)."""
        if self.des is not None:
            return self.des.bottleneck
        return self.fast.bottleneck if self.fast else None

    @property
    def bottleneck_words(self) -> str | None:
        """``bottleneck``, followed by the fast path's where the DES ran and the two solvers disagree."""
        if self.des is not None and self.fast is not None:
            return both_words(self.des.bottleneck, self.fast.utilization, self.fast.bottleneck)
        return self.bottleneck

    def headroom_pct(self, target_iops: float) -> float | None:
        """How much more than the target the configuration sustains, in percent (fast-path bound)."""
        return 100.0 * (self.max_iops / target_iops - 1.0) if self.max_iops else None

    def as_dict(self, target_iops: float, detail: bool = False) -> dict[str, Any]:
        """JSON-friendly summary; ``detail`` adds the capex lines, the scenario and the fast path's utilizations."""
        out: dict[str, Any] = {
            "label": self.label,
            "stage": self.stage,
            "rejection": self.rejection,
            "capex_usd": self.capex_usd,
            "usable_tb": self.usable_tb,
            "raw_tb": self.capex.raw_tb,
            "usd_per_kiops": _finite(self.usd_per_kiops),
            "usd_per_kiops_basis": AT_BOUND,
            "usd_per_usable_tb": _finite(self.usd_per_usable_tb),
            "headroom_pct": _finite(self.headroom_pct(target_iops)),
            "bottleneck": self.bottleneck,
            "bottleneck_solvers_agree": (solvers_agree(self.des.bottleneck, self.fast.utilization, self.fast.bottleneck)
                                         if self.des is not None and self.fast is not None else None),
        }
        if detail:
            out["capex"] = self.capex.as_dict()
            out["scenario"] = self.scenario.model_dump(mode="json", exclude_none=True)
        if self.fast is not None:
            f = self.fast
            out["fast_path"] = {
                "iops": f.iops, "mbps": f.mbps, "latency_mean_us": _finite(f.latency_mean_us),
                "read_latency_mean_us": _finite(f.read_latency_mean_us), "write_latency_mean_us": _finite(f.write_latency_mean_us),
                "latency_p99_estimate_us": _finite(self.p99_estimate_us), "max_iops": f.bounds.x_max_iops,
                "min_latency_us": f.bounds.r_min_us, "cpu_us_per_io": f.cpu_us_per_io, "stable": f.stable,
                "bottleneck": f.bottleneck,
            }
            if detail:
                out["fast_path"]["utilization"] = f.utilization
        if self.des is not None:
            d = self.des
            out["des"] = {
                key: {"value": getattr(d, key).value, "ci95": list(getattr(d, key).ci95)}
                for key in ("iops", "mbps", "latency_mean_us", "latency_p99_us", "read_latency_mean_us",
                            "write_latency_mean_us", "cpu_us_per_io")
            }
            out["des"].update(bottleneck=d.bottleneck, stop_reason=d.stop_reason, validity=d.validity,
                              validity_note=d.validity_note, simulated_ios=d.simulated_ios, seed=d.seed)
            if detail:
                out["des"]["utilization"] = d.utilization
        if self.failure_states:
            out["failure_states"] = {name: st.as_dict() for name, st in self.failure_states.items()}
        return out


def scenario_data(label: str, topo: dict[str, Any], device_model: str, **load: Any) -> dict[str, Any]:
    """A candidate scenario's data: name, topology, the load (``workload`` or ``workloads``, ``slos``, ``run``) and
    the requirement's ``device_model`` where the topology has flash devices of its own."""
    data: dict[str, Any] = {"name": label, "topology": topo, **load}
    if device_model != "auto" and topo.get("kind") in FLASH_KINDS:
        data["device_model"] = device_model
    return data


def _finite(x: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure becomes null."""
    return x if x is not None and math.isfinite(x) else None


@dataclass
class FailureState:
    """One failure state of a candidate: its scenario, the fast path's and the DES's predictions, the SLO margin."""

    scenario: Scenario
    fast: FastResult | None = None
    p99_estimate_us: float | None = None
    des: Result | None = None

    def margin_pct(self, req: Requirements) -> float | None:
        """How far the state stays under the SLO (DES when run, else the fast path's estimate)."""
        slo = req.latency_slo
        if self.des is not None:
            value = (self.des.latency_mean_us if slo.statistic == "mean" else self.des.latency_p99_us).value
        elif self.fast is not None:
            value = self.fast.latency_mean_us if slo.statistic == "mean" else (self.p99_estimate_us or math.inf)
        else:
            return None
        return margin_pct(slo.us, value)

    @property
    def bottleneck_words(self) -> str | None:
        """The DES's bottleneck, followed by the fast path's where the two disagree (None before either ran)."""
        if self.des is not None:
            fast = self.fast
            return both_words(self.des.bottleneck, fast.utilization if fast else None, fast.bottleneck if fast else None)
        return self.fast.bottleneck if self.fast is not None else None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"faults": self.scenario.faults.model_dump(mode="json", exclude_none=True) if self.scenario.faults else None}
        if self.fast is not None:
            out["fast_path"] = {"iops": self.fast.iops, "latency_mean_us": _finite(self.fast.latency_mean_us),
                                "latency_p99_estimate_us": _finite(self.p99_estimate_us), "max_iops": self.fast.bounds.x_max_iops,
                                "bottleneck": self.fast.bottleneck}
        if self.des is not None:
            d = self.des
            out["des"] = {key: getattr(d, key).summary() for key in ("iops", "latency_mean_us", "latency_p99_us")}
            out["des"].update(bottleneck=d.bottleneck, validity=d.validity)
            if d.rebuild is not None:
                out["des"]["rebuild"] = d.rebuild.summary()
        return out
