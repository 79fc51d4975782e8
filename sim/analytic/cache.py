"""Compiled networks kept for reuse: the same hardware and I/O mix evaluated at another rate or queue depth
reuses its compiled network (keyed by a frozen copy of the scenario's hardware and mix)."""

from __future__ import annotations

import threading
from collections import OrderedDict

from pydantic import BaseModel

from models.catalog import Catalog
from models.hardware import FlashDeviceSpec
from models.scenario import Scenario
from models.workload import ClosedWorkload
from sim.analytic.paths import Compiler, clear_tables, compile_scenario
from sim.route.describe import volume_layout

CACHE_SIZE = 512
"""Compiled networks kept for reuse (the same hardware and I/O mix at another rate or queue depth)."""
_cache: OrderedDict[tuple[object, ...], Compiler] = OrderedDict()
_cache_lock = threading.Lock()


_SCALARS = frozenset({str, int, float, bool, type(None)})
_MODEL, _INLINE_SPEC, _LIST, _OTHER = range(4)
_FREEZE_AS: dict[type, int] = {}
"""Type -> how ``_freeze`` copies its values (found once per type: isinstance on a model class is slow)."""


def _freeze(value: object) -> object:
    """A hashable copy of a model's field values (an inline device spec by identity)."""
    kind = type(value)
    how = _FREEZE_AS.get(kind)
    if how is None:
        how = _FREEZE_AS[kind] = (_INLINE_SPEC if issubclass(kind, FlashDeviceSpec) else _MODEL if issubclass(kind, BaseModel)
                                  else _LIST if issubclass(kind, list) else _OTHER)
    if how == _MODEL:
        scalars = _SCALARS
        frozen: list[object] = [kind]
        for v in value.__dict__.values():
            frozen.append(v if type(v) in scalars else _freeze(v))
        return tuple(frozen)
    if how == _INLINE_SPEC:
        return ("inline spec", id(value))
    if how == _LIST:
        return tuple([_freeze(v) for v in value])  # type: ignore[attr-defined]
    return value


def clear_cache(everything: bool = False) -> None:
    """Forget every compiled network (the next evaluations compile from scratch).

    With ``everything``, also the tables compiled networks are built from: parameters derived
    from the catalog, volume-layer plans of each layout and mix, component names.
    """
    with _cache_lock:
        _cache.clear()
    if everything:
        clear_tables()


def compiled(scenario: Scenario, catalog: Catalog, spread: bool = False) -> Compiler:
    """The compiled network of the scenario's hardware and I/O mix, from the cache when it has been seen.

    The key leaves out what only the solver reads (rate, on/off periods, jobs x queue depth,
    think time), except the job count where jobs stay on members (closed JBOD, sequential streams).
    A catalog that changes (``load_catalog`` returns a new object) changes the key.
    """
    topo = scenario.topology
    wl = scenario.workload
    layout = volume_layout(topo)
    jobs = (wl.jobs, wl.queue_depth) if isinstance(wl, ClosedWorkload) and (layout == "jbod" or wl.access == "sequential") else None
    key = (id(catalog), _freeze(topo), wl.read_fraction, wl.block_size_kib, _freeze(wl.sizes) if wl.sizes else None, wl.access, jobs,
           spread, _freeze(scenario.faults) if scenario.faults is not None else None, scenario.device_model,
           tuple(wl.placement) if wl.placement is not None else None)
    with _cache_lock:
        c = _cache.get(key)
        if c is not None:
            _cache.move_to_end(key)
            return c
    c = compile_scenario(scenario, catalog, finish=False, spread=spread)
    c.keep = (topo, catalog)  # keeps inline specs (keyed by id) and the catalog alive while cached
    with _cache_lock:
        _cache[key] = c
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return c
