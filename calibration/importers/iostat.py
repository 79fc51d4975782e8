"""Import ``iostat -x`` logs: the peak interval by IOPS and by MB/s, each as a flashplan workload.

Storage sizers size for the busiest interval a customer's server logged. This module reads
sysstat 12.x ``iostat -x`` text - several reports (intervals), several devices, with or
without ``-t`` timestamps, ``-m`` (MB/s columns), ``-d`` (no CPU section), ``-h``/``--human``
(one block per column group, sizes with k/M/G suffixes) and decimal commas from other
locales - or its ``-o JSON`` form, and sums each report over the chosen devices:

* IOPS = r/s + w/s; MB/s = (rkB/s + wkB/s) x 1024 / 10^6 (iostat's kB are 1024 bytes,
  flashplan's MB are 10^6 bytes); read % = r/s / IOPS;
* mean request size per direction = rkB/s / r/s (the rate-weighted ``rareq-sz``);
* queue size = the sum of ``aqu-sz`` (I/Os outstanding at the devices, time-averaged).

``Interval.workload("open")`` offers the measured rate as Poisson arrivals with the
measured read share and request sizes; ``Interval.workload("closed")`` keeps ``aqu-sz``
I/Os in flight instead (by Little's law the same rate if the device answers as fast as the
measured one; on faster hardware the closed load grows, on slower it shrinks).

iostat cannot tell random from sequential I/O (merges, ``%rrqm``, hint at streams), so
``access`` is the caller's choice. Discards (d/s) and flushes (f/s) are not modelled.

The first report of ``iostat`` averages since boot unless ``-y`` was given: it is never an
interval unless ``keep_first`` is set (a file holding only that report is refused). A last
report holding fewer devices, or fewer values, than the one before was cut off mid-report (the
capture stopped while iostat wrote it): it is left out, with a note.

``-t`` timestamps must run forward. The time of day is read (``HH:MM:SS``, with ``AM``/``PM``
when the locale writes them); a step back in time is midnight passing when the date beside the
time changed, or, for a timestamp without a date, when the step forward across midnight is at
most MAX_ROLLOVER_GAP_S (an hour). Any other step back is refused naming its line: the file
joins several captures, or was reordered.

The text is read line by line, twice (the devices, then each report's sums), and each report
is kept as a few numbers, so memory grows with the devices and the reports, not the lines:
MAX_DEVICES and MAX_REPORTS bound what one file may hold, and ``-o JSON`` (parsed whole) is
refused beyond ``calibration.importers.MAX_JSON_VALUES`` values.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal, overload

from pydantic import ValidationError

from calibration.importers import OVERLONG, MeasurementFileError, build_workload, check_json_size, decode_text, first_text, iter_lines
from models.loading import format_validation_error
from models.workload import ClosedWorkload, OpenWorkload, ProfileWorkload

MIN_REQUEST_KIB = 0.5
"""A block-device request is at least one 512-byte sector; sizes rounded to 0 by iostat are raised to this."""

NOT_STORAGE = ("loop*", "ram*", "zram*", "sr*", "fd*")
"""Devices left out unless named with ``devices``: loop files, RAM disks, optical and floppy drives."""

STACKED = ("dm-*", "md*")
"""Device-mapper and md devices sit on top of other block devices: summing both counts I/O twice."""

_SIZE_SUFFIX_BYTES = {"s": 512.0, "B": 1.0, "k": 1024.0, "M": 1024.0**2, "G": 1024.0**3, "T": 1024.0**4, "P": 1024.0**5}
_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2}):(\d{2})(?![\d:])(?:\s*([AaPp][Mm])\b)?")
_BANNER_RE = re.compile(r"\(\d+ CPU\)\s*$")

REQUIRED = {"reads": ("r/s",), "writes": ("w/s",), "read_tput": ("rkB/s", "rMB/s"), "write_tput": ("wkB/s", "wMB/s")}

KEPT_COLUMNS = frozenset({"r/s", "w/s", "rkB/s", "rMB/s", "wkB/s", "wMB/s", "r_await", "w_await", "aqu-sz", "%util", "d/s"})
"""The columns an interval is made of; a device line's other values are checked and dropped."""

MAX_DEVICES = 100_000
"""Most distinct devices in one file: a SAN host with thousands of paths fits many times over; each costs a
name and, within the report being read, its line's kept values (about 1 kB)."""

MAX_REPORTS = 1_000_000
"""Most reports in one file (11 days of 1-second reports): each is held as about 100 bytes of figures and its
timestamp, about 200 MB at this limit."""

