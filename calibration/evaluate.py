"""Run calibration records through the simulator and compare with the measurements.

Every distinct scenario is simulated once, in worker processes when ``workers > 1``, and every
record reads its metric from those results. Distinct means the loaded scenario, not the way a
record spells it: two references (file + overrides) that load to the same scenario (an override
equal to the file's value, a fitted ``@fit:`` value) share one run (``scenario_identity``). A
ratio's 95% interval combines the two relative half-widths (independent runs).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from calibration.records import SCENARIO_DIR, Record, ScenarioRef
from models.result import METRIC_KEYS, Result
from models.scenario import Scenario, read_scenario_data, scenario_from_data

_T = TypeVar("_T")

# Run budgets: the full set aims at +-2% intervals, the quick (CI) subset at +-4%. Runs stop on
# precision or on an I/O count, never on the clock, so a record's value is the same on any machine
# and load; the wall time is only a safety net that fails the record (``_simulate``).
SAFETY_WALL_S = 300.0
FULL_RUN = {"run.target_rel_ci": 0.02, "run.max_ios": 3_000_000, "run.max_wall_s": SAFETY_WALL_S}
QUICK_RUN = {"run.target_rel_ci": 0.04, "run.max_ios": 1_000_000, "run.max_wall_s": SAFETY_WALL_S}
SCREEN_RUN = {"run.min_batches": 8}
"""The first pass of a screened evaluation (``evaluate(screen=...)``): the run's own precision target, warm-up and
batch sizes, with 8 batches at least instead of the default 20 before the precision rule may stop it (the t
quantile of 7 degrees of freedom widens the interval for the fewer batches). A record whose verdict this pass does
not settle (``verdict_settled``) has its scenarios run again at the full budget: its value is the full run's."""


@dataclass
class Outcome:
    """A record and what the model predicts for it."""

    record: Record
    predicted: float = math.nan
    ci95: tuple[float, float] = (math.nan, math.nan)
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    settled_by: str | None = None
    """A record of ``conflicts_with`` that holds, when this one does not (``settle_conflicts``)."""
    budget: str = "full"
    """Which pass gave the value: ``full`` (the run budget as given), ``screen`` (``SCREEN_RUN``, verdict settled) or
    ``screen+full`` (a ratio whose one scenario ran again for another record)."""

    @property
    def rel_error(self) -> float:
        m = self.record.measured
        return (self.predicted - m) / abs(m) if m else math.nan

    @property
    def within(self) -> bool:
        return self.error is None and math.isfinite(self.predicted) and self.record.holds(self.predicted)

    @property
    def status(self) -> str:
        return status_of(self.within, self.settled_by, self.record.known_gap is not None and self.error is None)

    def as_dict(self) -> dict[str, Any]:
        r = self.record
        tol: float | str | None
        if r.kind == "bound":
            tol = (">= " if r.at_least else "<= ") + f"{r.measured:g}"
        else:
            assert r.tolerance is not None
            tol = r.tolerance.rel if r.tolerance.rel is not None else r.tolerance.abs
        src = r.source
        return {
            "id": r.id,
            "system": r.system,
            "source": ", ".join(x for x in (src.seed, src.where, src.row, src.column) if x),
            "metric": r.metric,
            "unit": r.unit,
            "measured": r.measured,
            "predicted": None if not math.isfinite(self.predicted) else self.predicted,
            "ci95": None if not all(math.isfinite(c) for c in self.ci95) else list(self.ci95),
            "rel_error": None if not math.isfinite(self.rel_error) else self.rel_error,
            "tolerance": tol,
            "tolerance_kind": "bound" if r.kind == "bound" else ("rel" if r.tolerance and r.tolerance.rel else "abs"),
            "within": self.within,
            "status": self.status,
            "settled_by": self.settled_by,
            "kind": r.kind,
            "fit": r.fit,
            "conflict": r.conflict,
            "known_gap": None if r.known_gap is None else r.known_gap.model_dump(mode="json"),
            "error": self.error,
            "budget": self.budget,
        }


FIT_PREFIX = "@fit:"


def fitted_workload_value(name: str) -> float:
    """A fitted workload descriptor (``workloads/<name>`` in the fitted-parameter file).

    Workload properties no seed states (a job's own work between I/Os) are fitted like
    hardware parameters but belong to the calibration scenarios, not to the catalog.
    """
    from models.catalog import fitted_path, read_fitted

    path = fitted_path()
    values = read_fitted(path).get("values", {}) if path else {}
    key = f"workloads/{name}"
    if key not in values:
        from calibration.parameters import PARAMETERS

        for p in PARAMETERS:
            if p.path == key:
                return p.initial
        raise KeyError(f"no fitted workload value {name!r}")
    return float(values[key])


