"""Events per logical I/O: what each example and calibration scenario costs the SimPy event loop.

For every example (examples/*.yaml) and calibration scenario (calibration/scenarios/*.yaml) the
DES runs with the scenario's own fixed seed until an I/O budget is spent (the precision target
is set out of reach, so the budget alone ends the run), and the table gives:

* events per logical I/O: SimPy events processed over the whole run (warm-up included) divided
  by the logical I/Os completed. Counted exactly and for free: every event SimPy or the engine
  schedules takes the next id from ``env._eid`` (``Environment.schedule``, ``sim.des.components.schedule``
  and ``Station._start`` all do), so events processed = ids handed out - events still queued.
  ``--check-steps`` also counts ``Environment.step`` calls (an instance attribute shadowing the
  method, which ``Environment.run`` looks up per step) and asserts both counts agree.
  Same seed and budget -> the same counts, on any machine, compiled or interpreted.
* logical I/Os per CPU-second (``time.process_time`` over model build and run) and its ratio to
  the M/M/8 example (examples/mm8.yaml) run in the same process with the same budget: the rate
  varies with the machine, the ratio much less. M/M/8 runs first and last; the faster counts.
* the geometric mean of both over the seed examples (s1..s5).
* the same run under ``device_model: pooled`` beside the scenario's own device model (the default, ``auto``:
  die-level drives, ``sim.des.dies``): its events per I/O and I/Os per CPU-second (``--no-pooled`` leaves it out).
* with ``--instructions``: instructions per logical I/O under both device models for the chosen scenarios
  (valgrind's callgrind, ``bench.instructions.instructions_per_io``: runs of N and 3N I/Os, so start-up and
  the model build cancel; the same on every run of one build, where CPU seconds on a shared host are not).

``--breakdown`` attributes every event and every hop visit of the chosen scenarios to the hop
that caused it (Station service ends, Delay timeouts, pool acquires, forks, split joins, ...),
by patching the interpreted engine's ``advance`` and the environment's ``step`` for the run
(in a child process with ``FLASHPLAN_INTERPRETED=1`` when this one runs compiled: the counts
are the same, the compiled engine gives bit-identical runs). Nothing in sim/ is edited.

    python -m bench.events [--ios 150000] [--calibration-ios 50000] [--only SUBSTR ...]
                           [--check-steps] [--markdown] [--json] [--breakdown] [--baseline FILE.json]
                           [--no-pooled] [--instructions [SUBSTR ...]] [--instruction-ios 10000]

``--baseline before.json`` (a ``--json`` run saved before an engine change) adds each scenario's events
per I/O before and after and the speed-up, as the ratio of the two runs' "vs M/M/8" columns, so the
machine's speed cancels out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CALIBRATION = ROOT / "calibration" / "scenarios"
MM8 = EXAMPLES / "mm8.yaml"
DEFAULT_IOS = 150_000
DEFAULT_CALIBRATION_IOS = 50_000
"""Calibration scenarios are slower per I/O (z/VM paging: ~50 events per I/O); their ratios settle well before 50,000."""
WARMUP_IOS = 2_000
SEED_EXAMPLE = re.compile(r"^s[1-5]_")
BREAKDOWN_DEFAULT = ("s2_ibmi_8x4_mirrored", "s5_fs9100_nvmefc", "s5_fs9100_scsi", "s1_linuxone_fcp", "s4_paging")
INSTRUCTIONS_DEFAULT = ("s1_linuxone_nvme_raid10", "s2_ibmi_8x4_mirrored")
"""The scenarios ``--instructions`` counts when it names none (the die-level drives' examples)."""
DEFAULT_INSTRUCTION_IOS = 10_000


@dataclass
class EventRun:
    """One budgeted run of one scenario: events processed, logical I/Os completed, CPU time."""

    name: str
    source: str
    """'example' or 'calibration'."""
    ios: int
    events: int
    cpu_s: float
    steps: int | None = None
    """``Environment.step`` calls, when counted (``--check-steps``)."""
    stop_reason: str = ""

    @property
    def events_per_io(self) -> float:
        return self.events / self.ios if self.ios else math.inf

    @property
    def cpu_rate(self) -> float:
        """Logical I/Os per CPU-second of this process."""
        return self.ios / self.cpu_s if self.cpu_s > 0 else 0.0


def scenario_files() -> list[tuple[str, Path]]:
    """(source, path) of every example and calibration scenario, examples first, each sorted; a load
    profile (replayed interval by interval by ``sim.des.profile``, not one ``Run``) is left out."""
    return [("example", p) for p in sorted(EXAMPLES.glob("*.yaml")) if not _profile(p)] + \
           [("calibration", p) for p in sorted(CALIBRATION.glob("*.yaml")) if not _profile(p)]


def _profile(path: Path) -> bool:
    from models import load_scenario
    from models.workload import ProfileWorkload

    return isinstance(load_scenario(path).workload, ProfileWorkload)


def budgeted(path: Path, ios: int, seed: int | None = None, device_model: str | None = None) -> Any:
    """The scenario at ``path``, stopped by ``ios`` completions alone (its own seed unless ``seed``; its own device
    model unless ``device_model``)."""
    from models import load_scenario, with_overrides

    overrides: dict[str, Any] = {"run.max_ios": ios, "run.target_rel_ci": 1e-9, "run.max_wall_s": 86_400.0}
    if seed is not None:
        overrides["run.seed"] = seed
    if device_model is not None:
        overrides["device_model"] = device_model
    return with_overrides(load_scenario(path), overrides)


def processed_events(env: Any) -> int:
    """Events processed: ids handed out by ``env._eid`` (one counter for SimPy's queue and the engine's) minus events
    still queued in either."""
    return int(next(env._eid)) - int(env.pending())


def count_step_calls(env: Any) -> Callable[[], int]:
    """Shadow ``env.step`` with a counting wrapper (``Environment.run`` calls ``self.step()`` per event);
    returns a function giving the count of steps that processed an event."""
    original = env.step
    calls = [0]

    def step() -> None:
        if env.pending():
            calls[0] += 1
        original()

    env.step = step
    return lambda: calls[0]


def count_events(path: Path, ios: int, source: str = "example", check_steps: bool = False,
                 seed: int | None = None, device_model: str | None = None) -> EventRun:
    """Run ``path`` for ``ios`` logical I/Os and count the events it took."""
    from sim.des.engine import Run

    scenario = budgeted(path, ios, seed, device_model)
    c0 = time.process_time()
    run = Run(scenario)
    steps = count_step_calls(run.env) if check_steps else None
    result = run.run()
    cpu = time.process_time() - c0
    events = processed_events(run.env)
    counted = steps() if steps is not None else None
    if counted is not None and counted != events:
        raise AssertionError(f"{path.name}: {counted} step calls but {events} events by id count")
    return EventRun(path.stem, source, result.simulated_ios, events, cpu, counted, result.stop_reason)


def geometric_mean(values: Iterable[float]) -> float:
    vals = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else math.nan


@dataclass
class EventTable:
    """The benchmark's figures: every run, the M/M/8 reference, and the engine mode."""

    runs: list[EventRun]
    mm8: EventRun
    mode: str
    ios: int
    calibration_ios: int
    machine: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    pooled: dict[str, EventRun] = field(default_factory=dict)
    """The same scenarios under ``device_model: pooled``, by name (none with ``--no-pooled``)."""
    instructions: dict[str, dict[str, float]] = field(default_factory=dict)
    """Instructions per logical I/O by scenario name, then device model ('default', 'pooled'): ``--instructions``."""
    instruction_ios: int = 0

    def ratio(self, run: EventRun) -> float:
        return run.cpu_rate / self.mm8.cpu_rate if self.mm8.cpu_rate else 0.0

    def seed_examples(self) -> list[EventRun]:
        return [r for r in self.runs if r.source == "example" and SEED_EXAMPLE.match(r.name)]

    def geomeans(self) -> tuple[float, float, float]:
        """(events per I/O, I/Os per CPU-s, ratio to M/M/8) geometric means over the seed examples."""
        seeds = self.seed_examples()
        return (geometric_mean(r.events_per_io for r in seeds), geometric_mean(r.cpu_rate for r in seeds),
                geometric_mean(self.ratio(r) for r in seeds))

    def pooled_geomeans(self) -> tuple[float, float]:
        """(events per I/O, I/Os per CPU-s) geometric means over the seed examples under ``device_model: pooled``."""
        seeds = [self.pooled[r.name] for r in self.seed_examples() if r.name in self.pooled]
        return geometric_mean(r.events_per_io for r in seeds), geometric_mean(r.cpu_rate for r in seeds)

    def headers(self) -> list[str]:
        head = ["scenario", "source", "logical I/Os", "events", "events per I/O"]
        if self.pooled:
            head.append("events per I/O, pooled")
        head.append("I/Os per CPU-s")
        if self.pooled:
            head.append("I/Os per CPU-s, pooled")
        head.append("vs M/M/8")
        if self.instructions:
            head += ["instructions per I/O", "instructions per I/O, pooled", "default / pooled"]
        return head

    def _row(self, r: EventRun) -> list[str]:
        p = self.pooled.get(r.name)
        row = [r.name, r.source, f"{r.ios:,}", f"{r.events:,}", f"{r.events_per_io:.2f}"]
        if self.pooled:
            row.append(f"{p.events_per_io:.2f}" if p else "")
        row.append(f"{r.cpu_rate:,.0f}")
        if self.pooled:
            row.append(f"{p.cpu_rate:,.0f}" if p else "")
        row.append(f"{self.ratio(r):.3f}")
        if self.instructions:
            ins = self.instructions.get(r.name)
            row += ([f"{ins['default']:,.0f}", f"{ins['pooled']:,.0f}", f"{ins['default'] / ins['pooled']:.3f}x"]
                    if ins else ["", "", ""])
        return row

    def rows(self) -> list[list[str]]:
        out = [self._row(r) for r in self.runs]
        ev, rate, ratio = self.geomeans()
        last = [f"geometric mean, {len(self.seed_examples())} seed examples (s1..s5)", "", "", "", f"{ev:.2f}"]
        pooled_ev, pooled_rate = self.pooled_geomeans() if self.pooled else (math.nan, math.nan)
        if self.pooled:
            last.append(f"{pooled_ev:.2f}")
        last.append(f"{rate:,.0f}")
        if self.pooled:
            last.append(f"{pooled_rate:,.0f}")
        last.append(f"{ratio:.3f}")
        if self.instructions:
            last += ["", "", ""]
        out.append(last)
        return out

    def to_json(self) -> dict[str, Any]:
        ev, rate, ratio = self.geomeans()
        return {"mode": self.mode, "ios": self.ios, "calibration_ios": self.calibration_ios, "machine": self.machine,
                "mm8": {**asdict(self.mm8), "events_per_io": self.mm8.events_per_io, "cpu_rate": self.mm8.cpu_rate},
                "runs": [{**asdict(r), "events_per_io": r.events_per_io, "cpu_rate": r.cpu_rate, "ratio_to_mm8": self.ratio(r)}
                         for r in self.runs],
                "geomean_seed_examples": {"events_per_io": ev, "cpu_rate": rate, "ratio_to_mm8": ratio},
                "pooled": {name: {**asdict(r), "events_per_io": r.events_per_io, "cpu_rate": r.cpu_rate}
                           for name, r in self.pooled.items()},
                "instructions_per_io": self.instructions, "instruction_ios": self.instruction_ios}


def format_text(table: EventTable) -> str:
    headers = table.headers()
    rows = [headers, *table.rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(headers))]
    lines = []
    for k, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_markdown(table: EventTable) -> str:
    headers = table.headers()
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in table.rows()]
    return "\n".join(lines)


