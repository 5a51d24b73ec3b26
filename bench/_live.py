"""What the live benchmarks share (bench/live_fanout.py, bench/wall_live.py): N SSE
clients over real HTTP, a writer process that prints "id commit_time" per stored row,
commit -> patch latencies, the server process, and a scratch workspace of N editors.

DATABASE_URL and REDIS_URL override the defaults (the test services on ports 54339 and
63809, Redis database 15); the scratch database is `newsdesk_live_bench`.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get(
    "DATABASE_URL", "postgresql://postgres@127.0.0.1:54339/newsdesk_live_bench"
).replace("newsdesk_bench", "newsdesk_live_bench")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:63809/15")
SECRET = "bench-secret-key-that-is-long-enough-0123456789"
PREFIX = "ndlivebench"
GRACE_SECONDS = 3.0  # after the writer's last row, for the last patches to arrive


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def settings():  # type: ignore[no-untyped-def]
    from app.core.config import Settings

    return Settings(
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        secret_key=SECRET,  # type: ignore[arg-type]
        redis_prefix=PREFIX,
        password_hashing="fast",
        _env_file=None,  # type: ignore[call-arg]
    )


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Clients:
    """N SSE readers; when each first saw each row id (`row_id` finds them in a patch)."""

    def __init__(self, url: str, cookies: list[str], row_id: re.Pattern[bytes]) -> None:
        self.url = url
        self.cookies = cookies
        self.row_id = row_id
        self.seen: list[dict[int, float]] = [{} for _ in cookies]
        self.ready = 0
        self.bytes = 0
        self.last_chunk_at = 0.0
        self.tasks: list[asyncio.Task[None]] = []

    async def _read(self, http: httpx.AsyncClient, i: int) -> None:  # noqa: TID251 -- the browsers
        headers = {"Datastar-Request": "true", "accept": "text/event-stream"}
        if self.cookies[i]:
            headers["cookie"] = f"nd_session={self.cookies[i]}"
        try:
            async with http.stream("GET", self.url, headers=headers) as response:
                first = True
                async for chunk in response.aiter_raw():
                    now = time.time()
                    self.last_chunk_at = now
                    if first:
                        self.ready += 1
                        first = False
                        continue  # the state: ids already there
                    self.bytes += len(chunk)
                    for found in self.row_id.finditer(chunk):
                        self.seen[i].setdefault(int(found.group(1)), now)
        except (httpx.HTTPError, asyncio.CancelledError):
            pass

    async def start(self, http: httpx.AsyncClient) -> None:  # noqa: TID251 -- the browsers
        self.tasks = [asyncio.create_task(self._read(http, i)) for i in range(len(self.cookies))]
        while self.ready < len(self.cookies):
            await asyncio.sleep(0.05)
            if all(t.done() for t in self.tasks):
                raise RuntimeError("every stream ended before it sent its state")
        await self._settle()

    async def _settle(self, quiet: float = 0.5) -> None:
        """Wait until every state has arrived: a large state comes in many chunks, and
        200 clients still reading theirs would put the connect storm, not the live
        path, into the first items' latencies. Bytes count from here."""
        while True:
            quiet_for = time.time() - self.last_chunk_at
            if quiet_for >= quiet:
                break
            await asyncio.sleep(quiet - quiet_for)
        self.bytes = 0

    async def stop(self) -> int:
        """Stop reading; how many streams had ended (dropped) before."""
        dropped = sum(1 for t in self.tasks if t.done())
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        return dropped


async def run_writer(script: str, args: list[str]) -> dict[int, float]:
    """`script --writer args...` in its own process: row id -> its commit time."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, script, "--writer", *args, stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    commits: dict[int, float] = {}
    assert process.stdout is not None
    async for line in process.stdout:
        row, at = line.split()
        commits[int(row)] = float(at)
    await process.wait()
    return commits


async def measure(
    url: str,
    cookies: list[str],
    server_pid: int,
    *,
    script: str,
    writer_args: list[str],
    row_id: re.Pattern[bytes],
) -> dict[str, float]:
    """Open the clients, run the writer, and report commit -> patch over every client."""
    limits = httpx.Limits(max_connections=len(cookies) + 10, max_keepalive_connections=0)
    browsers = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None), limits=limits)  # noqa: TID251
    async with browsers as http:
        clients = Clients(url, cookies, row_id)
        await clients.start(http)
        cpu = cpu_seconds(server_pid)
        commits = await run_writer(script, writer_args)
        await asyncio.sleep(GRACE_SECONDS)
        cpu = cpu_seconds(server_pid) - cpu
        dropped = await clients.stop()
    every, last, missed = [], [], 0
    for row, at in commits.items():
        arrivals = [seen[row] - at for seen in clients.seen if row in seen]
        missed += len(cookies) - len(arrivals)
        every += arrivals
        if arrivals:
            last.append(max(arrivals))
    return {
        "p50": pct(every, 0.5) * 1000,
        "p99": pct(every, 0.99) * 1000,
        "last_p50": pct(last, 0.5) * 1000,
        "last_p99": pct(last, 0.99) * 1000,
        "missed": missed,
        "dropped": dropped,
        "cpu": cpu,
        "bytes_per_patch": clients.bytes / max(1, len(cookies) * len(commits)),
    }


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


async def wait_for(url: str) -> None:
    async with httpx.AsyncClient() as http:  # noqa: TID251 -- a readiness probe
        for _ in range(200):
            try:
                # Headers are enough: an event stream's body never ends.
                async with http.stream("GET", url) as response:
                    if response.status_code < 500:
                        return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def server_env(port: int) -> dict[str, str]:
    """The environment of a `python -m app serve` on `port` over the scratch database."""
    return {
        **os.environ,
        "DATABASE_URL": DATABASE_URL,
        "REDIS_URL": REDIS_URL,
        "SECRET_KEY": SECRET,
        "REDIS_PREFIX": PREFIX,
        "BASE_URL": f"http://127.0.0.1:{port}",
        "PORT": str(port),
        "PASSWORD_HASHING": "fast",
        "LOG_LEVEL": "WARNING",
    }


async def editors_workspace(count: int) -> tuple[int, list[str]]:
    """A fresh scratch database with one workspace of `count` editors: (its id, their
    session cookies). Settings are activated and the database and Redis connected."""
    from app.accounts import services as accounts
    from app.accounts.roles import Role
    from bench._setup import start_services

    await start_services(settings())
    owner = await accounts.create_user("owner@bench.example", "Owner", "bench password 123")
    workspace_id = await accounts.create_workspace("Bench", owner)
    editors = []
    for n in range(count):
        user = await accounts.create_user(f"e{n}@bench.example", f"Editor {n}", "bench pw 123456")
        await accounts.add_member(workspace_id, user, Role.EDITOR, actor_user_id=None)
        editors.append((await accounts.start_session(user)).token)
    return workspace_id, editors


def argv_sizes(default_sizes: str) -> tuple[list[int], int, float]:
    """[clients,...] [rows] [per_second] from the command line."""
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    sizes = [int(n) for n in (args[0] if args else default_sizes).split(",")]
    count = int(args[1]) if len(args) > 1 else 40
    rate = float(args[2]) if len(args) > 2 else 4.0
    return sizes, count, rate
