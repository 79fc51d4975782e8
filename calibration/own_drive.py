"""A drive from a user's fio results: the die-level device model's own parameters, each from the record it came from.

``derive`` reads fio results (``calibration.importers.fio``: a queue-depth sweep, or a few points) and
fills a catalog drive (models/hardware.py ``FlashDeviceSpec``) with the figures the die layout is built
from (``sim.route.flash.die_layout``, rules in ``DieLayout``), taken from measurements instead of a
datasheet:

* ``read_latency_us``: the mean latency of the 4 KiB random-read point at queue depth 1 (one job, iodepth 1).
  The die read time tR is this less the 4 KiB host transfer and the controller's fixed cost, as for a
  datasheet's QD1 latency.
* ``read_kiops``: from the deepest 4 KiB random-read point (depth Q, X IOPS): the die count N is the fewest
  dies with which the model's own closed loop of Q reads (``sim.analytic.dies.die_level_closed``: the
  controller's fixed cost and the transfer, then a uniformly random die held tR) completes X
  (``dies_reaching``). The datasheet rule of ``DieLayout`` (N = B (Q - 1) / (Q - B), B = X tR) is the same
  loop without the controller and transfer time, which it may leave out at a datasheet's rating depth but
  not at QD 4, where a fifth of each read is spent outside the dies. The catalog's figure is the IOPS
  those N dies give at the layout's rating depth R (``device_behaviour.rating_queue_depth``) by that rule,
  N R / (R - 1 + N) / tR, so that ``die_layout`` rebuilds the same N (rounded up to whole dies per channel,
  as for every drive) and its controller ceiling.
* ``write_latency_us``: the mean of the 4 KiB random-write point at depth 1; ``write_kiops``: the IOPS of
  the deepest 4 KiB random-write point above depth 1.
* ``read_bw_gbs`` / ``write_bw_gbs``: the best sequential read / write point's bytes per second.

No curve is drawn through the points: the model's mechanism (controller, addressed dies, write cache)
makes the predictions at every other depth. What the results do not give comes from ``--base`` (a catalog
drive of the same kind: link, capacity, bandwidth caps, namespaces), and without one, the drive's link is
PCIe Gen4 x4 (``DEFAULT_LINK``) and its bandwidth the link's payload rate, each marked an assumption.

``held_out_check`` predicts every point the derivation did not use with the drive alone (one drive, no
host stack, as the EXT system models a synthetic benchmark: calibration/ext/scenarios/ext_drive.yaml),
with the fast path and optionally the DES, next to what fio measured. ``write_override`` puts the drive
into a ``FLASHPLAN_CATALOG_DIR`` folder (models/catalog.py), where every command and the web app find it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from calibration.importers import MeasurementFileError, to_yaml, workload_data
from calibration.importers.fio import FioJob, parse_fio
from models.catalog import OVERRIDE_FILES, built_in_names, catalog_with_drive, parameter
from models.common import write_text_atomically
from models.hardware import PCIE_GBS_PER_LANE, FlashDeviceSpec
from models.loading import BadInput, display_path, format_validation_error, read_document
from models.workload import ClosedWorkload
from sim.analytic.dies import die_level_closed
from sim.route.flash import DieLayout, die_layout, host_transfer_us

FOUR_KIB = 4096
SEQUENTIAL_MIN_BYTES = 65536
"""A sequential point of at least this block size measures the drive's bandwidth."""
DEFAULT_LINK = (4, 4)
"""PCIe generation and lanes of a drive without ``--base`` (assumption: today's U.2 / M.2 NVMe drives)."""
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
METRICS = (("iops", "IOPS"), ("latency_mean_us", "mean us"), ("latency_p99_us", "p99 us"))


