"""Streaming statistics: a log-bucket latency histogram and batch-means confidence intervals.

The histogram keeps counts in buckets whose width is 1/32 of their octave
(relative resolution about 3%, HdrHistogram-style), so p99.9 of a billion I/Os costs
the same memory as of a thousand. Confidence intervals use the method of batch means:
the measured window is cut into batches of completions, each batch gives one sample of
every metric, and the Student-t interval over the batch samples estimates the 95% CI.
``WorkloadTally`` fills one workload's batches (a run with several workloads; ``sim.des.batching`` closes them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import stdtrit

from sim.des.components import READ, Job

SUB = 32  # buckets per octave
MIN_EXP = -12  # 2**-12 us ~ 0.25 ns
MAX_EXP = 40  # 2**40 us ~ 12.7 days
NBUCKETS = (MAX_EXP - MIN_EXP + 1) * SUB


def bucket_of(value_us: float) -> int:
    """Index of the bucket holding ``value_us`` (values outside the range are clamped)."""
    if value_us <= 0.0:
        return 0
    m, e = math.frexp(value_us)  # value = m * 2**e, 0.5 <= m < 1
    if e <= MIN_EXP:
        return 0
    if e > MAX_EXP:
        return NBUCKETS - 1
    return (e - MIN_EXP) * SUB + int((m - 0.5) * 2 * SUB)


def bucket_bounds(index: int) -> tuple[float, float]:
    """Lower and upper edge of a bucket, in us."""
    e, k = divmod(index, SUB)
    e += MIN_EXP
    return (0.5 + k / (2 * SUB)) * 2.0**e, (0.5 + (k + 1) / (2 * SUB)) * 2.0**e


def bucket_value(index: int) -> float:
    """Geometric midpoint of a bucket."""
    lo, hi = bucket_bounds(index)
    return math.sqrt(lo * hi)


def histogram(latencies_us: np.ndarray) -> np.ndarray:
    """Bucket counts of an array of latencies (the vector form of ``bucket_of``)."""
    counts = np.zeros(NBUCKETS, dtype=np.int64)
    if latencies_us.size == 0:
        return counts
    m, e = np.frexp(latencies_us)
    idx = (e - MIN_EXP) * SUB + ((m - 0.5) * (2 * SUB)).astype(np.int64)
    idx = np.where(e <= MIN_EXP, 0, np.where(e > MAX_EXP, NBUCKETS - 1, idx))
    idx = np.where(latencies_us <= 0.0, 0, idx)
    return counts + np.bincount(idx, minlength=NBUCKETS)


def percentile(counts: np.ndarray, q: float) -> float:
    """The q-quantile (0 < q < 1) of bucket counts; NaN if empty."""
    cum = np.cumsum(counts)
    total = int(cum[-1]) if len(cum) else 0
    if total == 0:
        return float("nan")
    rank = q * total
    i = min(int(np.searchsorted(cum, rank, side="left")), len(counts) - 1)
    # interpolate within the bucket (log-uniform spread), so the estimate moves smoothly with
    # the data instead of jumping between bucket midpoints 3% apart
    before = int(cum[i - 1]) if i > 0 else 0
    inside = int(counts[i])
    if inside <= 0 or i == 0 or i == len(counts) - 1:
        return bucket_value(i)
    lo, hi = bucket_bounds(i)
    frac = min(1.0, max(0.0, (rank - before) / inside))
    return lo * (hi / lo) ** frac


def t_half_width(samples: list[float], confidence: float = 0.95) -> float:
    """Half-width of the Student-t confidence interval of the mean of ``samples``."""
    n = len(samples)
    if n < 2:
        return float("inf")
    mean = sum(samples) / n
    var = sum((x - mean) ** 2 for x in samples) / (n - 1)
    # the Student-t quantile: scipy.stats.t.ppf is stdtrit(df, q) * 1.0 + 0.0, the same double; scipy.special alone
    # imports in a third of the time of scipy.stats (0.45 against 1.3 CPU-s), which every run of flashplan paid
    t = float(stdtrit(n - 1, 0.5 + confidence / 2))
    return t * math.sqrt(var / n)


@dataclass
class Batch:
    """Totals over one batch of completions."""

    duration_s: float = 0.0
    ios: int = 0
    reads: int = 0
    writes: int = 0
    latency_sum_us: float = 0.0
    read_latency_sum_us: float = 0.0
    write_latency_sum_us: float = 0.0
    bytes: int = 0
    cpu_busy_us: float = 0.0
    outstanding_area_s: float = 0.0
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(NBUCKETS, dtype=np.int64))

    def merged(self, other: Batch) -> Batch:
        return Batch(
            duration_s=self.duration_s + other.duration_s,
            ios=self.ios + other.ios,
            reads=self.reads + other.reads,
            writes=self.writes + other.writes,
            latency_sum_us=self.latency_sum_us + other.latency_sum_us,
            read_latency_sum_us=self.read_latency_sum_us + other.read_latency_sum_us,
            write_latency_sum_us=self.write_latency_sum_us + other.write_latency_sum_us,
            bytes=self.bytes + other.bytes,
            cpu_busy_us=self.cpu_busy_us + other.cpu_busy_us,
            outstanding_area_s=self.outstanding_area_s + other.outstanding_area_s,
            histogram=self.histogram + other.histogram,
        )


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


BATCH_METRICS = {
    "iops": lambda b: _ratio(b.ios, b.duration_s),
    "read_iops": lambda b: _ratio(b.reads, b.duration_s),
    "write_iops": lambda b: _ratio(b.writes, b.duration_s),
    "mbps": lambda b: _ratio(b.bytes, b.duration_s) / 1e6,
    "latency_mean_us": lambda b: _ratio(b.latency_sum_us, b.ios),
    "read_latency_mean_us": lambda b: _ratio(b.read_latency_sum_us, b.reads),
    "write_latency_mean_us": lambda b: _ratio(b.write_latency_sum_us, b.writes),
    "cpu_us_per_io": lambda b: _ratio(b.cpu_busy_us, b.ios),
    "mean_outstanding_ios": lambda b: _ratio(b.outstanding_area_s, b.duration_s),
}
PERCENTILES = {"latency_p50_us": 0.50, "latency_p95_us": 0.95, "latency_p99_us": 0.99, "latency_p999_us": 0.999}


def mser_truncation(series: list[float]) -> int:
    """How many leading batches to drop as warm-up: MSER (White, 1997) over batch means.

    Picks d in [0, n/2] minimising sum((x_i - mean(x[d:]))**2 for i >= d) / (n - d)**2,
    i.e. the truncation that leaves the tightest confidence interval, and keeps it only
    when the dropped batches' mean lies more than 3 standard errors from the rest. A run
    still drifting (a write cache filling, a backlog building) loses its early batches;
    a stationary run keeps them all.
    """
    n = len(series)
    if n < 4:
        return 0
    best_d, best = 0, math.inf
    for d in range(n // 2 + 1):
        tail = series[d:]
        m = sum(tail) / len(tail)
        stat = sum((x - m) ** 2 for x in tail) / len(tail) ** 2
        if stat < best:
            best_d, best = d, stat
    if best_d == 0:
        return 0
    # Keep the cut only if the dropped batches really differ from the rest (a transient, not
    # noise): trimming noise would only make the interval optimistically narrow.
    tail = series[best_d:]
    m = sum(tail) / len(tail)
    sd = math.sqrt(sum((x - m) ** 2 for x in tail) / max(1, len(tail) - 1))
    head_mean = sum(series[:best_d]) / best_d
    return best_d if abs(head_mean - m) > 3 * sd / math.sqrt(best_d) else 0


def _pooled(batches: list[Batch]) -> Batch:
    """Totals of the scalar fields over ``batches`` (histograms are pooled only where needed)."""
    return Batch(
        duration_s=sum(b.duration_s for b in batches),
        ios=sum(b.ios for b in batches),
        reads=sum(b.reads for b in batches),
        writes=sum(b.writes for b in batches),
        latency_sum_us=sum(b.latency_sum_us for b in batches),
        read_latency_sum_us=sum(b.read_latency_sum_us for b in batches),
        write_latency_sum_us=sum(b.write_latency_sum_us for b in batches),
        bytes=sum(b.bytes for b in batches),
        cpu_busy_us=sum(b.cpu_busy_us for b in batches),
        outstanding_area_s=sum(b.outstanding_area_s for b in batches),
    )


def estimate(batches: list[Batch], metric: str, confidence: float = 0.95) -> tuple[float, float, float]:
    """(point estimate, CI low, CI high) of ``metric`` over ``batches``.

    The point estimate pools all batches (a ratio of totals); the interval's
    half-width comes from the spread of the per-batch values. With one batch holding
    the metric (a rare op in a short run) the spread is unknown, and so is the
    interval: (nan, nan), shown as '-', never a zero-width interval. A metric of an
    op the run never issued is its exact zero.
    """
    if metric in PERCENTILES:
        q = PERCENTILES[metric]
        value = percentile(np.sum([b.histogram for b in batches], axis=0), q)
        samples = [percentile(b.histogram, q) for b in batches if b.histogram.any()]
    else:
        fn = BATCH_METRICS[metric]
        value = fn(_pooled(batches))
        if metric == "read_latency_mean_us":
            samples = [fn(b) for b in batches if b.reads]
        elif metric == "write_latency_mean_us":
            samples = [fn(b) for b in batches if b.writes]
        else:
            samples = [fn(b) for b in batches]
    if math.isnan(value):
        return 0.0, 0.0, 0.0
    if not samples:  # no such I/O at all (writes of a read-only run): nothing to estimate
        return value, value, value
    if len(samples) < 2:
        return value, math.nan, math.nan
    hw = t_half_width(samples, confidence)
    if all(s == samples[0] for s in samples):
        hw = 0.0
    return value, value - hw, value + hw


FLUSH_MASK = 4095
"""Latencies are held in a list of at most 4,096 before they go into the batch's histogram and sums,
so a run's memory is set by its state (the histogram, 32 batches), not by its length."""


