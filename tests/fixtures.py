"""Fixtures on the real services: PostgreSQL and Redis started by `make test`.

Each pytest-xdist worker gets its own database (`newsdesk_test_<worker>`,
migrated once per session) and its own Redis database number and key prefix.
Every test starts from empty tables and an empty Redis keyspace.

TEST_DATABASE_URL names the owner (a superuser, as services.sh makes it):
migrations run as it; the app connects as APP_ROLE, which owns nothing, so
row-level security holds it as in production.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
from redis.asyncio import Redis

from app.core import config, db
from app.core import redis as core_redis
from app.core.config import Settings
from app.core.tables import all_tables
from app.streams import resolver

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
WORKER_NUMBER = int(WORKER.removeprefix("gw") or 0)

BASE_DATABASE_URL = os.environ.get(
    "TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:54339/newsdesk_test"
)
BASE_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:63809")
APP_ROLE = "newsdesk_app"


def database_urls(owner_url: str) -> dict[str, str]:
    """Settings for a database: the app's role and the owner's, on one server."""
    parts = urlsplit(owner_url)
    host = parts.netloc.rpartition("@")[2]
    app = urlunsplit(parts._replace(netloc=f"{APP_ROLE}@{host}"))
    return {"database_url": app, "database_owner_url": owner_url}


def _database_url() -> str:
    parts = urlsplit(BASE_DATABASE_URL)
    return urlunsplit(parts._replace(path=f"{parts.path}_{WORKER}"))


def _redis_url() -> str:
    parts = urlsplit(BASE_REDIS_URL)
    return urlunsplit(parts._replace(path=f"/{1 + WORKER_NUMBER}"))


def make_test_settings(**overrides: object) -> Settings:
    values: dict[str, object] = {
        **database_urls(_database_url()),
        "redis_url": _redis_url(),
        "secret_key": "test-secret-key-that-is-long-enough-0123456789",
        "redis_prefix": f"ndtest{WORKER}",
        "base_url": "http://testserver.local",
        "login_attempts_per_15min": 5,
        "password_hashing": "fast",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg, arg-type]


@pytest.fixture(scope="session")
def settings() -> Settings:
    settings = make_test_settings()
    config.activate(settings)
    return settings


async def _recreate_database(url: str) -> None:
    """A new database owned by `url`'s role, and the app's role (clusters are shared)."""
    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    conn = await asyncpg.connect(admin)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
        await conn.execute(
            f"DO $$ BEGIN CREATE ROLE {APP_ROLE} LOGIN; "
            "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$"
        )
    finally:
        await conn.close()


_owner: list[asyncpg.Connection] = []  # the owner's connection, for what the app may not do


@pytest.fixture(scope="session")
async def database(settings: Settings) -> AsyncIterator[None]:
    await _recreate_database(settings.migration_url)
    await db.migrate_database(settings)
    await db.connect(settings)
    owner = await asyncpg.connect(settings.migration_url)
    # A TRUNCATE that meets the browser suite's worker in a deadlock should not be the one
    # PostgreSQL cancels: the first to wait checks first and becomes the victim, and the
    # reset waited first five times running. Waiting longer before checking (a superuser
    # setting: tests own their cluster) lets the worker's statement be the one cancelled;
    # what it was doing is being wiped anyway.
    await owner.execute("SET deadlock_timeout = '10s'")
    _owner.append(owner)
    yield
    await _owner.pop().close()
    await db.disconnect()


def owner_connection() -> asyncpg.Connection:
    """The tables' owner's connection (a superuser's in the tests' cluster)."""
    return _owner[0]


async def as_owner(sql: str, *args: object) -> str:
    """Run `sql` as the tables' owner (TRUNCATE, DDL, catalog checks)."""
    return str(await _owner[0].execute(sql, *args))


def _truncate_sql() -> str:
    names = ", ".join(f'"{table._meta.tablename}"' for table in all_tables())
    return f"TRUNCATE {names} RESTART IDENTITY CASCADE"


@pytest.fixture
async def clean_db(database: None) -> None:
    """Empty tables for this test."""
    # The browser suite's worker keeps polling while a test resets the tables, and
    # PostgreSQL may pick this TRUNCATE as a deadlock's victim: that is a retry, not a fault.
    for attempt in range(5):
        try:
            await as_owner(_truncate_sql())  # the app's role may not TRUNCATE
            return
        except asyncpg.exceptions.DeadlockDetectedError:
            if attempt == 4:
                raise
            await asyncio.sleep(0.1 * (attempt + 1))


@pytest.fixture(scope="session")
async def redis_client(settings: Settings) -> AsyncIterator[Redis]:
    client = await core_redis.connect_redis(settings)
    yield client
    await core_redis.disconnect_redis()


@pytest.fixture
async def redis(redis_client: Redis) -> Redis:
    """This worker's Redis database, flushed for this test."""
    await redis_client.flushdb()
    resolver.forget_local()  # the process's copy of the flushed handle cache
    return redis_client


@pytest.fixture
async def services(clean_db: None, redis: Redis) -> None:
    """Clean PostgreSQL and Redis: what most integration tests want."""


# The web app, in-process -------------------------------------------------------


@pytest.fixture(scope="session")
def web_app(settings: Settings, database: None, redis_client: Redis):  # type: ignore[no-untyped-def]
    from app.web.factory import create_app

    return create_app(settings, manage_connections=False)


def _http_client(web_app) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    # httpx's ASGI transport runs the app on this test's event loop, beside the
    # session's database pool (Litestar's test client would use another loop).
    transport = httpx.ASGITransport(app=web_app, client=("127.0.0.1", 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://testserver.local")


@pytest.fixture
async def client(web_app, services) -> AsyncIterator[httpx.AsyncClient]:  # type: ignore[no-untyped-def]
    """A browser-like client with its own cookie jar, on clean services."""
    async with _http_client(web_app) as test_client:
        yield test_client


@pytest.fixture
async def new_client(web_app, services):  # type: ignore[no-untyped-def]
    """Make more clients (a second person, a second device) within one test."""
    made: list[httpx.AsyncClient] = []

    def make() -> httpx.AsyncClient:
        made.append(_http_client(web_app))
        return made[-1]

    yield make
    for c in made:
        await c.aclose()


@pytest.fixture
def people(services):  # type: ignore[no-untyped-def]
    """Create people with a role in a workspace: `await people.member("editor")`."""
    from tests.factories import People

    return People()


@pytest.fixture
async def editor(client, people):  # type: ignore[no-untyped-def]
    """An editor of a fresh workspace, signed in on `client`."""
    from tests.factories import sign_in

    person = await people.member("editor")
    await sign_in(client, person.email)
    return person
