"""Waking workers. PostgreSQL rows are the jobs; arq only carries wake-ups.

A lost wake-up is repaired by the reconciler crons, which re-enqueue whatever
the database says is due. Job ids coalesce duplicate wake-ups.
"""

from __future__ import annotations

from typing import Any

from app.core import redis
from app.core.db import Tx

# How often a worker asks arq's queue for due wake-ups (arq's poll_delay; its default is
# 0.5 s). A wake-up waits for the next poll - a quick add, an import's first page, a wake-up
# passed on to another process - and a poll is one Redis command: 10 a second cost an idle
# worker about 0.2 % of a core.
POLL_SECONDS = 0.1


async def enqueue(
    function: str, *args: Any, job_id: str | None = None, defer_by: float | None = None
) -> None:
    await redis.client().enqueue_job(function, *args, _job_id=job_id, _defer_by=defer_by)


def enqueue_after_commit(
    tx: Tx, function: str, *args: Any, job_id: str | None = None, defer_by: float | None = None
) -> None:
    """Enqueue once `tx` commits; never for work that rolled back."""

    async def wake() -> None:
        await enqueue(function, *args, job_id=job_id, defer_by=defer_by)

    tx.after_commit(wake)