def add_latencies(b: Batch, lats: list[float], is_read: bool) -> None:
    """Add one op's held latencies to batch ``b``: its count, the latency sums and the histogram (not ``ios``)."""
    if not lats:
        return
    values = np.asarray(lats)
    total = float(values.sum())
    if is_read:
        b.reads += len(values)
        b.read_latency_sum_us += total
    else:
        b.writes += len(values)
        b.write_latency_sum_us += total
    b.latency_sum_us += total
    b.histogram += histogram(values)


class WorkloadTally:
    """One workload's completions in the batch being filled, and its I/Os outstanding over time
    (a scenario with several workloads: ``Run.tallies``, closed into per-workload batches that
    cover the same windows as the whole run's)."""

    def __init__(self) -> None:
        self.outstanding = 0
        self.out_area = 0.0
        self.out_t = 0.0
        self.rlats: list[float] = []
        self.wlats: list[float] = []
        self.ios = 0
        self.bytes = 0
        self.area_start = 0.0
        self.batch = Batch()

    def issued(self, now: float) -> None:
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding += 1

    def completed(self, job: Job, now: float, warm: bool) -> None:
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        self.outstanding -= 1
        if not warm:
            return
        if job.op == READ:
            self.rlats.append(now - job.t0)
        else:
            self.wlats.append(now - job.t0)
        self.ios += 1
        self.bytes += job.size
        if len(self.rlats) + len(self.wlats) > FLUSH_MASK:
            self.flush()

    def area_now(self, now: float) -> float:
        self.out_area += self.outstanding * (now - self.out_t)
        self.out_t = now
        return self.out_area

    def flush(self) -> None:
        """Move the held latencies into the batch's counts, sums and histogram."""
        add_latencies(self.batch, self.rlats, True)
        add_latencies(self.batch, self.wlats, False)
        self.rlats = []
        self.wlats = []

    def start(self, now: float) -> None:
        """Begin a batch at ``now``."""
        self.ios = 0
        self.bytes = 0
        self.rlats = []
        self.wlats = []
        self.batch = Batch()
        self.area_start = self.area_now(now)

    def close(self, now: float, duration_s: float, cpu_share_us: float) -> Batch:
        """The batch that ends at ``now`` (``cpu_share_us``: its share of the host CPU's busy time)."""
        self.flush()
        b = self.batch
        b.duration_s = duration_s
        b.ios = self.ios
        b.bytes = self.bytes
        b.cpu_busy_us = cpu_share_us
        b.outstanding_area_s = (self.area_now(now) - self.area_start) * 1e-6
        return b


