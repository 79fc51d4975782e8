"""The hardware catalog: YAML data files in models/catalog/, loaded and validated once.

Each file maps a catalog model name to an entry (see models/hardware.py). Scenario
files refer to entries by name (``drive: ES5F``); ``load_catalog`` checks every entry
against its schema, so a broken data file fails loudly at start-up, not mid-run.
Users can override any entry (including prices) by pointing ``FLASHPLAN_CATALOG_DIR``
at a folder with files of the same names: its entries replace or extend the built-in ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

from models.hardware import (
    FlashDeviceSpec,
    HostSpec,
    NvmeAdapterSpec,
    SanAdapterSpec,
    StorageServerSpec,
)

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
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: invalid YAML: {exc}") from exc
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


@lru_cache(maxsize=4)
def _load(extra_dir: str | None) -> Catalog:
    raw: dict[str, dict[str, Any]] = {}
    _load_dir(CATALOG_DIR, raw)
    if extra_dir:
        _load_dir(Path(extra_dir), raw)
    parsed: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        entries = {}
        for name, entry in raw.get(section, {}).items():
            try:
                entries[str(name)] = cls.model_validate(entry)
            except Exception as exc:
                raise CatalogError(f"catalog {section}.{name}: {exc}") from exc
        parsed[section] = entries
    parsed["parameters"] = raw.get("parameters", {})
    return Catalog(**parsed)


def load_catalog() -> Catalog:
    """The built-in catalog, overlaid with ``$FLASHPLAN_CATALOG_DIR`` when that is set."""
    return _load(os.environ.get("FLASHPLAN_CATALOG_DIR") or None)


def lookup(section: str, name: str) -> Any:
    """Return the catalog entry ``name`` of ``section`` or raise KeyError listing the known names."""
    entries = load_catalog().section(section)
    if name not in entries:
        known = ", ".join(sorted(entries)) or "(none)"
        raise KeyError(f"unknown catalog model {name!r}; known {section}: {known}")
    return entries[name]


def parameter(path: str) -> Any:
    """A default engine parameter from parameters.yaml by dotted path (e.g. ``device_behaviour.service_cv``).

    Each parameter is stored as ``{value: ..., source: ...}``; this returns the value.
    """
    node: Any = load_catalog().parameters
    for part in path.split("."):
        node = node[part]
    if isinstance(node, dict) and "value" in node:
        return node["value"]
    return node
