"""Shared base classes and small helpers for every flashplan model.

Every model forbids unknown keys, so a typo in a scenario file is an error that
names the field instead of a silently ignored setting.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticCustomError


class StrictModel(BaseModel):
    """Base for every flashplan model: unknown keys are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)


def field_problem(field: str, message: str) -> PydanticCustomError:
    """An error raised by a cross-field validator that should be reported against ``field``.

    The CLI appends ``field`` to the location of the model that raised it, so the user
    reads ``topology.layout: raid10 needs ...`` rather than a message about the whole model.
    """
    return PydanticCustomError("field_problem", "{field}: {problem}", {"field": field, "problem": message})


def deep_get(data: Any, dotted: str) -> Any:
    """Read a value from nested dicts/lists by a dotted path (list items by index)."""
    node = data
    for part in dotted.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node
