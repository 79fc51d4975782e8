"""Shared base classes and small helpers for every flashplan model.

Every model forbids unknown keys, so a typo in a scenario file is an error that
names the field instead of a silently ignored setting.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError


def _numeric_shape(annotation: Any) -> str | None:
    """``number`` for an int or float field (optional or not), ``list``/``dict`` for a list or
    mapping of numbers, else None: the fields where a boolean must not pass as a number."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _numeric_shape(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        shapes = {_numeric_shape(a) for a in typing.get_args(annotation) if a is not type(None)}
        return shapes.pop() if len(shapes) == 1 else None
    if annotation in (int, float):
        return "number"
    if origin in (list, tuple) and typing.get_args(annotation):
        return "list" if all(_numeric_shape(a) == "number" for a in typing.get_args(annotation) if a is not Ellipsis) else None
    if origin is dict and len(typing.get_args(annotation)) == 2:
        return "dict" if _numeric_shape(typing.get_args(annotation)[1]) == "number" else None
    return None


class StrictModel(BaseModel):
    """Base for every flashplan model: unknown keys are errors, values are validated on assignment,
    NaN and infinity are refused, and a boolean is not accepted where a number is expected
    (pydantic would read ``true`` as 1)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False, allow_inf_nan=False)
    _numeric_fields: ClassVar[dict[str, str]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        shapes = {name: _numeric_shape(f.annotation) for name, f in cls.model_fields.items()}
        cls._numeric_fields = {name: shape for name, shape in shapes.items() if shape}

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls._numeric_fields:
            return data
        for name, shape in cls._numeric_fields.items():
            value = data.get(name)
            if value is None:
                continue
            if shape == "number":
                bad = isinstance(value, bool)
            elif shape == "list":
                bad = isinstance(value, list | tuple) and any(isinstance(v, bool) for v in value)
            else:
                bad = isinstance(value, dict) and any(isinstance(v, bool) for v in value.values())
            if bad:
                raise field_problem(name, f"must be a number, not a boolean, got {value!r}")
        return data


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


def strict_json_data(data: Any) -> Any:
    """``data`` with every NaN or infinite float replaced by None (JSON ``null``), so it can be
    written as strict JSON (RFC 8259 has no NaN or Infinity). Tuples become lists."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: strict_json_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [strict_json_data(v) for v in data]
    return data


def dumps_json(data: Any, indent: int | None = 2, default: Any = None) -> str:
    """Strict JSON text of ``data``: the output boundary of every ``--json`` and results file.
    ``default`` converts values JSON has no type for (as in ``json.dumps``), before the check."""
    if default is not None:
        data = json.loads(json.dumps(data, default=default))
    return json.dumps(strict_json_data(data), indent=indent, allow_nan=False)


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` in one step: a temporary file in the same directory, then
    ``os.replace``, so an interrupted write (Ctrl-C, a kill) leaves the old file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
