"""Live fan-out: commit -> patch latency for N SSE clients on the library stream.

    .venv/bin/python bench/live_fanout.py [clients,...] [articles] [per_second]

With the test services running (scripts/services.sh start test). It creates
(and drops first) its own scratch database, `newsdesk_live_bench` by default:
DATABASE_URL and REDIS_URL override the defaults (the test services on ports
54339 and 63809, Redis database 15).

For each N (default 50, 100, 200) it starts the real web server (`python -m app
serve`, one process), opens N SSE clients over real HTTP on /articles/stream
(N sessions of editors of one workspace: one distinct view), then a second
process stores articles at a steady rate (default 40 at 4/s) through
`process_scraped_article` and prints each article's commit time. It reports,
from commit to the patch naming the article: p50/p99 over every client and
article, p50/p99 of the last client per article, missed patches (a client that
never got an article) and dropped streams, and the server's CPU seconds.

Then the same clients read a bare baseline: a process that relays each Redis
message's bytes to N raw SSE connections, fed with publishes of the same size
as the real patches. It prints the ratio of the two p99s. The target: p99 <=
100 ms at 200 clients on one server process.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATABASE_URL = os.environ.get(
    "DATABASE_URL", "postgresql://postgres@127.0.0.1:54339/newsdesk_live_bench"
).replace("newsdesk_bench", "newsdesk_live_bench")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:63809/15")
SECRET = "bench-secret-key-that-is-long-enough-0123456789"
PREFIX = "ndlivebench"
BARE_CHANNEL = f"{PREFIX}:bare"
ARTICLE_ID = re.compile(rb'id="article-(\d+)"')
GRACE_SECONDS = 3.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings():  # type: ignore[no-untyped-def]
    from app.core.config import Settings

    return Settings(
        database_url=DATABASE_URL,
        redis_url=REDIS_URL,
        secret_key=SECRET,  # type: ignore[arg-type]
        redis_prefix=PREFIX,
        password_hashing="fast",
        _env_file=None,  # type: ignore[call-arg]
    )


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# The writer process: stores articles at a steady rate, prints "id commit_time" -------


async def writer(workspace_id: int, count: int, per_second: float, bare_size: int) -> None:
    from app.core import config, db
    from app.core import redis as core_redis

    settings = _settings()
    config.activate(settings)
    await db.connect(settings, pool_max=4)
    redis = await core_redis.connect_redis(settings)
    start = time.monotonic()
    if bare_size:  # the baseline: a bare publish of the same number of bytes
        for n in range(count):
            await asyncio.sleep(max(0.0, start + n / per_second - time.monotonic()))
            marker = f'<li id="article-{n + 1}">'.encode()
            at = time.time()
            await redis.publish(BARE_CHANNEL, marker + b"x" * max(0, bare_size - len(marker)))
            print(n + 1, at, flush=True)
        return
    from app.articles.services import process_scraped_article
    from app.articles.types import OutcomeKind
    from tests.articles.helpers import article_event

    # Each run stores new URLs: the counter behind article_event's URLs starts again in
    # every writer process, and a URL stored by an earlier run is a duplicate, which
    # changes nothing in the library and rightly sends no patch.
    run = time.time_ns()
    for n in range(count):
        await asyncio.sleep(max(0.0, start + n / per_second - time.monotonic()))
        event = article_event(f"https://news.example/bench/{run}/{n}", title=f"Bench {n}")
        outcome = await process_scraped_article(workspace_id, event)
        assert outcome.kind == OutcomeKind.NEW, outcome  # a new row: every client is owed it
        print(outcome.article_id, time.time(), flush=True)  # after commit (and its notice)
    await core_redis.disconnect_redis()
    await db.disconnect()


# The bare baseline server: Redis message -> the same bytes to every SSE connection --


async def bare_server(port: int) -> None:
    from redis.asyncio import Redis

    writers: set[asyncio.StreamWriter] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\nconnection: keep-alive\r\n\r\n: hello\n\n"
        )
        writers.add(writer)
        await reader.read()  # until the client goes
        writers.discard(writer)

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    redis = Redis.from_url(REDIS_URL)
    async with server, redis.pubsub() as pubsub:
        await pubsub.subscribe(BARE_CHANNEL)
        async for message in pubsub.listen():
            if message["type"] == "message":
                data = (
                    b"event: datastar-patch-elements\ndata: elements " + message["data"] + b"\n\n"
                )
                for w in list(writers):
                    w.write(data)


# The orchestrator ---------------------------------------------------------------------


class Clients:
    """N SSE readers; when each first saw each article id."""

    def __init__(self, url: str, cookies: list[str]) -> None:
        self.url = url
        self.cookies = cookies
        self.seen: list[dict[int, float]] = [{} for _ in cookies]
        self.ready = 0
        self.dropped = 0
        self.bytes = 0
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
                    if first:
                        self.ready += 1
                        first = False
                        continue  # the state: ids already there
                    self.bytes += len(chunk)
                    for found in ARTICLE_ID.finditer(chunk):
                        self.seen[i].setdefault(int(found.group(1)), now)
        except (httpx.HTTPError, asyncio.CancelledError):
            pass
        finally:
            self.dropped += 1

    async def start(self, http: httpx.AsyncClient) -> None:  # noqa: TID251 -- the browsers
        self.tasks = [asyncio.create_task(self._read(http, i)) for i in range(len(self.cookies))]
        while self.ready < len(self.cookies):
            await asyncio.sleep(0.05)
            if all(t.done() for t in self.tasks):
                raise RuntimeError("every stream ended before it sent its state")

    async def stop(self) -> int:
        dropped = sum(1 for t in self.tasks if t.done())
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        return dropped


async def _run_writer(args: list[str]) -> dict[int, float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--writer", *args, stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    commits: dict[int, float] = {}
    assert process.stdout is not None
    async for line in process.stdout:
        article_id, at = line.split()
        commits[int(article_id)] = float(at)
    await process.wait()
    return commits


async def measure(
    url: str, cookies: list[str], server_pid: int, writer_args: list[str]
) -> dict[str, float]:
    limits = httpx.Limits(max_connections=len(cookies) + 10, max_keepalive_connections=0)
    browsers = httpx.AsyncClient(timeout=httpx.Timeout(10, read=None), limits=limits)  # noqa: TID251
    async with browsers as http:
        clients = Clients(url, cookies)
        await clients.start(http)
        cpu = _cpu_seconds(server_pid)
        commits = await _run_writer(writer_args)
        await asyncio.sleep(GRACE_SECONDS)
        cpu = _cpu_seconds(server_pid) - cpu
        dropped = await clients.stop()
    every, last, missed = [], [], 0
    for article_id, at in commits.items():
        arrivals = [seen[article_id] - at for seen in clients.seen if article_id in seen]
        missed += len(cookies) - len(arrivals)
        every += arrivals
        if arrivals:
            last.append(max(arrivals))
    return {
        "p50": _pct(every, 0.5) * 1000,
        "p99": _pct(every, 0.99) * 1000,
        "last_p50": _pct(last, 0.5) * 1000,
        "last_p99": _pct(last, 0.99) * 1000,
        "missed": missed,
        "dropped": dropped,
        "cpu": cpu,
        "bytes_per_patch": clients.bytes / max(1, len(cookies) * len(commits)),
    }


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args, cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


async def _wait_for(url: str) -> None:
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


async def main() -> None:
    from app.accounts import services as accounts
    from app.accounts.roles import Role
    from app.core import config, db
    from app.core import redis as core_redis

    logging.basicConfig(level=logging.WARNING)
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    sizes = [int(n) for n in (args[0] if args else "50,100,200").split(",")]
    count = int(args[1]) if len(args) > 1 else 40
    rate = float(args[2]) if len(args) > 2 else 4.0

    settings = _settings()
    config.activate(settings)
    parts = urlsplit(settings.database_url)
    admin = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")))
    name = parts.path.lstrip("/")
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    engine = await db.connect(settings)
    await db.migrate(engine)
    await (await core_redis.connect_redis(settings)).flushdb()
    owner = await accounts.create_user("owner@bench.example", "Owner", "bench password 123")
    workspace_id = await accounts.create_workspace("Bench", owner)
    editors = []
    for n in range(max(sizes)):
        user = await accounts.create_user(f"e{n}@bench.example", f"Editor {n}", "bench pw 123456")
        await accounts.add_member(workspace_id, user, Role.EDITOR, actor_user_id=None)
        editors.append((await accounts.start_session(user)).token)

    port, bare_port = _free_port(), _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": SECRET,
        "REDIS_PREFIX": PREFIX,
        "BASE_URL": f"http://127.0.0.1:{port}",
        "PORT": str(port),
        "PASSWORD_HASHING": "fast",
        "LOG_LEVEL": "WARNING",
    }
    server = _start([sys.executable, "-m", "app", "serve"], env)
    bare = _start([sys.executable, __file__, "--bare", str(bare_port)], env)
    try:
        await _wait_for(f"http://127.0.0.1:{port}/readyz")
        await _wait_for(f"http://127.0.0.1:{bare_port}/")
        print(f"{count} articles at {rate}/s per run; latencies in ms, commit -> patch")
        print(
            f"{'clients':>7} {'':>9} {'p50':>6} {'p99':>6} {'last50':>7} {'last99':>7} "
            f"{'missed':>6} {'dropped':>7} {'cpu s':>6} {'B/patch':>7}"
        )
        for n in sizes:
            url = f"http://127.0.0.1:{port}/articles/stream"
            real = await measure(
                url, editors[:n], server.pid, [str(workspace_id), str(count), str(rate), "0"]
            )
            size = str(max(64, int(real["bytes_per_patch"])))
            base = await measure(
                f"http://127.0.0.1:{bare_port}/",
                [""] * n,
                bare.pid,
                ["0", str(count), str(rate), size],
            )
            for label, r in (("newsdesk", real), ("bare", base)):
                print(
                    f"{n:>7} {label:>9} {r['p50']:>6.1f} {r['p99']:>6.1f} {r['last_p50']:>7.1f} "
                    f"{r['last_p99']:>7.1f} {r['missed']:>6.0f} {r['dropped']:>7.0f} "
                    f"{r['cpu']:>6.2f} {r['bytes_per_patch']:>7.0f}"
                )
            print(
                f"{n:>7} {'ratio':>9} p99 {real['p99'] / max(base['p99'], 0.001):.1f}x the bare "
                f"fan-out; target p99 <= 100 ms: {'met' if real['p99'] <= 100 else 'NOT met'}"
            )
    finally:
        _stop(server)
        _stop(bare)
        await core_redis.disconnect_redis()
        await db.disconnect()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--writer"]:
        asyncio.run(
            writer(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
        )
    elif sys.argv[1:2] == ["--bare"]:
        asyncio.run(bare_server(int(sys.argv[2])))
    else:
        asyncio.run(main())
