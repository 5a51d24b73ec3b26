"""Real processes for fault tests: a private Redis or PostgreSQL to stop and start, and workers.

The shared test services must stay up for the other tests running beside
these, so a test that takes Redis or PostgreSQL down gets its own server on
a free port, in a temporary folder, and stops it at the end.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app.core.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.getuid() == 0 else args


class PrivateRedis:
    """A redis-server of this test's own, stopped (`shutdown nosave`) and started at will."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
            self._process = None


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own (initdb, pg_ctl), restartable mid-test."""

    def __init__(self, folder: Path) -> None:
        self.bin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
        self.folder = folder
        self.data = folder / "data"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/newsdesk"

    def _run(self, *args: str) -> None:
        subprocess.run(_as_postgres([str(self.bin / args[0]), *args[1:]]), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip

    def init(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.getuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            os.chmod(self.folder, 0o755)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync")  # fmt: skip

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                  "-t", "60", "start", "-o", options)  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")


def worker_env(settings: Settings, **extra: str) -> dict[str, str]:
    values = {
        "DATABASE_URL": settings.database_url,
        "DATABASE_OWNER_URL": settings.database_owner_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key.get_secret_value(),
        "BASE_URL": settings.base_url,
        "EGRESS_ALLOW": ",".join(settings.egress_allow),
        "EGRESS_HOST_RATE": "1000",
        "EGRESS_HOST_BURST": "1000",
        "REDIS_PREFIX": settings.redis_prefix,
        "PASSWORD_HASHING": settings.password_hashing,
        "LOG_LEVEL": "INFO",
        **extra,
    }
    return {**os.environ, **values}


class WorkerProcess:
    """`python -m app worker` as its own process (and process group), its output in a file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app", "worker"],
            cwd=ROOT,
            env=env,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        """`kill -9`: no shutdown hook runs, no lease is given back."""
        if self.alive:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.alive:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def page_readers(parent: int) -> list[int]:
    """The live page-reading processes (app.articles.reading) `parent` started: Linux /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        state, ppid = stat[0], int(stat[1])
        if ppid == parent and state != "Z" and b"spawn_main" in command:
            found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def eventually(check: Callable[[], object], *, within: float, every: float = 0.25) -> object:
    """Poll an (async or plain) check until it returns something truthy, or fail after `within` s."""
    deadline = time.monotonic() + within
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within} s: {check}")
        await asyncio.sleep(every)
