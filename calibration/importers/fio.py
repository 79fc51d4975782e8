"""Import fio results: the job options become a flashplan workload, the measurements calibration records.

Input is fio 3.x JSON (``--output-format=json`` or ``json+``; text fio printed before the
JSON, such as warnings captured with ``2>&1``, is skipped: the document is found from its
``{ "fio version"`` line in one reading). A file over ``MAX_FIO_BYTES``, or JSON of more than
``MAX_JSON_VALUES`` values (``calibration.importers``), is refused before the JSON is built. fio reports one entry per job
process, or one per group with ``group_reporting``; entries of one group ran at the same
time and become one flashplan workload:

* ``rw`` - ``read``/``write``/``rw`` (sequential) and ``randread``/``randwrite``/``randrw``
  (random) set ``access`` and ``read_fraction`` (``rwmixread``, default 50, for mixes).
* ``bs`` (``read,write``), ``bssplit`` (``size/percent:...``, per direction after a comma)
  set the block size or the size mix; forms flashplan cannot express (``bsrange``) fall back
  to the mean size fio measured (bytes / I/Os), with a note.
* ``numjobs`` x ``iodepth`` become a closed workload's ``jobs`` x ``queue_depth``.
  Synchronous engines (psync, sync, ...) and libaio without ``direct=1`` keep one I/O in
  flight per job whatever ``iodepth`` says, as fio itself does.
* ``thinktime`` (microseconds unless a unit is given) becomes ``think_time_us``; fio stalls
  after every ``thinktime_blocks`` (default 1) I/Os, which caps the queue depth at that.
* ``rate_iops`` / ``rate`` (per job, per direction) make it an open workload at that rate.

The measurements (IOPS, MB/s as 10^6 bytes/s, mean latency, latency percentiles) are
fio's total latency (``lat_ns``: submission + completion), the quantity flashplan's latency
measures. Without ``--lat_percentiles=1`` fio prints completion-latency (``clat``)
percentiles only; those are shifted by the mean submission latency, with a note.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from calibration.importers import (
    MAX_FIO_BYTES,
    MeasurementFileError,
    build_workload,
    check_json_size,
    decode_text,
    to_yaml,
    workload_data,
)
from models.workload import ClosedWorkload, OpenWorkload

DIRECTIONS = ("read", "write")

RW_MODES: dict[str, tuple[float | None, str]] = {
    "read": (1.0, "sequential"),
    "write": (0.0, "sequential"),
    "rw": (None, "sequential"),
    "readwrite": (None, "sequential"),
    "randread": (1.0, "random"),
    "randwrite": (0.0, "random"),
    "randrw": (None, "random"),
}
"""fio ``rw`` modes flashplan models: (read fraction, or None for a ``rwmixread`` mix; access)."""

TRIM_MODES = ("trim", "randtrim", "trimwrite", "randtrimwrite")

SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice"})
"""Engines that complete each I/O inside the system call: one I/O in flight per job (fio HOWTO, ``iodepth``)."""

# Options that define the load a job puts on the device; jobs of one group that differ in
# any of these cannot be one flashplan workload.
WORKLOAD_OPTIONS = (
    "rw", "readwrite", "rwmixread", "rwmixwrite", "bs", "blocksize", "bssplit", "bsrange", "blocksize_range",
    "iodepth", "ioengine", "direct", "buffered", "thinktime", "thinktime_blocks", "rate", "rate_iops", "kb_base",
)

PERCENTILE_METRICS = {50.0: "latency_p50_us", 95.0: "latency_p95_us", 99.0: "latency_p99_us", 99.9: "latency_p999_us"}

METRIC_UNITS = {
    "iops": "IOPS", "read_iops": "IOPS", "write_iops": "IOPS", "mbps": "MB/s",
    "latency_mean_us": "us", "read_latency_mean_us": "us", "write_latency_mean_us": "us",
    **{m: "us" for m in PERCENTILE_METRICS.values()},
}

THROUGHPUT_TOLERANCE_FLOOR = 0.10
"""Smallest relative tolerance for IOPS, MB/s and mean latencies: two fio runs of one job on one
disk differ by a few percent on dedicated hardware and by more on shared or virtual machines."""

PERCENTILE_TOLERANCE_FLOOR = 0.25
"""Smallest relative tolerance for latency percentiles: a tail percentile rests on few I/Os and
moves with rare events (a hypervisor pause, a garbage-collection stall)."""

TAIL_SAMPLES = 10
"""A percentile q is kept only when at least this many I/Os lie beyond it: N x (1 - q) >= 10."""


@dataclass(frozen=True)
class DirectionStats:
    """fio's figures for one direction (read or write) of one job group, summed over its entries."""

    ios: int
    iops: float
    bytes_per_s: float
    io_bytes: float
    lat_mean_us: float
    slat_mean_us: float
    percentiles_us: dict[float, float]
    percentile_source: str  # "lat", "clat+slat" or "" when fio printed none
    lat_bins_ns: dict[float, int] = field(default_factory=dict)
    """fio's total-latency histogram (``--output-format=json+`` with ``--lat_percentiles=1``): bucket (ns) -> I/Os,
    summed over the group's entries; empty when fio wrote none."""

    @property
    def mean_size_bytes(self) -> float:
        return self.io_bytes / self.ios if self.ios else 0.0