MAX_LINE_CHARS = 65_536
"""Longest line read: iostat's widest lines are a few hundred characters; a longer one is skipped as not
understood without being split (a 200 MB line of short tokens would become billions of bytes of them)."""

MAX_PROFILE_INTERVALS = 100_000
"""Most intervals of a profile workload (``models.workload.ProfileWorkload``)."""

MAX_ROLLOVER_GAP_S = 3_600
"""A timestamp without a date that steps back in time is midnight passing only if the step forward across
midnight is at most this long (an hour; iostat intervals are seconds to minutes)."""


def _column_unit_bytes(column: str) -> float | None:
    """Bytes per unit of a size or throughput column (kB = 1024 B in sysstat), None for other columns."""
    if "kB/s" in column or column.endswith("req-sz"):
        return 1024.0
    if "MB/s" in column:
        return 1024.0**2
    return None


def parse_value(token: str, column: str) -> float:
    """A value of an iostat column: ``12.5``, ``12,5`` (decimal comma), ``45.0%``, human ``3.5M`` in a size column."""
    text = token.rstrip("%")
    if "," in text and "." not in text:
        text = text.replace(",", ".")
    factor = 1.0
    if text and text[-1] in _SIZE_SUFFIX_BYTES:
        unit = _column_unit_bytes(column)
        if unit is None:
            raise ValueError(f"{token!r} has a size suffix in column {column}")
        factor = _SIZE_SUFFIX_BYTES[text[-1]] / unit
        text = text[:-1]
    value = float(text) * factor
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{token!r} is not a non-negative number")
    return value


@dataclass(frozen=True)
class DeviceStats:
    """One device's line(s) in one report."""

    device: str
    reads_per_s: float
    writes_per_s: float
    read_kib_per_s: float
    write_kib_per_s: float
    read_await_ms: float | None = None
    write_await_ms: float | None = None
    queue_size: float | None = None
    util_pct: float | None = None
    discards_per_s: float = 0.0


@dataclass(frozen=True)
class Interval:
    """One iostat report summed over the chosen devices present in it (``device_names``)."""

    index: int
    timestamp: str | None
    reads_per_s: float
    writes_per_s: float
    read_kib_per_s: float
    write_kib_per_s: float
    kib_per_s: float
    queue_size: float | None
    """Sum of aqu-sz: I/Os outstanding at the devices (None when a device's line has no aqu-sz)."""
    await_ms: float | None
    """Mean response time at the devices, r_await and w_await weighted by their rates (None without them or without I/O)."""
    max_util_pct: float | None
    device_names: tuple[str, ...]
    discards_per_s: float = 0.0

    @property
    def iops(self) -> float:
        return self.reads_per_s + self.writes_per_s

    @property
    def mbps(self) -> float:
        """Decimal MB/s (10^6 bytes), flashplan's unit."""
        return self.kib_per_s * 1024 / 1e6

    @property
    def read_fraction(self) -> float:
        return self.reads_per_s / self.iops if self.iops else 0.0

    @property
    def read_kib(self) -> float:
        """Mean read request size (KiB): rkB/s / r/s over the devices."""
        r = self.reads_per_s
        return max(MIN_REQUEST_KIB, self.read_kib_per_s / r) if r else 0.0

    @property
    def write_kib(self) -> float:
        w = self.writes_per_s
        return max(MIN_REQUEST_KIB, self.write_kib_per_s / w) if w else 0.0

    def label(self) -> str:
        return f"report {self.index + 1}" + (f" ({self.timestamp})" if self.timestamp else "")

    def workload(self, kind: Literal["open", "closed"] = "open", access: Literal["random", "sequential"] = "random") -> ClosedWorkload | OpenWorkload:
        """This interval's load as a flashplan workload (see the module docstring)."""
        origin = self.label()
        if self.iops <= 0:
            raise MeasurementFileError([(origin, "no reads or writes in this interval")])
        data: dict[str, Any] = {"read_fraction": round(self.read_fraction, 6), "access": access}
        sizes = {op: round(kib, 2) for op, kib in (("read", self.read_kib), ("write", self.write_kib)) if kib > 0}
        if len(set(sizes.values())) == 1:
            data["block_size_kib"] = next(iter(sizes.values()))
        else:
            data["sizes"] = [{"kib": kib, "weight": 1.0, "op": op} for op, kib in sizes.items()]
        if kind == "open":
            data.update(kind="open", rate_iops=round(self.iops, 2))
        else:
            queue = self.queue_size
            if queue is None:
                raise MeasurementFileError([(origin, "no aqu-sz column: a closed workload needs the measured queue size")])
            data.update(kind="closed", jobs=1, queue_depth=max(1, round(queue)), think_time_us=0.0)
        return build_workload(data, origin)

    def summary(self) -> dict[str, Any]:
        """The figures a sizer reads off the interval (for tables and JSON)."""
        return {
            "report": self.index + 1, "timestamp": self.timestamp, "iops": self.iops, "reads_per_s": self.reads_per_s,
            "writes_per_s": self.writes_per_s, "read_fraction": self.read_fraction, "mbps": self.mbps,
            "read_kib": self.read_kib, "write_kib": self.write_kib, "queue_size": self.queue_size,
            "await_ms": self.await_ms, "max_util_pct": self.max_util_pct,
            "devices": list(self.device_names),
        }