TREND_Z = 3.09
"""One-sided standard-normal quantile of p = 0.001: a Mann-Kendall z at or above it is a rising trend that noise in
independent batch means shows about once in a thousand runs."""


def mann_kendall_z(series: list[float]) -> float:
    """The Mann-Kendall trend statistic of ``series`` as a standard-normal z (Mann, Econometrica 13, 1945; Kendall,
    *Rank Correlation Methods*, 1975): S = sum over i < j of sign(x_j - x_i), Var S = n(n-1)(2n+5)/18 less the tie
    correction, z = (S - sign S) / sqrt(Var S). Positive when the values rise with their order; 0 for fewer than 4."""
    n = len(series)
    if n < 4:
        return 0.0
    s = 0
    for i in range(n - 1):
        xi = series[i]
        for xj in series[i + 1:]:
            s += (xj > xi) - (xj < xi)
    ties: dict[float, int] = {}
    for x in series:
        ties[x] = ties.get(x, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values() if t > 1)) / 18
    if s == 0 or var <= 0:
        return 0.0
    return (s - (1 if s > 0 else -1)) / math.sqrt(var)


def sen_slope(times: list[float], series: list[float]) -> float:
    """The Theil-Sen slope of ``series`` against ``times``: the median of the pairwise slopes (Sen, JASA 63, 1968);
    robust to a few outlying batches. 0 for fewer than two distinct times."""
    slopes = sorted((series[j] - series[i]) / (times[j] - times[i])
                    for i in range(len(series)) for j in range(i + 1, len(series)) if times[j] != times[i])
    if not slopes:
        return 0.0
    mid = len(slopes) // 2
    return slopes[mid] if len(slopes) % 2 else (slopes[mid - 1] + slopes[mid]) / 2