@dataclass(frozen=True)
class FioJob:
    """One fio job group as flashplan sees it: the workload its options describe and what fio measured."""

    name: str
    group: int
    processes: int
    options: dict[str, str]
    workload: ClosedWorkload | OpenWorkload
    directions: dict[str, DirectionStats]
    runtime_s: float
    iops_sample_cv: float | None
    iops_samples: int
    notes: tuple[str, ...] = ()

    @property
    def total_ios(self) -> int:
        return sum(d.ios for d in self.directions.values())

    @property
    def measured(self) -> dict[str, float]:
        """Measured values by flashplan Result metric name (only metrics fio measured well enough)."""
        dirs = self.directions
        total = sum(d.iops for d in dirs.values())
        out: dict[str, float] = {"iops": total, "mbps": sum(d.bytes_per_s for d in dirs.values()) / 1e6}
        ios = self.total_ios
        if ios:
            out["latency_mean_us"] = sum(d.lat_mean_us * d.ios for d in dirs.values()) / ios
        if len(dirs) == 2:
            for name, d in dirs.items():
                out[f"{name}_iops"] = d.iops
                if d.ios:
                    out[f"{name}_latency_mean_us"] = d.lat_mean_us
        out.update(self._percentiles())
        return out

    def _percentiles(self) -> dict[str, float]:
        """Latency percentiles over all I/Os, where fio measured them well enough (``TAIL_SAMPLES`` beyond each)."""
        dirs = self.directions
        out: dict[str, float] = {}
        if len(dirs) == 1:
            (only,) = dirs.values()
            for q, metric in PERCENTILE_METRICS.items():
                if q in only.percentiles_us and only.ios * (1 - q / 100) >= TAIL_SAMPLES:
                    out[metric] = only.percentiles_us[q]
        elif all(d.lat_bins_ns for d in dirs.values()):
            # flashplan's percentiles are over all I/Os; fio's are per direction: a mix compares only through
            # the merged histograms of both directions (json+), never from the per-direction percentiles
            merged: dict[float, int] = {}
            for d in dirs.values():
                for ns, count in d.lat_bins_ns.items():
                    merged[ns] = merged.get(ns, 0) + count
            total = sum(merged.values())
            for q, metric in PERCENTILE_METRICS.items():
                if total * (1 - q / 100) >= TAIL_SAMPLES:
                    out[metric] = histogram_percentile_ns(merged, q) / 1000.0
        return out

    def describe_workload(self) -> str:
        """The workload in a storage engineer's words."""
        return describe_workload(self.workload)

    def record_id(self, metric: str) -> str:
        """The calibration record id of one measured metric of this job."""
        return f"fio.{_slug(self.name)}.g{self.group}.{metric}"


@dataclass(frozen=True)
class FioResult:
    """A parsed fio result file: its version and one FioJob per job group, in group order."""

    fio_version: str
    jobs: list[FioJob]
    origin: str
    notes: tuple[str, ...] = field(default=())

    def select(self, name_or_group: str | None) -> list[FioJob]:
        """The job groups matching a job name or a group number (all when None)."""
        if name_or_group is None:
            return list(self.jobs)
        hits = [j for j in self.jobs if j.name == name_or_group or str(j.group) == name_or_group]
        if not hits:
            known = ", ".join(f"{j.name!r} (group {j.group})" for j in self.jobs)
            raise MeasurementFileError([("--job", f"no job group named {name_or_group!r}; the result holds {known}")])
        return hits


def histogram_percentile_ns(bins: Mapping[float, int], q: float) -> float:
    """The q-th percentile of fio's latency histogram (bucket value -> I/Os) as fio computes it from its bins
    (stat.c ``calc_clat_percentiles``): the first bucket, in increasing order, whose cumulative count reaches
    q / 100 of all I/Os."""
    total = sum(bins.values())
    target = q / 100.0 * total
    seen = 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= target:
            return float(value)
    return float(max(bins))


# ----------------------------------------------------------------------------------------------
# values in fio's option syntax


