"""The console every ``flashplan`` command prints to: a table is never cut.

Rich shortens a cell that does not fit the console ("PM1733-..."). This console never does: it gives
each column at least the width of its longest word (cells wrap between words) and shares what is
left in proportion to what each column would take unwrapped. Written to a file or a pipe, it widens
beyond ``PIPE_WIDTH`` when the longest words need it; on a terminal too narrow for them a cell folds
onto the next line instead of being elided.
"""

from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table

PIPE_WIDTH = 120
"""The width of output written to a file or a pipe (wider only for a table whose longest words need it)."""
UNBOUNDED = 100_000


def fit_columns(console: Console, table: Table, width: int, shrink: bool = False) -> int:
    """Set the width of every column of ``table`` so that it fits ``width`` characters and no word is split;
    return the width the table needs (above ``width`` when its longest words do not fit). With ``shrink`` (a
    terminal, which cannot widen) columns whose longest words do not fit share ``width`` by those words' lengths
    and fold them."""
    options = console.options.update_width(UNBOUNDED)
    ranges = [table._measure_column(console, options, column) for column in table.columns]
    pads = [table._get_padding_width(column._index) for column in table.columns]
    lows = [r.minimum for r in ranges]
    highs = [max(r.maximum, r.minimum) for r in ranges]
    room = width - table._extra_width
    if sum(highs) <= room:
        return sum(highs) + table._extra_width
    if sum(lows) > room and shrink:
        widths = [max(room * low // sum(lows), pad + 1) for low, pad in zip(lows, pads, strict=True)]
    else:
        spare = max(room - sum(lows), 0)
        slack = [h - lo for h, lo in zip(highs, lows, strict=True)]
        total = sum(slack) or 1
        widths = [low + spare * extra // total for low, extra in zip(lows, slack, strict=True)]
    for column, cell_width, pad in zip(table.columns, widths, pads, strict=True):
        column.width = max(cell_width - pad, 1)
        column.overflow = "fold"
        column.no_wrap = False  # a column that may not wrap would be cropped at its width instead of folded
    return sum(lows) + table._extra_width


class FullConsole(Console):
    """A rich console whose tables show every character of every cell (see the module docstring)."""

    def print(self, *objects: Any, **kwargs: Any) -> None:  # type: ignore[override]
        tables = [o for o in objects if isinstance(o, Table)]
        need = max((fit_columns(self, t, self.width, shrink=self.is_terminal) for t in tables), default=0)
        if self.is_terminal or need <= self.width:
            super().print(*objects, **kwargs)
            return
        width = self.width
        self.width = need
        try:
            super().print(*objects, **kwargs)
        finally:
            self.width = width


def command_console() -> FullConsole:
    """The console a command prints its answer on: the terminal's width, or ``PIPE_WIDTH`` for a file or pipe."""
    return FullConsole(width=None if sys.stdout.isatty() else PIPE_WIDTH)


__all__ = ["PIPE_WIDTH", "FullConsole", "command_console", "fit_columns"]