@dataclass(frozen=True)
class Point:
    """One fio job group as a measured point: its workload, depth and what fio measured."""

    origin: str
    job: str
    group: int
    workload: Any
    measured: dict[str, float]
    size_bytes: float

    @property
    def qd(self) -> int | None:
        """I/Os in flight (jobs x queue depth) of a closed workload; None for a rate-limited job."""
        wl = self.workload
        return wl.jobs * wl.queue_depth if isinstance(wl, ClosedWorkload) else None

    @property
    def label(self) -> str:
        depth = f"QD {self.qd}" if self.qd is not None else "rate-limited"
        return f"{self.origin} job '{self.job}' (group {self.group}), {depth}"

    def _is(self, read_fraction: float, access: str) -> bool:
        wl = self.workload
        return isinstance(wl, ClosedWorkload) and wl.read_fraction == read_fraction and wl.access == access

    @property
    def random_read_4k(self) -> bool:
        return self._is(1.0, "random") and round(self.size_bytes) == FOUR_KIB

    @property
    def random_write_4k(self) -> bool:
        return self._is(0.0, "random") and round(self.size_bytes) == FOUR_KIB

    @property
    def sequential_read(self) -> bool:
        return self._is(1.0, "sequential") and self.size_bytes >= SEQUENTIAL_MIN_BYTES

    @property
    def sequential_write(self) -> bool:
        return self._is(0.0, "sequential") and self.size_bytes >= SEQUENTIAL_MIN_BYTES


def _point(job: FioJob, origin: str) -> Point:
    ios = job.total_ios
    size = sum(d.io_bytes for d in job.directions.values()) / ios if ios else 0.0
    return Point(origin=origin, job=job.name, group=job.group, workload=job.workload, measured=dict(job.measured),
                 size_bytes=size)


def read_points(files: Sequence[tuple[str, bytes | str]]) -> list[Point]:
    """Every job group of every fio result (``(name, content)`` pairs, in order) as a Point; BadInput naming
    the file and field when one is not fio JSON."""
    if not files:
        raise BadInput([("RESULTS.json", "give at least one fio result file (fio --output-format=json)")])
    points: list[Point] = []
    for origin, data in files:
        result = parse_fio(data, origin)
        points.extend(_point(job, origin) for job in result.jobs)
    return points


@dataclass(frozen=True)
class Derived:
    """One catalog field of the derived drive, its value and where it came from."""

    field: str
    value: float | int
    unit: str
    source: str
    how: str


@dataclass(frozen=True)
class DriveFromFio:
    """A drive derived from fio results: its catalog entry, how each figure was derived, the die layout the
    model builds from it, and which points the derivation used and which it left for the check."""

    name: str
    spec: FlashDeviceSpec
    derived: list[Derived]
    layout: DieLayout
    used: list[Point]
    held_out: list[Point]
    notes: list[str] = field(default_factory=list)

    def entry(self) -> dict[str, Any]:
        """The catalog entry as plain data (drives.yaml)."""
        return self.spec.model_dump(mode="json", exclude_none=True, exclude_defaults=False)


def _deepest(points: Sequence[Point], kind: str, above_one: bool = False) -> Point | None:
    """The point of a kind at the greatest depth (ties: the most IOPS, then input order)."""
    best: Point | None = None
    for p in points:
        if not getattr(p, kind) or p.qd is None or (above_one and p.qd <= 1):
            continue
        if best is None or (p.qd, p.measured.get("iops", 0.0)) > (best.qd or 0, best.measured.get("iops", 0.0)):
            best = p
    return best


def _at_qd1(points: Sequence[Point], kind: str) -> Point | None:
    return next((p for p in points if getattr(p, kind) and p.qd == 1), None)


def _check_name(name: str) -> None:
    if not NAME_RE.match(name):
        raise BadInput([("--name", f"{name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")])
    for section in ("drives", "dimms"):
        if name in built_in_names(section):
            raise BadInput([("--name", f"{name!r} is a built-in catalog {section[:-1]}; choose another name (an override "
                                       "of that name would replace the built-in entry for every scenario)")])