def _resolve(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FIT_PREFIX):
        return fitted_workload_value(value[len(FIT_PREFIX):])
    return value


def load_ref(ref: ScenarioRef, run: dict[str, Any] | None = None, base: Path = SCENARIO_DIR, *,
             data: dict[str, Any] | None = None, resolve: Callable[[Any], Any] = _resolve) -> Scenario:
    """The scenario a record names, with its overrides (``@fit:name`` values resolved) and the run budget applied.

    ``data``: the scenario file's raw data when already read (it is copied, never changed); ``resolve``:
    how an override value is resolved (``_load_all`` passes one that reads the fitted file once)."""
    if data is None:
        data = read_scenario_data(str(ref.path(base)))
    overrides = {**(run or {}), **{k: resolve(v) for k, v in ref.set.items()}}
    return scenario_from_data(data, overrides)


def scenario_identity(scenario: Scenario) -> str:
    """The scenario as canonical JSON (sorted keys): what one run of it depends on besides the catalog, which
    is the same for every scenario of one evaluation. Two references with the same identity share a run."""
    return json.dumps(scenario.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), allow_nan=False)


class WallSafetyNet(RuntimeError):
    """A calibration run reached its wall-time safety net: its value would depend on the machine."""


def _simulate(scenario: Scenario) -> Result:
    from sim.des.engine import simulate

    return _checked(simulate(scenario), scenario)


def _checked(result: Result, scenario: Scenario) -> Result:
    """``result``, unless the wall-time safety net stopped it."""
    from sim.des.engine import WALL_BUDGET_REASON

    # a wall budget of the safety net's size (FULL_RUN, QUICK_RUN, FIT_RUN) fails the record when it binds;
    # a tighter one given on purpose (the web app's interactive checks) keeps the value it reached
    if result.stop_reason.startswith(WALL_BUDGET_REASON) and scenario.run.max_wall_s >= SAFETY_WALL_S:
        raise WallSafetyNet(f"{result.stop_reason}: the record fails rather than take a value that depends on the clock")
    return result


def metric_of(result: Result, metric: str) -> tuple[float, tuple[float, float]]:
    """A metric's value and 95% interval from a Result.

    ``busy:<glob>`` / ``util:<glob>``: the largest busy (time with at least one I/O in
    service) / utilization among components whose name matches; ``cpu_cores``: host CPU
    cores kept busy (CPU us per I/O x IOPS).
    """
    if metric in METRIC_KEYS:
        m = getattr(result, metric)
        return m.value, (m.ci95[0], m.ci95[1])
    if metric.startswith(("busy:", "util:")):
        kind, pattern = metric.split(":", 1)
        table = result.busy if kind == "busy" else result.utilization
        hits = [v for k, v in table.items() if fnmatch.fnmatchcase(k, pattern)]
        if not hits:
            raise KeyError(f"no component matches {pattern!r}; components: {', '.join(sorted(table))}")
        v = 100.0 * max(hits)
        return v, (v, v)
    if metric == "device_iops":
        # I/Os the drives see: mirrored layouts write every logical write twice (IBM i counts
        # I/Os per disk unit, so both copies of a mirrored write count; seed 001).
        copies = 2 if getattr(result.scenario.topology, "layout", "") in ("raid1", "raid10", "ibmi_mirror") else 1
        r, w = result.read_iops, result.write_iops
        v = r.value + copies * w.value
        lo = r.ci95[0] + copies * w.ci95[0]
        hi = r.ci95[1] + copies * w.ci95[1]
        return v, (lo, hi)
    if metric == "cpu_cores":
        per, iops = result.cpu_us_per_io, result.iops
        v = per.value * iops.value / 1e6
        rel = math.hypot(_rel_half(per.value, per.ci95), _rel_half(iops.value, iops.ci95))
        return v, (v * (1 - rel), v * (1 + rel))
    if metric == "usd_per_kiops":
        from models.cost import capex

        cost = capex(result.scenario.topology).total_usd
        iops = result.iops
        v = cost / (iops.value / 1000.0)
        rel = _rel_half(iops.value, iops.ci95)
        return v, (v * (1 - rel), v * (1 + rel))
    if metric == "storage_usd_per_raw_tb_kiops":
        # seed 000 compares storage costs "with the same amount of raw storage capacity": dividing the
        # storage-only cost by each side's own raw TB makes the A/B ratio equal to pro-rating the storage
        # server to the direct side's capacity (models.cost.price_performance_between(equal_raw_capacity=True))
        from models.cost import capex, raw_capacity_tb

        topology = result.scenario.topology
        cost = capex(topology, storage_only=True).total_usd / raw_capacity_tb(topology)
        iops = result.iops
        v = cost / (iops.value / 1000.0)
        rel = _rel_half(iops.value, iops.ci95)
        return v, (v * (1 - rel), v * (1 + rel))
    raise KeyError(f"unknown metric {metric!r}")


