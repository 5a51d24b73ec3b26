"""Reads of the wall; workspace id first; views, not rows.

Item pages are keyset pages over (created_at_remote DESC, dedup_key DESC):
the cursor is base64url JSON `{"at": ISO time, "key": dedup key}` of the last
item shown, so a page never repeats or skips an item however many arrive
meanwhile. A column's page walks `feed_item_columns_keyset`, which carries
the sort key, and joins only the items it shows.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg

from app.core import db
from app.core.i18n import _, format_number
from app.streams import platforms
from app.streams.platforms import LedgerRule, clamp_interval, floor_ms
from app.streams.providers import needs_key, provider_for
from app.streams.schedule import aggregate_state, window_end, window_start
from app.streams.types import (
    BudgetView,
    ColumnType,
    ColumnView,
    ConnectionUse,
    ConnectionView,
    ItemPage,
    ItemView,
    SourceKind,
    SourceState,
    SourceView,
    StreamsError,
    Unsupported,
)

DEFAULT_LIMIT = 40
MAX_LIMIT = 200


class CursorInvalid(StreamsError):
    def __init__(self) -> None:
        super().__init__(
            _("The cursor is not one this server gave out."), field="cursor", status=400
        )


def encode_cursor(at: datetime, key: str) -> str:
    raw = json.dumps({"at": at.astimezone(UTC).isoformat(), "key": key}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        at = datetime.fromisoformat(data["at"])
        key = data["key"]
    except (binascii.Error, ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise CursorInvalid() from None
    if not isinstance(key, str) or at.tzinfo is None or len(key) > 64:
        raise CursorInvalid()
    return at, key


def page_limit(value: str | None) -> int:
    if value in (None, ""):
        return DEFAULT_LIMIT
    try:
        limit = int(value)
    except ValueError:
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise StreamsError(
            _("limit is a whole number from 1 to %(n)s.") % {"n": format_number(MAX_LIMIT)},
            field="limit",
            status=400,
        )
    return limit


# Columns ---------------------------------------------------------------------------------


async def column_row(workspace_id: int, column_id: int) -> dict[str, Any] | None:
    row = await db.fetchrow(
        "SELECT id, type, title, position, spec, refresh_policy FROM stream_columns"
        " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
        workspace_id, column_id,
    )  # fmt: skip
    if row is None:
        return None
    return {
        **dict(row),
        "spec": json.loads(row["spec"]),
        "refresh_policy": json.loads(row["refresh_policy"]),
    }


_SOURCES_SQL = """
SELECT cs.column_id, s.id, s.provider, s.connection_id, s.kind, s.query, s.actor_ref, s.label,
       s.state, s.last_polled_at, s.next_poll_at, s.last_error, s.interval_ms,
       s.connection_id IS NULL AND NOT EXISTS (SELECT FROM stream_credentials k
         WHERE k.workspace_id = s.workspace_id AND k.provider = s.provider) AS keyless
