"""The library and the reader: pages, their live streams, and the articles API."""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from datastar_py.consts import ElementPatchMode
from datastar_py.litestar import DatastarResponse
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE
from litestar import Controller, Request, get, post
from litestar.exceptions import ClientException, NotFoundException
from litestar.params import FromPath, QueryParameter
from litestar.response import Redirect, Template

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.analysis import queries as analysis_queries
from app.analysis.types import AnalysisView
from app.articles import queries, services
from app.articles.labels import TEMPLATE_HELPERS
from app.articles.listing import FilterError, cursor_in, parse_filter
from app.articles.live import LibraryView
from app.articles.types import (
    AnalysisState,
    ArticleNotFound,
    ArticleRow,
    ArticleView,
    LibraryFilter,
    LibraryPage,
    Sort,
    Source,
    Warning,
    article_topic,
)
from app.core.db import is_id
from app.core.i18n import translate_stored
from app.live.streams import follow, live
from app.safe_content import http_url, to_json
from app.topics import queries as topic_queries
from app.web.pages import Form, page, same_site_path
from app.web.templating import render_block

LIBRARY = "articles/library.html"
READER = "articles/reader.html"
FILTER_FIELDS = ("q", "topic", "source", "state", "deleted", "sort")
# A client's rows below its first page, read again after a whole state: at most this many
# pages' worth (beyond them it goes on with "Load more").
HELD_PAGES = 10
# What a client holds below its first page reaches the library's end ("Load more" is gone).
HELD_TO_END = "end"
# Every list render gets its own token: a whole state of the live list always changes the
# `#library-held` trigger, so each one makes a client with loaded rows read them again. A
# counter alone starts again in every process: a reconnect to a restarted or another web
# server could meet the very token its client holds, and read nothing.
_THIS_PROCESS = secrets.token_hex(4)
_renders = itertools.count()


def _render_token() -> str:
    return f"{_THIS_PROCESS}-{next(_renders)}"


def _typed(request: Request) -> dict[str, str]:
    """The filter as typed, to put back into the form."""
    return {name: request.query_params.get(name, "") for name in FILTER_FIELDS}


def _query_string(f: LibraryFilter, **extra: str) -> str:
    """The filter as a fully percent-encoded query string (safe inside a JS string too)."""
    values = {
        "q": f.q,
        "topic": "" if f.topic_id is None else str(f.topic_id),
        "source": f.source.value if f.source else "",
        "state": f.state.value if f.state else "",
        "deleted": "1" if f.deleted else "",
        "sort": f.sort.value if f.sort else "",
        "cursor": f.cursor,
        **extra,
    }
    return urlencode({k: v for k, v in values.items() if v})


async def _list_context(workspace_id: int, f: LibraryFilter) -> dict[str, Any]:
    """The list region's context: one page of articles and the links around it."""
    library_page = await queries.library(workspace_id, f)
    query = _query_string(f)
    after = _query_string(f, cursor=library_page.next_cursor or "")
    return {
        "filter": f,
        "library": library_page,
        "next_url": f"/articles?{after}" if library_page.next_cursor else "",
        "more_url": f"/articles/more?{after}" if library_page.next_cursor else "",
        "here": "/articles" + (f"?{query}" if query else ""),
        "stream_url": "/articles/stream" + (f"?{query}" if query else ""),
        "held_url": f"/articles/held?{_query_string(f, render=_render_token())}",
        "error": None,
        "error_field": None,
        **TEMPLATE_HELPERS,
    }


def _invalid_context(error: FilterError) -> dict[str, Any]:
    """An unusable filter: the form comes back as typed, with the reason, and no list."""
    return {
        "filter": LibraryFilter(),
        "library": LibraryPage(items=[], next_cursor=None, library_is_empty=False),
        "next_url": "",
        "more_url": "",
        "here": "/articles",
        "stream_url": "",
        "held_url": "",
        "error": error.message,
        "error_field": error.field,
        **TEMPLATE_HELPERS,
    }


