"""The wall's JSON API under /api/v1/feeds (seed 003 section 1.4, snake_case).

Reading needs `draft.view`; changing columns `streams.columns.manage`;
connections, workspace keys and budgets `settings.manage`. Secrets are never
returned, only `configured: true/false`. Third-party content leaves as the
safe_content AST, media only as signed proxy paths.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, patch, post, put
from litestar.exceptions import SerializationException
from litestar.params import FromPath, QueryParameter
from redis.exceptions import RedisError

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.core import config, i18n, redis
from app.core.i18n import _
from app.media.signing import media_url
from app.streams import queries, services
from app.streams.types import (
    ColumnView,
    ConnectionView,
    ItemPage,
    ItemView,
    NotFound,
    SourceView,
    SpecInvalid,
    StreamsError,
)

Cursor = Annotated[
    str | None, QueryParameter(description="next_cursor of the page before (base64url {at, key})")
]
Limit = Annotated[str | None, QueryParameter(description="Items per page, 1..200 (default 40)")]

# Saved-search imports create columns: a few runs per person per window.
IMPORTS_PER_WINDOW = 5
IMPORT_WINDOW_S = 600


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _error(request: Request, error: Exception) -> Response:
    assert isinstance(error, StreamsError)
    body: dict[str, Any] = {"status_code": error.status, "detail": error.message}
    if isinstance(error, SpecInvalid):
        body["errors"] = error.errors
    elif error.field:
        body["errors"] = {error.field: error.message}
    return Response(body, status_code=error.status)


def source_json(s: SourceView, time_zone: str) -> dict[str, Any]:
    """A source; its last error (stored in English) in the caller's language and time zone."""
    return {
        "id": s.id,
        "provider": s.provider,
        "connection_id": s.connection_id,
        "source_kind": s.kind.value,
        "query": s.query,
        "actor_ref": s.actor_ref,
        "label": s.label,
        "state": s.state.value,
        "last_polled_at": _iso(s.last_polled_at),
        "next_poll_at": _iso(s.next_poll_at),
        "last_error": i18n.translate_stored(s.last_error, time_zone) or None,
        "interval_ms": s.interval_ms,
    }


def column_json(c: ColumnView, time_zone: str) -> dict[str, Any]:
    return {
        "id": c.id,
        "type": c.type.value,
        "title": c.title,
        "position": c.position,
        "spec": c.spec,
        "refresh_policy": c.refresh_policy,
        "effective_interval_ms": c.effective_interval_ms,
        "sources": [source_json(s, time_zone) for s in c.sources],
        "unsupported_platforms": [
            {**u.to_json(), "reason": i18n.translate_stored(u.reason)}
            for u in c.unsupported_platforms
        ],
        "aggregate_state": c.aggregate_state.value,
    }


def item_json(i: ItemView) -> dict[str, Any]:
    return {
        "id": i.id,
        "dedup_key": i.dedup_key,
        "remote_id": i.remote_id,
        "provider": i.provider,
        "connection_id": i.connection_id,
        "source_id": i.source_id,
        "author_handle": i.author_handle,
        "author_ref": i.author_ref or None,
        "url": i.url or None,
        "created_at": _iso(i.created_at),
        "fetched_at": _iso(i.fetched_at),
        "content": i.content,  # the rich-text AST (app.safe_content): the only render source
        "plain_text": i.plain_text,
        "lang": i.lang or None,  # the content's language (BCP 47) as the platform tagged it
        "media": [
            {
                "kind": m.get("kind"),
                "proxy_url": proxy,
                "alt": m.get("alt", ""),
                "sensitive": m.get("sensitive") is True,  # veil it until the reader asks
            }
            for m in i.media
            if (proxy := media_url(str(m.get("url", ""))))
        ],
        "metrics": i.metrics,
        "reposted_by": i.reposted_by or None,
    }


def connection_json(c: ConnectionView) -> dict[str, Any]:
    return {
        "id": c.id,
        "provider": c.provider,
        "instance": c.instance,
        "handle": c.handle,
        "display_name": c.display_name,
        "configured": c.configured,
        "capabilities": list(c.capabilities),
    }


def _page_json(page: ItemPage) -> dict[str, Any]:
    return {"items": [item_json(i) for i in page.items], "next_cursor": page.next_cursor}


async def _body(request: Request) -> Any:
    try:
        return await request.json()
    except (ValueError, UnicodeDecodeError, SerializationException):
        raise StreamsError(_("Send the request body as JSON."), status=400) from None


