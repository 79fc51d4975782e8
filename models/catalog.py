"""The hardware catalog: YAML data files in models/catalog/, loaded and validated once.

Each file maps a catalog model name to an entry (see models/hardware.py). Scenario
files refer to entries by name (``drive: ES5F``); ``load_catalog`` checks every entry
against its schema, so a broken data file fails loudly at start-up, not mid-run.
Users can override any entry (including prices) by pointing ``FLASHPLAN_CATALOG_DIR``
at a folder with files of the same names: its entries replace or extend the built-in ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from models.hardware import (
    FlashDeviceSpec,
    HostSpec,
    NvmeAdapterSpec,
    SanAdapterSpec,
    StorageServerSpec,
)
from models.loading import BadInput, format_problems, format_validation_error, read_document

CATALOG_DIR = Path(__file__).parent / "catalog"

T = TypeVar("T", bound=BaseModel)

SECTIONS: dict[str, type[BaseModel]] = {
    "drives": FlashDeviceSpec,
    "dimms": FlashDeviceSpec,
    "adapters": NvmeAdapterSpec,
    "san_adapters": SanAdapterSpec,
    "storage_servers": StorageServerSpec,
    "hosts": HostSpec,
}


@dataclass(frozen=True)
class Catalog:
    """All catalog sections, each a name -> validated spec mapping."""

    drives: dict[str, FlashDeviceSpec] = field(default_factory=dict)
    dimms: dict[str, FlashDeviceSpec] = field(default_factory=dict)
    adapters: dict[str, NvmeAdapterSpec] = field(default_factory=dict)
    san_adapters: dict[str, SanAdapterSpec] = field(default_factory=dict)
    storage_servers: dict[str, StorageServerSpec] = field(default_factory=dict)
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        return dict(getattr(self, name))


class CatalogError(ValueError):
    """A catalog data file is missing, malformed or fails its schema."""


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = read_document(path)
    except BadInput as exc:
        raise CatalogError("; ".join(format_problems(exc.problems))) from None
    if not isinstance(data, dict):
        raise CatalogError(f"{path}: expected a mapping of model name -> entry")
    return data


def _load_dir(directory: Path, into: dict[str, dict[str, Any]]) -> None:
    for section in SECTIONS:
        path = directory / f"{section}.yaml"
        if path.exists():
            into.setdefault(section, {}).update(_read_yaml(path))
    params = directory / "parameters.yaml"
    if params.exists():
        into.setdefault("parameters", {}).update(_read_yaml(params))


FITTED_FILE = CATALOG_DIR / "fitted.yaml"


def read_fitted(path: Path) -> dict[str, Any]:
    """The fitted-parameter file: ``{version, fitted_on, ..., values: {dotted.path: value}}``."""
    data = _read_yaml(path)
    values = data.get("values", {})
    if not isinstance(values, dict):
        raise CatalogError(f"{path}: 'values' must map dotted paths to numbers")
    return data


def apply_fitted(raw: dict[str, dict[str, Any]], values: dict[str, Any], origin: str = "fitted") -> None:
    """Overwrite catalog fields / parameters named by slash paths (model names contain dots).

    ``parameters/a/b`` sets the value of parameter ``a.b`` (creating it if new);
    ``section/Model/field[/key]`` sets a field of a catalog entry, which must exist.
    """
    for path, value in values.items():
        head, *parts = str(path).split("/")
        if head == "workloads":  # calibration workload descriptors, read by calibration/evaluate.py
            continue
        if head == "parameters":
            node = raw.setdefault("parameters", {})
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = {"value": value, "source": f"{origin}: flashplan calibrate --fit"}
            continue
        if len(parts) < 2 or parts[0] not in raw.get(head, {}):
            raise CatalogError(f"fitted value {path!r}: no catalog entry {head}/{parts[0] if parts else ''}")
        node = raw[head][parts[0]]
        for part in parts[1:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value


@lru_cache(maxsize=8)
def _load(extra_dir: str | None, fitted: str | None = None) -> Catalog:
    raw: dict[str, dict[str, Any]] = {}
    _load_dir(CATALOG_DIR, raw)
    if fitted:
        apply_fitted(raw, read_fitted(Path(fitted)).get("values", {}))
    if extra_dir:
        _load_dir(Path(extra_dir), raw)
    parsed: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        entries = {}
        for name, entry in raw.get(section, {}).items():
            try:
                entries[str(name)] = cls.model_validate(entry)
            except ValidationError as exc:
                lines = format_problems(format_validation_error(exc, f"{section}.{name}"))
                raise CatalogError("; ".join(lines)) from None
        parsed[section] = entries
    parsed["parameters"] = raw.get("parameters", {})
    return Catalog(**parsed)


def fitted_path() -> Path | None:
    """The fitted-parameter file in use: ``$FLASHPLAN_FITTED`` (``none`` for the unfitted
    datasheet-and-assumption model), else models/catalog/fitted.yaml when it exists."""
    env = os.environ.get("FLASHPLAN_FITTED")
    if env:
        return None if env.lower() == "none" else Path(env)
    return FITTED_FILE if FITTED_FILE.exists() else None


_pinned: list[Catalog] = []
"""The catalogs ``pinned_catalog`` holds, innermost last: ``load_catalog`` returns the last one while any is held."""


@contextmanager
def pinned_catalog() -> Iterator[Catalog]:
    """Within the block, ``load_catalog`` returns the catalog in use when the block started, without
    reading the environment or checking for the fitted file again (each costs a system call). For batches
    of many lookups, such as the planner screening thousands of candidates; the catalog cannot change
    under the batch, so every candidate is judged against the same one."""
    catalog = load_catalog()
    _pinned.append(catalog)
    try:
        yield catalog
    finally:
        _pinned.pop()


def load_catalog() -> Catalog:
    """The built-in catalog with the fitted parameters applied, then overlaid with
    ``$FLASHPLAN_CATALOG_DIR`` when that is set (a user's own entries win over the fit);
    inside ``pinned_catalog``, the catalog pinned."""
    if _pinned:
        return _pinned[-1]
    fitted = fitted_path()
    return _load(os.environ.get("FLASHPLAN_CATALOG_DIR") or None, str(fitted) if fitted else None)


def lookup(section: str, name: str) -> Any:
    """Return the catalog entry ``name`` of ``section`` or raise KeyError listing the known names."""
    entries = getattr(load_catalog(), section)
    if name not in entries:
        known = ", ".join(sorted(entries)) or "(none)"
        raise KeyError(f"unknown catalog model {name!r}; known {section}: {known}")
    return entries[name]


_MISSING = object()


def parameter(path: str, default: Any = _MISSING) -> Any:
    """A default engine parameter from parameters.yaml by dotted path (e.g. ``device_behaviour.service_cv``).

    Each parameter is stored as ``{value: ..., source: ...}``; this returns the value, or
    ``default`` when given and the parameter does not exist.
    """
    node: Any = load_catalog().parameters
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            if default is _MISSING:
                raise KeyError(f"unknown engine parameter {path!r}")
            return default
        node = node[part]
    if isinstance(node, dict) and "value" in node:
        return node["value"]
    return node