def profile_interval(interval: Interval, duration_s: float, kind: Literal["open", "closed"]) -> dict[str, Any]:
    """One iostat report as a profile interval (raw data): its rate (or aqu-sz in flight), read share,
    request sizes and label; an idle report is an interval at rate 0."""
    data: dict[str, Any] = {"duration_s": duration_s, "label": interval.label()[:200]}
    if interval.iops <= 0:
        return {**data, "rate_iops": 0.0}
    data["read_fraction"] = round(interval.read_fraction, 6)
    sizes = {op: round(kib, 2) for op, kib in (("read", interval.read_kib), ("write", interval.write_kib)) if kib > 0}
    if len(set(sizes.values())) == 1:
        data["block_size_kib"] = next(iter(sizes.values()))
    else:
        data["sizes"] = [{"kib": kib, "weight": 1.0, "op": op} for op, kib in sizes.items()]
    if kind == "open":
        return {**data, "rate_iops": round(interval.iops, 2)}
    queue = interval.queue_size
    if queue is None:
        raise MeasurementFileError([(interval.label(), "no aqu-sz column: a closed profile needs the measured queue size")])
    return {**data, "queue_depth": max(1, round(queue))} if round(queue) >= 1 else {**data, "rate_iops": round(interval.iops, 2)}


def _clock(stamp: str | None) -> tuple[int, str] | None:
    """(seconds since midnight, the rest of the stamp: its date) of a ``-t`` timestamp; None without a time of day."""
    found = _TIME_RE.search(stamp or "")
    if found is None or stamp is None:
        return None
    h, m, s = int(found.group(1)), int(found.group(2)), int(found.group(3))
    if found.group(4):
        h = h % 12 + (12 if found.group(4).lower() == "pm" else 0)
    return h * 3600 + m * 60 + s, (stamp[:found.start()] + stamp[found.end():]).strip()


