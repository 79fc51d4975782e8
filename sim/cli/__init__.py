"""The ``flashplan`` command (``flashplan`` module: parser, ``main``, simulate / schema / catalog / app) and
its subcommands, one module each; the notebooks' shared settings.

* ``analyze``: ``flashplan analyze FILE [--set dotted.path=VALUE ...] [--json] [--compare]``.
* ``export``: ``flashplan export fio``: fio job files that reproduce a scenario's (or a plan winner's) workloads.
* ``flashplan``: The ``flashplan`` command.
* ``growth``: ``flashplan growth FILE --slo-p99-us X [--rate-per-year R] [--start YYYY-MM-DD] ...``.
* ``import_``: ``flashplan import fio|iostat``: workloads and calibration checks from real measurements (``import fio
  --against``: exported jobs beside their predictions).
* ``notebook``: What the what-if notebooks (notebooks/) share: the run budget switch and the PNG chart export.
* ``output``: The console every ``flashplan`` command prints to: a table is never cut.
* ``plan``: ``flashplan plan`` and ``flashplan cost``.
* ``qd_sweep``: ``flashplan qd-sweep DRIVE [--qd 1,2,4,...] [--solver fast|des] [--read-fraction F] [--block-
  kib B] [--max-ios N] [--json]``.
* ``sweep``: ``flashplan sweep FILE [--out results.parquet|.csv] [--scheduler tcp://HOST:PORT] [--workers N]
  [--resume]``.
"""

from sim.cli.flashplan import main

__all__ = ["main"]
