"""Reads of the event log."""

from __future__ import annotations

import json

from asyncpg import Record

from app.core import db
from app.events.types import EventView

_SELECT = """
    SELECT e.id, e.kind, coalesce(u.display_name, '') AS actor, e.subject, e.data, e.created_at
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
    )


async def one(workspace_id: int, event_id: int) -> EventView | None:
    row = await db.fetchrow(
        f"{_SELECT} WHERE e.workspace_id = $1 AND e.id = $2", workspace_id, event_id
    )
    return _view(row) if row else None


async def recent(
    workspace_id: int, *, limit: int = 50, before_id: int | None = None
) -> list[EventView]:
    rows = await db.fetch(
        f"""{_SELECT}
        WHERE e.workspace_id = $1 AND ($2::bigint IS NULL OR e.id < $2)
        ORDER BY e.id DESC LIMIT $3
        """,
        workspace_id,
        before_id,
        limit,
    )
    return [_view(r) for r in rows]
