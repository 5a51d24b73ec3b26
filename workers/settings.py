"""arq worker settings. Start with `python -m app worker` (or `arq workers.settings.WorkerSettings`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import uvloop
from arq import cron, func
from arq.worker import get_kwargs
from redis.asyncio import Redis

from app.articles import reading
from app.core import config, db, jobs, redis
from app.core.config import Settings, redact_url
from workers import tasks
from workers.worker import PatientWorker, wait_for_redis

log = logging.getLogger(__name__)


def _settings() -> Settings:
    try:
        return config.active()
    except RuntimeError:
        settings = config.load_settings()
        config.activate(settings)
        return settings


async def startup(ctx: dict[str, Any]) -> None:
    settings = _settings()
    await db.connect(settings)
    redis.use_client(ctx["redis"])
    from app.web.routes import start  # the same extra clients the web app opens

    await start(settings)
    reading.start()


async def shutdown(ctx: dict[str, Any]) -> None:
    from app.web.routes import stop

    await stop()
    reading.close()
    await db.disconnect()


class WorkerSettings:
    functions = [
        tasks.housekeeping,
        # No kept result: the job id ("analyse:<ws>:<article>") is free again the
        # moment a run ends, so the next signal for the article is not coalesced away.
        func(tasks.analyse_article, keep_result=0),
        tasks.reconcile_analyses,
        # The source's lease (60 s) is renewed by a heartbeat while the run goes
        # on; a timed-out job closes its run. No kept result, as for analyses.
        func(tasks.scrape_topic_source, keep_result=0, timeout=14 * 60),
        tasks.wake_topic_sources,
        # The source's lease (2 min) outlives a poll; no kept result, as above.
        func(tasks.poll_stream_source, keep_result=0, timeout=110),
        func(tasks.poll_due_streams, keep_result=0, timeout=110),
        tasks.sweep_feed_items,
        # A loop reads items until none is due, handing over after 4 minutes.
        func(tasks.import_items, keep_result=0, timeout=10 * 60),
        tasks.reconcile_imports,
        tasks.clean_up_imports,
    ]
    cron_jobs = [
        cron(tasks.housekeeping, hour={3}, minute={17}, run_at_startup=False),
        cron(tasks.purge_trash, minute={47}, run_at_startup=False),
        # Every 30 s: with 60-s leases a dead worker's work is back within two minutes.
        cron(tasks.reconcile_analyses, second={26, 56}, run_at_startup=True),
        cron(tasks.wake_topic_sources, second={11, 41}, run_at_startup=True),
        cron(tasks.poll_due_streams, second=set(range(0, 60, 5)), run_at_startup=True),
        cron(tasks.sweep_feed_items, hour={4}, minute={23}, run_at_startup=False),
        cron(tasks.reconcile_imports, second={5, 20, 35, 50}, run_at_startup=True),
        cron(tasks.clean_up_imports, minute={23}, second={0}, run_at_startup=False),
    ]
    on_startup = startup
    on_shutdown = shutdown
    # Run at once when Redis is back after an outage (the wake-ups sent meanwhile are lost).
    after_outage = (
        "reconcile_analyses",
        "wake_topic_sources",
        "poll_due_streams",
        "reconcile_imports",
    )
    keep_result = 60
    max_tries = 5
    job_timeout = 300
    health_check_interval = 30


def worker_options(settings: Settings, *, burst: bool = False) -> dict[str, Any]:
    """What arq needs from our settings (its class attributes are fixed at import)."""
    return {
        "redis_settings": redis.redis_settings(settings),
        "queue_name": redis.queue_name(settings),
        "max_jobs": settings.worker_max_jobs,
        "burst": burst,
        "health_check_key": settings.redis_key("worker-health"),
        "poll_delay": jobs.POLL_SECONDS,
    }


def use_worker_event_loop() -> None:
    """The worker runs on uvloop, as the web does (uvicorn picks it). A stream poll is a
    handful of round trips to PostgreSQL, Redis and a host, and each wake-up costs the
    stdlib loop about a third more CPU: measured in bench/streams_core.py (b), the
    scheduler's CPU per poll 2.1 -> 1.6 ms (docs/decisions/streams.md)."""
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def create_worker(settings: Settings, *, burst: bool = False) -> PatientWorker:
    """The worker `python -m app worker` runs: arq's, riding out Redis outages."""
    return PatientWorker(
        **get_kwargs(WorkerSettings),  # type: ignore[arg-type]
        **worker_options(settings, burst=burst),
        after_outage=WorkerSettings.after_outage,
    )


async def wait_for_redis_at(settings: Settings) -> None:
    client = Redis.from_url(settings.redis_url, socket_connect_timeout=5)
    try:
        await wait_for_redis(client.ping, redact_url(settings.redis_url))
    finally:
        await client.aclose()
