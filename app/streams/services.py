"""The wall's use cases: the only writers of columns, sources, items, connections and the ledger.

Columns (seed 003 sections 1.3-1.4, 3.1):
    create/update -> validate (spec.py) -> resolve sources (adapt queries per platform,
    resolve handles, keep `unsupported_platforms`) -> link the column to shared sources
    -> recompute each touched source's interval and whether anything still needs it
    -> live notice after commit, a poll woken for new sources.
Polls (section 3.4; polling.py runs them front to back):
    claim (lease, SKIP LOCKED) -> ledger -> ... -> store_page (upsert items, link them to
    every column of the source, source ready) or finish (failure, rate limit, pause).
Connections: removing one disables its sources; its columns stay and say why.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import msgspec

from app.core import db, i18n, leases
from app.core.i18n import N_, _, format_number, stored_moment
from app.core.jobs import enqueue_after_commit
from app.egress import EgressError, RateLimited
from app.live.notices import publish_after_commit, publish_committed
from app.safe_content import to_json
from app.streams import platforms, queries, resolver, vault_contexts
from app.streams.platforms import LedgerRule, adapt_query, clamp_interval, floor_ms
from app.streams.providers import (
    Credential,
    MediaRef,
    Page,
    ProviderError,
    RemoteItem,
    dedup_key,
    language_tag,
    provider_for,
)
from app.streams.schedule import Outcome, window_end, window_start
from app.streams.spec import form_of, parse_column
from app.streams.types import (
    BUDGETS_TOPIC,
    COLUMNS_TOPIC,
    PLATFORM_SETTINGS_TOPIC,
    ColumnForm,
    ColumnType,
    NotFound,
    Refresh,
    SourceKind,
    SourceState,
    SpecInvalid,
    StreamsError,
    Unsupported,
    column_topic,
)
from app.vault import seal, unseal

log = logging.getLogger(__name__)

POLL_TASK = "poll_stream_source"
LEASE_S = leases.LEASE_SECONDS  # renewed by a heartbeat while the poll runs (app.core.leases)
RESOLVE_TIMEOUT_S = 10.0  # handle resolution while saving a column; later polls retry
RETENTION = timedelta(days=30)
IMPORT_MAX_TERMS = 50
MAX_CAP = 1_000_000_000  # a ledger cap beyond any real budget is a typo
PAGE_LIMIT_FOR_ESTIMATE = 40  # items one poll reads at most (polling.PAGE_LIMIT)
_POLLABLE = ("disabled", "unsupported")


def poll_job_id(source_id: int) -> str:
    return f"stream-source:{source_id}"


# Connections and workspace credentials ---------------------------------------------------


async def add_connection(
    workspace_id: int,
    provider: str,
    handle: str,
    *,
    instance: str = "",
    display_name: str = "",
    secret: str | None = None,
    actor_user_id: int | None = None,
) -> int:
    """A connected account (the next issue's sign-in flows call this); its token is sealed."""
    if platforms.platform(provider) is None:
        raise StreamsError(_("Unknown platform."), field="provider")
    host = platforms.canonical_host(instance) if instance else ""
    if host is None:
        raise StreamsError(_("The instance is not a valid host name."), field="instance")
    async with db.workspace_tx(workspace_id) as tx:
        connection_id = int(
            await tx.fetchval(
                "INSERT INTO stream_connections (workspace_id, provider, instance, handle,"
                " display_name, created_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                workspace_id, provider, host, handle, display_name or handle, actor_user_id,
            )
        )  # fmt: skip
        if secret:
            sealed = seal(secret, context=vault_contexts.connection(workspace_id, connection_id))
            await tx.execute(
                "UPDATE stream_connections SET credentials = $3 WHERE workspace_id = $1 AND id = $2",
                workspace_id, connection_id, sealed,
            )  # fmt: skip
        publish_after_commit(tx, COLUMNS_TOPIC)
    return connection_id


async def connect_account(workspace_id: int, data: object, *, actor_user_id: int | None) -> int:
    """Connect an account from what a person typed (Mastodon: instance + access token;
    Bluesky: handle + app password): the provider checks it once with the platform and
    what it keeps is sealed. The same account connected again gets the new secret."""
    form = data if isinstance(data, dict) else {}

    def text(key: str) -> str:
        value = form.get(key)
        return value.strip() if isinstance(value, str) else ""

    provider_name, handle, secret, instance = (
        text("provider"), text("handle"), text("secret"), text("instance")
    )  # fmt: skip
    p = platforms.platform(provider_name)
    host = platforms.instance_host(instance) if instance else ""
    errors: dict[str, str] = {}
    if p is None:
        errors["provider"] = _("Choose a platform.")
    elif p.instance_based and not host:
        errors["instance"] = _("Enter the instance's address, e.g. mastodon.social.")
    elif not p.instance_based and (not handle or len(handle) > 300):
        errors["handle"] = _("Enter the account's handle.")
    if not secret or len(secret) > 2000:
        errors["secret"] = _("Enter the app password or access token.")
    if host is None:
        errors["instance"] = _("The server is not a valid host name.")
    if errors:
        raise SpecInvalid(errors)
    provider = provider_for(provider_name)
    if provider is None:
        raise SpecInvalid({"provider": _("Accounts on this platform cannot be connected yet.")})
    try:
        connected = await provider.connect(handle, secret, host or "")
    except RateLimited:
        raise StreamsError(
            _("The platform asks to wait before signing in again; try later."), status=429
        ) from None
    except ProviderError as error:
        raise SpecInvalid({"secret": error.message}) from None
    except EgressError as error:
        raise StreamsError(
            _("The platform could not be reached: %(m)s") % {"m": error.message}, status=502
        ) from None
    existing = await queries.connection_by_handle(
        workspace_id, provider_name, host or "", connected.handle
    )
    if existing is None:
        existing = await _revive_connection(
            workspace_id, provider_name, host or "", connected.handle
        )
    if existing is not None:
        await _reseal_connection(workspace_id, existing, connected.secret, connected.display_name)
        await _wake_sources(workspace_id, existing)
        return existing
    return await add_connection(
        workspace_id, provider_name, connected.handle, instance=host or "",
        display_name=connected.display_name, secret=connected.secret, actor_user_id=actor_user_id,
    )  # fmt: skip


async def _reseal_connection(
    workspace_id: int, connection_id: int, secret: str, display_name: str = ""
) -> None:
    """A connection's new secret (connected again, or a provider's refreshed session)."""
    sealed = seal(secret, context=vault_contexts.connection(workspace_id, connection_id))
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE stream_connections SET credentials = $3,"
            " display_name = coalesce(nullif($4, ''), display_name)"
            " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
            workspace_id, connection_id, sealed, display_name,
        )  # fmt: skip
        publish_after_commit(tx, COLUMNS_TOPIC)


async def _revive_connection(
    workspace_id: int, provider: str, instance: str, handle: str
) -> int | None:
    """The account removed earlier is connected again: its row comes back, so the columns
    that said "reconnect" read it again (None if it was never connected here)."""
    async with db.workspace_tx(workspace_id) as tx:
        found = await tx.fetchval(
            """
            UPDATE stream_connections SET deleted_at = NULL WHERE id = (
              SELECT id FROM stream_connections WHERE workspace_id = $1 AND provider = $2
                AND instance = $3 AND lower(handle) = lower($4) AND deleted_at IS NOT NULL
              ORDER BY deleted_at DESC LIMIT 1)
            RETURNING id
            """,
            workspace_id, provider, instance, handle,
        )  # fmt: skip
    return int(found) if found is not None else None