_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?)(b?)\s*$", re.IGNORECASE)
_TIME_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_TIME_UNITS_US = {"": None, "ns": 1e-3, "nsec": 1e-3, "us": 1.0, "usec": 1.0, "ms": 1e3, "msec": 1e3,
                  "s": 1e6, "sec": 1e6, "m": 60e6, "min": 60e6, "h": 3600e6, "d": 86400e6}


def parse_size(text: str, kb_base: int = 1024) -> int:
    """Bytes in fio's size syntax (``4k``, ``64KiB``, ``1m``, ``512``).

    fio's default ``kb_base=1024`` is its "compatibility mode": k/K/kB/KB are powers of 2 and
    the IEC forms (KiB) powers of 10; ``kb_base=1000`` swaps them (fio HOWTO, ``kb_base``).
    """
    m = _SIZE_RE.match(text)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    number, prefix, iec, _ = m.groups()
    exponent = " kmgtp".index(prefix.lower()) if prefix else 0
    binary = (kb_base == 1024) != bool(iec)
    value = float(number) * (1024 if binary else 1000) ** exponent
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"size out of range: {text!r}")
    return int(value)


def parse_time_us(text: str, default_unit_us: float = 1.0) -> float:
    """Microseconds in fio's time syntax; a bare number is in ``default_unit_us`` (thinktime: us, runtime: s)."""
    m = _TIME_RE.match(text)
    if not m or m.group(2).lower() not in _TIME_UNITS_US:
        raise ValueError(f"not a time: {text!r}")
    unit = _TIME_UNITS_US[m.group(2).lower()]
    return float(m.group(1)) * (default_unit_us if unit is None else unit)


def _per_direction(text: str) -> tuple[str, str]:
    """fio's ``read,write[,trim]`` value lists: one value applies to both; an empty slot means unset."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1:
        return parts[0], parts[0]
    return parts[0], parts[1]


def parse_bssplit(text: str, kb_base: int = 1024) -> list[tuple[int, float]]:
    """(bytes, percent) pairs of one direction's ``bssplit``; entries without a percent share what is left."""
    entries: list[tuple[int, float | None]] = []
    for item in text.split(":"):
        item = item.strip()
        if not item:
            continue
        size_text, _, pct_text = item.partition("/")
        pct = float(pct_text) if pct_text.strip() else None
        if pct is not None and not (0 <= pct <= 100):
            raise ValueError(f"bssplit percentage out of 0..100: {item!r}")
        entries.append((parse_size(size_text, kb_base), pct))
    if not entries:
        raise ValueError(f"empty bssplit: {text!r}")
    given = sum(p for _, p in entries if p is not None)
    blanks = sum(1 for _, p in entries if p is None)
    if given > 100.0001:
        raise ValueError(f"bssplit percentages add up to {given:g} > 100: {text!r}")
    share = (100 - given) / blanks if blanks else 0.0
    out = [(size, share if p is None else p) for size, p in entries]
    out = [(s, p) for s, p in out if p > 0]
    if not out:
        raise ValueError(f"bssplit gives every size 0%: {text!r}")
    return out


# ----------------------------------------------------------------------------------------------
# options -> workload


def _int_option(options: Mapping[str, str], key: str, default: int, low: int, high: int, origin: str) -> int:
    raw = options.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(float(raw))
    except ValueError:
        raise MeasurementFileError([(f"{origin}: {key}", f"expected a whole number, got {raw!r}")]) from None
    if not low <= value <= high:
        raise MeasurementFileError([(f"{origin}: {key}", f"must be {low}..{high}, got {value}")])
    return value


def _read_fraction(options: Mapping[str, str], origin: str) -> tuple[float, str]:
    """(read fraction, access) from ``rw`` and ``rwmixread``/``rwmixwrite`` (fio's default mix: 50% reads)."""
    raw = options.get("rw", options.get("readwrite", "read"))
    mode = raw.split(":")[0].strip().lower()
    if mode in TRIM_MODES:
        raise MeasurementFileError([(f"{origin}: rw", f"{raw!r}: trims are not modelled by flashplan; allowed: {', '.join(RW_MODES)}")])
    if mode not in RW_MODES:
        raise MeasurementFileError([(f"{origin}: rw", f"unknown rw mode {raw!r}; allowed: {', '.join(RW_MODES)}")])
    preset, access = RW_MODES[mode]
    if preset is not None:
        return preset, access
    if options.get("rwmixread", "") != "":
        return _int_option(options, "rwmixread", 50, 0, 100, origin) / 100, access
    if options.get("rwmixwrite", "") != "":
        return 1 - _int_option(options, "rwmixwrite", 50, 0, 100, origin) / 100, access
    return 0.5, access


