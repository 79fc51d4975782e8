"""Workloads: who issues I/Os, how often, how large, reads or writes.

* ``closed`` - ``jobs`` x ``queue_depth`` I/O slots, each reissued after its
  completion plus a think time (fio's numjobs x iodepth with thinktime).
* ``open`` - Poisson arrivals at ``rate_iops``.
* ``bursty`` - on/off modulated Poisson: ``on_rate_iops`` during exponentially
  distributed on periods, ``off_rate_iops`` between them (the BDI write bursts, seed 000).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from models.common import StrictModel, field_problem

WORKLOAD_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,63}$"
"""A workload's name: letters, digits, space, ``_ . + -`` (it keys the result's ``workloads`` object)."""


class SizeWeight(StrictModel):
    """One entry of a block-size mix."""

    kib: float = Field(gt=0, le=65_536)
    weight: float = Field(default=1.0, gt=0)
    op: Literal["any", "read", "write"] = "any"


class WorkloadBase(StrictModel):
    name: str | None = Field(default=None, pattern=WORKLOAD_NAME_PATTERN, description=(
        "the workload's name in a scenario's ``workloads`` list (the single ``workload`` is called 'main')"))
    placement: list[Annotated[int, Field(ge=0, le=1_000_000)]] | None = Field(default=None, min_length=1, max_length=100_000, description=(
        "the volume members this workload's I/Os use (namespaces, LUNs, base EDEVs or DIMMs, numbered as the topology "
        "numbers them): its own volume of the topology's layout over just these members; default: all of them"))
    read_fraction: float = Field(default=0.7, ge=0, le=1)
    block_size_kib: float = Field(default=4, gt=0, le=65_536)
    sizes: list[SizeWeight] | None = Field(default=None, description="block-size mix; overrides block_size_kib")
    access: Literal["random", "sequential"] = "random"

    @model_validator(mode="after")
    def _sizes_cover_ops(self) -> WorkloadBase:
        if self.placement is not None and len(set(self.placement)) != len(self.placement):
            raise field_problem("placement", f"each member may be listed once, got {self.placement}")
        if self.sizes:
            for op, needed in (("read", self.read_fraction > 0), ("write", self.read_fraction < 1)):
                if needed and not any(s.op in ("any", op) for s in self.sizes):
                    raise field_problem("sizes", f"no size entry applies to {op}s (op 'any' or '{op}')")
        return self

    def size_table(self, op: Literal["read", "write"]) -> list[tuple[int, float]]:
        """(bytes, probability) pairs for reads or writes."""
        if not self.sizes:
            return [(int(self.block_size_kib * 1024), 1.0)]
        rows = [(int(s.kib * 1024), s.weight) for s in self.sizes if s.op in ("any", op)]
        total = sum(w for _, w in rows)
        return [(b, w / total) for b, w in rows]

    def mean_bytes(self) -> float:
        """Mean transfer size over reads and writes."""
        mean = 0.0
        if self.read_fraction > 0:
            mean += self.read_fraction * sum(b * p for b, p in self.size_table("read"))
        if self.read_fraction < 1:
            mean += (1 - self.read_fraction) * sum(b * p for b, p in self.size_table("write"))
        return mean


class ClosedWorkload(WorkloadBase):
    kind: Literal["closed"] = "closed"
    jobs: int = Field(default=1, ge=1, le=100_000)
    queue_depth: int = Field(default=1, ge=1, le=65_536, description="outstanding I/Os per job")
    think_time_us: float = Field(default=0.0, ge=0, le=1e9, description="pause between a completion and the slot's next I/O")
    think_distribution: Literal["deterministic", "exponential"] = "deterministic"
    app_us_per_io: float = Field(default=0.0, ge=0, le=1e6, description=(
        "the application's own time per I/O between a completion and the slot's next submission (fio's completion "
        "and submission handling), outside the measured latency; added to the think time, always deterministic"))


class OpenWorkload(WorkloadBase):
    kind: Literal["open"] = "open"
    rate_iops: float = Field(gt=0, le=1e9)


class BurstyWorkload(WorkloadBase):
    kind: Literal["bursty"] = "bursty"
    on_rate_iops: float = Field(gt=0, le=1e9)
    off_rate_iops: float = Field(default=0.0, ge=0, le=1e9)
    mean_on_ms: float = Field(default=100.0, gt=0, le=1e7)
    mean_off_ms: float = Field(default=900.0, gt=0, le=1e7)

    @property
    def mean_rate_iops(self) -> float:
        on, off = self.mean_on_ms, self.mean_off_ms
        return (self.on_rate_iops * on + self.off_rate_iops * off) / (on + off)


Workload = Annotated[ClosedWorkload | OpenWorkload | BurstyWorkload, Field(discriminator="kind")]
