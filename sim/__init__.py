"""flashplan engine: a SimPy discrete-event model of the flash I/O path.

``simulate(scenario) -> Result`` is the public entry point; ``sim.cli`` is the
``flashplan`` command. Everything else is the engine's inside.
"""

from sim.engine import Run, simulate

__all__ = ["Run", "simulate"]
