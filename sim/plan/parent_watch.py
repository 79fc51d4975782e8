"""Local worker processes that end with the process that started them, even if it is SIGKILLed.

A pool worker otherwise outlives a killed parent: it finishes the runs already queued to it, then
waits on the pool's call queue for ever (its siblings hold the queue's write end open).
``initializer, initargs = worker_start(os.getpid())`` is the pool initializer of the sweep's spawned
workers; the planner's forked workers (sim/plan/screen.py) have this module already and call
``exit_with_parent(parent)`` directly. In the worker it runs, in this order:

1. on Linux, asks the kernel to SIGKILL the worker when its parent ends (``PR_SET_PDEATHSIG``);
2. exits at once if its parent is already not the pid it was given (the parent died before step 1);
3. starts a thread that checks the parent every ``PARENT_CHECK_S`` seconds: the only watch where
   ``prctl`` is missing (macOS), a second one on Linux.

The parent's pid is passed in, not read in the worker: a spawned worker takes a second or more
to start, and a parent killed in that window has already handed the worker to a reaper, so
``os.getppid()`` would name the reaper and a watch keyed on it would never fire
(tests/plan/test_sweep.py, the sweep killed while its workers start).

This module imports the standard library only, and the initializer is ``runpy.run_path`` of this
file, not a function of the ``sim`` package: unpickling a reference to one would import ``sim``
(the engine, SciPy: seconds on a loaded machine) before the check. So a spawned worker checks its
parent within a fraction of a second of starting, and imports the engine only with its first run.
(A parent started as the ``flashplan`` console script is the exception: multiprocessing re-runs
that script, and so imports ``sim``, in each spawned worker before any initializer.)

Caveat of ``PR_SET_PDEATHSIG``: the signal comes when the *thread* that started the worker ends.
``ProcessPoolExecutor`` starts its workers in the thread that calls ``submit``, and every pool here
lives inside one call in one thread, so that thread outlives the pool.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

PARENT_CHECK_S = 1.0
"""How often the watch thread looks at the worker's parent."""
PR_SET_PDEATHSIG = 1
"""<linux/prctl.h>"""
RUN_NAME = "__flashplan_worker_start__"
"""``__name__`` of this file run as a worker's initializer (``worker_start``)."""


def die_with_parent() -> bool:
    """Linux: have the kernel SIGKILL this process when its parent (thread) ends. False where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def exit_with_parent(parent: int) -> None:
    """Worker-process initializer: exit as soon as process ``parent`` (the pool's owner) is gone.

    Ctrl-C is the parent's to handle (it reaches the whole process group): a worker ignores
    it, so no worker prints a traceback; the parent ends the workers itself.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    if os.getppid() != parent:  # the parent died before the kernel was told (or before this worker started)
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_S)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="flashplan-parent-watch", daemon=True).start()


def worker_start(parent: int) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``(initializer, initargs)`` for a ``ProcessPoolExecutor`` whose workers must end with process ``parent``:
    ``exit_with_parent(parent)``, run from this file by path so that the worker need not import ``sim`` first."""
    return runpy.run_path, (__file__, {"parent_pid": parent}, RUN_NAME)


if __name__ == RUN_NAME:  # a starting worker, through worker_start
    exit_with_parent(int(globals()["parent_pid"]))
