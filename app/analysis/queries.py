"""Reads of analyses; workspace id first."""

from __future__ import annotations

import json

from asyncpg import Record

from app.analysis.types import AnalysisStatus, AnalysisView, DocumentFrequencies
from app.core import db

_COLUMNS = """status, summary, keywords, language, reading_minutes, analyser, error, attempts,
    next_attempt_at, completed_at"""


def view_of(row: Record | None) -> AnalysisView:
    """An analysis row (or its absence, read as "pending") as a view."""
    if row is None or row["status"] is None:
        return AnalysisView(status=AnalysisStatus.PENDING)
    keywords = row["keywords"]
    if isinstance(keywords, str):
        keywords = json.loads(keywords)
    return AnalysisView(
        status=AnalysisStatus(row["status"]),
        summary=row["summary"],
        keywords=tuple(str(k) for k in keywords or ()),
        language=row["language"],
        reading_minutes=row["reading_minutes"],
        analyser=row["analyser"],
        error=row["error"],
        attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"],
        completed_at=row["completed_at"],
    )


async def for_article(workspace_id: int, article_id: int) -> AnalysisView:
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM analyses WHERE workspace_id = $1 AND article_id = $2",
        workspace_id,
        article_id,
    )
    return view_of(row)


async def document_frequencies(workspace_id: int, terms: list[str]) -> DocumentFrequencies:
    """Live articles of the workspace, and how many contain each term.

    GIN lookups on the generated `search` column, each article matched with
    the term as its own language reads it (stemmed, accents folded; the same
    two steps as the library's search, app.articles.queries). Each term's
    any-language query (~30 configurations parsed, ~1 ms) is made once
    (MATERIALIZED): in the count's condition it was made again for every
    article looked at - a second per analysis in a library of twenty.
    """
    row = await db.fetchrow(
        """
        WITH terms AS MATERIALIZED (
          SELECT term, newsdesk_search_any(term) AS any_language
          FROM unnest($2::text[]) AS term
        )
        SELECT
          (SELECT count(*) FROM articles WHERE workspace_id = $1 AND deleted_at IS NULL) AS total,
          (SELECT coalesce(jsonb_object_agg(t.term, (
              SELECT count(*) FROM articles a
              WHERE a.workspace_id = $1 AND a.deleted_at IS NULL
                AND a.search @@ t.any_language
                AND a.search @@ websearch_to_tsquery(newsdesk_search_config(a.language), t.term)
              )), '{}'::jsonb)
           FROM terms AS t) AS counts
        """,
        workspace_id,
        terms,
    )
    assert row is not None
    counts = row["counts"]
    if isinstance(counts, str):
        counts = json.loads(counts)
    return DocumentFrequencies(
        total=int(row["total"]), counts={k: int(v) for k, v in counts.items()}
    )


async def due(limit: int) -> list[tuple[int, int]]:
    """(workspace id, article id) of analyses a worker should run now, oldest first.

    Across workspaces: this is the reconciler's view of what PostgreSQL says is
    due - pending or failed ones whose time has come, and running ones whose
    worker's lease ran out - for live (not trashed) articles.
    """
    rows = await db.fetch(
        """
        SELECT an.workspace_id, an.article_id
        FROM analyses an JOIN articles a ON a.id = an.article_id AND a.deleted_at IS NULL
        WHERE an.status IN ('pending', 'running', 'failed')
          AND ((an.status <> 'running' AND an.next_attempt_at <= now())
               OR (an.status = 'running' AND an.lease_until < now()))
        ORDER BY an.next_attempt_at, an.id
        LIMIT $1
        """,
        limit,
    )
    return [(r["workspace_id"], r["article_id"]) for r in rows]
