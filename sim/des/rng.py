"""Random streams: one numpy SeedSequence per run, one child stream per component.

Samples are drawn from numpy in blocks and handed out as Python floats: a
per-sample numpy call costs about a microsecond, a list lookup a few tens of
nanoseconds. Streams are created in a fixed order while the model is built, so
one seed gives bit-identical results on any machine.
"""

from __future__ import annotations

import math

import numpy as np

BLOCK = 4096


class Streams:
    """Hands out independent generators, in creation order, from one seed."""

    def __init__(self, seed: int):
        self._root = np.random.SeedSequence(seed)

    def generator(self) -> np.random.Generator:
        (child,) = self._root.spawn(1)
        return np.random.Generator(np.random.PCG64(child))

    def unit(self, law: str, cv: float = 1.0) -> UnitSampler:
        """Samples of a unit-mean service-time law: exponential, deterministic or lognormal(cv)."""
        return UnitSampler(self.generator(), law, cv)

    def uniform(self) -> UnitSampler:
        return UnitSampler(self.generator(), "uniform", 0.0)


class UnitSampler:
    """Unit-mean samples (or U(0,1) for ``uniform``), drawn in blocks of 4096."""

    __slots__ = ("_buf", "_gen", "_i", "_law", "_n", "_sigma")

    def __init__(self, gen: np.random.Generator, law: str, cv: float):
        if law not in ("exponential", "deterministic", "lognormal", "uniform"):
            raise ValueError(f"unknown service-time law {law!r}")
        self._gen = gen
        self._law = law
        self._sigma = math.sqrt(math.log1p(cv * cv)) if law == "lognormal" else 0.0
        self._buf: list[float] = []
        self._i = 0
        self._n = 0

    def _refill(self) -> None:
        g = self._gen
        if self._law == "exponential":
            arr = g.standard_exponential(BLOCK)
        elif self._law == "lognormal":
            # math.exp element by element, not np.exp: numpy's vectorised exp takes an AVX-512 path on CPUs that
            # have it and differs from the C library's in the last bit, so the same seed gave other digits there
            s: float = self._sigma
            half: float = 0.5 * s * s
            normals: list[float] = g.standard_normal(BLOCK).tolist()
            self._buf = [math.exp(s * z - half) for z in normals]  # typed: compiled, a float multiply and exp each
            self._i = 0
            self._n = BLOCK
            return
        elif self._law == "uniform":
            arr = g.random(BLOCK)
        else:
            arr = np.ones(BLOCK)
        self._buf = arr.tolist()
        self._i = 0
        self._n = BLOCK

    def __call__(self) -> float:
        i = self._i
        if i == self._n:
            if self._law == "deterministic":
                return 1.0
            self._refill()
            i = 0
        self._i = i + 1
        return self._buf[i]