FROM stream_column_sources cs JOIN stream_sources s ON s.id = cs.source_id
WHERE cs.workspace_id = $1 AND cs.column_id = ANY($2::bigint[])
ORDER BY s.provider, s.kind, s.label, s.id
"""


async def list_columns(workspace_id: int) -> list[ColumnView]:
    rows = await db.fetch(
        """
        SELECT c.id, c.type, c.title, c.position, c.spec, c.refresh_policy,
               EXISTS (SELECT 1 FROM feed_item_columns f
                       WHERE f.workspace_id = c.workspace_id AND f.column_id = c.id) AS has_items
        FROM stream_columns c WHERE c.workspace_id = $1 AND c.deleted_at IS NULL
        ORDER BY c.position
        """,
        workspace_id,
    )
    return await _views(workspace_id, rows)


async def column_view(workspace_id: int, column_id: int) -> ColumnView | None:
    rows = await db.fetch(
        """
        SELECT c.id, c.type, c.title, c.position, c.spec, c.refresh_policy,
               EXISTS (SELECT 1 FROM feed_item_columns f
                       WHERE f.workspace_id = c.workspace_id AND f.column_id = c.id) AS has_items
        FROM stream_columns c WHERE c.workspace_id = $1 AND c.id = $2 AND c.deleted_at IS NULL
        """,
        workspace_id, column_id,
    )  # fmt: skip
    views = await _views(workspace_id, rows)
    return views[0] if views else None


def _source(row: asyncpg.Record) -> SourceView:
    kind = SourceKind(row["kind"])
    return SourceView(
        id=row["id"], provider=row["provider"], connection_id=row["connection_id"],
        kind=kind, query=row["query"], actor_ref=row["actor_ref"],
        label=row["label"], state=SourceState(row["state"]), last_polled_at=row["last_polled_at"],
        next_poll_at=row["next_poll_at"], last_error=row["last_error"], interval_ms=row["interval_ms"],
        key_missing=row["keyless"] and needs_key(row["provider"], kind),
    )  # fmt: skip


async def _views(workspace_id: int, rows: Sequence[asyncpg.Record]) -> list[ColumnView]:
    ids = [r["id"] for r in rows]
    sources: dict[int, list[SourceView]] = {i: [] for i in ids}
    for row in await db.fetch(_SOURCES_SQL, workspace_id, ids) if ids else []:
        sources[row["column_id"]].append(_source(row))
    now = datetime.now(UTC)
    views = []
    for row in rows:
        spec = json.loads(row["spec"])
        policy = json.loads(row["refresh_policy"])
        column_type = ColumnType(row["type"])
        mine = sources[row["id"]]
        unsupported = tuple(Unsupported.from_json(u) for u in spec.pop("unsupported_platforms", []))
        views.append(
            ColumnView(
                id=row["id"], type=column_type, title=row["title"], position=row["position"],
                spec=spec, refresh_policy=policy,
                effective_interval_ms=effective_interval_ms(column_type, policy, mine),
                sources=tuple(mine),
                aggregate_state=aggregate_state(
                    mine, paused=bool(policy.get("paused")), has_items=row["has_items"], now=now
                ),
                unsupported_platforms=unsupported, has_items=row["has_items"],
            )
        )  # fmt: skip
    return views


def effective_interval_ms(
    column_type: ColumnType, policy: dict[str, Any], sources: Sequence[SourceView]
) -> int:
    """What the column gets: the clamped ask, raised to the slowest budget floor of its sources."""
    asked = clamp_interval(policy.get("interval_ms"), column_type)
    floors = [floor_ms(p, s.kind) for s in sources if (p := platforms.PLATFORMS.get(s.provider))]
    return max([asked, *floors])


async def saved_search_queries(workspace_id: int) -> set[str]:
    rows = await db.fetch(
        "SELECT lower(spec->>'query') AS q FROM stream_columns WHERE workspace_id = $1"
        " AND type = 'saved_search' AND deleted_at IS NULL",
        workspace_id,
    )
    return {r["q"] for r in rows}


# Items -----------------------------------------------------------------------------------

# Where a keyset page starts: before its cursor, or (none) before the end of time. The
# condition is one range in the (created_at_remote, dedup_key) index, also in a prepared
# statement's generic plan under row security: `$at IS NULL OR ...` (and `coalesce($at, ..)`,
# which row security counts as leaky) left it a filter, read from the column's newest item
# down to the cursor.
_NO_CURSOR = (datetime.max.replace(tzinfo=UTC), "")


def page_start(cursor: str | None) -> tuple[datetime, str]:
    return decode_cursor(cursor) if cursor else _NO_CURSOR


ITEM_FIELDS = """
i.id, i.dedup_key, i.remote_id, i.provider, s.connection_id, i.source_id, i.author_handle,
i.author_ref, i.url, i.created_at_remote, i.fetched_at, i.content, i.plain_text, i.media, i.metrics,
i.reposted_by, i.lang
"""


def _item(row: asyncpg.Record) -> ItemView:
    return ItemView(
        id=row["id"], dedup_key=row["dedup_key"], remote_id=row["remote_id"],
        provider=row["provider"], connection_id=row["connection_id"], source_id=row["source_id"],
        author_handle=row["author_handle"], author_ref=row["author_ref"], url=row["url"],
        created_at=row["created_at_remote"], fetched_at=row["fetched_at"],
        content=json.loads(row["content"]), plain_text=row["plain_text"],
        media=json.loads(row["media"]), metrics=json.loads(row["metrics"]),
        reposted_by=row["reposted_by"], lang=row["lang"],
    )  # fmt: skip


def item_page(rows: Sequence[asyncpg.Record], limit: int) -> ItemPage:
    items = tuple(_item(r) for r in rows[:limit])
    more = len(rows) > limit
    last = items[-1] if items else None
    cursor = encode_cursor(last.created_at, last.dedup_key) if more and last else None
    return ItemPage(items=items, next_cursor=cursor)


async def item(workspace_id: int, item_id: int) -> ItemView | None:
    """One stored item of the workspace; None when there is no such item."""
    row = await db.fetchrow(
        f"SELECT {ITEM_FIELDS} FROM feed_items i LEFT JOIN stream_sources s ON s.id = i.source_id"
        " WHERE i.workspace_id = $1 AND i.id = $2",
        workspace_id, item_id,
    )  # fmt: skip
    return _item(row) if row else None


async def column_items(
    workspace_id: int, column_id: int, cursor: str | None, limit: int = DEFAULT_LIMIT
) -> ItemPage:
    at, key = page_start(cursor)
    rows = await db.fetch(
        f"""
        SELECT {ITEM_FIELDS}
        FROM (SELECT item_id, created_at_remote, dedup_key FROM feed_item_columns
              WHERE workspace_id = $1 AND column_id = $2
                AND (created_at_remote, dedup_key) < ($3, $4)
              ORDER BY created_at_remote DESC, dedup_key DESC LIMIT $5) f
        JOIN feed_items i ON i.id = f.item_id
        LEFT JOIN stream_sources s ON s.id = i.source_id
        ORDER BY f.created_at_remote DESC, f.dedup_key DESC
        """,
        workspace_id, column_id, at, key, limit + 1,
    )  # fmt: skip
    return item_page(rows, limit)


async def merged_items(
    workspace_id: int, cursor: str | None, limit: int = DEFAULT_LIMIT
) -> ItemPage:
    """Every item of the workspace's platform_feed columns, newest first, each once.

    Each column's page is read from its own keyset (the newest items of all columns are among
    them); filtering the workspace's items by "in a platform feed" read every keyword
    column's item until a page of feed items was found, or the whole history behind a cursor."""
    at, key = page_start(cursor)
    rows = await db.fetch(
        f"""
        SELECT {ITEM_FIELDS}
        FROM (SELECT DISTINCT p.item_id, p.created_at_remote, p.dedup_key
              FROM stream_columns c
              CROSS JOIN LATERAL (
                SELECT item_id, created_at_remote, dedup_key FROM feed_item_columns
                WHERE workspace_id = $1 AND column_id = c.id
                  AND (created_at_remote, dedup_key) < ($2, $3)
                ORDER BY created_at_remote DESC, dedup_key DESC LIMIT $4) p
              WHERE c.workspace_id = $1 AND c.type = 'platform_feed' AND c.deleted_at IS NULL
              ORDER BY p.created_at_remote DESC, p.dedup_key DESC LIMIT $4) f
        JOIN feed_items i ON i.id = f.item_id
        LEFT JOIN stream_sources s ON s.id = i.source_id
        ORDER BY f.created_at_remote DESC, f.dedup_key DESC LIMIT $4
        """,
        workspace_id, at, key, limit + 1,
    )  # fmt: skip
    return item_page(rows, limit)


