"""Widgets bound to nested data: number, select, checkbox and percent fields, each problem shown under its widget.

Every widget is seeded from the form's data and writes back to it; the data is validated
by the models themselves (``scenario_from_data``, ``requirements_from_data``), and each
problem is shown under the widget of the field it names (``format_validation_error``:
field path + message), with the range the model allows. The Size page's scenario form
(``app.forms.ScenarioForm``) and the Plan page's requirements are built from it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import streamlit as st
from pydantic import BaseModel, ValidationError
from streamlit.delta_generator import DeltaGenerator

from app.forms.draft import _prefers_int, allowed_range, get_path, set_path
from models.requirements import scenario_device_problems
from models.scenario import Scenario, ScenarioFileError, format_validation_error, scenario_from_data

T = TypeVar("T")


@dataclass
class _Field:
    path: str
    label: str
    allowed: str
    slot: DeltaGenerator


class FormBase:
    """Widgets bound to a draft (nested data); ``validate()`` returns the Scenario or shows each problem under its widget."""

    def __init__(self, data: dict[str, Any], prefix: str = "size"):
        self.data = copy.deepcopy(data)
        self.prefix = prefix
        self.scope = "top"
        self.fields: dict[str, _Field] = {}
        self.general: DeltaGenerator | None = None
        self.extras: dict[str, Any] = {}

    def key(self, path: str) -> str:
        return f"{self.prefix}:{self.scope}:{path}"

    def _seed(self, path: str, value: Any) -> str:
        key = self.key(path)
        if key not in st.session_state:
            st.session_state[key] = value
        return key

    def _register(self, where: DeltaGenerator, path: str, label: str, allowed: str = "") -> None:
        self.fields[path] = _Field(path, label, allowed, where.empty())

    # -- widget kinds ------------------------------------------------------------------------
    def number(self, where: DeltaGenerator, path: str, label: str, model: type[BaseModel], field: str, *,
               default: float, integer: bool, step: float | None = None, help: str = "", fmt: str | None = None,
               allowed: str | None = None) -> float | None:
        """A number field. The widget itself takes any number, so the model's range is what the user sees enforced."""
        value = get_path(self.data, path, default)
        if value is None:
            value = default
        try:
            value = int(value) if integer else float(value)
        except (TypeError, ValueError):
            value = int(default) if integer else float(default)
        key = self._seed(path, value)
        if integer and not _prefers_int(st.session_state[key]):
            st.session_state[key] = int(st.session_state[key])
        if not integer and not isinstance(st.session_state[key], float):
            st.session_state[key] = float(st.session_state[key])
        allowed = allowed if allowed is not None else allowed_range(model, field)
        tip = " ".join(x for x in (help, f"Allowed: {allowed}." if allowed else "") if x)
        if fmt is None and not integer and (step or 0) >= 1 and abs(default) >= 100:
            fmt = "%.0f"  # rates, budgets, microseconds: whole numbers read better than 600000.00
        v = where.number_input(label, key=key, step=(step if step is not None else (1 if integer else None)),
                               format=fmt, help=tip or None)
        self._register(where, path, label, allowed)
        set_path(self.data, path, v)
        return v

    def select(self, where: DeltaGenerator, path: str, label: str, options: Sequence[Any], *, default: Any = None,
               format_func: Callable[[Any], str] = str, help: str = "", write: bool = True) -> Any:
        options = list(options)
        value = get_path(self.data, path, default)
        if value not in options:
            value = default if default in options else options[0]
        key = self._seed(path, value)
        if st.session_state[key] not in options:
            st.session_state[key] = value
        v = where.selectbox(label, options, key=key, format_func=format_func, help=help or None)
        self._register(where, path, label, "one of: " + ", ".join(format_func(o) for o in options))
        if write:
            set_path(self.data, path, v)
        return v

    def checkbox(self, where: DeltaGenerator, path: str, label: str, *, default: bool, help: str = "", write: bool = True) -> bool:
        value = get_path(self.data, path, default) if write else default
        key = self._seed(path, bool(value))
        v = bool(where.checkbox(label, key=key, help=help or None))
        if write:
            self._register(where, path, label)
            set_path(self.data, path, v)
        return v

    def percent(self, where: DeltaGenerator, path: str, label: str, *, default: float, help: str = "") -> float:
        """A 0..1 fraction shown as a 0..100 % slider (0.1 % steps; a value set elsewhere, e.g. 91.4 %, is kept exactly)."""
        value = get_path(self.data, path, default)
        try:
            pct = round(float(value) * 100, 4)
        except (TypeError, ValueError):
            pct = round(default * 100, 4)
        key = self._seed(path, float(min(100.0, max(0.0, pct))))
        if not isinstance(st.session_state[key], float):
            st.session_state[key] = float(st.session_state[key])
        v = where.slider(label, 0.0, 100.0, key=key, step=0.1, format="%.1f%%", help=help or None)
        self._register(where, path, label, "0 .. 100 %")
        fraction = round(v / 100.0, 6)
        set_path(self.data, path, fraction)
        return fraction

    # -- validation --------------------------------------------------------------------------
    def check(self, build: Callable[[dict[str, Any]], T]) -> tuple[T | None, list[tuple[str, str]]]:
        """``build(data)`` (a model's validation), or its problems, each shown under the widget of its field."""
        try:
            built = build(self.data)
        except ValidationError as exc:
            problems = format_validation_error(exc)
        except ScenarioFileError as exc:
            problems = list(exc.problems)
        else:
            self.show([])
            return built, []
        self.show(problems)
        return None, problems

    def validate(self) -> tuple[Scenario | None, list[tuple[str, str]]]:
        """The draft as a Scenario, or the problems, each shown under the widget of its field."""
        problems: list[tuple[str, str]] = []
        scenario: Scenario | None = None
        try:
            scenario = scenario_from_data(self.data)
            problems = scenario_device_problems(scenario)
        except ValidationError as exc:
            problems = format_validation_error(exc)
        except ScenarioFileError as exc:
            problems = list(exc.problems)
        problems.extend(app_limits(self.data))
        if problems:
            scenario = None
        share = self.extras.get("storage_server_share")
        if share is not None and not (isinstance(share, int | float) and 0 < share <= 1):
            problems.append(("cost.storage_server_share", f"must be > 0 and <= 1, got {share}"))
            scenario = None
        self.show(problems)
        return scenario, problems

    def show(self, problems: Sequence[tuple[str, str]]) -> None:
        """Each problem under the widget of its field (its label in bold, the path after it); the rest on top, in words."""
        unplaced: list[tuple[str, str]] = []
        by_slot: dict[str, list[str]] = {}
        for path, message in problems:
            message = tidy_message(message)
            target = path
            while target and target not in self.fields:
                target = target.rpartition(".")[0]
            if not target:
                unplaced.append((path, message))
                continue
            label = self.fields[target].label
            by_slot.setdefault(target, []).append(f"**{label}** ({path}): {message}" if label else f"**{path}**: {message}")
        for target, messages in by_slot.items():
            f = self.fields[target]
            allowed = f"  \nAllowed: {f.allowed}." if f.allowed and not any("allowed" in m.lower() or "at most" in m.lower()
                                                                           for m in messages) else ""
            f.slot.error("  \n".join(messages) + allowed, icon=":material/error:")
        text = "  \n".join(f"**{field_words(p)}**: {m}" for p, m in unplaced)
        if unplaced and self.general is not None:
            self.general.error(text, icon=":material/error:")
        elif unplaced:
            st.error(text, icon=":material/error:")


