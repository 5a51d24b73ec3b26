"""A worker killed with `kill -9` mid-run: its work is back to done within two minutes.

Acceptance of issue 7, item 2: everything done, no article twice, and the
runs' counters equal to the rows they stored. Real processes, real signals.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from app.core import db
from app.core.config import Settings
from app.topics import services
from app.topics.types import SourceForm, TopicForm
from tests.fixtures import make_test_settings
from tests.topics.test_resilience import serve_feed
from tests.workers.processes import WorkerProcess, eventually, page_readers, running, worker_env

STORIES = 12


async def _stored(topic_id: int) -> int:
    return int(await db.fetchval("SELECT count(*) FROM articles WHERE topic_id = $1", topic_id))


async def _all_done(topic_id: int) -> bool:
    row = await db.fetchrow(
        """
        SELECT
          (SELECT count(*) FROM articles WHERE topic_id = $1) AS articles,
          (SELECT count(*) FROM analyses an JOIN articles a ON a.id = an.article_id
             WHERE a.topic_id = $1 AND an.status = 'completed') AS analysed,
          (SELECT count(*) FROM topic_runs r JOIN topic_sources s ON s.id = r.source_id
             WHERE s.topic_id = $1 AND r.status = 'running') AS running
        """,
        topic_id,
    )
    assert row is not None
    return row["articles"] == STORIES and row["analysed"] == STORIES and row["running"] == 0


async def test_a_killed_workers_run_and_analyses_are_done_within_two_minutes(
    settings: Settings, site, people, redis, tmp_path: Path
) -> None:
    ws = (await people.member("editor")).workspace_id
    url = serve_feed(site, "wire", STORIES, page_delay=0.4)
    env = worker_env(make_test_settings(egress_allow=[site.allow()]))
    first = WorkerProcess(env, tmp_path / "first.log")
    second: WorkerProcess | None = None
    try:
        topic_id = await services.create_topic(ws, TopicForm("Wire"), actor_user_id=None)
        await services.add_source(ws, topic_id, SourceForm("feed", url=url), actor_user_id=None)
        await eventually(lambda: _at_least(topic_id, 3), within=60)

        first.kill()  # mid-run: the source and some analyses are claimed
        killed_at = time.monotonic()
        stored_by_first = await _stored(topic_id)
        assert 3 <= stored_by_first < STORIES

        second = WorkerProcess(env, tmp_path / "second.log")
        await eventually(lambda: _all_done(topic_id), within=120, every=1)
        assert time.monotonic() - killed_at < 120

        runs = await db.fetch(
            "SELECT r.status, r.found, r.new, r.duplicates, r.failures, r.error FROM topic_runs r"
            " JOIN topic_sources s ON s.id = r.source_id WHERE s.topic_id = $1 ORDER BY r.id",
            topic_id,
        )
        dead, *after = runs
        # The dead worker's run kept the counts it had reached, and says what happened.
        assert dead["status"] == "failed"
        assert "interrupted" in dead["error"]
        assert dead["new"] >= 3
        assert after[-1]["status"] == "ok"
        # No article twice, and the runs' counters equal the rows they stored.
        urls = await db.fetch("SELECT url FROM articles WHERE topic_id = $1", topic_id)
        assert len({r["url"] for r in urls}) == len(urls) == STORIES
        assert sum(r["new"] for r in runs) == STORIES
        assert after[-1]["duplicates"] + after[-1]["new"] == STORIES
    finally:
        first.stop()
        if second is not None:
            second.stop()


async def _at_least(topic_id: int, count: int) -> bool:
    return await _stored(topic_id) >= count


async def test_a_killed_workers_page_readers_die_with_it(
    settings: Settings, site, people, redis, tmp_path: Path
) -> None:
    """The worker alone is killed (not its process group, as `kill -9 <pid>` does): its page
    readers ignore SIGTERM for the worker's sake, so only the parent-death signal ends them."""
    ws = (await people.member("editor")).workspace_id
    url = serve_feed(site, "readers", 3)
    env = worker_env(make_test_settings(egress_allow=[site.allow()]))
    worker = WorkerProcess(env, tmp_path / "worker.log")
    try:
        topic_id = await services.create_topic(ws, TopicForm("Readers"), actor_user_id=None)
        await services.add_source(ws, topic_id, SourceForm("feed", url=url), actor_user_id=None)
        await eventually(lambda: _at_least(topic_id, 1), within=60)
        readers = page_readers(worker.process.pid)
        assert readers, "the worker read its pages in reader processes"

        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.wait(10)
        await eventually(lambda: not any(running(pid) for pid in readers), within=30)
    finally:
        worker.kill()
