"""Reads of the wall page: a member's widths, save states and saved posts, search over stored
items."""

from __future__ import annotations

from collections.abc import Iterable

from app.core import db, i18n
from app.streams import queries as streams
from app.streams.types import ItemPage
from app.wall.types import PAGE_SIZE, SavedPost, SaveState, Width


async def widths(workspace_id: int, user_id: int) -> dict[int, Width]:
    """The widths this member chose (a column they never sized is medium)."""
    rows = await db.fetch(
        "SELECT w.column_id, w.width FROM wall_column_widths w"
        " JOIN stream_columns c ON c.id = w.column_id AND c.deleted_at IS NULL"
        " WHERE w.workspace_id = $1 AND w.user_id = $2 ORDER BY w.column_id",
        workspace_id, user_id,
    )  # fmt: skip
    return {r["column_id"]: Width(r["width"]) for r in rows}


async def saves(workspace_id: int, item_ids: Iterable[int]) -> dict[int, SaveState]:
    """The save state of each of these items that someone saved to the library."""
    ids = sorted(set(item_ids))
    if not ids:
        return {}
    rows = await db.fetch(
        """
        SELECT s.item_id, s.job_id, i.state, i.article_id, i.error
        FROM feed_item_saves s JOIN import_items i ON i.job_id = s.job_id AND i.idx = 0
        WHERE s.workspace_id = $1 AND s.item_id = ANY($2::bigint[])
        """,
        workspace_id, ids,
    )  # fmt: skip
    return {
        r["item_id"]: SaveState(r["job_id"], r["state"], r["article_id"], r["error"]) for r in rows
    }


async def saved_post(workspace_id: int, job_id: int) -> SavedPost | None:
    """The post a wall save's import job stores as itself, with its saver's language; None
    once the post is gone. A saver since deleted leaves the default language."""
    row = await db.fetchrow(
        "SELECT s.item_id, u.locale FROM feed_item_saves s"
        " JOIN import_jobs j ON j.workspace_id = s.workspace_id AND j.id = s.job_id"
        " LEFT JOIN users u ON u.id = j.created_by"
        " WHERE s.workspace_id = $1 AND s.job_id = $2",
        workspace_id, job_id,
    )  # fmt: skip
    if row is None:
        return None
    post = await streams.item(workspace_id, row["item_id"])
    return SavedPost(post, row["locale"] or i18n.DEFAULT_LANGUAGE) if post else None


# What a post must match: its text as its language's stemmer reads it (m0017) against the
# query as that language reads it (in German a word also finds the compounds it begins,
# m0021), each language's parse made once per search.
_OWN_MATCH = """to_tsvector(newsdesk_search_config(i.lang), i.plain_text)
    @@ (SELECT queries[array_position(configs, newsdesk_search_config(i.lang))] FROM parsed)"""

# Above this many matching posts the search walks (a page of a word in one post of N reads
# ~41 N posts, ~135 us each); below, it looks up the matches (~36 us each) and sorts them by
# date. Measured on 300,000 posts: docs/decisions/wall.md, "Search".
WALK_ABOVE = 4000
# Counting the matches builds a bitmap of all of them first (~1 us each, in every workspace:
# 0.23 s for a word in 63 % of 390,000 posts), so the planner's estimate comes first and a
# word it expects in this many times WALK_ABOVE posts walks uncounted. Its estimate
# overshoots (2-10x here: every language's form of the word is counted); one that falls
# short only costs the count.
EXPECTED_OVER_COUNTED = 5

# One statement parses the query (in every language, ~1-2 ms), decides and reads the page: the
# word index's functions take the parses (m0030), and its matches serve the count and, when
# there are few, the page. $5 = WALK_ABOVE, $6 = the estimate above which the word walks
# uncounted.
_SEARCH = f"""
WITH parsed AS MATERIALIZED (
  SELECT configs, queries, newsdesk_search_any_of(queries) AS any
  FROM newsdesk_search_parses($2)
),
matches AS MATERIALIZED (
  -- called per row (a select list's function), so the LIMIT stops it; read only if needed
  SELECT newsdesk_feed_item_matches(p.any, p.configs, p.queries) AS id FROM parsed p
  LIMIT $5 + 1
),
walk AS MATERIALIZED (  -- the estimate first: a CASE's ELSE runs only when it does not decide
  SELECT CASE WHEN newsdesk_feed_item_matches_expected(p.any) > $6 THEN true
              ELSE (SELECT count(*) FROM matches) > $5 END AS chosen
  FROM parsed p
),
-- The page, walked: the posts newest first, each matched, until the page is full.
walked AS (
  SELECT i.* FROM (
    SELECT * FROM feed_items i
    WHERE i.workspace_id = $1 AND (i.created_at_remote, i.dedup_key) < ($3, $4)
    ORDER BY i.created_at_remote DESC, i.dedup_key DESC
    OFFSET 0  -- the match stays out here: planned as a walk for the page's few rows
  ) AS i
  WHERE {_OWN_MATCH}
  LIMIT {PAGE_SIZE + 1}  -- written out: a generic plan knows how few rows it takes
),
-- The page, looked up: the matches (m0025: through the function, which reads the word index
-- under row security) as one array made once (an init plan), then those posts by primary
-- key - under `feed_items`' policy as ever - in date order.
looked_up AS (
  SELECT i.* FROM feed_items i
  WHERE i.id = ANY(ARRAY(SELECT id FROM matches))
    AND i.workspace_id = $1 AND (i.created_at_remote, i.dedup_key) < ($3, $4)
  ORDER BY i.created_at_remote DESC, i.dedup_key DESC
  LIMIT {PAGE_SIZE + 1}
),
-- Each branch under a one-time filter: the one not chosen is never started.
page AS (
  SELECT * FROM walked WHERE (SELECT chosen FROM walk)
  UNION ALL
  SELECT * FROM looked_up WHERE NOT (SELECT chosen FROM walk)
)
SELECT {streams.ITEM_FIELDS}
FROM page i LEFT JOIN stream_sources s ON s.id = i.source_id
ORDER BY i.created_at_remote DESC, i.dedup_key DESC
"""


async def search(workspace_id: int, q: str, cursor: str | None) -> ItemPage:
    """Stored items whose plain text matches `q` (web-search syntax), newest first.

    Each post is read in its own language, whatever the reader's (m0017), so "Überschwemmungen"
    finds a German post that says "Überschwemmung" and an unknown language is matched word
    for word, unaccented. A word in few posts is looked up in the word index (m0025); a
    common one walks the posts newest first, matching each until the page is full (the
    page is found among its first few hundred posts, while sorting every match by date
    grows with them). Either way the page and its cursor are the same.
    """
    at, key = streams.page_start(cursor)
    async with db.workspace_tx(workspace_id) as tx:
        rows = await tx.fetch(
            _SEARCH, workspace_id, q, at, key, WALK_ABOVE, WALK_ABOVE * EXPECTED_OVER_COUNTED
        )
    return streams.item_page(rows, PAGE_SIZE)