def _rel_half(value: float, ci: Sequence[float]) -> float:
    if not value or not all(math.isfinite(c) for c in ci):
        return 0.0
    return (ci[1] - ci[0]) / 2.0 / abs(value)


def predict(record: Record, results: dict[str, Result]) -> Outcome:
    """The record's predicted value from already simulated scenarios."""
    try:
        if not record.pairs:
            assert record.scenario is not None
            v, ci = metric_of(results[record.scenario.key()], record.metric)
            return Outcome(record, v, ci)
        best: Outcome | None = None
        for pair in record.pairs:
            a, ca = metric_of(results[pair.scenario.key()], record.metric)
            b, cb = metric_of(results[pair.baseline.key()], record.metric)
            r = a / b
            rel = math.hypot(_rel_half(a, ca), _rel_half(b, cb))
            o = Outcome(record, r, (r * (1 - rel), r * (1 + rel)), details={"pair": pair.label, "scenario": a, "baseline": b})
            if best is None or r > best.predicted:
                best = o
        assert best is not None
        return best
    except Exception as exc:  # a record that cannot be predicted is reported, not fatal
        return Outcome(record, error=f"{type(exc).__name__}: {exc}")


@dataclass
class Schedule:
    """Which distinct scenario a worker takes first, and what each one cost.

    ``hints`` are CPU seconds per scenario key from an earlier run (latest.run.json): the pool takes the
    most expensive first (unknown ones before all), so the longest runs do not start last and leave one
    worker alone at the end. The order changes when a result arrives, never what it is: every run stops
    on precision or an I/O count. ``costs`` receives this run's CPU seconds per key.
    """

    hints: dict[str, float] = field(default_factory=dict)
    costs: dict[str, float] = field(default_factory=dict)
    timeline: list[tuple[int, str, str, float, float]] = field(default_factory=list)
    """A screened pool's runs as they went (``_screened_in_pool``): (worker, kind, key, start, end), wall seconds from
    the pool's start; kind ``screen``, ``extend`` (a held screen run carried on) or ``full`` (from the start)."""

    def order(self, keys: Iterable[str], same: dict[str, list[str]] | None = None) -> list[str]:
        """Keys longest first by the hints (unknown first), ties in the given order. ``same``: other keys of the
        same scenario (``scenario_identity``), whose hint stands for the key's when it has none."""
        def hint(k: str) -> float:
            known = [self.hints[x] for x in (k, *(same or {}).get(k, [])) if x in self.hints]
            return known[0] if known else math.inf

        return sorted(keys, key=lambda k: -hint(k))


def _timed(scenario: Scenario) -> tuple[Result, float]:
    """``_simulate`` and the CPU seconds it took (in the worker that ran it)."""
    c0 = time.process_time()
    result = _simulate(scenario)
    return result, time.process_time() - c0