async def _wake_sources(workspace_id: int, connection_id: int) -> None:
    """A connection got a new secret: its sources poll again now, failing or removed before."""
    async with db.workspace_tx(workspace_id) as tx:
        rows = await tx.fetch(
            """
            UPDATE stream_sources SET next_poll_at = now(), consecutive_failures = 0,
              state = CASE WHEN state = 'disabled' THEN 'pending' ELSE state END,
              last_error = CASE WHEN state = 'disabled' THEN '' ELSE last_error END
            WHERE workspace_id = $1 AND connection_id = $2 AND state <> 'unsupported'
            RETURNING id, active, (SELECT array_agg(column_id) FROM stream_column_sources
                                   WHERE source_id = stream_sources.id) AS columns
            """,
            workspace_id, connection_id,
        )  # fmt: skip
        for row in rows:
            if row["active"]:
                enqueue_after_commit(tx, POLL_TASK, workspace_id, row["id"])
        _publish_columns(tx, _flatten(row["columns"] for row in rows))


async def delete_connection(workspace_id: int, connection_id: int) -> None:
    """The account is gone: its sources stop (disabled), its columns stay and say why."""
    async with db.workspace_tx(workspace_id) as tx:
        await _soft_delete(
            tx, "stream_connections", workspace_id, connection_id,
            missing=_("There is no such connection."), also=", credentials = NULL",
        )  # fmt: skip
        columns = await tx.fetch(
            """
            UPDATE stream_sources SET state = 'disabled', last_error = $3, lease_until = NULL
            WHERE workspace_id = $1 AND connection_id = $2
            RETURNING (SELECT array_agg(column_id) FROM stream_column_sources
                       WHERE source_id = stream_sources.id) AS columns
            """,
            workspace_id, connection_id, N_("The connected account was removed; reconnect it."),
        )  # fmt: skip
        _publish_columns(tx, _flatten(row["columns"] for row in columns))


def require_key_platform(provider: str) -> None:
    """Refuse a platform that takes no workspace key, naming those that do."""
    if not _takes_workspace_key(provider):
        raise StreamsError(
            _("Unknown platform %(p)r; choose from %(all)s.")
            % {"p": provider[:40], "all": ", ".join(_keyed_providers())},
            field="provider",
        )


async def set_credential(workspace_id: int, provider: str, secret: str, label: str = "") -> None:
    """The workspace's key for a provider (YouTube API key, X bearer, Bluesky app password)."""
    require_key_platform(provider)
    if not secret.strip():
        raise StreamsError(_("Enter the key."), field="secret")
    sealed = seal(secret.strip(), context=vault_contexts.credential(workspace_id, provider))
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            """
            INSERT INTO stream_credentials (workspace_id, provider, label, sealed)
            VALUES ($1, $2, $3, $4)
            ON CONFLICT (workspace_id, provider)
            DO UPDATE SET label = EXCLUDED.label, sealed = EXCLUDED.sealed, updated_at = now()
            """,
            workspace_id, provider, label[:100], sealed,
        )  # fmt: skip
        # Keyless sources the platform refused (Bluesky's search) or that failed for want of
        # the key (YouTube's search) may work with it: they poll now, not after their back-off.
        revived = await tx.fetch(
            """
            UPDATE stream_sources SET state = 'pending', last_error = '', next_poll_at = now(),
              consecutive_failures = 0
            WHERE workspace_id = $1 AND provider = $2 AND connection_id IS NULL
              AND state IN ('unsupported', 'error')
            RETURNING (SELECT array_agg(column_id) FROM stream_column_sources
                       WHERE source_id = stream_sources.id) AS columns
            """,
            workspace_id, provider,
        )  # fmt: skip
        if revived:
            _publish_columns(tx, _flatten(row["columns"] for row in revived))
        publish_after_commit(tx, PLATFORM_SETTINGS_TOPIC)
    await reresolve_columns(workspace_id, provider)


async def remove_credential(workspace_id: int, provider: str) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "DELETE FROM stream_credentials WHERE workspace_id = $1 AND provider = $2",
            workspace_id, provider,
        )  # fmt: skip
        publish_after_commit(tx, PLATFORM_SETTINGS_TOPIC)
    await reresolve_columns(workspace_id, provider)


# Columns ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """One source a column needs, before it has a row."""

    provider: str
    kind: SourceKind
    connection_id: int | None
    query: str = ""
    actor_ref: str = ""
    label: str = ""
    state: SourceState = SourceState.PENDING
    last_error: str = ""


async def create_column(workspace_id: int, data: object, *, actor_user_id: int | None) -> int:
    form = parse_column(data)
    plans, unsupported = await _plan(workspace_id, form)
    async with db.workspace_tx(workspace_id) as tx:
        await _lock_columns(tx, workspace_id)
        position = await tx.fetchval(
            "SELECT coalesce(max(position) + 1, 0) FROM stream_columns"
            " WHERE workspace_id = $1 AND deleted_at IS NULL",
            workspace_id,
        )
        column_id = int(
            await tx.fetchval(
                "INSERT INTO stream_columns (workspace_id, type, title, position, spec,"
                " refresh_policy, created_by) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)"
                " RETURNING id",
                workspace_id, form.type.value, form.title, position,
                _spec_json(form, unsupported), json.dumps(form.refresh_policy.to_json()),
                actor_user_id,
            )
        )  # fmt: skip
        await _link_sources(tx, workspace_id, column_id, plans)
        publish_after_commit(tx, COLUMNS_TOPIC)
    return column_id


async def update_column(workspace_id: int, column_id: int, data: object) -> None:
    """Title, spec and refresh policy; a new spec re-resolves the column's sources."""
    stored = await queries.column_row(workspace_id, column_id)
    if stored is None:
        raise NotFound(_("There is no such column."))
    current = form_of(stored["type"], stored["title"], stored["spec"], stored["refresh_policy"])
    form = parse_column(data, current=current)
    respec = isinstance(data, dict) and "spec" in data
    plans, unsupported = await _plan(workspace_id, form) if respec else ([], [])
    async with db.workspace_tx(workspace_id) as tx:
        found = await tx.fetchval(
            "UPDATE stream_columns SET title = $3, refresh_policy = $4::jsonb, updated_at = now(),"
            " spec = CASE WHEN $6 THEN $5::jsonb ELSE spec END"
            " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING id",
            workspace_id, column_id, form.title, json.dumps(form.refresh_policy.to_json()),
            _spec_json(form, unsupported), respec,
        )  # fmt: skip
        if found is None:
            raise NotFound(_("There is no such column."))
        if respec:
            await _link_sources(tx, workspace_id, column_id, plans)
        else:
            await _refresh_sources(
                tx, workspace_id, await _source_ids(tx, workspace_id, [column_id])
            )
        publish_after_commit(tx, COLUMNS_TOPIC)
        publish_after_commit(tx, column_topic(column_id))


async def reresolve_columns(workspace_id: int, provider: str) -> None:
    """A key or budget of `provider` changed: every live keyword column naming it is resolved
    again as saving it would, so the platform joins (and is polled) or leaves (and says why)
    without anyone editing the column. A column edited meanwhile keeps the edit."""
    rows = await db.fetch(
        "SELECT id, type, title, spec, refresh_policy FROM stream_columns"
        " WHERE workspace_id = $1 AND deleted_at IS NULL AND type = ANY($2::text[])"
        " AND spec->'platforms' ? $3",
        workspace_id, [ColumnType.KEYWORD.value, ColumnType.SAVED_SEARCH.value], provider,
    )  # fmt: skip
    for row in rows:
        form = form_of(row["type"], row["title"], json.loads(row["spec"]),
                       json.loads(row["refresh_policy"]))  # fmt: skip
        plans, unsupported = await _plan(workspace_id, form, refuse_over_budget=False)
        async with db.workspace_tx(workspace_id) as tx:
            unchanged = await tx.fetchval(
                "UPDATE stream_columns SET spec = $4::jsonb, updated_at = now()"
                " WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL"
                " AND spec = $3::jsonb RETURNING id",
                workspace_id, row["id"], row["spec"], _spec_json(form, unsupported),
            )  # fmt: skip
            if unchanged is None:
                continue  # edited or deleted since we read it: that save resolved it
            await _link_sources(tx, workspace_id, row["id"], plans)
            publish_after_commit(tx, COLUMNS_TOPIC)
            publish_after_commit(tx, column_topic(row["id"]))


