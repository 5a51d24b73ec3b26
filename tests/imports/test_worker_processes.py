"""Real worker processes: one is killed (SIGKILL) mid-item, another finishes the job."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from app.core import config, db
from app.imports import services
from app.imports.types import JobStatus
from tests.egress.servers import Reply, Seen
from tests.fakes.site import FakeSite
from tests.imports.helpers import item_rows, job_of, states

ROOT = Path(__file__).resolve().parents[2]
LEASE = 2.0


def start_worker(site: FakeSite) -> subprocess.Popen[bytes]:
    settings = config.active()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "REDIS_PREFIX": settings.redis_prefix,
        "SECRET_KEY": settings.secret_key.get_secret_value(),
        "EGRESS_ALLOW": site.allow(),
        "EGRESS_HOST_RATE": "1000",
        "EGRESS_HOST_BURST": "1000",
        "IMPORT_LEASE_SECONDS": str(LEASE),
        "LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "app", "worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


async def wait_for(check: Callable[[], object], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await check():  # type: ignore[misc]
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(5)


async def test_a_worker_killed_mid_item_loses_nothing(people, site, site_egress):
    workspace = (await people.member("editor")).workspace_id
    hits = {"n": 0}
    page = site.page("article.html")

    def first_request_hangs(_seen: Seen) -> Reply:
        hits["n"] += 1
        return Reply(headers=page.headers, body=page.body, delay=60.0 if hits["n"] == 1 else 0)

    site.routes["/news/hangs"] = first_request_hangs
    site.routes["/news/fine"] = page
    urls = [site.base + "/news/hangs", site.base + "/news/fine"]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)

    first = start_worker(site)
    try:
        await wait_for(lambda: _hit(hits), timeout=90)  # the worker's start-up, slow when busy
        (row, *_rest) = await item_rows(job_id)
        assert row["state"] == "extracting"
        os.killpg(first.pid, signal.SIGKILL)  # no clean-up of any kind
        first.wait(5)
        (row, *_rest) = await item_rows(job_id)
        assert row["state"] == "extracting"  # held by a dead worker until its lease ends
    finally:
        stop(first)

    second = start_worker(site)
    try:
        await wait_for(lambda: _done(workspace, job_id), timeout=120)
    finally:
        stop(second)
    assert await states(job_id) == ["saved", "saved"]
    rows = await item_rows(job_id)
    assert rows[0]["attempts"] == 2  # the killed attempt counted
    assert (
        await db.fetchval("SELECT count(*) FROM articles WHERE workspace_id = $1", workspace) == 2
    )
    job = await job_of(workspace, job_id)
    assert job.counters.saved == 2


async def _hit(hits: dict[str, int]) -> bool:
    return hits["n"] >= 1


async def _done(workspace: int, job_id: int) -> bool:
    return (await job_of(workspace, job_id)).status == JobStatus.DONE