def interval_seconds(intervals: Sequence[Interval]) -> float | None:
    """The sampling interval from the reports' ``-t`` timestamps (the median gap of their times of day,
    across midnight too; the parser has checked that they run forward), or None when they carry no times."""
    seconds = []
    for iv in intervals:
        clock = _clock(iv.timestamp)
        if clock is None:
            return None
        seconds.append(clock[0])
    gaps = sorted((b - a) % 86_400 for a, b in pairwise(seconds))
    gaps = [g for g in gaps if g > 0]
    return float(gaps[len(gaps) // 2]) if gaps else None


_FIGURES = ("reads_per_s", "writes_per_s", "read_kib_per_s", "write_kib_per_s", "kib_per_s", "queue_size", "await_ms",
            "max_util_pct", "discards_per_s")


@dataclass
class _Columns:
    """Every interval's figures, one array per figure (about 100 bytes a report, not an object per report)."""

    index: array = field(default_factory=lambda: array("q"))
    values: dict[str, array] = field(default_factory=lambda: {k: array("d") for k in _FIGURES})
    timestamps: list[str | None] = field(default_factory=list)
    names: list[tuple[str, ...]] = field(default_factory=list)
    held: array = field(default_factory=lambda: array("q"))
    """Values each report's device lines hold (a report cut off holds fewer devices or values than the one before)."""

    def append(self, index: int, timestamp: str | None, figures: dict[str, float], names: tuple[str, ...], values: int) -> None:
        self.index.append(index)
        for k in _FIGURES:
            self.values[k].append(figures[k])
        self.timestamps.append(timestamp)
        self.names.append(names)
        self.held.append(values)

    def pop(self) -> None:
        self.index.pop()
        for k in _FIGURES:
            self.values[k].pop()
        self.timestamps.pop()
        self.names.pop()
        self.held.pop()

    def cut_off(self) -> bool:
        """Whether the last report holds fewer devices, or as many with fewer values, than the one before."""
        if len(self.index) < 2:
            return False
        last, before = (len(self.names[-1]), self.held[-1]), (len(self.names[-2]), self.held[-2])
        return last < before

    def interval(self, i: int) -> Interval:
        v = {k: self.values[k][i] for k in _FIGURES}
        optional = {k: None if math.isnan(v[k]) else v[k] for k in ("queue_size", "await_ms", "max_util_pct")}
        return Interval(index=self.index[i], timestamp=self.timestamps[i], reads_per_s=v["reads_per_s"],
                        writes_per_s=v["writes_per_s"], read_kib_per_s=v["read_kib_per_s"], write_kib_per_s=v["write_kib_per_s"],
                        kib_per_s=v["kib_per_s"], device_names=self.names[i], discards_per_s=v["discards_per_s"], **optional)


class IntervalSeries(Sequence[Interval]):
    """The intervals of a report, built one at a time from the column store when asked for."""

    def __init__(self, columns: _Columns, start: int = 0, stop: int | None = None):
        self._columns = columns
        self._start = start
        self._stop = len(columns.index) if stop is None else stop

    def __len__(self) -> int:
        return max(0, self._stop - self._start)

    @overload
    def __getitem__(self, i: int) -> Interval: ...

    @overload
    def __getitem__(self, i: slice) -> IntervalSeries: ...

    def __getitem__(self, i: int | slice) -> Interval | IntervalSeries:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise ValueError("interval series slices take no step")
            return IntervalSeries(self._columns, self._start + start, self._start + max(start, stop))
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self._columns.interval(self._start + (i % n))

    def __iter__(self) -> Iterator[Interval]:
        return (self._columns.interval(k) for k in range(self._start, self._stop))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def peak(self, figure: str) -> Interval:
        """The first interval with the largest ``figure`` (``iops`` or ``mbps``), from the arrays."""
        v = self._columns.values
        if figure == "iops":
            score = [r + w for r, w in zip(v["reads_per_s"][self._start:self._stop], v["writes_per_s"][self._start:self._stop], strict=True)]
        else:
            score = [k * 1024 / 1e6 for k in v["kib_per_s"][self._start:self._stop]]
        best = max(range(len(score)), key=score.__getitem__)
        return self._columns.interval(self._start + best)


@dataclass(frozen=True)
class IostatReport:
    """A parsed iostat file: every report over the chosen devices, and the peaks among the candidates."""

    origin: str
    system: str
    intervals: IntervalSeries
    devices: list[str]
    all_devices: list[str]
    skipped_first: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def candidates(self) -> IntervalSeries:
        return self.intervals[1:] if self.skipped_first else self.intervals

    @property
    def peak_iops(self) -> Interval:
        return self.candidates.peak("iops")

    @property
    def peak_mbps(self) -> Interval:
        return self.candidates.peak("mbps")

    def peak(self, by: Literal["iops", "mbps"]) -> Interval:
        return self.peak_iops if by == "iops" else self.peak_mbps

    def profile(self, kind: Literal["open", "closed"] = "open", access: Literal["random", "sequential"] = "random",
                interval_s: float | None = None) -> ProfileWorkload:
        """Every report (the skipped first one left out) as one interval of a profile workload, summed over
        the chosen devices (choose one device for a per-device profile). The interval length is
        ``interval_s``, else the gap between the ``-t`` timestamps; a closed interval whose aqu-sz
        rounds to 0 keeps its measured rate instead."""
        if len(self.candidates) > MAX_PROFILE_INTERVALS:
            raise MeasurementFileError([(self.origin, f"{len(self.candidates):,} reports; a profile holds at most "
                                                      f"{MAX_PROFILE_INTERVALS:,} intervals (cut the file to the hours that matter)")])
        length = interval_s if interval_s is not None else interval_seconds(self.candidates)
        if length is None:
            raise MeasurementFileError([("--interval-s", "the reports carry no timestamps (iostat without -t): give "
                                                         "the sampling interval, e.g. --interval-s 1 for `iostat -x 1`")])
        if not 0 < length <= 86_400:
            raise MeasurementFileError([("--interval-s", f"must be > 0 and <= 86,400 s, got {length:g}")])
        data = {"kind": "profile", "access": access,
                "intervals": [profile_interval(iv, length, kind) for iv in self.candidates]}
        try:
            return ProfileWorkload.model_validate(data)
        except ValidationError as exc:
            raise MeasurementFileError(format_validation_error(exc, f"{self.origin}: workload")) from None


# ---------------------------------------------------------------------------------------------- reading


class _Header:
    """A ``Device`` header line: its columns, where the device name is, and which values are kept."""

    def __init__(self, columns: list[str]):
        self.columns = columns
        self.device = columns.index("Device")
        self.data = [(i, c, c in KEPT_COLUMNS) for i, c in enumerate(columns) if c != "Device"]
        self.data_columns = frozenset(c for c in columns if c != "Device")

    def row(self, tokens: list[str]) -> tuple[str, dict[str, float]] | None:
        """A device line under this header: the device and the values flashplan uses by column (None: not a line of
        that header; every value is checked, the others are not kept)."""
        if len(tokens) != len(self.columns):
            return None
        values = {}
        try:
            for i, col, kept in self.data:
                token = tokens[i]
                try:
                    value = float(token)  # the plain notation; parse_value gives the same for every token float() reads
                except ValueError:
                    value = parse_value(token, col)
                else:
                    if not 0 <= value < math.inf:
                        raise ValueError(token)
                if kept:
                    values[col] = value
        except ValueError:
            return None
        return tokens[self.device], values


_CPU_RE = re.compile(r"[\d.,%]+")


def _cpu_values(tokens: list[str]) -> bool:
    """Whether a line is the numbers under an ``avg-cpu:`` header."""
    return all(_CPU_RE.fullmatch(t) for t in tokens)


def _shown(items: Sequence[Any], limit: int = 10) -> str:
    """The first ``limit`` items joined, and how many more there are."""
    more = len(items) - limit
    return ", ".join(str(x) for x in items[:limit]) + (f" and {more:,} more" if more > 0 else "")


# Events of the scan: a report starts (timestamp, line), a device line (device, values), the banner (system).
_Event = tuple[str, Any, Any]


class _Scan:
    """The state machine over the lines of ``iostat -x`` text, as a stream of events; counts lines not understood."""

    def __init__(self) -> None:
        self.skipped = 0
        self.first_skipped: list[int] = []

    def _skip(self, lineno: int) -> None:
        self.skipped += 1
        if len(self.first_skipped) < 5:
            self.first_skipped.append(lineno)

    def note(self, notes: list[str]) -> None:
        """A note naming the lines not understood (the first five), if any."""
        if self.skipped:
            shown = ", ".join(str(n) for n in self.first_skipped) + (" ..." if self.skipped > 5 else "")
            notes.append(f"{self.skipped} line(s) not understood and skipped (line {shown})")

    def events(self, lines: Iterable[str]) -> Iterator[_Event]:  # noqa: C901 - one state machine, kept in one place
        header: _Header | None = None
        cpu_values_next = False
        current = False  # a report is open
        fresh = True  # it holds nothing yet
        seen: set[str] = set()  # data columns of its device lines so far
        for lineno, line in enumerate(lines, 1):
            if line is OVERLONG:
                self._skip(lineno)
                continue
            stripped = line.strip()
            if not stripped:
                header = None
                continue
            tokens = stripped.split()
            if _BANNER_RE.search(stripped):
                yield ("system", " ".join(tokens), lineno)
                header = None
                continue
            if tokens[0] == "avg-cpu:":
                if not (current and fresh):
                    yield ("start", None, lineno)
                    current, seen = True, set()
                fresh = False
                header, cpu_values_next = None, True
                continue
            if cpu_values_next:
                cpu_values_next = False
                if header is None and _cpu_values(tokens):
                    continue
            columns = [t.rstrip(":") for t in tokens] if "Device" in stripped else []
            if "Device" in columns:
                if not current or not seen.isdisjoint(columns):
                    yield ("start", None, lineno)
                    current, seen = True, set()
                fresh = False
                header = _Header(columns)
                continue
            if header is not None and current:
                row = header.row(tokens)
                if row is None:
                    self._skip(lineno)
                else:
                    if not header.data_columns <= seen:
                        seen |= header.data_columns
                    yield ("row", row, lineno)
                continue
            if _TIME_RE.search(stripped) and len(tokens) <= 4:
                yield ("start", stripped, lineno)
                current, fresh, seen = True, True, set()
                continue
            self._skip(lineno)


def _json_events(doc: Any, origin: str) -> Iterator[_Event]:
    """Events from ``iostat -x -o JSON`` (sysstat's JSON: sysstat.hosts[].statistics[].disk[])."""
    hosts = doc.get("sysstat", {}).get("hosts") if isinstance(doc, dict) and isinstance(doc.get("sysstat"), dict) else None
    if not isinstance(hosts, list) or not hosts or not all(isinstance(h, dict) for h in hosts):
        raise MeasurementFileError([(origin, "JSON without sysstat.hosts: not `iostat -o JSON` output")])
    host = hosts[0]
    yield ("system", " ".join(str(host.get(k, "")) for k in ("sysname", "release", "nodename", "date")).strip(), 0)
    statistics = host.get("statistics")
    for i, stat in enumerate(statistics if isinstance(statistics, list) else []):
        if not isinstance(stat, dict) or not isinstance(stat.get("disk"), list):
            continue
        timestamp = stat.get("timestamp")
        yield ("start", timestamp if isinstance(timestamp, str) else None, f"statistics {i + 1}")
        for disk in stat["disk"]:
            if not isinstance(disk, dict) or not isinstance(disk.get("disk_device"), str):
                continue
            row: dict[str, float] = {}
            for key, value in disk.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
                    column = "%util" if key == "util" else key
                    if column in KEPT_COLUMNS:
                        row[column] = float(value)
            yield ("row", (disk["disk_device"], row), f"statistics {i + 1}")


def _device_stats(device: str, row: dict[str, float]) -> DeviceStats | None:
    def first(*names: str) -> tuple[str, float] | None:
        for n in names:
            if n in row:
                return n, row[n]
        return None

    found = {key: first(*names) for key, names in REQUIRED.items()}
    if any(v is None for v in found.values()):
        return None
    rt, wt = found["read_tput"], found["write_tput"]
    assert rt is not None and wt is not None
    return DeviceStats(
        device=device,
        reads_per_s=row["r/s"],
        writes_per_s=row["w/s"],
        read_kib_per_s=rt[1] * (1024 if rt[0] == "rMB/s" else 1),
        write_kib_per_s=wt[1] * (1024 if wt[0] == "wMB/s" else 1),
        read_await_ms=row.get("r_await"),
        write_await_ms=row.get("w_await"),
        queue_size=row.get("aqu-sz"),
        util_pct=row.get("%util"),
        discards_per_s=row.get("d/s", 0.0),
    )


def _figures(stats: list[DeviceStats]) -> dict[str, float]:
    """A report's sums over its devices (NaN for a figure some device lacks), added in device order."""
    reads = writes = rkib = wkib = kib = discards = 0.0
    queue: float = 0.0
    wait_total = wait_weight = 0.0
    wait_known = True
    utils = []
    for d in stats:
        reads += d.reads_per_s
        writes += d.writes_per_s
        rkib += d.read_kib_per_s
        wkib += d.write_kib_per_s
        kib += d.read_kib_per_s + d.write_kib_per_s
        discards += d.discards_per_s
        queue = math.nan if d.queue_size is None else queue + d.queue_size
        for rate, wait in ((d.reads_per_s, d.read_await_ms), (d.writes_per_s, d.write_await_ms)):
            if rate and wait is None:
                wait_known = False
            wait_total += rate * (wait or 0.0)
            wait_weight += rate
        if d.util_pct is not None:
            utils.append(d.util_pct)
    return {"reads_per_s": reads, "writes_per_s": writes, "read_kib_per_s": rkib, "write_kib_per_s": wkib, "kib_per_s": kib,
            "queue_size": queue, "await_ms": wait_total / wait_weight if wait_known and wait_weight else math.nan,
            "max_util_pct": max(utils) if utils else math.nan, "discards_per_s": discards}


def _partition_bases(name: str) -> tuple[str, ...]:
    """The disks ``name`` would be a partition of, by the kernel's naming: a disk whose name ends in a digit
    numbers its partitions after a ``p`` (nvme0n1p2, mmcblk0p1), any other straight after its name (sda2)."""
    bases = []
    found = _P_PARTITION_RE.fullmatch(name)
    if found:
        bases.append(found.group(1))
    found = _PARTITION_RE.fullmatch(name)
    if found:
        bases.append(found.group(1))
    return tuple(bases)


_P_PARTITION_RE = re.compile(r"(.*\d)p\d+")
_PARTITION_RE = re.compile(r"(.*\D)\d+")


def choose_devices(names: Sequence[str], patterns: Sequence[str] | None, notes: list[str]) -> list[str]:
    """The devices to sum: those matching ``patterns`` (shell globs), or by default every disk that is
    neither in NOT_STORAGE nor a partition of another listed device (found by name, ``_partition_bases``)."""
    if patterns:
        chosen = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
        for p in patterns:
            if not any(fnmatch.fnmatchcase(n, p) for n in names):
                raise MeasurementFileError([("--device", f"{p!r} matches no device; the file has {_shown(names)}")])
    else:
        listed = set(names)
        chosen = [n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in NOT_STORAGE)
                  and not any(b in listed for b in _partition_bases(n))]
        kept = set(chosen)
        left_out = [n for n in names if n not in kept]
        if left_out:
            notes.append(f"left out {_shown(left_out)} (loop/RAM/optical devices and partitions; name them with --device to include)")
        if not chosen:
            raise MeasurementFileError([("--device", f"every device in the file is left out by default ({_shown(names)}); "
                                                     "choose some with --device")])
    stacked = [n for n in chosen if any(fnmatch.fnmatchcase(n, p) for p in STACKED)]
    if stacked and len(stacked) < len(chosen):
        notes.append(f"{_shown(stacked)} sit on other block devices that are also summed: I/O may be counted twice "
                     "(choose one layer with --device)")
    return chosen


@dataclass
class _Names:
    """Pass one: the devices in order of first appearance, the banner, the reports' count and their clock."""

    origin: str
    names: dict[str, int] = field(default_factory=dict)
    system: str = ""
    reports: int = 0
    clock: tuple[int, str, str, Any] | None = None  # seconds, date, stamp, line of the last timestamp

    def read(self, events: Iterable[_Event]) -> None:
        open_rows = False
        for kind, value, where in events:
            if kind == "row":
                name = value[0]
                if name not in self.names:
                    if len(self.names) >= MAX_DEVICES:
                        raise MeasurementFileError([(f"{self.origin}: {_where(where)}", f"more than {MAX_DEVICES:,} devices; "
                                                     f"the importer holds at most {MAX_DEVICES:,} (choose fewer with iostat -x DEVICE ...)")])
                    self.names[name] = len(self.names)
                if not open_rows:
                    open_rows = True
                    self.reports += 1
                    if self.reports > MAX_REPORTS:
                        raise MeasurementFileError([(f"{self.origin}: {_where(where)}", f"more than {MAX_REPORTS:,} reports; the "
                                                     f"importer holds at most {MAX_REPORTS:,} (import the hours that matter)")])
            elif kind == "start":
                open_rows = False
                if value is not None:
                    self._check_clock(value, where)
            else:
                self.system = value

    def _check_clock(self, stamp: str, where: Any) -> None:
        """Reports run forward in time; a step back is midnight passing when the date changed, or (a stamp without
        a date) when the step forward across midnight is at most MAX_ROLLOVER_GAP_S."""
        clock = _clock(stamp)
        if clock is None:
            return
        seconds, date = clock
        if self.clock is not None:
            before, before_date, before_stamp, before_where = self.clock
            rollover = date != before_date if date or before_date else (seconds - before) % 86_400 <= MAX_ROLLOVER_GAP_S
            if seconds < before and not rollover:
                raise MeasurementFileError([(f"{self.origin}: {_where(where)}", (
                    f"timestamp {stamp!r} is earlier than {before_stamp!r} ({_where(before_where)}): iostat writes its reports "
                    "in time order; were several captures joined? import each on its own"))])
        self.clock = (seconds, date, stamp, where)


def _where(where: Any) -> str:
    return f"line {where}" if isinstance(where, int) else str(where)


class _Intervals:
    """Pass two: each report's chosen device lines folded into one interval as the report ends."""

    def __init__(self, chosen: list[str], positions: dict[str, int]):
        self.chosen = set(chosen)
        self.positions = positions
        self.columns = _Columns()
        self.incomplete: set[str] = set()
        self.last_incomplete: set[str] = set()
        self.raw_reports = 0
        self.last_start: Any = None
        self.last_start_empty = False
        self.last_without_chosen = False
        self._names: dict[tuple[str, ...], tuple[str, ...]] = {}

    def read(self, events: Iterable[_Event]) -> None:
        rows: dict[str, dict[str, float]] = {}
        any_rows = False
        timestamp: str | None = None
        for kind, value, where in events:
            if kind == "row":
                name, values = value
                any_rows = True
                if name in self.chosen:
                    rows.setdefault(name, {}).update(values)
            elif kind == "start":
                if any_rows:
                    self._fold(timestamp, rows)
                rows, any_rows, timestamp = {}, False, value
                self.last_start = where
        if any_rows:
            self._fold(timestamp, rows)
        self.last_start_empty = not any_rows and self.last_start is not None

    def _fold(self, timestamp: str | None, rows: dict[str, dict[str, float]]) -> None:
        index = self.raw_reports
        self.raw_reports += 1
        self.incomplete |= self.last_incomplete
        self.last_incomplete = set()
        stats = []
        for name in sorted(rows, key=self.positions.__getitem__):
            s = _device_stats(name, rows[name])
            if s is None:
                self.last_incomplete.add(name)
            else:
                stats.append(s)
        self.last_without_chosen = not stats
        if stats:
            names = tuple(s.device for s in stats)
            names = self._names.setdefault(names, names)
            self.columns.append(index, timestamp, _figures(stats), names, sum(len(rows[n]) for n in names))

    def drop_cut_off_report(self, notes: list[str]) -> None:
        """Leave out the last report when it holds fewer device lines or values than the one before (a capture cut off)."""
        c = self.columns.index
        if self.columns.cut_off():
            label = self.columns.interval(len(c) - 1).label()
            notes.append(f"the last report, {label}, holds fewer devices or columns than the one before: the capture was "
                         "cut off mid-report; it is left out")
            self.columns.pop()
            self.last_incomplete = set()
        self.incomplete |= self.last_incomplete
        if self.last_without_chosen and len(c) and not self.last_start_empty:
            notes.append(f"the last report, from {_where(self.last_start)}, holds none of the chosen devices: the capture was cut "
                         "off mid-report; it is left out")
        if self.last_start_empty and len(c):
            notes.append(f"the last report, from {_where(self.last_start)}, has no device lines: the capture was cut off; it is left out")


def _event_source(data: bytes | str, origin: str) -> Callable[[_Scan], Iterator[_Event]]:
    """A way to read the file's events again and again: text line by line through a ``_Scan``, or the
    ``-o JSON`` document (parsed once, refused beyond MAX_JSON_VALUES before it is built)."""
    first = first_text(data, origin)
    if not first:
        raise MeasurementFileError([(origin, "file is empty")])
    if first != "{":
        return lambda scan: scan.events(iter_lines(data, origin, MAX_LINE_CHARS))
    text = decode_text(data, origin)
    check_json_size(text, origin, hint=" (import the text output, iostat -x without -o JSON, which is read line by line)")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise MeasurementFileError([(origin, f"looks like iostat -o JSON output but is not valid JSON: {exc}")]) from None
    return lambda scan: _json_events(doc, origin)


def parse_iostat(data: bytes | str, origin: str = "iostat output", devices: Sequence[str] | None = None,
                 keep_first: bool = False) -> IostatReport:
    """Parse ``iostat -x`` text; raises MeasurementFileError only.

    ``devices``: shell globs of devices to sum (default: all disks, see ``choose_devices``);
    ``keep_first``: keep the first report, which iostat averages since boot unless run with ``-y``.
    The text is read twice, line by line (the devices first, then the sums): what is held is one
    report's device lines and about 100 bytes per report, never the file's lines.
    """
    notes: list[str] = []
    try:
        events = _event_source(data, origin)
        scan = _Scan()
        names = _Names(origin)
        names.read(events(scan))
        scan.note(notes)
        if not names.names:
            raise MeasurementFileError([(origin, "no device lines: expected `iostat -x` output with a Device header "
                                                 "and one line per device")])
        all_names = list(names.names)
        chosen = choose_devices(all_names, devices, notes)
        folded = _Intervals(chosen, names.names)
        folded.read(events(_Scan()))
        folded.drop_cut_off_report(notes)
        if folded.incomplete:
            notes.append(f"{_shown(sorted(folded.incomplete))}: lines without r/s, w/s, rkB/s and wkB/s left out")
        intervals = IntervalSeries(folded.columns)
        if not intervals:
            raise MeasurementFileError([(origin, "no device line has the r/s, w/s, rkB/s (or rMB/s) and wkB/s columns of "
                                                 "`iostat -x`")])
        skip_first = not keep_first and intervals[0].index == 0
        if skip_first:
            if len(intervals) == 1:
                raise MeasurementFileError([(origin, "the file holds one report, iostat's first, which averages since boot, "
                                                     "not an interval: log several (iostat -x -t 10 360), or give --keep-first "
                                                     "if iostat ran with -y")])
            notes.append("first report skipped: iostat's first report averages since boot (keep it with --keep-first "
                         "if iostat ran with -y)")
        report = IostatReport(origin=origin, system=names.system, intervals=intervals, devices=chosen, all_devices=all_names,
                              skipped_first=skip_first, notes=tuple(notes))
        if report.peak_iops.iops <= 0:
            raise MeasurementFileError([(origin, f"no reads or writes in any interval on {_shown(chosen)}")])
        if any(d > 0 for d in folded.columns.values["discards_per_s"][1 if skip_first else 0:]):
            notes.append("discards (d/s) are not modelled and are left out of the rates")
        return IostatReport(origin=origin, system=names.system, intervals=intervals, devices=chosen, all_devices=all_names,
                            skipped_first=skip_first, notes=tuple(notes))
    except MeasurementFileError:
        raise
    except (KeyError, TypeError, ValueError, ArithmeticError, IndexError) as exc:  # a shape no check above foresaw
        raise MeasurementFileError([(origin, f"unexpected content in the iostat file: {type(exc).__name__}: {exc}")]) from None


__all__ = ["DeviceStats", "Interval", "IntervalSeries", "IostatReport", "choose_devices", "parse_iostat", "parse_value"]
