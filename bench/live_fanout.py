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
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _live as live

BARE_CHANNEL = f"{live.PREFIX}:bare"
ARTICLE_ID = re.compile(rb'id="article-(\d+)"')


# The writer process: stores articles at a steady rate, prints "id commit_time" -------


async def writer(workspace_id: int, count: int, per_second: float, bare_size: int) -> None:
    from app.core import config, db
    from app.core import redis as core_redis

    settings = live.settings()
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
    redis = Redis.from_url(live.REDIS_URL)
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


async def main() -> None:
    from app.core import db
    from app.core import redis as core_redis

    logging.basicConfig(level=logging.WARNING)
    sizes, count, rate = live.argv_sizes("50,100,200")
    workspace_id, editors = await live.editors_workspace(max(sizes))

    port, bare_port = live.free_port(), live.free_port()
    env = live.server_env(port)
    server = live.start([sys.executable, "-m", "app", "serve"], env)
    bare = live.start([sys.executable, __file__, "--bare", str(bare_port)], env)
    try:
        await live.wait_for(f"http://127.0.0.1:{port}/readyz")
        await live.wait_for(f"http://127.0.0.1:{bare_port}/")
        print(f"{count} articles at {rate}/s per run; latencies in ms, commit -> patch")
        print(
            f"{'clients':>7} {'':>9} {'p50':>6} {'p99':>6} {'last50':>7} {'last99':>7} "
            f"{'missed':>6} {'dropped':>7} {'cpu s':>6} {'B/patch':>7}"
        )
        for n in sizes:
            url = f"http://127.0.0.1:{port}/articles/stream"
            real = await live.measure(
                url, editors[:n], server.pid, script=__file__, row_id=ARTICLE_ID,
                writer_args=[str(workspace_id), str(count), str(rate), "0"],
            )  # fmt: skip
            size = str(max(64, int(real["bytes_per_patch"])))
            base = await live.measure(
                f"http://127.0.0.1:{bare_port}/", [""] * n, bare.pid, script=__file__,
                row_id=ARTICLE_ID, writer_args=["0", str(count), str(rate), size],
            )  # fmt: skip
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
        live.stop(server)
        live.stop(bare)
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
