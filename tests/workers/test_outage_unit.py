"""The worker's outage bookkeeping (workers.worker.PatientWorker), without processes."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from pathlib import Path

import pytest
from arq import func
from arq.connections import ArqRedis
from redis.exceptions import ConnectionError as RedisConnectionError

from app.core import outage
from app.core.config import Settings
from tests.workers.processes import PrivateRedis
from workers.worker import PatientWorker


async def _nothing(ctx: dict[str, object]) -> None:
    return None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_busy_worker_whose_poll_skips_redis_does_not_declare_it_back() -> None:
    down = ArqRedis(host="127.0.0.1", port=_closed_port(), socket_connect_timeout=0.5)
    worker = PatientWorker(functions=[_nothing], redis_pool=down, max_jobs=1)
    try:
        worker.outage.failed(ConnectionError("down"))
        # Every job slot taken and the health record fresh: arq's poll asks Redis nothing.
        worker.job_counter = worker.max_jobs
        worker._last_health_check = time.time()
        await worker._poll_iteration()
        assert worker.outage.since is not None  # still down: nothing answered
    finally:
        await down.aclose()


async def test_jobs_that_ended_during_the_outage_do_not_hold_the_worker_back_after_it(
    settings: Settings, redis: object
) -> None:
    """A job that ends while Redis is down cannot record its end there (arq's finish_job),
    and its task keeps that ConnectionError. arq's poll re-raised it, one task a poll, as if
    Redis were still down: a back-off of up to 5 s per such job once Redis was back, its
    reconcilers and crons waiting meanwhile."""
    pool = ArqRedis.from_url(settings.redis_url)
    worker = PatientWorker(functions=[_nothing], redis_pool=pool, max_jobs=10)

    async def ended_during_the_outage() -> None:
        raise RedisConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    ended = [asyncio.create_task(ended_during_the_outage()) for _ in range(3)]
    await asyncio.wait(ended)
    worker.tasks.update({f"analyse:1:{n}": task for n, task in enumerate(ended)})
    try:
        worker.outage.failed(RedisConnectionError("down"))
        await worker._poll_iteration()  # Redis answers again
        assert worker.outage.since is None, "the first poll that reaches Redis ends the outage"
        assert worker.tasks == {}
    finally:
        await pool.aclose()


async def test_a_worker_stopped_with_a_cancelled_job_closes_cleanly(
    settings: Settings, redis: object
) -> None:
    # What SIGTERM leaves: arq cancelled a job task that ends cancelled.
    stopped: list[bool] = []

    async def on_shutdown(ctx: dict[str, object]) -> None:
        stopped.append(True)

    pool = ArqRedis.from_url(settings.redis_url)
    worker = PatientWorker(
        functions=[_nothing], redis_pool=pool, on_shutdown=on_shutdown, max_jobs=1
    )
    job = asyncio.create_task(asyncio.sleep(30))
    worker.tasks["job"] = job
    job.cancel()
    await worker.close()  # no CancelledError
    assert stopped == [True]


async def _commands_processed(pool: ArqRedis) -> int:
    return int((await pool.info("stats"))["total_commands_processed"])


async def test_a_poll_asks_redis_nothing_about_jobs_running_here(tmp_path: Path) -> None:
    """A long job stays in the queue while it runs: the poll must not ask Redis about it
    (arq asked four times per poll), while a job running elsewhere is still checked."""
    # A Redis of its own: the count is the server's, and the shared one serves other tests.
    server = PrivateRedis(tmp_path)
    await asyncio.to_thread(server.start)
    pool = ArqRedis.from_url(server.url)
    worker = PatientWorker(functions=[_nothing], redis_pool=pool, max_jobs=10)
    here = asyncio.create_task(asyncio.sleep(30))
    worker.tasks["import:1:0"] = here
    await pool.set(b"arq:in-progress:import:9:0", b"1")  # another process runs this one
    try:
        before = await _commands_processed(pool)
        await worker.start_jobs([b"import:1:0"])
        assert await _commands_processed(pool) - before == 1  # the INFO that counted
        before = await _commands_processed(pool)
        await worker.start_jobs([b"import:9:0"])
        assert await _commands_processed(pool) - before > 2  # checked as arq does
        assert set(worker.tasks) == {"import:1:0"}
    finally:
        here.cancel()
        await pool.aclose()
        await asyncio.to_thread(server.stop)


async def test_a_job_that_meets_postgresql_away_ends_quietly_and_any_other_error_still_fails(
    settings: Settings, clean_db: None, caplog: pytest.LogCaptureFixture
) -> None:
    async def poll(ctx: dict[str, object]) -> int:
        raise ConnectionRefusedError(111, "Connection refused")

    async def broken(ctx: dict[str, object]) -> int:
        raise ValueError("a bug")

    worker = PatientWorker(
        functions=[func(poll, name="poll"), func(broken, name="broken")],
        redis_settings=None,
        max_jobs=1,
    )
    caplog.set_level(logging.WARNING, logger="app.core.outage")
    # Several jobs meet the outage: one line says so, and none of them fails.
    for _ in range(3):
        assert await worker.functions["poll"].coroutine({}) is None
    with pytest.raises(ValueError):
        await worker.functions["broken"].coroutine({})
    assert await outage.database.back(timeout=10)  # the database here never went away
    lines = [r.getMessage() for r in caplog.records if r.name == "app.core.outage"]
    assert len(lines) == 2, lines
    assert "PostgreSQL at" in lines[0]
    assert "is unreachable (" in lines[0]
    assert "reachable again" in lines[1]
