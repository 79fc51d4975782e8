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

The first report of ``iostat`` averages since boot unless ``-y`` was given; it is skipped
when the file holds more than one report, unless ``keep_first`` is set.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal

from pydantic import ValidationError

from calibration.importers import MeasurementFileError, build_workload, decode_text
from models.loading import format_validation_error
from models.workload import ClosedWorkload, OpenWorkload, ProfileWorkload

MIN_REQUEST_KIB = 0.5
"""A block-device request is at least one 512-byte sector; sizes rounded to 0 by iostat are raised to this."""

NOT_STORAGE = ("loop*", "ram*", "zram*", "sr*", "fd*")
"""Devices left out unless named with ``devices``: loop files, RAM disks, optical and floppy drives."""

STACKED = ("dm-*", "md*")
"""Device-mapper and md devices sit on top of other block devices: summing both counts I/O twice."""

_SIZE_SUFFIX_BYTES = {"s": 512.0, "B": 1.0, "k": 1024.0, "M": 1024.0**2, "G": 1024.0**3, "T": 1024.0**4, "P": 1024.0**5}
_TIME_RE = re.compile(r"\b\d{1,2}:\d{2}:\d{2}\b")
_BANNER_RE = re.compile(r"\(\d+ CPU\)\s*$")

REQUIRED = {"reads": ("r/s",), "writes": ("w/s",), "read_tput": ("rkB/s", "rMB/s"), "write_tput": ("wkB/s", "wMB/s")}


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
    """One iostat report summed over the chosen devices."""

    index: int
    timestamp: str | None
    devices: tuple[DeviceStats, ...]

    @property
    def reads_per_s(self) -> float:
        return sum(d.reads_per_s for d in self.devices)

    @property
    def writes_per_s(self) -> float:
        return sum(d.writes_per_s for d in self.devices)

    @property
    def iops(self) -> float:
        return self.reads_per_s + self.writes_per_s

    @property
    def mbps(self) -> float:
        """Decimal MB/s (10^6 bytes), flashplan's unit."""
        return sum(d.read_kib_per_s + d.write_kib_per_s for d in self.devices) * 1024 / 1e6

    @property
    def read_fraction(self) -> float:
        return self.reads_per_s / self.iops if self.iops else 0.0

    @property
    def read_kib(self) -> float:
        """Mean read request size (KiB): rkB/s / r/s over the devices."""
        r = self.reads_per_s
        return max(MIN_REQUEST_KIB, sum(d.read_kib_per_s for d in self.devices) / r) if r else 0.0

    @property
    def write_kib(self) -> float:
        w = self.writes_per_s
        return max(MIN_REQUEST_KIB, sum(d.write_kib_per_s for d in self.devices) / w) if w else 0.0

    @property
    def queue_size(self) -> float | None:
        """Sum of aqu-sz: I/Os outstanding at the devices (None when the column is missing)."""
        sizes = [d.queue_size for d in self.devices]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)

    @property
    def await_ms(self) -> float | None:
        """Mean response time at the devices, r_await and w_await weighted by their rates."""
        total = weight = 0.0
        for d in self.devices:
            for rate, wait in ((d.reads_per_s, d.read_await_ms), (d.writes_per_s, d.write_await_ms)):
                if rate and wait is None:
                    return None
                total += rate * (wait or 0.0)
                weight += rate
        return total / weight if weight else None

    @property
    def max_util_pct(self) -> float | None:
        utils = [d.util_pct for d in self.devices if d.util_pct is not None]
        return max(utils) if utils else None

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
            "devices": [d.device for d in self.devices],
        }


