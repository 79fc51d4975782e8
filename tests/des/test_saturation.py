"""An open load at or past the capacity of its route is never called precise, whatever the run length.

Each attachment kind (a drive under the die-level model, a SAN route, a z/VM EDEV, eXFlash DIMMs) gets
an open Poisson load at fractions of its capacity - the fast path's throughput bound Xmax of the same
route - under the default run settings. At 1.0 and 1.05 of the bound the run is ``unstable`` (or, at
exactly 1.0, at most ``cut_short``: a queue at capacity is null-recurrent and a finite run cannot
always tell it from one just below), never ``precise``. At 0.7 the default run agrees with a run
twice as precise (bounded by I/Os, not wall time); on z/VM the DES saturates below the fast path's
bound (its subchannels), so there both runs are unstable. The relaxation-time rule and the trend
test are checked against M/M/1 theory.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from models.scenario import Scenario, with_overrides
from sim.analytic import evaluate
from sim.des.batching import RELAXATION_TIMES
from sim.des.engine import simulate
from sim.des.stats import mann_kendall_z, sen_slope
from tests.conftest import EXAMPLES

ONE_P4510 = {
    "name": "one P4510, open 4 KiB 71% reads",
    "topology": {"kind": "direct_nvme", "drive": "P4510-4TB", "drives": 1, "adapter": "IBM-NVMe-Carrier-0448",
                 "adapters": 1, "layout": "jbod"},
    "workload": {"kind": "open", "rate_iops": 1_000, "read_fraction": 0.71, "block_size_kib": 4, "access": "random"},
}


def _from_example(name: str, read_fraction: float | None = None) -> dict[str, Any]:
    data = yaml.safe_load(Path(EXAMPLES / name).read_text(encoding="utf-8"))
    wl = data["workload"]
    data["workload"] = {"kind": "open", "rate_iops": 1_000, "block_size_kib": wl.get("block_size_kib", 4), "access": "random",
                        "read_fraction": wl.get("read_fraction", 1.0) if read_fraction is None else read_fraction}
    data.pop("run", None)  # the default run settings
    return data


KINDS = {
    "die-level drive": lambda: ONE_P4510,
    "SAN (FCP)": lambda: _from_example("s1_linuxone_fcp_ds8950f.yaml"),
    "z/VM EDEV": lambda: _from_example("s4_zvm_edev_aliases.yaml", read_fraction=0.3),
    "eXFlash": lambda: _from_example("s3_exflash_4dimms.yaml"),
}


def at_capacity_fraction(kind: str, fraction: float, **run: Any) -> tuple[Scenario, float]:
    """The kind's open scenario at ``fraction`` of the fast path's bound, and the bound."""
    base = Scenario.model_validate(KINDS[kind]())
    xmax = evaluate(base).bounds.x_max_iops
    return with_overrides(base, {"workload.rate_iops": fraction * xmax, **{f"run.{k}": v for k, v in run.items()}}), xmax


@pytest.mark.parametrize("fraction", [1.0, 1.05])
@pytest.mark.parametrize("kind", list(KINDS))
def test_never_precise_at_or_above_capacity(kind: str, fraction: float) -> None:
    scenario, _ = at_capacity_fraction(kind, fraction)
    result = simulate(scenario)
    assert result.validity != "precise", (kind, fraction, result.stop_reason)
    if fraction > 1.0:
        assert result.validity == "unstable", (kind, result.validity_note)
    if result.validity == "unstable":
        # the resource named is a resource of the run's own table, and the busiest of those that compete
        assert result.bottleneck in result.utilization
        assert result.utilization[result.bottleneck] >= 0.9
        assert result.bottleneck in result.validity_note or "in flight rose" in result.validity_note


@pytest.mark.parametrize("kind", list(KINDS))
def test_below_capacity_the_default_run_agrees_with_a_longer_one(kind: str) -> None:
    scenario, _ = at_capacity_fraction(kind, 0.7)
    short = simulate(scenario)
    long = simulate(with_overrides(scenario, {"run.target_rel_ci": 0.01, "run.max_ios": 200_000, "run.max_wall_s": 3_600}))
    assert (short.validity == "unstable") == (long.validity == "unstable"), (kind, short.validity_note, long.validity_note)
    if long.validity != "unstable":
        assert short.validity == "precise"
        # the two runs estimate the same steady state: the short run's interval holds the long run's value
        # (widened by the long run's own half-width)
        for key in ("iops", "latency_mean_us"):
            s, lg = getattr(short, key), getattr(long, key)
            assert abs(s.value - lg.value) <= s.half_width + lg.half_width, (kind, key, s, lg)


@pytest.mark.parametrize("kind", ["die-level drive", "eXFlash"])
def test_near_capacity_precise_only_after_the_relaxation_time(kind: str) -> None:
    """At 0.95 of the bound the run is stable; if it says precise, it covered RELAXATION_TIMES relaxation times
    of its busiest resource: rho / (1 - sqrt(rho))^2 x RELAXATION_TIMES completions at least."""
    scenario, _ = at_capacity_fraction(kind, 0.95, max_ios=120_000)
    result = simulate(scenario)
    assert result.validity != "unstable", result.validity_note
    rho = result.utilization[result.bottleneck]  # the most utilized resource that competes: the longest relaxation
    needed = RELAXATION_TIMES * rho / (1 - math.sqrt(rho)) ** 2
    if result.validity == "precise":
        assert result.measured_ios >= 0.9 * needed
    else:
        assert "relax" in result.validity_note or "wider" in result.validity_note


def _mm1(rate: float, **run: Any) -> Scenario:
    return Scenario.model_validate({
        "name": "M/M/1",
        "topology": {"kind": "generic", "stations": [{"name": "server", "servers": 1, "service_time_us": 10.0,
                                                      "distribution": "exponential"}]},
        "workload": {"kind": "open", "rate_iops": rate, "read_fraction": 1.0},
        "run": {"seed": 3, **run},
    })


def test_mm1_near_capacity_waits_for_its_relaxation_time() -> None:
    """M/M/1 at rho = 0.985: tau = S / (1 - sqrt(rho))^2 = 10 us / 0.0075^2 = 0.18 s (Morse 1955), so a precise
    answer needs about 10 x 0.18 s x 98,500 IOPS = 175,000 measured I/Os; a 60,000-I/O budget is cut short and
    says why, and never precise."""
    result = simulate(_mm1(98_500, max_ios=60_000, target_rel_ci=0.05))
    assert result.validity in ("cut_short", "unstable")
    if result.validity == "cut_short":
        assert "relaxation" in result.validity_note
        assert "server" in result.validity_note


def test_mm1_past_capacity_is_unstable_and_stops_early() -> None:
    """M/M/1 at rho = 1.05: the server is the resource named, and the run stops on the verdict long before its budget."""
    result = simulate(_mm1(105_000))
    assert result.validity == "unstable"
    assert result.bottleneck == "server"
    assert result.simulated_ios < 200_000


def test_mm1_well_below_capacity_is_unchanged_by_the_rule() -> None:
    """M/M/1 at rho = 0.5: tau = 10 / (1 - 0.707)^2 = 117 us; the rule asks for ~30 measured I/Os: precise, with the
    theoretical mean S / (1 - rho) = 20 us within its interval."""
    result = simulate(_mm1(50_000))
    assert result.validity == "precise"
    lo, hi = result.latency_mean_us.ci95
    assert lo * 0.98 <= 20.0 <= hi * 1.02


def test_trend_statistics() -> None:
    """Mann-Kendall z of a strictly rising series of n is (n(n-1)/2 - 1) / sqrt(n(n-1)(2n+5)/18); a constant series
    has none; the Theil-Sen slope of a line is its slope, with one outlier too."""
    n = 20
    assert mann_kendall_z([float(i) for i in range(n)]) == pytest.approx((n * (n - 1) / 2 - 1) / math.sqrt(n * (n - 1) * (2 * n + 5) / 18))
    assert mann_kendall_z([float(-i) for i in range(n)]) < -3
    assert mann_kendall_z([5.0] * n) == 0.0
    times = [float(i) for i in range(n)]
    line = [3.0 + 2.0 * t for t in times]
    line[7] = 1_000.0
    assert sen_slope(times, line) == pytest.approx(2.0)