async def delete_column(workspace_id: int, column_id: int) -> None:
    """Soft delete: the column leaves the wall; sources nobody needs any more stop polling."""
    async with db.workspace_tx(workspace_id) as tx:
        await _soft_delete(
            tx, "stream_columns", workspace_id, column_id, missing=_("There is no such column.")
        )
        await _refresh_sources(tx, workspace_id, await _source_ids(tx, workspace_id, [column_id]))
        await _compact_positions(tx, workspace_id)
        publish_after_commit(tx, COLUMNS_TOPIC)
        publish_after_commit(tx, column_topic(column_id))


async def reorder_columns(workspace_id: int, ordered_ids: object) -> None:
    """Positions follow `ordered_ids`, which must name every live column once."""
    if not isinstance(ordered_ids, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in ordered_ids
    ):
        raise SpecInvalid({"ordered_ids": _("Send the columns' ids in their new order.")})
    async with db.workspace_tx(workspace_id) as tx:
        await _lock_columns(tx, workspace_id)
        live = {
            r["id"]
            for r in await tx.fetch(
                "SELECT id FROM stream_columns WHERE workspace_id = $1 AND deleted_at IS NULL",
                workspace_id,
            )
        }
        if len(ordered_ids) != len(live) or set(ordered_ids) != live:
            raise SpecInvalid({"ordered_ids": _("Name every column exactly once.")})
        # Two steps, because positions are unique at every moment.
        await tx.execute(
            "UPDATE stream_columns SET position = -1 - position WHERE workspace_id = $1"
            " AND deleted_at IS NULL",
            workspace_id,
        )
        await tx.execute(
            "UPDATE stream_columns c SET position = o.n - 1, updated_at = now()"
            " FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, n)"
            " WHERE c.workspace_id = $1 AND c.id = o.id",
            workspace_id, ordered_ids,
        )  # fmt: skip
        publish_after_commit(tx, COLUMNS_TOPIC)


async def move_column(workspace_id: int, column_id: int, position: object) -> None:
    """Move one column to `position` (0 = first); the others keep their order."""
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise SpecInvalid({"position": _("Give the position as a whole number from 0.")})
    order = [c.id for c in await queries.list_columns(workspace_id)]
    if column_id not in order:
        raise NotFound(_("There is no such column."))
    order.remove(column_id)
    order.insert(min(position, len(order)), column_id)
    await reorder_columns(workspace_id, order)


async def seed_platform_columns(workspace_id: int) -> int:
    """One platform_feed column (home) per connection that never had one: lazy, idempotent,
    safe under concurrent first listings (one advisory lock per workspace).

    The column is made by whoever connected the account (the connection's `created_by`),
    never by whoever happens to list the columns first: a viewer opening the wall is not
    the author of the workspace's columns."""
    missing = await queries.connections_without_column(workspace_id)
    if not missing:
        return 0
    made = 0
    async with db.workspace_tx(workspace_id) as tx:
        await _lock_columns(tx, workspace_id)
        for connection in await queries.connections_without_column(workspace_id):
            form = parse_column(
                {
                    "type": "platform_feed",
                    "title": connection.title[:80],
                    "spec": {"connection_id": connection.id, "kinds": ["home"]},
                }
            )
            plans, unsupported = await _plan(workspace_id, form)
            position = await tx.fetchval(
                "SELECT coalesce(max(position) + 1, 0) FROM stream_columns"
                " WHERE workspace_id = $1 AND deleted_at IS NULL",
                workspace_id,
            )
            column_id = await tx.fetchval(
                "INSERT INTO stream_columns (workspace_id, type, title, position, spec,"
                " refresh_policy, created_by) VALUES ($1, 'platform_feed', $2, $3, $4::jsonb,"
                " '{\"paused\": false}', (SELECT created_by FROM stream_connections"
                " WHERE workspace_id = $1 AND id = $5)) RETURNING id",
                workspace_id, form.title, position, _spec_json(form, unsupported), connection.id,
            )  # fmt: skip
            await _link_sources(tx, workspace_id, int(column_id), plans)
            made += 1
        if made:
            publish_after_commit(tx, COLUMNS_TOPIC)
    return made


async def import_saved_searches(
    workspace_id: int, terms: object, *, actor_user_id: int | None
) -> list[int]:
    """saved_search columns for terms not already saved (a second run creates nothing)."""
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise SpecInvalid({"terms": _("Send the saved searches as a list of strings.")})
    if len(terms) > IMPORT_MAX_TERMS:
        raise SpecInvalid(
            {"terms": _("Import at most %(n)s searches at once.") % {"n": IMPORT_MAX_TERMS}}
        )
    made: list[int] = []
    # One transaction under the columns lock: concurrent imports of the same terms make
    # each column once, and a bad term leaves nothing half-imported.
    async with db.workspace_tx(workspace_id) as tx:
        await _lock_columns(tx, workspace_id)
        existing = await queries.saved_search_queries(workspace_id)
        for i, raw in enumerate(terms):
            term = " ".join(raw.split())
            if not term or term.lower() in existing:
                continue
            data = {
                "type": "saved_search",
                "title": term[:80],
                "spec": {"query": term, "platforms": list(platforms.PLATFORMS)},
            }
            try:
                made.append(await create_column(workspace_id, data, actor_user_id=actor_user_id))
            except SpecInvalid as error:
                raise SpecInvalid({f"terms[{i}]": error.message}) from None
            existing.add(term.lower())
    return made


async def _soft_delete(
    tx: db.Tx, table: str, workspace_id: int, row_id: int, *, missing: str, also: str = ""
) -> None:
    """Mark a live row of `table` deleted (and `also` set, e.g. a secret wiped); NotFound
    with `missing` when there is no such live row."""
    gone = await tx.fetchval(
        f"UPDATE {table} SET deleted_at = now(){also} WHERE workspace_id = $1 AND id = $2"
        " AND deleted_at IS NULL RETURNING id",
        workspace_id, row_id,
    )  # fmt: skip
    if gone is None:
        raise NotFound(missing)


@dataclass(frozen=True)
class CostEstimate:
    """What a keyword column on a per-post-billed platform (X) would read, against the budget."""

    platform: str
    query: str
    matched_last_7_days: int  # what the platform counted for the query
    expected_units: int  # posts the column would read per ledger window
    window_days: int
    cap: int
    used: int

    @property
    def remaining(self) -> int:
        return max(0, self.cap - self.used)

    @property
    def fits(self) -> bool:
        return self.expected_units <= self.remaining and self.remaining > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "query": self.query,
            "matched_last_7_days": self.matched_last_7_days,
            "expected_units": self.expected_units,
            "unit": "posts read",
            "window_days": self.window_days,
            "cap": self.cap,
            "used": self.used,
            "remaining": self.remaining,
            "fits": self.fits,
        }


async def estimate_cost(workspace_id: int, platform: str, query: object) -> CostEstimate:
    """The pre-flight estimate of a keyword column on X: the platform's own count of matching
    posts over 7 days, scaled to the ledger's window and bounded by what polling can read
    (one page per poll at the keyword column's default interval). Asks X (one request)."""
    p = platforms.platform(platform)
    if p is None or p.ledger is None or not p.ledger.per_item:
        raise StreamsError(_("Only X reads are billed per post."), field="platform")
    if not isinstance(query, str) or not query.strip() or len(query) > 200:
        raise StreamsError(_("Enter the query to estimate (1-200 characters)."), field="query")
    provider = provider_for(platform)
    credential = await workspace_credential(workspace_id, platform)
    if provider is None or credential is None or not hasattr(provider, "estimate"):
        raise StreamsError(
            _("Add the workspace's %(p)s key in Settings first.") % {"p": p.label}, field="platform"
        )
    try:
        matched = await provider.estimate(credential, query.strip())
    except (EgressError, ProviderError) as error:
        message = getattr(error, "message", str(error))
        raise StreamsError(
            _("%(p)s could not estimate the cost: %(m)s") % {"p": p.label, "m": message},
            field="platform",
        ) from None
    rule = p.ledger
    days = rule.window.days
    polls = rule.window.total_seconds() * 1000 / clamp_interval(None, ColumnType.KEYWORD)
    expected = min(round(matched * days / 7), int(polls) * PAGE_LIMIT_FOR_ESTIMATE)
    now = datetime.now(UTC)
    return CostEstimate(
        platform, query.strip(), matched, expected, days,
        cap=await queries.ledger_cap(workspace_id, platform, rule),
        used=await queries.ledger_used(workspace_id, platform, rule, now),
    )  # fmt: skip