MIN_BLOCK_KIB = 0.5
"""The smallest I/O a host issues: one 512-byte sector (the models accept any size > 0)."""

FIELD_WORDS = {
    "run.max_ios": "Precision: budget of I/Os", "run.max_wall_s": "Precision: time budget (s)",
    "run.warmup_ios": "Precision: warm-up I/Os", "run.target_rel_ci": "Precision: target ±", "run.seed": "Seed",
    "run.batch_ios": "Precision: I/Os per batch", "run.min_batches": "Precision: batches",
}
"""Fields the Size form sets without a widget of their own, in the words of the widget that sets them."""


def field_words(path: str) -> str:
    """A field path as the user knows it (the widget that sets it); the path itself otherwise (e.g. in an imported file)."""
    return FIELD_WORDS.get(path, path)


def tidy_message(message: str) -> str:
    """A validation message read aloud: no doubled words ("at at"), no "1 namespaces"."""
    import re

    message = re.sub(r"\b(\w+) \1\b", r"\1", message)
    return re.sub(r"\b1 (namespace|drive|adapter|member)s\b", r"1 \1", message)


def app_limits(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Limits the app adds to the models' own: a block is at least one 512-byte sector."""
    problems = []
    wl = data.get("workload") if isinstance(data.get("workload"), dict) else None
    if wl is not None:
        size = wl.get("block_size_kib")
        if not wl.get("sizes") and isinstance(size, int | float) and 0 < size < MIN_BLOCK_KIB:
            problems.append(("workload.block_size_kib", f"at least {MIN_BLOCK_KIB:g} KiB (one 512-byte sector), got {size:g}"))
        for i, row in enumerate(wl.get("sizes") or []):
            kib = row.get("kib") if isinstance(row, dict) else None
            if isinstance(kib, int | float) and 0 < kib < MIN_BLOCK_KIB:
                problems.append((f"workload.sizes.{i}.kib", f"at least {MIN_BLOCK_KIB:g} KiB (one 512-byte sector), got {kib:g}"))
    return problems
