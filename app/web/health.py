"""Liveness and readiness probes."""

from __future__ import annotations

import asyncio

from litestar import Response, get

from app.core import db, redis


@get("/healthz", include_in_schema=False, sync_to_thread=False)
def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@get("/readyz", include_in_schema=False)
async def readyz() -> Response[dict[str, str]]:
    """PostgreSQL and Redis answer; 503 names the one that does not."""
    checks: dict[str, str] = {}
    for name, probe in (("database", _database), ("redis", _redis)):
        try:
            await asyncio.wait_for(probe(), timeout=2)
            checks[name] = "ok"
        except Exception as error:
            checks[name] = f"unavailable: {type(error).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    return Response(
        {"status": "ok" if healthy else "unavailable", **checks},
        status_code=200 if healthy else 503,
    )


async def _database() -> None:
    await db.fetchval("SELECT 1")


async def _redis() -> None:
    await redis.client().ping()