async def check_x_estimate(workspace_id: int, query: str) -> None:
    """A keyword column on X is made only when its estimated reads fit the budget left."""
    estimate = await estimate_cost(workspace_id, "x", query)
    if estimate.fits:
        return
    values = {
        "e": estimate.expected_units,
        "d": estimate.window_days,
        "r": estimate.remaining,
        "c": estimate.cap,
    }
    message = _(
        "On X this query would read about %(e)s posts per %(d)s days, but %(r)s of the"
        " budget's %(c)s are left. Narrow the query, leave X out, or raise the X budget."
    )
    raise SpecInvalid({"spec.platforms": message % values})


async def _lock_columns(tx: db.Tx, workspace_id: int) -> None:
    """Serialise changes to a workspace's column list (positions, seeding, imports)."""
    await tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('stream_columns'), $1::int)", workspace_id
    )


def _spec_json(form: ColumnForm, unsupported: Sequence[Unsupported]) -> str:
    spec = dict(form.spec)
    if form.type in (ColumnType.KEYWORD, ColumnType.SAVED_SEARCH):
        spec["unsupported_platforms"] = [u.to_json() for u in unsupported]
    return json.dumps(spec)


async def _plan(
    workspace_id: int, form: ColumnForm, *, refuse_over_budget: bool = True
) -> tuple[list[_Plan], list[Unsupported]]:
    """The sources `form` needs (no rows yet) and the platforms that cannot serve it.
    A person saving a column is refused when X's estimate does not fit (422, they can narrow
    the query); a column re-resolved after a settings change lists X as unsupported instead."""
    if form.type == ColumnType.PLATFORM_FEED:
        return await _plan_feed(workspace_id, form), []
    if form.type == ColumnType.ACCOUNT_LIST:
        return await _plan_accounts(workspace_id, form), []
    return await _plan_keyword(workspace_id, form, refuse_over_budget)


async def _plan_feed(workspace_id: int, form: ColumnForm) -> list[_Plan]:
    connection = await queries.connection(workspace_id, form.spec["connection_id"])
    if connection is None:
        raise SpecInvalid(
            {"spec.connection_id": _("Choose one of the workspace's connected accounts.")}
        )
    p = platforms.PLATFORMS.get(connection.provider)
    plans = []
    for kind in form.spec["kinds"]:
        state, error = SourceState.PENDING, ""
        if p is None or SourceKind(kind) not in p.kinds:
            state, error = (
                SourceState.UNSUPPORTED,
                N_("This platform has no %(k)s timeline.") % {"k": kind},
            )
        elif provider_for(connection.provider) is None:
            state, error = (
                SourceState.UNSUPPORTED,
                N_("This server cannot read %(p)s yet.") % {"p": p.label},
            )
        plans.append(
            _Plan(connection.provider, SourceKind(kind), connection.id,
                  label=connection.handle, state=state, last_error=error)
        )  # fmt: skip
    return plans


async def _plan_keyword(
    workspace_id: int, form: ColumnForm, refuse_over_budget: bool
) -> tuple[list[_Plan], list[Unsupported]]:
    plans: list[_Plan] = []
    unsupported: list[Unsupported] = []
    for name in form.spec["platforms"]:
        enabled = await _ledger_enabled(workspace_id, name)
        with i18n.speaking(i18n.DEFAULT_LANGUAGE):  # the reason is stored: English
            adapted = adapt_query(name, form.spec["query"], ledger_enabled=enabled)
        if isinstance(adapted, Unsupported):
            unsupported.append(adapted)
        elif provider_for(name) is None or SourceKind.SEARCH not in provider_kinds(name):
            label = platforms.PLATFORMS[name].label
            unsupported.append(
                Unsupported(name, N_("This server cannot search %(p)s yet.") % {"p": label})
            )
        elif platforms.PLATFORMS[name].instance_based:
            hosts = form.spec.get("instances") or await _connected_instances(workspace_id, name)
            if not hosts:
                unsupported.append(Unsupported(name, N_(
                    "Mastodon has no global search: name the instances to search,"
                    " e.g. mastodon.social."
                )))  # fmt: skip
            for host in hosts:
                query = platforms.instance_query(adapted, host)
                plans.append(
                    _Plan(name, SourceKind.SEARCH, None, query=query, label=f"#{adapted} · {host}")
                )
        else:
            refusal = (
                await _x_refusal(workspace_id, adapted, refuse_over_budget) if name == "x" else ""
            )
            if refusal:
                unsupported.append(Unsupported(name, refusal, in_settings=True))
                continue
            plans.append(_Plan(name, SourceKind.SEARCH, None, query=adapted, label=adapted))
    return plans, unsupported


async def _x_refusal(workspace_id: int, query: str, refuse: bool) -> str:
    """Why X cannot join a keyword column, "" when its estimate fits. A person saving the
    column is refused (422, in their language); a re-resolve stores the reason, in English."""
    if refuse:
        await check_x_estimate(workspace_id, query)
        return ""
    with i18n.speaking(i18n.DEFAULT_LANGUAGE):
        try:
            await check_x_estimate(workspace_id, query)
        except StreamsError as refused:
            return refused.message
    return ""


async def _connected_instances(workspace_id: int, name: str) -> list[str]:
    """The instances of the workspace's connections to `name`: where a keyword column that
    names no instance searches."""
    found = await queries.connections(workspace_id)
    return list(dict.fromkeys(c.instance for c in found if c.provider == name and c.instance))


def provider_kinds(name: str) -> frozenset[SourceKind]:
    provider = provider_for(name)
    return provider.kinds if provider is not None else frozenset()


async def _plan_accounts(workspace_id: int, form: ColumnForm) -> list[_Plan]:
    accounts = form.spec["accounts"]
    resolved = await asyncio.gather(
        *(_resolve_account(workspace_id, a["provider"], _followed(a)) for a in accounts)
    )
    return list(resolved)


def _followed(account: dict[str, Any]) -> str:
    """The handle a source follows: a YouTube channel without Shorts is a source of its own."""
    return account["handle"] + ("#no-shorts" if account.get("shorts") is False else "")


async def _resolve_account(workspace_id: int, name: str, handle: str) -> _Plan:
    plan = _Plan(name, SourceKind.AUTHOR, None, actor_ref=f"{name}:{handle}", label=handle)
    provider = provider_for(name)
    if provider is None or SourceKind.AUTHOR not in provider.kinds:
        label = platforms.PLATFORMS[name].label
        return _replace(
            plan,
            SourceState.UNSUPPORTED,
            _("This server cannot follow %(p)s accounts yet.") % {"p": label},
        )
    credential = await workspace_credential(workspace_id, name)
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_S):
            actor = await resolver.resolve(provider, credential, handle)
    except (EgressError, TimeoutError, ProviderError):
        return plan  # not an answer (or no key yet): the first poll resolves it again
    if actor is None:
        return _replace(plan, SourceState.ERROR, handle_not_found(name, handle))
    return _Plan(name, SourceKind.AUTHOR, None, actor_ref=plan.actor_ref,
                 label=actor.display_name or handle)  # fmt: skip


def handle_not_found(name: str, handle: str) -> str:
    label = platforms.PLATFORMS[name].label
    return N_("%(h)s was not found on %(p)s.") % {"h": handle, "p": label}  # stored: English


def _replace(plan: _Plan, state: SourceState, error: str) -> _Plan:
    return _Plan(plan.provider, plan.kind, plan.connection_id, plan.query, plan.actor_ref,
                 plan.label, state, error)  # fmt: skip


