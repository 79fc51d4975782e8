"""Sweeps: one base scenario run over a grid (or a zip) of factor values, with replications.

A sweep file (YAML, TOML or JSON) names a base scenario (a file, relative to the sweep
file, or an inline mapping), overrides applied to every point (``set``), and factors:
dotted paths, each with a list of values or a range::

    base: ../s4_zvm_edev_aliases.yaml
    set: {run.max_ios: 200000}
    factors:
      topology.aliases: {start: 0, stop: 11}          # 0, 1, ..., 11 (stop included)
      workload.read_fraction: [0.0, 1.0]
    mode: grid                                        # every combination; "zip": i-th with i-th
    replications: 2                                   # independent runs of each point

``run_sweep(spec, out=...)`` runs every point (each replication of each combination) and
returns a pandas DataFrame with one row per run: the factors, every metric with its 95%
CI (``iops``, ``iops_ci95_lo``, ``iops_ci95_hi``, ...), the seed, the stop reason, the
bottleneck, and ``status``/``error`` for a point that failed (an invalid combination or an
engine error is recorded; it does not stop the sweep).

Seeds: each run's ``run.seed`` comes from ``numpy.random.SeedSequence(root, spawn_key=...)``,
where the root is the sweep's ``seed`` (default: the base scenario's) and the spawn key is
a hash of the point's factor values plus its replication number. A run's seed therefore
depends on what the point is, not on where it sits in the sweep or which machine runs it:
local processes and a Dask cluster give bit-identical rows, and extending a factor's list
keeps the seeds (and, with ``resume``, the results) of the points already run. With
``common_random_numbers: true`` every point's replication r shares one seed, so
differences between configurations are not blurred by different random streams.

Results are journalled: each finished run is appended (and fsynced) as one JSON line to
``<out>.partial.jsonl``; the output file (Parquet or CSV) is written atomically at the end
and the journal removed. ``resume=True`` reuses every run found in the journal or in an
existing output file whose scenario (seed included) is unchanged, so a sweep killed mid-way
loses nothing and recomputes nothing. Runs whose stop depends on wall time
(``run.max_wall_s``) are the one exception to bit-identical results.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import multiprocessing
import os
import socket
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as futures_as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import ConfigDict, Discriminator, Field, Tag, ValidationError, model_validator

from models.common import StrictModel, dumps_json, field_problem
from models.loading import BadInput, check_tree
from models.result import METRIC_KEYS
from models.scenario import (
    Scenario,
    ScenarioFileError,
    apply_overrides,
    format_validation_error,
    read_scenario_data,
)
from sim.plan.parent_watch import worker_start

if TYPE_CHECKING:
    import pandas as pd
    from distributed import Client

MAX_RUNS = 100_000
OUTPUT_SUFFIXES = (".parquet", ".csv")
JOURNAL_SUFFIX = ".partial.jsonl"
SCHEDULER_CONNECT_S = 5.0
SCHEDULER_WORKER_WAIT_S = 15.0
RESERVED_FACTORS = {"run.seed": "set by the sweep from its root `seed` (numpy SeedSequence); use `replications` for repeated runs"}
UNKNOWN_FIELD_MESSAGE = "unknown field"
INT_COLUMNS = ("point", "replication", "seed", "simulated_ios", "measured_ios", "batches")
FLOAT_COLUMNS = (*(c for k in METRIC_KEYS for c in (k, f"{k}_ci95_lo", f"{k}_ci95_hi")),
                 "bottleneck_utilization", "simulated_seconds", "wall_seconds")
TEXT_COLUMNS = ("status", "error", "validity", "validity_note", "stop_reason", "bottleneck", "scenario_digest")
"""``validity`` is the Result's: precise, cut_short or unstable (an unstable point's latency means nothing)."""


class SweepInputError(BadInput):
    """A sweep that cannot start: (field path, message) pairs, one per problem (a ``models.loading.BadInput``)."""


class SweepAborted(RuntimeError):
    """The sweep stopped part-way (a worker process or the cluster went away); the journal keeps what finished."""


class FactorRange(StrictModel):
    """Values from ``start`` to ``stop`` (both included): by ``step`` (default 1), ``num`` evenly spaced, or ``ratio`` (1, 2, 4, ...).

    Integer start, stop and step (or ratio) give integers, so ``{start: 0, stop: 11}`` are alias counts.
    """

    start: int | float
    stop: int | float
    step: int | float | None = None
    num: int | None = Field(default=None, ge=1, le=MAX_RUNS)
    ratio: int | float | None = Field(default=None, gt=1, description="geometric progression: each value times ratio")

    @model_validator(mode="after")
    def _one_progression(self) -> FactorRange:
        given = [k for k in ("step", "num", "ratio") if getattr(self, k) is not None]
        if len(given) > 1:
            raise field_problem(given[1], f"give one of step, num or ratio, got {' and '.join(given)}")
        if self.step is not None:
            if self.step == 0:
                raise field_problem("step", "must not be 0")
            if (self.stop - self.start) * self.step < 0:
                raise field_problem("step", f"goes away from stop: start {self.start}, stop {self.stop}, step {self.step}")
            if abs(self.stop - self.start) / abs(self.step) >= MAX_RUNS:
                raise field_problem("step", f"gives more than {MAX_RUNS:,} values")
        elif self.ratio is not None:
            if self.start <= 0 or self.stop < self.start:
                raise field_problem("ratio", f"needs 0 < start <= stop, got start {self.start}, stop {self.stop}")
        elif self.stop < self.start:
            raise field_problem("stop", f"is below start {self.start}; give a negative step to count down")
        elif self.num is None and self.stop - self.start >= MAX_RUNS:
            raise field_problem("stop", f"gives more than {MAX_RUNS:,} values")
        return self

    def values(self) -> list[int | float]:
        start, stop = self.start, self.stop
        if self.num is not None:
            if self.num == 1:
                return [start]
            spaced = [_tidy(v) for v in np.linspace(start, stop, self.num).tolist()]
            if isinstance(start, int) and isinstance(stop, int) and all(float(v).is_integer() for v in spaced):
                return [int(v) for v in spaced]
            return spaced
        if self.ratio is not None:
            out: list[int | float] = []
            v: int | float = start
            while v <= stop * (1 + 1e-12) and len(out) < MAX_RUNS:
                out.append(_tidy(v))
                v = v * self.ratio
            return out
        step = self.step if self.step is not None else 1
        count = math.floor((stop - start) / step + 1e-9) + 1
        if all(isinstance(x, int) for x in (start, stop, step)):
            return [start + i * step for i in range(count)]
        return [_tidy(start + i * step) for i in range(count)]


def _tidy(v: int | float) -> int | float:
    """Round away float noise (0.30000000000000004 -> 0.3) without touching real digits."""
    return v if isinstance(v, int) else float(f"{v:.12g}")


def _factor_kind(value: Any) -> str:
    return "range" if isinstance(value, dict | FactorRange) else "list"


FactorValues = Annotated[
    Annotated[list[Any], Tag("list")] | Annotated[FactorRange, Tag("range")],
    Discriminator(_factor_kind),
]


class SweepSpec(StrictModel):
    """A sweep: a base scenario, fixed overrides, factors, how to combine them, replications and the root seed."""

    model_config = ConfigDict(populate_by_name=True)

    name: str = ""
    description: str = ""
    base: str | dict[str, Any] = Field(description="base scenario: a file (relative to the sweep file) or an inline scenario")
    overrides: dict[str, Any] = Field(default_factory=dict, alias="set", description="dotted-path overrides applied to every point")
    factors: dict[str, FactorValues] = Field(default_factory=dict, description="dotted path -> list of values or a range")
    mode: Literal["grid", "zip"] = Field(default="grid", description="grid: every combination; zip: the i-th values together")
    replications: int = Field(default=1, ge=1, le=10_000, description="independent runs (seeds) of every point")
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, description="root of the per-run seeds; default: the base scenario's run.seed")
    common_random_numbers: bool = Field(default=False, description="every point's replication r gets the same seed")

    def factor_values(self) -> dict[str, list[Any]]:
        return {path: v.values() if isinstance(v, FactorRange) else list(v) for path, v in self.factors.items()}


@dataclass
class PlannedRun:
    """One run of the sweep: a point (one value per factor), one replication, its seed and scenario data."""

    point: int
    replication: int
    factors: dict[str, Any]
    seed: int
    scenario: dict[str, Any]
    digest: str
    invalid: str = ""

    def identity(self, factor_columns: dict[str, Callable[[Any], Any]]) -> dict[str, Any]:
        row: dict[str, Any] = {"point": self.point, "replication": self.replication}
        for path, as_column in factor_columns.items():
            row[path] = as_column(self.factors[path])
        row.update(seed=self.seed, scenario_digest=self.digest)
        return row


@dataclass
class SweepPlan:
    """Every run of a sweep, in order (point by point, replications together)."""

    spec: SweepSpec
    runs: list[PlannedRun]
    factor_columns: dict[str, Callable[[Any], Any]] = field(default_factory=dict)

    @property
    def points(self) -> int:
        return len({r.point for r in self.runs})


# --- reading and checking ------------------------------------------------------------------


def load_sweep(path: str | Path, overrides: dict[str, Any] | None = None) -> SweepSpec:
    """Read a sweep file; a relative ``base`` path is taken relative to the sweep file.

    ``overrides`` (dotted path -> value, like ``--set``) are added to the sweep's ``set``.
    Raises SweepInputError naming every problem.
    """
    try:
        data = read_scenario_data(path)
    except ScenarioFileError as exc:
        raise SweepInputError(exc.problems) from None
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise SweepInputError(spec_problems(exc)) from None
    if isinstance(spec.base, str) and not Path(spec.base).is_absolute():
        spec.base = str(Path(path).parent / spec.base)
    if overrides:
        spec.overrides = {**spec.overrides, **overrides}
    return spec


def spec_problems(exc: ValidationError) -> list[tuple[str, str]]:
    """(field, message) pairs for a SweepSpec validation error, without pydantic's union-branch tags."""
    problems: list[tuple[str, str]] = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if len(loc) > 2 and loc[0] == "factors" and loc[2] in ("list", "range"):
            del loc[2]
        message = err["msg"].removeprefix("Value error, ")
        ctx = err.get("ctx") or {}
        if err["type"] == "field_problem":
            loc.append(str(ctx["field"]))
            message = str(ctx["problem"])
        elif err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "list_type" and loc[:1] == ["factors"]:
            message = "expected a list of values or a range {start, stop, step | num | ratio}"
        if "input" in err and err["type"] not in ("field_problem", "missing", "extra_forbidden") and not isinstance(err["input"], dict | list):
            message = f"{message}, got {err['input']!r}"
        problems.append((".".join(loc) or "(sweep)", message))
    return problems


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(data: Any) -> str:
    return hashlib.sha256(_canonical(data).encode()).hexdigest()[:20]


