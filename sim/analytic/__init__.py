"""The analytic fast path: mean throughput, latency, utilization, bounds and tail percentiles of a scenario.

``evaluate(scenario) -> FastResult`` solves the I/O path the DES builds, from the same route description,
as a queueing network instead of a simulation (sim/analytic/solve.py says how). The package's modules:

* ``solve``: ``evaluate`` and the solvers of one workload (closed MVA, open M/G/c, bursty, sequential blends);
* ``paths``: the route compiled into a network of groups (``compile_scenario``);
* ``network``, ``queueing``: the network's evaluation and the queueing formulas it uses;
* ``classes``: several workloads at once as a multi-class network;
* ``bursty``, ``demands``: on/off workloads, where extra waiting goes, the rate where a network saturates;
* ``tails``, ``dies``: the p99 / p99.9 estimate (die-level and pooled device laws, a heuristic otherwise);
* ``cache``: compiled networks kept for reuse;
* ``rebuild``: the rebuild rate of a RAID array under the foreground load.
"""

from __future__ import annotations

from models.fast_result import Bounds, FastResult
from sim.analytic.cache import clear_cache
from sim.analytic.dies import DiePoint, die_level_closed, die_level_quantile_us, die_qd1_quantile_us
from sim.analytic.rebuild import loaded_rebuild_rate
from sim.analytic.solve import evaluate
from sim.analytic.tails import TAIL_METHODS, heuristic_quantile_us, with_tails

__all__ = ["TAIL_METHODS", "Bounds", "DiePoint", "FastResult", "clear_cache", "die_level_closed", "die_level_quantile_us",
           "die_qd1_quantile_us", "evaluate", "heuristic_quantile_us", "loaded_rebuild_rate", "with_tails"]