def _load_all(refs: Iterable[ScenarioRef], run: dict[str, Any] | None, base: Path) -> dict[str, Scenario | Exception]:
    """Each distinct reference of ``refs``, loaded (or the error that stopped it), in first-seen order; every
    scenario file and fitted value is read once (the files do not change during one evaluation)."""
    unique: dict[str, ScenarioRef] = {}
    for ref in refs:
        unique.setdefault(ref.key(), ref)
    files: dict[Path, dict[str, Any] | Exception] = {}
    fitted: dict[str, Any] = {}

    def resolve(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(FIT_PREFIX):
            if value not in fitted:
                fitted[value] = _resolve(value)
            return fitted[value]
        return value

    scenarios: dict[str, Scenario | Exception] = {}
    for key, ref in unique.items():
        path = ref.path(base)
        try:
            if path not in files:
                try:
                    files[path] = read_scenario_data(str(path))
                except Exception as exc:
                    files[path] = exc
            data = files[path]
            if isinstance(data, Exception):
                raise data
            scenarios[key] = load_ref(ref, run, base, data=data, resolve=resolve)
        except Exception as exc:
            scenarios[key] = exc
    return scenarios


def _same_scenarios(scenarios: dict[str, Scenario | Exception]) -> dict[str, list[str]]:
    """The loaded references grouped by ``scenario_identity``: the first key of each group (first-seen order)
    and the keys that load to the same scenario after it."""
    groups: dict[str, list[str]] = {}
    for key, s in scenarios.items():
        if isinstance(s, Scenario):
            groups.setdefault(scenario_identity(s), []).append(key)
    return {keys[0]: keys[1:] for keys in groups.values()}


def simulate_refs(refs: Iterable[ScenarioRef], run: dict[str, Any] | None = None, workers: int = 1,
                  base: Path = SCENARIO_DIR, on_done: Callable[[str], None] | None = None,
                  schedule: Schedule | None = None) -> dict[str, Result | Exception]:
    """Simulate each distinct scenario once (``scenario_identity``); every reference's key gets its scenario's
    result, errors are returned, not raised. With ``workers > 1``, in that many processes, longest first by
    ``schedule``'s hints (its costs are filed under the first key of each scenario); the results do not depend
    on either."""
    schedule = schedule or Schedule()
    scenarios = _load_all(refs, run, base)
    same = _same_scenarios(scenarios)
    todo = {k: s for k, s in scenarios.items() if k in same and isinstance(s, Scenario)}
    out: dict[str, Result | Exception] = {k: s for k, s in scenarios.items() if isinstance(s, Exception)}
    workers = max(1, min(workers, len(todo)))
    if workers == 1:
        for k, s in todo.items():
            _keep(k, _call(_timed, s), out, schedule, on_done, same[k])
        return {k: out[k] for k in scenarios}
    import sim.des.engine  # noqa: F401  # once here, not in each worker: the forked workers inherit it
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(os.getpid(),))
    try:
        futures = {k: pool.submit(_timed, todo[k]) for k in schedule.order(todo, same)}
        for k, fut in futures.items():
            _keep(k, _call(fut.result), out, schedule, on_done, same[k])
    except BaseException:
        _abandon(pool)
        raise
    pool.shutdown()
    return {k: out[k] for k in scenarios}


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Ctrl-C: the queued runs are cancelled and the running ones ended, not waited for."""
    pool.shutdown(wait=False, cancel_futures=True)
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _call(fn: Callable[..., _T], *args: Any) -> _T | Exception:
    try:
        return fn(*args)
    except Exception as exc:
        return exc


def _keep(key: str, done: tuple[Result, float] | Exception, out: dict[str, Result | Exception], schedule: Schedule,
          on_done: Callable[[str], None] | None, same: Sequence[str] = ()) -> None:
    """File one scenario's result (or error) under its key and the keys of the ``same`` scenario, and its cost
    under its key; tell ``on_done`` of each key."""
    if isinstance(done, Exception):
        out[key] = done
    else:
        out[key], schedule.costs[key] = done
    for k in (key, *same):
        out[k] = out[key]
        if on_done:
            on_done(k)


WORKER_GC_THRESHOLD = 50_000
"""A calibration worker's youngest-generation garbage-collector threshold (CPython's default is 700): the event loop
allocates millions of short-lived objects, freed by reference counting; at the default the collector ran 228 times
over 30 S2 runs and took 0.13 of their 7.4 CPU-s (1.8%), at this threshold once (0.02 CPU-s). The runs' results do not
depend on when garbage is collected."""


def _worker_init(parent: int) -> None:
    """Worker initializer: Ctrl-C left to the parent and the worker ended with the parent's process, even a
    SIGKILLed one (``exit_with_parent``); what the parent loaded before the fork moved out of the collector's sight
    (``gc.freeze``: it lives as long as the worker) and the youngest generation collected less often
    (``WORKER_GC_THRESHOLD``)."""
    import gc

    from sim.plan.parent_watch import exit_with_parent

    exit_with_parent(parent)
    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


def status_of(within: bool, settled_by: str | None, known_gap: bool = False) -> str:
    """``within`` its tolerance, ``conflict`` (outside, but a contradicting source's record holds),
    ``known_gap`` (outside, declared with the hypotheses tried; a record that could not be predicted
    is never one) or ``outside``."""
    if within:
        return "within"
    if settled_by:
        return "conflict"
    return "known_gap" if known_gap else "outside"


def stale_known_gap(row: dict[str, Any]) -> bool:
    """A result row whose record is declared a known gap but is now within tolerance: remove the declaration."""
    return bool(row.get("within")) and bool(row.get("known_gap"))


def _settled_by(within: bool, conflicts_with: Sequence[str], held: set[str]) -> str | None:
    """The first contradicting record that holds, for a record outside its tolerance."""
    return None if within else next((x for x in conflicts_with if x in held), None)


def settle_conflicts(outcomes: Sequence[Outcome]) -> None:
    """Mark each record outside its tolerance whose contradicting record (``conflicts_with``) holds.

    Two sources that disagree on one quantity cannot both be met; the model is then judged on
    the one it meets, and the other is reported as settled by that conflict. A record whose
    contradicting records all miss too stays outside.
    """
    held = {o.record.id for o in outcomes if o.within}
    for o in outcomes:
        o.settled_by = _settled_by(o.within, o.record.conflicts_with, held)


def settle_rows(rows: Sequence[dict[str, Any]], records: Sequence[Record]) -> None:
    """``settle_conflicts`` for result rows (``Outcome.as_dict``) gathered from separate runs."""
    conflicts = {r.id: r.conflicts_with for r in records}
    gaps = {r.id for r in records if r.known_gap is not None}
    held = {row["id"] for row in rows if row["within"]}
    for row in rows:
        row["settled_by"] = _settled_by(row["within"], conflicts.get(row["id"], []), held)
        row["status"] = status_of(row["within"], row["settled_by"], row["id"] in gaps and not row.get("error"))


def with_conflict_partners(chosen: Sequence[Record], records: Sequence[Record]) -> list[Record]:
    """The chosen records plus the records they conflict with (a subset must carry both sides to settle a conflict)."""
    ids = {r.id for r in chosen} | {x for r in chosen for x in r.conflicts_with}
    return [r for r in records if r.id in ids]


def _run_rel_half(result: Result) -> float:
    """The larger relative 95% half-width of a run's IOPS and mean latency (what its stop rule bounds)."""
    return max(_rel_half(m.value, m.ci95) if m.value else math.inf for m in (result.iops, result.latency_mean_us))


def verdict_settled(record: Record, outcome: Outcome, results: dict[str, Result]) -> bool:
    """Whether the record's 95% interval lies wholly on one side of each edge of its tolerance band (within it,
    or outside it), or of its bound: a longer run of the same scenarios is then not expected to change whether
    the record holds. Not settled: a record that could not be predicted, an "up to" record (the largest of
    several ratios), and any interval that reaches across an edge. ``busy:`` / ``util:`` metrics carry no
    interval of their own: the run's relative half-width of IOPS and mean latency stands for theirs."""
    if outcome.error is not None or len(record.pairs) > 1:
        return False
    p, (lo, hi) = outcome.predicted, outcome.ci95
    if record.metric.startswith(("busy:", "util:")):
        rel = max(_run_rel_half(results[ref.key()]) for ref in record.scenarios())
        lo, hi = p - rel * abs(p), p + rel * abs(p)
    if not all(math.isfinite(x) for x in (p, lo, hi)):
        return False
    m = record.measured
    if record.kind == "bound":
        return (lo >= m or hi < m) if record.at_least else (hi <= m or lo > m)
    assert record.tolerance is not None
    width = record.tolerance.rel * abs(m) if record.tolerance.rel is not None else record.tolerance.abs
    assert width is not None
    return (m - width <= lo and hi <= m + width) or hi < m - width or lo > m + width


def _outcomes(records: Sequence[Record], raw: dict[str, Result | Exception]) -> list[Outcome]:
    """Every record's outcome from the simulated scenarios (a record whose scenario failed carries the error)."""
    results = {k: v for k, v in raw.items() if isinstance(v, Result)}
    outcomes = []
    for r in records:
        failed = [raw[ref.key()] for ref in r.scenarios() if isinstance(raw.get(ref.key()), Exception)]
        if failed:
            exc = failed[0]
            outcomes.append(Outcome(r, error=f"{type(exc).__name__}: {exc}"))
        else:
            outcomes.append(predict(r, results))
    return outcomes


FULL_COST_SUFFIX = " [full]"
"""A screened evaluation files a second-pass run's cost under its key plus this (``Schedule.costs``)."""


def evaluate(records: Sequence[Record], run: dict[str, Any] | None = None, workers: int | None = None,
             base: Path = SCENARIO_DIR, on_done: Callable[[str], None] | None = None,
             schedule: Schedule | None = None, screen: dict[str, Any] | None = None) -> list[Outcome]:
    """Simulate what the records need and compare every record with its measurement (``schedule``: see ``Schedule``).

    ``screen`` (e.g. ``SCREEN_RUN``): first run every scenario with these settings over ``run``; every record whose
    verdict that pass settles (``verdict_settled``) keeps the value; the scenarios of the others (and every other
    reference to the same scenario) run again with ``run`` alone, and the records that use them take those values.
    Both passes stop on precision or I/O counts: the outcome is the same on any machine and for any ``workers``."""
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    run = FULL_RUN if run is None else run
    refs = [ref for r in records for ref in r.scenarios()]
    if not screen:
        outcomes = _outcomes(records, simulate_refs(refs, run, workers, base, on_done, schedule))
        settle_conflicts(outcomes)
        return outcomes
    if workers > 1:
        outcomes = _screened_in_pool(records, run, screen, workers, base, on_done, schedule)
        settle_conflicts(outcomes)
        return outcomes
    raw = simulate_refs(refs, run | screen, workers, base, on_done, schedule)
    results = {k: v for k, v in raw.items() if isinstance(v, Result)}
    first = _outcomes(records, raw)
    again = {ref.key() for r, o in zip(records, first, strict=True) if not verdict_settled(r, o, results) for ref in r.scenarios()}
    # every reference to a scenario run again takes the full run (one scenario, one value)
    identity = {k: scenario_identity(v.scenario) for k, v in results.items()}
    rerun = {identity[k] for k in again if k in identity}
    again |= {k for k, i in identity.items() if i in rerun}
    if again:
        full = None if schedule is None else Schedule(hints={**schedule.hints, **{
            k.removesuffix(FULL_COST_SUFFIX): v for k, v in schedule.hints.items() if k.endswith(FULL_COST_SUFFIX)}})
        raw.update(simulate_refs([ref for ref in refs if ref.key() in again], run, workers, base, on_done, full))
        if schedule is not None and full is not None:
            schedule.costs.update({k + FULL_COST_SUFFIX: v for k, v in full.costs.items()})
    outcomes = _outcomes(records, raw)
    _label_budgets(outcomes, again)
    settle_conflicts(outcomes)
    return outcomes


def _label_budgets(outcomes: Sequence[Outcome], again: set[str]) -> None:
    """Which pass gave each outcome's value: ``screen``, ``full`` (every scenario run again) or ``screen+full``."""
    for o in outcomes:
        passes = {ref.key() in again for ref in o.record.scenarios()}
        o.budget = "screen+full" if len(passes) > 1 else ("full" if True in passes else "screen")


def _screened_in_pool(records: Sequence[Record], run: dict[str, Any], screen: dict[str, Any], workers: int, base: Path,
                      on_done: Callable[[str], None] | None, schedule: Schedule | None) -> list[Outcome]:
    """``evaluate(screen=...)`` in ``workers`` processes without a barrier between the passes: a record's verdict is
    decided as soon as its last screen run is in, and the full runs it needs are queued then, ahead of the screen runs
    still waiting (the longest first by the hints), so no worker idles while the other finishes the first pass.

    A screen run is the start of its full run (``sim.des.engine.ScreenedRun``): the worker keeps it, paused, and a full
    run it is asked for goes on from there (``_extend_job``) instead of from the start; the held run is let go when
    every record on its scenario is decided without it. Each process is a pool of one, so a full run goes to the
    worker that holds its start; a worker with nothing else to do runs a full run held by a busy one from the start.

    Every value is the one the two passes, run one after the other, give (a carried-on run is the full run, event for
    event), filed under the same keys: the outcomes are the ones ``workers=1`` gives; only the order of the runs and
    what a full run costs differ. The costs are filed as ``evaluate`` files them (a full run's under the first key, in
    the records' order, of the keys run again that share it, plus ``FULL_COST_SUFFIX``: a carried-on run's, the part
    after the screen)."""
    schedule = schedule or Schedule()
    passes = _Passes(records, run, screen, base, schedule, on_done)
    import sim.des.engine  # noqa: F401  # once here, not in each worker: the forked workers inherit it
    pools = [ProcessPoolExecutor(max_workers=1, initializer=_worker_init, initargs=(os.getpid(),))
             for _ in range(workers)]
    running: dict[Any, tuple[int, str, bool]] = {}
    started: dict[Any, tuple[str, float]] = {}
    t0 = time.perf_counter()
    try:
        while True:
            for w in range(workers):
                busy = {x for x, _, _ in running.values()}
                if w in busy or (job := passes.next_job(w, busy)) is None:
                    continue
                kind, head, held, scenario, full = job
                drop = passes.drops.pop(w, [])
                if kind == "screen":
                    fut = pools[w].submit(_screen_job, head, scenario, full, drop)
                elif kind == "extend":
                    fut = pools[w].submit(_extend_job, held, scenario, drop)
                else:
                    fut = pools[w].submit(_fresh_job, scenario, drop)
                running[fut] = (w, head, kind != "screen")
                started[fut] = (kind, time.perf_counter() - t0)
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                w, head, is_full = running.pop(fut)
                kind, start = started.pop(fut)
                schedule.timeline.append((w, kind, head, start, time.perf_counter() - t0))
                passes.take(head, is_full, _call(fut.result), w)
    except BaseException:
        for pool in pools:
            _abandon(pool)
        raise
    for pool in pools:
        pool.shutdown()
    return passes.outcomes()


_HELD: dict[str, Any] = {}
"""In a worker of ``_screened_in_pool``: its screen runs that may be carried on to the full budget
(``sim.des.engine.ScreenedRun``), by screen key."""


def _screen_job(key: str, screen: Scenario, full: Scenario | None,
                drop: Sequence[str]) -> tuple[Result, float] | tuple[Result, float, bool]:
    """In a worker: let the held runs ``drop`` go; run ``screen`` as the start of ``full`` and hold it under ``key``
    (the third item says it is held), or on its own (a profile workload; a screen ``full``'s rule would stop first)."""
    from sim.des.engine import ScreenedRun, screened_pair

    for k in drop:
        _HELD.pop(k, None)
    c0 = time.process_time()
    if full is None or not screened_pair(screen, full):
        return _simulate(screen), time.process_time() - c0
    try:
        held = ScreenedRun(screen, full)
        first = held.screen()
    except Exception:  # whatever failed, a run of the screen alone fails as it fails (or gives its Result), unheld
        return _simulate(screen), time.process_time() - c0
    # None: the full run's rule stopped it before the screen's was met (the run holds the full Result all the same)
    result = _simulate(screen) if first is None else _checked(first, screen)
    _HELD[key] = held
    return result, time.process_time() - c0, True


def _extend_job(key: str, full: Scenario, drop: Sequence[str]) -> tuple[Result, float]:
    """In a worker: the full run of the screen run held under ``key``, carried on from its pause (from the start if it
    is not held)."""
    for k in drop:
        _HELD.pop(k, None)
    c0 = time.process_time()
    held = _HELD.pop(key, None)
    try:
        carried = None if held is None else held.extend()
    except Exception:  # a run of the full scenario from the start fails as it fails
        carried = None
    result = _simulate(full) if carried is None else _checked(carried, full)
    return result, time.process_time() - c0


def _fresh_job(scenario: Scenario, drop: Sequence[str]) -> tuple[Result, float]:
    """In a worker: let the held runs ``drop`` go, then ``_timed``."""
    for k in drop:
        _HELD.pop(k, None)
    return _timed(scenario)


class _Passes:
    """The two passes of a screened evaluation as one queue of runs (``_screened_in_pool``)."""

    def __init__(self, records: Sequence[Record], run: dict[str, Any], screen: dict[str, Any], base: Path,
                 schedule: Schedule, on_done: Callable[[str], None] | None) -> None:
        self.records, self.schedule, self.on_done = records, schedule, on_done
        self.refs = [ref for r in records for ref in r.scenarios()]
        self.first = _load_all(self.refs, run | screen, base)
        self.full = _load_all(self.refs, run, base)  # loaded up front (milliseconds): a key run again runs this
        self.first_same, self.full_same = _same_scenarios(self.first), _same_scenarios(self.full)
        self.first_group = {k: [head, *rest] for head, rest in self.first_same.items() for k in (head, *rest)}
        self.full_head = {k: head for head, rest in self.full_same.items() for k in (head, *rest)}
        self.raw: dict[str, Result | Exception] = {k: s for k, s in self.first.items() if isinstance(s, Exception)}
        self.full_raw: dict[str, Result | Exception] = {}  # per full head
        self.full_costs: dict[str, float] = {}
        self.again: set[str] = set()
        self.queued_full: set[str] = set()
        self.waiting = {i: {ref.key() for ref in r.scenarios()} for i, r in enumerate(records)}
        self.users: dict[str, list[int]] = {}
        for i, keys in self.waiting.items():
            for k in keys:
                self.users.setdefault(k, []).append(i)
        # a screen run whose scenario ran again last time goes first: its full run is then known (and queued) early
        self.first_todo = sorted((k for k in self.first_same if isinstance(self.first[k], Scenario)),
                                 key=lambda k: -(self._own_hint(self.first_group[k]) + self._full_hint(self.first_group[k])))
        self.full_todo: list[str] = []
        self.holder: dict[str, tuple[int, str]] = {}
        """Per full head not started yet: (worker, screen head) of the paused screen run that carries on to it."""
        self.drops: dict[int, list[str]] = {}
        """Per worker: the screen heads of its held runs no full run will need (sent with its next job)."""
        self.started_full: set[str] = set()
        self.decided: set[int] = set()
        self.heads_of = {i: {self.first_group.get(k, [k])[0] for k in keys} for i, keys in self.waiting.items()}
        self.undecided: dict[str, int] = {}
        """Per screen head: the records on its scenario not decided yet (at 0 its held run is let go unless needed)."""
        for heads in self.heads_of.values():
            for h in heads:
                self.undecided[h] = self.undecided.get(h, 0) + 1
        for k in list(self.raw):
            self._arrived(k)
        for i in [i for i, keys in self.waiting.items() if not keys]:
            self._decide(i)

    def _own_hint(self, keys: Sequence[str]) -> float:
        """The hint of a screen run: the first key of its scenario that has one (unknown: infinite, first)."""
        return next((self.schedule.hints[k] for k in keys if k in self.schedule.hints), math.inf)

    def _full_hint(self, keys: Iterable[str]) -> float:
        return max((self.schedule.hints.get(k + FULL_COST_SUFFIX, 0.0) for k in keys), default=0.0)

    def next_job(self, worker: int, busy: set[int]) -> tuple[str, str, str, Scenario, Scenario | None] | None:
        """The next run for ``worker``: (kind, head, held key, scenario, full scenario of a screen run); None: none.

        A queued full run first (the longest first): one ``worker`` holds the start of (``extend``), or that no worker
        holds (``full``); else the next screen run (``screen``: carried on in its worker when its full run is needed);
        else a full run a ``busy`` worker holds the start of, run from the start here (``full``)."""
        pick = next((h for h in self.full_todo if self.holder.get(h, (worker,))[0] == worker), None)
        if pick is None and not self.first_todo:
            pick = next((h for h in self.full_todo if self.holder[h][0] in busy), None)
        if pick is not None:
            self.full_todo.remove(pick)
            self.started_full.add(pick)
            scenario = self.full[pick]
            assert isinstance(scenario, Scenario)
            owner = self.holder.pop(pick, None)
            if owner is not None and owner[0] == worker:
                return "extend", pick, owner[1], scenario, None
            if owner is not None:
                self.drops.setdefault(owner[0], []).append(owner[1])
            return "full", pick, "", scenario, None
        if not self.first_todo:
            return None
        head = self.first_todo.pop(0)
        scenario, full = self.first[head], self.full.get(head)
        assert isinstance(scenario, Scenario)
        return "screen", head, head, scenario, full if isinstance(full, Scenario) else None

    def take(self, head: str, is_full: bool, got: tuple[Result, float] | tuple[Result, float, bool] | Exception,
             worker: int = 0) -> None:
        """File a finished run; a screen run may complete records, whose verdicts may queue full runs. A screen run
        ``worker`` holds (a third item) is registered as the start of its full run, or let go when none can need it."""
        if not is_full:
            if not isinstance(got, Exception) and len(got) == 3:
                full_head = self.full_head.get(head)
                if full_head is not None and full_head not in self.started_full and full_head not in self.holder:
                    self.holder[full_head] = (worker, head)
                else:
                    self.drops.setdefault(worker, []).append(head)
            run: tuple[Result, float] | Exception = got if isinstance(got, Exception) else (got[0], got[1])
            _keep(head, run, self.raw, self.schedule, self.on_done, self.first_same[head])
            for k in (head, *self.first_same[head]):
                self._arrived(k)
            return
        if isinstance(got, Exception):
            self.full_raw[head] = got
        else:
            self.full_raw[head], self.full_costs[head] = got[0], got[1]
        for k in (head, *self.full_same[head]):
            if k in self.again and self.on_done:
                self.on_done(k)

    def _arrived(self, key: str) -> None:
        for i in self.users.get(key, []):
            self.waiting[i].discard(key)
            if not self.waiting[i]:
                self._decide(i)

    def _decide(self, i: int) -> None:
        """A record whose screen runs are all in: unless its verdict is settled, its scenarios (and every key of the
        same screen scenario) run again at the full budget."""
        if i in self.decided:
            return
        self.decided.add(i)
        record = self.records[i]
        outcome = _outcomes([record], self.raw)[0]
        if not verdict_settled(record, outcome, {k: v for k, v in self.raw.items() if isinstance(v, Result)}):
            self._queue_full(record)
        for h in self.heads_of[i]:
            self.undecided[h] -= 1
            full_head = self.full_head.get(h)
            if not self.undecided[h] and full_head is not None and full_head not in self.queued_full:
                owner = self.holder.get(full_head)
                if owner is not None and owner[1] == h:  # no record on its scenario needs its full run
                    del self.holder[full_head]
                    self.drops.setdefault(owner[0], []).append(h)

    def _queue_full(self, record: Record) -> None:
        """Queue the full runs of ``record``'s scenarios (and of every key of the same screen scenario)."""
        for k in (x for ref in record.scenarios() for x in self.first_group.get(ref.key(), [ref.key()])):
            if k in self.again:
                continue
            self.again.add(k)
            head = self.full_head.get(k)
            if head is not None and head not in self.queued_full:
                self.queued_full.add(head)
                self.full_todo.append(head)
        self.full_todo.sort(key=lambda h: -self._full_hint((h, *self.full_same[h])))

    def outcomes(self) -> list[Outcome]:
        """Every record's outcome: the keys run again take their full run (or the error loading it), the others the
        screen run; the full runs' costs filed (``_screened_in_pool``)."""
        raw = dict(self.raw)
        filed: set[str] = set()
        for k in dict.fromkeys(ref.key() for ref in self.refs):
            if k not in self.again:
                continue
            scenario, head = self.full[k], self.full_head.get(k)
            if isinstance(scenario, Exception) or head is None:
                raw[k] = scenario if isinstance(scenario, Exception) else RuntimeError(f"{k}: not loaded")
                continue
            raw[k] = self.full_raw[head]
            if head not in filed:
                filed.add(head)
                if head in self.full_costs:
                    self.schedule.costs[k + FULL_COST_SUFFIX] = self.full_costs[head]
        outcomes = _outcomes(self.records, raw)
        _label_budgets(outcomes, self.again)
        return outcomes