# Connections, credentials, ledger ---------------------------------------------------------


def _connection(row: asyncpg.Record) -> ConnectionView:
    p = platforms.PLATFORMS.get(row["provider"])
    return ConnectionView(
        id=row["id"], provider=row["provider"], instance=row["instance"], handle=row["handle"],
        display_name=row["display_name"], configured=row["configured"],
        capabilities=tuple(sorted(k.value for k in p.kinds)) if p else (),
    )  # fmt: skip


_CONNECTION_FIELDS = (
    "id, provider, instance, handle, display_name, credentials IS NOT NULL AS configured"
)


async def connections(workspace_id: int) -> list[ConnectionView]:
    rows = await db.fetch(
        f"SELECT {_CONNECTION_FIELDS} FROM stream_connections WHERE workspace_id = $1"
        " AND deleted_at IS NULL ORDER BY id",
        workspace_id,
    )
    return [_connection(r) for r in rows]


async def connection(workspace_id: int, connection_id: object) -> ConnectionView | None:
    if not isinstance(connection_id, int):
        return None
    row = await db.fetchrow(
        f"SELECT {_CONNECTION_FIELDS} FROM stream_connections WHERE workspace_id = $1"
        " AND id = $2 AND deleted_at IS NULL",
        workspace_id, connection_id,
    )  # fmt: skip
    return _connection(row) if row else None


