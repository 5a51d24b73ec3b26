"""The MCP endpoint at /mcp: AI assistants import links and read the library.

The `mcp` SDK's streamable HTTP transport (stateless, JSON answers) is
mounted in the Litestar app. A caller authenticates like the API: a Bearer
API token (app.accounts.middleware), and the token's member permissions
apply to every tool. Tools are thin callers of the same services and
queries as the pages and the API, and they answer plain text and JSON -
never HTML: an assistant gets an article's text and its analysis.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import urlsplit

from litestar import asgi
from litestar.types import HTTPResponseBodyEvent, HTTPResponseStartEvent, Receive, Scope, Send
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field

from app.accounts.guards import refused
from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.analysis import queries as analysis_queries
from app.articles import queries as article_queries
from app.articles.controllers import analysis_json
from app.articles.types import ArticleNotFound, LibraryFilter, Source
from app.core.config import Settings
from app.core.db import is_id
from app.core.i18n import _
from app.imports import access as import_access
from app.imports import queries as import_queries
from app.imports import services as import_services
from app.imports.controllers import create_from_api, items_json, job_json
from app.imports.types import ImportRefused
from app.safe_content import one_line, to_text

MAX_URLS = 50
MAX_RESULTS = 50

server: MCPServer[Any] = MCPServer(
    name="Newsdesk",
    instructions=(
        "Newsdesk is a team's library of saved articles. Import links with "
        "import_articles_from_urls and follow the job with get_import_job; find articles "
        "with search_library and read one with get_article (plain text and its analysis). "
        "An article saved behind a cookie-consent wall (warning probable_consent_wall) is "
        "not analysed (analysis status skipped, the reason in its error) and can be "
        "fetched again with fetch_article_again; the real page is analysed then."
    ),
)


def _member(
    ctx: Context[Any], permission: Permission, refusal: str | None = None
) -> tuple[Viewer, int]:
    """The token's member and workspace; ToolError when their role does not allow it
    (`refusal`, marked with N_, says what instead of the general words)."""
    request = ctx.request_context.request
    viewer = request.scope.get("user") if request is not None else None
    if not isinstance(viewer, Viewer) or viewer.workspace_id is None:
        raise ToolError(_("Send an API token of a workspace member (Authorization: Bearer)."))
    if not viewer.can(permission):
        raise ToolError(refused(refusal))
    return viewer, viewer.workspace_id


def _no_article(article_id: int) -> ToolError:
    return ToolError(_("There is no article %(id)s in this workspace.") % {"id": article_id})


@server.tool()
async def import_articles_from_urls(
    urls: Annotated[list[str], Field(min_length=1, max_length=MAX_URLS)], ctx: Context[Any]
) -> dict[str, Any]:
    """Start an import job that saves these web pages (1 to 50 URLs) into the library.

    Returns the job id to follow with get_import_job, how many URLs it holds, and
    which entries were left out (invalid, or repeated) with the reason."""
    viewer, workspace_id = _member(ctx, import_access.MANAGE, import_access.NOT_ALLOWED)
    try:
        return await create_from_api(
            workspace_id, urls, actor_user_id=viewer.user_id, source=Source.API
        )
    except Exception as error:  # ClientException: the list cannot become a job
        raise ToolError(getattr(error, "detail", str(error))) from None


@server.tool()
async def get_import_job(job_id: int, ctx: Context[Any]) -> dict[str, Any]:
    """An import job's status and counters, with its first 100 URLs and their states."""
    _viewer, workspace_id = _member(ctx, import_access.FOLLOW)
    job = await import_queries.job(workspace_id, job_id) if is_id(job_id) else None
    if job is None:
        raise ToolError(_("There is no import job %(id)s in this workspace.") % {"id": job_id})
    return {**job_json(job), **items_json(await import_queries.items(workspace_id, job_id))}


