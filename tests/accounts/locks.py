"""Holding locks from another database session, as another request or a worker does."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import asyncpg

from app.core import config, db


@contextlib.asynccontextmanager
async def other_connection() -> AsyncIterator[asyncpg.Connection]:
    """A second session on the database (the app's role, unbound: it sees every workspace)."""
    connection = await asyncpg.connect(config.active().database_url)
    try:
        yield connection
    finally:
        await connection.close()


async def until_waiting_for_a_lock() -> None:
    """Return once some session of this database waits for a lock (within ~4 s)."""
    for _attempt in range(200):
        with db.system():
            waiting = await db.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
        if waiting:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("nothing waited for the lock")