def _size_tables(options: Mapping[str, str], measured_sizes: Mapping[str, float], notes: list[str]) -> dict[str, list[tuple[int, float]]]:
    """Per direction: (bytes, weight) pairs from bssplit / bs, or the mean size fio measured."""
    try:
        kb_base = int(options.get("kb_base", "1024"))
    except ValueError:
        kb_base = 1024
    kb_base = kb_base if kb_base in (1000, 1024) else 1024
    tables: dict[str, list[tuple[int, float]]] = {}
    split = options.get("bssplit", "")
    bs = options.get("bs", options.get("blocksize", ""))
    ranged = options.get("bsrange", options.get("blocksize_range", ""))
    for i, direction in enumerate(DIRECTIONS):
        try:
            if split:
                text = _per_direction(split)[i]
                if text:
                    tables[direction] = parse_bssplit(text, kb_base)
                    continue
            if ranged:
                raise ValueError(f"bsrange={ranged!r} picks sizes at random between bounds")
            text = _per_direction(bs)[i] if bs else ""
            tables[direction] = [(parse_size(text, kb_base) if text else 4096, 100.0)]
        except ValueError as exc:
            mean = measured_sizes.get(direction, 0.0)
            if mean <= 0:
                continue  # this direction saw no I/O; a size is only needed if the mix has it
            notes.append(f"{direction} block size: {exc}; using the mean size fio measured, {mean / 1024:.2f} KiB")
            tables[direction] = [(max(1, round(mean)), 100.0)]
    return tables


def _rate_iops(options: Mapping[str, str], read_fraction: float, mean_bytes: Mapping[str, float], processes: int,
               notes: list[str], origin: str) -> float | None:
    """Total I/O rate of rate-limited jobs, or None when fio ran them flat out.

    fio caps each direction separately (one value caps both); with a read/write mix the
    direction that reaches its cap first throttles the other (rwmix holds), so the job's
    rate is min over directions of cap / share.
    """
    iops_text, bw_text = options.get("rate_iops", ""), options.get("rate", "")
    if not iops_text and not bw_text:
        return None
    shares = {"read": read_fraction, "write": 1 - read_fraction}
    limits: list[float] = []
    for i, direction in enumerate(DIRECTIONS):
        if shares[direction] <= 0:
            continue
        try:
            if iops_text and _per_direction(iops_text)[i]:
                cap = float(_per_direction(iops_text)[i])
            elif bw_text and _per_direction(bw_text)[i]:
                cap = parse_size(_per_direction(bw_text)[i]) / mean_bytes[direction]
            else:
                continue
        except (ValueError, KeyError, ZeroDivisionError):
            raise MeasurementFileError([(f"{origin}: rate_iops" if iops_text else f"{origin}: rate",
                                         f"cannot read the rate limit {iops_text or bw_text!r}")]) from None
        if cap > 0:
            limits.append(cap / shares[direction])
    if not limits:
        return None
    if options.get("rate_process", "linear") != "poisson":
        notes.append("fio paced I/Os evenly (rate_process=linear); flashplan's open workload is Poisson, "
                     "which queues a little more at the same rate")
    return min(limits) * processes


def _depth_and_think_time(options: Mapping[str, str], notes: list[str], origin: str) -> tuple[int, float]:
    """I/Os in flight per job process and the think time per I/O slot (us) the engine, iodepth, direct and
    thinktime options give (noting each limit in ``notes``)."""
    engine = options.get("ioengine", "psync").strip().lower()
    iodepth = _int_option(options, "iodepth", 1, 1, 65_536, origin)
    depth = iodepth
    if engine in SYNC_ENGINES and iodepth > 1:
        notes.append(f"ioengine={engine} is synchronous: one I/O in flight per job, iodepth={iodepth} has no effect")
        depth = 1
    direct = options.get("direct", "0").strip() == "1" and options.get("buffered", "0").strip() != "1"
    if engine == "libaio" and not direct and depth > 1:
        notes.append("libaio without direct=1 submits synchronously: one I/O in flight per job")
        depth = 1
    if not direct:
        notes.append("direct=0: fio went through the page cache; cache hits in the measurement are not in the model")
    think_us = 0.0
    if options.get("thinktime", ""):
        try:
            think_us = parse_time_us(options["thinktime"])
        except ValueError as exc:
            raise MeasurementFileError([(f"{origin}: thinktime", str(exc))]) from None
        if think_us > 0:
            blocks = _int_option(options, "thinktime_blocks", 1, 1, 1_000_000, origin)
            if blocks < depth:
                notes.append(f"thinktime after every {blocks} I/O(s) caps the queue depth at {blocks} (iodepth={iodepth})")
                depth = blocks
            if blocks > 1:
                notes.append(f"fio stalls {think_us:g} us after each burst of {blocks} I/Os; modelled as that think time per I/O slot")
    return depth, think_us


