"""Topic pages: the list, one topic with its sources and live runs, and their commands.

Reading needs draft.view; every command needs articles.import. Commands are
plain forms that redirect back (they work without JavaScript); a bad form
is shown again with what was typed and a message, with a 4xx status.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from datastar_py.litestar import DatastarResponse
from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Template

from app.accounts.guards import allows, member_of, viewer_of
from app.accounts.roles import Permission
from app.live.streams import follow
from app.topics import queries, services
from app.topics.types import (
    SourceForm,
    TopicError,
    TopicForm,
    TopicNotFound,
    topic_channel,
)
from app.web.pages import Form, page
from app.web.templating import render_block

LIST = "topics/index.html"
SHOW = "topics/show.html"
MANAGE = [allows(Permission.ARTICLES_IMPORT)]
Command = Callable[[int], Awaitable[None]]  # one service call, given the workspace id


def _workspace(request: Request) -> int:
    return member_of(request)[1]


def _can_manage(request: Request) -> bool:
    """Whether the page shows the forms (the handlers check again)."""
    return viewer_of(request).can(Permission.ARTICLES_IMPORT)


class TopicsController(Controller):
    path = "/topics"
    guards = [allows(Permission.DRAFT_VIEW)]

    async def _list(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        context: dict[str, Any] = {
            "topics": await queries.topics(_workspace(request)),
            "can_manage": _can_manage(request),
            "form": TopicForm(),
            "error": None,
            "error_field": None,
        }
        context.update(extra)
        return await page(request, LIST, section="library", status_code=status_code, **context)

    async def _show(
        self, request: Request, topic_id: int, *, status_code: int = 200, **extra: Any
    ) -> Template:
        workspace_id = _workspace(request)
        topic = await queries.topic(workspace_id, topic_id)
        if topic is None:
            raise NotFoundException()
        context: dict[str, Any] = {
            "topic": topic,
            "topic_id": topic.id,
            "can_manage": _can_manage(request),
            "sources": await queries.sources(workspace_id, topic_id),
            "runs": await queries.recent_runs(workspace_id, topic_id),
            "form": TopicForm(topic.name, topic.description),
            "source_form": SourceForm(),
            "error": None,
            "error_field": None,
        }
        context.update(extra)
        return await page(request, SHOW, section="library", status_code=status_code, **context)

    @get("/")
    async def index(self, request: Request) -> Template:
        return await self._list(request)

    @post("/", guards=MANAGE)
    async def create(
        self, request: Request, data: Annotated[TopicForm, Form]
    ) -> Template | Redirect:
        viewer = viewer_of(request)
        try:
            topic_id = await services.create_topic(
                _workspace(request), data, actor_user_id=viewer.user_id
            )
        except TopicError as error:
            return await self._list(
                request, status_code=error.status, form=data, error=error.message,
                error_field=error.field,
            )  # fmt: skip
        return Redirect(f"/topics/{topic_id}", status_code=303)

    @get("/{topic_id:int}")
    async def show(self, request: Request, topic_id: FromPath[int]) -> Template:
        return await self._show(request, topic_id)

    @get("/{topic_id:int}/stream")
    async def stream(self, request: Request, topic_id: FromPath[int]) -> DatastarResponse:
        viewer = viewer_of(request)
        workspace_id = _workspace(request)
        if await queries.topic(workspace_id, topic_id) is None:
            raise NotFoundException()

        async def render(_changed: set[str]) -> list[str]:
            context = {
                "viewer": viewer,
                "topic_id": topic_id,
                "can_manage": viewer.can(Permission.ARTICLES_IMPORT),
                "sources": await queries.sources(workspace_id, topic_id),
                "runs": await queries.recent_runs(workspace_id, topic_id),
            }
            return [render_block(SHOW, block, request, **context) for block in ("sources", "runs")]

        return follow(request, {topic_channel(topic_id)}, render)

    @post("/{topic_id:int}/edit", guards=MANAGE)
    async def edit(
        self, request: Request, topic_id: FromPath[int], data: Annotated[TopicForm, Form]
    ) -> Template | Redirect:
        try:
            await services.rename_topic(
                _workspace(request), topic_id, data, actor_user_id=viewer_of(request).user_id
            )
        except TopicNotFound:
            raise NotFoundException() from None
        except TopicError as error:
            return await self._show(
                request, topic_id, status_code=error.status, form=data, error=error.message,
                error_field=error.field,
            )  # fmt: skip
        return Redirect(f"/topics/{topic_id}", status_code=303)

    @post("/{topic_id:int}/delete", guards=MANAGE)
    async def delete(self, request: Request, topic_id: FromPath[int]) -> Redirect:
        try:
            await services.delete_topic(
                _workspace(request), topic_id, actor_user_id=viewer_of(request).user_id
            )
        except TopicNotFound:
            raise NotFoundException() from None
        return Redirect("/topics", status_code=303)

    @post("/{topic_id:int}/sources", guards=MANAGE)
    async def add_source(
        self, request: Request, topic_id: FromPath[int], data: Annotated[SourceForm, Form]
    ) -> Template | Redirect:
        try:
            await services.add_source(
                _workspace(request), topic_id, data, actor_user_id=viewer_of(request).user_id
            )
        except TopicNotFound:
            raise NotFoundException() from None
        except TopicError as error:
            return await self._show(
                request, topic_id, status_code=error.status, source_form=data,
                error=error.message, error_field=error.field,
            )  # fmt: skip
        return Redirect(f"/topics/{topic_id}", status_code=303)

    async def _source_command(
        self, request: Request, topic_id: int, source_id: int, command: Command
    ) -> Template | Redirect:
        try:
            await command(_workspace(request))
        except TopicNotFound:
            raise NotFoundException() from None
        except TopicError as error:
            return await self._show(
                request, topic_id, status_code=error.status, error=error.message
            )
        return Redirect(f"/topics/{topic_id}#source-{source_id}", status_code=303)

    @post("/{topic_id:int}/sources/{source_id:int}/run", guards=MANAGE)
    async def run_now(
        self, request: Request, topic_id: FromPath[int], source_id: FromPath[int]
    ) -> Template | Redirect:
        return await self._source_command(
            request, topic_id, source_id,
            lambda ws: services.run_source_now(ws, topic_id, source_id),
        )  # fmt: skip

    @post("/{topic_id:int}/sources/{source_id:int}/pause", guards=MANAGE)
    async def pause(
        self, request: Request, topic_id: FromPath[int], source_id: FromPath[int]
    ) -> Template | Redirect:
        return await self._source_command(
            request, topic_id, source_id,
            lambda ws: services.set_source_enabled(ws, topic_id, source_id, False),
        )  # fmt: skip

    @post("/{topic_id:int}/sources/{source_id:int}/resume", guards=MANAGE)
    async def resume(
        self, request: Request, topic_id: FromPath[int], source_id: FromPath[int]
    ) -> Template | Redirect:
        return await self._source_command(
            request, topic_id, source_id,
            lambda ws: services.set_source_enabled(ws, topic_id, source_id, True),
        )  # fmt: skip

    @post("/{topic_id:int}/sources/{source_id:int}/remove", guards=MANAGE)
    async def remove(
        self, request: Request, topic_id: FromPath[int], source_id: FromPath[int]
    ) -> Template | Redirect:
        actor = viewer_of(request).user_id
        return await self._source_command(
            request, topic_id, source_id,
            lambda ws: services.remove_source(ws, topic_id, source_id, actor_user_id=actor),
        )  # fmt: skip


PAGE_HANDLERS = [TopicsController]
