"""scripts/supervise.sh (what `make run` runs): a child that dies is restarted; Ctrl-C stops all."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.workers.processes import ROOT


def _text(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


def _count(runs: Path) -> int:
    return _text(runs).count("ran")


def _wait_for(check: Callable[[], bool], *, within: float) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, f"not within {within} s"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(
    ("stop", "to_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["ctrl-c", "term-to-the-supervisor"],
)
def test_a_child_that_dies_is_restarted_with_a_back_off_and_ctrl_c_stops_everything(
    tmp_path: Path, stop: signal.Signals, to_group: bool
) -> None:
    runs = tmp_path / "runs"
    steady_pid = tmp_path / "steady.pid"
    errors = tmp_path / "stderr"
    supervisor = subprocess.Popen(
        [
            str(ROOT / "scripts" / "supervise.sh"),
            f"steady=sh -c 'echo $$ > {steady_pid}; exec sleep 300'",
            f"flaky=sh -c 'echo ran >> {runs}; exit 3'",
        ],
        stdout=subprocess.DEVNULL,
        stderr=errors.open("wb"),
        start_new_session=True,  # its own process group, as a terminal gives `make run`
    )
    started = time.monotonic()
    try:
        # Runs at 0 s, 1 s (back-off 1 s) and 3 s (back-off 2 s); the fourth comes 4 s later.
        _wait_for(lambda: _count(runs) >= 3 and _text(steady_pid), within=60)
        assert time.monotonic() - started >= 3.0, "restarted after 1 s, then after 2 s"
        assert supervisor.poll() is None, "a dying child must not stop the supervisor"
        assert _count(runs) == 3
        log = errors.read_text()
        assert "newsdesk: flaky exited (status 3); restarting it in 1 s" in log
        assert "newsdesk: flaky exited (status 3); restarting it in 2 s" in log
        assert "steady" not in log  # the other child ran on, untouched
        steady = int(_text(steady_pid))
        assert _alive(steady)

        if to_group:  # Ctrl-C: the whole foreground group
            os.killpg(supervisor.pid, stop)
        else:  # run.sh's cleanup: the supervisor alone, which stops its children
            os.kill(supervisor.pid, stop)
        assert supervisor.wait(30) == 0
        time.sleep(0.2)
        assert not _alive(steady)
    finally:
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGKILL)
