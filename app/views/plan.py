"""Plan: state the requirements (platform, workload, throughput, latency SLO, capacity, protection, budget)
and get the cheapest configurations that meet them, ranked, the winner confirmed by the simulation.

The planner (``sim.plan.planner.plan``) enumerates every configuration the platform allows,
screens them with the fast path and verifies the cheapest with the DES; this page is its
form and its answer, including why each cheaper configuration was rejected.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import streamlit as st

from app import forms, jobs, runner
from app.naming import plain
from app.sizing import price_at_bound
from app.validity import badge, is_final, validity_of_stop
from app.views.common import fmt, go_to, show_problems
from app.words import BUSIEST, component_words
from models.presets import PRESETS
from models.requirements import (
    PLATFORM_DEVICE_RULES,
    PLATFORMS,
    PROTECTION_LAYOUTS,
    LatencySlo,
    Requirements,
    Target,
    VerifySettings,
    platform_devices,
    requirements_from_data,
)
from models.scenario import Scenario

DATA = "plan.data"
RAN = "plan.ran"
SIZE_WORKLOAD = "size page"
MAX_VERIFY_TOP = 5
VERIFY_BUDGET_S = 2.5

DEFAULT_REQUIREMENTS: dict[str, Any] = {
    "name": "IBM i OLTP, 600K IOPS + 25% growth, p99 <= 1 ms, 6 TB mirrored",
    "platform": "power10_ibmi", "workload": "oltp_4k_70_30", "target": {"iops": 600_000},
    "latency_slo": {"statistic": "p99", "us": 1000}, "usable_tb": 6, "protection": "mirror", "growth_headroom_pct": 25,
    "budget_usd": 60_000,
}


def _default() -> dict[str, Any]:
    data = forms.example_data("plan/ibmi_oltp.yaml")
    return copy.deepcopy(data) if data else copy.deepcopy(DEFAULT_REQUIREMENTS)


def requirements_form(form: forms.ScenarioForm) -> int:
    """The requirement widgets (into ``form.data``); returns how many finalists to verify by simulation."""
    form.scope = "req"
    data = form.data
    c1, c2 = st.columns(2)
    key = form._seed("name", str(data.get("name", "")))
    data["name"] = c1.text_input("Name", key=key)
    form._register(c1, "name", "Name")
    platform = form.select(c1, "platform", "Platform", list(PLATFORMS), format_func=lambda p: PLATFORMS[p].title)
    options = PLATFORMS[platform]
    c1.caption(f"Source: {options.source}")
    size_wl = forms.draft().get("workload")
    wl_options = [*PRESETS, SIZE_WORKLOAD]
    current = data.get("workload") if isinstance(data.get("workload"), str) else SIZE_WORKLOAD
    choice = form.select(c2, "workload", "Workload", wl_options, default=current, write=False,
                         format_func=lambda k: "The Size page's workload" if k == SIZE_WORKLOAD else PRESETS[k].title)
    data["workload"] = copy.deepcopy(size_wl) if choice == SIZE_WORKLOAD else choice
    if choice == SIZE_WORKLOAD and isinstance(size_wl, dict):
        c2.caption(forms.workload_summary(size_wl))
    unit = form.select(c2, "target.unit", "Throughput target in", ["IOPS", "MB/s"],
                       default="MB/s" if (data.get("target") or {}).get("mbps") else "IOPS", write=False)
    path = "target.iops" if unit == "IOPS" else "target.mbps"
    previous = (data.get("target") or {}).get("iops" if unit == "IOPS" else "mbps")
    data["target"] = {path.split(".")[1]: previous} if previous is not None else {}
    form.number(c2, path, f"Target ({unit})", Target, path.split(".")[1], default=100_000.0 if unit == "IOPS" else 1000.0,
                integer=False, step=10_000.0 if unit == "IOPS" else 100.0)
    c1, c2, c3 = st.columns(3)
    form.select(c1, "latency_slo.statistic", "Latency SLO on the", ["mean", "p99"],
                format_func=lambda s: {"mean": "mean", "p99": "99th percentile"}[s])
    form.number(c1, "latency_slo.us", "Latency SLO (us)", LatencySlo, "us", default=1000.0, integer=False, step=50.0)
    form.number(c2, "usable_tb", "Usable capacity (TB)", Requirements, "usable_tb", default=6.0, integer=False, step=1.0)
    form.select(c2, "protection", "Protection", list(PROTECTION_LAYOUTS),
                help="none; redundant (any mirror or parity); mirror; parity. A SAN server protects its own back end.")
    form.select(c1, "device_model", "Flash device model", list(forms.DEVICE_MODELS), default="auto",
                format_func=forms.DEVICE_MODELS.__getitem__, help=forms.DEVICE_MODEL_HELP)
    form.number(c3, "growth_headroom_pct", "Growth headroom (%)", Requirements, "growth_headroom_pct", default=0.0, integer=False, step=5.0)
    has_budget = form.checkbox(c3, "budget_on", "Budget limit", default=data.get("budget_usd") is not None, write=False)
    if has_budget:
        form.number(c3, "budget_usd", "Budget ($)", Requirements, "budget_usd", default=100_000.0, integer=False, step=5_000.0)
    else:
        data.pop("budget_usd", None)
    more = st.expander("Candidates and verification")
    takes = platform_devices(platform)
    devices = more.multiselect(f"{'Drive' if options.device_section == 'drives' else 'DIMM'} models to try (none = all)",
                               list(takes), key=form.key("candidates.devices"), help=PLATFORM_DEVICE_RULES[platform],
                               default=[d for d in (data.get("candidates") or {}).get("devices") or [] if d in takes])
    data.setdefault("candidates", {})
    if devices:
        data["candidates"]["devices"] = devices
    else:
        data["candidates"].pop("devices", None)
    data["candidates"].pop("layouts", None)  # layouts follow the protection
    if options.san:
        form.checkbox(more, "candidates.include_san", "Also try SAN storage servers", default=True)
        form.number(more, "storage_server_share", "Share of a storage server's price charged", Requirements, "storage_server_share",
                    default=1.0, integer=False, step=0.05)
    else:
        data["candidates"].pop("include_san", None)
    c1, c2 = more.columns(2)
    verify_top = int(c1.number_input("Finalists verified by simulation", min_value=1, max_value=MAX_VERIFY_TOP, value=3, step=1,
                                     key=form.key("verify_top"), help=f"1 to {MAX_VERIFY_TOP}; each costs a DES run."))
    form.number(c2, "verify.max_wall_s", "Seconds per verification run", VerifySettings, "max_wall_s", default=VERIFY_BUDGET_S,
                integer=False, step=0.5)
    return verify_top


def des_validity(candidate: dict[str, Any]) -> str | None:
    """The validity of a candidate's DES verification (None when it was not simulated)."""
    des = candidate.get("des")
    if not des:
        return None
    return str(des.get("validity") or validity_of_stop(des.get("stop_reason")))