def machine_line() -> str:
    load = " load avg {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    return f"{os.cpu_count()} cores;{load}"


def measure(ios: int = DEFAULT_IOS, calibration_ios: int = DEFAULT_CALIBRATION_IOS, only: Sequence[str] = (),
            check_steps: bool = False, log: Callable[[str], None] = lambda m: None, pooled: bool = True) -> EventTable:
    """Count events for every (matching) scenario, with M/M/8 run first and last as the rate reference; with
    ``pooled`` each scenario runs again under ``device_model: pooled``."""
    from sim.native import guard as native

    def mm8() -> EventRun:
        return count_events(MM8, ios, "example", check_steps)

    count_events(MM8, WARMUP_IOS)  # untimed: imports, catalog and parameter files load here, not in the first timed run
    first = mm8()
    log(f"  mm8 (reference): {first.events_per_io:.2f} events per I/O, {first.cpu_rate:,.0f} I/Os per CPU-s")
    runs = []
    pooled_runs: dict[str, EventRun] = {}
    for source, path in scenario_files():
        if only and not any(s in path.stem for s in only):
            continue
        budget = ios if source == "example" else calibration_ios
        run = count_events(path, budget, source, check_steps)
        log(f"  {path.stem}: {run.ios:,} I/Os, {run.events_per_io:.2f} events per I/O, {run.cpu_rate:,.0f} I/Os per CPU-s")
        runs.append(run)
        if pooled:
            p = pooled_runs[path.stem] = count_events(path, budget, source, check_steps, device_model="pooled")
            log(f"    pooled: {p.events_per_io:.2f} events per I/O, {p.cpu_rate:,.0f} I/Os per CPU-s")
    last = mm8()
    reference = first if first.cpu_rate >= last.cpu_rate else last
    return EventTable(runs, reference, native.status(), ios, calibration_ios, machine_line(), pooled=pooled_runs)