def workload_from_options(options: Mapping[str, str], processes: int = 1, measured_sizes: Mapping[str, float] | None = None,
                          origin: str = "fio job") -> tuple[ClosedWorkload | OpenWorkload, list[str]]:
    """The flashplan workload a fio job's options describe, and notes on every approximation made.

    ``options``: the job's options merged over the global ones (strings, as fio prints them);
    ``processes``: job processes that ran it (numjobs); ``measured_sizes``: mean bytes per I/O
    by direction, used when the block-size options cannot be expressed as a size mix.
    """
    notes: list[str] = []
    read_fraction, access = _read_fraction(options, origin)
    tables = _size_tables(options, measured_sizes or {}, notes)
    needed = [d for d in DIRECTIONS if (read_fraction if d == "read" else 1 - read_fraction) > 0]
    for direction in needed:
        if direction not in tables:
            raise MeasurementFileError([(f"{origin}: bs", f"cannot read the {direction} block size from bs/bssplit")])
    data: dict[str, Any] = {"read_fraction": round(read_fraction, 6), "access": access}
    used = {d: tables[d] for d in needed}
    flat = {d: t for d, t in used.items() if len(t) == 1}
    sizes_kib = {d: t[0][0] / 1024 for d, t in flat.items()}
    if len(flat) == len(used) and len(set(sizes_kib.values())) == 1:
        data["block_size_kib"] = next(iter(sizes_kib.values()))
    else:
        rows = [{"kib": size / 1024, "weight": weight, "op": d} for d, t in used.items() for size, weight in t]
        if len(used) == 2 and used["read"] == used["write"]:
            rows = [{"kib": size / 1024, "weight": weight, "op": "any"} for size, weight in used["read"]]
        data["sizes"] = rows
    mean_bytes = {d: sum(s * w for s, w in t) / sum(w for _, w in t) for d, t in used.items()}

    depth, think_us = _depth_and_think_time(options, notes, origin)
    for key, what in (("random_distribution", "access skew"), ("percentage_random", "partly sequential access"),
                      ("fsync", "flushes"), ("fdatasync", "flushes"), ("verify", "read-back verification")):
        value = options.get(key, "").strip()
        if value and value not in ("random", "0", "none", "100", "100,100"):
            notes.append(f"{key}={value} ({what}) is not modelled")

    rate = _rate_iops(options, read_fraction, mean_bytes, processes, notes, origin)
    if rate is not None:
        data.update(kind="open", rate_iops=rate)
        notes.append(f"rate-limited to {rate:,.0f} IOPS in all: an open workload at that rate")
    else:
        data.update(kind="closed", jobs=processes, queue_depth=depth, think_time_us=think_us)
    return build_workload(data, origin), notes


def describe_workload(workload: ClosedWorkload | OpenWorkload) -> str:
    """One line: concurrency or rate, read share, sizes, access."""
    if workload.sizes:
        sizes = ", ".join(f"{s.kib:g}K{'' if s.op == 'any' else ' ' + s.op}/{s.weight:g}" for s in workload.sizes)
    else:
        sizes = f"{workload.block_size_kib:g} KiB"
    mix = f"{workload.read_fraction:.0%} reads"
    if isinstance(workload, OpenWorkload):
        load = f"open, {workload.rate_iops:,.0f} IOPS offered"
    else:
        load = f"closed, {workload.jobs} job(s) x QD {workload.queue_depth}"
        if workload.think_time_us:
            load += f", think {workload.think_time_us:g} us"
    return f"{load}, {mix}, {sizes}, {workload.access}"


# ----------------------------------------------------------------------------------------------
# the JSON


_FIO_START_RE = re.compile(r'^[ \t]*\{\s*"fio version"', re.MULTILINE)
_OBJECT_START_RE = re.compile(r"^[ \t]*\{", re.MULTILINE)
MAX_JSON_STARTS = 16
"""Places a fio document may start that are tried (lines opening with ``{ "fio version"``, else with ``{``):
each try reads at most the rest of the file once, so the import stays linear in the file's size."""


def _json_starts(text: str) -> list[int]:
    """Offsets where fio's JSON may start: the first lines that open an object with "fio version", else the first
    lines that open an object (at most MAX_JSON_STARTS of them)."""
    found = list(islice(_FIO_START_RE.finditer(text), MAX_JSON_STARTS)) or list(islice(_OBJECT_START_RE.finditer(text), MAX_JSON_STARTS))
    return [text.index("{", m.start()) for m in found]