def winner_usd_per_kiops_at_bound(answer: dict[str, Any]) -> float | None:
    """The winner's $/KIOPS at its throughput bound, by ``app.sizing.price_at_bound`` (the Size page's figure)."""
    winner = answer["winner"]
    if "scenario" not in winner or not winner.get("fast_path"):
        return None
    scenario = Scenario.model_validate(winner["scenario"])
    share = float(answer.get("requirements", {}).get("storage_server_share") or 1.0)
    return price_at_bound(scenario, winner["fast_path"].get("max_iops"), share)


def show_plan(answer: dict[str, Any]) -> None:
    winner = answer["winner"]
    st.success(f"Cheapest configuration that meets the requirements: **{plain(winner['label'])}**", icon=":material/check_circle:")
    validity = des_validity(winner)
    if validity is not None and not is_final(validity):
        st.warning(f"The winner's simulation is {badge(validity)} ({winner['des'].get('stop_reason')}): its simulated latency "
                   "is indicative; raise the seconds per verification run to confirm it.", icon=":material/warning:")
    cols = st.columns(5)
    cols[0].metric("Purchase cost", f"${winner['capex_usd']:,.0f}")
    cols[1].metric("Usable capacity", f"{winner['usable_tb']:,.2f} TB")
    at_bound = winner_usd_per_kiops_at_bound(answer)
    if at_bound is not None:
        cols[2].metric("$ per KIOPS (at its bound)", f"${at_bound:,.2f}",
                       help="Purchase cost / the throughput bound of the fast path, the same figure the Size page quotes "
                            "beside its fast-path estimate.")
    if winner.get("headroom_pct") is not None:
        cols[3].metric("Headroom over target", f"{winner['headroom_pct']:,.0f}%")
    des = winner.get("des")
    if des:
        lat = des["latency_p99_us"] if answer["requirements"]["latency_slo"]["statistic"] == "p99" else des["latency_mean_us"]
        cols[4].metric(f"Simulated {answer['requirements']['latency_slo']['statistic']} latency", f"{fmt(lat['value'])} us",
                       help=f"95% CI {fmt(lat['ci95'][0])} .. {fmt(lat['ci95'][1])}")
        cols[4].caption(f"95% CI {fmt(lat['ci95'][0])} .. {fmt(lat['ci95'][1])}")
    st.caption(f"Target {answer['target_iops']:,.0f} IOPS, planned for {answer['design_iops']:,.0f} with headroom. "
               f"{answer['screened']:,} configurations enumerated, {answer['fast_evaluated']:,} through the fast path, "
               f"{answer['des_runs']} simulated; {answer['screen_wall_s'] + answer['des_wall_s']:.1f} s.")
    for note in answer.get("notes", []):
        st.caption(note)
    st.subheader("Ranked candidates")
    st.dataframe([_row(c) for c in answer["ranked"][:25]], hide_index=True, width="stretch")
    cheaper = answer.get("cheaper_rejected", [])
    if cheaper:
        st.subheader("Cheaper configurations and why they were rejected")
        st.dataframe([{"configuration": c["label"], "cost $": round(c["capex_usd"]), "stage": c["stage"], "why": c["rejection"]}
                      for c in cheaper[:25]], hide_index=True, width="stretch")
    if st.button("Open the winner on the Size page", key="plan:open", icon=":material/open_in_new:"):
        scenario = Scenario.model_validate(winner["scenario"])
        forms.set_draft(scenario.model_copy(update={"name": ""}))  # named from its configuration on the Size page
        go_to("size")


