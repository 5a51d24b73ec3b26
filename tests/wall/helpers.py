"""Items stored the way a poll stores them (one transaction, a notice after commit)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.core import db
from app.live.notices import publish_after_commit
from app.safe_content import from_html, to_json, to_text, with_content_warning
from app.streams import services
from app.streams.providers import dedup_key
from app.streams.types import column_topic

BASE = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def keyword_column(ws: int, title: str = "Floods", query: str = "#floods") -> int:
    return await services.create_column(
        ws,
        {
            "type": "keyword",
            "title": title,
            "spec": {"query": query, "platforms": ["mastodon"], "instances": ["social.example"]},
        },
        actor_user_id=None,
    )


async def add_item(
    ws: int,
    column_id: int,
    n: int,
    *,
    html: str = "",
    url: str | None = None,
    media: list[dict[str, str]] | None = None,
    minutes: int | None = None,
    metrics: dict[str, int] | None = None,
    reposted_by: str = "",
    author: str = "alice@social.example",
    lang: str = "",
    warning: str = "",
) -> int:
    doc = with_content_warning(warning, from_html(html or f"<p>Post {n} about the floods</p>"))
    at = BASE + timedelta(minutes=n if minutes is None else minutes)
    key = dedup_key(ws, "mastodon", f"social.example:{n}")
    async with db.workspace_tx(ws) as tx:
        item_id = await tx.fetchval(
            """
            INSERT INTO feed_items (workspace_id, dedup_key, provider, remote_id, author_handle,
              url, created_at_remote, content, plain_text, media, metrics, reposted_by, lang)
            VALUES ($1, $2, 'mastodon', $3, $4, $5, $6, $7::jsonb, $8, $9::jsonb, $10::jsonb, $11,
              $12)
            RETURNING id
            """,
            ws, key, str(n), author,
            f"https://social.example/@alice/{n}" if url is None else url, at,
            to_json(doc).decode(), to_text(doc), json.dumps(media or []),
            json.dumps(metrics or {"likes": 3, "reposts": 1}), reposted_by, lang,
        )  # fmt: skip
        await tx.execute(
            "INSERT INTO feed_item_columns (workspace_id, column_id, item_id, created_at_remote,"
            " dedup_key) VALUES ($1, $2, $3, $4, $5)",
            ws, column_id, item_id, at, key,
        )  # fmt: skip
        publish_after_commit(tx, column_topic(column_id), new=1)
    return int(item_id)