@server.tool()
async def search_library(
    query: str, ctx: Context[Any], limit: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 10
) -> list[dict[str, Any]]:
    """Search the library's articles (words, "a phrase", -without); best matches first,
    among the newest 2,000 results when more articles hold the words."""
    _viewer, workspace_id = _member(ctx, Permission.DRAFT_VIEW)
    found = await article_queries.library(
        workspace_id, LibraryFilter(q=one_line(query)[:300], limit=limit)
    )
    return [
        {
            "id": row.id,
            "title": row.title,
            "url": row.url,
            "site_name": row.site_name,
            "published_at": row.published_at.isoformat() if row.published_at else None,
            "snippet": to_text(row.snippet),
            "analysis_status": row.analysis_status,
        }
        for row in found.items
    ]


@server.tool()
async def get_article(id: int, ctx: Context[Any]) -> dict[str, Any]:
    """One article as plain text (never HTML), with its analysis: summary and keywords."""
    _viewer, workspace_id = _member(ctx, Permission.DRAFT_VIEW)
    article = await article_queries.article(workspace_id, id) if is_id(id) else None
    if article is None:
        raise _no_article(id)
    analysis = await analysis_queries.for_article(workspace_id, id)
    return {
        "id": article.id,
        "url": article.url,
        "title": article.title,
        "byline": article.byline,
        "site_name": article.site_name,
        "language": article.language,
        "published_at": article.published_at.isoformat() if article.published_at else None,
        "word_count": article.word_count,
        "warnings": list(article.warnings),
        "text": article.text,
        "analysis": analysis_json(analysis),
    }


@server.tool()
async def fetch_article_again(article_id: int, ctx: Context[Any]) -> dict[str, Any]:
    """Fetch again the page of an article saved behind a cookie-consent wall (its warnings
    hold probable_consent_wall); unless the page is a wall again, the article (same id) then
    holds the real text. Returns the job id to follow with get_import_job."""
    viewer, workspace_id = _member(ctx, import_access.MANAGE, import_access.NOT_ALLOWED)
    if not is_id(article_id):
        raise _no_article(article_id)
    try:
        job_id = await import_services.fetch_again(
            workspace_id, article_id, actor_user_id=viewer.user_id
        )
    except ArticleNotFound:
        raise _no_article(article_id) from None
    except ImportRefused as refused:
        raise ToolError(str(refused)) from None
    return {"job_id": job_id, "article_id": article_id}


_base = urlsplit("http://127.0.0.1")  # this installation's address (BASE_URL), from configure


def configure(settings: Settings) -> None:
    """Build the transport; only this installation's own address may be the Host."""
    global _base
    base = _base = urlsplit(settings.base_url)
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[base.netloc],
            allowed_origins=[f"{base.scheme}://{base.netloc}"],
        ),
    )


@contextlib.asynccontextmanager
async def running(_app: object = None) -> AsyncIterator[None]:
    """The transport's task group, for as long as the app runs."""
    async with server.session_manager.run():
        yield


async def _refuse(send: Send, status: int, detail: str, *headers: tuple[bytes, bytes]) -> None:
    body = json.dumps({"status_code": status, "detail": detail}).encode()
    start: HTTPResponseStartEvent = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *headers,
        ],
    }
    await send(start)
    end: HTTPResponseBodyEvent = {"type": "http.response.body", "body": body, "more_body": False}
    await send(end)


def _host(scope: Scope) -> str:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")


@asgi("/mcp", is_mount=True, copy_scope=False)
async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
    viewer = scope.get("user")
    if not isinstance(viewer, Viewer):
        await _refuse(
            send,
            401,
            _("Send an API token: Authorization: Bearer <token>."),
            (b"www-authenticate", b'Bearer realm="newsdesk"'),
        )
        return
    if _host(scope) != _base.netloc:
        # The transport refuses another Host too (DNS rebinding), but only with
        # "Invalid Host header": say which address works and which setting names it.
        detail = _(
            "MCP answers at %(url)s only (BASE_URL); this request was for %(host)s. "
            "Use that address, or set BASE_URL to the one your clients use."
        ) % {"url": f"{_base.scheme}://{_base.netloc}/mcp", "host": _host(scope) or "?"}
        await _refuse(send, 421, detail)
        return
    await server.session_manager.handle_request(scope, receive, send)  # type: ignore[arg-type]