def run_seed(root: int, factors: dict[str, Any], replication: int, common_random_numbers: bool = False) -> int:
    """The ``run.seed`` of one run: SeedSequence(root) spawned by (hash of the factor values, replication).

    The hash keys the seed to what the point is, not to its position in the sweep. The result
    is a 63-bit integer (``run.seed`` allows up to 2**63 - 1); the engine builds its own
    SeedSequence from it.
    """
    if common_random_numbers:
        key: tuple[int, ...] = (replication,)
    else:
        words = hashlib.sha256(_canonical(factors).encode()).digest()[:16]
        key = (*(int.from_bytes(words[i:i + 4], "little") for i in range(0, 16, 4)), replication)
    state = np.random.SeedSequence(root, spawn_key=key).generate_state(1, np.uint64)
    return int(state[0]) >> 1


def _base_data(spec: SweepSpec) -> dict[str, Any]:
    if isinstance(spec.base, dict):
        return spec.base
    try:
        return read_scenario_data(spec.base)
    except ScenarioFileError as exc:
        raise SweepInputError([("base", f"{f}: {m}") for f, m in exc.problems]) from None


def _column_converter(values: list[Any]) -> Callable[[Any], Any]:
    """How a factor's values are stored in a column: as they are if all are numbers, all text or all booleans, else as JSON text."""
    kinds = {"bool" if isinstance(v, bool) else "number" if isinstance(v, int | float) else "text" if isinstance(v, str) else "other"
             for v in values}
    if len(kinds) == 1 and kinds != {"other"}:
        return lambda v: v
    return lambda v: v if isinstance(v, str) else _canonical(v)