class _Builder:
    """Collects the entry's fields with their citations."""

    def __init__(self, base: FlashDeviceSpec | None, base_name: str | None):
        self.base, self.base_name = base, base_name
        self.data: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.derived: list[Derived] = []
        self.used: list[Point] = []

    def set(self, name: str, value: float | int, unit: str, source: str, how: str, point: Point | None = None,
            cite: str | None = None) -> None:
        self.data[name] = value
        self.sources[name] = f"{source}: {cite or how}"
        self.derived.append(Derived(name, value, unit, source, how))
        if point is not None and point not in self.used:
            self.used.append(point)

    def from_base(self, name: str, unit: str, missing: str) -> None:
        """The field from ``--base``, or BadInput naming the field when there is no base."""
        if self.base is None:
            raise BadInput([(name, missing)])
        value = getattr(self.base, name)
        self.set(name, value, unit, f"--base {self.base_name}", "the catalog's figure",
                 cite=f"the catalog's figure ({self.base.sources.get(name, 'no source given')})")


def _measured(p: Point, metric: str) -> float:
    value = p.measured.get(metric)
    if value is None or value <= 0:
        raise BadInput([(f"{p.label}: {metric}", f"missing or not positive ({value!r}); fio measured no such figure")])
    return value


def _link(b: _Builder) -> tuple[int, int]:
    base = b.base
    gen: int
    lanes: int
    if base is not None and base.pcie_generation is not None and base.pcie_lanes is not None:
        gen, lanes = base.pcie_generation, base.pcie_lanes
        b.set("pcie_generation", gen, "", f"--base {b.base_name}", "the catalog's link")
        b.set("pcie_lanes", lanes, "", f"--base {b.base_name}", "the catalog's link")
    else:
        gen, lanes = DEFAULT_LINK
        b.set("pcie_generation", gen, "", "assumption", "fio does not report the link; no --base drive")
        b.set("pcie_lanes", lanes, "", "assumption", "fio does not report the link; no --base drive")
    return gen, lanes


def _read_side(b: _Builder, points: Sequence[Point], probe: FlashDeviceSpec) -> None:
    """read_latency_us from the QD1 4 KiB random read; read_kiops from the deepest one by the die rule."""
    qd1 = _at_qd1(points, "random_read_4k")
    if qd1 is None:
        raise BadInput([("read_latency_us", "no 4 KiB random-read point at queue depth 1 (rw=randread, bs=4k, iodepth=1, "
                                            "numjobs=1) among the results used: the die read time is derived from it")])
    latency = _measured(qd1, "latency_mean_us")
    b.set("read_latency_us", round(latency, 3), "us", qd1.label, "mean latency of 4 KiB random reads at QD 1", qd1)
    controller = float(parameter("device_behaviour.controller_fixed_us"))
    transfer = host_transfer_us(probe.model_copy(update={"read_latency_us": latency}))
    t_read = latency - transfer - controller
    if t_read <= 0:
        raise BadInput([(f"{qd1.label}: latency_mean_us", (
            f"{latency:.2f} us leaves no die read time (the die model takes {controller:g} us of controller and "
            f"{transfer:.2f} us of transfer): a storage-class-memory drive the die layout cannot represent"))])
    deep = _deepest(points, "random_read_4k", above_one=True)
    rating = int(parameter("device_behaviour.rating_queue_depth"))
    if deep is None:
        b.from_base("read_kiops", "K", (
            f"one 4 KiB random-read point ({qd1.label}) where two are needed: the die count comes from a second one at a "
            "deeper queue depth (its IOPS), or give --base DRIVE for a datasheet's read IOPS"))
        return
    assert deep.qd is not None
    iops = _measured(deep, "iops")
    dies = dies_reaching(iops, deep.qd, t_read, transfer, controller)
    if dies is None:
        raise BadInput([(f"{deep.label}: iops", (
            f"{iops:,.0f} IOPS at depth {deep.qd} is what the drive's QD 1 latency gives with no read ever waiting for "
            f"a die ({deep.qd / latency * 1e6:,.0f} IOPS): the point does not tell the die count; add a deeper one"))])
    busy = dies * rating / (rating - 1 + dies)
    kiops = busy / t_read * 1e3
    b.set("read_kiops", round(kiops, 3), "K", deep.label, (
        f"{iops:,.0f} IOPS at depth {deep.qd}: {dies} dies (the model's closed loop, tR {t_read:.2f} us); "
        f"their IOPS at the rating depth {rating} ({busy:.2f} dies busy)"), deep)


