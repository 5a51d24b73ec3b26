"""The import pages, their live streams, and the imports API.

Who may do what is app.imports.access, for the pages, the API and MCP alike:
following a job is reading the library (draft.view); creating one and every
command need articles.import. Commands are plain forms that redirect back,
so they work without JavaScript; a refused list comes back as typed, with
the reason and a 400.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import urlencode

from datastar_py.litestar import DatastarResponse
from datastar_py.sse import ServerSentEventGenerator as SSE
from litestar import Controller, Request, delete, get, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.response import Redirect, Template

from app.accounts.guards import allows, member_of
from app.accounts.types import Viewer
from app.articles.types import ArticleNotFound, Source
from app.core import config
from app.core.i18n import _, translate_stored
from app.imports import access, queries, services
from app.imports.labels import TEMPLATE_HELPERS
from app.imports.parsing import ParsedUrls, parse_urls
from app.imports.types import (
    FETCH_AGAIN,
    IMPORTS_TOPIC,
    ImportJobNotFound,
    ImportRefused,
    ItemsPage,
    JobsPage,
    JobView,
    job_topic,
)
from app.live.streams import BUSY_VIEW_SECONDS, follow
from app.web.pages import Form, is_datastar, page
from app.web.templating import render_block

INDEX = "imports/index.html"
SHOW = "imports/show.html"
FOLLOW = [allows(access.FOLLOW)]
MANAGE = [allows(access.MANAGE, refusal=access.NOT_ALLOWED)]
MAX_TEXT = 2_000_000  # characters of pasted text: ~5,000 long URLs and then some
MAX_PREFILL = 6000  # characters carried to the import page in its address


def _parsed(text: str, *, listed: bool = False) -> ParsedUrls:
    """Pasted text; `listed`: a list a program sent, where a word is an invalid entry."""
    return parse_urls(text[:MAX_TEXT], max_urls=config.active().import_max_urls, listed=listed)


def _page_number(request: Request) -> int:
    raw = request.query_params.get("page", "1")
    return int(raw) if raw.isdigit() and 0 < len(raw) < 7 else 1


async def _job_or_404(workspace_id: int, job_id: int) -> JobView:
    job = await queries.job(workspace_id, job_id)
    if job is None:
        raise NotFoundException()
    return job


def _show_context(viewer: Viewer, job: JobView, items: ItemsPage) -> dict[str, Any]:
    return {
        "viewer": viewer,
        "job": job,
        "item_page": items,
        "can_manage": viewer.can(access.MANAGE),
        "stream_url": f"/articles/import/{job.id}/stream?page={items.page}",
        **TEMPLATE_HELPERS,
    }


Command = Callable[[int, int], Awaitable[object]]  # services.pause(workspace_id, job_id), ...


async def _command(request: Request, job_id: int, command: Command) -> Redirect:
    """Run a job's command and go back to the page of its items the person was on."""
    _viewer, workspace_id = member_of(request)
    try:
        await command(workspace_id, job_id)
    except ImportJobNotFound:
        raise NotFoundException() from None
    number = _page_number(request)
    return Redirect(
        f"/articles/import/{job_id}{f'?page={number}' if number > 1 else ''}", status_code=303
    )


