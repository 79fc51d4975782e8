"""The SimPy discrete-event simulation: a route description as SimPy components, the run (arrivals, batch
means and the stop rule, result assembly), random streams and statistics.

* ``arrivals``: Where a run's I/Os come from: a closed population of jobs x queue depth, or an open Poisson
  (or bursty on/off Poisson) stream. The arrivals half of ``sim.des.engine.Run``.
* ``assembly``: The Result of a finished run: every metric with its 95% interval over the steady batches, the
  utilization of every component, the bottleneck, why the run stopped and how far the result can be trusted
  (the result half of ``sim.des.engine.Run``).
* ``batching``: Warm-up, batch means and the stop rule of one run (the statistics half of
  ``sim.des.engine.Run``).
* ``components``: Engine building blocks: stations, concurrency limits, pure delays, fork and split.
* ``dies``: The ``dies`` device model: a flash device as addressed NAND dies behind a controller.
* ``engine``: Run a scenario: generate the workload, walk every I/O through the model, stop on precision.
* ``model``: The DES backend: turn a route description (sim/route/) into engine components (DESIGN.md section
  3).
* ``profile``: Replay a load profile with the DES: the arrivals change rate, depth and mix at interval
  boundaries, and every interval is measured on its own (load over time).
* ``rng``: Random streams: one numpy SeedSequence per run, one child stream per component.
* ``run_state``: What the parts of a run (arrivals, batch means, result assembly) see of it: the ``RunState``
  protocol.
* ``stats``: Streaming statistics: a log-bucket latency histogram and batch-means confidence intervals.
"""

from sim.des import engine, profile

engine.set_profile_replay(profile.simulate_profile)  # the engine dispatches a profile workload to its replay without importing it