MAX_DIES = 4096


def dies_reaching(iops: float, qd: int, t_read: float, transfer: float, controller: float) -> int | None:
    """The fewest dies with which the die-level model's closed loop of ``qd`` 4 KiB reads (``sim.analytic.dies.
    die_level_closed``: controller delay and transfer, then a uniformly random die held tR) completes ``iops``;
    None when even ``MAX_DIES`` fall short (the point shows no die contention). The controller's command
    ceiling is left out here: it is what the dies give at the rating depth, derived from the count."""
    def model(n: int) -> float:
        layout = DieLayout(dies=n, channels=1, die_read_us=t_read, die_read_cv=float(parameter("device_behaviour.die_read_cv")),
                           transfer_us=transfer, controller_us=controller, controller_kiops=1e9)
        return die_level_closed(layout, qd).iops
    if model(MAX_DIES) < iops:
        return None
    low, high = 1, MAX_DIES
    while low < high:
        mid = (low + high) // 2
        if model(mid) >= iops:
            high = mid
        else:
            low = mid + 1
    return low


def _write_side(b: _Builder, points: Sequence[Point]) -> None:
    qd1 = _at_qd1(points, "random_write_4k")
    if qd1 is not None:
        b.set("write_latency_us", round(_measured(qd1, "latency_mean_us"), 3), "us", qd1.label,
              "mean latency of 4 KiB random writes at QD 1", qd1)
    else:
        b.from_base("write_latency_us", "us", "no 4 KiB random-write point at queue depth 1 (rw=randwrite, bs=4k, iodepth=1) "
                                              "among the results used, and no --base drive to take it from")
    deep = _deepest(points, "random_write_4k", above_one=True)
    if deep is not None:
        b.set("write_kiops", round(_measured(deep, "iops") / 1e3, 3), "K", deep.label, "IOPS of 4 KiB random writes", deep)
    else:
        one = " (the QD 1 point measures the latency, not the drive's write IOPS)" if qd1 is not None else ""
        b.from_base("write_kiops", "K", f"no 4 KiB random-write point above queue depth 1 among the results used{one}, and no "
                                        "--base drive to take the write IOPS from")


def _bandwidth(b: _Builder, points: Sequence[Point], kind: str, name: str, link_gbs: float) -> None:
    best = max((p for p in points if getattr(p, kind)), key=lambda p: p.measured.get("mbps", 0.0), default=None)
    if best is not None and best.measured.get("mbps", 0.0) > 0:
        b.set(name, round(best.measured["mbps"] / 1e3, 4), "GB/s", best.label, "measured bytes per second", best)
    elif b.base is not None:
        b.from_base(name, "GB/s", "")
    else:
        b.set(name, round(link_gbs, 4), "GB/s", "assumption", "no sequential point and no --base: the link's payload rate")


