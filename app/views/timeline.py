"""Load over time: a profile workload's p99 interval by interval against a p99 objective, and how far the load can
grow before the objective breaks.

A profile comes from an example (the first: examples/day_linuxone_hourly_profile.yaml, a day of hourly
intervals; examples/linuxone_bdi_batch_profile.yaml, seconds of write bursts; next to a steady load:
examples/linuxone_bdi_batch_and_ycsb.yaml, every workload then gets its own latency over time), the scenario library or
an uploaded scenario file (``flashplan import iostat FILE --profile --scenario S --out F`` or
``flashplan import csv`` write one). The fast path takes every interval as a steady state at once, draws each
interval's p99 estimate against the objective and flags the intervals too short to be a steady state. Then the
simulation: a short profile is replayed whole (DES, in the worker pool); a long one (a day of iostat intervals,
billions of I/Os: ``MAX_REPLAY_IOS``) has its peak interval simulated as its own steady state, which a long interval
reaches. The growth query bisects on the fast path and checks the breaking point with the DES
(``sim.plan.growth``)."""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import streamlit as st

from app import charts, jobs, runner
from app.objective_charts import IntervalEstimateRow, ObjectivePoint, interval_objective_chart, verdict_words
from app.validity import badge, is_final, note_of, validity_of
from app.views.common import example_names, holds_profile, library, show_problems
from app.words import limiting_sentence
from models.result import Metric
from models.scenario import Scenario, ScenarioFileError
from models.workload import ProfileWorkload
from sim.plan.growth import date_after
from sim.plan.profile_fast import ProfileEstimate

UPLOAD = "upload"
DEFAULT_SLO_US = 2_000.0
MAX_REPLAY_IOS = 3_000_000
"""Above about this many I/Os a replay of the whole profile is too long for the page: the peak interval is simulated."""
FIRST_EXAMPLE = "day_linuxone_hourly_profile.yaml"
"""The page's first example: a day of hourly intervals (the fast path for each, the simulation of the peak)."""


def sources() -> dict[str, str]:
    """Profile examples, the library's scenarios and an upload."""
    from app.forms import EXAMPLES
    from models.scenario import read_scenario_data

    out: dict[str, str] = {}
    names = example_names(profiles=True)
    for name, title in sorted(names.items(), key=lambda kv: kv[0] != FIRST_EXAMPLE):
        try:
            if holds_profile(read_scenario_data(EXAMPLES / name)):
                out[f"example:{name}"] = f"Example: {title}"
        except ScenarioFileError:
            continue
    try:
        out.update({f"library:{e.id}": f"Library: {e.name}" for e in library().list_scenarios()})
    except Exception as exc:  # an unreachable database must not take the page down
        st.warning(f"The scenario library is not available: {type(exc).__name__}: {exc}")
    out[UPLOAD] = "Upload a scenario file"
    return out


def load(source: str) -> tuple[Scenario | None, list[tuple[str, str]]]:
    """The scenario a source names (or the upload), or the problems that stop it from loading."""
    from app.library import parse_scenario_file
    from app.views.common import load_source

    if source != UPLOAD:
        scenario, problems = load_source(source)
        return scenario, problems
    upload = st.file_uploader("Scenario file with a profile workload", type=["yaml", "yml", "json", "toml"], key="timeline:upload",
                              max_upload_size=1)
    if upload is None:
        return None, []
    try:
        return parse_scenario_file(upload.name, upload.getvalue()), []
    except ScenarioFileError as exc:
        return None, list(exc.problems)


