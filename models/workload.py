"""Workloads: who issues I/Os, how often, how large, reads or writes.

* ``closed`` - ``jobs`` x ``queue_depth`` I/O slots, each reissued after its
  completion plus a think time (fio's numjobs x iodepth with thinktime).
* ``open`` - Poisson arrivals at ``rate_iops``.
* ``bursty`` - on/off modulated Poisson: ``on_rate_iops`` during exponentially
  distributed on periods, ``off_rate_iops`` between them (the BDI write bursts, seed 000).
* ``profile`` - load over time: a list of intervals (duration, rate or queue depth, mix)
  replayed one after another (``ProfileWorkload``; the DES in ``sim.des.profile``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationError, model_validator

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



class ProfileInterval(StrictModel):
    """One interval of a load profile: for ``duration_s`` seconds, either Poisson arrivals at
    ``rate_iops`` or ``queue_depth`` I/Os kept in flight; the I/O mix of the profile unless given here."""

    duration_s: float = Field(gt=0, le=31_622_400, description="length of the interval (simulated seconds)")
    rate_iops: float | None = Field(default=None, ge=0, le=1e9, description="open: Poisson arrivals at this rate (0 = idle)")
    queue_depth: int | None = Field(default=None, ge=1, le=1_000_000, description="closed: I/Os kept in flight")
    read_fraction: float | None = Field(default=None, ge=0, le=1)
    block_size_kib: float | None = Field(default=None, gt=0, le=65_536)
    sizes: list[SizeWeight] | None = None
    label: str = Field(default="", max_length=200, description="where the interval comes from (an iostat timestamp, a row)")

    @model_validator(mode="after")
    def _rate_or_depth(self) -> ProfileInterval:
        if (self.rate_iops is None) == (self.queue_depth is None):
            raise field_problem("rate_iops", "give exactly one of rate_iops (open arrivals) and queue_depth (I/Os in flight)")
        return self


class ProfileWorkload(WorkloadBase):
    """Load over time: ``intervals`` replayed one after another (seed 000's BDI write bursts between
    quieter phases, an ``iostat`` day). The DES runs for the sum of the durations (simulated time)
    and reports every interval; the fast path takes each interval as a steady state
    (``sim.plan.profile_fast``). ``read_fraction``, ``block_size_kib``, ``sizes`` and ``access`` here
    are the defaults of intervals that do not give their own."""

    kind: Literal["profile"] = "profile"
    intervals: list[ProfileInterval] = Field(min_length=1, max_length=100_000)
    warmup_s: float = Field(default=0.0, ge=0, le=86_400, description=(
        "seconds of the first interval's load replayed before the profile starts, not measured (the queues "
        "start empty otherwise)"))

    @model_validator(mode="after")
    def _intervals_valid(self) -> ProfileWorkload:
        for i in range(len(self.intervals)):
            try:
                self.interval_workload(i)
            except ValidationError as exc:
                err = exc.errors()[0]
                ctx = err.get("ctx") or {}
                where = ".".join([f"intervals.{i}", *(str(p) for p in err["loc"]), *([str(ctx["field"])] if "field" in ctx else [])])
                raise field_problem(where, str(ctx.get("problem", err["msg"]))) from None
        return self

    @property
    def duration_s(self) -> float:
        """The profile's length: the sum of the interval durations."""
        return sum(iv.duration_s for iv in self.intervals)

    def interval_workload(self, index: int) -> OpenWorkload | ClosedWorkload:
        """Interval ``index`` as a steady workload (open at its rate, or closed at its depth as
        ``queue_depth`` jobs of one I/O each), the profile's mix filling what it leaves out."""
        iv = self.intervals[index]
        data: dict[str, object] = {
            "read_fraction": self.read_fraction if iv.read_fraction is None else iv.read_fraction,
            "access": self.access,
        }
        if iv.sizes is not None:
            data["sizes"] = iv.sizes
        elif iv.block_size_kib is not None:
            data["block_size_kib"] = iv.block_size_kib
        else:
            data["block_size_kib"] = self.block_size_kib
            data["sizes"] = self.sizes
        if iv.queue_depth is not None:
            return ClosedWorkload.model_validate({**data, "jobs": iv.queue_depth, "queue_depth": 1})
        return OpenWorkload.model_validate({**data, "rate_iops": iv.rate_iops or 1e-9})

    def offered_iops(self, index: int) -> float | None:
        """The arrival rate of an open interval; None for a closed one (its rate is the system's answer)."""
        return self.intervals[index].rate_iops

    def steady_workload(self) -> OpenWorkload | ClosedWorkload:
        """One steady workload standing for the whole profile where a solver needs one (the DES builds
        its model from it): closed when every interval is, else open at the time-average rate; the
        read fraction and size mix are those of all the profile's I/Os (each interval weighted by its
        I/Os, or by its duration where the rate is not known)."""
        weights = [iv.duration_s * (iv.rate_iops if iv.rate_iops is not None else 1.0) for iv in self.intervals]
        total = sum(weights) or 1.0
        steady = [self.interval_workload(i) for i in range(len(self.intervals))]
        rf = sum(w * s.read_fraction for w, s in zip(weights, steady, strict=True)) / total
        sizes: dict[tuple[int, str], float] = {}
        for w, s in zip(weights, steady, strict=True):
            for op, share in (("read", s.read_fraction), ("write", 1 - s.read_fraction)):
                for nbytes, p in s.size_table(op) if share > 0 else []:  # type: ignore[arg-type]
                    sizes[(nbytes, op)] = sizes.get((nbytes, op), 0.0) + (w or 1e-12) * share * p
        mix = [SizeWeight(kib=b / 1024, weight=max(v, 1e-300), op=op) for (b, op), v in sorted(sizes.items())]  # type: ignore[arg-type]
        data: dict[str, object] = {"read_fraction": min(1.0, max(0.0, rf)), "access": self.access, "sizes": mix}
        if all(iv.queue_depth is not None for iv in self.intervals):
            depth = max(iv.queue_depth or 1 for iv in self.intervals)
            return ClosedWorkload.model_validate({**data, "jobs": depth, "queue_depth": 1})
        rate = sum(iv.duration_s * (iv.rate_iops or 0.0) for iv in self.intervals) / self.duration_s
        return OpenWorkload.model_validate({**data, "rate_iops": max(rate, 1e-9)})


Workload = Annotated[ClosedWorkload | OpenWorkload | BurstyWorkload | ProfileWorkload, Field(discriminator="kind")]
"""Where a run's I/Os come from: a closed population of jobs x queue depth, an open Poisson (or
bursty on/off Poisson) stream, or a profile of intervals replayed one after another."""
