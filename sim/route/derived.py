"""Parameters derived from the catalog, remembered once per Catalog object and distinct input.

``load_catalog`` returns a new Catalog object whenever its inputs change ($FLASHPLAN_FITTED, the
fitted file, $FLASHPLAN_CATALOG_DIR), so derived values are kept per Catalog object: a new catalog
starts with an empty table, and the old table goes when the next catalog arrives. Route
descriptions (``sim.route.describe``) read every catalog-derived number through here, so both
solvers share one derivation and one cache.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from models.catalog import Catalog

_derived: dict[int, tuple[Catalog, dict[tuple[object, ...], object]]] = {}
_DERIVED_ENTRIES = 4096


def table(catalog: Catalog) -> dict[tuple[object, ...], object]:
    """The derived-parameter table of ``catalog`` (which it keeps alive, so its id stays unique)."""
    entry = _derived.get(id(catalog))
    if entry is None or entry[0] is not catalog:
        _derived.clear()
        entry = _derived[id(catalog)] = (catalog, {})
    values = entry[1]
    if len(values) > _DERIVED_ENTRIES:
        values.clear()
    return values


def remembered(catalog: Catalog, key: tuple[object, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, once per catalog and ``key`` (a key made of plain values)."""
    values = table(catalog)
    hit = values.get(key)
    if hit is None:
        hit = values[key] = compute()
    return hit


def remembered_for(catalog: Catalog, key: tuple[object, ...], owner: object, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per catalog, ``key`` and ``owner`` object (an inline device spec by identity:
    the entry keeps ``owner`` alive, so its id is not reused)."""
    values = table(catalog)
    full = (*key, id(owner))
    hit = values.get(full)
    if hit is not None and hit[0] is owner:  # type: ignore[index]
        return hit[1]  # type: ignore[index]
    value = compute()
    values[full] = (owner, value)
    return value


def clear() -> None:
    """Forget every derived parameter (they are derived again on use)."""
    _derived.clear()
