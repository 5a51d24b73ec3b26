"""What every benchmark sets up: settings, a fresh scratch database, Redis, a person.

Run against the test services (scripts/services.sh start test). DATABASE_URL and
REDIS_URL override the defaults (the test services on ports 54339 and 63809,
Redis database 15); the scratch database (`newsdesk_bench`) is dropped and made
again on every run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg

from app.accounts import services as accounts
from app.core import config, db
from app.core import redis as core_redis
from app.core.config import Settings

DATABASE_URL = os.environ.get(
    "DATABASE_URL", "postgresql://postgres@127.0.0.1:54339/newsdesk_bench"
)
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:63809/15")


def bench_settings(**overrides: object) -> Settings:
    """Settings for the scratch database and Redis, with `overrides`."""
    values: dict[str, object] = {
        "database_url": DATABASE_URL,
        "redis_url": REDIS_URL,
        "secret_key": "bench-secret-key-that-is-long-enough-0123456789",
        "redis_prefix": "ndbench",
        "password_hashing": "fast",
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg, arg-type]


async def recreate_database(url: str) -> None:
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()


async def start_services(settings: Settings, *, pool_max: int | None = None) -> Any:
    """Activate `settings` on a fresh, migrated database and an empty Redis database;
    returns the Redis client (give it to `stop_services` at the end)."""
    config.activate(settings)
    await recreate_database(settings.database_url)
    engine = await db.connect(settings, pool_max=pool_max)
    await db.migrate(engine)
    redis = await core_redis.connect_redis(settings)
    await redis.flushdb()
    return redis


async def stop_services(redis: Any) -> None:
    await redis.flushdb()
    await core_redis.disconnect_redis()
    await db.disconnect()


@asynccontextmanager
async def bench_services(settings: Settings, *, pool_max: int | None = None) -> AsyncIterator[Any]:
    """`start_services` .. `stop_services` around a block; yields the Redis client."""
    redis = await start_services(settings, pool_max=pool_max)
    try:
        yield redis
    finally:
        await stop_services(redis)


async def new_person(name: str) -> tuple[int, int]:
    """A user and their own workspace: (user id, workspace id)."""
    user_id = await accounts.create_user(f"{name}@bench.example", name, "bench password 123")
    return user_id, await accounts.create_workspace(name, user_id)
