"""arq's worker, made to ride out a Redis outage of any length instead of exiting.

arq's poll loop lets a Redis `ConnectionError` escape, which ends the worker
(and, before `scripts/run.sh` supervised its children, `make run` too). Here
a poll that fails because Redis is unreachable waits with a back-off and
tries again; the outage is logged once when it starts and once when it ends.
Jobs already running go on: their claims are PostgreSQL rows under leases
renewed by heartbeats (app.core.leases), which do not need Redis. Crons
resume with the next poll.

Wake-ups sent while Redis was down are lost, so when it is back the worker
runs the reconcilers at once (`after_outage`): they re-read what PostgreSQL
says is due, and a "Run now" pressed during the outage runs right after it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Sequence
from typing import Any

from arq.worker import Worker
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 5.0


class Outage:
    """How long Redis has been unreachable, the next back-off, and logging it once."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.since: float | None = None
        self._delay = BACKOFF_FIRST

    def failed(self, error: BaseException) -> float:
        """Note a failure; the seconds to wait before trying again."""
        if self.since is None:
            self.since = time.monotonic()
            self._delay = BACKOFF_FIRST
            log.warning(
                "Redis at %s is unreachable (%s); waiting for it, retrying with back-off."
                " Running jobs go on; their claims are safe in PostgreSQL.",
                self.where,
                error,
            )
        delay = self._delay * random.uniform(0.8, 1.2)
        self._delay = min(self._delay * 2, BACKOFF_MAX)
        return delay

    def ended(self) -> bool:
        """Note a success; True if it ended an outage."""
        if self.since is None:
            return False
        log.warning(
            "Redis at %s is reachable again after %.0f s; resuming.",
            self.where,
            time.monotonic() - self.since,
        )
        self.since = None
        return True


class PatientWorker(Worker):
    """An arq Worker whose poll loop survives Redis outages (see the module docstring)."""

    def __init__(self, *args: Any, after_outage: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.after_outage = tuple(after_outage)
        settings = self.redis_settings
        where = f"{settings.host}:{settings.port}" if settings else "?"
        self.outage = Outage(where)

    async def _poll_iteration(self) -> None:
        self._forget_jobs_that_ended_during_an_outage()
        try:
            await super()._poll_iteration()
            if self.outage.since is not None:
                # A busy worker's poll may not touch Redis at all (arq reads the queue
                # only with a free job slot): only an answer from Redis ends an outage.
                await self.pool.ping()
        except REDIS_DOWN as error:
            await asyncio.sleep(self.outage.failed(error))
            return
        if self.outage.ended():
            await self._reconcile_now()

    def _forget_jobs_that_ended_during_an_outage(self) -> None:
        """A job task that ended while Redis was down keeps the error of arq's own calls
        around the job (reading it, recording its end). arq's poll re-raises those, one task
        a poll, which read as Redis still down: a back-off per such job after Redis was
        back, the reconcilers waiting meanwhile. Dropping them loses nothing: what the jobs
        did is in PostgreSQL, and what they did not do is due there for the reconcilers."""
        for job_id, task in list(self.tasks.items()):
            if task.done() and not task.cancelled() and isinstance(task.exception(), REDIS_DOWN):
                del self.tasks[job_id]

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        # A job runs until it ends with its id still in the queue, so every poll arq asked
        # Redis four times (WATCH, EXISTS, ZSCORE, UNWATCH) to learn that a job running
        # here is running: with import loops that read for minutes and a poll every 0.1 s,
        # that was as much Redis traffic as the pages they imported. What runs here is
        # known without asking; what runs elsewhere is still checked as arq does.
        await super().start_jobs([job_id for job_id in job_ids if not self._running_here(job_id)])

    def _running_here(self, job_id: bytes) -> bool:
        task = self.tasks.get(job_id.decode())
        return task is not None and not task.done()

    async def _reconcile_now(self) -> None:
        """Wake-ups sent during the outage are lost: re-read what PostgreSQL says is due."""
        stamp = int(time.time() * 1000)
        for name in self.after_outage:
            try:
                await self.pool.enqueue_job(name, _job_id=f"{name}:after-outage:{stamp}")
            except REDIS_DOWN as error:  # down again: the next recovery tries again
                self.outage.failed(error)
                return

    async def close(self) -> None:
        # SIGTERM cancels the running jobs, and arq's close gathers them without
        # return_exceptions: one that ended cancelled (its cancel landed in arq's own
        # Redis calls around the job) raised CancelledError out of close - a traceback,
        # and no on_shutdown (the database pool left open). Wait for them here instead.
        if getattr(self, "_handle_signals", True) and self.tasks:
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)
            self.tasks.clear()
        try:
            await super().close()
        except REDIS_DOWN:
            # Stopped during an outage: arq's own goodbye to Redis cannot be said.
            log.warning("worker stopped while Redis was unreachable")
            if self.on_shutdown:
                await self.on_shutdown(self.ctx)


async def wait_for_redis(ping: Any, where: str) -> None:
    """Return once `ping()` succeeds, logging the wait once (a worker started before Redis)."""
    outage = Outage(where)
    while True:
        try:
            await ping()
        except REDIS_DOWN as error:
            await asyncio.sleep(outage.failed(error))
            continue
        outage.ended()
        return