def _filter_or_400(request: Request) -> LibraryFilter:
    try:
        return parse_filter(request.query_params)
    except FilterError as error:
        raise ClientException(detail=error.message) from None


def _loaded_context(viewer: Viewer, f: LibraryFilter) -> dict[str, Any]:
    """What rows below the first page render with: for this one person (unlike the live list)."""
    here = "/articles" + (f"?{q}" if (q := _query_string(replace(f, cursor=""))) else "")
    return {
        **TEMPLATE_HELPERS,
        "filter": f,
        "viewer": viewer,
        "can_manage": viewer.can(Permission.ARTICLES_IMPORT),
        "here": here,  # a row's Delete comes back to the list, not to this page
    }


def _loaded_rows(
    request: Request, viewer: Viewer, f: LibraryFilter, items: list[ArticleRow]
) -> str:
    """Rows for below the first page, rendered for this one person."""
    shared = _loaded_context(viewer, f)
    return "".join(render_block(LIBRARY, "article_row", request, a=row, **shared) for row in items)


def _held_signals(f: LibraryFilter, held: str) -> DatastarEvent:
    """The client's own span below its first page: it reaches `held` (a cursor, or the end),
    its next "Load more" goes on from there."""
    end = held == HELD_TO_END
    more_url = "" if end else f"/articles/more?{_query_string(f, cursor=held)}"
    return SSE.patch_signals({"_libraryMore": more_url, "_libraryEnd": end, "_libraryHeld": held})


