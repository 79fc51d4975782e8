"""What-if: sweep one or two parameters of a configuration and see how a metric moves.

Parameters a pre-sales engineer turns: namespaces per drive, drives, DIMMs, HyperPAV
aliases, LUNs, jobs, queue depth, arrival rate, block size, read %. Two solvers: the fast
path (``sim.analytic``, instant, for exploring) and the simulation (``sim.plan.sweep``, every
point a DES run with its 95% CI, in the worker pool with a progress bar). One factor
draws a line chart, two draw lines per value or a heatmap; the table downloads as CSV.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from app import charts, forms, jobs, runner
from app.validity import badge, is_final
from app.views.common import BASELINE_KEY, BASELINE_SOURCE, SIZE_SOURCE, load_source, scenario_sources, show_problems
from models.bottleneck import solvers_agree
from models.catalog import lookup
from models.cost import CostError, capex, usd_per_kiops
from models.scenario import Scenario, ScenarioFileError, format_validation_error, with_overrides
from models.topology import DirectNvme

MAX_DES_POINTS = 48
MAX_FAST_POINTS = 400
MAX_VALUES = 16
FAST = "Fast path (queueing model, instant)"
OWN_PRECISION = "As set for the configuration (its run settings)"
DES = "Simulation (DES, with 95% CIs)"


@dataclass(frozen=True)
class Factor:
    """A parameter that can be swept: its dotted path, label, the attachments / workloads it applies to, and example values."""

    path: str
    label: str
    attachments: tuple[str, ...] | None
    workloads: tuple[str, ...] | None
    integer: bool
    example: str
    percent: bool = False

    def applies(self, scenario: Scenario) -> bool:
        if self.attachments is not None and scenario.topology.kind not in self.attachments:
            return False
        if self.workloads is not None and scenario.workload.kind not in self.workloads:
            return False
        if self.path == "topology.namespaces.per_drive" and isinstance(scenario.topology, DirectNvme):
            return scenario.topology.drive_spec.max_namespaces > 1
        return not (self.path == "workload.block_size_kib" and scenario.workload.sizes)

    def parse(self, text: str) -> tuple[list[Any], str | None]:
        """Values typed as ``1, 2, 4, 8``; returns the values or what is wrong with them."""
        parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
        if not parts:
            return [], "give at least one value, e.g. " + self.example
        values: list[Any] = []
        for p in parts:
            try:
                v = float(p)
            except ValueError:
                return [], f"{p!r} is not a number; give values separated by commas, e.g. {self.example}"
            if not math.isfinite(v):
                return [], f"{p!r} is not a finite number"
            if self.integer and not v.is_integer():
                return [], f"{p!r}: {self.label.lower()} must be whole numbers"
            values.append(int(v) if self.integer else (v / 100.0 if self.percent else v))
        if len(values) > MAX_VALUES:
            return [], f"at most {MAX_VALUES} values, got {len(values)}"
        if len(set(values)) != len(values):
            return [], "a value is listed twice"
        return values, None


FACTORS: dict[str, Factor] = {f.path: f for f in (
    Factor("topology.namespaces.per_drive", "Namespaces per drive", ("direct_nvme",), None, True, "1, 2, 4, 8"),
    Factor("topology.drives", "Drives", ("direct_nvme", "zvm_edev"), None, True, "4, 8, 12, 16"),
    Factor("topology.dimms", "DIMMs", ("exflash",), None, True, "1, 2, 4, 8"),
    Factor("topology.aliases", "HyperPAV aliases", ("zvm_edev",), None, True, "0, 1, 3, 7, 11"),
    Factor("topology.luns", "LUNs", ("san",), None, True, "1, 2, 4, 8"),
    Factor("workload.jobs", "Jobs", None, ("closed",), True, "1, 4, 16, 64, 256"),
    Factor("workload.queue_depth", "Queue depth", None, ("closed",), True, "1, 2, 4, 8, 16, 32"),
    Factor("workload.rate_iops", "Arrival rate (IOPS)", None, ("open",), False, "10000, 50000, 100000"),
    Factor("workload.block_size_kib", "Block size (KiB)", None, None, False, "4, 8, 16, 64, 256"),
    Factor("workload.read_fraction", "Reads (%)", None, None, False, "0, 30, 50, 70, 100", percent=True),
)}

METRICS = {"iops": "IOPS", "mbps": "MB/s", "latency_mean_us": "mean latency (us)", "latency_p99_us": "p99 latency (us)",
           "cpu_us_per_io": "host CPU per I/O (us)", "usd_per_kiops": "$ per KIOPS"}
FAST_METRICS = ("iops", "mbps", "latency_mean_us", "cpu_us_per_io", "usd_per_kiops")


def grid(values: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the factors' values, in order."""
    paths = list(values)
    return [dict(zip(paths, combo, strict=True)) for combo in itertools.product(*(values[p] for p in paths))]


