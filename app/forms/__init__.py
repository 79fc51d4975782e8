"""Scenarios from widgets: the platform, attachment and workload pickers of the Size page.

The working scenario (the *draft*) lives in the session as plain data, so it survives a
visit to another page, may be invalid while someone types, and can be replaced at once
by a scenario loaded from the library, a file or a preset. Every widget is seeded from
the draft and writes back to it; the draft is validated by the scenario models
themselves (``scenario_from_data``), and each problem is shown under the widget of the
field it names (``format_validation_error``: field path + message), with the range the
model allows. Nothing here runs a simulation.
"""

from app.forms.draft import (
    ATTACHMENTS,
    COMMON_WORKLOAD_FIELDS,
    CUSTOM_PRECISION,
    DEVICE_MODEL_HELP,
    DEVICE_MODELS,
    DRAFT,
    EXAMPLES,
    FALLBACK_TOPOLOGIES,
    LAYOUT_NAMES,
    MEMORY,
    MIRRORED,
    PRECISIONS,
    STACK_NAMES,
    STACKS_BY_ATTACHMENT,
    STARTING_POINTS,
    STRIPED,
    WORKLOAD_DEFAULTS,
    allowed_range,
    clear_widgets,
    current_scenario,
    default_draft,
    draft,
    example_data,
    example_name,
    example_names,
    get_path,
    set_draft,
    set_path,
    starting_topology,
)
from app.forms.fields import FormBase
from app.forms.run import RunSection
from app.forms.topology import TopologySection
from app.forms.workload import CUSTOM_WORKLOAD, WorkloadSection, apply_workload, matching_preset, preset_picker, workload_summary


class ScenarioForm(TopologySection, WorkloadSection, RunSection):
    """Widgets bound to a draft scenario; ``validate()`` returns the Scenario or shows each problem under its widget."""


__all__ = [
    "ATTACHMENTS", "COMMON_WORKLOAD_FIELDS", "CUSTOM_PRECISION", "CUSTOM_WORKLOAD", "DEVICE_MODELS", "DEVICE_MODEL_HELP", "DRAFT",
    "EXAMPLES", "FALLBACK_TOPOLOGIES",
    "LAYOUT_NAMES", "MEMORY", "MIRRORED", "PRECISIONS", "STACKS_BY_ATTACHMENT", "STACK_NAMES", "STARTING_POINTS", "STRIPED",
    "WORKLOAD_DEFAULTS", "FormBase", "ScenarioForm", "allowed_range", "apply_workload", "clear_widgets", "current_scenario",
    "default_draft", "draft", "example_data", "example_name", "example_names", "get_path", "matching_preset", "preset_picker", "set_draft",
    "set_path", "starting_topology", "workload_summary",
]
