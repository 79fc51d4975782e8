"""Pieces several pages share: the library handle, metric display with confidence intervals, error boxes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from app.library import Library, default_db_url
from models.result import Metric, Result


@st.cache_resource(show_spinner=False)
def _library(url: str) -> Library:
    return Library(url)


def library() -> Library:
    """The scenario library of this server (``$FLASHPLAN_DB_URL`` or the user's data directory)."""
    return _library(default_db_url())


def fmt(value: float, digits: int = 1) -> str:
    """A figure for the page: thousands separated, never "nan" or "inf"."""
    a = abs(value)
    if a != a:
        return "-"
    if a == float("inf"):
        return "unbounded"
    if a >= 1e5:
        return f"{value:,.0f}"
    if a >= 100:
        return f"{value:,.{digits}f}" if digits and a < 1e4 else f"{value:,.0f}"
    if a >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"


def ci_text(m: Metric) -> str:
    if not m.has_ci:
        return "95% CI unknown (only one batch measured it)"
    return f"95% CI {fmt(m.ci95[0])} .. {fmt(m.ci95[1])}"


def metric(where: Any, label: str, m: Metric, unit: str = "") -> None:
    """A headline figure with its 95% confidence interval under it."""
    spread = f" (±{m.rel_half_width:.1%})" if m.has_ci else ""
    where.metric(label, f"{fmt(m.value)}{' ' + unit if unit else ''}", help=f"{ci_text(m)}{spread}")
    where.caption(ci_text(m))


def show_problems(problems: Sequence[tuple[str, str]], where: Any = None) -> None:
    """(field, message) pairs as one error box: the field in bold (in the widget's words when it has no widget of its own), then what is allowed."""
    from app.forms.fields import field_words, tidy_message

    (where or st).error("  \n".join(f"**{field_words(f)}**: {tidy_message(m)}" for f, m in problems), icon=":material/error:")


def result_table(result: Result) -> list[dict[str, Any]]:
    from app.report import METRIC_ROWS

    rows = []
    for key, label, unit in METRIC_ROWS:
        m: Metric = getattr(result, key)
        rows.append({"metric": label, "value": m.value, "95% CI low": m.ci95[0], "95% CI high": m.ci95[1], "unit": unit})
    return rows


# -- where a scenario comes from (Compare, What-if) --------------------------------------------

SIZE_SOURCE = "size"
BASELINE_SOURCE = "baseline"
BASELINE_KEY = "size.baseline"
"""Where the Size page keeps the baseline (a measurement with its system: ``app.baseline.Baseline.as_dict``)."""


@st.cache_data(show_spinner=False)
def example_names(profiles: bool = False) -> dict[str, str]:
    """Example scenario files (examples/*.yaml) -> their scenario names; those with several workloads are
    left out (the Consolidation page shows them: these pages size one steady workload), and so are profiles
    (load over time: the Load over time page replays them; ``profiles=True`` lists only those, alone or
    among several workloads)."""
    from app.forms import EXAMPLES
    from models.scenario import ScenarioFileError, read_scenario_data

    out = {}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        try:
            data = read_scenario_data(path)
        except ScenarioFileError:
            continue
        profile = holds_profile(data)
        if profile == profiles and (profiles or not data.get("workloads")):
            out[path.name] = str(data.get("name") or path.stem)
    return out


def holds_profile(data: dict[str, Any]) -> bool:
    """Whether raw scenario data has a profile workload (load over time), alone or in its ``workloads`` list."""
    workloads = data.get("workloads")
    listed = workloads if isinstance(workloads, list) else [data.get("workload")]
    return any(isinstance(wl, dict) and wl.get("kind") == "profile" for wl in listed)


PAPER_SETUPS = {
    "paper:s1_ycsb_nvme.yaml": "Seed 000 setup: LinuxONE, 4 x PM1733 md RAID-10, YCSB with its calibrated think time",
    "paper:s1_ycsb_fcp.yaml": "Seed 000 setup: LinuxONE, 4 FCP LUNs of a DS8950F, YCSB with its calibrated think time",
}
"""The source paper's own comparison (seed 000), as calibrated: calibration/scenarios/s1_ycsb_*.yaml with the fitted think time."""
CALIBRATION_SCENARIOS = Path(__file__).resolve().parents[2] / "calibration" / "scenarios"


def calibrated_think_us() -> float:
    """YCSB's think time per I/O as fitted against seed 000's records (models/catalog/fitted.yaml)."""
    from calibration.evaluate import fitted_workload_value

    return float(fitted_workload_value("s1_ycsb_think_us"))


def scenario_sources() -> dict[str, str]:
    """Every scenario a page can start from: the Size page's, the paper's setups, the examples, the library's."""
    from app.forms import draft
    from app.naming import scenario_name

    data = draft()
    name = data.get("name") or scenario_name(data)
    out = {SIZE_SOURCE: f"Size page: {name}"}
    base = st.session_state.get(BASELINE_KEY)
    if base:
        out[BASELINE_SOURCE] = f"Baseline: {base['source']} on its measured system"
    out.update(PAPER_SETUPS)
    out.update({f"example:{f}": f"Example: {n}" for f, n in example_names().items()})
    try:
        out.update({f"library:{e.id}": f"Library: {e.name}" for e in library().list_scenarios()})
    except Exception as exc:  # an unreachable database must not take the page down
        st.warning(f"The scenario library is not available: {type(exc).__name__}: {exc}")
    return out


def load_source(source: str) -> tuple[Any, list[tuple[str, str]]]:
    """The Scenario a source names, or the problems that stop it from loading."""
    from pydantic import ValidationError

    from app.forms import EXAMPLES, draft
    from app.library import LibraryError
    from models.scenario import ScenarioFileError, format_validation_error, load_scenario, scenario_from_data

    try:
        if source == SIZE_SOURCE:
            return scenario_from_data(draft()), []
        if source == BASELINE_SOURCE and st.session_state.get(BASELINE_KEY):
            from app.baseline import Baseline

            return Baseline.from_dict(st.session_state[BASELINE_KEY]).scenario, []
        if source.startswith("example:"):
            return load_scenario(EXAMPLES / source.split(":", 1)[1]), []
        if source in PAPER_SETUPS:
            return load_scenario(CALIBRATION_SCENARIOS / source.split(":", 1)[1],
                                 {"workload.think_time_us": round(calibrated_think_us(), 1), "run.target_rel_ci": 0.02}), []
        if source.startswith("library:"):
            return library().get_scenario(int(source.split(":", 1)[1])), []
    except ValidationError as exc:
        return None, format_validation_error(exc)
    except (ScenarioFileError, LibraryError) as exc:
        return None, list(exc.problems)
    return None, [("source", f"unknown scenario source {source!r}")]


PAGE_SCRIPTS = {"size": "page_scripts/size.py", "compare": "page_scripts/compare.py", "what-if": "page_scripts/whatif.py",
                "plan": "page_scripts/plan.py", "calibration": "page_scripts/calibration.py", "library": "page_scripts/scenarios.py",
                "consolidation": "page_scripts/consolidation.py",
                "load-over-time": "page_scripts/timeline.py"}
"""Each page's script, relative to app/main.py, by its url path."""


def go_to(url_path: str) -> None:
    """Switch to another page of the app (by its url path)."""
    st.switch_page(PAGE_SCRIPTS[url_path])
