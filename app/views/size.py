"""Size: pick the platform, attachment and workload, simulate, and read the answer with its error bars.

The answer: IOPS, MB/s, mean and p99 latency with 95% confidence intervals, host CPU per
I/O, purchase cost and $/KIOPS; component utilization with the bottleneck in red; the
latency-against-load curve of the fast path with the DES points (mean and p99) on it. A
result that is not precise (``app.validity``) carries its badge and gets no $/KIOPS; an open
load above capacity reads "unstable"; RAID over namespaces of one drive is flagged
(``models.placement``); a fio / iostat measurement can become the baseline (``app.baseline``).
From here the sizing can be saved to the library, downloaded as a scenario file, or exported
as an HTML report for the customer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from app import charts, forms, runner
from app.baseline import Baseline, comparison_rows, export_tables, gap_sentence, iostat_measured
from app.calibration_data import read_stored, system_of, system_summary
from app.library import LibraryError, export_scenario
from app.naming import display_name, plain
from app.report import sizing_report
from app.sizing import PriceFigures, des_point, des_scenarios, fast_curve, price_at_bound, price_of
from app.validity import Overload, badge, is_final, note_of, overload, validity_of, with_overload
from app.views.common import BASELINE_KEY, fmt, library, metric, result_table, show_problems
from app.views.faults import faults_section, show_failure_states
from app.words import component_words, limiting_sentence
from models.bottleneck import solvers_agree
from models.cost import AT_BOUND, AT_SIMULATED
from models.placement import check_placement
from models.result import Result
from models.scenario import Scenario
from models.topology import DirectNvme

SIZED = "size.sized"
SHARE = "size.share"
BASELINE = BASELINE_KEY
MAX_IMPORT_MB = 5


@st.cache_data(max_entries=256, show_spinner=False)
def _fast_curve(scenario_json: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    scenario = Scenario.model_validate_json(scenario_json)
    rows, base = fast_curve(scenario)
    return rows, {"x_max_iops": float(base.bounds.x_max_iops), "iops": float(base.iops),
                  "latency_mean_us": float(base.latency_mean_us), "bottleneck": str(base.bottleneck), "stable": bool(base.stable),
                  "bound_bottleneck": str(base.bounds.bottleneck),
                  "utilization": {str(k): float(v) for k, v in base.utilization.items()}}


def fast_path(scenario: Scenario) -> tuple[list[dict[str, Any]], dict[str, Any]] | str:
    """The fast path's curve and its answer at the sized load, or why it has none."""
    try:
        return _fast_curve(runner.scenario_key(scenario))
    except Exception as exc:  # the fast path may not model every topology; the DES still does
        return f"{type(exc).__name__}: {exc}"


def overload_of(scenario: Scenario) -> Overload | None:
    """An open load above the fast path's throughput bound (None when it is sustainable or the fast path has no answer)."""
    fast = fast_path(scenario)
    if isinstance(fast, str):
        return None
    base = fast[1]
    return overload(scenario, base["x_max_iops"], base["bottleneck"])


def fast_disagrees(scenario: Scenario, result: Result) -> str | None:
    """The fast path's bottleneck where it is not the DES's (``models.bottleneck.solvers_agree``), else None."""
    fast = fast_path(scenario)
    if isinstance(fast, str):
        return None
    base = fast[1]
    return None if solvers_agree(result.bottleneck, base["utilization"], base["bottleneck"]) else str(base["bottleneck"])


def hockey_stick(scenario: Scenario, result: Result, extra: list[tuple[str, Result]]) -> Any:
    fast = fast_path(scenario)
    points = [des_point(result, "sized load"), *(des_point(r, label) for label, r in extra)]
    if isinstance(fast, str):
        return charts.hockey_stick_chart([], points, title="Latency against load (DES points only)"), fast
    rows, base = fast
    return charts.hockey_stick_chart(rows, points, x_max_iops=base["x_max_iops"]), None


