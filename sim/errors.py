"""The command line's exit codes and its error type for bad input.

``BadInput`` is ``models.loading.BadInput`` (re-exported): one type for bad input in every
reader, the CLI, the importers and the web app.

Exit codes of ``flashplan``:

* 0 ``EXIT_OK``: done; for ``simulate``, the result is precise or cut short by a budget.
* 1 ``EXIT_FAILURE``: an unexpected failure (one line; ``FLASHPLAN_DEBUG=1`` shows the traceback).
* 2 ``EXIT_BAD_INPUT``: bad input, one ``field.path: message`` line per problem on stderr.
* 3 ``EXIT_UNSTABLE``: ``simulate`` (or ``analyze``) ran, but the offered load meets or exceeds a component's
  capacity: the result is printed, marked unstable, and its latency means nothing.
* 130 ``EXIT_INTERRUPTED``: Ctrl-C (or SIGTERM); nothing is left half-written.
"""

from __future__ import annotations

from models.loading import BadInput, format_problems

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_UNSTABLE = 3
EXIT_INTERRUPTED = 130

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_UNSTABLE", "BadInput", "format_problems"]
