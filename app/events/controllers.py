"""The Activity page: the workspace's event log, live, filtered by kind, paged."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from datastar_py.litestar import DatastarResponse
from litestar import Controller, Request, get
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import FromPath, QueryParameter
from litestar.response import Template

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.core.i18n import _
from app.events import queries
from app.events.describe import FILTERS, Sentence, UnknownKind, kinds_of, sentence
from app.events.services import ACTIVITY_TOPIC
from app.events.types import EventPage, EventView
from app.live.streams import BUSY_VIEW_SECONDS, follow
from app.web.pages import page
from app.web.templating import render_block

TEMPLATE = "events/activity.html"
PAGE_SIZE = 50


class BadFilter(ValueError):
    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


async def _events(
    workspace_id: int, kind: str, cursor: str, *, page_kinds: bool, limit: int = PAGE_SIZE
) -> EventPage:
    """One page of the log for a filter as typed; BadFilter names what is wrong."""
    try:
        kinds = kinds_of(kind, page=page_kinds)
    except UnknownKind:
        raise BadFilter(_("Choose one of the offered filters."), "kind") from None
    try:
        before_id = queries.parse_cursor(cursor)
    except ValueError:
        raise BadFilter(_("This page link is not valid."), "cursor") from None
    return await queries.page(workspace_id, kinds=kinds, before_id=before_id, limit=limit)


def _region(viewer: Viewer, kind: str, events: EventPage) -> dict[str, Any]:
    """The `events` block's context: the rows in words and the link to older ones."""

    def describe(event: EventView) -> Sentence:
        return sentence(
            event,
            can_manage_members=viewer.can(Permission.MEMBERS_MANAGE),
            viewer_user_id=viewer.user_id,
        )

    older = (
        "/activity?"
        + urlencode({k: v for k, v in {"kind": kind, "cursor": events.next_cursor}.items() if v})
        if events.next_cursor
        else ""
    )
    return {"events": events.items, "describe": describe, "older_url": older, "kind": kind}


class ActivityController(Controller):
    path = "/activity"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def activity(self, request: Request, kind: str = "", cursor: str = "") -> Template:
        viewer, workspace_id = member_of(request)
        status, error = 200, None
        try:
            events = await _events(workspace_id, kind, cursor, page_kinds=True)
        except BadFilter as bad:
            status, error, kind, cursor = 400, bad.message, "", ""
            events = await _events(workspace_id, "", "", page_kinds=True)
        return await page(
            request,
            TEMPLATE,
            section="activity",
            status_code=status,
            error=error,
            filters=FILTERS,
            # An older page stays put; only the newest page follows what happens.
            stream_url=""
            if cursor
            else "/activity/stream" + (f"?{urlencode({'kind': kind})}" if kind else ""),
            **_region(viewer, kind, events),
        )

    @get("/stream")
    async def stream(self, request: Request, kind: str = "") -> DatastarResponse:
        viewer, workspace_id = member_of(request)
        try:
            kinds_of(kind, page=True)
        except UnknownKind:
            kind = ""

        async def render(_changed: set[str]) -> list[str]:
            events = await _events(workspace_id, kind, "", page_kinds=True)
            return [
                render_block(
                    TEMPLATE, "events", request, viewer=viewer, **_region(viewer, kind, events)
                )
            ]

        return follow(request, {ACTIVITY_TOPIC}, render, min_interval=BUSY_VIEW_SECONDS)


class EventsApi(Controller):
    """The workspace's event log over the API."""

    path = "/events"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def list_events(
        self,
        request: Request,
        kind: Annotated[
            str, QueryParameter(description="An event kind, or one of: " + ", ".join(FILTERS))
        ] = "",
        cursor: Annotated[str, QueryParameter(description="next_cursor of the page before")] = "",
        limit: Annotated[
            int, QueryParameter(ge=1, le=100, description="Rows per page")
        ] = PAGE_SIZE,
    ) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        try:
            events = await _events(workspace_id, kind, cursor, page_kinds=False, limit=limit)
        except BadFilter as bad:
            raise ClientException(detail=f"{bad.field}: {bad.message}") from None
        return {"items": [_event_json(e) for e in events.items], "next_cursor": events.next_cursor}

    @get("/{event_id:int}")
    async def get_event(self, request: Request, event_id: FromPath[int]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        event = await queries.one(workspace_id, event_id)
        if event is None:
            raise NotFoundException()
        return _event_json(event)


def _event_json(event: EventView) -> dict[str, Any]:
    return {
        "id": event.id,
        "kind": event.kind,
        "actor": event.actor,
        "subject": event.subject,
        "data": event.data,
        "created_at": event.created_at.isoformat(),
    }


PAGE_HANDLERS = [ActivityController]
API_HANDLERS = [EventsApi]
