"""`make demo` runs the web server and the worker under scripts/supervise.sh: stopping the
demo stops them, whether by Ctrl-C or by a TERM (a process manager, `kill`)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has stopped


def wait_for(check, seconds: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if check():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_demo_stops_what_it_supervises(tmp_path, stop):
    pid_file = tmp_path / "child.pid"
    # A supervised child that says who it is, then waits to be stopped.
    child = f'{sys.executable} -c \'import os, time; open("{pid_file}", "w").write(str(os.getpid())); time.sleep(300)\''
    demo = subprocess.Popen(
        [
            sys.executable,
            "-c",
            # Ctrl-C as a terminal delivers it: a test run started in the background (SIGINT
            # ignored, and inherited by what it starts) would make Python ignore it too.
            textwrap.dedent(f"""
                import signal
                signal.signal(signal.SIGINT, signal.default_int_handler)
                from app.demo.runner import supervise
                supervise({{"child": {child!r}}}, {{}})
            """),
        ],
        cwd=ROOT,
        start_new_session=True,  # the signal reaches the demo alone, as `kill` sends it
    )
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
        supervised = int(pid_file.read_text())
        demo.send_signal(stop)
        assert demo.wait(10) is not None
        assert wait_for(lambda: not alive(supervised)), "the supervised process outlived the demo"
    finally:
        with contextlib.suppress(ProcessLookupError):  # what is left of it, if anything
            os.killpg(demo.pid, signal.SIGKILL)
