"""The process's Redis client: one arq pool that also publishes live notices."""

from __future__ import annotations

from arq.connections import ArqRedis, RedisSettings, create_pool
from redis.asyncio import ConnectionPool

from app.core import db
from app.core.config import Settings

_client: ArqRedis | None = None


def redis_settings(settings: Settings) -> RedisSettings:
    return RedisSettings.from_dsn(settings.redis_url)


def queue_name(settings: Settings) -> str:
    return settings.redis_key("queue")


async def connect_redis(settings: Settings) -> ArqRedis:
    global _client
    _client = await create_pool(
        redis_settings(settings), default_queue_name=queue_name(settings), retry=2
    )
    return _client


def lazy_client(settings: Settings) -> ArqRedis:
    """A client that connects on first use, not now: for command-line tools, which
    must work while Redis is down (what they publish is lost with a log line)."""
    pool = ConnectionPool.from_url(settings.redis_url)
    return ArqRedis(connection_pool=pool, default_queue_name=queue_name(settings))


def use_client(client: ArqRedis) -> None:
    """Adopt a client made elsewhere (the arq worker's own pool)."""
    global _client
    _client = client


def client() -> ArqRedis:
    if _client is None:
        raise RuntimeError("Redis is not connected (app.core.redis.connect_redis)")
    return _client


async def disconnect_redis() -> None:
    global _client
    await db.settle()  # notices committed transactions are still sending need the client
    if _client is not None:
        await _client.aclose()
    _client = None