class LibraryController(Controller):
    path = "/articles"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def library(self, request: Request) -> Template:
        viewer, workspace_id = member_of(request)
        form: dict[str, Any] = {
            "form": _typed(request),
            "topics": await topic_queries.topics(workspace_id),
            "sources": list(Source),
            "states": list(AnalysisState),
            "sorts": list(Sort),
            "can_manage": viewer.can(Permission.ARTICLES_IMPORT),
            "retention_days": services.TRASH_RETENTION_DAYS,
            "trashed": None,
            "restored": None,
        }
        try:
            f = parse_filter(request.query_params)
        except FilterError as error:
            return await page(
                request,
                LIBRARY,
                section="library",
                status_code=400,
                **form,
                **_invalid_context(error),
            )
        context = await _list_context(workspace_id, f)
        params = request.query_params
        form["trashed"] = await _named_article(workspace_id, params.get("undo", ""), trashed=True)
        form["restored"] = await _named_article(
            workspace_id, params.get("restored", ""), trashed=False
        )
        return await page(request, LIBRARY, section="library", **form, **context)

    @get("/stream")
    async def stream(self, request: Request) -> DatastarResponse:
        _viewer, workspace_id = member_of(request)
        f = _filter_or_400(request)
        return live(request, lambda viewer: LibraryView(viewer, workspace_id, f, _list_context))

    @get("/more")
    async def more(self, request: Request) -> DatastarResponse:
        """The next page's rows appended below the first page, and where the next "Load more"
        goes on from: the client's own signals, which the stream's whole state leaves alone."""
        viewer, workspace_id = member_of(request)
        f = _filter_or_400(request)
        more = await queries.library(workspace_id, f)
        rows = _loaded_rows(request, viewer, f, more.items)
        return DatastarResponse(
            [
                SSE.patch_elements(rows, selector="#library-loaded", mode=ElementPatchMode.APPEND),
                _held_signals(f, more.next_cursor or HELD_TO_END),
            ]
        )

    @get("/held")
    async def held(self, request: Request) -> DatastarResponse:
        """The rows a client holds below its first page, read again: from the first page's
        end to `until`, where its "Load more" reached. A whole state of the live list (a
        reconnect, a burst of articles) may have pushed rows past the first page that the
        client never got; these rows replace its loaded ones, holes and stale rows alike."""
        viewer, workspace_id = member_of(request)
        f = _filter_or_400(request)
        until = request.query_params.get("until", "")
        try:
            end = None if until == HELD_TO_END else cursor_in(until, f)
        except FilterError as error:
            raise ClientException(detail=error.message) from None
        held = await queries.library(
            workspace_id, replace(f, limit=f.limit * HELD_PAGES), skip=f.limit, until=end
        )
        # Replaced, not morphed: the list ignores morphs (a whole state leaves it alone). The
        # list and its rows in one patch: an empty list and then its rows were two, and a page
        # read between them (a slow network delivers them apart) held none of its loaded rows.
        loaded = render_block(
            LIBRARY,
            "loaded",
            request,
            held_rows=held.items,
            held_cut=bool(held.next_cursor),
            **_loaded_context(viewer, f),
        )
        events = [
            SSE.patch_elements(loaded, selector="#library-loaded", mode=ElementPatchMode.REPLACE)
        ]
        # Beyond HELD_PAGES the client goes on with "Load more" from the last row read. Else
        # its own cursor stays: it reached `until` when it asked, or further since - a "Load
        # more" answered meanwhile, whose rows library.js puts back below these.
        if held.next_cursor:
            events.append(_held_signals(f, held.next_cursor))
        return DatastarResponse(events)

    @get("/{article_id:int}")
    async def reader(self, request: Request, article_id: FromPath[int]) -> Template:
        viewer, workspace_id = member_of(request)
        article = await _article_or_404(workspace_id, article_id)
        return await page(
            request,
            READER,
            section="library",
            article=article,
            original_url=http_url(article.url) or "",
            analysis=await analysis_queries.for_article(workspace_id, article_id),
            can_manage=viewer.can(Permission.ARTICLES_IMPORT),
            can_fetch_again=_can_fetch_again(viewer, article),
            **TEMPLATE_HELPERS,
        )

    @get("/{article_id:int}/stream")
    async def reader_stream(self, request: Request, article_id: FromPath[int]) -> DatastarResponse:
        viewer, workspace_id = member_of(request)
        await _article_or_404(workspace_id, article_id)

        async def render(_changed: set[str]) -> list[str]:
            analysis = await analysis_queries.for_article(workspace_id, article_id)
            # As it is now: fetched again, the wall is gone; trashed, it is not fetched again.
            article = await queries.article(workspace_id, article_id)
            may = article is not None and _can_fetch_again(viewer, article)
            return [
                render_block(
                    READER,
                    "analysis",
                    request,
                    viewer=viewer,
                    analysis=analysis,
                    can_fetch_again=may,
                )
            ]

        return follow(request, {article_topic(article_id)}, render)

    @post("/{article_id:int}/delete", guards=[allows(Permission.ARTICLES_IMPORT)])
    async def delete(
        self, request: Request, article_id: FromPath[int], data: Annotated[dict[str, str], Form]
    ) -> Redirect:
        viewer, workspace_id = member_of(request)
        await _change(services.delete_article, workspace_id, article_id, viewer.user_id)
        # Back where the person was, with "Moved to trash - Undo" above the list.
        target = same_site_path(data.get("next", ""), "/articles", under="/articles")
        if not _in_trash(target):
            target = _with_param(target, "undo", article_id)
        return Redirect(target, status_code=303)

    @post("/{article_id:int}/purge", guards=[allows(Permission.ARTICLES_IMPORT)])
    async def purge(
        self, request: Request, article_id: FromPath[int], data: Annotated[dict[str, str], Form]
    ) -> Redirect:
        viewer, workspace_id = member_of(request)
        await _change(services.purge_article, workspace_id, article_id, viewer.user_id)
        return Redirect(
            same_site_path(data.get("next", ""), "/articles?deleted=1", under="/articles"),
            status_code=303,
        )

    @post("/{article_id:int}/restore", guards=[allows(Permission.ARTICLES_IMPORT)])
    async def restore(
        self, request: Request, article_id: FromPath[int], data: Annotated[dict[str, str], Form]
    ) -> Redirect:
        viewer, workspace_id = member_of(request)
        await _change(services.restore_article, workspace_id, article_id, viewer.user_id)
        target = same_site_path(data.get("next", ""), f"/articles/{article_id}", under="/articles")
        # Restored in the trash, the row just went: "Restored: ... Open" says where to.
        if _in_trash(target):
            target = _with_param(target, "restored", article_id)
        return Redirect(target, status_code=303)


