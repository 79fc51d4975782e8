"""Helpers for the tests that kill a run and look for the worker processes it leaves behind."""

from __future__ import annotations

import time

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
