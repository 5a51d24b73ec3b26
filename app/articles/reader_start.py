"""What a page reader (app.articles.reading) does first, before it imports the reading code.

A reader ends with its worker through Linux's parent-death signal, which only a living
parent can give: set after importing trafilatura, lxml and the sanitiser (a second, several
on a loaded machine), it came too late for a worker killed meanwhile, and that reader
waited for pages for ever. So this module imports nothing heavy and a reader runs it at
once; one whose worker is already gone leaves instead of waiting.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1  # prctl(2)


def reader_started(worker_pid: int) -> None:
    """In a reader: stop signals are the worker's to handle, and the reader dies with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    # A worker that died before the signal was set never sends it.
    if os.getppid() != worker_pid:
        os._exit(0)
