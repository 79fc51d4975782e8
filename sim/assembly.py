"""The Result of a finished run: every metric with its 95% interval over the steady batches,
the utilization of every component, the bottleneck, and why the run stopped (the result half
of ``sim.engine.Run``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from models.result import METRIC_KEYS, Metric, Result
from sim.components import Station
from sim.stats import estimate

if TYPE_CHECKING:
    from sim.engine import Run


def assemble(run: Run, wall: float) -> Result:
    """The Result of ``run`` after it stopped, ``wall`` seconds after it started."""
    batching = run.batching
    if not batching.batches:
        if batching.b_ios:
            run.stopped = True
            batching.close_batch(check=False)
        else:
            raise RuntimeError(
                f"the run ended ({run.stop_reason or 'no completions'}) before any I/O was measured; "
                f"raise run.max_ios / run.max_wall_s or lower run.warmup_ios"
            )
    batches = batching.steady_batches()
    metrics = {}
    for key in METRIC_KEYS:
        v, lo, hi = estimate(batches, key)
        metrics[key] = Metric(value=v, ci95=(lo, hi))
    utilization, busy = batching.occupancy()
    # stations always compete; a concurrency limit only if an I/O ever waited for it
    candidates = {m.name: utilization[m.name] for m in run.model.meters
                  if isinstance(m, Station) or m.waited}
    bottleneck = max(candidates, key=lambda k: candidates[k]) if candidates else "none"
    return Result(
        **metrics,
        utilization=utilization,
        busy=busy,
        bottleneck=bottleneck,
        stop_reason=run.stop_reason,
        validity="precise" if run.stop_reason.startswith("precision") else "cut_short",
        validity_note="" if run.stop_reason.startswith("precision") else run.stop_reason,
        simulated_ios=run.completed,
        measured_ios=sum(b.ios for b in batches),
        issued_ios=run.issued,
        in_flight_ios=run.outstanding,
        batches=len(batches),
        simulated_seconds=run.env.now * 1e-6,
        wall_seconds=wall,
        seed=run.scenario.run.seed,
        scenario=run.scenario,
    )