async def _column_or_404(workspace_id: int, column_id: int) -> ColumnView:
    view = await queries.column_view(workspace_id, column_id)
    if view is None:
        raise NotFound(_("There is no such column."))
    return view


async def _check_import_rate(user_id: int) -> None:
    key = config.active().redis_key("streams", "imports", user_id)
    try:
        async with redis.client().pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, IMPORT_WINDOW_S, nx=True)
            count, _set = await pipe.execute()
    except RedisError:
        return  # the import itself is idempotent; losing the limit for a while is harmless
    if count > IMPORTS_PER_WINDOW:
        raise StreamsError(
            _("Too many imports; try again in a few minutes."), field="terms", status=429
        )


class FeedsApi(Controller):
    path = "/feeds"
    guards = [allows(Permission.DRAFT_VIEW)]
    exception_handlers = {StreamsError: _error}

    @get("/")
    async def merged(
        self, request: Request, cursor: Cursor = None, limit: Limit = None
    ) -> dict[str, Any]:
        """Every connection's home timeline in one list, with the columns beside it."""
        _viewer, workspace_id = member_of(request)
        await services.seed_platform_columns(workspace_id)
        page = await queries.merged_items(workspace_id, cursor, queries.page_limit(limit))
        columns = await queries.list_columns(workspace_id)
        return {
            **_page_json(page),
            "meta": {
                "connections": [
                    connection_json(c) for c in await queries.connections(workspace_id)
                ],
                "columns": [
                    {
                        "id": c.id,
                        "title": c.title,
                        "type": c.type.value,
                        "position": c.position,
                        "aggregate_state": c.aggregate_state.value,
                    }
                    for c in columns
                ],
            },
        }

    @get("/columns")
    async def list_columns(self, request: Request) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        await services.seed_platform_columns(workspace_id)
        columns = await queries.list_columns(workspace_id)
        return {"columns": [column_json(c, viewer.time_zone) for c in columns]}

    @post("/columns", guards=[allows(Permission.COLUMNS_MANAGE)], status_code=201)
    async def create_column(self, request: Request) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        data = await _body(request)
        column_id = await services.create_column(workspace_id, data, actor_user_id=viewer.user_id)
        return column_json(await _column_or_404(workspace_id, column_id), viewer.time_zone)

    @patch("/columns/{column_id:int}", guards=[allows(Permission.COLUMNS_MANAGE)])
    async def update_column(self, request: Request, column_id: FromPath[int]) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        data = await _body(request)
        position = data.pop("position", None) if isinstance(data, dict) else None
        if not isinstance(data, dict) or data:
            await services.update_column(workspace_id, column_id, data)
        if position is not None:
            await services.move_column(workspace_id, column_id, position)
        return column_json(await _column_or_404(workspace_id, column_id), viewer.time_zone)

    @delete("/columns/{column_id:int}", guards=[allows(Permission.COLUMNS_MANAGE)])
    async def delete_column(self, request: Request, column_id: FromPath[int]) -> None:
        _viewer, workspace_id = member_of(request)
        await services.delete_column(workspace_id, column_id)

    @post("/columns/reorder", guards=[allows(Permission.COLUMNS_MANAGE)], status_code=200)
    async def reorder(self, request: Request) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        data = await _body(request)
        ordered = data.get("ordered_ids") if isinstance(data, dict) else None
        await services.reorder_columns(workspace_id, ordered)
        columns = await queries.list_columns(workspace_id)
        return {"columns": [column_json(c, viewer.time_zone) for c in columns]}

    @post(
        "/columns/import-saved-searches",
        guards=[allows(Permission.COLUMNS_MANAGE)],
        status_code=200,
    )
    async def import_saved_searches(self, request: Request) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        data = await _body(request)
        await _check_import_rate(viewer.user_id)
        terms = data.get("terms") if isinstance(data, dict) else None
        made = await services.import_saved_searches(
            workspace_id, terms, actor_user_id=viewer.user_id
        )
        columns = await queries.list_columns(workspace_id)
        return {"columns": [column_json(c, viewer.time_zone) for c in columns if c.id in set(made)]}

    @get("/columns/{column_id:int}/items")
    async def column_items(
        self, request: Request, column_id: FromPath[int], cursor: Cursor = None, limit: Limit = None
    ) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        view = await _column_or_404(workspace_id, column_id)
        page = await queries.column_items(
            workspace_id, column_id, cursor, queries.page_limit(limit)
        )
        polled = [s.last_polled_at for s in view.sources if s.last_polled_at]
        return {
            **_page_json(page),
            "meta": {
                "sources": [source_json(s, viewer.time_zone) for s in view.sources],
                "aggregate_state": view.aggregate_state.value,
                "fetched_at": _iso(max(polled) if polled else None),
            },
        }

    @post(
        "/columns/{column_id:int}/refresh",
        guards=[allows(Permission.COLUMNS_MANAGE)],
        status_code=202,
    )
    async def refresh(self, request: Request, column_id: FromPath[int]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        refresh = await services.request_refresh(workspace_id, column_id)
        return {"column_id": column_id, "effective_next_poll_at": _iso(refresh.next_poll_at)}

    @get("/connections")
    async def connections(self, request: Request) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        found = await queries.connections(workspace_id)
        return {"connections": [connection_json(c) for c in found]}

    @post("/connections", guards=[allows(Permission.SETTINGS_MANAGE)], status_code=201)
    async def connect(self, request: Request) -> dict[str, Any]:
        """Connect an account: {provider, handle, secret (Bluesky: an app password;
        Mastodon: an access token), instance (Mastodon)}. The platform checks it once;
        the secret is sealed, never returned."""
        viewer, workspace_id = member_of(request)
        data = await _body(request)
        connection_id = await services.connect_account(
            workspace_id, data, actor_user_id=viewer.user_id
        )
        found = [c for c in await queries.connections(workspace_id) if c.id == connection_id]
        return connection_json(found[0])

    @delete("/connections/{connection_id:int}", guards=[allows(Permission.SETTINGS_MANAGE)])
    async def delete_connection(self, request: Request, connection_id: FromPath[int]) -> None:
        _viewer, workspace_id = member_of(request)
        await services.delete_connection(workspace_id, connection_id)

    @get("/credentials", guards=[allows(Permission.SETTINGS_MANAGE)])
    async def credentials(self, request: Request) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        return {"credentials": await queries.credentials_status(workspace_id)}

    @put("/credentials/{provider:str}", guards=[allows(Permission.SETTINGS_MANAGE)])
    async def set_credential(self, request: Request, provider: FromPath[str]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        services.require_key_platform(provider)  # before the body: say which platforms there are
        data = await _body(request)
        secret = data.get("secret") if isinstance(data, dict) else None
        label = data.get("label", "") if isinstance(data, dict) else ""
        if not isinstance(secret, str) or not isinstance(label, str):
            raise SpecInvalid({"secret": _("Send the key as a string.")})
        await services.set_credential(workspace_id, provider, secret, label)
        return {"provider": provider, "label": label, "configured": True}

    @delete("/credentials/{provider:str}", guards=[allows(Permission.SETTINGS_MANAGE)])
    async def remove_credential(self, request: Request, provider: FromPath[str]) -> None:
        _viewer, workspace_id = member_of(request)
        await services.remove_credential(workspace_id, provider)

    @get("/platforms")
    async def platforms(self, request: Request) -> dict[str, Any]:
        """Every platform: what this server can read there (or why not), its key, its budget."""
        _viewer, workspace_id = member_of(request)
        return {"platforms": await queries.platforms_status(workspace_id)}

    @post("/estimates", guards=[allows(Permission.COLUMNS_MANAGE)], status_code=200)
    async def estimate(self, request: Request) -> dict[str, Any]:
        """The pre-flight cost of a keyword column on X (asks X for the query's volume)."""
        _viewer, workspace_id = member_of(request)
        data = await _body(request)
        if not isinstance(data, dict):
            raise SpecInvalid({"query": _("Send {platform, query} as a JSON object.")})
        found = await services.estimate_cost(
            workspace_id, str(data.get("platform", "x")), data.get("query")
        )
        return found.to_json()

    @put("/budgets/{provider:str}", guards=[allows(Permission.SETTINGS_MANAGE)])
    async def set_budget(self, request: Request, provider: FromPath[str]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        data = await _body(request)
        cap = data.get("cap") if isinstance(data, dict) else None
        if isinstance(cap, bool) or not isinstance(cap, int):
            raise SpecInvalid({"cap": _("Give the cap as a whole number of units.")})
        await services.set_ledger_cap(workspace_id, provider, cap)
        return {"provider": provider, "cap": cap}


API_HANDLERS = [FeedsApi]