def count_instructions(table: EventTable, wanted: Sequence[str], ios: int, log: Callable[[str], None] = lambda m: None) -> None:
    """Instructions per logical I/O under the scenario's own device model and under pooled, for the table's scenarios
    whose name contains one of ``wanted`` (``bench.instructions.instructions_per_io``: valgrind)."""
    from bench.instructions import instructions_per_io

    paths = {p.stem: p for _, p in scenario_files()}
    for run in table.runs:
        if any(s in run.name for s in wanted):
            per = {model: instructions_per_io(paths[run.name], ios, model) for model in ("default", "pooled")}
            log(f"  {run.name}: {per['default']:,.0f} instructions per I/O, pooled {per['pooled']:,.0f}")
            table.instructions[run.name] = per
    table.instruction_ios = ios


def compare(table: EventTable, baseline: dict[str, Any]) -> str:
    """Markdown: each scenario's events per I/O against a saved ``--json`` run, and its speed-up.

    The speed-up is the ratio of the two runs' "vs M/M/8" columns: each rate is first divided by M/M/8's
    rate in its own process, so a faster or busier machine cancels out (M/M/8 itself, 2 events per I/O,
    is the yardstick both engines share; an engine change that speeds M/M/8 up too understates it: the
    raw rate ratio is given beside it, and M/M/8's own). A budget that differs from the baseline's is flagged: event
    counts are only comparable at the same budget.
    """
    before = {r["name"]: r for r in baseline["runs"]}
    lines = ["| scenario | events per I/O before | after | events ratio | vs M/M/8 before | after | speed-up | "
             "I/Os per CPU-s before | after | rate ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in table.runs:
        b = before.get(r.name)
        if b is None:
            lines.append(f"| {r.name} | (not in the baseline) | {r.events_per_io:.2f} | | | {table.ratio(r):.3f} | |")
            continue
        budget = "" if b["ios"] == r.ios else f" (budget {b['ios']:,} -> {r.ios:,}!)"
        lines.append(f"| {r.name}{budget} | {b['events_per_io']:.2f} | {r.events_per_io:.2f} | "
                     f"{r.events_per_io / b['events_per_io']:.3f} | {b['ratio_to_mm8']:.3f} | {table.ratio(r):.3f} | "
                     f"{table.ratio(r) / b['ratio_to_mm8']:.2f}x | {b['cpu_rate']:,.0f} | {r.cpu_rate:,.0f} | "
                     f"{r.cpu_rate / b['cpu_rate']:.2f}x |")
    seeds = [r for r in table.seed_examples() if r.name in before]
    if seeds:
        ev_before = geometric_mean(before[r.name]["events_per_io"] for r in seeds)
        ratio_before = geometric_mean(before[r.name]["ratio_to_mm8"] for r in seeds)
        ev_after = geometric_mean(r.events_per_io for r in seeds)
        ratio_after = geometric_mean(table.ratio(r) for r in seeds)
        rate_before = geometric_mean(before[r.name]["cpu_rate"] for r in seeds)
        rate_after = geometric_mean(r.cpu_rate for r in seeds)
        lines.append(f"| geometric mean, {len(seeds)} seed examples | {ev_before:.2f} | {ev_after:.2f} | "
                     f"{ev_after / ev_before:.3f} | {ratio_before:.3f} | {ratio_after:.3f} | {ratio_after / ratio_before:.2f}x | "
                     f"{rate_before:,.0f} | {rate_after:,.0f} | {rate_after / rate_before:.2f}x |")
    mm8_before = baseline.get("mm8", {}).get("cpu_rate")
    if mm8_before:
        lines.append(f"| M/M/8 (the yardstick) | {baseline['mm8']['events_per_io']:.2f} | {table.mm8.events_per_io:.2f} | | | | | "
                     f"{mm8_before:,.0f} | {table.mm8.cpu_rate:,.0f} | {table.mm8.cpu_rate / mm8_before:.2f}x |")
    return "\n".join(lines)


# -- where the events come from -------------------------------------------------------------------

_NUMBER = re.compile(r"\d+")
_DELAY_NAMES = {
    "fabric": "Delay SAN fabric latency",
    "cache_hit": "Delay SAN cache hit",
    "*.write_ack": "Delay device write ack",
    "*.read_on_die": "Delay eXFlash read on die",
    "*.program_on_die": "Delay eXFlash die program",
    "turnaround": "Delay z/VM subchannel turnaround",
}
"""Delays by their place in the route (``Delay.name``, instance numbers normalized)."""


def _norm(name: str) -> str:
    """``drive3.ns1`` -> ``drive*.ns*``: one row per kind of component, not per instance."""
    return _NUMBER.sub("*", name)


def hop_label(hop: Any) -> str:
    """What kind of hop ``hop`` is, in the engine's words (component class and its normalized name)."""
    from sim.des.components import (
        CHAIN_DROP,
        CHAIN_JOIN,
        CHAIN_NEXT,
        BookedRelease,
        CacheEntry,
        Chain,
        Delay,
        Fork,
        HostCharge,
        Meter,
        Split,
        Station,
    )

    owner = getattr(hop, "__self__", None)
    if isinstance(hop, Chain):
        ends = {CHAIN_NEXT: "", CHAIN_JOIN: " + join", CHAIN_DROP: " (background, dropped)"}
        return "Chain [" + ", ".join(_part_label(p) for p in hop.parts) + "]" + ends[hop.end]
    if isinstance(hop, HostCharge):
        return "host CPU charge (enters Station host_cpu)"
    if isinstance(hop, (BookedRelease, CacheEntry)):
        return _cache_label(hop)
    if isinstance(hop, Station):
        return f"Station {_norm(hop.name)}"
    if isinstance(owner, Meter):
        return f"{type(owner).__name__}.{hop.__name__} {_norm(owner.name)}"
    if isinstance(owner, Split):
        return f"Split.{hop.__name__} ({owner.planner.__name__})"
    if isinstance(hop, Split):
        return f"Split ({hop.planner.__name__})"
    if isinstance(hop, Fork):
        return f"Fork -> {hop_label(hop.route[0])}"
    if isinstance(hop, Delay):
        name = _NUMBER.sub("*", hop.name).replace("drive*", "*").replace("dimm*", "*")
        return _DELAY_NAMES.get(name, f"Delay {hop.name or '?'}")
    name = getattr(hop, "__qualname__", type(hop).__name__)
    if name.startswith("_charge."):
        return "host CPU charge (enters Station host_cpu)"
    if owner is not None:
        return f"{type(owner).__name__}.{hop.__name__}"
    return name.replace(".<locals>", "")


def _cache_label(hop: Any) -> str:
    """A write-back cache's hops: the release booked behind a destage, the way in through a station."""
    from sim.des.components import BookedRelease

    if isinstance(hop, BookedRelease):
        return f"BookedRelease {_norm(hop.pool.name)}"
    return f"CacheEntry [Station {_norm(hop.station.name)}, BookedPool.acquire {_norm(hop.cache.name)}, {hop_label(hop.ack)}]"


def _part_label(part: Any) -> str:
    """A chain part: a station's or a delay's bound method, or a host CPU charge's closure."""
    from sim.des.components import Meter, Station

    owner = getattr(part, "__self__", None)
    if isinstance(owner, Meter) and not isinstance(owner, Station):  # a pool's booked release (``release_at``)
        return f"{type(owner).__name__}.{part.__name__} {_norm(owner.name)}"
    if owner is not None:
        return hop_label(owner)
    return "host CPU charge (enters Station host_cpu)"


def event_label(event: Any) -> str:
    """What caused a queued SimPy event: the station whose service ends, or the hop that scheduled the timeout."""
    from sim.des.components import CacheEntry, Chain, Delay, Meter, Split, _advance_event

    callbacks = event.callbacks or []
    if not callbacks:
        return "event without callbacks"
    cb = callbacks[0]
    owner = getattr(cb, "__self__", None)
    if isinstance(owner, Meter):
        return f"Station {_norm(owner.name)} (service end)"
    if isinstance(owner, (Chain, CacheEntry)):
        return hop_label(owner) + " (end)"
    if isinstance(owner, Delay):
        return hop_label(owner) + " (timeout)"
    if isinstance(owner, Split):
        return f"Split phase done ({owner.planner.__name__})"
    if cb is _advance_event:
        job = event._value
        return hop_label(job.route[job.step]) + " (timeout)"
    return "workload / engine: " + getattr(cb, "__qualname__", repr(cb)).replace(".<locals>", "")


@dataclass
class Breakdown:
    """Events and hop visits of one run, by kind, per logical I/O."""

    name: str
    ios: int
    events: int
    by_event: dict[str, int]
    by_hop: dict[str, int]
    notes: dict[str, Any] = field(default_factory=dict)
    waits: dict[str, int] = field(default_factory=dict)
    """Acquires that had to wait, per kind of pool (a wait costs no event today; it decides whether a
    slot could be taken ahead of time, see bench/results/events_breakdown.md)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _waits(meters: Sequence[Any]) -> dict[str, int]:
    """I/Os that waited at each concurrency limit (every meter but the stations), by normalised name, most first."""
    from sim.des.components import Station

    waits: Counter[str] = Counter()
    for meter in meters:
        if not isinstance(meter, Station):
            waits[_norm(meter.name)] += meter.waited
    return dict(waits.most_common())


def breakdown(path: Path, ios: int, seed: int | None = None) -> Breakdown:
    """Run ``path`` for ``ios`` logical I/Os counting every event by its cause and every hop visit by its kind.

    Needs the interpreted engine: ``advance`` is patched in the engine modules' namespaces for the run.
    """
    import sim.des.components as components
    import sim.des.engine as engine
    import sim.des.model as model
    from sim.native import guard as native

    if not native.status().startswith("interpreted"):
        raise RuntimeError("the breakdown patches the interpreted engine: run with FLASHPLAN_INTERPRETED=1")
    scenario = budgeted(path, ios, seed)
    run = engine.Run(scenario)
    env: Any = run.env  # sim.des.environment.Environment (pending, next_event)
    by_event: Counter[str] = Counter()
    by_hop: Counter[str] = Counter()
    labels: dict[int, str] = {}
    original_advance = components.advance
    original_step = env.step

    parts_of: dict[int, list[str]] = {}

    def counting_advance(job: Any) -> None:
        hop = job.route[job.step + 1]
        key = id(hop)
        label = labels.get(key)
        if label is None:
            label = labels[key] = hop_label(hop)
            parts_of[key] = [_part_label(p) for p in hop.parts] if isinstance(hop, components.Chain) else []
        by_hop[label] += 1
        for part in parts_of[key]:  # a chain's stations and delays are visited too, in one event
            by_hop[part] += 1
        original_advance(job)

    def counting_step() -> None:
        first = env.next_event()
        if first is not None:
            by_event[event_label(first)] += 1
        original_step()

    modules = (components, engine, model)
    saved = [m.__dict__.get("advance") for m in modules]
    try:
        for m in modules:
            if "advance" in m.__dict__:
                m.advance = counting_advance  # type: ignore[attr-defined]
        env.step = counting_step  # type: ignore[method-assign]  # the instance attribute shadows the method for this run
        result = run.run()
    finally:
        for m, old in zip(modules, saved, strict=True):
            if old is not None:
                m.advance = old  # type: ignore[attr-defined]
    events = processed_events(env)
    if sum(by_event.values()) != events:
        raise AssertionError(f"{path.name}: {sum(by_event.values())} events attributed, {events} processed")
    return Breakdown(path.stem, result.simulated_ios, events, dict(by_event.most_common()), dict(by_hop.most_common()),
                     {"scenario": scenario.name, "workload": scenario.workload.kind}, _waits(run.model.meters))


def format_breakdown(b: Breakdown) -> str:
    lines = [f"### {b.name}: {b.events / b.ios:.2f} events per logical I/O ({b.events:,} events, {b.ios:,} I/Os)", "",
             "| event cause | events per I/O | share |", "|---|---|---|"]
    for label, n in b.by_event.items():
        lines.append(f"| {label} | {n / b.ios:.3f} | {n / b.events:.1%} |")
    lines += ["", "| hop (visits; only Station, Delay, Chain and die hops cost an event; a chain's parts are also counted "
              "on their own rows) | visits per I/O |", "|---|---|"]
    for label, n in b.by_hop.items():
        lines.append(f"| {label} | {n / b.ios:.3f} |")
    lines += ["", "| pool | acquires that waited, per I/O |", "|---|---|"]
    lines += [f"| {label} | {n / b.ios:.3f} |" for label, n in b.waits.items()]
    return "\n".join(lines)


BREAKDOWN_CHILD = """
import json, sys
from pathlib import Path
from bench.events import breakdown
out = [breakdown(Path(p), int(n)).to_json() for p, n in zip(sys.argv[1::2], sys.argv[2::2])]
print(json.dumps(out))
"""


def breakdowns(runs: Sequence[tuple[Path, int]]) -> list[Breakdown]:
    """``breakdown`` of each (path, I/O budget), in a child process with the interpreted engine when this one runs compiled."""
    from sim.native import guard as native

    if native.status().startswith("interpreted"):
        return [breakdown(p, ios) for p, ios in runs]
    env = {**os.environ, native.ENV_INTERPRETED: "1"}
    argv = [str(x) for p, ios in runs for x in (p, ios)]
    out = subprocess.run([sys.executable, "-c", BREAKDOWN_CHILD, *argv], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return [Breakdown(**d) for d in json.loads(out.stdout)]


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.events", description=__doc__.splitlines()[0])
    parser.add_argument("--ios", type=_positive, default=DEFAULT_IOS, help="logical I/Os per example run (and M/M/8)")
    parser.add_argument("--calibration-ios", type=_positive, default=DEFAULT_CALIBRATION_IOS,
                        help="logical I/Os per calibration scenario run")
    parser.add_argument("--only", nargs="+", default=[], metavar="SUBSTR", help="scenarios whose file name contains one of these")
    parser.add_argument("--check-steps", action="store_true", help="also count Environment.step calls and check they agree")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json", action="store_true", help="print strict JSON instead of a table")
    parser.add_argument("--baseline", type=Path, metavar="FILE.json",
                        help="a saved --json run (e.g. before an engine change): also print events and speed-up against it")
    parser.add_argument("--no-pooled", action="store_true", help="leave out the runs under device_model: pooled")
    parser.add_argument("--instructions", nargs="*", metavar="SUBSTR",
                        help="also count instructions per I/O under both device models (valgrind) for the scenarios "
                             f"whose name contains one of these (none named: {', '.join(INSTRUCTIONS_DEFAULT)})")
    parser.add_argument("--instruction-ios", type=_positive, default=DEFAULT_INSTRUCTION_IOS,
                        help="logical I/Os of the shorter of the two valgrind runs (the longer: 3x)")
    parser.add_argument("--breakdown", action="store_true",
                        help=f"events and hop visits by kind for --only scenarios (default: {', '.join(BREAKDOWN_DEFAULT)})")
    args = parser.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.breakdown:
        return _print_breakdowns(args)
    if args.only and not any(any(s in p.stem for s in args.only) for _, p in scenario_files()):
        print(f"--only: no scenario file name contains any of {args.only}", file=sys.stderr)
        return 2
    baseline = None
    if args.baseline is not None:
        try:
            baseline = json.loads(args.baseline.read_text())
            if not isinstance(baseline, dict) or not isinstance(baseline.get("runs"), list):
                raise ValueError("no 'runs' list")  # e.g. a --breakdown output
        except (OSError, ValueError) as exc:
            print(f"--baseline: {args.baseline} is not a saved `python -m bench.events --json` run ({exc})", file=sys.stderr)
            return 2
    if args.instructions is not None and shutil.which("valgrind") is None:
        print("error: --instructions needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    log(f"events per logical I/O: examples at {args.ios:,} I/Os, calibration scenarios at {args.calibration_ios:,}")
    table = measure(args.ios, args.calibration_ios, args.only, args.check_steps, log, pooled=not args.no_pooled)
    if args.instructions is not None:
        count_instructions(table, args.instructions or INSTRUCTIONS_DEFAULT, args.instruction_ios, log)
    if args.json:
        print(json.dumps(table.to_json(), allow_nan=False))
        return 0
    _print_table(table, args.markdown)
    if baseline is not None:
        print(f"\nAgainst {args.baseline} (engine {baseline.get('mode', '?')}):")
        print(compare(table, baseline))
    return 0


def _print_breakdowns(args: argparse.Namespace) -> int:
    wanted = args.only or list(BREAKDOWN_DEFAULT)
    runs = [(p, args.ios if source == "example" else args.calibration_ios)
            for source, p in scenario_files() if any(s in p.stem for s in wanted)]
    if not runs:
        print(f"--only: no scenario file name contains any of {wanted}", file=sys.stderr)
        return 2
    results = breakdowns(runs)
    if args.json:
        print(json.dumps([b.to_json() for b in results], allow_nan=False))
    else:
        print("\n\n".join(format_breakdown(b) for b in results))
    return 0


def _print_table(table: EventTable, markdown: bool) -> None:
    print(f"Events per logical I/O (python -m bench.events; engine {table.mode}; {table.machine})")
    print(f"M/M/8 reference: {table.mm8.ios:,} I/Os, {table.mm8.events_per_io:.2f} events per I/O, "
          f"{table.mm8.cpu_rate:,.0f} I/Os per CPU-s (the faster of a run before and after the table)")
    if table.pooled:
        print("Each scenario under its own device model (the default, auto: die-level drives) and under "
              "device_model: pooled (the columns marked pooled).")
    if table.instructions:
        print(f"Instructions per logical I/O: valgrind (callgrind), runs of {table.instruction_ios:,} and "
              f"{3 * table.instruction_ios:,} I/Os, the difference over {2 * table.instruction_ios:,}.")
    print(format_markdown(table) if markdown else format_text(table))


if __name__ == "__main__":
    sys.exit(main())
