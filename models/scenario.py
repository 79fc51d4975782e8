"""A Scenario is topology + workload + run settings; this module also reads scenario files.

Files may be YAML, TOML or JSON. ``load_scenario(path, overrides)`` applies dotted
overrides (``workload.queue_depth=16``, list items by index: ``topology.stations.0.servers=2``)
to the raw data before validation, so an override is checked exactly like the file.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from models.common import StrictModel, field_problem
from models.topology import Topology
from models.workload import Workload

MAX_SCENARIO_BYTES = 1_000_000


class RunSettings(StrictModel):
    """How long to run and how precise to be.

    The run discards ``warmup_ios`` completions, then groups completions into batches
    and stops when the 95% confidence half-width of IOPS and mean latency, relative to
    the estimate, is at most ``target_rel_ci`` (after ``min_batches``) or when a budget
    (``max_ios`` completions, ``max_wall_s`` seconds of wall time) is spent.
    """

    seed: int = Field(default=1, ge=0, le=2**63 - 1)
    target_rel_ci: float = Field(default=0.02, gt=0, lt=1)
    warmup_ios: int = Field(default=5_000, ge=0, le=10**9)
    batch_ios: int | None = Field(default=None, ge=10, le=10**8, description="completions per batch; default grows with the run")
    min_batches: int = Field(default=20, ge=5, le=10_000)
    max_ios: int = Field(default=3_000_000, ge=100, le=10**10)
    max_wall_s: float = Field(default=120.0, gt=0, le=86_400)


class Scenario(StrictModel):
    """Everything the engine needs: the hardware path, the load on it, and the run settings."""

    name: str = ""
    description: str = ""
    topology: Topology
    workload: Workload
    run: RunSettings = Field(default_factory=RunSettings)

    @model_validator(mode="after")
    def _bounded_concurrency(self) -> Scenario:
        if self.workload.kind == "closed" and self.workload.jobs * self.workload.queue_depth > 1_000_000:
            raise field_problem("workload.jobs", "jobs x queue_depth must be <= 1,000,000")
        return self


class ScenarioFileError(ValueError):
    """A scenario file that cannot be read or parsed (before validation)."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = problems
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))


def parse_text(text: str, fmt: str, origin: str = "<input>") -> dict[str, Any]:
    """Parse YAML (safe loader), TOML or JSON text into a mapping."""
    try:
        if fmt == "json":
            data = json.loads(text)
        elif fmt == "toml":
            data = tomllib.loads(text)
        else:
            data = yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        detail = " ".join(str(exc).split())
        raise ScenarioFileError([(origin, f"not valid {fmt.upper()}: {detail}")]) from None
    if not isinstance(data, dict):
        raise ScenarioFileError([(origin, f"expected a mapping at the top level, got {type(data).__name__}")])
    return data


def read_scenario_data(path: str | Path) -> dict[str, Any]:
    """Read a scenario file (format from its suffix: .yaml/.yml, .toml, .json) into raw data."""
    p = Path(path)
    if not p.exists():
        raise ScenarioFileError([(str(p), "no such file")])
    if not p.is_file():
        raise ScenarioFileError([(str(p), "not a file")])
    if p.stat().st_size > MAX_SCENARIO_BYTES:
        raise ScenarioFileError([(str(p), f"file is larger than {MAX_SCENARIO_BYTES} bytes")])
    suffix = p.suffix.lower()
    fmt = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}.get(suffix)
    if fmt is None:
        raise ScenarioFileError([(str(p), f"unknown format {suffix!r}; use .yaml, .yml, .toml or .json")])
    return parse_text(p.read_text(encoding="utf-8"), fmt, str(p))


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``dotted.path=VALUE``; VALUE is read as YAML, so 16, 0.7, true, [1, 2] and raid10 all work."""
    if "=" not in text:
        raise ScenarioFileError([(text, "an override must look like dotted.path=VALUE")])
    path, _, raw = text.partition("=")
    path = path.strip()
    if not path or any(not part for part in path.split(".")):
        raise ScenarioFileError([(text, "empty field name in the dotted path")])
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return path, value


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``data`` with each dotted path set; missing mappings are created."""
    result: dict[str, Any] = json.loads(json.dumps(data))
    for path, value in overrides.items():
        parts = path.split(".")
        node: Any = result
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            where = ".".join(parts[: i + 1])
            if isinstance(node, list):
                if not part.isdigit() or int(part) >= len(node):
                    raise ScenarioFileError([(where, f"list index must be 0..{len(node) - 1}, got {part!r}")])
                if last:
                    node[int(part)] = value
                else:
                    node = node[int(part)]
            elif isinstance(node, dict):
                if last:
                    node[part] = value
                else:
                    if part not in node or node[part] is None:
                        node[part] = {}
                    node = node[part]
            else:
                raise ScenarioFileError([(where, f"cannot set a field inside a {type(node).__name__} value")])
    return result


def scenario_from_data(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> Scenario:
    """Validate raw data (after applying overrides) into a Scenario; raises pydantic.ValidationError."""
    if overrides:
        data = apply_overrides(data, overrides)
    return Scenario.model_validate(data)


def load_scenario(path: str | Path, overrides: dict[str, Any] | None = None) -> Scenario:
    """Read, override and validate a scenario file."""
    return scenario_from_data(read_scenario_data(path), overrides)


def with_overrides(scenario: Scenario, overrides: dict[str, Any]) -> Scenario:
    """A new Scenario with dotted-path overrides applied and validated."""
    return scenario_from_data(scenario.model_dump(mode="json", exclude_none=True), overrides)


def format_validation_error(exc: ValidationError, prefix: str = "") -> list[tuple[str, str]]:
    """Turn a pydantic error into (field.path, message) pairs a person can act on.

    Union-tag steps (``direct_nvme``) are dropped from paths; cross-field errors raised
    with ``field_problem`` are reported against the field they name.
    """
    tags = {"direct_nvme", "san", "exflash", "zvm_edev", "generic", "closed", "open", "bursty",
            "FlashDeviceSpec", "str", "function-after[_check(), DirectNvme]"}
    problems: list[tuple[str, str]] = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if str(p) not in tags and not str(p).startswith("function-")]
        message = err["msg"]
        ctx = err.get("ctx") or {}
        if err["type"] == "field_problem":
            loc.append(str(ctx["field"]))
            message = str(ctx["problem"])
        elif err["type"] == "extra_forbidden":
            message = "unknown field (check the spelling; `flashplan schema` lists the fields)"
        elif err["type"] == "union_tag_invalid":
            message = f"unknown kind {ctx.get('tag')!r}; allowed: {ctx.get('expected_tags')}"
        elif err["type"] == "union_tag_not_found":
            message = f"missing 'kind'; allowed: {ctx.get('expected_tags')}"
        elif message.startswith("Value error, "):
            message = message[len("Value error, "):]
        path = ".".join(([prefix] if prefix else []) + loc) or "(scenario)"
        if "input" in err and err["type"] not in ("field_problem", "missing", "extra_forbidden") and not isinstance(err["input"], dict | list):
            message = f"{message}, got {err['input']!r}"
        problems.append((path, message))
    # a str | FlashDeviceSpec union reports both branches; keep the first message per path
    seen: dict[str, str] = {}
    for path, message in problems:
        seen.setdefault(path, message)
    return list(seen.items())
