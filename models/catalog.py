"""The hardware catalog: YAML data files in models/catalog/, loaded and validated once.

Each file maps a catalog model name to an entry (see models/hardware.py). Scenario
files refer to entries by name (``drive: ES5F``); ``load_catalog`` checks every entry
against its schema, so a broken data file fails loudly at start-up, not mid-run.
Users can override any entry (including prices) and any engine parameter by pointing
``FLASHPLAN_CATALOG_DIR`` at a folder with files of the same names (``OVERRIDE_FILES``). The rule:

* an entry file (``drives.yaml``, ``hosts.yaml``, ...) adds entries, and replaces a built-in entry of the
  same name whole: an entry's numbers and the sources that cite them go together;
* ``parameters.yaml`` is merged key by key down to each parameter: setting
  ``device_behaviour: {service_cv: {value: 0.5, source: "..."}}`` changes that one parameter and keeps
  every other; each parameter is given whole (``value`` and ``source``).

Overrides are checked by the same models as the built-in catalog (models/hardware.py for entries,
models/catalog_parameters.py for parameters), and an error names the override file and the field. A
folder that does not exist, holds none of these files, or holds a file of another name is an error too
(a misnamed file would otherwise be ignored without a word).
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

from models.catalog_parameters import EngineParameters, merge_parameters, override_problems
from models.hardware import (
    FlashDeviceSpec,
    HostSpec,
    NvmeAdapterSpec,
    SanAdapterSpec,
    StorageServerSpec,
)
from models.loading import BadInput, display_path, format_validation_error, missing_reason, read_document

CATALOG_DIR = Path(__file__).parent / "catalog"
FITTED_FILE = CATALOG_DIR / "fitted.yaml"

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


class CatalogError(Exception):
    """A catalog data file is missing, malformed or fails its schema: (field, message) pairs, each field
    naming the file. Not a ValueError, so a catalog looked up inside a scenario's validation reports the
    catalog's own problem, not the scenario field that happened to look it up first."""

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = [(str(f), str(m)) for f, m in problems] or [("catalog", "invalid catalog")]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))


OVERRIDE_FILES = (*(f"{section}.yaml" for section in SECTIONS), "parameters.yaml")
"""The file names a ``$FLASHPLAN_CATALOG_DIR`` folder may hold."""


def _in_file(path: Path, problems: list[tuple[str, str]]) -> CatalogError:
    """The problems of one file, each field prefixed by the file's name."""
    shown = display_path(path)
    return CatalogError([(f"{shown}: {f}" if f not in (shown, "(document)") else shown, m) for f, m in problems])


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = read_document(path)
    except BadInput as exc:
        raise CatalogError(exc.problems) from None
    return data


def _load_dir(directory: Path, into: dict[str, dict[str, Any]]) -> None:
    for section in SECTIONS:
        path = directory / f"{section}.yaml"
        if path.exists():
            into.setdefault(section, {}).update(_read_yaml(path))
    params = directory / "parameters.yaml"
    if params.exists():
        into.setdefault("parameters", {}).update(_read_yaml(params))


def _override_files(directory: Path) -> list[Path]:
    """The catalog files of a ``$FLASHPLAN_CATALOG_DIR`` folder; CatalogError when the folder is missing,
    holds none of ``OVERRIDE_FILES``, or holds any other file (hidden files aside)."""
    where = f"FLASHPLAN_CATALOG_DIR {display_path(directory)}"
    expected = ", ".join(OVERRIDE_FILES)
    if not directory.exists():
        raise CatalogError([(where, f"{missing_reason(directory, 'folder')}; give a folder holding one or more of {expected}")])
    if not directory.is_dir():
        raise CatalogError([(where, f"not a folder; give a folder holding one or more of {expected}")])
    try:
        names = sorted(name for name in os.listdir(directory) if not name.startswith("."))
    except OSError as exc:
        raise CatalogError([(where, f"cannot be listed: {exc.strerror or exc}")]) from None
    problems = []
    for name in names:
        if name == FITTED_FILE.name:
            problems.append((f"{where}: {display_path(name)}", "fitted values are not read from here; point FLASHPLAN_FITTED at "
                                                                f"this file, and keep here only {expected}"))
        elif name not in OVERRIDE_FILES:
            problems.append((f"{where}: {display_path(name)}", f"not a catalog file name; expected {expected}"))
    if problems:
        raise CatalogError(problems)
    if not names:
        raise CatalogError([(where, f"the folder is empty; put one or more of {expected} in it")])
    return [directory / name for name in names]