def _load_json(text: str, origin: str) -> Any:
    """fio's JSON document; text before it (warnings fio wrote to the same stream) and after it is skipped.

    The whole text is tried as JSON first, then the places ``_json_starts`` finds; documents of more than
    MAX_JSON_VALUES values are refused before they are built.
    """
    first = re.compile(r"\S").search(text)
    error: json.JSONDecodeError | None = None
    try:
        if first is not None and first.group(0) in "{[":
            check_json_size(text, origin, first.start())
            return json.loads(text)
    except json.JSONDecodeError as exc:
        error = exc
    except RecursionError:
        raise MeasurementFileError([(origin, "not a fio result: JSON nested too deeply")]) from None
    decoder = json.JSONDecoder()
    for start in _json_starts(text):
        check_json_size(text, origin, start)
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            error = error or exc
            continue
        except RecursionError:
            raise MeasurementFileError([(origin, "not a fio result: JSON nested too deeply")]) from None
        if isinstance(value, dict) and "jobs" in value:
            return value
    if error is None:
        raise MeasurementFileError([(origin, "no JSON object in the file (no line starts with '{'); run fio with "
                                             "--output-format=json")])
    ends_early = error.pos >= len(text.rstrip()) - 1 or text.count("{") > text.count("}")
    hint = " (the file ends early: truncated?)" if ends_early else ""
    raise MeasurementFileError([(origin, f"not valid JSON{hint}: {error.msg} at line {error.lineno} column {error.colno}; "
                                         "run fio with --output-format=json")]) from None


def _number(parent: Mapping[str, Any], key: str, where: str, default: float | None = None) -> float:
    value = parent.get(key, default)
    if value is None:
        raise MeasurementFileError([(f"{where}.{key}", "missing")])
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise MeasurementFileError([(f"{where}.{key}", f"expected a non-negative number, got {value!r}")])
    return float(value)


def _mapping(parent: Mapping[str, Any], key: str, where: str, required: bool = True) -> dict[str, Any]:
    value = parent.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        got = "nothing" if value is None else type(value).__name__
        raise MeasurementFileError([(f"{where}.{key}", f"expected an object, got {got}")])
    return value


