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
import dataclasses
import functools
import logging
import time
from collections.abc import Sequence
from typing import Any

from arq.worker import Worker
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.core import db, outage
from app.core.outage import Outage

log = logging.getLogger(__name__)

REDIS_DOWN = (RedisConnectionError, RedisTimeoutError, ConnectionError, OSError)
_REDIS_MEANWHILE = "Running jobs go on; their claims are safe in PostgreSQL."


class PatientWorker(Worker):
    """An arq Worker whose poll loop survives Redis outages (see the module docstring)."""

    def __init__(self, *args: Any, after_outage: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.after_outage = tuple(after_outage)
        settings = self.redis_settings
        where = f"{settings.host}:{settings.port}" if settings else "?"
        self.outage = Outage("Redis", where, _REDIS_MEANWHILE)
        self.functions = {
            name: dataclasses.replace(function, coroutine=_riding_out_database_outages(function))
            for name, function in self.functions.items()
        }

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


def _riding_out_database_outages(function: Any) -> Any:
    """The job, ending quietly when PostgreSQL is away: one log line for the outage, not a
    traceback per job. Nothing is lost - what a job does is rows under leases, and the
    reconcilers find it due again once PostgreSQL is back."""
    job = function.coroutine

    @functools.wraps(job)
    async def run(ctx: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return await job(ctx, *args, **kwargs)
        except Exception as error:
            if not db.unreachable(error):
                raise
            outage.database.failed(error)
            return None

    return run


async def wait_for_redis(ping: Any, where: str) -> None:
    """Return once `ping()` succeeds, logging the wait once (a worker started before Redis)."""
    outage = Outage("Redis", where)
    while True:
        try:
            await ping()
        except REDIS_DOWN as error:
            await asyncio.sleep(outage.failed(error))
            continue
        outage.ended()
        return