class ImportsController(Controller):
    path = "/articles/import"
    guards = FOLLOW

    async def _index(
        self, request: Request, text: str, *, error: str | None = None, status_code: int = 200
    ) -> Template:
        viewer, workspace_id = member_of(request)
        return await page(
            request,
            INDEX,
            section="import",
            status_code=status_code,
            text=text,
            parsed=_parsed(text),
            error=error,
            jobs=await queries.recent_jobs(workspace_id),
            can_manage=viewer.can(access.MANAGE),
            bookmarklet=bookmarklet(config.active().base_url),
            **TEMPLATE_HELPERS,
        )

    @get("/")
    async def index(self, request: Request) -> Template:
        # `?urls=` prefills the form (the quick-add box sends several lines here).
        return await self._index(request, request.query_params.get("urls", ""))

    @post("/", guards=MANAGE)
    async def create(
        self, request: Request, data: Annotated[dict[str, str], Form]
    ) -> Template | Redirect:
        viewer, workspace_id = member_of(request)
        text = data.get("urls", "")
        try:
            job_id = await services.create_job(
                workspace_id, _parsed(text).valid, actor_user_id=viewer.user_id
            )
        except ImportRefused as error:
            return await self._index(request, text, error=str(error), status_code=400)
        return Redirect(f"/articles/import/{job_id}", status_code=303)

    @post("/check", guards=MANAGE)
    async def check(
        self, request: Request, data: Annotated[dict[str, str], Form]
    ) -> DatastarResponse:
        """The live counter: the same parse_urls the job will use, as the person types."""
        html = render_block(INDEX, "counter", request, parsed=_parsed(data.get("urls", "")))
        return DatastarResponse(SSE.patch_elements(html))

    @get("/stream")
    async def stream(self, request: Request) -> DatastarResponse:
        viewer, workspace_id = member_of(request)

        async def render(_changed: set[str]) -> list[str]:
            jobs = await queries.recent_jobs(workspace_id)
            return [
                render_block(INDEX, "jobs", request, viewer=viewer, jobs=jobs, **TEMPLATE_HELPERS)
            ]

        return follow(request, {IMPORTS_TOPIC}, render, min_interval=BUSY_VIEW_SECONDS)

    @get("/{job_id:int}")
    async def show(self, request: Request, job_id: FromPath[int]) -> Template:
        viewer, workspace_id = member_of(request)
        job = await _job_or_404(workspace_id, job_id)
        items = await queries.items(workspace_id, job_id, _page_number(request))
        return await page(request, SHOW, section="import", **_show_context(viewer, job, items))

    @get("/{job_id:int}/stream")
    async def job_stream(self, request: Request, job_id: FromPath[int]) -> DatastarResponse:
        viewer, workspace_id = member_of(request)
        await _job_or_404(workspace_id, job_id)
        number = _page_number(request)

        async def render(_changed: set[str]) -> list[str]:
            job = await queries.job(workspace_id, job_id)
            if job is None:  # deleted meanwhile
                return []
            items = await queries.items(workspace_id, job_id, number)
            context = _show_context(viewer, job, items)
            return [
                render_block(SHOW, "summary", request, **context),
                render_block(SHOW, "items", request, **context),
            ]

        return follow(request, {job_topic(job_id)}, render, min_interval=BUSY_VIEW_SECONDS)

    @post("/{job_id:int}/pause", guards=MANAGE)
    async def pause(self, request: Request, job_id: FromPath[int]) -> Redirect:
        return await _command(request, job_id, services.pause)

    @post("/{job_id:int}/resume", guards=MANAGE)
    async def resume(self, request: Request, job_id: FromPath[int]) -> Redirect:
        return await _command(request, job_id, services.resume)

    @post("/{job_id:int}/cancel", guards=MANAGE)
    async def cancel(self, request: Request, job_id: FromPath[int]) -> Redirect:
        return await _command(request, job_id, services.cancel)

    @post("/{job_id:int}/retry-failed", guards=MANAGE)
    async def retry_failed(self, request: Request, job_id: FromPath[int]) -> Redirect:
        return await _command(request, job_id, services.retry_failed)

    @post("/{job_id:int}/delete", guards=MANAGE)
    async def delete_job(self, request: Request, job_id: FromPath[int]) -> Redirect:
        await _command(request, job_id, services.delete)
        return Redirect("/articles/import", status_code=303)


# Saving one link: the quick-add box, the bookmarklet, the share target ------------------


