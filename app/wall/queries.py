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


# The indexed expression (m0017): the post's text as its language's stemmer reads it.
_VECTOR = "to_tsvector(newsdesk_search_config(i.lang), i.plain_text)"


async def search(workspace_id: int, q: str, cursor: str | None) -> ItemPage:
    """Stored items whose plain text matches `q` (web-search syntax), newest first.

    Each post is read in its own language, whatever the reader's (m0017): the index finds
    candidates with the query as any language reads it, and each candidate is matched with
    the query as its own language reads it, so "Überschwemmungen" finds a German post that
    says "Überschwemmung" and an unknown language is matched word for word, unaccented.
    The any-language query is made once, in its own SELECT (as a condition it was made
    again for every post a scan looked at: ~1 ms each).
    """
    at, key = streams.decode_cursor(cursor) if cursor else (None, None)
    rows = await db.fetch(
        f"""
        SELECT {streams.ITEM_FIELDS}
        FROM feed_items i LEFT JOIN stream_sources s ON s.id = i.source_id
        WHERE i.workspace_id = $1
          AND {_VECTOR} @@ (SELECT newsdesk_search_any($2))
          AND {_VECTOR} @@ websearch_to_tsquery(newsdesk_search_config(i.lang), $2)
          AND ($3::timestamptz IS NULL OR (i.created_at_remote, i.dedup_key) < ($3, $4))
        ORDER BY i.created_at_remote DESC, i.dedup_key DESC LIMIT $5
        """,
        workspace_id, q, at, key, PAGE_SIZE + 1,
    )  # fmt: skip
    return streams.item_page(rows, PAGE_SIZE)
