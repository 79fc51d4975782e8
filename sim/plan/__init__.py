"""Planning on top of both solvers: the planner (rank candidates on the fast path, confirm finalists with the
DES), its wide candidate space, and parameter sweeps.

* ``candidate``: One configuration the planner weighs (``Candidate``) and its failure states (``FailureState``):
  what the screen and the planner both handle, below both of them.
* ``consolidated``: The consolidated planner: the cheapest configuration on which several workloads each meet
  their objectives.
* ``faults``: A scenario with ``faults`` (models/faults.py) as the states a sizing must survive: healthy,
  degraded, rebuilding.
* ``growth``: How far load can grow before a p99 SLO breaks, and when that is at a yearly growth rate (issue
  21).
* ``parent_watch``: Local worker processes that end with the process that started them, even if it is
  SIGKILLed.
* ``planner``: The capacity planner: the cheapest configuration that meets a set of requirements.
* ``profile_fast``: The analytic fast path of a load profile: every interval as its own steady state, and
  where that is wrong.
* ``qd_sweep``: Queue-depth sweep of one catalog device: IOPS and latency (mean, p50, p99, p99.9) at QD 1, 2,
  4, ... 256.
* ``screen``: The planner's screening and DES verification over worker processes.
* ``slo_check``: Objectives per workload (models/slo.py) against a solver's figures: the DES's (with
  intervals) or the fast path's (means; p99 by its own estimate, ``FastResult.latency_p99_us``). Used by ``simulate``,
  ``analyze``, the Consolidation page and the consolidated planner (sim/plan/consolidated.py).
* ``space``: The planner's wide candidate space: the configurations a sizer would ask about (item
  3).
* ``sweep``: Sweeps: one base scenario run over a grid (or a zip) of factor values, with replications.
"""
