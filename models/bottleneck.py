"""The bottleneck of a result: the most utilized component of its utilization table, one definition for
both solvers and everything that names a bottleneck (CLI, web app, planner, report).

Utilization, as both solvers' tables give it (``Result.utilization``, ``FastResult.utilization``):

* a station of c servers (a drive's dies, its controller, a link direction, the host CPU): busy server time
  over c x the measured window (the fast path: the station's throughput x demand / c, its steady-state
  equivalent);
* a concurrency limit of c slots (namespace and NVMe queues, SCSI LUN queues, z/VM subchannels, write-cache
  slots, driver threads): slot time held over c x the window.

The bottleneck is the component with the largest utilization, compared as the tables print it (percent to one
decimal, ``TABLE_RESOLUTION``): two components that print alike are tied, whatever noise lies below the
printed digit. Among tied components a station is named before a concurrency limit (a limit fills because
the station behind it is busy), then the first in natural name order (``drive2`` before ``drive10``), so the
choice is deterministic and the same in both solvers. A component whose utilization is not a number (a run
stopped before it measured anything) is never chosen while another is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping

TABLE_RESOLUTION = 0.001
"""Utilizations are compared at the resolution the tables print them (0.1 percentage point)."""

LIMITING_UTILIZATION = 0.8
"""A component is called the bottleneck only when it is at least this busy (utilization of its servers or slots);
below, the offered load (jobs, queue depth, think time, an open rate), not the hardware, sets the throughput, and the
most utilized component is only the busiest. One rule for the CLI, the planner's tables and the web app."""

NO_BOTTLENECK = "none"
"""The name given when the table is empty (or every candidate is excluded)."""

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """A name's sort key with its numbers compared as numbers (``drive2`` before ``drive10``)."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(name) if part)


def printed(utilization: float) -> float:
    """A utilization as the tables print it (percent, one decimal): the value the bottleneck is compared on.
    Not a number compares below every number."""
    if not math.isfinite(utilization):
        return -math.inf if math.isnan(utilization) else utilization * 100.0
    return round(utilization * 100.0, 1)


def _rank(name: str, utilization: float, limits: Collection[str]) -> tuple[float, int, tuple[tuple[int, int | str], ...]]:
    return (-printed(utilization), 1 if name in limits else 0, natural_key(name))


def most_utilized(utilization: Mapping[str, float], eligible: Iterable[str] | None = None,
                  limits: Collection[str] = ()) -> str:
    """The bottleneck: the most utilized component of ``utilization`` (the module's definition).

    ``eligible`` restricts the choice to those names (all of the table when None); ``limits`` names the
    components that are concurrency limits (slots), named after a station they tie with. ``NO_BOTTLENECK``
    when nothing is left to choose from."""
    names: Iterable[str] = utilization if eligible is None else (n for n in eligible if n in utilization)
    limit_set = frozenset(limits)
    best = min(names, key=lambda n: _rank(n, utilization[n], limit_set), default=None)
    return NO_BOTTLENECK if best is None else best


def is_most_utilized(name: str, utilization: Mapping[str, float]) -> bool:
    """Whether ``name`` is tied for the top of ``utilization`` as the table prints it (a bottleneck this table
    agrees with, whatever the tie-break)."""
    if name not in utilization:
        return False
    top = max((printed(u) for u in utilization.values()), default=-math.inf)
    return printed(utilization[name]) >= top


def consistent_bottleneck(given: str, utilization: Mapping[str, float]) -> str:
    """``given`` when the table has it at its top (the solver's tie-break kept), else the table's
    ``most_utilized``: a result never names a bottleneck its own table contradicts."""
    if not utilization or is_most_utilized(given, utilization):
        return given
    return most_utilized(utilization)


def solvers_agree(des_bottleneck: str, fast_utilization: Mapping[str, float], fast_bottleneck: str) -> bool:
    """Whether the DES's bottleneck and the fast path's are the same resource: the same name, or the DES's is
    tied for the top of the fast path's table (symmetric instances, such as four equally loaded adapters, that
    the DES's noise orders at random)."""
    return des_bottleneck == fast_bottleneck or is_most_utilized(des_bottleneck, fast_utilization)


def limits(utilization: float) -> bool:
    """Whether a component this busy limits the throughput (``LIMITING_UTILIZATION``; NaN never does)."""
    return utilization == utilization and utilization >= LIMITING_UTILIZATION


def limit_label(name: str, utilization: Mapping[str, float]) -> str:
    """The line's label for the most utilized component ``name``: "bottleneck" where it limits, else "busiest
    component" (with its utilization, and that nothing is near its limit)."""
    busy = utilization.get(name, math.nan)
    if limits(busy):
        return "bottleneck"
    shown = f"{busy:.1%}" if busy == busy else "-"
    return f"no bottleneck (nothing {LIMITING_UTILIZATION:.0%} busy); busiest component ({shown})"


def both_words(des_bottleneck: str, fast_utilization: Mapping[str, float] | None, fast_bottleneck: str | None) -> str:
    """The bottleneck as one label: the DES's, followed by the fast path's where the two disagree
    (``drive0.dies (fast path: host_cpu)``)."""
    if fast_utilization is None or not fast_bottleneck or solvers_agree(des_bottleneck, fast_utilization, fast_bottleneck):
        return des_bottleneck
    return f"{des_bottleneck} (fast path: {fast_bottleneck})"
