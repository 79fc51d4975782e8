"""Compare: two to four configurations under the same workload, side by side, with their price-performance.

The default is the source paper's comparison (seed 000) as calibrated: four PM1733 drives in
md RAID-10 on a LinuxONE against four FCP LUNs of a DS8950F, under YCSB with the fitted think
time per I/O; the page states these conditions above its headline. Only precise results are
priced and compared. Price-performance
is the cost per unit of throughput of each configuration against the first
(``models.cost.price_performance``); with the seed-000 convention the storage server is
charged only for the raw capacity the direct-attached side has, and host adapters are
left out ("storage costs", seed 000 section 4.2).
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st
from pydantic import TypeAdapter

from app import charts, forms, runner
from app.naming import display_name, plain, scenario_name
from app.presets import preset_data
from app.validity import badge, is_final, note_of, validity_of
from app.views.common import SIZE_SOURCE, load_source, scenario_sources, show_problems
from app.words import BUSIEST, busiest_words
from models.cost import CostError, capex, price_performance_between, usd_per_kiops
from models.presets import PRESETS
from models.result import Result
from models.scenario import Scenario, with_overrides
from models.topology import San
from models.workload import Workload

DEFAULT_SOURCES = ("paper:s1_ycsb_nvme.yaml", "paper:s1_ycsb_fcp.yaml",
                   "example:s5_fs9100_nvmefc.yaml", "example:s3_exflash_4dimms.yaml")
"""The source paper's setup (seed 000, think time as calibrated) first, then two more attachments."""
SAME_PCT = 1.0
"""Price-performance within this many percent is called the same."""
OWN_WORKLOAD = "own"
FIRST_WORKLOAD = "first"
RAN = "compare.ran"


def common_workload(scenarios: list[Scenario], choice: str) -> list[Scenario]:
    """Give every configuration the same workload: configuration 1's or a preset's."""
    if choice == OWN_WORKLOAD:
        return scenarios
    workload = scenarios[0].workload if choice == FIRST_WORKLOAD else TypeAdapter(Workload).validate_python(preset_data(choice))
    out = []
    for s in scenarios:
        if s.workload == workload:
            out.append(s)
            continue
        # a new workload: the name follows it (a name naming another workload would mislead)
        moved = s.model_copy(update={"workload": workload.model_copy(deep=True), "name": ""})
        out.append(moved.model_copy(update={"name": scenario_name(moved)}))
    return out


def comparison_rows(scenarios: list[Scenario], results: list[Result | str], seed_convention: bool) -> list[dict[str, Any]]:
    """One row per configuration: metrics with CIs, cost, $/KIOPS, and price-performance against the first."""
    rows: list[dict[str, Any]] = []
    base_scenario, base_result = scenarios[0], results[0]
    for i, (s, r) in enumerate(zip(scenarios, results, strict=True)):
        row: dict[str, Any] = {"#": i + 1, "name": display_name(s), "attachment": s.topology.kind}
        if isinstance(r, str):
            row["error"] = r
            rows.append(row)
            continue
        validity = validity_of(r)
        row.update(iops=r.iops.value, iops_lo=r.iops.ci95[0], iops_hi=r.iops.ci95[1], mbps=r.mbps.value,
                   latency_mean_us=r.latency_mean_us.value, latency_p99_us=r.latency_p99_us.value,
                   cpu_us_per_io=r.cpu_us_per_io.value, bottleneck=r.bottleneck, validity=validity,
                   bottleneck_utilization=r.utilization.get(r.bottleneck, math.nan))
        if not is_final(validity):
            row["validity_note"] = note_of(r)
        try:
            cost = capex(s.topology)  # type: ignore[arg-type]
            per = usd_per_kiops(cost.total_usd, r.iops.value) if is_final(validity) else None
            row.update(cost_usd=cost.total_usd, usd_per_kiops=per, usable_tb=cost.usable_tb)
        except (CostError, KeyError, ValueError):
            row.update(cost_usd=None, usd_per_kiops=None, usable_tb=None)
        base_final = isinstance(base_result, Result) and is_final(validity_of(base_result))
        if i > 0 and not (base_final and is_final(validity)):
            row["price_performance_note"] = "not compared: " + ("this result" if base_final else "#1's result") + \
                " is not precise (cut short or unstable); run it at a higher precision"
        elif i > 0 and isinstance(base_result, Result) and row.get("cost_usd"):
            one_san = isinstance(s.topology, San) != isinstance(base_scenario.topology, San)
            try:
                cmp = price_performance_between(s, r.iops.value, base_scenario, base_result.iops.value,
                                                storage_only=seed_convention, equal_raw_capacity=seed_convention and one_san)
                row["cost_per_kiops_vs_1"] = cmp.result.cost_per_unit_a / cmp.result.cost_per_unit_b
                row["price_performance_vs_1"] = cmp.result.better_pct
                row["compared_cost_usd"] = cmp.capex_a.total_usd
                row["compared_base_cost_usd"] = cmp.capex_b.total_usd
            except (CostError, KeyError, ValueError) as exc:
                row["price_performance_note"] = str(exc)
        rows.append(row)
    return rows