async def _link_sources(tx: db.Tx, workspace_id: int, column_id: int, plans: list[_Plan]) -> None:
    """Point the column at exactly `plans`' sources (shared with any column that has them)."""
    before = await _source_ids(tx, workspace_id, [column_id])
    wanted: list[int] = []
    polled: list[int] = []  # existing sources new to this column: their posts come along
    for plan in plans:
        row = await tx.fetchrow(
            """
            INSERT INTO stream_sources (workspace_id, provider, kind, connection_id, query,
              actor_ref, label, state, last_error)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            ON CONFLICT (workspace_id, provider, kind, (coalesce(connection_id, 0)), query, actor_ref)
            DO UPDATE SET
              state = CASE WHEN stream_sources.state = 'unsupported' THEN EXCLUDED.state
                           ELSE stream_sources.state END,
              last_error = CASE WHEN stream_sources.state = 'unsupported' THEN EXCLUDED.last_error
                                ELSE stream_sources.last_error END
            RETURNING id, (xmax = 0) AS created
            """,
            workspace_id, plan.provider, plan.kind.value, plan.connection_id, plan.query,
            plan.actor_ref, plan.label, plan.state.value, plan.last_error,
        )  # fmt: skip
        assert row is not None
        wanted.append(int(row["id"]))
        if row["created"] and plan.state not in (SourceState.UNSUPPORTED,):
            enqueue_after_commit(tx, POLL_TASK, workspace_id, int(row["id"]), job_id=None)
        elif row["id"] not in before:
            polled.append(int(row["id"]))
    await tx.execute(
        "DELETE FROM stream_column_sources WHERE workspace_id = $1 AND column_id = $2"
        " AND NOT (source_id = ANY($3::bigint[]))",
        workspace_id, column_id, wanted,
    )  # fmt: skip
    await tx.execute(
        "INSERT INTO stream_column_sources (workspace_id, column_id, source_id)"
        " SELECT $1, $2, unnest($3::bigint[]) ON CONFLICT DO NOTHING",
        workspace_id, column_id, wanted,
    )  # fmt: skip
    await _link_stored_items(tx, workspace_id, column_id, polled)
    await _refresh_sources(tx, workspace_id, set(before) | set(wanted))


async def _link_stored_items(
    tx: db.Tx, workspace_id: int, column_id: int, source_ids: list[int]
) -> None:
    """A column joining a source that has polled shows what it brought at once, instead of
    "Fetching the first posts..." beside a source that is up to date until its next poll.
    (An item is stored with the source that saw it first; the next poll brings the rest.)"""
    if not source_ids:
        return
    await tx.execute(
        "INSERT INTO feed_item_columns (workspace_id, column_id, item_id, created_at_remote,"
        " dedup_key) SELECT $1, $2, id, created_at_remote, dedup_key FROM feed_items"
        " WHERE workspace_id = $1 AND source_id = ANY($3::bigint[]) ON CONFLICT DO NOTHING",
        workspace_id, column_id, source_ids,
    )  # fmt: skip


async def _source_ids(tx: db.Tx, workspace_id: int, column_ids: list[int]) -> list[int]:
    rows = await tx.fetch(
        "SELECT source_id FROM stream_column_sources WHERE workspace_id = $1"
        " AND column_id = ANY($2::bigint[])",
        workspace_id, column_ids,
    )  # fmt: skip
    return [int(r["source_id"]) for r in rows]


async def _refresh_sources(tx: db.Tx, workspace_id: int, source_ids: Iterable[int]) -> None:
    """Each source polls as often as its most demanding live, unpaused column asks (clamped,
    never below its platform's floor); a source no such column needs stops (`active` false)."""
    ids = sorted(set(source_ids))
    if not ids:
        return
    rows = await tx.fetch(
        """
        SELECT s.id, s.provider, s.kind, c.type, c.refresh_policy
        FROM stream_sources s
        LEFT JOIN stream_column_sources cs ON cs.source_id = s.id
        LEFT JOIN stream_columns c ON c.id = cs.column_id AND c.deleted_at IS NULL
        WHERE s.workspace_id = $1 AND s.id = ANY($2::bigint[])
        """,
        workspace_id, ids,
    )  # fmt: skip
    wanted: dict[int, list[int]] = {i: [] for i in ids}
    floors: dict[int, int] = {}
    for row in rows:
        p = platforms.PLATFORMS.get(row["provider"])
        floors[row["id"]] = floor_ms(p, SourceKind(row["kind"])) if p else platforms.MIN_INTERVAL_MS
        if row["type"] is None:
            continue
        policy = json.loads(row["refresh_policy"])
        if not policy.get("paused"):
            wanted[row["id"]].append(
                clamp_interval(policy.get("interval_ms"), ColumnType(row["type"]))
            )
    intervals = [max(floors[i], min(wanted[i])) if wanted[i] else floors[i] for i in ids]
    active = [bool(wanted[i]) for i in ids]
    await tx.execute(
        """
        UPDATE stream_sources s SET interval_ms = u.interval_ms, active = u.active
        FROM unnest($2::bigint[], $3::int[], $4::bool[]) AS u(id, interval_ms, active)
        WHERE s.workspace_id = $1 AND s.id = u.id
        """,
        workspace_id, ids, intervals, active,
    )  # fmt: skip


async def _compact_positions(tx: db.Tx, workspace_id: int) -> None:
    await tx.execute(
        """
        UPDATE stream_columns c SET position = -1 - r.n FROM (
          SELECT id, row_number() OVER (ORDER BY position) - 1 AS n FROM stream_columns
          WHERE workspace_id = $1 AND deleted_at IS NULL) r
        WHERE c.id = r.id
        """,
        workspace_id,
    )
    await tx.execute(
        "UPDATE stream_columns SET position = -1 - position WHERE workspace_id = $1"
        " AND deleted_at IS NULL",
        workspace_id,
    )


async def _ledger_enabled(workspace_id: int, name: str) -> bool:
    rule = platforms.PLATFORMS[name].ledger
    if rule is None:
        return True
    return await queries.ledger_cap(workspace_id, name, rule) > 0


def _takes_workspace_key(provider: str) -> bool:
    p = platforms.platform(provider)
    return p is not None and p.workspace_key


def _workspace_key(workspace_id: int, provider: str, sealed: bytes | None) -> Credential | None:
    if sealed is None:
        return None
    return Credential(
        secret=unseal(sealed, context=vault_contexts.credential(workspace_id, provider)),
        save=functools.partial(_reseal_credential, workspace_id, provider),
    )


async def _reseal_credential(workspace_id: int, provider: str, secret: str) -> None:
    """A provider's refreshed secret (Bluesky's session tokens) back into the same row."""
    sealed = seal(secret, context=vault_contexts.credential(workspace_id, provider))
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE stream_credentials SET sealed = $3 WHERE workspace_id = $1 AND provider = $2",
            workspace_id, provider, sealed,
        )  # fmt: skip


async def workspace_credential(workspace_id: int, provider: str) -> Credential | None:
    """The workspace's own key for `provider`, unsealed for one call; None: keyless."""
    if not _takes_workspace_key(provider):
        return None  # the platform takes no workspace key: no need to look
    sealed = await queries.sealed_credential(workspace_id, provider)
    return _workspace_key(workspace_id, provider, sealed)


def _flatten(groups: Iterable[Sequence[int] | None]) -> set[int]:
    return {int(i) for group in groups if group for i in group}


def _publish_columns(tx: db.Tx, column_ids: Iterable[int], **data: object) -> None:
    for column_id in sorted(set(column_ids)):
        publish_after_commit(tx, column_topic(column_id), **data)
    publish_after_commit(tx, COLUMNS_TOPIC)


# Polling: claim, ledger, store, finish --------------------------------------------------


@dataclass
class Claim:
    """The lease a poll holds: its `lease_until` is the token every write re-checks."""

    until: datetime