def fast_table(scenario: Scenario, profile: ProfileWorkload) -> ProfileEstimate:
    """Every interval as a steady state, with the settling check (instant); returns the estimate."""
    from app.words import component_words, limiting_sentence
    from sim.plan.profile_fast import evaluate_profile

    est = evaluate_profile(scenario)
    rows = [{"interval": e.index, "label": profile.intervals[e.index].label, "length (s)": e.duration_s,
             "offered IOPS": e.offered_iops,
             "fast-path mean (us)": e.fast.latency_mean_us if e.fast and math.isfinite(e.fast.latency_mean_us) else None,
             "p99 estimate (us)": e.p99_estimate_us if math.isfinite(e.p99_estimate_us) else None,
             **{f"{name} mean (us)": w.latency_mean_us if math.isfinite(w.latency_mean_us) else None
                for name, w in ((e.fast.workloads or {}) if e.fast else {}).items()},
             "busiest": (f"{component_words(e.fast.bottleneck)} {e.fast.utilization.get(e.fast.bottleneck, 0.0):.0%}"
                         if e.fast else "-"),
             "settling (s)": e.settling_s if math.isfinite(e.settling_s) else None, "steady state holds": e.reliable,
             "note": _in_words(e.note, e.fast)} for e in est.intervals]
    peak = est.intervals[est.peak_index]
    limits = limiting_sentence(peak.fast.bottleneck, peak.fast.utilization.get(peak.fast.bottleneck, math.nan)) if peak.fast else ""
    with st.expander(f"Fast path: each interval as a steady state (peak: interval {est.peak_index}, {est.peak_reason})"):
        st.dataframe(rows, hide_index=True, width="stretch")
        st.caption("An interval shorter than 3 relaxation times of its bottleneck queue (S / (1 - sqrt(rho))^2, M/M/1) has not "
                   "settled: its steady-state figures are unreliable there and the simulation is the answer."
                   + (f" At the peak interval: {limits}." if limits else ""))
    return est


def _in_words(note: str, fast: Any) -> str:
    """A fast-path note with the components it names in the user's words."""
    from app.words import component_words

    if fast is None:
        return note
    for name in sorted({fast.bottleneck, fast.bounds.bottleneck}, key=len, reverse=True):
        note = note.replace(name, component_words(name))
    return note


def estimate_rows(profile: ProfileWorkload, est: ProfileEstimate) -> list[IntervalEstimateRow]:
    starts = [0.0]
    for iv in profile.intervals[:-1]:
        starts.append(starts[-1] + iv.duration_s)
    return [IntervalEstimateRow(e.index, profile.intervals[e.index].label, starts[e.index], e.duration_s,
                                e.fast.iops if e.fast and e.offered_iops is None else (e.offered_iops or 0.0),
                                e.p99_estimate_us if math.isfinite(e.p99_estimate_us) else None) for e in est.intervals]


def replay_ios(est: ProfileEstimate) -> float:
    """About how many I/Os a replay of the whole profile simulates (each interval's throughput x its length)."""
    return sum(e.fast.iops * e.duration_s for e in est.intervals if e.fast is not None and math.isfinite(e.fast.iops))


def peak_verdict(p99: Metric, slo_us: float, validity: str) -> ObjectivePoint:
    """The peak interval's p99 against the objective (met / missed / uncertain by its 95% interval; a run that is not
    final says so)."""
    from models.slo import verdict

    value = p99.value if math.isfinite(p99.value) else None
    low, high = (p99.ci95 if p99.has_ci else (None, None))
    return ObjectivePoint("peak interval", "latency_p99_us", "max", slo_us, value=value, low=low, high=high,
                          verdict=verdict("max", slo_us, value, low, high), validity=validity)


def peak_sentence(index: int, label: str, point: ObjectivePoint) -> str:
    from app.axes import us_words

    figure = us_words(point.value) if point.value is not None else "-"
    if point.low is not None and point.high is not None:
        figure += f" (95% interval {us_words(point.low)} .. {us_words(point.high)})"
    return (f"**Peak interval {index}**{f' ({label})' if label else ''}: p99 {figure} against the p99 objective of "
            f"{us_words(point.bound)}: **{verdict_words(point.verdict, point.validity)}**.")