def derive(points: Sequence[Point], name: str, base: FlashDeviceSpec | None = None, base_name: str | None = None,
           capacity_tb: float | None = None, derive_up_to_qd: int | None = None) -> DriveFromFio:
    """The drive of ``points`` (module docstring). Only points at a depth of at most ``derive_up_to_qd`` (all when
    None) take part; every other point is held out for ``held_out_check``. BadInput names the field and value."""
    _check_name(name)
    if derive_up_to_qd is not None and derive_up_to_qd < 1:
        raise BadInput([("--derive-up-to-qd", f"must be at least 1, got {derive_up_to_qd}")])
    pool = [p for p in points if derive_up_to_qd is None or (p.qd is not None and p.qd <= derive_up_to_qd)]
    b = _Builder(base, base_name)
    gen, lanes = _link(b)
    probe_data = (base.model_dump() if base is not None else
                  {"description": name, "capacity_tb": 1.0, "read_bw_gbs": 1.0, "write_bw_gbs": 1.0, "read_kiops": 1.0,
                   "write_kiops": 1.0, "read_latency_us": 1.0, "write_latency_us": 1.0})
    probe = FlashDeviceSpec.model_validate({**probe_data, "pcie_generation": gen, "pcie_lanes": lanes, "interface": "nvme_pcie"})
    _read_side(b, pool, probe)
    _write_side(b, pool)
    link_gbs = PCIE_GBS_PER_LANE[gen] * lanes
    _bandwidth(b, pool, "sequential_read", "read_bw_gbs", link_gbs)
    _bandwidth(b, pool, "sequential_write", "write_bw_gbs", link_gbs)
    if capacity_tb is not None:
        if not (math.isfinite(capacity_tb) and capacity_tb > 0):
            raise BadInput([("--capacity-tb", f"must be a positive number of TB, got {capacity_tb}")])
        b.set("capacity_tb", capacity_tb, "TB", "--capacity-tb", "given by the user")
    else:
        b.from_base("capacity_tb", "TB", "fio results do not give the drive's capacity: give --capacity-tb TB or --base DRIVE")
    return _finish(b, name, points)


def _finish(b: _Builder, name: str, points: Sequence[Point]) -> DriveFromFio:
    base = b.base
    data: dict[str, Any] = {}
    if base is not None:
        data = base.model_dump(mode="json", exclude_none=True)
        data.pop("price", None)  # the base drive's price is not this drive's
    files = sorted({p.origin for p in b.used})
    data.update(b.data)
    data["description"] = f"{name}: derived by flashplan drive from-fio from {', '.join(files)}"
    data["interface"] = "nvme_pcie"
    data["vendor"] = ""
    data["sources"] = {**(base.sources if base is not None else {}), **b.sources}
    for dropped in ("price", "description", "vendor"):
        data["sources"].pop(dropped, None)
    try:
        spec = FlashDeviceSpec.model_validate(data)
    except ValidationError as exc:
        raise BadInput(format_validation_error(exc, name)) from None
    layout = die_layout(spec)
    notes = []
    if spec.write_kiops > spec.read_kiops:
        notes.append(f"write_kiops {spec.write_kiops:g} K is above read_kiops {spec.read_kiops:g} K: the die model's controller "
                     "ceiling is the read IOPS (sim/route/flash.py die_layout), so writes above it are clipped")
    held = [p for p in points if p not in b.used]
    return DriveFromFio(name=name, spec=spec, derived=b.derived, layout=layout, used=list(b.used), held_out=held, notes=notes)


# ------------------------------------------------------------------------------------------------ the check


@dataclass(frozen=True)
class Check:
    """One held-out point: measured against the drive's predictions (None where a figure is missing)."""

    point: Point
    metric: str
    measured: float
    fast: float | None
    des: float | None = None

    @staticmethod
    def _error(predicted: float | None, measured: float) -> float | None:
        if predicted is None or measured == 0:
            return None
        return (predicted - measured) / measured

    @property
    def fast_error(self) -> float | None:
        return self._error(self.fast, self.measured)

    @property
    def des_error(self) -> float | None:
        return self._error(self.des, self.measured)


def scenario_data(name: str, point: Point) -> dict[str, Any]:
    """One drive alone, no host stack (the EXT system's synthetic-benchmark scenario), with the point's workload,
    under the die-level device model the derivation is for."""
    return {
        "name": f"{name}: {point.label}",
        "topology": {"kind": "direct_nvme", "host": {"stack": "none"}, "drive": name, "drives": 1, "adapter": "EJ1Y",
                     "adapters": 1, "layout": "jbod"},
        "workload": workload_data(point.workload),
        "device_model": "dies",
        "run": {"seed": 1},
    }