def calibration_for(kind: str) -> tuple[list[dict[str, Any]], str]:
    rows, meta = read_stored()
    summary = system_summary(rows, system_of(kind))
    when = meta.get("run_at") or ""
    note = f"Stored calibration run{' of ' + str(when) if when else ''}; the Calibration page shows every record." if rows else ""
    return summary, note


def current_baseline(scenario: Scenario | None = None) -> Baseline | None:
    """The session's baseline (a measurement with its system); with ``scenario``, only if it is that scenario's."""
    data = st.session_state.get(BASELINE)
    if not data:
        return None
    base = Baseline.from_dict(data)
    if scenario is not None and runner.scenario_key(base.scenario) != runner.scenario_key(scenario):
        return None
    return base


def build_report(scenario: Scenario, result: Result, share: float = 1.0, extra: list[tuple[str, Result]] | None = None,
                 baseline: Baseline | None = None) -> str:
    """The HTML report of a sizing (what the Export button downloads), with the baseline when this sizing is its base."""
    result = with_overload(result, overload_of(scenario))
    price = price_of(scenario, result, share)
    fig_util = charts.utilization_chart(result.utilization, result.bottleneck)
    fig_curve, _ = hockey_stick(scenario, result, extra or [])
    summary, note = calibration_for(scenario.topology.kind)
    base_rows = comparison_rows(baseline.measured, result) if baseline is not None else None
    placement = check_placement(scenario.topology) if isinstance(scenario.topology, DirectNvme) else None
    return sizing_report(scenario, result, price=price, figures=[fig_util, fig_curve], calibration=summary,
                         calibration_note=note, workload_text=forms.workload_summary(scenario.workload.model_dump(mode="json")),
                         baseline_rows=base_rows, baseline_source=baseline.source if baseline else "",
                         baseline_jobs=baseline.jobs if baseline else (),
                         fast_bottleneck=fast_disagrees(scenario, result),
                         warnings=[placement.warning()] if placement is not None and not placement.delivered else [])


def _price_metrics(cols: Sequence[Any], price: PriceFigures | None, result: Result, scenario: Scenario) -> None:
    if price is None:
        cols[1].metric("Purchase cost", "-", help="Not priced: a textbook topology or a catalog entry without a price.")
        cols[2].metric("$ per KIOPS", "-")
        cols[3].metric("Usable capacity", "-")
        return
    cols[1].metric("Purchase cost", f"${price.total_usd:,.0f}", help="Catalog list-price assumptions; hosts are not priced.")
    cols[1].caption(f"{len(price.capex.lines)} line items, see Cost below")
    validity = validity_of(result)
    if is_final(validity):
        lo, hi = price.usd_per_kiops_ci95
        cols[2].metric("$ per KIOPS", f"${price.usd_per_kiops:,.2f}",
                       help=f"SPC-1 price-performance {AT_SIMULATED}: price / thousands of simulated IOPS (as `flashplan cost`). "
                            f"The estimate below quotes it {AT_BOUND}, as the Plan page does.")
        cols[2].caption(f"{AT_SIMULATED}" + (f"; 95% CI ${lo:,.2f} .. ${hi:,.2f}" if math.isfinite(hi) else ""))
    else:
        cols[2].metric("$ per KIOPS", "-", help="Only a precise result gets a price-performance figure.")
        cols[2].caption(f"none: the result is {badge(validity)}")
    _usable_metric(cols[3], scenario, price.capex.usable_tb, price.capex.raw_tb)


def _usable_metric(where: Any, scenario: Scenario, usable_tb: float, raw_tb: float) -> None:
    """Usable capacity; for RAID over namespaces that share drives, the capacity with the protection actually delivered."""
    placement = check_placement(scenario.topology) if isinstance(scenario.topology, DirectNvme) else None
    if placement is not None and not placement.delivered:
        where.metric("Usable capacity (protected)", f"{placement.usable_tb_protected:,.2f} TB",
                     help=placement.warning())
        where.caption(f"as built {usable_tb:,.2f} TB, survives {placement.tolerated_drive_failures} drive failure(s); "
                      f"raw {raw_tb:,.2f} TB")
        return
    where.metric("Usable capacity", f"{usable_tb:,.2f} TB", help="After RAID / mirroring and namespace sizes.")
    where.caption(f"raw {raw_tb:,.2f} TB")