def simulate_peak(scenario: Scenario, profile: ProfileWorkload, est: ProfileEstimate, slo_us: float) -> ObjectivePoint | None:
    """The peak interval simulated as its own steady state (long intervals settle: their steady state is their
    answer), in the worker pool, cached; its p99 against the objective."""
    from sim.plan.profile_fast import interval_scenario

    peak = est.peak_index
    try:
        result = runner.simulate_one(interval_scenario(scenario, profile, peak), label="simulating the peak interval")
    except RuntimeError as exc:
        st.error(f"The simulation of the peak interval failed: {exc}", icon=":material/error:")
        return None
    validity = validity_of(result)
    point = peak_verdict(result.latency_p99_us, slo_us, validity)
    st.markdown(peak_sentence(peak, profile.intervals[peak].label, point))
    if not is_final(validity):
        st.warning(f"{badge(validity)}: {note_of(result)}", icon=":material/warning:")
    st.caption(f"Simulated as a steady state: {result.simulated_ios:,} I/Os, {result.stop_reason}; seed {result.seed}. "
               f"{limiting_sentence(result.bottleneck, result.utilization.get(result.bottleneck, math.nan))}.")
    return point


def replay(scenario: Scenario, slo_us: float) -> None:
    """Run the DES replay (in the worker pool, cached) and draw latency over time."""
    try:
        result = runner.simulate_one(scenario, label="replaying the profile")
    except RuntimeError as exc:
        st.error(f"The replay failed: {exc}", icon=":material/error:")
        return
    from app.words import component_words

    summary = result.summary()
    peak = result.peak_interval
    st.plotly_chart(charts.latency_over_time_chart(summary["intervals"], slo_us, peak.index if peak else None,
                                                   title=f"{scenario.name or 'profile'}: latency over time"
                                                   + (" (all workloads)" if result.workloads else "")), key="timeline:chart")
    for name, w in (result.workloads or {}).items():  # a profile among several workloads: each one over the same intervals
        if w.intervals is not None:
            own = summary["workloads"][name]
            st.plotly_chart(charts.latency_over_time_chart(own["intervals"], slo_us, w.peak_interval.index if w.peak_interval else None,
                                                           title=f"workload {name} ({w.kind}): latency over time"),
                            key=f"timeline:chart:{name}")
    if peak is not None and result.intervals:
        point = peak_verdict(result.intervals[peak.index].metrics["latency_p99_us"], slo_us, validity_of(result))
        st.markdown(peak_sentence(peak.index, result.intervals[peak.index].label, point) + f" ({peak.reason})")
    if result.validity != "precise" or result.validity_note:
        st.caption(f"{result.validity}: {result.validity_note}")
    st.caption(result.stop_reason)
    rows = [{"interval": iv["index"], "label": iv["label"], "start (s)": iv["start_s"], "offered IOPS": iv["offered_iops"],
             "IOPS": iv["iops"]["value"], "MB/s": iv["mbps"]["value"], "mean (us)": iv["latency_mean_us"]["value"],
             "p99 (us)": iv["latency_p99_us"]["value"], "p99 95% CI": _ci(iv["latency_p99_us"]),
             "backlog at end": iv["backlog_end"], "busiest": f"{component_words(iv['busiest'])} {iv['busiest_utilization']:.0%}"}
            for iv in summary["intervals"]]
    st.dataframe(rows, hide_index=True, width="stretch")


def _ci(m: dict[str, Any]) -> str:
    if m.get("ci95"):
        return f"{m['ci95'][0]:,.0f} .. {m['ci95'][1]:,.0f}"
    return m.get("ci95_note", "-")