def _in_trash(path: str) -> bool:
    """A library address that lists the trash (with or without a search)."""
    return parse_qs(urlsplit(path).query).get("deleted") == ["1"]


def _with_param(path: str, name: str, value: int) -> str:
    return f"{path}{'&' if '?' in path else '?'}{name}={value}"


async def _named_article(workspace_id: int, value: str, *, trashed: bool) -> ArticleView | None:
    """The article a redirect named (`?undo=`, `?restored=`) when it is still in the trash
    (the page offers Undo) or out of it (the page offers to open it)."""
    if not value.isdigit() or not is_id(int(value)):
        return None
    article = await queries.article(workspace_id, int(value))
    if article is None or (article.deleted_at is not None) != trashed:
        return None
    return article


def _can_fetch_again(viewer: Viewer, article: ArticleView) -> bool:
    """Whether the reader offers this person "Fetch again" (and says so where the article
    was not analysed): a consent-walled article in the library, for those who may save."""
    return (
        viewer.can(Permission.ARTICLES_IMPORT)
        and article.deleted_at is None
        and Warning.CONSENT_WALL in article.warnings
    )


async def _article_or_404(workspace_id: int, article_id: int) -> ArticleView:
    article = await queries.article(workspace_id, article_id)
    if article is None:
        raise NotFoundException()
    return article


TrashService = Callable[..., Awaitable[bool]]  # services.delete_/restore_/purge_article


async def _change(service: TrashService, workspace_id: int, article_id: int, user_id: int) -> bool:
    try:
        changed = await service(workspace_id, article_id, actor_user_id=user_id)
    except ArticleNotFound:
        raise NotFoundException() from None
    return changed


# The API ----------------------------------------------------------------------------


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _document_json(doc: Any) -> Any:
    return json.loads(to_json(doc))


def row_json(row: ArticleRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "url": row.url,
        "title": row.title,
        "site_name": row.site_name,
        "byline": row.byline,
        "source": row.source.value,
        "topic": {"id": row.topic_id, "name": row.topic_name} if row.topic_id else None,
        "published_at": _iso(row.published_at),
        "created_at": _iso(row.created_at),
        "deleted_at": _iso(row.deleted_at),
        "word_count": row.word_count,
        "warnings": list(row.warnings),
        "analysis_status": row.analysis_status,
        "snippet": _document_json(row.snippet),  # rich-text AST; hits are "strong" nodes
    }


def analysis_json(analysis: AnalysisView) -> dict[str, Any]:
    return {
        "status": analysis.status.value,
        "summary": analysis.summary,
        "keywords": list(analysis.keywords),
        "language": analysis.language,
        "reading_minutes": analysis.reading_minutes,
        "analyser": analysis.analyser,
        "error": translate_stored(analysis.error),  # stored English, read in the caller's language
        "attempts": analysis.attempts,
        "next_attempt_at": _iso(analysis.next_attempt_at),
        "completed_at": _iso(analysis.completed_at),
    }


