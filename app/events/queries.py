"""Reads of the event log."""

from __future__ import annotations

import json

from asyncpg import Record

from app.core import db
from app.events.types import EventPage, EventView

_SELECT = """
    SELECT e.id, e.kind, coalesce(u.display_name, '') AS actor, e.actor_user_id, e.subject,
      e.data, e.created_at
    FROM events e LEFT JOIN users u ON u.id = e.actor_user_id
"""


def _view(r: Record) -> EventView:
    return EventView(
        id=r["id"],
        kind=r["kind"],
        actor=r["actor"],
        subject=r["subject"],
        data=json.loads(r["data"]) if isinstance(r["data"], str) else r["data"],
        created_at=r["created_at"],
        actor_user_id=r["actor_user_id"],
    )


async def one(workspace_id: int, event_id: int) -> EventView | None:
    row = await db.fetchrow(
        f"{_SELECT} WHERE e.workspace_id = $1 AND e.id = $2", workspace_id, event_id
    )
    return _view(row) if row else None


def parse_cursor(cursor: str) -> int | None:
    """The id a `cursor` continues below; None for the first page. ValueError if malformed."""
    cursor = cursor.strip()
    if not cursor:
        return None
    if not cursor.isdigit() or len(cursor) > 18:
        raise ValueError(cursor)
    return int(cursor)


async def page(
    workspace_id: int,
    *,
    kinds: frozenset[str] | None = None,
    before_id: int | None = None,
    limit: int = 50,
) -> EventPage:
    """Events newest first, of `kinds` (all when None), older than `before_id`."""
    rows = await db.fetch(
        f"""{_SELECT}
        WHERE e.workspace_id = $1 AND ($2::bigint IS NULL OR e.id < $2)
          AND ($3::text[] IS NULL OR e.kind = ANY($3))
        ORDER BY e.id DESC LIMIT $4
        """,
        workspace_id,
        before_id,
        sorted(kinds) if kinds is not None else None,
        limit + 1,
    )
    items = [_view(r) for r in rows[:limit]]
    more = len(rows) > limit
    return EventPage(items, str(items[-1].id) if more and items else None)