async def start_fetch_again(workspace_id: int, article_id: int, *, actor_user_id: int) -> int:
    """The job that fetches a consent-walled article again, for the reader, the API and MCP.

    404 when the library has no such article (the trash neither); 400, saying why, when
    it was saved without a consent wall.
    """
    try:
        return await services.fetch_again(workspace_id, article_id, actor_user_id=actor_user_id)
    except ArticleNotFound:
        raise NotFoundException() from None
    except ImportRefused as refused:
        raise ClientException(detail=str(refused)) from None


SAVE = "imports/save.html"


def _one_link(text: str) -> tuple[ParsedUrls, str | None]:
    """The parsed text and, when it holds exactly one URL, that URL."""
    parsed = _parsed(text)
    return parsed, parsed.valid[0] if len(parsed.valid) == 1 else None


def _import_prefill(text: str) -> str:
    return "/articles/import?" + urlencode({"urls": text[:MAX_PREFILL]})


async def _save_context(workspace_id: int, job_id: int) -> dict[str, Any]:
    job = await queries.job(workspace_id, job_id)
    items = await queries.items(workspace_id, job_id, 1, per_page=1)
    return {
        "job": job,
        "item": items.items[0] if items.items else None,
        "again": job is not None and job.source == FETCH_AGAIN,  # the reader's "Fetch again"
        **TEMPLATE_HELPERS,
    }


class SaveController(Controller):
    """One link saved as a one-item job, from wherever people save links."""

    path = "/save"
    guards = FOLLOW

    @get("/")
    async def form(self, request: Request) -> Template:
        # The bookmarklet sends ?url=; a phone's share sheet may put the link in ?text=.
        query = request.query_params
        text = " ".join(query.get(name, "") for name in ("url", "text")).strip()
        viewer, _workspace_id = member_of(request)
        return await page(
            request,
            SAVE,
            section="library",
            text=_parsed(text).valid[0] if _parsed(text).valid else text,
            error=None,
            job=None,
            can_manage=viewer.can(access.MANAGE),
        )

    @post("/", guards=MANAGE)
    async def save(
        self, request: Request, data: Annotated[dict[str, str], Form]
    ) -> Template | Redirect | DatastarResponse:
        viewer, workspace_id = member_of(request)
        text = data.get("url", "")
        parsed, url = _one_link(text)
        live = is_datastar(request)
        if url is None and len(parsed.valid) > 1:
            if live:  # the quick-add box offers the import page, prefilled
                html = render_block(
                    SAVE, "status", request, job=None, item=None, found=len(parsed.valid),
                    import_url=_import_prefill(text), error=None, **TEMPLATE_HELPERS,
                )  # fmt: skip
                return DatastarResponse(SSE.patch_elements(html))
            return Redirect(_import_prefill(text), status_code=303)
        if url is None:
            error = parsed.problem or _("Paste one web address (http:// or https://).")
            if live:
                html = render_block(
                    SAVE, "status", request, job=None, item=None, found=0, import_url="",
                    error=error, **TEMPLATE_HELPERS,
                )  # fmt: skip
                return DatastarResponse(SSE.patch_elements(html))
            return await page(
                request, SAVE, section="library", status_code=400, text=text, error=error,
                job=None, can_manage=True,
            )  # fmt: skip
        job_id = await services.create_job(
            workspace_id, [url], actor_user_id=viewer.user_id, source=Source.MANUAL
        )
        if live:  # the quick-add box follows the job in place, on this very request
            return _follow_save(request, workspace_id, job_id)
        return Redirect(f"/save/{job_id}", status_code=303)

    @post("/again/{article_id:int}", guards=MANAGE)
    async def fetch_again(self, request: Request, article_id: FromPath[int]) -> Redirect:
        """The reader's "Fetch again" on a consent-walled article: followed like a save."""
        viewer, workspace_id = member_of(request)
        job_id = await start_fetch_again(workspace_id, article_id, actor_user_id=viewer.user_id)
        return Redirect(f"/save/{job_id}", status_code=303)

    @get("/{job_id:int}")
    async def saving(self, request: Request, job_id: FromPath[int]) -> Template:
        _viewer, workspace_id = member_of(request)
        await _job_or_404(workspace_id, job_id)
        return await page(
            request,
            SAVE,
            section="library",
            text="",
            error=None,
            found=0,
            import_url="",
            can_manage=False,
            **await _save_context(workspace_id, job_id),
        )

    @get("/{job_id:int}/stream")
    async def saving_stream(self, request: Request, job_id: FromPath[int]) -> DatastarResponse:
        _viewer, workspace_id = member_of(request)
        await _job_or_404(workspace_id, job_id)
        return _follow_save(request, workspace_id, job_id)


