"""Reads of topics, their sources and runs; workspace id first, views out."""

from __future__ import annotations

from asyncpg import Record

from app.core import db
from app.topics.types import (
    DueSource,
    RunStatus,
    RunView,
    SourceKind,
    SourceView,
    TopicSummary,
    TopicView,
)

RECENT_RUNS = 20  # runs a topic page shows


async def topics(workspace_id: int) -> list[TopicSummary]:
    rows = await db.fetch(
        """
        SELECT t.id, t.name, t.description,
          count(s.id) AS sources,
          count(s.id) FILTER (WHERE s.enabled) AS enabled_sources,
          (SELECT max(r.started_at) FROM topic_runs r JOIN topic_sources rs ON rs.id = r.source_id
           WHERE r.workspace_id = $1 AND rs.topic_id = t.id) AS last_run_at,
          (SELECT coalesce(sum(r.new), 0) FROM topic_runs r
           JOIN topic_sources rs ON rs.id = r.source_id
           WHERE r.workspace_id = $1 AND rs.topic_id = t.id) AS articles
        FROM topics t
        LEFT JOIN topic_sources s ON s.topic_id = t.id AND s.workspace_id = t.workspace_id
        WHERE t.workspace_id = $1 AND t.deleted_at IS NULL
        GROUP BY t.id
        ORDER BY lower(t.name), t.id
        """,
        workspace_id,
    )
    return [
        TopicSummary(
            id=r["id"],
            name=r["name"],
            description=r["description"],
            sources=r["sources"],
            enabled_sources=r["enabled_sources"],
            last_run_at=r["last_run_at"],
            articles=int(r["articles"]),
        )
        for r in rows
    ]


async def topic(workspace_id: int, topic_id: int) -> TopicView | None:
    row = await db.fetchrow(
        "SELECT id, name, description, created_at FROM topics"
        " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
        workspace_id,
        topic_id,
    )
    if row is None:
        return None
    return TopicView(row["id"], row["name"], row["description"], row["created_at"])


_SOURCE_COLUMNS = """
    s.id, s.topic_id, s.kind, s.url, s.query, s.enabled, s.interval_seconds, s.next_run_at,
    coalesce(s.lease_until > now(), false) AS running, s.failures, s.last_error
"""


def _source(r: Record) -> SourceView:
    return SourceView(
        id=r["id"],
        topic_id=r["topic_id"],
        kind=SourceKind(r["kind"]),
        url=r["url"],
        query=r["query"],
        enabled=r["enabled"],
        interval_seconds=r["interval_seconds"],
        next_run_at=r["next_run_at"],
        running=r["running"],
        failures=r["failures"],
        last_error=r["last_error"],
    )


async def sources(workspace_id: int, topic_id: int) -> list[SourceView]:
    rows = await db.fetch(
        f"SELECT {_SOURCE_COLUMNS} FROM topic_sources s"
        " WHERE s.workspace_id = $1 AND s.topic_id = $2 ORDER BY s.id",
        workspace_id,
        topic_id,
    )
    return [_source(r) for r in rows]


async def source(workspace_id: int, source_id: int) -> SourceView | None:
    row = await db.fetchrow(
        f"SELECT {_SOURCE_COLUMNS} FROM topic_sources s WHERE s.workspace_id = $1 AND s.id = $2",
        workspace_id,
        source_id,
    )
    return _source(row) if row else None


async def recent_runs(
    workspace_id: int, topic_id: int, *, limit: int = RECENT_RUNS
) -> list[RunView]:
    rows = await db.fetch(
        """
        SELECT r.id, r.source_id, CASE WHEN s.kind = 'feed' THEN s.url ELSE s.query END AS label,
          r.status, r.found, r.new, r.duplicates, r.failures, r.error, r.started_at,
          r.finished_at
        FROM topic_runs r JOIN topic_sources s ON s.id = r.source_id
        WHERE r.workspace_id = $1 AND s.workspace_id = $1 AND s.topic_id = $2
        ORDER BY r.started_at DESC, r.id DESC
        LIMIT $3
        """,
        workspace_id,
        topic_id,
        limit,
    )
    return [
        RunView(
            id=r["id"],
            source_id=r["source_id"],
            source_label=r["label"],
            status=RunStatus(r["status"]),
            found=r["found"],
            new=r["new"],
            duplicates=r["duplicates"],
            failures=r["failures"],
            error=r["error"],
            started_at=r["started_at"],
            finished_at=r["finished_at"],
        )
        for r in rows
    ]


async def due_sources(limit: int) -> list[DueSource]:
    """Enabled sources of live topics, due and not leased, oldest first (every workspace)."""
    rows = await db.fetch(
        """
        SELECT s.workspace_id, s.id FROM topic_sources s
        JOIN topics t ON t.id = s.topic_id AND t.workspace_id = s.workspace_id
        WHERE s.enabled AND t.deleted_at IS NULL AND s.next_run_at <= now()
          AND (s.lease_until IS NULL OR s.lease_until < now())
        ORDER BY s.next_run_at
        LIMIT $1
        """,
        limit,
    )
    return [DueSource(r["workspace_id"], r["id"]) for r in rows]
