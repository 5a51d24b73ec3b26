"""A fake web on loopback: news pages, consent walls, paywalls, charsets, feeds and arXiv.

One `FakeSite` serves everything extraction and the topic scrapers meet on
the real web, in the real formats (page bodies under app/demo/pages/,
feeds/ and arxiv/). `{BASE}` in a body becomes the site's own address. Every request is
recorded with its arrival time, so tests can prove what was fetched, with
which headers, and how far apart.

Reach it through an Egress that allows its port (`site_egress` in
tests/extraction/conftest.py); the e2e suite runs one in a thread on a port
it knows before the server processes start (`SiteThread`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.egress.servers import Reply, Seen, Server

HERE = Path(__file__).parent
DEMO_PAGES = Path(__file__).parents[2] / "app" / "demo" / "pages"
HTML = "text/html; charset=utf-8"

# A minimal PDF: enough for anything that sniffs "%PDF-".
PDF_BYTES = (
    b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
    b"trailer << /Root 1 0 R >>\n%%EOF\n"
)
FEED_ETAG = '"full-rss-v1"'
FEED_LAST_MODIFIED = "Tue, 04 Mar 2025 08:00:00 GMT"


@dataclass(frozen=True)
class Hit:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float  # time.monotonic() when the request arrived


Route = Callable[[Seen], Reply]


def _file(folder: str, name: str) -> str:
    # The web pages are shared with the offline demo's article site (app/demo/sites.py).
    where = DEMO_PAGES if folder == "pages" else HERE / folder
    return (where / name).read_text(encoding="utf-8")


class FakeSite(Server):
    """The fake web. `routes` may be changed by a test (e.g. make a feed fail)."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(self._handle)
        self.hits: list[Hit] = []
        self.routes: dict[str, Route | Reply] = self._default_routes()
        self.port = port  # chosen up front, or 0: any free port, known once it listens

    @property
    def base(self) -> str:
        return self.url("").rstrip("/")

    def allow(self) -> str:
        """The EGRESS_ALLOW entry for this site."""
        return f"127.0.0.1:{self.port}"

    def hits_of(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    # Bodies ------------------------------------------------------------------

    def text(self, folder: str, name: str) -> str:
        return _file(folder, name).replace("{BASE}", self.base)

    def page(self, name: str, *, encoding: str = "utf-8", content_type: str = HTML) -> Reply:
        body = self.text("pages", name).encode(encoding)
        return Reply(headers=[("Content-Type", content_type)], body=body)

    # Routing -----------------------------------------------------------------

    def _handle(self, seen: Seen) -> Reply:
        parts = urlsplit(seen.target)
        self.hits.append(Hit(parts.path, parse_qs(parts.query), seen.headers, time.monotonic()))
        route = self.routes.get(parts.path)
        if route is None:
            body = self.text("pages", "error404.html").encode()
            return Reply(status=404, headers=[("Content-Type", HTML)], body=body)
        return route if isinstance(route, Reply) else route(seen)

    def _default_routes(self) -> dict[str, Route | Reply]:
        def page(name: str, **kw: str) -> Route:
            return lambda _seen: self.page(name, **kw)

        def redirect(status: int, location: str) -> Reply:
            return Reply(status=status, headers=[("Location", location)])

        return {
            # Articles
            "/news/flood-warning": page("article.html"),
            "/news/local/flood-warning": page("article.html"),
            "/news/local/faehren": page(
                "charset_cp1252_header.html",
                encoding="cp1252",
                content_type="text/html; charset=windows-1252",
            ),
            "/paywall/port-electric": page("paywall.html"),
            # Consent walls
            "/consent/onetrust-en": page("consent_onetrust_en.html"),
            "/consent/didomi-de": page("consent_didomi_de.html"),
            "/consent/didomi-fr": page("consent_didomi_fr.html"),
            "/consent/iubenda-it": page("consent_iubenda_it.html"),
            # Charsets
            "/charset/cp1252-header": page(
                "charset_cp1252_header.html",
                encoding="cp1252",
                content_type="text/html; charset=windows-1252",
            ),
            # Declared ISO-8859-1 in <meta>, written as windows-1252 (curly apostrophes).
            "/charset/latin1-meta": page(
                "charset_latin1_meta.html", encoding="cp1252", content_type="text/html"
            ),
            "/charset/sjis-meta": page(
                "charset_sjis_meta.html", encoding="shift_jis", content_type="text/html"
            ),
            "/charset/undeclared": page(
                "charset_undeclared.html", encoding="cp1252", content_type="text/html"
            ),
            # Redirects: an absolute path, a relative name, a parent-relative path
            "/r/one": redirect(301, "/r/two"),
            "/r/two": redirect(302, "three"),
            "/r/three": redirect(301, "../news/flood-warning"),
            "/r/loop": redirect(302, "/r/loop"),
            # Files and failures
            "/files/annual-report.pdf": Reply(
                headers=[
                    ("Content-Type", "application/pdf"),
                    ("Content-Disposition", 'inline; filename="Annual_Report-2024.pdf"'),
                ],
                body=PDF_BYTES,
            ),
            "/files/download": Reply(
                headers=[("Content-Type", "application/octet-stream")], body=PDF_BYTES
            ),
            "/data.json": Reply(
                headers=[("Content-Type", "application/json")], body=b'{"levels": [1.2, 1.4]}'
            ),
            "/broken": Reply(status=500, headers=[("Content-Type", HTML)], body=b"<h1>Oops</h1>"),
            "/soft-404": page("soft404.html"),
            "/bot-check": Reply(
                headers=[("Content-Type", HTML)],
                body=b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
                b"<h1>courier.example</h1><p>Checking your browser before accessing "
                b"courier.example. Enable JavaScript and cookies to continue.</p></body></html>",
            ),
            "/empty": page("empty.html"),
            # Feeds
            "/feeds/full.rss": self._conditional_feed,
            "/feeds/summaries.atom": lambda _seen: Reply(
                headers=[("Content-Type", "application/atom+xml; charset=utf-8")],
                body=self.text("feeds", "summaries.atom").encode(),
            ),
            "/feeds/not-a-feed": page("article.html"),
            "/feeds/failing": Reply(status=503, body=b"down for maintenance"),
            # arXiv: the API and the HTML rendering
            "/arxiv/api/query": self._arxiv_query,
            "/arxiv/html/2502.01234v2": lambda _seen: Reply(
                headers=[("Content-Type", HTML)],
                body=self.text("arxiv", "2502.01234v2.html").encode(),
            ),
        }

    def _conditional_feed(self, seen: Seen) -> Reply:
        validators = [("ETag", FEED_ETAG), ("Last-Modified", FEED_LAST_MODIFIED)]
        if (
            seen.headers.get("if-none-match") == FEED_ETAG
            or seen.headers.get("if-modified-since") == FEED_LAST_MODIFIED
        ):
            return Reply(status=304, headers=validators)
        return Reply(
            headers=[("Content-Type", "application/rss+xml; charset=utf-8"), *validators],
            body=self.text("feeds", "full.rss").encode(),
        )

    def _arxiv_query(self, seen: Seen) -> Reply:
        query = parse_qs(urlsplit(seen.target).query).get("search_query", [""])[0]
        name = "error.atom" if query.count("(") != query.count(")") else "query.atom"
        return Reply(
            headers=[("Content-Type", "application/atom+xml; charset=utf-8")],
            body=self.text("arxiv", name).encode(),
        )


@contextlib.asynccontextmanager
async def serve_site() -> AsyncIterator[FakeSite]:
    site = FakeSite()
    await site.start()
    try:
        yield site
    finally:
        await site.stop()


class SiteThread:
    """A FakeSite on its own event loop in a daemon thread, on a port chosen up front.

    The e2e server processes get EGRESS_ALLOW before they start, so the port
    must be known then; the test process's own loop stays free.
    """

    def __init__(self, port: int) -> None:
        self.site = FakeSite(port)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> FakeSite:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.site.start(), self._loop).result(5)
        return self.site

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.site.stop(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
