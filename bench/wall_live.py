"""The wall live: commit -> patch latency for N SSE clients on one wall, and the full render.

    .venv/bin/python bench/wall_live.py [clients,...] [items] [per_second]

With the test services running. Like bench/live_fanout.py (whose clients, process
helpers and scratch-database set-up it reuses) it creates its own scratch database
(`newsdesk_live_bench`; DATABASE_URL and REDIS_URL override the defaults), starts the real
web server (`python -m app serve`, one process) and opens N SSE clients over real HTTP on
/wall/stream: N editors of one workspace whose wall has 10 columns of 40 items (one
distinct view). A second process then stores items at a steady rate (default 40 at 4/s),
each into one column as a poll does (one transaction, a notice after commit), and prints
each item's commit time. It reports commit -> the patch naming the item: p50/p99 over
every client and item, of the last client per item, missed patches and dropped streams,
the server's CPU seconds and bytes per patch.

Then, in this process, the time to load and render the whole wall (10 columns x 40 items)
once: what a (re)connecting client costs the server.

Targets (issue 11): p99 <= 100 ms at 200 clients, no client dropped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import live_fanout as fan  # noqa: E402

fan.ARTICLE_ID = re.compile(rb'id="i-\d+-(\d+)"')  # the clients look for wall rows
COLUMNS = 10
PER_COLUMN = 40
SEEDED = 45  # more than a page: "Load older" is already there, as in a busy column


async def writer(workspace_id: int, count: int, per_second: float) -> None:
    from app.core import config, db
    from app.core import redis as core_redis
    from tests.wall.helpers import add_item

    settings = fan._settings()
    config.activate(settings)
    await db.connect(settings, pool_max=4)
    await core_redis.connect_redis(settings)
    columns = [
        r["id"]
        for r in await db.fetch(
            "SELECT id FROM stream_columns WHERE workspace_id = $1 ORDER BY position", workspace_id
        )
    ]
    first = 10_000 + int(await db.fetchval("SELECT count(*) FROM feed_items"))  # fresh per run
    start = time.monotonic()
    for n in range(count):
        await asyncio.sleep(max(0.0, start + n / per_second - time.monotonic()))
        item = await add_item(
            workspace_id, columns[n % len(columns)], first + n, minutes=600 + first + n
        )
        print(item, time.time(), flush=True)  # after commit (and its notice)
    await core_redis.disconnect_redis()
    await db.disconnect()


async def _run_writer(args: list[str]) -> dict[int, float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--writer", *args, stdout=asyncio.subprocess.PIPE, cwd=ROOT
    )
    commits: dict[int, float] = {}
    assert process.stdout is not None
    async for line in process.stdout:
        item_id, at = line.split()
        commits[int(item_id)] = float(at)
    await process.wait()
    return commits


async def measure(
    url: str, cookies: list[str], server_pid: int, args: list[str]
) -> dict[str, float]:
    limits = httpx.Limits(max_connections=len(cookies) + 10, max_keepalive_connections=0)
    browsers = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None), limits=limits)  # noqa: TID251
    async with browsers as http:
        clients = fan.Clients(url, cookies)
        await clients.start(http)
        cpu = fan._cpu_seconds(server_pid)
        commits = await _run_writer(args)
        await asyncio.sleep(fan.GRACE_SECONDS)
        cpu = fan._cpu_seconds(server_pid) - cpu
        dropped = await clients.stop()
    every, last, missed = [], [], 0
    for item_id, at in commits.items():
        arrivals = [seen[item_id] - at for seen in clients.seen if item_id in seen]
        missed += len(cookies) - len(arrivals)
        every += arrivals
        if arrivals:
            last.append(max(arrivals))
    return {
        "p50": fan._pct(every, 0.5) * 1000,
        "p99": fan._pct(every, 0.99) * 1000,
        "last_p50": fan._pct(last, 0.5) * 1000,
        "last_p99": fan._pct(last, 0.99) * 1000,
        "missed": missed,
        "dropped": dropped,
        "cpu": cpu,
        "bytes_per_patch": clients.bytes / max(1, len(cookies) * len(commits)),
    }


async def _seed(workspace_id: int) -> None:
    from tests.wall.helpers import add_item, keyword_column

    for c in range(COLUMNS):
        column = await keyword_column(workspace_id, f"Column {c + 1}", f"#topic{c}")
        for n in range(SEEDED):
            await add_item(
                workspace_id,
                column,
                c * 1000 + n,
                html=f"<p>Post {n} of column {c} with a <a href='https://example.org/{n}'>link</a>"
                " and #hashtags, long enough to look like a real post on a busy day.</p>",
                media=[{"kind": "image", "url": f"https://example.org/{n}.png", "alt": "photo"}],
                metrics={"likes": n * 7, "reposts": n, "replies": n // 2},
            )


async def render_time(
    workspace_id: int, editor_token: str, rounds: int = 20
) -> tuple[float, float]:
    """Median ms to load the wall from PostgreSQL, and to render all of it."""
    from app.accounts import queries as account_queries
    from app.core.config import active
    from app.wall.live import WallView
    from app.web.factory import create_app

    create_app(active())  # sets up the templates
    found = await account_queries.viewer_for_session(editor_token)
    assert found is not None
    view = WallView(found.viewer, workspace_id)
    loads, renders = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        model = await view.load({"*"})
        loads.append(time.perf_counter() - t)
        t = time.perf_counter()
        html = view.render_state(model)
        renders.append(time.perf_counter() - t)
    assert html[0].count('class="item"') == COLUMNS * PER_COLUMN
    return statistics.median(loads) * 1000, statistics.median(renders) * 1000


async def main() -> None:
    from app.accounts import services as accounts
    from app.accounts.roles import Role
    from app.core import config, db
    from app.core import redis as core_redis

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    sizes = [int(n) for n in (args[0] if args else "50,200").split(",")]
    count = int(args[1]) if len(args) > 1 else 40
    rate = float(args[2]) if len(args) > 2 else 4.0

    settings = fan._settings()
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
    await _seed(workspace_id)

    load_ms, render_ms = await render_time(workspace_id, editors[0])
    print(
        f"full wall ({COLUMNS} columns x {PER_COLUMN} items): load {load_ms:.1f} ms, "
        f"render {render_ms:.1f} ms (median of 20)"
    )

    port = fan._free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": fan.SECRET,
        "REDIS_PREFIX": fan.PREFIX,
        "BASE_URL": f"http://127.0.0.1:{port}",
        "PORT": str(port),
        "PASSWORD_HASHING": "fast",
        "LOG_LEVEL": "WARNING",
    }
    server = fan._start([sys.executable, "-m", "app", "serve"], env)
    try:
        await fan._wait_for(f"http://127.0.0.1:{port}/readyz")
        print(f"{count} items at {rate}/s per run; latencies in ms, commit -> patch")
        print(
            f"{'clients':>7} {'p50':>6} {'p99':>6} {'last50':>7} {'last99':>7} "
            f"{'missed':>6} {'dropped':>7} {'cpu s':>6} {'B/patch':>7}"
        )
        for n in sizes:
            r = await measure(
                f"http://127.0.0.1:{port}/wall/stream",
                editors[:n],
                server.pid,
                [str(workspace_id), str(count), str(rate)],
            )
            print(
                f"{n:>7} {r['p50']:>6.1f} {r['p99']:>6.1f} {r['last_p50']:>7.1f} "
                f"{r['last_p99']:>7.1f} {r['missed']:>6.0f} {r['dropped']:>7.0f} "
                f"{r['cpu']:>6.2f} {r['bytes_per_patch']:>7.0f}"
            )
            met = r["p99"] <= 100 and r["dropped"] == 0 and r["missed"] == 0
            print(f"{n:>7} target p99 <= 100 ms, none dropped: {'met' if met else 'NOT met'}")
    finally:
        fan._stop(server)
        await core_redis.disconnect_redis()
        await db.disconnect()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--writer"]:
        asyncio.run(writer(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
    else:
        asyncio.run(main())
