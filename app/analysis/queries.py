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


# Articles a term's document frequency is counted in: the workspace's latest, the count
# then scaled to all of them. Counting in all of them cost ~50 ms per 1,000 articles per
# analysis; an estimate from 2,000 was within ~3 % of the library's size (analysis.md).
FREQUENCY_SAMPLE = 2000


async def document_frequencies(
    workspace_id: int, terms: list[str], *, sample: int = FREQUENCY_SAMPLE
) -> DocumentFrequencies:
    """Live articles of the workspace, and how many contain each term.

    An article counts when it holds the term as its own language reads it (stemmed,
    accents folded: the library's search, app.articles.queries). The term is parsed
    once per language the workspace's articles are in. It is looked for in the latest
    `sample` live articles, each one's search vector read once; in a larger library the
    count found there is scaled to the whole (an estimate: IDF needs proportions, and
    what a newsroom saved lately is the fairer measure of what is common now).
    """
    row = await db.fetchrow(
        """
        WITH configs AS MATERIALIZED (
          -- Counted by language from the index of live articles (m0026), then by configuration:
          -- the configuration's CASE once per language, not once per article.
          SELECT newsdesk_search_config(language) AS config, sum(articles) AS articles
          FROM (SELECT language, count(*) AS articles FROM articles
                WHERE workspace_id = $1 AND deleted_at IS NULL GROUP BY language) AS per_language
          GROUP BY 1
        ), parses AS MATERIALIZED (
          SELECT row_number() OVER () AS i, t.term, c.config,
            websearch_to_tsquery(c.config, t.term) AS query
          FROM unnest($2::text[]) AS t(term), configs AS c
        ), latest AS MATERIALIZED (
          SELECT r.id, newsdesk_search_config(r.language) AS config
          FROM articles r WHERE r.workspace_id = $1 AND r.deleted_at IS NULL
          ORDER BY r.created_at DESC, r.id DESC LIMIT $3
        ), sample AS (
          -- The vectors of the workspace's articles (m0026), each decompressed once: every
          -- term is matched against the copy.
          SELECT l.config, v.vector || ''::tsvector AS vector
          FROM latest l
          JOIN newsdesk_article_vectors(ARRAY(SELECT id FROM latest)) AS v ON v.article_id = l.id
          OFFSET 0
        ), hits AS (
          SELECT p.i, count(*) AS n
          FROM sample s JOIN parses p ON p.config = s.config
          WHERE numnode(p.query) > 0 AND s.vector @@ p.query  -- stop words only: no match
          GROUP BY p.i
        )
        SELECT
          (SELECT coalesce(sum(articles), 0) FROM configs) AS total,
          (SELECT coalesce(jsonb_object_agg(term, n), '{}'::jsonb) FROM (
             SELECT p.term, sum(h.n) AS n FROM hits h JOIN parses p USING (i) GROUP BY p.term
           ) AS per_term) AS counts
        """,
        workspace_id,
        terms,
        sample,
    )
    assert row is not None
    counts = row["counts"]
    if isinstance(counts, str):
        counts = json.loads(counts)
    total = int(row["total"])
    scale = total / min(total, sample) if total else 0.0
    # A term no language parses into a word (or a workspace without articles): none found.
    return DocumentFrequencies(
        total=total, counts={term: round(int(counts.get(term, 0)) * scale) for term in terms}
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