async def connection_by_handle(
    workspace_id: int, provider: str, instance: str, handle: str
) -> int | None:
    """The live connection of this account, if it is connected already."""
    found = await db.fetchval(
        "SELECT id FROM stream_connections WHERE workspace_id = $1 AND provider = $2"
        " AND instance = $3 AND lower(handle) = lower($4) AND deleted_at IS NULL",
        workspace_id, provider, instance, handle,
    )  # fmt: skip
    return int(found) if found is not None else None


async def connections_without_column(workspace_id: int) -> list[ConnectionView]:
    """Live connections with a home timeline that never had a platform_feed column."""
    rows = await db.fetch(
        f"""
        SELECT {_CONNECTION_FIELDS} FROM stream_connections k
        WHERE workspace_id = $1 AND deleted_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM stream_columns c WHERE c.workspace_id = $1
                          AND c.type = 'platform_feed' AND c.spec->>'connection_id' = k.id::text)
        ORDER BY id
        """,
        workspace_id,
    )
    return [c for c in map(_connection, rows) if SourceKind.HOME.value in c.capabilities]


async def connection_uses(workspace_id: int) -> list[ConnectionUse]:
    """Every live connection with its active sources' states and the live columns reading it."""
    found = await connections(workspace_id)
    rows = await db.fetch(
        """
        SELECT s.connection_id, s.state, s.last_error, c.id AS column_id, c.title, c.position
        FROM stream_sources s
        LEFT JOIN stream_column_sources cs ON cs.workspace_id = $1 AND cs.source_id = s.id
        LEFT JOIN stream_columns c ON c.workspace_id = $1 AND c.id = cs.column_id
          AND c.deleted_at IS NULL
        WHERE s.workspace_id = $1 AND s.connection_id IS NOT NULL AND s.active
        ORDER BY c.position NULLS LAST, s.id
        """,
        workspace_id,
    )
    states: dict[int, list[SourceState]] = {}
    errors: dict[int, str] = {}
    columns: dict[int, dict[int, str]] = {}
    for r in rows:
        k = r["connection_id"]
        states.setdefault(k, []).append(SourceState(r["state"]))
        if r["last_error"] and r["state"] in ("error", "stale", "disabled"):
            errors.setdefault(k, r["last_error"])
        if r["column_id"] is not None:
            columns.setdefault(k, {})[r["column_id"]] = r["title"]
    return [
        ConnectionUse(
            connection=c,
            states=tuple(states.get(c.id, ())),
            error=errors.get(c.id, ""),
            columns=tuple(columns.get(c.id, {}).items()),
        )
        for c in found
    ]


async def sealed_credential(workspace_id: int, provider: str) -> bytes | None:
    value = await db.fetchval(
        "SELECT sealed FROM stream_credentials WHERE workspace_id = $1 AND provider = $2",
        workspace_id, provider,
    )  # fmt: skip
    return bytes(value) if value is not None else None


async def credentials_status(workspace_id: int) -> list[dict[str, Any]]:
    """Which workspace keys are set: provider, label, configured. Never the secret."""
    rows = await db.fetch(
        "SELECT provider, label FROM stream_credentials WHERE workspace_id = $1", workspace_id
    )
    configured = {r["provider"]: r["label"] for r in rows}
    return [
        {"provider": name, "label": configured.get(name, ""), "configured": name in configured}
        for name in platforms.PLATFORMS
    ]


