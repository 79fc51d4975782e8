"""Worker processes end with their parent (sim/plan/parent_watch.py), whenever the parent dies.

The sweep's end-to-end checks (a SIGKILLed sweep, mid-way and while its workers start) are in
tests/plan/test_sweep.py; these check the two mechanisms one by one, by exit status: the kernel's
parent-death signal (killed by SIGKILL) and the start-up check (``os._exit(1)``).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from sim.plan.parent_watch import worker_start
from tests.conftest import HANG_S, ROOT

WORKER = """\
import sys, time
from sim.plan.parent_watch import worker_start
initializer, initargs = worker_start(int(sys.argv[1]))
initializer(*initargs)
print("ready", flush=True)
time.sleep(600)  # killed long before, or the test fails on its exit status
"""

PARENT = """\
import os, subprocess, sys, time
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid())], stdout=subprocess.PIPE, text=True)
assert worker.stdout is not None and worker.stdout.readline() == "ready\\n"
print(worker.pid, flush=True)
time.sleep(600)
"""

SUBREAPER = """\
import ctypes, os, signal, subprocess, sys, time
PR_SET_CHILD_SUBREAPER = 36
assert ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0  # the orphaned worker comes to us
parent = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE, text=True)
assert parent.stdout is not None
worker = int(parent.stdout.readline())
start = time.monotonic()
os.kill(parent.pid, signal.SIGKILL)
parent.wait()
_, status = os.waitpid(worker, 0)
print(os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status), time.monotonic() - start)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG and PR_SET_CHILD_SUBREAPER are Linux's")
def test_the_kernel_kills_a_running_worker_when_its_parent_is_sigkilled() -> None:
    """A worker past its initializer, whose parent is SIGKILLed, is SIGKILLed by the kernel: not by its own watch
    thread (that would be an exit status 1), and not left to end its sleep (exit status 0). Told by how it ended,
    not by how long it took, so a loaded machine cannot fail it; the timeout only guards against a hang."""
    done = subprocess.run([sys.executable, "-c", SUBREAPER, PARENT, WORKER], cwd=ROOT, capture_output=True, text=True,
                          timeout=HANG_S)
    assert done.returncode == 0, done.stderr
    signal_number, _seconds = done.stdout.split()
    assert int(signal_number) == 9, f"the worker ended with {signal_number} (negative: an exit status), not SIGKILL"


def test_a_worker_whose_parent_is_already_gone_exits_at_start() -> None:
    """The parent died before the initializer ran (the worker now belongs to a reaper): exit status 1 at once,
    not a worker waiting for ever on a queue nobody feeds."""
    not_my_parent = 0  # pid 0 is nobody's parent: as if the real one had died and the worker been reparented
    # a worker that went on would print "ready" and sleep: the exit status and the output tell, not the time taken
    done = subprocess.run([sys.executable, "-c", WORKER, str(not_my_parent)], cwd=ROOT, capture_output=True, text=True,
                          timeout=HANG_S)
    assert done.returncode == 1, done
    assert done.stdout == "", "the worker went on past its initializer"


def test_a_starting_worker_checks_its_parent_before_importing_sim() -> None:
    """The pickled initializer a spawned worker receives runs the check and starts the watch without importing
    ``sim`` (the engine and SciPy take seconds to import on a loaded machine: a window for orphans)."""
    initializer = pickle.dumps(worker_start(os.getpid()))
    probe = ("import pickle, sys, threading; initializer, initargs = pickle.loads(sys.stdin.buffer.read()); "
             "initializer(*initargs); "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sim', 'models', 'numpy', 'scipy'))); "
             "print([t.name for t in threading.enumerate()])")
    child = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, input=initializer, capture_output=True, timeout=HANG_S)
    # the child's parent is this process, the pid it was given: it must carry on, watched
    assert child.returncode == 0, child.stderr.decode()
    imported, threads = child.stdout.decode().splitlines()
    assert imported == "[]"
    assert "flashplan-parent-watch" in threads