def show_sizing(scenario: Scenario, result: Result, share: float = 1.0, key: str = "size", allow_save: bool = True) -> None:
    """The answer of one sizing: metrics with CIs, charts, cost, and what can be done with it."""
    result = with_overload(result, overload_of(scenario))
    validity = validity_of(result)
    if is_final(validity):
        st.caption(f"{badge(validity)}: the run reached its precision target (±{scenario.run.target_rel_ci:.0%}).")
    elif validity in ("cut_short", "unknown"):
        st.warning(f"{badge(validity)}: {note_of(result)}; no price-performance is given.", icon=":material/warning:")
    else:
        st.error(f"{badge(validity)}: {note_of(result)}. The figures below only say how long the run lasted; no "
                 "price-performance is given.", icon=":material/error:")
    row = st.columns(4)
    metric(row[0], "IOPS", result.iops)
    metric(row[1], "MB/s", result.mbps)
    metric(row[2], "Latency mean", result.latency_mean_us, "us")
    metric(row[3], "Latency p99", result.latency_p99_us, "us")
    row = st.columns(4)
    metric(row[0], "Host CPU per I/O", result.cpu_us_per_io, "us")
    price = price_of(scenario, result, share)
    _price_metrics(row, price, result, scenario)
    cores = result.cpu_us_per_io.value * result.iops.value / 1e6
    other = fast_disagrees(scenario, result)
    fast_words = f" (the fast path's busiest component: {component_words(other)})" if other else ""
    st.caption(f"{limiting_sentence(result.bottleneck, result.utilization.get(result.bottleneck, math.nan))}{fast_words}; "
               f"host CPU {cores:,.2f} cores busy. Run: {result.stop_reason}; {result.simulated_ios:,} I/Os simulated, seed {result.seed}.")

    scenario_json = runner.scenario_key(scenario)
    extra_key = f"{key}.des_points"
    extra: list[tuple[str, Result]] = []
    if st.session_state.get(extra_key) == scenario_json:
        fp = fast_path(scenario)
        sims = des_scenarios(scenario, None if isinstance(fp, str) else fp[1]["x_max_iops"])
        outcomes = runner.simulate_many([s for _, s in sims], label="Simulating more loads")
        extra = [(label, r) for (label, _), r in zip(sims, outcomes, strict=True) if isinstance(r, Result)]
        for (label, _), r in zip(sims, outcomes, strict=True):
            if isinstance(r, str):
                st.warning(f"{label}: {r}")
    left, right = st.columns(2)
    left.plotly_chart(charts.utilization_chart(result.utilization, result.bottleneck), key=f"{key}:util_chart")
    fig, why = hockey_stick(scenario, result, extra)
    right.plotly_chart(fig, key=f"{key}:curve_chart")
    if why:
        right.caption(f"No fast-path curve for this scenario ({why}).")
    elif not extra and right.button("Add DES points at three more loads", key=f"{key}:add_des",
                                    help="Simulates light, medium and heavy load to check the fast path's curve."):
        st.session_state[extra_key] = scenario_json
        st.rerun()

    with st.expander("Every metric with its 95% confidence interval"):
        st.caption(f"Result: {badge(validity)}" + (f" ({note_of(result)})" if not is_final(validity) else ""))
        st.dataframe(result_table(result), hide_index=True, width="stretch")
    if price is not None:
        with st.expander("Cost, line by line"):
            st.dataframe([{"item": ln.item, "model": ln.model, "quantity": ln.quantity, "unit $": ln.unit_usd, "total $": ln.total_usd,
                           "price source": ln.source} for ln in price.capex.lines], hide_index=True, width="stretch")
            for note in price.capex.notes:
                st.caption(note)
    with st.expander("Scenario file"):
        st.code(export_scenario(scenario), language="yaml")

    c1, c2, c3 = st.columns(3)
    name = display_name(scenario)
    slug = "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-") or "sizing"
    base = current_baseline(scenario)
    c1.download_button("Export HTML report", data=lambda: build_report(scenario, result, share, extra, base),
                       file_name=f"{slug}-report.html", mime="text/html", key=f"{key}:report", icon=":material/description:")
    c2.download_button("Download scenario (YAML)", data=export_scenario(scenario), file_name=f"{slug}.yaml",
                       mime="application/x-yaml", key=f"{key}:yaml")
    if allow_save:
        with c3.expander("Save to library", icon=":material/save:", key=f"{key}:save_box", on_change="rerun"):
            _save_box(scenario, result, key)


