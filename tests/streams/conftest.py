from collections.abc import AsyncIterator

import pytest

from app.core import db
from app.streams import providers, services
from tests.fakes.fixtures import site, site_egress
from tests.fakes.site import FakeSite
from tests.streams.statuses import StatusProvider

__all__ = ["site", "site_egress"]


@pytest.fixture
async def statuses(site: FakeSite, site_egress) -> AsyncIterator[StatusProvider]:  # type: ignore[no-untyped-def]
    """A Mastodon-shaped provider on the fake site, registered as "mastodon" for the test."""
    provider = StatusProvider(site.base)
    providers.register(provider)
    yield provider
    providers.unregister(provider.name)


async def home_column(
    ws: int, name: str = "desk", *, secret: str = "tok-1", title: str = "Home"
) -> tuple[int, int]:
    """A Mastodon connection on the fake instance and a home column reading it:
    (connection, column)."""
    connection = await services.add_connection(
        ws, "mastodon", name, instance="social.example", secret=secret
    )
    column = await services.create_column(
        ws,
        {"type": "platform_feed", "title": title, "spec": {"connection_id": connection}},
        actor_user_id=None,
    )
    return connection, column


async def make_due(*source_ids: int) -> None:
    await db.fetch(
        "UPDATE stream_sources SET next_poll_at = now(), lease_until = NULL WHERE id = ANY($1::bigint[])",
        list(source_ids),
    )


async def source_row(source_id: int):  # type: ignore[no-untyped-def]
    return await db.fetchrow(
        "SELECT *, extract(epoch FROM next_poll_at - now()) AS due_in FROM stream_sources WHERE id = $1",
        source_id,
    )


async def sources_of(column_id: int) -> list[int]:
    rows = await db.fetch(
        "SELECT source_id FROM stream_column_sources WHERE column_id = $1 ORDER BY source_id",
        column_id,
    )
    return [r["source_id"] for r in rows]


async def items_of(column_id: int) -> list[str]:
    rows = await db.fetch(
        "SELECT i.remote_id FROM feed_item_columns f JOIN feed_items i ON i.id = f.item_id"
        " WHERE f.column_id = $1 ORDER BY f.created_at_remote DESC, f.dedup_key DESC",
        column_id,
    )
    return [r["remote_id"] for r in rows]
