"""The wall's pages: the wall and its live stream, older pages, item and column actions,
the column editor and the search over stored items.

Every action is a plain form post that redirects back to the wall (it works
without JavaScript); from the page, Datastar sends the same form and the live
stream shows the outcome. Only the editor answers Datastar with patches: the
drawer, its hints, or its fields with their messages.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from datastar_py.consts import ElementPatchMode
from datastar_py.litestar import DatastarResponse
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE
from litestar import Controller, Request, Response, get, post
from litestar.params import FromPath
from litestar.response import Redirect, Template
from litestar.template.base import csrf_token

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.core.i18n import _
from app.live.streams import live
from app.safe_content import one_line
from app.streams import queries as streams
from app.streams import services as columns
from app.streams.types import ColumnType, NotFound, SpecInvalid, StreamsError
from app.wall import editor, queries, services, widths
from app.wall.labels import TEMPLATE_HELPERS, fetch_times_told, missing_told, refresh_told
from app.wall.live import (
    WALL,
    WallView,
    closed_editor,
    load_wall,
    older_id,
    render_item,
    wall_context,
)
from app.wall.platforms import PlatformsSettings
from app.wall.types import PAGE_SIZE, Wall, WallColumn
from app.web.form_pages import FORM_PAGE
from app.web.pages import is_datastar, page
from app.web.templating import render_block

EDITOR = "wall/editor.html"
SEARCH = "wall/search.html"
MANAGE = [allows(Permission.COLUMNS_MANAGE)]


async def _form(request: Request) -> Any:
    return await request.form()


def _back(request: Request, message: str = "", status: int = 400) -> Response[Any]:
    """After an action: Datastar gets the message (or nothing), a plain form the wall again."""
    if is_datastar(request):
        return DatastarResponse(_notice(request, message))
    if message:
        return Response(message, status_code=status, media_type="text/plain")
    return Redirect("/wall", status_code=303)


def _notice(request: Request, message: str, *, told: bool = False) -> DatastarEvent:
    """The wall's notice line as a patch: a refusal, or (`told`) what an action did."""
    return SSE.patch_elements(render_block(WALL, "notice", request, message=message, told=told))


def _streams_error(request: Request, error: Exception) -> Response[Any]:
    assert isinstance(error, StreamsError)
    return _back(request, error.message, error.status)


async def _column(workspace_id: int, column_id: int) -> WallColumn:
    view = await streams.column_view(workspace_id, column_id)
    if view is None:
        raise NotFound(_("There is no such column."))
    page_ = await streams.column_items(workspace_id, column_id, None, PAGE_SIZE)
    return WallColumn(view, page_)