@dataclass(frozen=True)
class LeasedSource:
    claim: Claim
    id: int
    workspace_id: int
    provider: str
    kind: SourceKind
    connection_id: int | None
    query: str
    actor_ref: str
    label: str
    state: SourceState
    cursor: str
    interval_ms: int
    consecutive_failures: int
    polled_before: bool
    # Read with the claim, so a poll re-reads nothing: the columns to tell, and the sealed
    # secret (the connection's, or the workspace's key) with the connection's details.
    column_ids: tuple[int, ...] = ()
    sealed: bytes | None = None
    connection_live: bool = False
    instance: str = ""
    handle: str = ""


# One statement claims up to $1 due sources (the scheduler) or one given source, and reads
# what the poll needs besides: its columns, and its connection or workspace key (sealed).
_CLAIM = """
UPDATE stream_sources s SET lease_until = now() + make_interval(secs => $1)
FROM (SELECT id, workspace_id, connection_id, provider FROM stream_sources
      WHERE {where} AND active AND state NOT IN ('disabled', 'unsupported')
        AND next_poll_at <= now() AND (lease_until IS NULL OR lease_until < now())
      {order} FOR UPDATE SKIP LOCKED) due
LEFT JOIN stream_connections c ON c.workspace_id = due.workspace_id
  AND c.id = due.connection_id AND c.deleted_at IS NULL
WHERE s.id = due.id
RETURNING s.id, s.workspace_id, s.provider, s.kind, s.connection_id, s.query, s.actor_ref,
  s.label, s.state, s.cursor, s.interval_ms, s.consecutive_failures,
  s.last_polled_at IS NOT NULL AS polled_before, s.lease_until,
  ARRAY(SELECT cs.column_id FROM stream_column_sources cs
        WHERE cs.workspace_id = s.workspace_id AND cs.source_id = s.id
        ORDER BY cs.column_id) AS column_ids,
  CASE WHEN s.connection_id IS NOT NULL THEN c.credentials
       WHEN s.provider = ANY($2::text[]) THEN
         (SELECT k.sealed FROM stream_credentials k
          WHERE k.workspace_id = s.workspace_id AND k.provider = s.provider) END AS sealed,
  c.id IS NOT NULL AS connection_live, coalesce(c.instance, '') AS instance,
  coalesce(c.handle, '') AS handle
"""
_CLAIM_ONE = _CLAIM.format(where="workspace_id = $3 AND id = $4", order="")
_CLAIM_DUE = _CLAIM.format(where="true", order="ORDER BY next_poll_at LIMIT $3")


def _keyed_providers() -> list[str]:
    """Providers that take a workspace key (the claim reads it only for these)."""
    return [name for name in platforms.PLATFORMS if _takes_workspace_key(name)]


def _leased(row: asyncpg.Record) -> LeasedSource:
    sealed = row["sealed"]
    return LeasedSource(
        claim=Claim(row["lease_until"]), id=row["id"], workspace_id=row["workspace_id"], provider=row["provider"],
        kind=SourceKind(row["kind"]), connection_id=row["connection_id"], query=row["query"],
        actor_ref=row["actor_ref"], label=row["label"], state=SourceState(row["state"]),
        cursor=row["cursor"], interval_ms=row["interval_ms"],
        consecutive_failures=row["consecutive_failures"], polled_before=row["polled_before"],
        column_ids=tuple(row["column_ids"]), sealed=bytes(sealed) if sealed is not None else None,
        connection_live=row["connection_live"], instance=row["instance"], handle=row["handle"],
    )  # fmt: skip


async def claim_source(workspace_id: int, source_id: int) -> LeasedSource | None:
    """Lease one source if it is due and free; None if not due, or someone else has it.
    One statement: a poll's claim, renewals and steady writes cost a round trip each."""
    rows = await db.fetch_stateless(
        _CLAIM_ONE, LEASE_S, _keyed_providers(), workspace_id, source_id
    )
    return _leased(rows[0]) if rows else None


async def claim_due(limit: int) -> list[LeasedSource]:
    """Lease up to `limit` of the most overdue sources of any workspace; one statement."""
    rows = await db.fetch_stateless(_CLAIM_DUE, LEASE_S, _keyed_providers(), limit)
    return [_leased(row) for row in rows]


async def renew_lease(source: LeasedSource) -> bool:
    """The heartbeat's renewal: True while the lease is still this poll's."""
    rows = await db.fetch_stateless(
        "UPDATE stream_sources SET lease_until = now() + make_interval(secs => $4)"
        " WHERE workspace_id = $1 AND id = $2 AND lease_until = $3 RETURNING lease_until",
        source.workspace_id, source.id, source.claim.until, LEASE_S,
    )  # fmt: skip
    if not rows:
        return False
    source.claim.until = rows[0]["lease_until"]
    return True


class ConnectionGone(Exception):
    """The source's connection was removed."""


def claimed_credential(source: LeasedSource) -> Credential | None:
    """The poll's credential, from what the claim read: the connection's (its token
    unsealed for this call; ConnectionGone once removed), else the workspace's key, else
    None (keyless). VaultError when the sealed value no longer opens."""
    if source.connection_id is None:
        return _workspace_key(source.workspace_id, source.provider, source.sealed)
    if not source.connection_live:
        raise ConnectionGone()
    context = vault_contexts.connection(source.workspace_id, source.connection_id)
    secret = unseal(source.sealed, context=context) if source.sealed else ""
    return Credential(
        secret=secret,
        connection_id=source.connection_id,
        instance=source.instance,
        handle=source.handle,
        save=functools.partial(_reseal_connection, source.workspace_id, source.connection_id),
    )


@dataclass(frozen=True)
class Grant:
    """What a poll may spend: `units` reserved (0: nothing left until `frees_at`)."""

    units: int
    window_start: datetime
    frees_at: datetime  # when more becomes available (the window's end, or a slot freeing)
    state: SourceState = SourceState.BUDGET_PAUSED  # what an empty grant makes the source
    reason: str = ""


async def reserve_ledger(
    workspace_id: int,
    provider: str,
    rule: LedgerRule,
    *,
    wanted: int = 1,
    subject: str = "",
    now: datetime | None = None,
) -> Grant:
    """Reserve up to `wanted` units of the provider's window (at least `rule.min_units`, never
    past the cap), or none. Rolling ledgers (Instagram) count distinct subjects instead."""
    now = now or datetime.now(UTC)
    if rule.rolling:
        return await _reserve_rolling(workspace_id, provider, rule, subject, now)
    start = window_start(now, rule.window, rule.zone)
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            """
            INSERT INTO provider_budget_ledger (workspace_id, provider, bucket, window_start, units_cap)
            VALUES ($1, $2, $3, $4, coalesce((SELECT units_cap FROM provider_budget_ledger
                     WHERE workspace_id = $1 AND provider = $2 AND bucket = $3
                     ORDER BY window_start DESC LIMIT 1), $5))
            ON CONFLICT DO NOTHING
            """,
            workspace_id, provider, rule.bucket, start, rule.default_cap,
        )  # fmt: skip
        granted = await tx.fetchval(
            """
            UPDATE provider_budget_ledger l SET units_used = l.units_used + g.n
            FROM (SELECT least($5::numeric, units_cap - units_used) AS n FROM provider_budget_ledger
                  WHERE workspace_id = $1 AND provider = $2 AND bucket = $3 AND window_start = $4
                  FOR UPDATE) g
            WHERE l.workspace_id = $1 AND l.provider = $2 AND l.bucket = $3 AND l.window_start = $4
              AND g.n >= $6
            RETURNING g.n
            """,
            workspace_id, provider, rule.bucket, start, wanted, rule.min_units,
        )  # fmt: skip
        if granted is not None:
            publish_after_commit(tx, BUDGETS_TOPIC)
    end = window_end(start, rule.window, rule.zone)
    if granted is None:
        return Grant(0, start, end, reason=_("The budget for this period is spent."))
    return Grant(int(granted), start, end)