def article_json(article: ArticleView, analysis: AnalysisView) -> dict[str, Any]:
    arxiv = article.arxiv
    return {
        "id": article.id,
        "url": article.url,
        "source": article.source.value,
        "title": article.title,
        "byline": article.byline,
        "site_name": article.site_name,
        "language": article.language,
        "published_at": _iso(article.published_at),
        "created_at": _iso(article.created_at),
        "deleted_at": _iso(article.deleted_at),
        "topic": {"id": article.topic_id, "name": article.topic_name} if article.topic_id else None,
        "content": _document_json(article.content),  # the rich-text AST (app.safe_content)
        "text": article.text,
        "word_count": article.word_count,
        "reading_minutes": article.reading_minutes,
        "lead_image": article.lead_image,
        "metadata": article.metadata,
        "warnings": list(article.warnings),
        "arxiv": {
            "arxiv_id": arxiv.arxiv_id,
            "authors": list(arxiv.authors),
            "pdf_available": arxiv.pdf_available,
            "pdf_url": arxiv.pdf_url,
            "sections": [
                {"heading": s.heading, "content": _document_json(s.body)} for s in arxiv.sections
            ],
        }
        if arxiv
        else None,
        "analysis": analysis_json(analysis),
    }


class ArticlesApi(Controller):
    """The library over the API: search and read; trash and restore with articles.import."""

    path = "/articles"
    guards = [allows(Permission.DRAFT_VIEW)]

    @get("/")
    async def list_articles(
        self,
        request: Request,
        # Declared so the OpenAPI schema lists them; parse_filter reads the query itself.
        q: Annotated[str | None, QueryParameter(description="Full-text search")] = None,
        topic: Annotated[str | None, QueryParameter(description="A topic id")] = None,
        source: Annotated[
            str | None, QueryParameter(description="feed, arxiv, manual, import, api")
        ] = None,
        analysis_state: Annotated[
            str | None, QueryParameter(query="state", description="The analysis state")
        ] = None,
        deleted: Annotated[str | None, QueryParameter(description="1 lists the trash")] = None,
        cursor: Annotated[
            str | None, QueryParameter(description="next_cursor of the page before")
        ] = None,
        limit: Annotated[
            int | None, QueryParameter(ge=1, le=100, description="Rows per page")
        ] = None,
    ) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        try:
            f = parse_filter(request.query_params)
        except FilterError as error:
            raise ClientException(detail=f"{error.field}: {error.message}") from None
        result = await queries.library(workspace_id, f)
        body: dict[str, Any] = {
            "items": [row_json(r) for r in result.items],
            "next_cursor": result.next_cursor,
        }
        if f.q:  # best match ranks the newest results only: how many (null: every one)
            body["ranked_newest"] = result.ranked_newest
        return body

    @get("/{article_id:int}")
    async def get_article(self, request: Request, article_id: FromPath[int]) -> dict[str, Any]:
        _viewer, workspace_id = member_of(request)
        article = await _article_or_404(workspace_id, article_id)
        return article_json(article, await analysis_queries.for_article(workspace_id, article_id))

    @post("/{article_id:int}/delete", guards=[allows(Permission.ARTICLES_IMPORT)], status_code=200)
    async def delete_article(self, request: Request, article_id: FromPath[int]) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        changed = await _change(services.delete_article, workspace_id, article_id, viewer.user_id)
        return {"id": article_id, "deleted": True, "changed": changed}

    @post("/{article_id:int}/restore", guards=[allows(Permission.ARTICLES_IMPORT)], status_code=200)
    async def restore_article(self, request: Request, article_id: FromPath[int]) -> dict[str, Any]:
        viewer, workspace_id = member_of(request)
        changed = await _change(services.restore_article, workspace_id, article_id, viewer.user_id)
        return {"id": article_id, "deleted": False, "changed": changed}

    @post("/{article_id:int}/purge", guards=[allows(Permission.ARTICLES_IMPORT)], status_code=200)
    async def purge_article(self, request: Request, article_id: FromPath[int]) -> dict[str, Any]:
        """Delete an article in the trash for good; `purged` is false if it is not in the trash."""
        viewer, workspace_id = member_of(request)
        purged = await _change(services.purge_article, workspace_id, article_id, viewer.user_id)
        return {"id": article_id, "purged": purged}


PAGE_HANDLERS = [LibraryController]
API_HANDLERS = [ArticlesApi]
