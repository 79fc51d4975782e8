"""The command line's error type and exit codes, in their own module so every subcommand
module (and ``python -m sim.cli``, whose module is ``__main__``) shares one ``BadInput`` class."""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """Problems with the user's input, as (field path, message) pairs."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{f}: {m}" for f, m in problems))
        self.problems = problems