def _save_box(scenario: Scenario, result: Result, key: str) -> None:
    name = st.text_input("Name", value=display_name(scenario), key=f"{key}:save_name")
    notes = st.text_area("Notes", key=f"{key}:save_notes", height=80)
    with_result = st.checkbox("Save this result with it", value=True, key=f"{key}:save_result")
    overwrite = st.checkbox("Replace a saved scenario of the same name", value=False, key=f"{key}:save_overwrite")
    slot = st.empty()
    if st.button("Save", key=f"{key}:save", type="primary"):
        try:
            lib = library()
            sid = lib.save_scenario(name, scenario.model_copy(update={"name": " ".join(name.split())}), notes=notes, overwrite=overwrite)
            if with_result:
                lib.save_result(sid, result, label=f"{result.iops.value:,.0f} IOPS, seed {result.seed}")
        except LibraryError as exc:
            show_problems(exc.problems, slot)
        else:
            saved = " ".join(name.split())
            slot.success(f"Saved as '{plain(saved)}'. Open it from the Scenario library.")
            st.toast(f"Saved '{plain(saved)}' to the library", icon=":material/save:")


def import_measured_workload(where: Any) -> None:
    """Upload fio JSON or ``iostat -x`` output and size with the workload it measured (``calibration.importers``)."""
    from calibration.importers import MeasurementFileError, workload_data
    from calibration.importers.fio import parse_fio
    from calibration.importers.iostat import parse_iostat

    box = where.expander("Import a measured workload (fio JSON, iostat -x)")
    kind = box.radio("File", ["fio", "iostat"], horizontal=True, key="size.import_kind",
                     format_func=lambda k: {"fio": "fio --output-format=json", "iostat": "iostat -x (one or more reports)"}[k])
    upload = box.file_uploader("Measurement file", type=["json", "txt", "log", "out"], key=f"size.import_file.{kind}",
                               max_upload_size=MAX_IMPORT_MB)
    if upload is None:
        return
    try:
        if kind == "fio":
            fio = parse_fio(upload.getvalue(), origin=upload.name)
            jobs = {j.group: j for j in fio.jobs}
            group = box.selectbox("Job group", list(jobs), key="size.import_job",
                                  format_func=lambda g: f"{jobs[g].name} (group {g})") if len(jobs) > 1 else next(iter(jobs))
            job = jobs[group]
            measured = job.measured
            box.caption(f"{job.describe_workload()}. fio measured {measured['iops']:,.0f} IOPS"
                        + (f" at {measured['latency_mean_us']:,.1f} us mean" if "latency_mean_us" in measured else "") + ".")
            notes = [*fio.notes, *job.notes]
            workload = job.workload
            source = f"fio job '{job.name}' in {upload.name}"
            jobs_against = _exported_jobs(box, fio)
        else:
            report = parse_iostat(upload.getvalue(), origin=upload.name)
            by = box.radio("Size for the peak of", ["iops", "mbps"], horizontal=True, key="size.import_peak",
                           format_func=lambda b: {"iops": "IOPS", "mbps": "MB/s"}[b])
            load = box.radio("As", ["open", "closed"], horizontal=True, key="size.import_load",
                             format_func=lambda k: {"open": "its arrival rate (open)", "closed": "its queue size (closed)"}[k])
            peak = report.peak(by)
            summary = peak.summary()
            box.caption(f"{peak.label()} on {', '.join(report.devices)}: {summary['iops']:,.0f} IOPS, {summary['mbps']:,.1f} MB/s, "
                        f"{summary['read_fraction']:.0%} reads.")
            notes = list(report.notes)
            workload = peak.workload(load)
            measured = iostat_measured(summary)
            source = f"iostat {peak.label()} in {upload.name}"
            jobs_against = []
    except MeasurementFileError as exc:
        show_problems(exc.problems, box)
        return
    for note in notes:
        box.caption(note)
    c1, c2 = box.columns(2)
    if c1.button("Use this workload", key="size.import_use", icon=":material/input:"):
        forms.apply_workload(workload_data(workload))
        st.rerun()
    if c2.button("Make it the baseline", key="size.import_baseline", icon=":material/straighten:",
                 help="The measurement was taken on the configuration at left: size that configuration with the measured "
                      "workload and show measured against predicted, with the gap. What-if and the report carry it along."):
        make_baseline(box, source, measured, workload_data(workload), jobs_against)