def _check_factors(spec: SweepSpec, values: dict[str, list[Any]]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    for path, vals in values.items():
        where = f"factors.{path}"
        parts = path.split(".")
        if not path or any(not p for p in parts):
            problems.append((where, "empty field name in the dotted path"))
        elif path in RESERVED_FACTORS:
            problems.append((where, RESERVED_FACTORS[path]))
        elif parts[0] not in Scenario.model_fields:
            problems.append((where, f"unknown dotted path: a scenario has {', '.join(Scenario.model_fields)}"))
        if not vals:
            problems.append((where, "needs at least one value"))
            continue
        seen: set[str] = set()
        for v in vals:
            text = _canonical(v)
            if text in seen:
                problems.append((where, f"value {v!r} is listed twice; use `replications` for repeated runs"))
                break
            seen.add(text)
    for path in spec.overrides:
        if path in spec.factors:
            problems.append((f"set.{path}", "is also a factor; keep it in one place"))
    if spec.mode == "zip" and values:
        lengths = {p: len(v) for p, v in values.items()}
        if len(set(lengths.values())) > 1:
            problems.append(("factors", "mode zip needs lists of equal length, got " + ", ".join(f"{p}: {n}" for p, n in lengths.items())))
    return problems


def grid_points(spec: SweepSpec, values: dict[str, list[Any]]) -> int:
    """How many points the factors give, counted without building them: the product of the factors' value
    counts (grid) or their common length (zip)."""
    counts = [len(v) for v in values.values()]
    if spec.mode == "zip":
        return min(counts, default=1)
    return math.prod(counts)


def _check_size(spec: SweepSpec, values: dict[str, list[Any]]) -> None:
    """Refuse a sweep of more than ``MAX_RUNS`` runs before any point is built (SweepInputError saying how many)."""
    points = grid_points(spec, values)
    runs = points * spec.replications
    if runs > MAX_RUNS:
        sizes = " x ".join(f"{len(v):,}" for v in values.values()) if spec.mode == "grid" and len(values) > 1 else ""
        raise SweepInputError([("factors", f"{points:,} points{f' ({sizes} values)' if sizes else ''} x {spec.replications:,} "
                                f"replication(s) = {runs:,} runs; allowed: <= {MAX_RUNS:,} runs (the analytic fast path is "
                                "the tool for ranking that many)")])


def _combinations(spec: SweepSpec, values: dict[str, list[Any]]) -> list[dict[str, Any]]:
    paths = list(values)
    rows = itertools.product(*values.values()) if spec.mode == "grid" else zip(*values.values(), strict=True)
    return [dict(zip(paths, row, strict=True)) for row in rows]


def _unknown_paths(spec: SweepSpec, errors_by_point: list[list[tuple[str, str]]]) -> list[tuple[str, str]]:
    """Factor (or ``set``) paths that the scenario model rejects as unknown fields at every point."""
    problems: list[tuple[str, str]] = []
    for prefix, paths in (("factors", list(spec.factors)), ("set", list(spec.overrides))):
        for path in paths:
            def names_path(field_path: str, message: str, path: str = path) -> bool:
                return message.startswith(UNKNOWN_FIELD_MESSAGE) and (path == field_path or path.startswith(field_path + "."))
            if errors_by_point and all(any(names_path(f, m) for f, m in errs) for errs in errors_by_point):
                culprit = next(f for f, m in errors_by_point[0] if names_path(f, m))
                problems.append((f"{prefix}.{path}", f"unknown dotted path: the scenario has no field {culprit!r} "
                                 "(check the spelling and the topology/workload kind; `flashplan schema` lists the fields)"))
    return problems


def _validated_base(spec: SweepSpec) -> tuple[dict[str, Any], Scenario]:
    """The sweep's base scenario with its overrides, as data and validated; SweepInputError when it is invalid on its own
    (a problem of the base scenario itself names ``base``, one of an override ``set``)."""
    data = _base_data(spec)
    try:
        check_tree(data)
    except ScenarioFileError as exc:
        raise SweepInputError([("base" if f == "(document)" else f"base.{f}", m) for f, m in exc.problems]) from None
    try:
        base = apply_overrides(data, spec.overrides)
        return base, Scenario.model_validate(base)
    except ScenarioFileError as exc:
        raise SweepInputError([(f"set.{f}", m) for f, m in exc.problems]) from None
    except ValidationError as exc:
        problems = format_validation_error(exc)
        raise SweepInputError(_unknown_paths(spec, [problems]) or [(f"base.{f}", m) for f, m in problems]) from None


def plan_sweep(spec: SweepSpec) -> SweepPlan:
    """Expand a sweep into its runs, each validated; raises SweepInputError for mistakes in the sweep itself.

    Mistakes in the sweep (an unknown dotted path, an empty factor, unequal zip lists, a base
    scenario that is invalid on its own) stop it before anything runs. A combination that is
    merely invalid (raid10 over 3 drives) becomes a run with status "invalid".
    """
    values = spec.factor_values()
    problems = _check_factors(spec, values)
    if problems:
        raise SweepInputError(problems)
    _check_size(spec, values)
    base, base_scenario = _validated_base(spec)
    combinations = _combinations(spec, values)
    root = spec.seed if spec.seed is not None else base_scenario.run.seed
    runs: list[PlannedRun] = []
    errors_by_point: list[list[tuple[str, str]]] = []
    path_problems: list[tuple[str, str]] = []
    for point, combo in enumerate(combinations):
        point_errors: list[tuple[str, str]] = []
        for replication in range(spec.replications):
            seed = run_seed(root, combo, replication, spec.common_random_numbers)
            try:
                data = apply_overrides(base, {**combo, "run.seed": seed})
            except ScenarioFileError as exc:
                path_problems.extend((f"factors.{f}", m) for f, m in exc.problems)
                break
            try:
                scenario = Scenario.model_validate(data).model_dump(mode="json", exclude_none=True)
                runs.append(PlannedRun(point, replication, combo, seed, scenario, _digest(scenario)))
            except ValidationError as exc:
                point_errors = format_validation_error(exc)
                message = "; ".join(f"{f}: {m}" for f, m in point_errors)
                runs.append(PlannedRun(point, replication, combo, seed, data, _digest(data), invalid=message))
        if point_errors:
            errors_by_point.append(point_errors)
    if path_problems:
        raise SweepInputError(list(dict.fromkeys(path_problems)))
    if len(errors_by_point) == len(combinations):
        unknown = _unknown_paths(spec, errors_by_point)
        if unknown:
            raise SweepInputError(unknown)
    return SweepPlan(spec, runs, {p: _column_converter(v) for p, v in values.items()})


# --- one run -------------------------------------------------------------------------------


def run_point(scenario_data: dict[str, Any]) -> dict[str, Any]:
    """Simulate one run's scenario; the outcome columns of its row (status "error" if the engine raised).

    This is what a local worker process or a Dask worker executes: it takes plain data and
    returns plain data, so it pickles by reference to ``sim.plan.sweep.run_point``.
    """
    from sim.plan.capacity_check import simulate_checked

    try:
        result = simulate_checked(Scenario.model_validate(scenario_data))
    except Exception as exc:
        return {"status": "error", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
    row: dict[str, Any] = {"status": "ok", "error": None}
    for key in METRIC_KEYS:
        metric = getattr(result, key)
        row[key] = metric.value
        row[f"{key}_ci95_lo"], row[f"{key}_ci95_hi"] = metric.ci95
    row.update(
        bottleneck=result.bottleneck,
        bottleneck_utilization=result.utilization.get(result.bottleneck),
        validity=result.validity,
        validity_note=result.validity_note,
        stop_reason=result.stop_reason,
        simulated_ios=result.simulated_ios,
        measured_ios=result.measured_ios,
        batches=result.batches,
        simulated_seconds=result.simulated_seconds,
        wall_seconds=result.wall_seconds,
    )
    return row


# --- the journal and the output file ---------------------------------------------------------


def journal_path(out: str | Path) -> Path:
    """Where the rows of a sweep writing ``out`` are journalled while it runs."""
    out = Path(out)
    return out.with_name(out.name + JOURNAL_SUFFIX)


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The complete rows in a journal; a line cut short by a kill is skipped."""
    rows: list[dict[str, Any]] = []
    if not path.exists():
        return rows
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "scenario_digest" in row:
                rows.append(row)
    return rows


class Journal:
    """Append-only JSON lines (strict: NaN is written as null and read back as a missing number),
    one per finished run, flushed and fsynced as each run completes."""

    def __init__(self, path: Path, keep: Sequence[dict[str, Any]]):
        self.path = path
        _write_atomically(path, lambda tmp: tmp.write_text("".join(dumps_json(r, indent=None) + "\n" for r in keep),
                                                            encoding="utf-8"))
        self._fh = path.open("a", encoding="utf-8")

    def append(self, row: dict[str, Any]) -> None:
        self._fh.write(dumps_json(row, indent=None) + "\n")  # strict JSON: an unknown number is null
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def _write_atomically(path: Path, write: Callable[[Path], Any]) -> None:
    """Write ``path`` through a temp file beside it (``.NAME.PID.tmp``): fsynced, renamed over ``path``, the directory
    fsynced. A kill or a crash leaves the old file or the whole new one, never part of one; and once this returns the
    new file is on disk, so deleting the journal after it cannot lose the only copy of the runs.

    A process killed mid-write leaves its temp file behind (its ``finally`` never runs): the next write of
    ``path`` removes those whose process is gone."""
    _remove_stale_temps(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
        if os.name == "posix":  # a directory cannot be opened for fsync on Windows
            _fsync(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale_temps(path: Path) -> None:
    """Remove the temp files of earlier writes of ``path`` whose process is gone (POSIX: a pid is checked with signal 0)."""
    if os.name != "posix":
        return
    prefix, suffix = f".{path.name}.", ".tmp"
    for tmp in path.parent.iterdir():
        pid = tmp.name[len(prefix):-len(suffix)] if tmp.name.startswith(prefix) and tmp.name.endswith(suffix) else ""
        if pid.isdigit() and int(pid) != os.getpid() and not _process_exists(int(pid)):
            tmp.unlink(missing_ok=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def write_frame(frame: pd.DataFrame, out: str | Path) -> None:
    """Write the results as Parquet or CSV (by suffix), atomically: a temp file renamed over ``out``."""
    out = Path(out)
    if out.suffix.lower() == ".parquet":
        _write_atomically(out, lambda tmp: frame.to_parquet(tmp, index=False))
    else:
        _write_atomically(out, lambda tmp: frame.to_csv(tmp, index=False))


def _read_output(out: Path) -> list[dict[str, Any]]:
    import pandas as pd

    try:
        frame = pd.read_parquet(out) if out.suffix.lower() == ".parquet" else pd.read_csv(out)
    except Exception:
        return []
    if "scenario_digest" not in frame.columns:
        return []
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return [{str(k): v for k, v in row.items()} for row in rows]


def results_frame(plan: SweepPlan, rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The sweep's DataFrame: one row per run in plan order, typed columns (nullable integers, floats)."""
    import pandas as pd

    by_digest = {r["scenario_digest"]: r for r in rows}
    factors = list(plan.factor_columns)
    columns = ["point", "replication", *factors, "seed", "status", "error",
               *(c for k in METRIC_KEYS for c in (k, f"{k}_ci95_lo", f"{k}_ci95_hi")),
               "bottleneck", "bottleneck_utilization", "validity", "validity_note", "stop_reason", "simulated_ios", "measured_ios", "batches",
               "simulated_seconds", "wall_seconds", "scenario_digest"]
    records = []
    for run in plan.runs:
        row = by_digest.get(run.digest)
        if row is not None:
            records.append({**row, **run.identity(plan.factor_columns)})
    frame = pd.DataFrame.from_records(records, columns=columns)
    for col in INT_COLUMNS:
        frame[col] = frame[col].astype("Int64")
    for col in FLOAT_COLUMNS:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    for col in TEXT_COLUMNS:
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    frame.attrs["sweep"] = plan.spec.name
    return frame


# --- executors -------------------------------------------------------------------------------


def _local_runs(pending: list[PlannedRun], workers: int) -> Generator[tuple[PlannedRun, dict[str, Any]], None, None]:
    """Run in this process (one worker) or in a pool of spawned processes, yielding as each run finishes.

    If the sweep stops early (Ctrl-C, SIGTERM, an error) the queued runs are cancelled and the
    workers ended; if this process is killed outright, they exit too, even if they are still starting
    (sim/plan/parent_watch.py).
    """
    if workers <= 1:
        for run in pending:
            yield run, run_point(run.scenario)
        return
    initializer, initargs = worker_start(os.getpid())
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=initializer, initargs=initargs)
    futures = {pool.submit(run_point, run.scenario): run for run in pending}
    finished = False
    try:
        for fut in futures_as_completed(futures):
            try:
                outcome = fut.result()
            except BrokenProcessPool:
                raise SweepAborted("a local worker process died (out of memory?)") from None
            yield futures[fut], outcome
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            _stop_now(pool)


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and end the worker processes mid-run (the sweep is stopping; their runs are lost anyway).

    ``shutdown`` alone would let each worker finish the runs already handed to it, and the
    interpreter waits for that at exit. Python 3.14 has ``terminate_workers``; before it, the
    pool's process table is the only handle on the workers.
    """
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes.values():
        proc.terminate()
    for proc in processes.values():
        proc.join(timeout=5)


def _ask_identity(address: str, timeout_s: float) -> Any:
    """The scheduler's answer to Dask's ``identity`` call, within ``timeout_s`` (raises otherwise).

    Bounded by hand because a service that accepts the connection but is no Dask scheduler
    (a dashboard or web port) would otherwise keep the client waiting forever. Runs its own
    event loop in a helper thread, so it also works under a notebook's running loop.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect

    async def ask() -> Any:
        comm = await connect(address, timeout=timeout_s)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> Any:
        return await asyncio.wait_for(ask(), timeout_s)

    with ThreadPoolExecutor(1) as helper:
        return helper.submit(asyncio.run, bounded()).result()


def connect_scheduler(address: str, wait_for_workers_s: float = SCHEDULER_WORKER_WAIT_S) -> Client:
    """A Dask client on ``tcp://HOST:PORT`` with at least one worker; SweepInputError if there is none to reach."""
    from distributed import Client

    where = "--scheduler"
    scheme, _, location = address.partition("://")
    host, _, port = location.rpartition(":")
    if scheme not in ("tcp", "tls") or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SweepInputError([(where, f"expected tcp://HOST:PORT, got {address!r}")])
    try:  # a refused or unresolvable address fails here at once, not after the client's retries
        socket.create_connection((host.strip("[]"), int(port)), timeout=SCHEDULER_CONNECT_S).close()
    except OSError as exc:
        raise SweepInputError([(where, f"cannot reach a Dask scheduler at {address} ({exc.strerror or type(exc).__name__})")]) from None
    try:
        identity = _ask_identity(address, SCHEDULER_CONNECT_S)
    except TimeoutError:
        raise SweepInputError([(where, f"nothing at {address} answered as a Dask scheduler within {SCHEDULER_CONNECT_S:g} s "
                                "(a dashboard or another service's port?)")]) from None
    except Exception as exc:
        raise SweepInputError([(where, f"the service at {address} does not speak the Dask protocol ({type(exc).__name__})")]) from None
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        raise SweepInputError([(where, f"{address} is a Dask {kind or 'service'}, not a scheduler")])
    client = Client(address, timeout=f"{SCHEDULER_CONNECT_S}s", set_as_default=False)
    try:
        client.wait_for_workers(1, timeout=wait_for_workers_s)
    except Exception:
        client.close()
        raise SweepInputError([(where, f"the Dask scheduler at {address} has no workers (waited {wait_for_workers_s:g} s)")]) from None
    return client


def _dask_runs(pending: list[PlannedRun], client: Client) -> Generator[tuple[PlannedRun, dict[str, Any]], None, None]:
    """Submit every run to the cluster, yielding as each finishes; a worker lost for good (KilledWorker) is a failed run."""
    from distributed import as_completed

    tag = os.urandom(4).hex()
    futures = {client.submit(run_point, run.scenario, key=f"flashplan-run-{run.digest}-{tag}", pure=False): run for run in pending}
    try:
        for fut in as_completed(list(futures), loop=client.loop):
            run = futures[fut]
            if fut.status == "finished":
                yield run, fut.result()
            elif fut.status == "error":
                exc = fut.exception()
                yield run, {"status": "error", "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"}
            else:
                raise SweepAborted(f"the Dask cluster dropped a run ({fut.status}); is the scheduler still up?")
    finally:
        client.cancel(list(futures))


# --- the sweep -------------------------------------------------------------------------------


@contextmanager
def _progress_bar(enabled: bool, title: str, total: int, done: int) -> Iterator[Callable[[bool], None]]:
    if not enabled:
        yield lambda failed: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
               TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        failures = 0
        task = bar.add_task(title, total=total, completed=done, failed="")

        def advance(failed: bool) -> None:
            nonlocal failures
            failures += failed
            bar.update(task, advance=1, failed=f"[red]{failures} failed[/]" if failures else "")

        yield advance


def _check_run_options(out: Path | None, scheduler: str | None, workers: int | None, resume: bool) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if out is not None:
        if out.suffix.lower() not in OUTPUT_SUFFIXES:
            problems.append(("--out", f"unknown format {out.suffix!r}; use .parquet or .csv"))
        if not out.parent.is_dir():
            problems.append(("--out", f"no such directory: {out.parent}"))
        elif out.is_dir():
            problems.append(("--out", f"{out} is a directory"))
    if resume and out is None:
        problems.append(("--resume", "needs --out: the journal and the results live next to the output file"))
    if workers is not None and not 1 <= workers <= 1024:
        problems.append(("--workers", f"must be 1..1024, got {workers}"))
    if workers is not None and scheduler:
        problems.append(("--workers", "applies to local processes; with --scheduler the cluster's workers run the points"))
    return problems


def default_workers() -> int:
    """Local worker processes: the CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _known_rows(plan: SweepPlan, resumed: Path | None) -> dict[str, dict[str, Any]]:
    """The rows a sweep has before it runs anything, by scenario digest: those already written or journalled
    at ``resumed`` (a resumed sweep) and one per invalid point."""
    wanted = {r.digest for r in plan.runs}
    done: dict[str, dict[str, Any]] = {}
    if resumed is not None:
        for row in [*_read_output(resumed), *read_journal(journal_path(resumed))]:
            if row.get("scenario_digest") in wanted:
                done[row["scenario_digest"]] = row
    for run in plan.runs:
        if run.invalid and run.digest not in done:
            done[run.digest] = {**run.identity(plan.factor_columns), "status": "invalid", "error": run.invalid}
    return done


def run_sweep(spec: SweepSpec | str | Path, out: str | Path | None = None, scheduler: str | None = None,
              workers: int | None = None, resume: bool = False, progress: bool = True) -> pd.DataFrame:
    """Run every point of a sweep and return one DataFrame row per run.

    ``spec`` is a SweepSpec or a sweep file. Runs go to ``workers`` local processes (default:
    one per core; 1 runs in this process) or, with ``scheduler="tcp://HOST:PORT"``, to a Dask
    cluster. With ``out`` (.parquet or .csv) each finished run is journalled as it completes
    and the file is written at the end; ``resume`` reuses the runs already journalled or
    written. ``frame.attrs`` says how many runs were ``ran`` now and ``reused``.
    Raises SweepInputError before writing anything if the sweep or the options are wrong,
    SweepAborted if the workers go away part-way (the journal keeps every finished run).
    """
    out_path = Path(out) if out is not None else None
    problems = _check_run_options(out_path, scheduler, workers, resume)
    if problems:
        raise SweepInputError(problems)
    if not isinstance(spec, SweepSpec):
        spec = load_sweep(spec)
    plan = plan_sweep(spec)

    done = _known_rows(plan, out_path if resume else None)
    pending = [r for r in plan.runs if r.digest not in done]

    client = connect_scheduler(scheduler) if scheduler else None
    journal = Journal(journal_path(out_path), list(done.values())) if out_path is not None else None
    reused = sum(1 for r in plan.runs if r.digest in done and not r.invalid)
    title = spec.name or (Path(spec.base).stem if isinstance(spec.base, str) else "sweep")
    started = time.perf_counter()
    try:
        with _progress_bar(progress, title, len(plan.runs), len(plan.runs) - len(pending)) as advance:
            runs = _dask_runs(pending, client) if client is not None else _local_runs(pending, min(workers or default_workers(), len(pending)))
            with closing(runs):
                for run, outcome in runs:
                    row = {**run.identity(plan.factor_columns), **outcome}
                    done[run.digest] = row
                    if journal is not None:
                        journal.append(row)
                    advance(outcome["status"] != "ok")
    except SweepAborted as exc:
        if journal is not None:
            raise SweepAborted(f"{exc}; the finished runs are journalled in {journal.path}: rerun with --resume") from None
        raise
    finally:
        if journal is not None:
            journal.close()
        if client is not None:
            client.close()
    frame = results_frame(plan, done.values())
    frame.attrs.update(ran=len(pending), reused=reused, wall_seconds=time.perf_counter() - started)
    if out_path is not None:
        write_frame(frame, out_path)
        journal_path(out_path).unlink(missing_ok=True)
    return frame


def sweep_frame(base: Scenario, factors: dict[str, Any], mode: Literal["grid", "zip"] = "grid", replications: int = 1,
                workers: int = 1, *, seed: int | None = None, common_random_numbers: bool = False,
                progress: bool = False) -> pd.DataFrame:
    """Sweep a Scenario built in code (web app, notebooks): factors map dotted paths to value lists or ranges.

    >>> frame = sweep_frame(scenario, {"topology.namespaces.per_drive": [1, 2, 4, 8]})   # doctest: +SKIP
    """
    try:
        spec = SweepSpec.model_validate({
            "base": base.model_dump(mode="json", exclude_none=True), "factors": factors, "mode": mode,
            "replications": replications, "seed": seed, "common_random_numbers": common_random_numbers,
        })
    except ValidationError as exc:
        raise SweepInputError(spec_problems(exc)) from None
    return run_sweep(spec, workers=workers, progress=progress)