def _follow_save(request: Request, workspace_id: int, job_id: int) -> DatastarResponse:
    async def render(_changed: set[str]) -> list[str]:
        context = await _save_context(workspace_id, job_id)
        return [
            render_block(SAVE, "status", request, found=0, import_url="", error=None, **context)
        ]

    return follow(request, {job_topic(job_id)}, render)


def bookmarklet(base_url: str) -> str:
    """A `javascript:` link that opens /save for the current page in a small window.

    It runs on the other site's page (our CSP does not apply there); what it
    opens is our own page, which saves through an ordinary form post.
    """
    return (
        "javascript:void(window.open('"
        + base_url
        + "/save?url='+encodeURIComponent(location.href),'newsdesk_save',"
        + "'width=420,height=320'))"
    )


# The API ------------------------------------------------------------------------------


def job_json(job: JobView) -> dict[str, Any]:
    c = job.counters
    return {
        "id": job.id,
        "status": job.status.value,
        # As the pages say it: the status, or "done-with-errors" / "failed" for a done job
        # whose addresses failed (some, or all of them).
        "outcome": job.outcome,
        "source": job.source,
        "total_urls": c.total,
        "finished": c.finished,
        "saved": c.saved,
        "duplicates": c.duplicates,
        "errors": c.errors,
        "warnings": c.warnings,
        "cancelled": c.cancelled,
        "in_flight": job.in_flight,
        "waiting_for_host": job.waiting_for or None,
        "eta_seconds": job.eta_seconds,
        # Every open item waits for its next attempt; the first comes back then.
        "retry_at": job.retry_at.isoformat() if job.retry_at else None,
        "created_at": job.created_at.isoformat(),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def items_json(items: ItemsPage) -> dict[str, Any]:
    return {
        "page": items.page,
        "pages": items.pages,
        "per_page": items.per_page,
        "items": [
            {
                "index": i.idx,
                "url": i.url,
                "state": i.state.value,
                "article_id": i.article_id,
                "title": i.title,
                "warning": i.warning or None,  # a code ("consent-wall"), as the pages label it
                "error": translate_stored(i.error) or None,  # stored English, read in yours
                "waiting_for_host": i.waiting_for or None,
                "attempts": i.attempts,
            }
            for i in items.items
        ],
    }


def jobs_json(jobs: JobsPage) -> dict[str, Any]:
    """The list of jobs, paged as a job's items are."""
    return {
        "page": jobs.page,
        "pages": jobs.pages,
        "per_page": jobs.per_page,
        "jobs": [job_json(job) for job in jobs.jobs],
    }


def _urls_of(data: Any) -> list[str]:
    urls = data.get("urls") if isinstance(data, dict) else None
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise ClientException(detail=_('Send {"urls": ["https://...", ...]}: a list of strings.'))
    return urls


async def create_from_api(
    workspace_id: int, urls: list[str], *, actor_user_id: int, source: Source = Source.API
) -> dict[str, Any]:
    """Shared by the API and the MCP tool: the job, and what was left out and why.

    Every entry of the list was meant as a URL: one that is not ("hello") is invalid,
    not prose left out as on the import page."""
    parsed = _parsed("\n".join(urls), listed=True)
    try:
        job_id = await services.create_job(
            workspace_id, parsed.valid, actor_user_id=actor_user_id, source=source
        )
    except ImportRefused as error:
        raise ClientException(
            detail=str(error),
            extra={"invalid": [e.text for e in parsed.invalid]},
        ) from None
    return {
        "job_id": job_id,
        "total_urls": len(parsed.valid),
        "invalid": [{"url": e.text, "reason": e.reason} for e in parsed.invalid],
        "duplicates": list(parsed.duplicates),
    }


class ImportsApi(Controller):
    """Bulk imports over the API: following a job as the pages do (draft.view); starting
    and steering one needs articles.import (app.imports.access)."""

    path = "/imports"
    guards = FOLLOW

    @get("/")
    async def list_jobs(
        self,
        request: Request,
        # Declared so the OpenAPI schema lists it; _page_number reads the query itself.
        page: Annotated[
            str | None, QueryParameter(description="The page, from 1 (see pages, per_page)")
        ] = None,
    ) -> dict[str, Any]:
        """The workspace's import jobs as the Import page lists them: active ones and those
        of the last 30 days, newest first, each as GET /api/v1/imports/{job_id} gives it."""
        _viewer, workspace_id = member_of(request)
        return jobs_json(await queries.recent_jobs_page(workspace_id, _page_number(request)))

    @post("/", status_code=201, guards=MANAGE)
    async def create(self, request: Request, data: JSONBody[Any]) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        return await create_from_api(workspace_id, _urls_of(data), actor_user_id=viewer.user_id)

    @get("/{job_id:int}")
    async def get_job(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        return job_json(await _job_or_404(workspace_id, job_id))

    @get("/{job_id:int}/items")
    async def get_items(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        await _job_or_404(workspace_id, job_id)
        return items_json(await queries.items(workspace_id, job_id, _page_number(request)))

    async def _after(self, request: Request, job_id: int, command: Command) -> dict[str, Any]:
        await _command(request, job_id, command)
        return job_json(await _job_or_404(member_of(request)[1], job_id))

    @post("/{job_id:int}/pause", status_code=200, guards=MANAGE)
    async def pause(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        return await self._after(request, job_id, services.pause)

    @post("/{job_id:int}/resume", status_code=200, guards=MANAGE)
    async def resume(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        return await self._after(request, job_id, services.resume)

    @post("/{job_id:int}/cancel", status_code=200, guards=MANAGE)
    async def cancel(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        return await self._after(request, job_id, services.cancel)

    @post("/{job_id:int}/retry-failed", status_code=200, guards=MANAGE)
    async def retry_failed(self, request: Request, job_id: FromPath[int]) -> dict[str, Any]:
        return await self._after(request, job_id, services.retry_failed)

    @delete("/{job_id:int}", status_code=204, guards=MANAGE)
    async def delete_job(self, request: Request, job_id: FromPath[int]) -> None:
        await _command(request, job_id, services.delete)


class FetchAgainApi(Controller):
    """The reader's "Fetch again" over the API, beside the articles API's other commands."""

    path = "/articles"
    guards = MANAGE

    @post("/{article_id:int}/fetch-again", status_code=201)
    async def fetch_again(self, request: Request, article_id: FromPath[int]) -> dict[str, Any]:
        """Fetch a consent-walled article's page again (a one-item import job).

        Follow the job at /api/v1/imports/{job_id}: unless the page is a consent wall again,
        the article (same id) then holds the new text. 404: no such article; 400: it was not
        saved behind a consent wall.
        """
        viewer, workspace_id = member_of(request)
        job_id = await start_fetch_again(workspace_id, article_id, actor_user_id=viewer.user_id)
        return {"job_id": job_id, "article_id": article_id}


PAGE_HANDLERS = [ImportsController, SaveController]
API_HANDLERS = [ImportsApi, FetchAgainApi]