def _options(parent: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
    raw = _mapping(parent, key, where, required=False)
    out: dict[str, str] = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise MeasurementFileError([(f"{where}.{key}.{k}", f"expected a string, got {type(v).__name__}")])
        out[str(k)] = str(v)
    return out


@dataclass
class _Entry:
    """One element of fio's ``jobs`` list."""

    index: int
    name: str
    group: int
    options: dict[str, str]
    stats: dict[str, dict[str, Any]]
    job_runtime_ms: float
    error: int


def _percentiles(stats: Mapping[str, Any], key: str, where: str) -> dict[float, float]:
    raw = _mapping(stats, key, where, required=False).get("percentile")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise MeasurementFileError([(f"{where}.{key}.percentile", "expected an object")])
    out: dict[float, float] = {}
    for q in raw:
        try:
            qf = round(float(q), 6)
        except ValueError:
            raise MeasurementFileError([(f"{where}.{key}.percentile", f"not a percentile: {q!r}")]) from None
        out[qf] = _number(raw, q, f"{where}.{key}.percentile") / 1000.0
    return out


def _bins(stats: Mapping[str, Any], where: str) -> dict[float, int]:
    """The ``lat_ns`` histogram of json+ output (bucket ns -> I/Os); empty without one."""
    raw = _mapping(stats, "lat_ns", where, required=False).get("bins")
    if not isinstance(raw, dict):
        return {}
    out: dict[float, int] = {}
    for key in raw:
        try:
            ns = float(key)
        except ValueError:
            raise MeasurementFileError([(f"{where}.lat_ns.bins", f"not a latency bucket: {key!r}")]) from None
        out[ns] = int(_number(raw, key, f"{where}.lat_ns.bins"))
    return out


def _direction(entries: Sequence[_Entry], direction: str, origin: str) -> DirectionStats | None:
    """Sum one direction over a group's entries (means and percentiles weighted by I/Os); None when it did no I/O.

    Percentiles of several job entries are merged as their I/O-weighted mean: exact for
    identical jobs in the limit, an approximation otherwise (fio keeps no merged histogram).
    """
    ios = iops = bw = io_bytes = weight = lat_sum = slat_sum = 0.0
    pct_sum: dict[float, float] = {}
    pct_weight: dict[float, float] = {}
    bins: dict[float, int] = {}
    every_entry_binned = True
    source = ""
    for e in entries:
        where = f"{origin}: jobs[{e.index}].{direction}"
        st = e.stats[direction]
        lat = _mapping(st, "lat_ns", where, required=False)
        total = _number(st, "total_ios", where) if "total_ios" in st else _number(lat, "N", f"{where}.lat_ns", default=0.0)
        if total == 0:
            continue
        if "mean" not in lat:
            raise MeasurementFileError([(f"{where}.lat_ns.mean", "missing (fio 3.x reports latencies in ns under lat_ns)")])
        n = _number(lat, "N", f"{where}.lat_ns", default=total) or total
        ios += total
        weight += n
        iops += _number(st, "iops", where)
        bw += _number(st, "bw_bytes", where)
        io_bytes += _number(st, "io_bytes", where)
        lat_sum += _number(lat, "mean", f"{where}.lat_ns") * n
        slat_mean = _number(_mapping(st, "slat_ns", where, required=False), "mean", f"{where}.slat_ns", default=0.0)
        slat_sum += slat_mean * n
        pct = _percentiles(st, "lat_ns", where)
        src = "lat"
        if not pct:
            # synchronous engines measure no submission latency: their clat is the total latency
            pct = {q: v + slat_mean / 1000.0 for q, v in _percentiles(st, "clat_ns", where).items()}
            src = "clat+slat" if slat_mean > 0 else "lat"
        if pct and (not source or src == "clat+slat"):
            source = src
        for q, v in pct.items():
            pct_sum[q] = pct_sum.get(q, 0.0) + v * n
            pct_weight[q] = pct_weight.get(q, 0.0) + n
        entry_bins = _bins(st, where)
        every_entry_binned = every_entry_binned and bool(entry_bins)
        for ns, count in entry_bins.items():
            bins[ns] = bins.get(ns, 0) + count
    if ios == 0:
        return None
    return DirectionStats(
        ios=int(ios), iops=iops, bytes_per_s=bw, io_bytes=io_bytes,
        lat_mean_us=lat_sum / weight / 1000.0, slat_mean_us=slat_sum / weight / 1000.0,
        percentiles_us={q: pct_sum[q] / pct_weight[q] for q in pct_sum if pct_weight[q] > 0},
        percentile_source=source, lat_bins_ns=bins if every_entry_binned else {},
    )


def _entries(doc: Mapping[str, Any], origin: str) -> list[_Entry]:
    jobs = doc.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise MeasurementFileError([(origin, "not a fio result: no 'jobs' list (run fio with --output-format=json)")])
    global_options = _options(doc, "global options", origin)
    entries = []
    for i, job in enumerate(jobs):
        where = f"{origin}: jobs[{i}]"
        if not isinstance(job, dict):
            raise MeasurementFileError([(where, f"expected an object, got {type(job).__name__}")])
        name = job.get("jobname")
        if not isinstance(name, str) or not name:
            raise MeasurementFileError([(f"{where}.jobname", "missing")])
        group = job.get("groupid", 0)
        if isinstance(group, bool) or not isinstance(group, int) or group < 0:
            raise MeasurementFileError([(f"{where}.groupid", f"expected a group number, got {group!r}")])
        options = {**global_options, **_options(job, "job options", where)}
        stats = {d: _mapping(job, d, where) for d in DIRECTIONS}
        error = job.get("error", 0)
        entries.append(_Entry(i, name, group, options, stats, _number(job, "job_runtime", where, default=0.0),
                              error if isinstance(error, int) and not isinstance(error, bool) else 0))
    return entries


def _processes(entries: list[_Entry], runtime_ms: float, notes: list[str], where: str) -> int:
    """Job processes that ran a group: numjobs, or what group_reporting merged (job_runtime / runtime), or
    the group's job entries (noting each difference in ``notes``)."""
    first = entries[0]
    numjobs = _int_option(first.options, "numjobs", 1, 1, 100_000, where)
    if len(entries) == 1:
        processes = numjobs
        if runtime_ms > 0 and first.job_runtime_ms > 0:
            counted = round(first.job_runtime_ms / runtime_ms)
            if counted >= 1 and counted != numjobs:
                notes.append(f"group_reporting merged {counted} job processes (job_runtime / runtime); numjobs={numjobs} "
                             f"is one job's; the options are those of one job")
                processes = counted
    else:
        processes = len(entries)
        if any(e.name != first.name for e in entries):
            notes.append(f"{len(entries)} jobs of group {first.group} merged: {', '.join(sorted({e.name for e in entries}))}")
        if len(entries) != numjobs:
            notes.append(f"{len(entries)} job entries in the group; numjobs={numjobs}")
    return processes


def _group_job(entries: list[_Entry], origin: str) -> FioJob:
    first = entries[0]
    where = f"{origin}: job {first.name!r} (group {first.group})"
    notes: list[str] = []
    keys = {tuple(e.options.get(k, "") for k in WORKLOAD_OPTIONS) for e in entries}
    if len(keys) > 1:
        names = ", ".join(sorted({e.name for e in entries}))
        raise MeasurementFileError([(where, f"jobs {names} ran at the same time with different rw/bs/iodepth/rate options; "
                                            "flashplan models one workload per scenario: run them in separate groups (stonewall) "
                                            "or import each from its own run")])
    fraction, _ = _read_fraction(first.options, where)
    directions = {d: s for d in DIRECTIONS if (s := _direction(entries, d, origin)) is not None}
    if not directions:
        raise MeasurementFileError([(where, "fio measured no reads and no writes")])
    runtime_ms = max(_number(e.stats[d], "runtime", origin, default=0.0) for e in entries for d in directions)
    processes = _processes(entries, runtime_ms, notes, where)
    if any(e.error for e in entries):
        notes.append(f"fio reported error {next(e.error for e in entries if e.error)} in this group")
    # the options must explain what was measured: writes measured under rw=randread
    # mean group_reporting folded different jobs together
    for d in DIRECTIONS:
        share = fraction if d == "read" else 1 - fraction
        if d in directions and not share:
            raise MeasurementFileError([(where, f"fio measured {d}s but the job options say rw={first.options.get('rw', 'read')}: "
                                                "group_reporting merged jobs with different workloads; rerun without "
                                                "group_reporting or with one job definition per group")])
    sizes = {d: s.mean_size_bytes for d, s in directions.items()}
    workload, more = workload_from_options(first.options, processes, sizes, where)
    notes.extend(more)
    for d, s in directions.items():
        if len(directions) == 1 and s.percentile_source == "clat+slat":
            notes.append(f"{d} percentiles: fio printed completion-latency (clat) percentiles; each is shifted by the mean "
                         f"submission latency ({s.slat_mean_us:.1f} us). Run fio with --lat_percentiles=1 for exact ones")
    cvs = []
    samples = 0
    for e in entries:
        for d in directions:
            st = e.stats[d]
            n = int(_number(st, "iops_samples", origin, default=0.0))
            mean = _number(st, "iops_mean", origin, default=0.0)
            if n >= 2 and mean > 0:
                cvs.append(_number(st, "iops_stddev", origin, default=0.0) / mean)
                samples = max(samples, n)
    return FioJob(
        name=first.name, group=first.group, processes=processes,
        options={k: v for k, v in first.options.items() if k != "name"},
        workload=workload, directions=directions, runtime_s=runtime_ms / 1000.0,
        iops_sample_cv=max(cvs) if cvs else None, iops_samples=samples, notes=tuple(notes),
    )


def parse_fio(data: bytes | str, origin: str = "fio result") -> FioResult:
    """Parse fio's JSON output into one FioJob per job group. Raises MeasurementFileError only."""
    if isinstance(data, bytes | bytearray | str) and len(data) > MAX_FIO_BYTES:
        raise MeasurementFileError([(origin, f"file is {len(data):,} bytes; the fio importer reads at most {MAX_FIO_BYTES:,} "
                                             f"({MAX_FIO_BYTES // 2**20} MiB): a fio result is kB to a few MB")])
    text = decode_text(data, origin)
    doc = _load_json(text, origin)
    del text
    if not isinstance(doc, dict):
        raise MeasurementFileError([(origin, f"not a fio result: the JSON is a {type(doc).__name__}, not an object")])
    version = doc.get("fio version")
    if not isinstance(version, str):
        raise MeasurementFileError([(origin, "not a fio result: no 'fio version' (run fio with --output-format=json)")])
    notes = []
    if not version.startswith("fio-3"):
        notes.append(f"written by {version}; the importer reads fio 3.x output")
    try:
        entries = _entries(doc, origin)
        groups: dict[int, list[_Entry]] = {}
        for e in entries:
            groups.setdefault(e.group, []).append(e)
        jobs = [_group_job(g, origin) for _, g in sorted(groups.items())]
    except MeasurementFileError:
        raise
    except (KeyError, TypeError, ValueError, ArithmeticError, RecursionError) as exc:  # a shape no check above foresaw
        raise MeasurementFileError([(origin, f"unexpected content in the fio result: {type(exc).__name__}: {exc}")]) from None
    return FioResult(fio_version=version, jobs=jobs, origin=origin, notes=tuple(notes))


# ----------------------------------------------------------------------------------------------
# calibration records


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "job"


def workload_yaml(job: FioJob, source_name: str) -> str:
    """A workload-only YAML file (``workload:`` at the top, to combine with a topology)."""
    header = (f"workload imported from fio job '{job.name}' (group {job.group}) in {source_name}\n"
              f"{job.describe_workload()}\n"
              "combine with a topology: flashplan import fio ... --scenario FILE --out scenario.yaml")
    return to_yaml({"workload": workload_data(job.workload)}, header=header)


__all__ = [
    "DirectionStats",
    "FioJob",
    "FioResult",
    "describe_workload",
    "histogram_percentile_ns",
    "parse_bssplit",
    "parse_fio",
    "parse_size",
    "parse_time_us",
    "workload_from_options",
    "workload_yaml",
]
