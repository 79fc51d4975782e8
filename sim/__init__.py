"""flashplan engine: a SimPy discrete-event model of the flash I/O path.

``simulate(scenario) -> Result`` is the public entry point; ``sim.cli`` is the
``flashplan`` command. Everything else is the engine's inside.
"""

from sim.native import guard as native

native.use_interpreted_if_stale()  # before anything imports sim.analytic: never run a stale build

from sim.des.engine import Run, simulate  # noqa: E402

__all__ = ["Run", "simulate"]