def best_row(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The configuration with the lowest $/KIOPS among the precise results (None if no precise one is priced)."""
    priced = [r for r in rows if r.get("validity") == "precise" and r.get("usd_per_kiops") is not None]
    return min(priced, key=lambda r: r["usd_per_kiops"]) if priced else None


def conditions(scenarios: list[Scenario], choice: str, precision: str, seed_convention: bool) -> str:
    """What the comparison holds fixed, in one sentence: the workload (think time included), the precision, the prices."""
    wl = scenarios[0].workload
    same = all(s.workload == wl for s in scenarios)
    if same:
        text = forms.workload_summary(wl.model_dump(mode="json"))
        think = getattr(wl, "think_time_us", 0.0) or 0.0
        text += f", think time {think:,.0f} us per I/O" if think else ", no think time (every thread issues its next I/O at once)"
    else:
        text = "each configuration under its own workload"
    prices = ("seed 000 price convention (storage only, the SAN server charged for the NVMe side's raw capacity)"
              if seed_convention else "full catalog list prices")
    return f"Conditions: {text}; precision {precision.split(':')[0].lower()}; {prices}."


def throughput_sentence(base: dict[str, Any], row: dict[str, Any]) -> str:
    """#1 against #n in throughput, #1 named first."""
    gap = row["iops"] / base["iops"] - 1.0 if base.get("iops") else math.nan
    if not math.isfinite(gap):
        return ""
    if abs(gap) < 0.005:
        how = "the same throughput as"
    else:
        how = f"{abs(gap):.0%} {'more' if gap > 0 else 'less'} throughput than"
    return f"**#{row['#']} {plain(row['name'])}** delivers {row['iops']:,.0f} IOPS: {how} **#1 {plain(base['name'])}** ({base['iops']:,.0f})."


def price_performance_sentence(base: dict[str, Any], row: dict[str, Any], seed_convention: bool) -> str:
    """Seed 000's reading: "A has x% better price-performance than B" = A's cost per unit of throughput is x% lower."""
    ratio = row["cost_per_kiops_vs_1"]
    if abs(1.0 - ratio) * 100 < SAME_PCT:
        return (f"**#1 {plain(base['name'])}** and **#{row['#']} {plain(row['name'])}** have **the same price-performance** "
                f"(cost per IOPS within {SAME_PCT:g}%{'; seed 000 convention' if seed_convention else ''}).")
    better, worse = ((f"#{row['#']} {plain(row['name'])}", f"#1 {plain(base['name'])}") if ratio < 1
                     else (f"#1 {plain(base['name'])}", f"#{row['#']} {plain(row['name'])}"))
    pct = 100.0 * (1.0 - min(ratio, 1.0 / ratio))
    return (f"**{better}** has **{pct:.0f}% better price-performance** than **{worse}**: its cost per IOPS is "
            f"{max(ratio, 1.0 / ratio):.3g}x lower (${row['compared_cost_usd']:,.0f} for {row['iops']:,.0f} IOPS against "
            f"${row['compared_base_cost_usd']:,.0f} for {base['iops']:,.0f} IOPS{'; seed 000 convention' if seed_convention else ''}).")


def _table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        if "error" in r:
            out.append({"#": r["#"], "configuration": r["name"], "IOPS": None, "error": r["error"]})
            continue
        pp = r.get("price_performance_vs_1")
        out.append({
            "#": r["#"], "configuration": r["name"], "result": badge(r.get("validity", "unknown")), "attachment": r["attachment"],
            "IOPS": round(r["iops"]), "IOPS 95% CI": f"{r['iops_lo']:,.0f} .. {r['iops_hi']:,.0f}",
            "MB/s": round(r["mbps"], 1), "latency mean (us)": round(r["latency_mean_us"], 1), "latency p99 (us)": round(r["latency_p99_us"], 1),
            "CPU us per I/O": round(r["cpu_us_per_io"], 2), "cost $": r.get("cost_usd"), "$ per KIOPS": r.get("usd_per_kiops"),
            "usable TB": r.get("usable_tb"),
            "cost per IOPS vs #1": "baseline" if r["#"] == 1 else (f"{r['cost_per_kiops_vs_1']:.3g}x"
                                                                 if pp is not None and math.isfinite(pp) else "-"),
            BUSIEST: busiest_words(r["bottleneck"], r.get("bottleneck_utilization")),
        })
    return out


def _pick_configurations(sources: dict[str, str]) -> tuple[list[Scenario], bool]:
    """The configurations picked (2 to 4 columns), and whether one of them failed to load (its problems shown)."""
    count = st.segmented_control("Configurations", [2, 3, 4], default=2, key="compare:count") or 2
    defaults = [s for s in DEFAULT_SOURCES if s in sources] + [SIZE_SOURCE] * 4
    cols = st.columns(count)
    scenarios: list[Scenario] = []
    problems_seen = False
    for i in range(count):
        key = f"compare:source:{i}"
        if st.session_state.get(key) not in sources:
            st.session_state[key] = defaults[i]
        source = cols[i].selectbox(f"Configuration {i + 1}", list(sources), key=key, format_func=lambda k: sources[k])
        scenario, problems = load_source(source)
        if scenario is None:
            show_problems(problems, cols[i])
            problems_seen = True
            continue
        cols[i].caption(f"{forms.ATTACHMENTS.get(scenario.topology.kind, scenario.topology.kind)}; "
                        f"{forms.workload_summary(scenario.workload.model_dump(mode='json'))}")
        scenarios.append(scenario)
    return scenarios, problems_seen


def _show_comparison(rows: list[dict[str, Any]], prepared: list[Scenario], choice: str, precision: str, seed_convention: bool) -> None:
    """The comparison table, its conditions and warnings, the chart and the sentences comparing each configuration with #1."""
    st.dataframe(_table(rows), hide_index=True, width="stretch",
                 column_config={"cost $": st.column_config.NumberColumn(format="$%,.0f"),
                                "$ per KIOPS": st.column_config.NumberColumn(format="$%,.2f"),
                                "usable TB": st.column_config.NumberColumn(format="%.2f")})
    st.markdown(conditions(prepared, choice, precision, seed_convention))
    for r in rows:
        if r.get("validity_note"):
            st.warning(f"#{r['#']} {plain(r['name'])}: {badge(r['validity'])}: {r['validity_note']}.", icon=":material/warning:")
    good = [r for r in rows if "error" not in r]
    if good:
        st.plotly_chart(charts.comparison_chart(good), key="compare:chart")
    for r in rows[1:]:
        if "iops" in r and "iops" in rows[0]:
            st.markdown(throughput_sentence(rows[0], r))
        pp = r.get("price_performance_vs_1")
        if pp is None or not math.isfinite(pp):
            if r.get("price_performance_note"):
                st.caption(f"#{r['#']}: no price-performance: {r['price_performance_note']}")
            continue
        st.markdown(price_performance_sentence(rows[0], r, seed_convention))


def render() -> None:
    st.title("Compare configurations")
    st.caption("Two to four configurations under the same workload, side by side. Build a configuration on the Size page or "
               "save it to the library, then pick it here.")
    sources = scenario_sources()
    scenarios, problems_seen = _pick_configurations(sources)
    c1, c2, c3 = st.columns([2, 2, 1])
    options = [FIRST_WORKLOAD, OWN_WORKLOAD, *PRESETS]
    labels = {FIRST_WORKLOAD: "Configuration 1's workload for all", OWN_WORKLOAD: "Each configuration's own workload",
              **{k: f"Preset: {p.title}" for k, p in PRESETS.items()}}
    choice = c1.selectbox("Workload", options, key="compare:workload", format_func=lambda k: labels[k])
    precision = c2.selectbox("Precision", list(forms.PRECISIONS), key="compare:precision")
    seed_convention = c3.checkbox("Seed 000 price convention", value=True, key="compare:convention",
                                  help="Storage costs only (no host adapters); a SAN server charged for the raw capacity of the "
                                       "direct-attached side it is compared with.")
    if choice == FIRST_WORKLOAD and scenarios:
        st.caption(f"Workload for all: {forms.workload_summary(scenarios[0].workload.model_dump(mode='json'))}"
                   + (f", think time {scenarios[0].workload.think_time_us:,.0f} us per I/O"  # type: ignore[union-attr]
                      if getattr(scenarios[0].workload, "think_time_us", 0) else "") + ".")
    if problems_seen or len(scenarios) < 2:
        st.error("Every configuration must load before they can be compared.")
        return
    run = forms.PRECISIONS[precision]
    prepared = [with_overrides(s, {f"run.{k}": v for k, v in run.items()}) for s in common_workload(scenarios, choice)]
    keys = [runner.scenario_key(s) for s in prepared]
    if st.button("Compare", type="primary", key="compare:run", icon=":material/compare_arrows:"):
        runner.forget("result")  # results that were not final run again
        st.session_state[RAN] = keys
    if st.session_state.get(RAN) != keys:
        if st.session_state.get(RAN):
            st.info("The choices changed: press **Compare** to run them.")
        return
    results = runner.simulate_many(prepared, label="Simulating the configurations")
    rows = comparison_rows(prepared, results, seed_convention)
    _show_comparison(rows, prepared, choice, precision, seed_convention)
    st.caption("Prices are catalog list-price assumptions (see the catalog's price sources); throughput is the simulated IOPS.")