def _des_figures(data: dict[str, Any], max_ios: int) -> dict[str, float]:
    from models.scenario import scenario_from_data
    from sim.des.engine import simulate

    run = {"seed": 1, "max_ios": max_ios, "warmup_ios": min(5_000, max_ios // 5), "target_rel_ci": 1e-4, "max_wall_s": 3_600.0}
    res = simulate(scenario_from_data({**data, "run": run}))
    out = {}
    for metric, _ in METRICS:
        value = getattr(res, metric, None)
        if value is not None and math.isfinite(value.value):
            out[metric] = float(value.value)
    return out


def held_out_check(drive: DriveFromFio, des_max_ios: int | None = None) -> list[Check]:
    """Predict every held-out point with the drive (fast path; with ``des_max_ios`` also a DES run of that many I/Os)."""
    from models.scenario import scenario_from_data
    from sim.analytic import evaluate

    checks: list[Check] = []
    with catalog_with_drive(drive.name, drive.spec):
        for point in drive.held_out:
            data = scenario_data(drive.name, point)
            try:
                fr = evaluate(scenario_from_data(data))
                des = _des_figures(data, des_max_ios) if des_max_ios else {}
            except (BadInput, ValidationError) as exc:
                problems = exc.problems if isinstance(exc, BadInput) else format_validation_error(exc)
                note = f"{point.label}: not predicted: " + "; ".join(f"{f}: {m}" for f, m in problems)
                if note not in drive.notes:
                    drive.notes.append(note)
                continue
            fast = {"iops": fr.iops, "latency_mean_us": fr.latency_mean_us, "latency_p99_us": fr.latency_p99_us}
            for metric, _ in METRICS:
                if metric in point.measured:
                    checks.append(Check(point, metric, point.measured[metric], fast.get(metric), des.get(metric)))
    return checks


# ------------------------------------------------------------------------------------------------ the override file


def _override_folder(directory: Path) -> Path:
    where = "--out"
    if not directory.is_dir():
        raise BadInput([(where, f"{display_path(directory)} is not a folder; create it or give FLASHPLAN_CATALOG_DIR's folder")])
    strangers = sorted(n for n in os.listdir(directory) if not n.startswith(".") and n not in OVERRIDE_FILES)
    if strangers:
        raise BadInput([(where, f"{display_path(directory)} holds {', '.join(strangers)}: a FLASHPLAN_CATALOG_DIR folder may hold "
                                f"only {', '.join(OVERRIDE_FILES)}")])
    return directory / "drives.yaml"


def override_text(drive: DriveFromFio, existing: dict[str, Any] | None = None) -> str:
    """drives.yaml with the drive added to (or replacing its namesake in) ``existing``."""
    entries = {**(existing or {}), drive.name: drive.entry()}
    header = ("Drives of a FLASHPLAN_CATALOG_DIR folder (models/catalog.py). Entries written by `flashplan drive from-fio` "
              "cite in `sources` the fio record each figure came from.")
    return to_yaml(entries, header=header)


def write_override(drive: DriveFromFio, directory: str | os.PathLike[str]) -> Path:
    """Add the drive to ``directory``/drives.yaml (a FLASHPLAN_CATALOG_DIR folder), written in one step."""
    path = _override_folder(Path(directory))
    existing = read_document(path) if path.exists() else {}
    text = override_text(drive, existing)
    write_text_atomically(path, text)
    from models.catalog import _load

    _load.cache_clear()  # this process (the web app) reads the folder again on its next lookup
    return path


__all__ = [
    "Check",
    "Derived",
    "DriveFromFio",
    "MeasurementFileError",
    "Point",
    "derive",
    "held_out_check",
    "override_text",
    "read_points",
    "scenario_data",
    "write_override",
]
