"""The wall live: commit -> patch latency for N SSE clients on one wall, and the full render.

    .venv/bin/python bench/wall_live.py [clients,...] [items] [per_second]

With the test services running. Like bench/live_fanout.py (both use bench/_live.py's
clients, writer process and scratch workspace) it creates its own scratch database
(`newsdesk_live_bench`; DATABASE_URL and REDIS_URL override the defaults), starts the real
web server (`python -m app serve`, one process) and opens N SSE clients over real HTTP on
/wall/stream: N editors of one workspace whose wall has 10 columns of 40 items (one
distinct view). A second process then stores items at a steady rate (default 40 at 4/s),
each into one column as a poll does (one transaction, a notice after commit), and prints
each item's commit time. It reports commit -> the patch naming the item: p50/p99 over
every client and item, of the last client per item, missed patches and dropped streams,
the server's CPU seconds and bytes per patch.

First, in this process, the time to load and render the whole wall (10 columns x 40
items): cold (every post rendered) and warm (app.wall.rows keeps posts that did not
change): what a (re)connecting client's distinct view costs the server.

Targets (issue 11): p99 <= 100 ms at 200 clients, no client dropped.
"""

from __future__ import annotations

import asyncio
import logging
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import _live as live

ROW_ID = re.compile(rb'id="i-\d+-(\d+)"')  # a wall row: i-<column>-<item>
COLUMNS = 10
PER_COLUMN = 40
SEEDED = 45  # more than a page: "Load older" is already there, as in a busy column


async def writer(workspace_id: int, count: int, per_second: float) -> None:
    from app.core import config, db
    from app.core import redis as core_redis
    from tests.wall.helpers import add_item

    settings = live.settings()
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


async def render_time(workspace_id: int, editor_token: str, rounds: int = 20) -> dict[str, float]:
    """Median ms to load the wall from PostgreSQL, and to render all of it: cold (no post
    rendered before, app.wall.rows emptied) and warm (only the posts that changed, here
    none: a reconnect, or the columns changing). CPU ms beside wall ms (less noisy)."""
    from app.accounts import queries as account_queries
    from app.core.config import active
    from app.wall import rows
    from app.wall.live import WallView
    from app.web.factory import create_app

    create_app(active())  # sets up the templates
    found = await account_queries.viewer_for_session(editor_token)
    assert found is not None
    view = WallView(found.viewer, workspace_id)
    times: dict[str, list[float]] = {}

    def timed(name: str, started: tuple[float, float]) -> None:
        times.setdefault(name, []).append(time.perf_counter() - started[0])
        times.setdefault(name + "_cpu", []).append(time.process_time() - started[1])

    def now() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    for _ in range(rounds):
        t = now()
        model = await view.load({"*"})
        timed("load", t)
        rows.clear()
        t = now()
        html = view.render_state(model)
        timed("cold", t)
        t = now()
        view.render_state(model)
        timed("warm", t)
    assert html[0].count('class="item"') == COLUMNS * PER_COLUMN
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


async def main() -> None:
    from app.core import db
    from app.core import redis as core_redis

    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    sizes, count, rate = live.argv_sizes("50,200")
    workspace_id, editors = await live.editors_workspace(max(sizes))
    await _seed(workspace_id)

    r = await render_time(workspace_id, editors[0])
    print(
        f"full wall ({COLUMNS} columns x {PER_COLUMN} items), median of 20, ms (CPU ms):\n"
        f"  load {r['load']:.1f} ({r['load_cpu']:.1f}); render cold {r['cold']:.1f} "
        f"({r['cold_cpu']:.1f}), warm {r['warm']:.1f} ({r['warm_cpu']:.1f})"
    )

    port = live.free_port()
    server = live.start([sys.executable, "-m", "app", "serve"], live.server_env(port))
    try:
        await live.wait_for(f"http://127.0.0.1:{port}/readyz")
        print(f"{count} items at {rate}/s per run; latencies in ms, commit -> patch")
        print(
            f"{'clients':>7} {'p50':>6} {'p99':>6} {'last50':>7} {'last99':>7} "
            f"{'missed':>6} {'dropped':>7} {'cpu s':>6} {'B/patch':>7}"
        )
        for n in sizes:
            r = await live.measure(
                f"http://127.0.0.1:{port}/wall/stream", editors[:n], server.pid,
                script=__file__, row_id=ROW_ID,
                writer_args=[str(workspace_id), str(count), str(rate)],
            )  # fmt: skip
            print(
                f"{n:>7} {r['p50']:>6.1f} {r['p99']:>6.1f} {r['last_p50']:>7.1f} "
                f"{r['last_p99']:>7.1f} {r['missed']:>6.0f} {r['dropped']:>7.0f} "
                f"{r['cpu']:>6.2f} {r['bytes_per_patch']:>7.0f}"
            )
            met = r["p99"] <= 100 and r["dropped"] == 0 and r["missed"] == 0
            print(f"{n:>7} target p99 <= 100 ms, none dropped: {'met' if met else 'NOT met'}")
    finally:
        live.stop(server)
        await core_redis.disconnect_redis()
        await db.disconnect()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--writer"]:
        asyncio.run(writer(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
    else:
        asyncio.run(main())