def _row(c: dict[str, Any]) -> dict[str, Any]:
    fast = c.get("fast_path") or {}
    des = c.get("des") or {}
    validity = des_validity(c)
    return {"configuration": c["label"], "verified": f"DES {badge(validity)}" if validity else "fast path",
            "cost $": round(c["capex_usd"]),
            "usable TB": round(c["usable_tb"], 2),
            "$ per KIOPS at its bound": None if c.get("usd_per_kiops") is None else round(c["usd_per_kiops"], 2),
            "headroom %": None if c.get("headroom_pct") is None else round(c["headroom_pct"]),
            "mean latency (us)": round(des["latency_mean_us"]["value"], 1) if des else (round(fast["latency_mean_us"], 1) if fast else None),
            "p99 latency (us)": round(des["latency_p99_us"]["value"], 1) if des else None,
            BUSIEST: component_words(c["bottleneck"]) if c.get("bottleneck") else None}


def render() -> None:
    st.title("Plan")
    st.caption("State what the customer needs; the planner finds the cheapest configurations that deliver it, screens thousands "
               "with the fast path and confirms the finalists by simulation.")
    if DATA not in st.session_state:
        st.session_state[DATA] = _default()
    form = forms.ScenarioForm(st.session_state[DATA], prefix="plan")
    form.general = st.container()
    verify_top = requirements_form(form)
    req, problems = form.check(requirements_from_data)
    if not str(form.data.get("name") or "").strip():
        problems = [*problems, ("name", "give the plan a name (it heads the answer and the report), e.g. ACME OLTP 2027")]
        form.show(problems)
        req = None
    st.session_state[DATA] = form.data
    clicked = st.button("Plan", type="primary", key="plan:run", disabled=req is None, icon=":material/checklist:")
    if problems:
        st.error(f"{len(problems)} problem(s): see the message under each field marked in red.")
    if clicked and req is not None:
        runner.forget("plan")  # a plan whose winner's run was cut short runs again
        st.session_state[RAN] = (req.model_dump_json(exclude_none=True), verify_top)
    ran = st.session_state.get(RAN)
    if not ran:
        return
    req_json, top = ran
    if req is None or req.model_dump_json(exclude_none=True) != req_json or top != verify_top:
        st.info("The requirements changed since this plan: press **Plan** to update it.")
    verify = json.loads(req_json).get("verify", {})
    budget = (top + 6) * float(verify.get("max_wall_s", VERIFY_BUDGET_S)) + 10.0
    try:
        text = runner.run_cached("plan", f"{req_json}|{top}", jobs.plan_json, req_json, top, label="Planning", budget_s=budget)
    except Exception as exc:
        st.error(f"The planner failed: {type(exc).__name__}: {exc}")
        return
    answer = json.loads(text)
    if "problems" in answer:
        st.error("No allowed configuration meets these requirements:")
        show_problems([tuple(p) for p in answer["problems"]])  # type: ignore[misc]
        return
    if not math.isfinite(answer.get("design_iops", math.nan)):
        st.error("The planner returned no design rate.")
        return
    show_plan(answer)