async def _reserve_rolling(
    workspace_id: int, provider: str, rule: LedgerRule, subject: str, now: datetime
) -> Grant:
    """A subject used within the window is free; a new one takes a slot if one is free."""
    cap = await queries.ledger_cap(workspace_id, provider, rule)
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('provider_ledger_subjects'), $1::int)",
            workspace_id,
        )
        rows = await tx.fetch(
            "SELECT subject, first_used_at FROM provider_ledger_subjects WHERE workspace_id = $1"
            " AND provider = $2 AND bucket = $3 AND first_used_at > $4",
            workspace_id, provider, rule.bucket, now - rule.window,
        )  # fmt: skip
        uses = {r["subject"]: r["first_used_at"] for r in rows}
        decision = platforms.rolling_slot(uses, subject, cap=cap, window=rule.window, now=now)
        if decision.new_use:
            await tx.execute(
                """
                INSERT INTO provider_ledger_subjects (workspace_id, provider, bucket, subject, first_used_at)
                VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (workspace_id, provider, bucket, subject)
                DO UPDATE SET first_used_at = EXCLUDED.first_used_at
                """,
                workspace_id, provider, rule.bucket, subject, now,
            )  # fmt: skip
            publish_after_commit(tx, BUDGETS_TOPIC)
    if decision.allowed:
        return Grant(1, now, decision.frees_at)
    label = platforms.PLATFORMS[provider].label
    # Stored in English with the moment in UTC; pages and the API show it in each reader's
    # language and time zone (i18n.translate_stored).
    reason = _(
        "%(p)s allows %(n)s different %(u)s per %(d)s days; the next one frees up on %(t)s."
    ) % {
        "p": label, "n": format_number(cap), "u": _(rule.unit_label), "d": rule.window.days,
        "t": stored_moment(decision.frees_at),
    }  # fmt: skip
    return Grant(0, now, decision.frees_at, SourceState.RATE_LIMITED, reason)


async def settle_ledger(
    workspace_id: int, provider: str, rule: LedgerRule, grant: Grant, used: int
) -> None:
    """Give back what a call reserved but did not use (posts not read), in its own window."""
    refund = grant.units - max(0, used)
    if refund == 0 or rule.rolling:
        return
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE provider_budget_ledger SET units_used = greatest(units_used - $5, 0)"
            " WHERE workspace_id = $1 AND provider = $2 AND bucket = $3 AND window_start = $4",
            workspace_id, provider, rule.bucket, grant.window_start, refund,
        )  # fmt: skip
        publish_after_commit(tx, BUDGETS_TOPIC)


async def exhaust_ledger(workspace_id: int, provider: str, *, now: datetime | None = None) -> None:
    """The platform says the quota is spent: the window's ledger is too, so the provider's other
    sources in the workspace pause without making a request."""
    rule = platforms.PLATFORMS[provider].ledger
    if rule is None or rule.rolling:
        return
    start = window_start(now or datetime.now(UTC), rule.window, rule.zone)
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE provider_budget_ledger SET units_used = greatest(units_used, units_cap)"
            " WHERE workspace_id = $1 AND provider = $2 AND bucket = $3 AND window_start = $4",
            workspace_id, provider, rule.bucket, start,
        )  # fmt: skip
        publish_after_commit(tx, BUDGETS_TOPIC)


async def set_ledger_cap(workspace_id: int, provider: str, cap: int) -> None:
    """Raise (or lower) the provider's cap for this and later windows; paused sources resume."""
    p = platforms.platform(provider)
    if p is None or p.ledger is None:
        raise StreamsError(_("This platform has no budget to set."), field="provider")
    if cap < 0:
        raise StreamsError(_("The cap cannot be negative."), field="cap")
    if cap > MAX_CAP:
        raise StreamsError(_("The cap is too large."), field="cap")
    rule = p.ledger
    start = window_start(datetime.now(UTC), rule.window, rule.zone)
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            """
            INSERT INTO provider_budget_ledger (workspace_id, provider, bucket, window_start, units_cap)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (workspace_id, provider, bucket, window_start)
            DO UPDATE SET units_cap = EXCLUDED.units_cap
            """,
            workspace_id, provider, rule.bucket, start, cap,
        )  # fmt: skip
        columns = await tx.fetch(
            """
            UPDATE stream_sources SET next_poll_at = now() WHERE workspace_id = $1
              AND provider = $2 AND state = 'budget_paused'
            RETURNING (SELECT array_agg(column_id) FROM stream_column_sources
                       WHERE source_id = stream_sources.id) AS columns
            """,
            workspace_id, provider,
        )  # fmt: skip
        _publish_columns(tx, _flatten(r["columns"] for r in columns))
        publish_after_commit(tx, PLATFORM_SETTINGS_TOPIC)
    await reresolve_columns(workspace_id, provider)


async def store_page(source: LeasedSource, page: Page, outcome: Outcome) -> dict[int, int]:
    """Upsert the page's items (a second sighting refreshes metrics and fetched time, and fills
    in an unknown language), link them to every live column of the source, mark the source;
    {column id: new items}."""
    now = datetime.now(UTC)
    ws = source.workspace_id
    rows: dict[str, dict[str, Any]] = {}
    for item in page.items:
        key = dedup_key(ws, source.provider, item.canonical_id)
        rows[key] = _item_row(key, item)
    cursor = page.cursor or source.cursor
    if not rows and outcome.state == source.state:
        # A steady poll with nothing new (a 304, say): the mark alone, nobody to tell.
        await _mark(source, outcome, error="", cursor=cursor, polled=True)
        return {}
    # One statement, so one implicit transaction and one round trip: mark the source (only
    # under our lease), then upsert and link. System work: every clause names the workspace.
    [row] = await db.fetch_stateless(
        _STORE,
        *_mark_args(source, outcome, error="", cursor=cursor, polled=True),
        _rows_encoder.encode(list(rows.values())).decode(), source.provider, now,
    )  # fmt: skip
    if not row["marked"]:
        raise leases.LeaseLost(f"stream source {source.id}")
    new = dict(Counter(row["column_ids"]))
    await _tell(source, outcome, new)
    return new


# The items go to `_STORE` as one JSON array (`jsonb_to_recordset`): one argument encoded
# at once costs this process a fraction of thirteen arrays encoded element by element.
_rows_encoder = msgspec.json.Encoder()


def _item_row(key: str, item: RemoteItem) -> dict[str, Any]:
    """One item as `_STORE`'s `incoming` reads it; the content AST is already JSON."""
    return {
        "dedup_key": key, "remote_id": item.remote_id[:500],
        "author_handle": item.author_handle[:300], "author_ref": item.author_ref[:500],
        "url": item.url[:2000], "created_at_remote": _utc(item.created_at),
        "content": msgspec.Raw(to_json(item.content)), "plain_text": item.plain_text[:20_000],
        "media": [_media_json(m) for m in item.media],
        "metrics": {k: v for k, v in item.metrics.items() if _finite(v)},
        "expires_at": _utc(item.expires_at) if item.expires_at else None,
        "reposted_by": item.reposted_by[:300], "lang": language_tag(item.lang),
    }  # fmt: skip


def _utc(moment: datetime) -> datetime:
    """As asyncpg sends a timestamptz (a naive time counts as the process's local time)."""
    return moment.astimezone(UTC)


def _media_json(media: MediaRef) -> dict[str, Any]:
    found: dict[str, Any] = {"kind": media.kind, "url": media.url, "alt": media.alt[:500]}
    if media.sensitive:
        found["sensitive"] = True
    return found


def _finite(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value == value
        and abs(value) != float("inf")
    )


async def finish(source: LeasedSource, outcome: Outcome, error: str) -> None:
    """Record a poll that brought nothing to store: failure, rate limit, pause, not found."""
    await _mark(source, outcome, error=error[:500], cursor=source.cursor, polled=False)
    await _tell(source, outcome, {})


async def disable(source: LeasedSource, error: str) -> None:
    await _stop(source, SourceState.DISABLED, error)


async def mark_unsupported(source: LeasedSource, error: str) -> None:
    await _stop(source, SourceState.UNSUPPORTED, error)


