"""A Redis outage under a running worker process: it waits, logs once, and resumes its work."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from arq.connections import ArqRedis

from app.core import db
from app.core import redis as core_redis
from app.core.config import Settings
from app.topics import services
from app.topics.types import SourceForm, TopicForm
from tests.fixtures import make_test_settings
from tests.workers.processes import (
    PrivateRedis,
    WorkerProcess,
    eventually,
    free_port,
    worker_env,
)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


async def _runs(source_id: int) -> list[str]:
    rows = await db.fetch(
        "SELECT status FROM topic_runs WHERE source_id = $1 ORDER BY id", source_id
    )
    return [r["status"] for r in rows]


async def test_the_worker_rides_out_a_redis_outage_and_runs_what_was_asked_meanwhile(
    settings: Settings, site, people, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    person = await people.member("editor")
    ws = person.workspace_id
    topic_id = await services.create_topic(ws, TopicForm("Energy"), actor_user_id=None)
    source_id = await services.add_source(
        ws, topic_id, SourceForm("feed", url=site.base + "/feeds/full.rss"), actor_user_id=None
    )
    worker_settings = make_test_settings(
        redis_url=private_redis.url, egress_allow=[site.allow()], redis_prefix="outage"
    )
    worker = WorkerProcess(worker_env(worker_settings), tmp_path / "worker.log")
    try:
        # The scheduler's first tick runs the new source (the worker starts first: slow when
        # the machine is busy, and not what this test times).
        await eventually(lambda: _done(source_id), within=90)

        before_outage = len(worker.output())
        private_redis.stop()
        await asyncio.sleep(3)  # several polls fail meanwhile
        # "Run now" during the outage: the row says so; the wake-up cannot be sent.
        down = ArqRedis(host="127.0.0.1", port=private_redis.port)
        saved = core_redis._client
        core_redis.use_client(down)
        try:
            await services.run_source_now(ws, topic_id, source_id)
        finally:
            core_redis._client = saved
            await down.aclose()
        await asyncio.sleep(5)
        assert worker.alive, worker.output()[-3000:]

        during = worker.output()[before_outage:]
        private_redis.start()
        # Back: the worker reconciles at once and runs the source asked for meanwhile.
        await eventually(lambda: _finished_runs(source_id, 2), within=20)
        assert worker.alive
        # Eight seconds of failed polls, one line from the worker's poll loop. (Jobs that
        # finish meanwhile log their lost notices as "Redis unreachable" - not counted.)
        assert len(re.findall(r"Redis at \S+ is unreachable", during)) == 1, during[-3000:]
        after = worker.output()[before_outage + len(during) :]
        assert len(re.findall(r"Redis at \S+ is reachable again", after)) == 1, after[-3000:]
    finally:
        worker.stop()


async def _done(source_id: int) -> bool:
    statuses = await _runs(source_id)
    return bool(statuses) and "running" not in statuses


async def _finished_runs(source_id: int, count: int) -> bool:
    statuses = await _runs(source_id)
    return len(statuses) >= count and "running" not in statuses


async def test_run_now_while_redis_is_down_is_accepted_and_left_for_the_reconciler(
    client, people, caplog
) -> None:
    from tests.factories import post_form, sign_in

    person = await people.member("editor")
    ws = person.workspace_id
    await sign_in(client, person.email)
    topic_id = await services.create_topic(ws, TopicForm("Energy"), actor_user_id=None)
    source_id = await services.add_source(
        ws, topic_id, SourceForm("feed", url="https://c.example/f"), actor_user_id=None
    )
    async with db.workspace_tx(ws) as tx:  # not due: only "Run now" makes it due
        await tx.execute(
            "UPDATE topic_sources SET next_run_at = now() + interval '1 hour' WHERE id = $1",
            source_id,
        )
    down = ArqRedis(host="127.0.0.1", port=free_port())  # nothing listens there
    saved = core_redis._client
    core_redis.use_client(down)
    try:
        response = await post_form(client, f"/topics/{topic_id}/sources/{source_id}/run")
    finally:
        core_redis._client = saved
        await down.aclose()
    assert response.status_code == 303
    # The row is the truth: the scheduler's next tick finds the source due.
    due = await db.fetchval(
        "SELECT next_run_at <= now() FROM topic_sources WHERE id = $1", source_id
    )
    assert due is True
    outage_lines = [r for r in caplog.records if "Redis" in r.getMessage()]
    assert outage_lines, "the lost wake-up is logged"
    assert all(r.exc_info is None for r in outage_lines), "one line, not a traceback"