def _exported_jobs(box: Any, fio: Any) -> list[dict[str, Any]]:
    """With the manifest.json of ``flashplan export fio``: each job of the result beside its exported prediction."""
    from models.loading import BadInput

    manifest = box.file_uploader("Its export's manifest.json (flashplan export fio), to compare every job", type=["json"],
                                 key="size.import_manifest", max_upload_size=MAX_IMPORT_MB)
    if manifest is None:
        return []
    try:
        tables = export_tables(fio, manifest.getvalue(), manifest.name)
    except BadInput as exc:
        show_problems(exc.problems, box)
        return []
    show_export_tables(tables, box)
    return tables


def show_export_tables(tables: list[dict[str, Any]], where: Any) -> None:
    for table in tables:
        where.caption(table["title"])
        where.dataframe(table["rows"], hide_index=True, width="stretch",
                        column_config={"measured": st.column_config.NumberColumn(format="%,.1f"),
                                       "predicted": st.column_config.NumberColumn(format="%,.1f")})


def make_baseline(where: Any, source: str, measured: dict[str, float], workload: dict[str, Any],
                  jobs: list[dict[str, Any]] | None = None) -> None:
    """The configuration on the page with the measured workload becomes the base model; it is sized at once."""
    from pydantic import ValidationError

    from calibration.importers import scenario_with_workload
    from models.scenario import ScenarioFileError, format_validation_error

    data = forms.draft()
    try:
        scenario = scenario_with_workload(data, workload_from_data(workload))
    except ValidationError as exc:
        show_problems(format_validation_error(exc), where)
        return
    except ScenarioFileError as exc:
        show_problems(exc.problems, where)
        return
    forms.apply_workload(workload)
    base = Baseline(source, measured, runner.scenario_key(scenario), list(jobs or []))
    st.session_state[BASELINE] = base.as_dict()
    st.session_state[SIZED] = base.scenario_json
    st.session_state[SHARE] = 1.0
    st.rerun()


def workload_from_data(workload: dict[str, Any]) -> Any:
    from pydantic import TypeAdapter

    from models.workload import Workload

    return TypeAdapter(Workload).validate_python(workload)


def show_baseline(base: Baseline, result: Result) -> None:
    """Measured vs predicted for the base model, with the gap."""
    st.subheader("Baseline: measured against predicted")
    rows = comparison_rows(base.measured, result)
    st.caption(f"Measurement: {base.source}, on the configuration above. {gap_sentence(rows)}. The What-if page starts "
               "from this base, and the report carries the table.")
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_config={"measured": st.column_config.NumberColumn(format="%,.1f"),
                                "predicted": st.column_config.NumberColumn(format="%,.1f")})
    if base.jobs:
        st.markdown("**fio jobs against the predictions they were exported with** (error = predicted / measured - 1)")
        show_export_tables(base.jobs, st)