async def _stop(source: LeasedSource, state: SourceState, error: str) -> None:
    """The source stops polling (`disabled` or `unsupported`), saying why."""
    async with db.workspace_tx(source.workspace_id) as tx:
        await tx.execute(
            "UPDATE stream_sources SET state = $3, last_error = $4, lease_until = NULL"
            " WHERE workspace_id = $1 AND id = $2",
            source.workspace_id, source.id, state.value, error,
        )  # fmt: skip
        _publish_columns(tx, source.column_ids)


# A connection removed meanwhile keeps its source disabled, and a poll whose lease was
# lost (another worker has the source now) writes nothing: re-checked while writing.
_MARK = """
UPDATE stream_sources SET
  state = CASE WHEN state = 'disabled' THEN state ELSE $3 END,
  next_poll_at = now() + make_interval(secs => $4),
  consecutive_failures = $5, last_error = $6, cursor = $7, lease_until = NULL,
  last_polled_at = CASE WHEN $8 THEN now() ELSE last_polled_at END
WHERE workspace_id = $1 AND id = $2 AND lease_until = $9
RETURNING id
"""

# A poll that brought items: `_MARK` ($1..$9), then the items ($10, a JSON array of
# `_item_row`s) upserted and linked to every live column of the source, only if the mark
# was done. A second sighting refreshes metrics and fetched time, and fills in a language
# still unknown (an item first seen through a feed that did not say, later through the API
# that does).
_STORE = f"""
WITH marked AS ({_MARK}), incoming AS (
  SELECT * FROM jsonb_to_recordset($10::jsonb)
    AS t(dedup_key text, remote_id text, author_handle text, author_ref text, url text,
         created_at_remote timestamptz, content jsonb, plain_text text, media jsonb,
         metrics jsonb, expires_at timestamptz, reposted_by text, lang text)
), upserted AS (
  INSERT INTO feed_items (workspace_id, dedup_key, provider, remote_id, author_handle,
    author_ref, url, created_at_remote, fetched_at, content, plain_text, media,
    metrics, source_id, expires_at, reposted_by, lang)
  SELECT $1, dedup_key, $11, remote_id, author_handle, author_ref, url,
    created_at_remote, $12, content, plain_text, media, metrics,
    $2, expires_at, reposted_by, lang
  FROM incoming WHERE EXISTS (SELECT FROM marked)
  ON CONFLICT (workspace_id, dedup_key) DO UPDATE
    SET metrics = EXCLUDED.metrics, fetched_at = EXCLUDED.fetched_at,
      lang = CASE WHEN feed_items.lang = '' THEN EXCLUDED.lang ELSE feed_items.lang END
  RETURNING id, created_at_remote, dedup_key
), linked AS (
  INSERT INTO feed_item_columns (workspace_id, column_id, item_id, created_at_remote,
    dedup_key)
  SELECT $1, c.id, u.id, u.created_at_remote, u.dedup_key
  FROM upserted u
  CROSS JOIN (SELECT c.id FROM stream_column_sources cs
              JOIN stream_columns c ON c.workspace_id = $1 AND c.id = cs.column_id
                AND c.deleted_at IS NULL
              WHERE cs.workspace_id = $1 AND cs.source_id = $2) c
  ON CONFLICT DO NOTHING
  RETURNING column_id
)
SELECT EXISTS (SELECT FROM marked) AS marked, ARRAY(SELECT column_id FROM linked) AS column_ids
"""


def _mark_args(
    source: LeasedSource, outcome: Outcome, *, error: str, cursor: str, polled: bool
) -> tuple[Any, ...]:
    """`_MARK`'s parameters $1..$9."""
    return (
        source.workspace_id, source.id, outcome.state.value, outcome.delay_s, outcome.failures,
        error, cursor, polled, source.claim.until,
    )  # fmt: skip


async def _mark(
    source: LeasedSource, outcome: Outcome, *, error: str, cursor: str, polled: bool
) -> None:
    """Record the poll on the source: one statement, committed on its own."""
    args = _mark_args(source, outcome, error=error, cursor=cursor, polled=polled)
    if not await db.fetch_stateless(_MARK, *args):
        raise leases.LeaseLost(f"stream source {source.id}")


async def _tell(source: LeasedSource, outcome: Outcome, new: dict[int, int]) -> None:
    """Once the poll is written, tell each column of the source what changed: its new items,
    or its state (then the column list too). A steady poll with nothing new tells nobody."""
    changed_state = outcome.state != source.state
    columns = source.column_ids if changed_state else sorted(new)
    notices: list[tuple[str, dict[str, object]]] = [
        (column_topic(column_id), {"new": new.get(column_id, 0)})
        for column_id in columns
        if new.get(column_id) or changed_state
    ]
    if changed_state:
        notices.append((COLUMNS_TOPIC, {}))
    await publish_committed(source.workspace_id, notices)


# Manual refresh and retention ------------------------------------------------------------


async def request_refresh(workspace_id: int, column_id: int) -> Refresh:
    """Poll the column's sources as soon as their cooldowns and budgets allow; never sooner.

    A source polled less than its platform's floor ago, rate-limited or budget-paused keeps
    its time. Returns the earliest next poll among the column's sources (None: no source)
    and their latest poll, so the person who asked can be told which it was."""
    async with db.workspace_tx(workspace_id) as tx:
        found = await tx.fetchval(
            "SELECT 1 FROM stream_columns WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
            workspace_id, column_id,
        )  # fmt: skip
        if found is None:
            raise NotFound(_("There is no such column."))
        rows = await tx.fetch(
            """
            SELECT s.id, s.provider, s.kind, s.state, s.next_poll_at, s.last_polled_at
            FROM stream_sources s JOIN stream_column_sources cs ON cs.source_id = s.id
            WHERE cs.workspace_id = $1 AND cs.column_id = $2
              AND s.state NOT IN ('disabled', 'unsupported')
            FOR UPDATE OF s
            """,
            workspace_id, column_id,
        )  # fmt: skip
        now = datetime.now(UTC)
        times: list[datetime] = []
        for row in rows:
            when = _refresh_time(row, now)
            times.append(when)
            if when < row["next_poll_at"]:
                await tx.execute(
                    "UPDATE stream_sources SET next_poll_at = $3 WHERE workspace_id = $1 AND id = $2",
                    workspace_id, row["id"], when,
                )  # fmt: skip
            delay = max(0.0, (when - now).total_seconds())
            enqueue_after_commit(tx, POLL_TASK, workspace_id, row["id"], defer_by=delay or None)
    polled = [row["last_polled_at"] for row in rows if row["last_polled_at"]]
    return Refresh(min(times) if times else None, max(polled) if polled else None)


def _refresh_time(row: asyncpg.Record, now: datetime) -> datetime:
    """The earliest moment a manual refresh may poll this source."""
    if row["state"] in (SourceState.RATE_LIMITED.value, SourceState.BUDGET_PAUSED.value):
        return max(row["next_poll_at"], now)
    p = platforms.PLATFORMS.get(row["provider"])
    floor = timedelta(
        milliseconds=floor_ms(p, SourceKind(row["kind"])) if p else platforms.MIN_INTERVAL_MS
    )
    earliest = row["last_polled_at"] + floor if row["last_polled_at"] else now
    return min(row["next_poll_at"], max(earliest, now))


async def sweep_items(*, batch: int = 5_000) -> int:
    """Daily: delete items past their expiry (YouTube's 30-day rule) or unseen for 30 days."""
    deleted = 0
    while True:
        async with db.transaction() as tx:
            count = await tx.fetchval(
                """
                WITH gone AS (
                  DELETE FROM feed_items WHERE id IN (
                    SELECT id FROM feed_items
                    WHERE expires_at < now() OR fetched_at < now() - make_interval(days => $1)
                    LIMIT $2)
                  RETURNING 1)
                SELECT count(*) FROM gone
                """,
                RETENTION.days, batch,
            )  # fmt: skip
        deleted += int(count)
        if count < batch:
            return deleted