def interval_seconds(intervals: Sequence[Interval]) -> float | None:
    """The sampling interval from the reports' ``-t`` timestamps (the median gap of their HH:MM:SS,
    across midnight too), or None when they carry no times."""
    seconds = []
    for iv in intervals:
        found = _TIME_RE.search(iv.timestamp or "")
        if found is None:
            return None
        h, m, s = (int(x) for x in found.group(0).split(":"))
        seconds.append(h * 3600 + m * 60 + s)
    gaps = sorted((b - a) % 86_400 for a, b in pairwise(seconds))
    gaps = [g for g in gaps if g > 0]
    return float(gaps[len(gaps) // 2]) if gaps else None


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


@dataclass(frozen=True)
class IostatReport:
    """A parsed iostat file: every report over the chosen devices, and the peaks among the candidates."""

    origin: str
    system: str
    intervals: list[Interval]
    devices: list[str]
    all_devices: list[str]
    skipped_first: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def candidates(self) -> list[Interval]:
        return self.intervals[1:] if self.skipped_first else self.intervals

    @property
    def peak_iops(self) -> Interval:
        return max(self.candidates, key=lambda i: i.iops)

    @property
    def peak_mbps(self) -> Interval:
        return max(self.candidates, key=lambda i: i.mbps)

    def peak(self, by: Literal["iops", "mbps"]) -> Interval:
        return self.peak_iops if by == "iops" else self.peak_mbps

    def profile(self, kind: Literal["open", "closed"] = "open", access: Literal["random", "sequential"] = "random",
                interval_s: float | None = None) -> ProfileWorkload:
        """Every report (the skipped first one left out) as one interval of a profile workload, summed over
        the chosen devices (choose one device for a per-device profile). The interval length is
        ``interval_s``, else the gap between the ``-t`` timestamps; a closed interval whose aqu-sz
        rounds to 0 keeps its measured rate instead."""
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


@dataclass
class _Report:
    timestamp: str | None = None
    rows: dict[str, dict[str, float]] = field(default_factory=dict)
    fresh: bool = True


def _device_row(header: list[str], tokens: list[str]) -> tuple[str, dict[str, float]] | None:
    """A device line under ``header``: the device and its values by column (None: not a line of that header)."""
    if len(tokens) != len(header):
        return None
    try:
        values = {col: parse_value(tok, col) for col, tok in zip(header, tokens, strict=True) if col != "Device"}
    except ValueError:
        return None
    return tokens[header.index("Device")], values


def _cpu_values(tokens: list[str]) -> bool:
    """Whether a line is the numbers under an ``avg-cpu:`` header."""
    return all(re.fullmatch(r"[\d.,%]+", t) for t in tokens)


def _holds_columns(report: _Report, columns: list[str]) -> bool:
    """Whether ``report`` already has a value of one of a device header's data ``columns`` (so the header starts a new report)."""
    data_columns = set(columns) - {"Device"}
    return any(data_columns & set(row) for row in report.rows.values())


def _note_skipped(skipped: list[int], notes: list[str]) -> None:
    """A note naming the lines not understood (the first five), if any."""
    if skipped:
        shown = ", ".join(str(n) for n in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
        notes.append(f"{len(skipped)} line(s) not understood and skipped (line {shown})")


def _start(reports: list[_Report], timestamp: str | None = None) -> _Report:
    """A new report, appended to ``reports``."""
    report = _Report(timestamp=timestamp)
    reports.append(report)
    return report


def _read_reports(text: str, origin: str, notes: list[str]) -> tuple[str, list[_Report]]:
    """Split the text into reports of {device: {column: value}}."""
    system = ""
    reports: list[_Report] = []
    header: list[str] | None = None
    cpu_values_next = False
    skipped: list[int] = []

    current: _Report | None = None
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            header = None
            continue
        tokens = stripped.split()
        if _BANNER_RE.search(stripped):
            system = " ".join(tokens)
            header = None
            continue
        if tokens[0] == "avg-cpu:":
            current = current if current is not None and current.fresh else _start(reports)
            current.fresh = False
            header, cpu_values_next = None, True
            continue
        if cpu_values_next:
            cpu_values_next = False
            if header is None and _cpu_values(tokens):
                continue
        columns = [t.rstrip(":") for t in tokens]
        if "Device" in columns:
            if current is None or _holds_columns(current, columns):
                current = _start(reports)
            current.fresh = False
            header = columns
            continue
        if header is not None and current is not None:
            row = _device_row(header, tokens)
            if row is None:
                skipped.append(lineno)
            else:
                current.rows.setdefault(row[0], {}).update(row[1])
            continue
        if _TIME_RE.search(stripped) and len(tokens) <= 4:
            current = _start(reports, stripped)
            continue
        skipped.append(lineno)
    _note_skipped(skipped, notes)
    return system, [r for r in reports if r.rows]


def _read_json_reports(text: str, origin: str) -> tuple[str, list[_Report]]:
    """Reports from ``iostat -x -o JSON`` (sysstat's JSON: sysstat.hosts[].statistics[].disk[])."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise MeasurementFileError([(origin, f"looks like iostat -o JSON output but is not valid JSON: {exc}")]) from None
    hosts = doc.get("sysstat", {}).get("hosts") if isinstance(doc, dict) and isinstance(doc.get("sysstat"), dict) else None
    if not isinstance(hosts, list) or not hosts or not all(isinstance(h, dict) for h in hosts):
        raise MeasurementFileError([(origin, "JSON without sysstat.hosts: not `iostat -o JSON` output")])
    host = hosts[0]
    system = " ".join(str(host.get(k, "")) for k in ("sysname", "release", "nodename", "date")).strip()
    reports: list[_Report] = []
    statistics = host.get("statistics")
    for stat in statistics if isinstance(statistics, list) else []:
        if not isinstance(stat, dict) or not isinstance(stat.get("disk"), list):
            continue
        timestamp = stat.get("timestamp")
        report = _Report(timestamp=timestamp if isinstance(timestamp, str) else None, fresh=False)
        for disk in stat["disk"]:
            if not isinstance(disk, dict) or not isinstance(disk.get("disk_device"), str):
                continue
            row: dict[str, float] = {}
            for key, value in disk.items():
                if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
                    row["%util" if key == "util" else key] = float(value)
            report.rows[disk["disk_device"]] = row
        reports.append(report)
    return system, [r for r in reports if r.rows]


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


def _is_partition(name: str, others: Sequence[str]) -> bool:
    return any(name != o and re.fullmatch(re.escape(o) + r"p?\d+", name) for o in others)


def choose_devices(names: Sequence[str], patterns: Sequence[str] | None, notes: list[str]) -> list[str]:
    """The devices to sum: those matching ``patterns`` (shell globs), or by default every disk that is
    neither in NOT_STORAGE nor a partition of another listed device."""
    if patterns:
        chosen = [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
        for p in patterns:
            if not any(fnmatch.fnmatchcase(n, p) for n in names):
                raise MeasurementFileError([("--device", f"{p!r} matches no device; the file has {', '.join(names)}")])
    else:
        chosen = [n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in NOT_STORAGE) and not _is_partition(n, names)]
        left_out = [n for n in names if n not in chosen]
        if left_out:
            notes.append(f"left out {', '.join(left_out)} (loop/RAM/optical devices and partitions; name them with --device to include)")
        if not chosen:
            raise MeasurementFileError([("--device", f"every device in the file is left out by default ({', '.join(names)}); "
                                                     "choose some with --device")])
    stacked = [n for n in chosen if any(fnmatch.fnmatchcase(n, p) for p in STACKED)]
    if stacked and len(stacked) < len(chosen):
        notes.append(f"{', '.join(stacked)} sit on other block devices that are also summed: I/O may be counted twice "
                     "(choose one layer with --device)")
    return chosen


def _intervals(raw: list[_Report], chosen: list[str], notes: list[str]) -> list[Interval]:
    """One interval per report holding a chosen device (devices without the rate columns left out, with a note)."""
    intervals: list[Interval] = []
    incomplete: set[str] = set()
    for i, r in enumerate(raw):
        stats = []
        for name in chosen:
            if name not in r.rows:
                continue
            s = _device_stats(name, r.rows[name])
            if s is None:
                incomplete.add(name)
                continue
            stats.append(s)
        if stats:
            intervals.append(Interval(index=i, timestamp=r.timestamp, devices=tuple(stats)))
    if incomplete:
        notes.append(f"{', '.join(sorted(incomplete))}: lines without r/s, w/s, rkB/s and wkB/s left out")
    return intervals


def parse_iostat(data: bytes | str, origin: str = "iostat output", devices: Sequence[str] | None = None,
                 keep_first: bool = False) -> IostatReport:
    """Parse ``iostat -x`` text; raises MeasurementFileError only.

    ``devices``: shell globs of devices to sum (default: all disks, see ``choose_devices``);
    ``keep_first``: keep the first report, which iostat averages since boot unless run with ``-y``.
    """
    text = decode_text(data, origin)
    notes: list[str] = []
    try:
        if text.lstrip().startswith("{"):
            system, raw = _read_json_reports(text, origin)
        else:
            system, raw = _read_reports(text, origin, notes)
        if not raw:
            raise MeasurementFileError([(origin, "no device lines: expected `iostat -x` output with a Device header "
                                                 "and one line per device")])
        names: list[str] = []
        for r in raw:
            names.extend(n for n in r.rows if n not in names)
        chosen = choose_devices(names, devices, notes)
        intervals = _intervals(raw, chosen, notes)
        if not intervals:
            raise MeasurementFileError([(origin, "no device line has the r/s, w/s, rkB/s (or rMB/s) and wkB/s columns of "
                                                 "`iostat -x`")])
        skip_first = len(intervals) > 1 and not keep_first
        if skip_first:
            notes.append("first report skipped: iostat's first report averages since boot (keep it with --keep-first "
                         "if iostat ran with -y)")
        report = IostatReport(origin=origin, system=system, intervals=intervals, devices=chosen, all_devices=names,
                              skipped_first=skip_first, notes=tuple(notes))
        if report.peak_iops.iops <= 0:
            raise MeasurementFileError([(origin, f"no reads or writes in any interval on {', '.join(chosen)}")])
        if any(d.discards_per_s for i in report.candidates for d in i.devices):
            notes.append("discards (d/s) are not modelled and are left out of the rates")
        return IostatReport(origin=origin, system=system, intervals=intervals, devices=chosen, all_devices=names,
                            skipped_first=skip_first, notes=tuple(notes))
    except MeasurementFileError:
        raise
    except (KeyError, TypeError, ValueError, ArithmeticError, IndexError) as exc:  # a shape no check above foresaw
        raise MeasurementFileError([(origin, f"unexpected content in the iostat file: {type(exc).__name__}: {exc}")]) from None


__all__ = ["DeviceStats", "Interval", "IostatReport", "choose_devices", "parse_iostat", "parse_value"]