def _overlay(directory: Path, raw: dict[str, dict[str, Any]], origins: dict[tuple[str, str], Path]) -> None:
    """Lay a user's catalog folder over ``raw`` (the rule in the module docstring), checking parameters.yaml
    on its own and recording which file each entry came from."""
    for path in _override_files(directory):
        data = _read_yaml(path)
        section = path.stem
        if section == "parameters":
            problems = override_problems(data)
            if problems:
                raise _in_file(path, problems)
            raw["parameters"] = merge_parameters(raw.get("parameters", {}), data)
            continue
        for name, entry in data.items():
            raw.setdefault(section, {})[name] = entry
            origins[(section, str(name))] = path


def read_fitted(path: Path) -> dict[str, Any]:
    """The fitted-parameter file: ``{version, fitted_on, ..., values: {dotted.path: value}}``."""
    data = _read_yaml(path)
    values = data.get("values", {})
    if not isinstance(values, dict):
        raise CatalogError([(f"{display_path(path)}: values", "must map slash paths to numbers")])
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
            raise CatalogError([(f"{origin} value {path}", f"no catalog entry {head}/{parts[0] if parts else ''}")])
        node = raw[head][parts[0]]
        for part in parts[1:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value


@lru_cache(maxsize=8)
def _load(extra_dir: str | None, fitted: str | None = None) -> Catalog:
    raw: dict[str, dict[str, Any]] = {}
    origins: dict[tuple[str, str], Path] = {}
    _load_dir(CATALOG_DIR, raw)
    built_in = {section: set(entries) for section, entries in raw.items()}
    if fitted:
        apply_fitted(raw, read_fitted(Path(fitted)).get("values", {}))
    if extra_dir:
        _overlay(Path(extra_dir), raw, origins)
    parsed: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        entries = {}
        for name, entry in raw.get(section, {}).items():
            try:
                entries[str(name)] = cls.model_validate(entry)
            except ValidationError as exc:
                path = origins.get((section, str(name)), CATALOG_DIR / f"{section}.yaml")
                problems = format_validation_error(exc, str(name))
                if (section, str(name)) in origins and name in built_in.get(section, {}) \
                        and any(e["type"] == "missing" for e in exc.errors()):
                    problems.insert(0, (str(name), f"an entry replaces the built-in {name} whole: copy it from "
                                                f"models/catalog/{section}.yaml and change what differs"))
                raise _in_file(path, problems) from None
        parsed[section] = entries
    parsed["parameters"] = raw.get("parameters", {})
    try:
        EngineParameters.model_validate(parsed["parameters"])
    except ValidationError as exc:
        label = CATALOG_DIR / "parameters.yaml" if not fitted else Path(f"{CATALOG_DIR / 'parameters.yaml'} with {fitted}")
        raise _in_file(label, format_validation_error(exc)) from None
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


@contextmanager
def catalog_with_drive(name: str, spec: FlashDeviceSpec) -> Iterator[Catalog]:
    """Within the block, ``load_catalog`` returns the catalog in use with one more drive ``name`` (a drive
    derived from measurements, predicted before it is written to a catalog folder)."""
    base = load_catalog()
    catalog = Catalog(drives={**base.drives, name: spec}, dimms=base.dimms, adapters=base.adapters,
                      san_adapters=base.san_adapters, storage_servers=base.storage_servers, hosts=base.hosts,
                      parameters=base.parameters)
    _pinned.append(catalog)
    try:
        yield catalog
    finally:
        _pinned.pop()


def built_in_names(section: str) -> set[str]:
    """The entry names of one section of the built-in catalog (models/catalog/), without a user's folder."""
    return {str(name) for name in _read_yaml(CATALOG_DIR / f"{section}.yaml")}


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
