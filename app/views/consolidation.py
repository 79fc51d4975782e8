"""Consolidation page: several workloads on one configuration.

A scenario with a ``workloads`` list (an example, or an uploaded file): the fast path's per-workload
throughput and latency at once, then the DES's per-workload latency with 95% intervals on request,
with what limits them (``app.words``: a component is "the bottleneck" only when it limits). Each objective of the
scenario (``slos``) is drawn against its line with the figure that judges it; each workload's throughput has
panels of its own (``app.objective_charts``).
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from app import runner
from app.forms import EXAMPLES
from app.library import parse_scenario_file
from app.objective_charts import (
    ObjectivePoint,
    Throughput,
    bound_words,
    is_latency,
    objective_chart,
    verdict_words,
    workload_throughput_chart,
)
from app.validity import badge, is_final, note_of, validity_of
from app.views.common import fmt, holds_profile, show_problems
from app.words import limiting_sentence
from models.fast_result import FastResult
from models.result import Metric, Result
from models.scenario import Scenario, ScenarioFileError, load_scenario, read_scenario_data
from sim.analytic import evaluate

UPLOAD = "Upload a file"
MAX_UPLOAD_MB = 1


def value_ci(m: Metric) -> str:
    """A metric as value ± 95% half-width ("?" when the interval is unknown)."""
    if not m.has_ci:
        return f"{fmt(m.value)} ± ?"
    return f"{fmt(m.value)} ± {fmt(m.half_width)}"


@st.cache_data(show_spinner=False)
def consolidated_examples() -> dict[str, str]:
    """Example files (examples/*.yaml) with a ``workloads`` list -> their scenario names."""
    out = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        try:
            data = read_scenario_data(path)
        except ScenarioFileError:
            continue
        if data.get("workloads") and not holds_profile(data):  # a profile among them: the Load over time page
            out[path.name] = str(data.get("name") or path.stem)
    return out


def describe_workloads(scenario: Scenario) -> list[dict[str, Any]]:
    """One row per workload: what it issues and where."""
    rows = []
    for name, wl in scenario.named_workloads():
        load = {"closed": lambda w: f"{w.jobs} jobs x QD {w.queue_depth}", "open": lambda w: f"{fmt(w.rate_iops)} IOPS",
                "bursty": lambda w: f"{fmt(w.on_rate_iops)} IOPS for {fmt(w.mean_on_ms)} ms, every {fmt(w.mean_on_ms + w.mean_off_ms)} ms"}
        rows.append({"workload": name, "kind": wl.kind, "load": load.get(wl.kind, lambda w: "")(wl),
                     "reads": f"{wl.read_fraction:.0%}", "size KiB": fmt(wl.mean_bytes() / 1024), "access": wl.access,
                     "members": "all" if wl.placement is None else ", ".join(str(m) for m in wl.placement)})
    return rows


def throughput_rows(fast: FastResult | None = None, result: Result | None = None) -> list[Throughput]:
    """Each workload's IOPS and MB/s: the DES's with their 95% intervals, else the fast path's."""
    if result is not None:
        return [Throughput(n, w.iops.value, w.mbps.value, w.iops.ci95 if w.iops.has_ci else None,
                           w.mbps.ci95 if w.mbps.has_ci else None) for n, w in (result.workloads or {}).items()]
    return [Throughput(n, w.iops, w.mbps) for n, w in ((fast.workloads if fast else None) or {}).items()]


def objective_points(scenario: Scenario, fast: FastResult, result: Result | None = None) -> list[ObjectivePoint]:
    """Every bound of the scenario's objectives with the fast path's estimate and, after a simulation, the DES's
    figure with its interval and verdict (a run that is not final keeps its validity: the verdict says so)."""
    from sim.plan.slo_check import des_figure, fast_figure, slo_verdicts

    estimates = fast_figure(fast)
    rows = slo_verdicts(scenario, des_figure(result)) if result is not None else slo_verdicts(scenario, estimates)
    validity = validity_of(result) if result is not None else "precise"
    out = []
    for r in rows:
        low = high = None
        if result is not None:
            _, low, high = des_figure(result)(r["workload"], r["metric"])
        estimate = estimates(r["workload"], r["metric"])[0]
        out.append(ObjectivePoint(r["workload"], r["metric"], r["kind"], r["bound"],
                                  value=r["value"] if result is not None else None, low=low, high=high,
                                  verdict=r["verdict"], validity=validity, estimate=estimate))
    return out


def objective_table(points: list[ObjectivePoint], simulated: bool) -> list[dict[str, Any]]:
    """The objectives as a table: the bound in words, the figure with its interval, the verdict."""
    rows = []
    for p in points:
        unit = " us" if is_latency(p.metric) else ""
        figure = p.value if simulated else p.estimate
        shown = "-" if figure is None else f"{fmt(figure)}{unit}"
        if simulated and p.low is not None and p.high is not None:
            shown += f" (95% CI {fmt(p.low)} .. {fmt(p.high)})"
        rows.append({"workload": p.workload, "objective": bound_words(p.metric, p.kind, p.bound),
                     "simulation (DES)" if simulated else "fast-path estimate": shown,
                     "verdict": verdict_words(p.verdict, p.validity) if simulated else f"{p.verdict} (estimate)"})
    return rows


def budget_input(scenario: Scenario) -> Scenario:
    """The simulation's I/O budget (the file's by default): a smaller one answers sooner, cut short."""
    budget = st.number_input("Simulation budget (I/Os)", min_value=10_000, max_value=50_000_000, step=10_000,
                             value=int(scenario.run.max_ios), key="consolidation:budget",
                             help="The simulation stops at its precision target or at this many I/Os, whichever comes "
                                  "first; a run stopped by the budget is not final (its verdicts say so).")
    if int(budget) == scenario.run.max_ios:
        return scenario
    return scenario.model_copy(update={"run": scenario.run.model_copy(update={"max_ios": int(budget)})})


def fast_table(fast: FastResult) -> list[dict[str, Any]]:
    return [{"workload": name, "IOPS": fmt(w.iops), "MB/s": fmt(w.mbps), "mean latency us": fmt(w.latency_mean_us),
             "read us": fmt(w.read_latency_mean_us), "write us": fmt(w.write_latency_mean_us)}
            for name, w in (fast.workloads or {}).items()]


def des_table(result: Result) -> list[dict[str, Any]]:
    return [{"workload": name, "IOPS": value_ci(w.iops), "MB/s": value_ci(w.mbps), "mean us": value_ci(w.latency_mean_us),
             "p50 us": value_ci(w.latency_p50_us), "p95 us": value_ci(w.latency_p95_us), "p99 us": value_ci(w.latency_p99_us),
             "read us": value_ci(w.read_latency_mean_us), "write us": value_ci(w.write_latency_mean_us)}
            for name, w in (result.workloads or {}).items()]


def pick_scenario() -> Scenario | None:
    examples = consolidated_examples()
    choice = st.selectbox("Scenario", [*examples, UPLOAD], format_func=lambda k: examples.get(k, k), key="consolidation:source")
    if choice != UPLOAD:
        return load_scenario(EXAMPLES / choice)
    upload = st.file_uploader("Scenario file with a workloads list (YAML, TOML or JSON)", type=["yaml", "yml", "toml", "json"],
                              key="consolidation:upload", max_upload_size=MAX_UPLOAD_MB)
    if upload is None:
        return None
    try:
        scenario = parse_scenario_file(upload.name, upload.getvalue())
    except ScenarioFileError as exc:
        show_problems(exc.problems)
        return None
    if not scenario.consolidated:
        st.info("This scenario has one workload: the Size page shows it. Here a scenario lists its workloads under `workloads`.")
        return None
    return scenario


def show_objectives(scenario: Scenario, fast: FastResult, result: Result | None = None) -> None:
    """The objectives drawn (each against its line) and tabled; before a simulation, the fast path's estimates."""
    if not scenario.slos:
        return
    points = objective_points(scenario, fast, result)
    title = "Objectives per workload: simulation (DES) with 95% intervals" if result is not None else \
        "Objectives per workload: fast-path estimates (simulate for intervals)"
    st.plotly_chart(objective_chart(points, title), key=f"consolidation:objectives:{result is not None}")
    import pandas as pd

    st.table(pd.DataFrame(objective_table(points, result is not None)).set_index("workload"))


def render() -> None:
    st.title("Consolidation")
    st.caption("Several workloads sharing one configuration: each one's throughput and latency against its objectives, "
               "and what limits them.")
    scenario = pick_scenario()
    if scenario is None:
        return
    st.dataframe(describe_workloads(scenario), hide_index=True)
    fast = evaluate(scenario)
    left, right = st.columns(2)
    left.plotly_chart(workload_throughput_chart(throughput_rows(fast), "Throughput per workload (fast path)"),
                      key="consolidation:fast_throughput")
    right.subheader("Fast path")
    right.dataframe(fast_table(fast), hide_index=True)
    right.caption(limiting_sentence(fast.bottleneck, fast.utilization.get(fast.bottleneck, math.nan))
                  + ("" if fast.stable else ". UNSTABLE: the offered load exceeds what the path can serve."))
    show_objectives(scenario, fast)
    scenario = budget_input(scenario)
    if not st.button("Simulate (DES, per-workload latency with 95% intervals)", key="consolidation:simulate", type="primary") \
            and runner.cached(scenario) is None:
        return
    try:
        result = runner.simulate_one(scenario, "simulating the workloads together")
    except RuntimeError as exc:
        st.error(f"The simulation failed: {exc}")
        return
    validity = validity_of(result)
    if not is_final(validity):
        st.warning(f"{badge(validity)}: {note_of(result)}. Every verdict below is not final.", icon=":material/warning:")
    st.subheader("Simulation: each workload against its objectives")
    show_objectives(scenario, fast, result)
    st.dataframe(des_table(result), hide_index=True)
    st.plotly_chart(workload_throughput_chart(throughput_rows(result=result),
                                              "Throughput per workload (DES, 95% intervals; each panel its own scale)"),
                    key="consolidation:des_throughput")
    st.caption(f"{limiting_sentence(result.bottleneck, result.utilization.get(result.bottleneck, math.nan))}; "
               f"{result.measured_ios:,} I/Os measured; seed {result.seed}.")