class WallController(Controller):
    path = "/wall"
    guards = [allows(Permission.DRAFT_VIEW)]
    exception_handlers = {StreamsError: _streams_error}

    @get("/")
    async def wall(self, request: Request) -> Template:
        viewer, workspace_id = member_of(request)
        await columns.seed_platform_columns(workspace_id)
        wall = await load_wall(workspace_id)
        mine = await queries.widths(workspace_id, viewer.user_id)
        return await page(
            request, WALL, section="wall", widths_version=widths.version(mine),
            **wall_context(wall, viewer),
        )  # fmt: skip

    @get("/widths.css")
    async def widths_css(self, request: Request) -> Response[str]:
        """This member's column widths (app.wall.widths); the page's link names its version."""
        viewer, workspace_id = member_of(request)
        css = widths.stylesheet(await queries.widths(workspace_id, viewer.user_id))
        headers = {"cache-control": "private, no-cache"}
        return Response(css, media_type="text/css", headers=headers)

    @get("/stream")
    async def stream(self, request: Request) -> DatastarResponse:
        _viewer, workspace_id = member_of(request)
        return live(request, lambda viewer: WallView(viewer, workspace_id))

    @get("/columns/{column_id:int}/older")
    async def older(self, request: Request, column_id: FromPath[int]) -> DatastarResponse:
        """The next page of one column, appended to this reader's older pages below the first
        page (which the stream's whole state leaves alone), with their own "Load older"."""
        viewer, workspace_id = member_of(request)
        c = await _column(workspace_id, column_id)
        cursor = request.query_params.get("cursor") or None
        older = await streams.column_items(workspace_id, column_id, cursor, PAGE_SIZE)
        c = WallColumn(c.column, older)
        context = wall_context(Wall((c,)), viewer)
        context["saves"] = await queries.saves(workspace_id, [i.id for i in older.items])
        rows = "".join(render_item(context, c, i) for i in older.items)
        more = render_block(
            WALL, "older_more", request, **context, c=c, older_cursor=older.next_cursor
        )
        # Replaced, not morphed: Datastar leaves what is inside `data-ignore-morph` unmorphed.
        events = [SSE.patch_elements(more, mode=ElementPatchMode.REPLACE)]
        if rows:
            events.insert(
                0, SSE.patch_elements(rows, f"#{older_id(column_id)}", ElementPatchMode.APPEND)
            )
        return DatastarResponse(events)

    @get("/columns/{column_id:int}/reload")
    async def reload(self, request: Request, column_id: FromPath[int]) -> DatastarResponse:
        """Pull to refresh for those who may not fetch: the column again from our database
        (never an upstream poll), and when it fetched and will fetch next."""
        viewer, workspace_id = member_of(request)
        c = await _column(workspace_id, column_id)
        wall = await load_wall(workspace_id)
        html = render_block(WALL, "column", request, **wall_context(wall, viewer), c=c)
        told = fetch_times_told(c.column, viewer.time_zone, datetime.now(UTC))
        return DatastarResponse([SSE.patch_elements(html), _notice(request, told, told=True)])

    # Items ---------------------------------------------------------------------------

    @post("/items/{item_id:int}/save", guards=[allows(Permission.ARTICLES_IMPORT)])
    async def save_item(self, request: Request, item_id: FromPath[int]) -> Response[Any]:
        viewer, workspace_id = member_of(request)
        await services.save_item(workspace_id, item_id, actor_user_id=viewer.user_id)
        return _back(request)

    # Column actions ------------------------------------------------------------------

    @post("/columns/{column_id:int}/width/{width:str}")
    async def width(
        self, request: Request, column_id: FromPath[int], width: FromPath[str]
    ) -> Response[Any]:
        """The member's own width for the column (a viewer sizes their wall too)."""
        viewer, workspace_id = member_of(request)
        await services.set_width(workspace_id, viewer.user_id, column_id, width)
        if is_datastar(request):
            mine = await queries.widths(workspace_id, viewer.user_id)
            link = render_block(WALL, "widths", request, widths_version=widths.version(mine))
            return DatastarResponse(SSE.patch_elements(link))
        return _back(request)

    @post("/columns/{column_id:int}/pause", guards=MANAGE)
    async def pause(self, request: Request, column_id: FromPath[int]) -> Response[Any]:
        _viewer, workspace_id = member_of(request)
        c = await _column(workspace_id, column_id)
        paused = not c.column.refresh_policy.get("paused", False)
        policy = {**c.column.refresh_policy, "paused": paused}
        await columns.update_column(workspace_id, column_id, {"refresh_policy": policy})
        return _back(request)

    @post("/columns/{column_id:int}/delete", guards=MANAGE)
    async def delete(self, request: Request, column_id: FromPath[int]) -> Response[Any]:
        _viewer, workspace_id = member_of(request)
        await columns.delete_column(workspace_id, column_id)
        return _back(request)

    @post("/columns/{column_id:int}/move/{direction:str}", guards=MANAGE)
    async def move(
        self, request: Request, column_id: FromPath[int], direction: FromPath[str]
    ) -> Response[Any]:
        """One place left (earlier) or right (later): the phone's and the keyboard's reorder."""
        _viewer, workspace_id = member_of(request)
        c = await _column(workspace_id, column_id)
        step = -1 if direction == "left" else 1
        await columns.move_column(workspace_id, column_id, max(0, c.column.position + step))
        return _back(request)

    @post("/columns/reorder", guards=MANAGE)
    async def reorder(self, request: Request) -> Response[Any]:
        """The order after a drag: every column id, comma-separated."""
        _viewer, workspace_id = member_of(request)
        form = await _form(request)
        raw = [part.strip() for part in str(form.get("ordered_ids", "")).split(",")]
        ids: list[object] = [int(p) if p.isdigit() else p for p in raw if p]
        await columns.reorder_columns(workspace_id, ids)
        return _back(request)

    @post("/columns/{column_id:int}/refresh", guards=MANAGE)
    async def refresh(self, request: Request, column_id: FromPath[int]) -> Response[Any]:
        """An upstream poll now, or as soon as the platform's minimum interval allows; the
        page is told which (the column's "Updated" line changes only once it has polled)."""
        viewer, workspace_id = member_of(request)
        refresh = await columns.request_refresh(workspace_id, column_id)
        if not is_datastar(request):
            return _back(request)
        view = await streams.column_view(workspace_id, column_id)
        title = view.title if view else ""
        told = refresh_told(refresh, title, viewer.time_zone, datetime.now(UTC))
        return DatastarResponse(_notice(request, told, told=True))

    # The editor ----------------------------------------------------------------------

    async def _editor(
        self,
        request: Request,
        typed: editor.Typed,
        *,
        column_id: int | None = None,
        errors: dict[str, str] | None = None,
        status: int = 200,
    ) -> Response[Any]:
        viewer, workspace_id = member_of(request)
        connections = await streams.connections(workspace_id)
        hints = await editor.workspace_hints(workspace_id, typed.query)
        context = {
            "typed": typed,
            "column_id": column_id,
            "errors": errors or {},
            "types": list(ColumnType),
            "connections": connections,
            "platforms": editor.PLATFORMS,
            "hints": hints,
            "account_rows": [],
            "intervals": editor.INTERVAL_CHOICES,
            "limits": editor.LIMITS,
            "effective": editor.effective_label(typed, hints, connections),
            **wall_context(Wall(()), viewer),
            # The drawer is patched outside a Template response: its form carries the token.
            "csrf_token": lambda: csrf_token({"request": request}),
        }
        if is_datastar(request):
            return DatastarResponse(
                SSE.patch_elements(render_block(EDITOR, "editor", request, **context))
            )
        return await page(
            request, EDITOR, section="wall", status_code=status, standalone=True, **context
        )

    @get("/columns/new", guards=MANAGE)
    async def new(self, request: Request) -> Response[Any]:
        kind = request.query_params.get("type", ColumnType.KEYWORD.value)
        if kind not in {t.value for t in ColumnType}:
            kind = ColumnType.KEYWORD.value
        return await self._editor(request, editor.Typed(type=kind))

    @get("/columns/{column_id:int}/edit", guards=MANAGE)
    async def edit(self, request: Request, column_id: FromPath[int]) -> Response[Any]:
        _viewer, workspace_id = member_of(request)
        c = await _column(workspace_id, column_id)
        return await self._editor(request, editor.Typed.of_column(c.column), column_id=column_id)

    @post("/columns", guards=MANAGE, opt={FORM_PAGE: "/wall/columns/new"})
    async def create(self, request: Request) -> Response[Any]:
        viewer, workspace_id = member_of(request)
        typed = editor.Typed.of(await _form(request))
        try:
            column_id = await columns.create_column(
                workspace_id, editor.column_data(typed), actor_user_id=viewer.user_id
            )
        except SpecInvalid as error:
            return await self._editor(
                request, typed, errors=editor.field_errors(error.errors), status=422
            )
        return _closed(request, column_id, await _missing_told(workspace_id, typed))

    @post(
        "/columns/{column_id:int}", guards=MANAGE, opt={FORM_PAGE: "/wall/columns/{column_id}/edit"}
    )
    async def update(self, request: Request, column_id: FromPath[int]) -> Response[Any]:
        _viewer, workspace_id = member_of(request)
        typed = editor.Typed.of(await _form(request))
        data = editor.column_data(typed)
        data.pop("type")  # a column's type does not change
        try:
            await columns.update_column(workspace_id, column_id, data)
        except SpecInvalid as error:
            return await self._editor(
                request,
                typed,
                column_id=column_id,
                errors=editor.field_errors(error.errors),
                status=422,
            )
        return _closed(request, told=await _missing_told(workspace_id, typed))

    @get("/editor/hints", guards=MANAGE)
    async def hints(self, request: Request) -> DatastarResponse:
        """Per-platform feasibility of the query as typed, and the effective interval."""
        _viewer, workspace_id = member_of(request)
        query = request.query_params.get("query", "")
        hints = await editor.workspace_hints(workspace_id, query)
        html = render_block(EDITOR, "hints", request, hints=hints, **TEMPLATE_HELPERS)
        return DatastarResponse(SSE.patch_elements(html))

    @get("/editor/effective", guards=MANAGE)
    async def effective(self, request: Request) -> DatastarResponse:
        """The "Effective:" line again, for the form as it is now (a platform ticked, another
        interval chosen): each platform's pace."""
        _viewer, workspace_id = member_of(request)
        # The query is a multidict as the form is (its overloads are not the protocol's).
        typed = editor.Typed.of(cast(editor.FormData, request.query_params))
        hints = await editor.workspace_hints(workspace_id, typed.query)
        text = editor.effective_label(typed, hints, await streams.connections(workspace_id))
        return DatastarResponse(
            SSE.patch_elements(render_block(EDITOR, "effective", request, effective=text))
        )

    @get("/editor/accounts", guards=MANAGE)
    async def accounts(self, request: Request) -> DatastarResponse:
        """Each pasted account resolved: ✓, ✗ not found, or not a handle."""
        _viewer, workspace_id = member_of(request)
        text = request.query_params.get("accounts", "")
        rows = await editor.check_accounts(workspace_id, text)
        too_many = len(editor.account_lines(text)) > editor.MAX_ACCOUNTS
        html = render_block(
            EDITOR, "account_rows", request, account_rows=rows, too_many=too_many,
            **TEMPLATE_HELPERS,
        )  # fmt: skip
        return DatastarResponse(SSE.patch_elements(html))

    # Search --------------------------------------------------------------------------

    @get("/search")
    async def search(self, request: Request) -> Template:
        viewer, workspace_id = member_of(request)
        q = one_line(request.query_params.get("q", ""))[:200]
        found = await queries.search(workspace_id, q, None) if q else None
        context = wall_context(Wall(()), viewer)
        if found is not None:
            context["saves"] = await queries.saves(workspace_id, [i.id for i in found.items])
        return await page(request, SEARCH, section="wall", q=q, found=found, **context)

    @post("/search/save", guards=MANAGE)
    async def save_search(self, request: Request) -> Response[Any]:
        """The search as a saved_search column across the platforms that can search."""
        viewer, workspace_id = member_of(request)
        form = await _form(request)
        q = one_line(str(form.get("q", "")))
        data = {
            "type": ColumnType.SAVED_SEARCH.value,
            "title": q[:80],
            "spec": {"query": q, "platforms": list(editor.SEARCH_PLATFORMS)},
        }
        try:
            column_id = await columns.create_column(
                workspace_id, data, actor_user_id=viewer.user_id
            )
        except SpecInvalid as error:
            return _back(request, next(iter(error.errors.values())), 422)
        return Redirect(f"/wall#col-{column_id}", status_code=303)


async def _missing_told(workspace_id: int, typed: editor.Typed) -> str:
    """The accounts of a saved account list that their platforms do not know, said at once."""
    missing = await editor.missing_accounts(workspace_id, typed)
    every = len(missing) == len(editor.account_lines(typed.accounts)[: editor.MAX_ACCOUNTS])
    title = typed.title.strip()
    return missing_told(title, [(r.line, r.platform) for r in missing], every=every)


def _closed(request: Request, created: int | None = None, told: str = "") -> Response[Any]:
    """A saved editor: it closes; the live stream brings the column. A new column is named, so
    the page takes its maker to it (static/js/wall.js): it is added at the end, off screen.
    `told`: what the person should know at once (accounts not found), in the wall's notice."""
    if is_datastar(request):
        closed = SSE.patch_elements(closed_editor(created))
        return DatastarResponse([closed, _notice(request, told)] if told else closed)
    return Redirect(f"/wall#col-{created}" if created else "/wall", status_code=303)


PAGE_HANDLERS = [WallController, PlatformsSettings]
