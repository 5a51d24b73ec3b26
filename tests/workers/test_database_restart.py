"""PostgreSQL restarted under a running topic run: the run says `partial`, its failed entries
come back within minutes, and nothing is stored twice (issue 7, item 2).

The worker gets a PostgreSQL cluster of its own, so the restart touches no other test.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from tests.fixtures import APP_ROLE, database_urls, make_test_settings
from tests.topics.test_resilience import serve_feed
from tests.workers.processes import (
    ROOT,
    PrivatePostgres,
    WorkerProcess,
    eventually,
    worker_env,
)

STORIES = 16
HELD_FROM = 3  # stories stored before the restart


@pytest.fixture
async def cluster() -> AsyncIterator[PrivatePostgres]:
    # Outside pytest's tmp folder, which the postgres user cannot reach.
    server = PrivatePostgres(Path(tempfile.mkdtemp(prefix="nd-pg-")))
    await asyncio.to_thread(server.init)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop, "immediate")
        await asyncio.to_thread(shutil.rmtree, server.folder, True)


async def _query(url: str, sql: str, *args: object) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(url)
    try:
        return await conn.fetch(sql, *args)
    finally:
        await conn.close()


async def test_a_database_restart_mid_run_ends_partial_and_its_entries_come_back(
    site, redis, cluster: PrivatePostgres, tmp_path: Path
) -> None:
    await _query(cluster.url.replace("/newsdesk", "/postgres"), f"CREATE ROLE {APP_ROLE} LOGIN")
    settings = make_test_settings(
        **database_urls(cluster.url), egress_allow=[site.allow()], redis_prefix="pgrestart"
    )
    env = worker_env(settings)
    for command in (
        ["create-database"],
        ["migrate"],
        ["bootstrap", "--email", "owner@example.org"],
    ):
        done = await asyncio.to_thread(
            functools.partial(subprocess.run, [sys.executable, "-m", "app", *command], cwd=ROOT,
                              env=env, capture_output=True)
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()[-2000:]
    url = serve_feed(site, "wire", STORIES, page_delay=0.3)
    # The fourth story's page (and every later one) waits until PostgreSQL is down: the
    # restart lands mid-run however late this process notices the third story stored. With
    # only the delay, a test process starved for the ~4 s the other pages took found the run
    # done, `ok`, before its restart.
    restarting = asyncio.Event()
    for i in range(HELD_FROM, STORIES):
        story = f"/story/wire-{i}"
        site.routes[story] = dataclasses.replace(site.routes[story], hold=restarting)
    rows = await _query(
        cluster.url,
        """
        WITH t AS (INSERT INTO topics (workspace_id, name) SELECT id, 'Wire' FROM workspaces
                   RETURNING id, workspace_id)
        INSERT INTO topic_sources (workspace_id, topic_id, kind, url)
        SELECT workspace_id, id, 'feed', $1 FROM t RETURNING id
        """,
        url,
    )
    source_id = rows[0]["id"]

    async def stored() -> int:
        return len(await _query(cluster.url, "SELECT id FROM articles"))

    async def runs() -> list[asyncpg.Record]:
        return await _query(
            cluster.url,
            "SELECT status, new, duplicates, failures FROM topic_runs WHERE source_id = $1"
            " ORDER BY id",
            source_id,
        )

    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        await eventually(lambda: _at_least(stored, HELD_FROM), within=60)
        await asyncio.to_thread(cluster.stop, "fast")  # connections cut mid-run
        restarting.set()
        await asyncio.sleep(3)
        await asyncio.to_thread(cluster.start)

        async def finished() -> bool:
            statuses = [r["status"] for r in await runs()]
            return bool(statuses) and statuses[-1] != "running"

        await eventually(finished, within=90, every=0.5)
        first = (await runs())[-1]
        assert first["status"] == "partial", worker.output()[-3000:]
        assert first["failures"] > 0
        wait = await _query(
            cluster.url,
            "SELECT extract(epoch FROM next_run_at - now()) AS s FROM topic_sources WHERE id = $1",
            source_id,
        )
        assert 0 < wait[0]["s"] < 150  # within minutes, not the hourly interval

        # Time passes: the scheduler's next tick retries the failed entries only.
        await _query(cluster.url, "UPDATE topic_sources SET next_run_at = now()")

        async def all_stored() -> bool:
            last = (await runs())[-1]
            return last["status"] == "ok" and await stored() == STORIES

        await eventually(all_stored, within=120, every=1)  # the next tick, then the run
        assert worker.alive
        # The outage is a line or two in the log, not a traceback per job or pool retry.
        assert "Traceback" not in worker.output(), worker.output()[-3000:]
        every = await runs()
        assert sum(r["new"] for r in every) == STORIES  # counts equal to rows
        urls = await _query(cluster.url, "SELECT DISTINCT url FROM articles")
        assert len(urls) == STORIES  # no article twice
    finally:
        worker.stop()


async def _at_least(count: object, n: int) -> bool:
    assert callable(count)
    return await count() >= n
