"""Running simulations for the web app: off the web server's process, with a progress bar, cached by scenario.

A DES run is CPU-bound Python; run inside the Streamlit server it would hold the
interpreter lock and slow every other session. So every run goes to a shared pool of
worker processes (``FLASHPLAN_APP_WORKERS``, default one per core) and the session that
asked for it only waits, drawing a progress bar: the share of the run's wall-time
budget (``run.max_wall_s``) spent so far, or the share of a batch of runs done. Other
sessions keep working; if every worker is busy their runs queue and their bars say so.

Results are cached with ``st.cache_data`` keyed by the scenario's JSON (run settings
and seed included), so asking again for a sizing already done returns at once, in any
session. A failed run (an error) is not cached, and neither is a run that is not a final
answer (cut short by its budget, or unstable: ``app.validity``): the session that asked keeps it
(so moving a widget does not re-run it) until its run button asks again (``forget``), which runs it
again; no other session ever gets it.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import streamlit as st

from app.jobs import simulate_json
from models.result import Result
from models.scenario import Scenario

WORKERS_ENV = "FLASHPLAN_APP_WORKERS"
POLL_S = 0.2


def pool_workers() -> int:
    """Worker processes for simulations: ``$FLASHPLAN_APP_WORKERS`` or one per core."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if raw.isdigit() and int(raw) >= 1:
        return int(raw)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@st.cache_resource(show_spinner=False)
def _pool() -> ProcessPoolExecutor:
    # spawn: the server is multi-threaded, and forking a threaded process is unsafe
    return ProcessPoolExecutor(max_workers=pool_workers(), mp_context=multiprocessing.get_context("spawn"))


@st.cache_resource(show_spinner=False)
def warm_pool() -> bool:
    """Start the worker processes and import the engine in each, once per server, without waiting for them.

    A spawned worker takes seconds to import the engine; started when the app first opens, the
    workers are ready by the time someone presses Size it (measured: 15.9 s cold, 7.2 s warm).
    """
    from app.jobs import warm

    for _ in range(pool_workers()):
        submit(warm)
    return True


def submit(fn: Callable[..., Any], *args: Any) -> Future[Any]:
    """Run ``fn(*args)`` in a worker process (``fn`` must be importable: a module-level function)."""
    try:
        return _pool().submit(fn, *args)
    except (BrokenProcessPool, RuntimeError):
        _pool.clear()  # a worker died (killed, out of memory): start a fresh pool
        return _pool().submit(fn, *args)


def scenario_key(scenario: Scenario) -> str:
    """The cache key of a scenario: its JSON, every field included (run settings and seed too)."""
    return scenario.model_dump_json(exclude_none=True)


# -- the cache ---------------------------------------------------------------------------------

class _NotCached(Exception):
    """Raised by a cache probe that misses (exceptions are never cached)."""


class _NotFinal(Exception):
    """Carries an answer that must not be cached (cut short, unstable) out of the cached function."""

    def __init__(self, text: str):
        super().__init__("not a final answer")
        self.text = text


def _json_final(text: str) -> bool:
    """Whether a worker's JSON answer is final: a Result, sweep rows or a plan's verified winner whose validity is precise."""
    from app.validity import is_final, validity_of, validity_of_stop

    try:
        data = json.loads(text)
    except ValueError:
        return True
    if isinstance(data, dict) and "iops" in data and "scenario" in data:
        return is_final(validity_of(data))
    if isinstance(data, dict) and isinstance(data.get("winner"), dict):  # a plan: final when its winner's DES run is
        des = data["winner"].get("des")
        return not des or is_final(des.get("validity") or validity_of_stop(des.get("stop_reason")))
    if isinstance(data, list):
        return all(is_final(r.get("validity") or validity_of_stop(r.get("stop_reason")))
                   for r in data if isinstance(r, dict) and r.get("status") == "ok")
    return True


def _final_or_raise(compute: Callable[[], str]) -> Callable[[], str]:
    def run() -> str:
        text = compute()
        if not _json_final(text):
            raise _NotFinal(text)
        return text
    return run


NOT_FINAL = "runner.not_final"
"""Session state: answers that are not final (cut short, unstable), kept for this browser session only, so a widget
change does not re-run them; the page's run button forgets them (``forget``) and runs them again."""
MAX_NOT_FINAL = 64


def _session_answers() -> dict[str, str]:
    try:
        store: dict[str, str] = st.session_state.setdefault(NOT_FINAL, {})
    except Exception:  # outside a Streamlit session (a plain function call)
        return {}
    return store


def forget(kind: str) -> None:
    """Drop this session's answers of ``kind`` that are not final, so the next request runs them again."""
    store = _session_answers()
    for k in [k for k in store if k.startswith(f"{kind}|")]:
        del store[k]


def _session_answer(kind: str, key: str) -> str | None:
    return _session_answers().get(f"{kind}|{key}")