def growth(scenario: Scenario, slo_us: float) -> None:
    """The growth query: how far the load can grow, and when at a yearly rate."""
    st.subheader("Growth")
    c1, c2, c3 = st.columns(3)
    rate = c1.number_input("Load growth per year (%)", min_value=1.0, max_value=1000.0, value=25.0, step=5.0, key="timeline:rate")
    start = c2.date_input("Today's load measured on", value=dt.date.today(), key="timeline:start")
    verify = c3.checkbox("Check the breaking point with the simulation", value=True, key="timeline:verify")
    if not st.button("Find the breaking point", key="timeline:growth", icon=":material/trending_up:"):
        return
    try:
        doc = json.loads(runner.run_job(jobs.growth_json, scenario.model_dump_json(), slo_us, verify, label="growth search",
                                        budget_s=scenario.run.max_wall_s * 4))
    except Exception as exc:
        st.error(f"The growth search failed: {type(exc).__name__}: {exc}", icon=":material/error:")
        return
    factor = doc["breaking_factor"]
    st.plotly_chart(charts.growth_chart(doc["fast_curve"], slo_us, factor, doc["des"]), key="timeline:growth_chart")
    if factor is None:
        st.markdown(doc["note"])
        return
    years = math.log(factor) / math.log1p(rate / 100)
    date = date_after(start, years)
    when = "already broken today" if years < 0 else (
        f"after {years:,.1f} years at {rate:g}% a year: on {date.isoformat() if date else 'a date beyond year 9999'}")
    check = "confirmed by the simulation" if doc["des_confirmed"] else ("fast path only" if not doc["des"] else
                                                                         "moved by the simulation")
    st.markdown(f"The p99 SLO breaks at **x{factor:.3g}** today's load ({(factor - 1):+.0%}, {check}): **{when}**.")
    if doc["des"]:
        des_factor = doc["breaking_factor_des"]
        des_words = f"x{des_factor:.3g}" if des_factor is not None else "not found"
        st.caption(f"Breaking point by the fast path x{doc['breaking_factor_fast']:.3g}, by the simulation {des_words}; "
                   f"the date uses the {'simulation' if doc['trusted'] == 'des' else 'fast path'}'s: "
                   f"{doc['trusted_because']}.")


def over_time(scenario: Scenario, profile: ProfileWorkload, slo_us: float) -> None:
    """The fast path's every interval at once; then the simulation: a replay of the whole profile when it is short,
    else the peak interval as its own steady state (a day of intervals is billions of I/Os)."""
    est = fast_table(scenario, profile)
    rows = estimate_rows(profile, est)
    ios = replay_ios(est)
    chart = st.empty()
    chart.plotly_chart(interval_objective_chart(rows, slo_us, est.peak_index), key="timeline:estimates")
    if ios <= MAX_REPLAY_IOS:
        if st.button("Replay with the simulation", key="timeline:replay", type="primary", icon=":material/play_arrow:") \
                or runner.cached(scenario) is not None:
            replay(scenario, slo_us)
        return
    st.caption(f"A replay of all {len(profile.intervals)} intervals ({profile.duration_s / 3600:,.1f} h) would simulate "
               f"about {ios:,.0f} I/Os. The fast path above answers every interval; the simulation runs the peak interval "
               f"(interval {est.peak_index}, {est.peak_reason}) as its own steady state, to its precision target.")
    from sim.plan.profile_fast import interval_scenario

    if st.button("Simulate the peak interval", key="timeline:peak", type="primary", icon=":material/play_arrow:") \
            or runner.cached(interval_scenario(scenario, profile, est.peak_index)) is not None:
        point = simulate_peak(scenario, profile, est, slo_us)
        if point is not None:
            chart.plotly_chart(interval_objective_chart(rows, slo_us, est.peak_index, point,
                                                        title="p99 per interval against the objective: fast path, "
                                                              "and the simulation of the peak"),
                               key="timeline:estimates_des")


def render() -> None:
    st.title("Load over time")
    st.caption("Replay a load profile (iostat or CSV intervals, or written by hand) through the simulation, see every "
               "interval's p99 against the SLO, and find how far the load can grow before the SLO breaks.")
    options = sources()
    source = st.selectbox("Configuration", list(options), key="timeline:source", format_func=lambda k: options[k])
    scenario, problems = load(source)
    if scenario is None:
        show_problems(problems)
        return
    slo_us = float(st.number_input("p99 SLO (us)", min_value=1.0, max_value=1e8, value=DEFAULT_SLO_US, step=100.0,
                                   key="timeline:slo"))
    where = scenario.profile_index()
    if where is not None:
        wl = scenario.all_workloads()[where]
        assert isinstance(wl, ProfileWorkload)
        beside = [name for name, other in scenario.named_workloads() if other is not wl]
        st.caption(f"{len(wl.intervals)} intervals over {wl.duration_s:g} s of simulated time"
                   + (f", next to the steady workload(s) {', '.join(beside)}" if beside else ""))
        over_time(scenario, wl, slo_us)
    else:
        st.info("This configuration's load is steady: the growth search below applies; for load over time give it a "
                "profile workload (`flashplan import iostat FILE --profile` or `flashplan import csv`).")
    growth(scenario, slo_us)
