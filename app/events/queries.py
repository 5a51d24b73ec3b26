"""Reads of the event log."""

from __future__ import annotations

import json

from asyncpg import Record

from app.core import db
from app.events.types import EventPage, EventView

# Whether what the event names is gone (an article deleted for good, a deleted topic or
# import): the Activity page names it without a link that would only say "not found".
_GONE = """CASE
      WHEN e.data ? 'article_id' THEN NOT EXISTS (
        SELECT 1 FROM articles a
        WHERE a.workspace_id = e.workspace_id AND a.id = (e.data->>'article_id')::bigint)
      WHEN e.kind LIKE 'article\\_import\\_%' AND e.data ? 'job_id' THEN NOT EXISTS (
        SELECT 1 FROM import_jobs j WHERE j.workspace_id = e.workspace_id
          AND j.id = (e.data->>'job_id')::bigint AND j.deleted_at IS NULL)
      WHEN e.kind LIKE 'topic\\_%' AND e.data ? 'topic_id' THEN NOT EXISTS (
        SELECT 1 FROM topics t WHERE t.workspace_id = e.workspace_id
          AND t.id = (e.data->>'topic_id')::bigint AND t.deleted_at IS NULL)
      ELSE false END"""
_SELECT = f"""
    SELECT e.id, e.kind, coalesce(u.display_name, '') AS actor, e.actor_user_id, e.subject,
      e.data, e.created_at, {_GONE} AS gone
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
        gone=r["gone"],
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