async def ledger_cap(workspace_id: int, provider: str, rule: LedgerRule) -> int:
    value = await db.fetchval(
        "SELECT units_cap FROM provider_budget_ledger WHERE workspace_id = $1 AND provider = $2"
        " AND bucket = $3 ORDER BY window_start DESC LIMIT 1",
        workspace_id, provider, rule.bucket,
    )  # fmt: skip
    return int(value) if value is not None else rule.default_cap


async def ledger_used(workspace_id: int, provider: str, rule: LedgerRule, now: datetime) -> int:
    """Units spent in the window `now` falls in (distinct live subjects for a rolling ledger)."""
    if rule.rolling:
        value = await db.fetchval(
            "SELECT count(*) FROM provider_ledger_subjects WHERE workspace_id = $1"
            " AND provider = $2 AND bucket = $3 AND first_used_at > $4",
            workspace_id, provider, rule.bucket, now - rule.window,
        )  # fmt: skip
    else:
        value = await db.fetchval(
            "SELECT units_used FROM provider_budget_ledger WHERE workspace_id = $1"
            " AND provider = $2 AND bucket = $3 AND window_start = $4",
            workspace_id, provider, rule.bucket, window_start(now, rule.window, rule.zone),
        )  # fmt: skip
    return int(value or 0)


async def budgets(workspace_id: int, now: datetime | None = None) -> list[BudgetView]:
    """Each provider ledger in the window `now` falls in: used, cap and when it renews."""
    now = now or datetime.now(UTC)
    out = []
    for p in platforms.PLATFORMS.values():
        rule = p.ledger
        if rule is None:
            continue
        if rule.rolling:
            oldest = await db.fetchval(
                "SELECT min(first_used_at) FROM provider_ledger_subjects WHERE workspace_id = $1"
                " AND provider = $2 AND bucket = $3 AND first_used_at > $4",
                workspace_id, p.name, rule.bucket, now - rule.window,
            )  # fmt: skip
            renews = oldest + rule.window if oldest else None
        else:
            renews = window_end(window_start(now, rule.window, rule.zone), rule.window, rule.zone)
        out.append(
            BudgetView(
                provider=p.name,
                used=await ledger_used(workspace_id, p.name, rule, now),
                cap=await ledger_cap(workspace_id, p.name, rule),
                window_days=rule.window.days,
                rolling=rule.rolling,
                renews_at=renews,
            )
        )
    return out


async def platforms_status(workspace_id: int) -> list[dict[str, Any]]:
    """The catalogue as the wall shows it: per platform whether this server can search it and
    follow its accounts (or the reason it cannot), whether its key is set, and its budget."""
    keys = {c["provider"]: c["configured"] for c in await credentials_status(workspace_id)}
    now = datetime.now(UTC)
    out = []
    for p in platforms.PLATFORMS.values():
        provider = provider_for(p.name)
        kinds = provider.kinds if provider is not None else frozenset()
        budget = None
        if p.ledger is not None:
            rule = p.ledger
            budget = {
                "unit": rule.unit_label,
                "window_days": rule.window.days,
                "rolling": rule.rolling,
                "cap": await ledger_cap(workspace_id, p.name, rule),
                "used": await ledger_used(workspace_id, p.name, rule, now),
            }
        out.append(
            {
                "platform": p.name,
                "label": p.label,
                "search": _capability(p, SourceKind.SEARCH in kinds, p.no_search_reason),
                "accounts": _capability(p, SourceKind.AUTHOR in kinds, p.no_accounts_reason),
                "takes_key": p.workspace_key,
                "key_configured": keys.get(p.name, False),
                "budget": budget,
            }
        )
    return out


def _capability(p: platforms.Platform, served: bool, reason: str) -> dict[str, Any]:
    if served:
        return {"available": True, "reason": None}
    why = reason or _("This server cannot read %(p)s this way yet.") % {"p": p.label}
    return {"available": False, "reason": _(why)}
