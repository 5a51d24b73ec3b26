"""The Activity page: the workspace's event log, live."""

from __future__ import annotations

from typing import Any

from datastar_py.litestar import DatastarResponse
from litestar import Controller, Request, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath, FromQuery
from litestar.response import Template

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.events import queries
from app.events.describe import verb
from app.events.services import ACTIVITY_TOPIC
from app.events.types import EventView
from app.live.streams import follow
from app.web.pages import page
from app.web.templating import render_block

TEMPLATE = "events/activity.html"


class ActivityController(Controller):
    path = "/activity"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def activity(self, request: Request) -> Template:
        _viewer, workspace_id = member_of(request)
        events = await queries.recent(workspace_id)
        return await page(request, TEMPLATE, section="activity", events=events, verb=verb)

    @get("/stream")
    async def stream(self, request: Request) -> DatastarResponse:
        viewer, workspace_id = member_of(request)

        async def render(_changed: set[str]) -> list[str]:
            events = await queries.recent(workspace_id)
            return [
                render_block(TEMPLATE, "events", request, viewer=viewer, events=events, verb=verb)
            ]

        return follow(workspace_id, {ACTIVITY_TOPIC}, render)


class EventsApi(Controller):
    """The workspace's event log over the API."""

    path = "/events"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def list_events(
        self, request: Request, before: FromQuery[int | None] = None
    ) -> list[dict[str, Any]]:
        _viewer, workspace_id = member_of(request)
        return [_event_json(e) for e in await queries.recent(workspace_id, before_id=before)]

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
