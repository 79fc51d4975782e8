"""Load over time, the data half: the peak interval of a replayed profile, and reading a profile
from a CSV of per-interval IOPS, MB/s and read % (the per-interval results, ``IntervalResult`` and
``PeakInterval``, live in ``models.result`` with the Result that holds them).

The workload itself is ``models.workload.ProfileWorkload``; the DES replays it (``sim.des.profile``)
and the fast path takes each interval as a steady state (``sim.plan.profile_fast``).
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from pydantic import ValidationError

from models.loading import MAX_DOCUMENT_BYTES, BadInput, decode, format_validation_error
from models.result import INTERVAL_METRICS as INTERVAL_METRICS  # re-exported
from models.result import IntervalResult, PeakInterval
from models.workload import ProfileWorkload


def peak_interval(intervals: list[IntervalResult]) -> PeakInterval:
    """The worst-p99 interval among those that measured one, else the one with the most arrivals per second."""
    def load(iv: IntervalResult) -> float:
        return iv.offered_iops if iv.offered_iops is not None else iv.arrived_ios / iv.duration_s

    busiest = max(intervals, key=lambda iv: (load(iv), -iv.index))
    measured = [iv for iv in intervals if math.isfinite(iv.metrics["latency_p99_us"].value) and iv.arrived_ios]
    if not measured:
        return PeakInterval(index=busiest.index, worst_p99_index=None, highest_load_index=busiest.index,
                            reason=f"highest offered load ({load(busiest):,.0f} IOPS); no interval measured a p99")
    worst = max(measured, key=lambda iv: (iv.metrics["latency_p99_us"].value, -iv.index))
    p99 = worst.metrics["latency_p99_us"].value
    if worst.index == busiest.index:
        reason = f"worst p99 ({p99:,.0f} us) and highest offered load ({load(busiest):,.0f} IOPS)"
    else:
        reason = (f"worst p99 ({p99:,.0f} us, {load(worst):,.0f} IOPS offered); the highest offered load is interval "
                  f"{busiest.index} ({load(busiest):,.0f} IOPS)")
    if worst.saturated:
        reason += f"; {worst.busiest} saturated ({worst.busiest_utilization:.0%} busy)"
    return PeakInterval(index=worst.index, reason=reason, worst_p99_index=worst.index, highest_load_index=busiest.index)


# -- CSV ------------------------------------------------------------------------------------------

CSV_COLUMNS = {"iops": "I/Os per second", "mbps": "MB/s (10^6 bytes)", "read_pct": "read % (0-100)"}
"""Required columns of a profile CSV; ``duration_s`` (else ``interval_s`` for every row) and ``label`` are optional."""
MIN_CSV_KIB = 0.5


def _row_interval(row: dict[str, str], where: str, interval_s: float | None) -> dict[str, Any]:
    """One CSV row as raw interval data; BadInput naming the row and column."""
    values: dict[str, float] = {}
    for column in (*CSV_COLUMNS, "duration_s"):
        text = (row.get(column) or "").strip()
        if column == "duration_s" and not text:
            if interval_s is None:
                raise BadInput([(f"{where}.duration_s", "empty: give a duration_s column or --interval-s")])
            values[column] = interval_s
            continue
        try:
            values[column] = float(text)
        except ValueError:
            raise BadInput([(f"{where}.{column}", f"not a number, got {text!r}")]) from None
        if not math.isfinite(values[column]) or values[column] < 0:
            raise BadInput([(f"{where}.{column}", f"must be a finite number >= 0, got {text!r}")])
    if values["read_pct"] > 100:
        raise BadInput([(f"{where}.read_pct", f"a percentage must be 0 .. 100, got {values['read_pct']:g}")])
    iops, mbps = values["iops"], values["mbps"]
    kib = max(MIN_CSV_KIB, mbps * 1e6 / iops / 1024) if iops > 0 else 4.0
    out: dict[str, Any] = {"duration_s": values["duration_s"], "rate_iops": iops, "read_fraction": values["read_pct"] / 100,
                           "block_size_kib": round(kib, 3)}
    if row.get("label"):
        out["label"] = row["label"].strip()[:200]
    return out


def profile_from_csv(data: bytes | str, origin: str = "profile.csv", interval_s: float | None = None,
                     access: str = "random") -> ProfileWorkload:
    """A profile from CSV text with a header row: ``iops``, ``mbps``, ``read_pct`` and optionally
    ``duration_s`` and ``label`` per interval. The block size of a row is its MB/s / IOPS (one size
    for reads and writes: the CSV does not tell them apart). Read through ``models.loading`` (UTF-8, at
    most 1 MB); every problem is a BadInput naming ``origin``, the row (1 = first data row) and the column."""
    if interval_s is not None and not 0 < interval_s <= 31_622_400:
        raise BadInput([("--interval-s", f"must be > 0 and <= 31,622,400 s, got {interval_s:g}")])
    if len(data) > MAX_DOCUMENT_BYTES:
        raise BadInput([(origin, f"file is larger than {MAX_DOCUMENT_BYTES:,} bytes")])
    text = decode(data, origin)
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or []]
    missing = [c for c in CSV_COLUMNS if c not in header]
    if missing:
        raise BadInput([(origin, f"missing column(s) {', '.join(missing)}; the header must name "
                                 + ", ".join(f"{k} ({v})" for k, v in CSV_COLUMNS.items()) + ", optionally duration_s and label")])
    intervals = []
    for n, raw in enumerate(reader, 1):
        row = {str(k).strip(): v for k, v in raw.items() if k is not None and isinstance(v, str)}
        intervals.append(_row_interval(row, f"{origin}: row {n}", interval_s))
    if not intervals:
        raise BadInput([(origin, "no data rows after the header")])
    try:
        return ProfileWorkload.model_validate({"kind": "profile", "access": access, "intervals": intervals})
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc, origin)) from None