def _store(kind: str, key: str, compute: Callable[[], str]) -> str:
    """``compute()``'s answer, cached under (kind, key) only when it is final (else kept in this session only)."""
    try:
        return _cached_text(kind, key, _compute=_final_or_raise(compute))
    except _NotFinal as nf:
        store = _session_answers()
        store[f"{kind}|{key}"] = nf.text
        while len(store) > MAX_NOT_FINAL:
            del store[next(iter(store))]
        return nf.text


@st.cache_data(max_entries=4096, show_spinner=False)
def _cached_text(kind: str, key: str, _compute: Callable[[], str] | None = None) -> str:
    """A cached JSON answer of kind ``kind`` (a Result, a sweep point, a plan) for ``key`` (a scenario's JSON, ...).

    ``_compute`` is not part of the cache key: called without it, a miss raises ``_NotCached``
    (exceptions are never cached), so a caller can probe the cache and run the misses in parallel.
    """
    if _compute is None:
        raise _NotCached
    return _compute()


def cached(scenario: Scenario) -> Result | None:
    """The cached Result of this exact scenario, or None."""
    try:
        return Result.model_validate_json(_cached_text("result", scenario_key(scenario)))
    except _NotCached:
        return None


def run_cached(kind: str, key: str, fn: Callable[..., str], *args: Any, label: str, budget_s: float) -> str:
    """``fn(*args)`` (a worker function returning JSON text) run in the pool with a progress bar, cached under (kind, key)."""
    try:
        return _cached_text(kind, key)
    except _NotCached:
        pass
    kept = _session_answer(kind, key)
    if kept is not None:
        return kept
    fut = submit(fn, *args)
    wait([fut], label, budget_s)
    return _store(kind, key, fut.result)


def run_many_cached(kind: str, jobs: Sequence[tuple[str, Callable[..., str], tuple[Any, ...]]], label: str,
                    budget_s: float) -> list[str | BaseException]:
    """Several (key, fn, args) jobs in parallel, each cached under (kind, key); a failed job comes back as its exception."""
    out: list[str | BaseException | None] = [None] * len(jobs)
    futures: dict[int, Future[Any]] = {}
    for i, (key, fn, args) in enumerate(jobs):
        try:
            out[i] = _cached_text(kind, key)
        except _NotCached:
            kept = _session_answer(kind, key)
            if kept is not None:
                out[i] = kept
            else:
                futures[i] = submit(fn, *args)
    if futures:
        wait(list(futures.values()), label, budget_s)
        for i, fut in futures.items():
            exc = fut.exception()
            if exc is not None:
                if isinstance(exc, BrokenProcessPool):
                    _pool.clear()
                out[i] = exc
            else:
                out[i] = _store(kind, jobs[i][0], fut.result)
    return [o if o is not None else RuntimeError("not run") for o in out]


# -- waiting with a progress bar ------------------------------------------------------------

def wait(futures: Sequence[Future[Any]], label: str, budget_s: float) -> None:
    """Block until every future is done, drawing a progress bar.

    The bar shows runs done out of all, advanced within a run by the share of its
    wall-time budget spent (a run stops at its precision target or its budget, whichever
    comes first, so the bar never overstates how long is left).
    """
    if all(f.done() for f in futures):
        return
    n = len(futures)
    workers = pool_workers()
    waves = math.ceil(n / workers)
    bar = st.progress(0.0, text=label)
    start = time.monotonic()
    try:
        while True:
            done = sum(f.done() for f in futures)
            if done == n:
                break
            elapsed = time.monotonic() - start
            by_time = min(0.99, elapsed / max(budget_s * waves, 1e-9))
            frac = min(0.99, max(done / n, by_time))
            running = sum(f.running() for f in futures)
            queued = "" if running or done else " (waiting for a free worker)"
            if n > 1:
                text = f"{label}: {done} of {n} done, {elapsed:.1f} s{queued}"
            else:
                text = f"{label}: {elapsed:.1f} s of at most ~{budget_s:.0f} s{queued}"
            bar.progress(frac, text=text)
            time.sleep(POLL_S)
    finally:
        bar.empty()


def simulate_many(scenarios: Sequence[Scenario], label: str = "simulating") -> list[Result | str]:
    """Simulate several scenarios in parallel (cached ones are not re-run); an error comes back as its message."""
    if not scenarios:
        return []
    jobs = [(key, simulate_json, (key,)) for key in (scenario_key(s) for s in scenarios)]
    budget = max(s.run.max_wall_s for s in scenarios)
    outcomes = run_many_cached("result", jobs, label, budget)
    return [Result.model_validate_json(o) if isinstance(o, str) else f"{type(o).__name__}: {o}" for o in outcomes]


def simulate_one(scenario: Scenario, label: str = "simulating") -> Result:
    """Simulate one scenario (cached); raises RuntimeError with the engine's message if it fails."""
    (outcome,) = simulate_many([scenario], label)
    if isinstance(outcome, str):
        raise RuntimeError(outcome)
    return outcome


def run_job(fn: Callable[..., Any], *args: Any, label: str, budget_s: float) -> Any:
    """Run any worker function in the pool with a progress bar; re-raises its exception."""
    fut = submit(fn, *args)
    wait([fut], label, budget_s)
    return fut.result()