def _fast_estimate(scenario: Scenario, share: float, where: DeltaGenerator) -> None:
    """The fast path's instant estimate under the Size button: overloaded, or its figures and price at the bound."""
    fast = fast_path(scenario)
    if not isinstance(fast, str):
        base = fast[1]
        over = overload(scenario, base["x_max_iops"], base["bottleneck"])
        if over is not None:
            where.error(f"Fast-path estimate: {over.sentence()}. The queue grows without bound at this rate: lower it or add "
                     "hardware. No price-performance is shown for an overloaded configuration.", icon=":material/error:")
        else:
            at_bound = price_at_bound(scenario, base["x_max_iops"], share)
            bound_price = f"; ${at_bound:,.2f} per KIOPS at that bound" if at_bound is not None else ""
            where.caption(f"Fast-path estimate (queueing model, instant): {fmt(base['iops'])} IOPS at {fmt(base['latency_mean_us'])} us "
                       f"mean, throughput bound {fmt(base['x_max_iops'])} IOPS (set by {component_words(base['bound_bottleneck'])})"
                       f"{bound_price}. Size it runs the simulation.")


def render() -> None:
    st.title("Size a configuration")
    st.caption("Pick the platform, the attachment and the workload, then **Size it**. Every figure comes with its 95% confidence "
               "interval; prices are catalog list-price assumptions.")
    form = forms.ScenarioForm(forms.draft())
    form.general = st.container()
    name_box = st.container()
    left, right = st.columns(2, gap="large")
    left.subheader("Platform and attachment")
    form.topology(left)
    placement_box = left.container()
    right.subheader("Workload")
    shown_preset = forms.preset_picker(right)
    import_measured_workload(right)
    form.workload(right)
    form.name(name_box)
    st.subheader("Run")
    form.run_settings(st.container())
    faults_section(form.data, st.container())
    scenario, problems = form.validate()
    st.session_state[f"size.{forms.DRAFT}"] = form.data
    if forms.matching_preset(form.data.get("workload")) != shown_preset:
        st.rerun()  # the workload was edited into (or out of) a preset: show the picker right
    share = float(form.extras.get("storage_server_share") or 1.0)
    if scenario is not None and isinstance(scenario.topology, DirectNvme):
        placement = check_placement(scenario.topology)
        if not placement.delivered:
            placement_box.warning(placement.warning(), icon=":material/warning:")

    c1, c2 = st.columns([1, 4])
    clicked = c1.button("Size it", type="primary", key="size:run", disabled=scenario is None, icon=":material/speed:")
    if problems:
        c2.error(f"{len(problems)} problem(s): see the message under each field marked in red.")
    elif scenario is not None:
        _fast_estimate(scenario, share, c2)
    if clicked and scenario is not None:
        runner.forget("result")  # a result that was not final runs again
        st.session_state[SIZED] = runner.scenario_key(scenario)
        st.session_state[SHARE] = share

    sized_json = st.session_state.get(SIZED)
    if not sized_json:
        return
    sized = Scenario.model_validate_json(sized_json)
    st.divider()
    st.subheader(f"Sizing: {plain(display_name(sized))}")
    if scenario is None or runner.scenario_key(scenario) != sized_json:
        st.info("The fields changed since this sizing: press **Size it** to update it.")
    try:
        result = runner.simulate_one(sized, label="Simulating")
    except RuntimeError as exc:
        st.error(f"The simulation ended without a result: {exc}")
        return
    baseline = current_baseline(sized)
    if baseline is not None:
        show_baseline(baseline, result)
    show_sizing(sized, result, float(st.session_state.get(SHARE, 1.0)))
    if sized.faults is not None:
        show_failure_states(sized)
