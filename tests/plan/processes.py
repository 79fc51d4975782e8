"""Helpers for the tests that kill a run and look for the worker processes it leaves behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator

import psutil


def outliving(processes: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """The processes still running after up to ``timeout_s``: a zombie has exited (only its reaper has yet to
    collect its status, and init in a container may take its time), so it does not count."""
    def running(p: psutil.Process) -> bool:
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + timeout_s
    while (alive := [p for p in processes if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def kill_and_find_survivors(proc: subprocess.Popen[bytes], workers: list[psutil.Process],
                            timeout_s: float = 120) -> list[psutil.Process]:
    """SIGKILL ``proc`` alone, wait for it, and return those of its ``workers`` still running ``timeout_s`` later
    (a bound for a worker that never exits: one that is slow to notice on a loaded machine exits well inside it)."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    return outliving(workers, timeout_s)


@contextlib.contextmanager
def nothing_left_behind(proc: subprocess.Popen[bytes], workers: list[psutil.Process]) -> Iterator[None]:
    """On the way out, pass or fail, kill ``proc``'s session (started with ``start_new_session=True``) and every
    process in ``workers`` (the list as it is then), so a failing test leaves no process behind."""
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for child in workers:
            with contextlib.suppress(psutil.Error):
                child.kill()


def wait_for_workers(proc: subprocess.Popen[bytes], workers: list[psutil.Process], what: str, count: int = 2,
                     timeout_s: float = 300) -> None:
    """Fill ``workers`` with ``proc``'s child processes once it has ``count`` of them (``what`` names ``proc`` in
    the failure messages), failing if it ends first or takes over ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    parent = psutil.Process(proc.pid)
    while len(workers) < count:
        assert proc.poll() is None, f"{what} ended before forking its workers"
        assert time.monotonic() < deadline, f"{what} forked no {count} workers in {timeout_s:g} s"
        with contextlib.suppress(psutil.Error):
            workers[:] = parent.children()
        time.sleep(0.01)


def killed_while_working(cmd: list[str], what: str, **popen: object) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own session, wait until its two workers run and are into their first work, SIGKILL it
    alone and fail if a worker outlives it (``what`` names it in the messages); the ended process is returned."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            **popen)  # type: ignore[call-overload]
    workers: list[psutil.Process] = []
    with nothing_left_behind(proc, workers):
        wait_for_workers(proc, workers, what)
        time.sleep(0.5)  # into their first work
        assert proc.poll() is None, f"{what} ended before the kill"
        alive = kill_and_find_survivors(proc, workers)
        assert not alive, f"the workers outlived the killed {what}: {alive}"
    return proc