def coupled(base: Scenario, point: dict[str, Any]) -> dict[str, Any]:
    """Settings that must follow a swept value: more direct-attached drives than the adapters hold add adapters."""
    topo = base.topology
    drives = point.get("topology.drives")
    if isinstance(topo, DirectNvme) and isinstance(drives, int):
        per_adapter = lookup("adapters", topo.adapter).max_drives
        needed = math.ceil(drives / per_adapter)
        if needed > topo.adapters:
            return {"topology.adapters": needed}
    return {}


def point_scenario(base: Scenario, point: dict[str, Any]) -> Scenario:
    """The scenario of one point: the base with the point's values and what must follow them."""
    return with_overrides(base, {**coupled(base, point), **point})


def invalid_points(base: Scenario, points: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(field, message) for each point the scenario models refuse (the sweep records them as invalid)."""
    problems: list[tuple[str, str]] = []
    for point in points:
        try:
            point_scenario(base, point)
        except ValidationError as exc:
            at = ", ".join(f"{FACTORS[p].label.lower()} {_show(p, v)}" for p, v in point.items())
            problems.extend((f, f"{m} (at {at})") for f, m in format_validation_error(exc))
        except ScenarioFileError as exc:
            problems.extend(exc.problems)
    return problems


def _show(path: str, value: Any) -> str:
    return f"{value * 100:g}%" if FACTORS[path].percent else f"{value:g}" if isinstance(value, float) else str(value)


def _price(scenario: Scenario) -> float | None:
    try:
        return capex(scenario.topology).total_usd  # type: ignore[arg-type]
    except (CostError, KeyError, ValueError):
        return None


def fast_frame(base: Scenario, points: list[dict[str, Any]]) -> pd.DataFrame:
    """The fast path at every point: one row per point with the factors, the metrics and the bottleneck."""
    from sim.analytic import evaluate

    rows = []
    for i, point in enumerate(points):
        row: dict[str, Any] = {"point": i, **point}
        try:
            scenario = point_scenario(base, point)
            fr = evaluate(scenario)
        except ValidationError as exc:
            row.update(status="invalid", error="; ".join(f"{f}: {m}" for f, m in format_validation_error(exc)))
            rows.append(row)
            continue
        except Exception as exc:
            row.update(status="error", error=f"{type(exc).__name__}: {exc}")
            rows.append(row)
            continue
        cost = _price(scenario)
        stable = bool(fr.stable)
        row.update(status="ok", error=None, validity="precise" if stable else "unstable", iops=fr.iops, mbps=fr.mbps,
                   latency_mean_us=fr.latency_mean_us,
                   read_latency_mean_us=fr.read_latency_mean_us, write_latency_mean_us=fr.write_latency_mean_us,
                   cpu_us_per_io=fr.cpu_us_per_io, bottleneck=fr.bottleneck, stable=bool(fr.stable),
                   max_iops=fr.bounds.x_max_iops, cost_usd=cost,
                   usd_per_kiops=usd_per_kiops(cost, fr.iops) if cost and stable else None)
        # an unstable point has no finite latency: shown empty (and marked unstable), never as "inf"
        row.update({k: None for k, v in row.items() if isinstance(v, float) and not math.isfinite(v)})
        rows.append(row)
    return pd.DataFrame(rows)


def des_frame(base: Scenario, points: list[dict[str, Any]]) -> pd.DataFrame:
    """Every point simulated (``sim.plan.sweep.sweep_frame``, one run per point, in the worker pool), with cost and $/KIOPS."""
    work: list[tuple[str, Any, tuple[str, str]]] = []
    for point in points:
        extra = coupled(base, point)
        base_json = runner.scenario_key(with_overrides(base, extra) if extra else base)
        factors_json = json.dumps({p: [v] for p, v in point.items()}, sort_keys=True)
        work.append((f"{base_json}|{factors_json}", jobs.sweep_point_json, (base_json, factors_json)))
    outcomes = runner.run_many_cached("sweep", work, label="Simulating the sweep", budget_s=base.run.max_wall_s)
    frames = []
    for i, (point, out) in enumerate(zip(points, outcomes, strict=True)):
        if isinstance(out, BaseException):
            frames.append(pd.DataFrame([{**point, "status": "error", "error": f"{type(out).__name__}: {out}"}]))
            continue
        part = pd.DataFrame(json.loads(out))
        part["point"] = i
        frames.append(part)
    frame = pd.concat(frames, ignore_index=True)
    costs = []
    for point in points:
        try:
            costs.append(_price(point_scenario(base, point)))
        except (ValidationError, ScenarioFileError):
            costs.append(None)
    frame["cost_usd"] = [costs[int(p)] if p == p else None for p in frame["point"]]
    if "bottleneck" in frame.columns:
        fast = _fast_bottlenecks(base, points)
        frame[FAST_BOTTLENECK] = [_disagreeing(b, fast[int(p)]) if p == p else None
                                  for b, p in zip(frame["bottleneck"], frame["point"], strict=True)]
    validity = frame["validity"] if "validity" in frame.columns else [None] * len(frame)
    # $/KIOPS only for a point that reached its precision: a cut-short point's IOPS may be far off
    frame["usd_per_kiops"] = [usd_per_kiops(c, x) if c and x and x == x and is_final(str(v)) else None
                              for c, x, v in zip(frame["cost_usd"], frame.get("iops", [None] * len(frame)), validity, strict=True)]
    return frame


FAST_BOTTLENECK = "fast path bottleneck"
"""The What-if DES table's column for the fast path's bottleneck, filled where it is not the DES's."""


def _fast_bottlenecks(base: Scenario, points: list[dict[str, Any]]) -> list[tuple[dict[str, float], str] | None]:
    """The fast path's utilization and bottleneck at every point (None where it has no answer)."""
    from sim.analytic import evaluate

    out: list[tuple[dict[str, float], str] | None] = []
    for point in points:
        try:
            fr = evaluate(point_scenario(base, point))
        except Exception:  # the fast path may not model every point; the DES's answer stands alone there
            out.append(None)
            continue
        out.append((fr.utilization, fr.bottleneck))
    return out


def _disagreeing(des_bottleneck: Any, fast: tuple[dict[str, float], str] | None) -> str | None:
    """The fast path's bottleneck where it is not the DES's (``models.bottleneck.solvers_agree``), else None."""
    if fast is None or not isinstance(des_bottleneck, str):
        return None
    return None if solvers_agree(des_bottleneck, fast[0], fast[1]) else fast[1]


def best_point(frame: pd.DataFrame, metric: str, higher_is_better: bool) -> dict[str, Any] | None:
    """The best point on ``metric`` among those that are final answers (precise); None when there is none."""
    if metric not in frame.columns:
        return None
    ok = frame[(frame.get("status", "ok") == "ok") & frame[metric].notna()]
    if "validity" in ok.columns:
        ok = ok[ok["validity"] == "precise"]
    if ok.empty:
        return None
    row = ok.loc[ok[metric].idxmax() if higher_is_better else ok[metric].idxmin()]
    return dict(row)


def show_baseline_line(base: Scenario) -> None:
    """The base model's match to its measurement, when it has been simulated (cached) on the Size page."""
    from app.baseline import Baseline, comparison_rows, gap_sentence

    baseline = Baseline.from_dict(st.session_state[BASELINE_KEY])
    result = runner.cached(base)
    measured = ", ".join(f"{k.replace('_us', '').replace('_', ' ')} {v:,.1f}" for k, v in baseline.measured.items()
                         if k in ("iops", "latency_mean_us", "latency_p99_us"))
    line = f"Baseline: {baseline.source} measured {measured}."
    if result is not None:
        line += " " + gap_sentence(comparison_rows(baseline.measured, result)) + "."
    st.info(line + " The sweep below starts from this base model.", icon=":material/straighten:")


def _pick_values(available: list[str]) -> tuple[dict[str, list[Any]], bool]:
    """Parameter 1 and the optional parameter 2 with their values; whether a value list is wrong (its error shown)."""
    c1, c2 = st.columns(2)
    first = c1.selectbox("Parameter 1", available, key="whatif:f1", format_func=lambda p: FACTORS[p].label)
    text1 = c1.text_input(f"{FACTORS[first].label}: values", value=FACTORS[first].example, key=f"whatif:v1:{first}")
    err1 = c1.empty()
    second_options = ["(none)", *(p for p in available if p != first)]
    second = c2.selectbox("Parameter 2 (optional)", second_options, key="whatif:f2",
                          format_func=lambda p: p if p == "(none)" else FACTORS[p].label)
    values: dict[str, list[Any]] = {}
    bad = False
    v1, why1 = FACTORS[first].parse(text1)
    if why1:
        err1.error(f"**{FACTORS[first].label}**: {why1}", icon=":material/error:")
        bad = True
    values[first] = v1
    if second != "(none)":
        text2 = c2.text_input(f"{FACTORS[second].label}: values", value=FACTORS[second].example, key=f"whatif:v2:{second}")
        err2 = c2.empty()
        v2, why2 = FACTORS[second].parse(text2)
        if why2:
            err2.error(f"**{FACTORS[second].label}**: {why2}", icon=":material/error:")
            bad = True
        values[second] = v2
    return values, bad


def render() -> None:
    st.title("What-if")
    st.caption("Sweep one or two parameters of a configuration. The fast path answers at once; the simulation gives every "
               "point its confidence interval.")
    sources = scenario_sources()
    if st.session_state.get("whatif:source") not in sources:
        st.session_state["whatif:source"] = BASELINE_SOURCE if BASELINE_SOURCE in sources else SIZE_SOURCE
    source = st.selectbox("Configuration", list(sources), key="whatif:source", format_func=lambda k: sources[k])
    base, problems = load_source(source)
    if source == BASELINE_SOURCE and base is not None:
        show_baseline_line(base)
    if base is None:
        show_problems(problems)
        st.caption("Fix the configuration on the Size page, or pick another one.")
        return
    st.caption(f"{forms.ATTACHMENTS.get(base.topology.kind, base.topology.kind)}; "
               f"{forms.workload_summary(base.workload.model_dump(mode='json'))}")
    available = [p for p, f in FACTORS.items() if f.applies(base)]
    if isinstance(base.topology, DirectNvme):
        st.caption(f"When the drives outgrow the adapters, adapters are added (an {base.topology.adapter} holds "
                   f"{lookup('adapters', base.topology.adapter).max_drives}).")
    values, bad = _pick_values(available)
    c1, c2 = st.columns(2)
    solver = c1.radio("Solver", [FAST, DES], key="whatif:solver", horizontal=True)
    precision = c2.selectbox("Simulation precision", [*forms.PRECISIONS, OWN_PRECISION], key="whatif:precision",
                             disabled=solver == FAST, help="Each point stops at this precision or its budget; a point that hits "
                                                           "its budget first is marked cut short.")
    if bad:
        return
    points = grid(values)
    limit = MAX_FAST_POINTS if solver == FAST else MAX_DES_POINTS
    if len(points) > limit:
        st.error(f"**values**: {len(points)} points; the {'fast path' if solver == FAST else 'simulation'} takes at most {limit} "
                 "here (use `flashplan sweep` for bigger sweeps).", icon=":material/error:")
        return
    refused = invalid_points(base, points)
    if refused:
        shown = refused[:6]
        st.warning("Some points are not valid configurations and are left out:  \n" +
                   "  \n".join(f"**{f}**: {m}" for f, m in shown) + (f"  \n... and {len(refused) - len(shown)} more" if len(refused) > 6 else ""))
    if solver == DES and precision in forms.PRECISIONS:
        base = with_overrides(base, {f"run.{k}": v for k, v in forms.PRECISIONS[precision].items()})
    request = json.dumps({"base": runner.scenario_key(base), "values": values, "solver": solver}, sort_keys=True)
    if st.button("Run the sweep", type="primary", key="whatif:run", icon=":material/play_arrow:"):
        runner.forget("sweep")  # points that were not final run again
        st.session_state["whatif.ran"] = request
    if st.session_state.get("whatif.ran") != request:
        st.caption(f"{len(points)} point(s) to run.")
        return
    frame = fast_frame(base, points) if solver == FAST else des_frame(base, points)
    show_frame(frame, list(values), solver)


def _readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The table as shown: a result badge first, the bottlenecks in the user's words."""
    from app.words import BUSIEST, component_words

    table = frame.copy()
    if "validity" in table.columns:
        table.insert(0, "result", [badge(str(v)) if v == v and v is not None else "" for v in table["validity"]])
    for column in ("bottleneck", FAST_BOTTLENECK):
        if column in table.columns:
            table[column] = [component_words(b) if isinstance(b, str) else b for b in table[column]]
    return table.rename(columns={"bottleneck": BUSIEST, FAST_BOTTLENECK: f"fast path: {BUSIEST}"})


def show_frame(frame: pd.DataFrame, factors: list[str], solver: str) -> None:
    ok = frame[frame["status"] == "ok"] if "status" in frame.columns else frame
    if ok.empty:
        st.error("No point could be evaluated: " + "; ".join(str(e) for e in frame.get("error", []) if e)[:2000])
        return
    shown = ok.copy()
    for p in factors:
        if FACTORS[p].percent:
            shown[p] = shown[p] * 100
    names = {p: FACTORS[p].label for p in factors}
    metric_keys = [m for m in METRICS if m in shown.columns and (solver == DES or m in FAST_METRICS) and shown[m].notna().any()]
    c1, c2 = st.columns(2)
    metric = c1.selectbox("Metric", metric_keys, key="whatif:metric", format_func=lambda m: METRICS[m])
    style = "lines"
    if len(factors) == 2:
        style = c2.radio("Chart", ["lines", "heatmap"], key="whatif:style", horizontal=True)
    renamed = shown.rename(columns=names)
    if style == "heatmap":
        fig = charts.sweep_heatmap(renamed, names[factors[0]], names[factors[1]], metric, METRICS[metric])
    else:
        fig = charts.sweep_line_chart(renamed, names[factors[0]], metric, METRICS[metric],
                                      group=names[factors[1]] if len(factors) == 2 else None)
    st.plotly_chart(fig, key="whatif:chart")
    if "validity" in shown.columns:
        not_final = shown[shown["validity"].fillna("unknown") != "precise"]
        if not not_final.empty:
            at = "; ".join(", ".join(f"{names[p]} {row[p]:g}" for p in factors) + f": {badge(str(row['validity']))}"
                           for _, row in not_final.head(6).iterrows())
            st.warning(f"{len(not_final)} point(s) are not final answers (hollow markers; no $ per KIOPS; never the best): {at}. "
                       "Cut-short points stopped on their budget before their precision: run them at a higher precision. "
                       "Unstable points are offered more than the configuration sustains.", icon=":material/warning:")
    higher = metric in ("iops", "mbps")
    best = best_point(shown, metric, higher_is_better=higher)
    if best is not None:
        st.caption(f"Best precise point on {METRICS[metric]}: " + ", ".join(f"{names[p]} {best[p]:g}" for p in factors)
                   + f" ({best[metric]:,.1f}).")
    failed = frame[frame["status"] != "ok"] if "status" in frame.columns else frame.iloc[0:0]
    if not failed.empty:
        st.caption(f"{len(failed)} point(s) left out: " + "; ".join(str(e) for e in failed["error"].head(3)))
    st.dataframe(_readable(frame), hide_index=True, width="stretch")
    st.download_button("Download CSV", data=frame.to_csv(index=False), file_name="what-if.csv", mime="text/csv",
                       key="whatif:csv", icon=":material/download:")
