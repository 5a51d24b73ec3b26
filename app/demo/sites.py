"""The demo's open web: a news site with articles, feeds, walls and images.

`ArticleSite` answers for `https://courier.example` (ARTICLE_ORIGIN, reached
through EGRESS_DIVERT) with what imports, topics and RSS columns meet on the
real web:

- `/news/<slug>`: full HTML articles in eight languages (Open Graph, JSON-LD,
  byline, figure), the ones posts link to (`ARTICLES`) and a wire that
  publishes a new one every `WIRE_SECONDS`;
- `/feeds/news.rss`, `/feeds/news.atom`, `/feeds/<topic>.rss`,
  `/feeds/<lang>.rss`: RSS 2.0 and Atom with conditional GET (ETag);
- consent walls, a paywall, a soft and a hard 404, a slow page, a hostile
  page (`PAGES`, shared with tests/fakes), and `/media/<name>.png`.

Everything is computed from the `DemoWorld` (seed and clock), like the posts.
"""

from __future__ import annotations

import functools
import html
import json
import random
import re
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

from app.demo.content import (
    ARTICLES,
    AVATAR,
    CITIES,
    HOSTILE_MARKUP,
    MEDIA,
    SENTENCES,
    DemoArticle,
    DemoWorld,
    stable_token,
)
from app.demo.http import DemoRequest, DemoResponse, DemoServer
from app.demo.stories import FOLLOW_UPS, STORY_SENTENCES

PAGES = Path(__file__).parent / "pages"
HTML = "text/html; charset=utf-8"
SITE_NAME = "The Riverside Courier"
WIRE_SECONDS = 60.0  # a new wire article every minute
WIRE_HISTORY = 40  # wire articles before the world's start
FEED_SIZE = 30
SLOW_SECONDS = 8.0
TOPICS = ("climate", "transport", "science", "culture")
_REPORTERS = ("Priya Natarajan", "Jonas Brandt", "Camille Roux", "Lucía Ferrer", "Olena Kovalenko")
# Pages from the real web, as they are (walls, paywall, charsets, 404s); `{BASE}` is our origin.
PAGE_ROUTES: dict[str, tuple[str, int, str, str]] = {
    # path: (file, status, encoding, content type)
    "/consent/onetrust-en": ("consent_onetrust_en.html", 200, "utf-8", HTML),
    "/consent/didomi-de": ("consent_didomi_de.html", 200, "utf-8", HTML),
    "/consent/didomi-fr": ("consent_didomi_fr.html", 200, "utf-8", HTML),
    "/consent/iubenda-it": ("consent_iubenda_it.html", 200, "utf-8", HTML),
    "/paywall/port-electric": ("paywall.html", 200, "utf-8", HTML),
    "/news/local/flood-warning": ("article.html", 200, "utf-8", HTML),
    "/news/local/faehren": (
        "charset_cp1252_header.html",
        200,
        "cp1252",
        "text/html; charset=windows-1252",
    ),
    "/soft-404": ("soft404.html", 200, "utf-8", HTML),
}
# The pictures those pages show (path: width, height), drawn like MEDIA.
PAGE_IMAGES: dict[str, tuple[int, int]] = {"/media/2025/03/wend-gauge.jpg": (1200, 800)}
RTL = {"ar"}
UNSPACED = {"ja"}  # languages that run sentences on without a space
BODY_PARAGRAPHS = 6  # after the summary: its headline followed up, then the topic's story


@dataclass(frozen=True)
class WireArticle:
    article: DemoArticle
    published: datetime
    author: str
    paragraphs: tuple[str, ...]


class ArticleSite(DemoServer):
    name = "courier"

    def __init__(self, world: DemoWorld) -> None:
        super().__init__()
        self.world = world
        self.add("GET", r"/", self._front)
        self.add("GET", r"/news/(?P<slug>[a-z0-9-]+)", self._article)
        self.add("GET", r"/slow/news/(?P<slug>[a-z0-9-]+)", self._slow)
        self.add("GET", r"/feeds/(?P<name>[a-z]+)\.(?P<format>rss|atom)", self._feed)
        self.add("GET", r"/media/(?P<name>[a-z0-9-]+)\.png", self._media)
        self.add("GET", r"/hostile", self._hostile)
        for path in PAGE_ROUTES:
            self.add("GET", path, self._page)
        for path in PAGE_IMAGES:
            self.add("GET", re.escape(path), self._page_image)
        self.fallback = self._not_found

    # The articles -------------------------------------------------------------

    def wire(self, now: datetime | None = None) -> list[WireArticle]:
        """Every article published up to `now` (default: the world's clock), newest first."""
        now = now or self.world.clock()
        last = int((now - self.world.start).total_seconds() // WIRE_SECONDS)
        return [self._wire(n) for n in range(last, -WIRE_HISTORY - 1, -1)]

    def find(self, slug: str) -> WireArticle | None:
        for n, article in enumerate(ARTICLES):
            if article.slug == slug:
                published = self.world.start - timedelta(hours=2, minutes=7 * n)
                return self._written(article, published, n)
        head = slug.split("-")[0]
        if head.startswith("w") and head[1:].isdigit():
            found = self._wire(int(head[1:]) - WIRE_HISTORY)
            published_by_now = found.published <= self.world.clock()
            return found if found.article.slug == slug and published_by_now else None
        return None

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - the site lives as long as its world
    def _wire(self, number: int) -> WireArticle:
        rng = random.Random(f"{self.world.seed}:wire:{number}")
        lang = rng.choice(tuple(SENTENCES))
        topic = "climate" if number % 3 == 0 else rng.choice(TOPICS)
        sentences = SENTENCES[lang].get(topic) or SENTENCES[lang]["climate"]
        city = rng.choice(CITIES[lang])
        lead = rng.randrange(len(sentences))
        summary = sentences[lead].format(city=city, n=rng.randint(3, 400))
        title = summary.split(":")[0].split("。")[0].split(". ")[0].strip()[:100]
        slug = f"w{number + WIRE_HISTORY}-{lang}-{topic}-{stable_token(str(number), length=5)}"
        image = rng.choice(MEDIA)[0]
        article = DemoArticle(slug, lang, title, summary, topic, image, city, lead)
        published = self.world.start + timedelta(seconds=number * WIRE_SECONDS)
        return self._written(article, published, number)

    def _written(self, article: DemoArticle, published: datetime, number: int) -> WireArticle:
        rng = random.Random(f"{self.world.seed}:body:{article.slug}")
        paragraphs = (article.summary, *_story_paragraphs(article, rng))
        return WireArticle(article, published, _REPORTERS[number % len(_REPORTERS)], paragraphs)

    # Handlers -----------------------------------------------------------------------

    def _front(self, request: DemoRequest) -> DemoResponse:
        items = "".join(
            f'<li><a href="/news/{w.article.slug}" hreflang="{w.article.lang}">'
            f"{html.escape(w.article.title)}</a></li>"
            for w in self.wire()[:FEED_SIZE]
        )
        body = (
            f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{SITE_NAME}</title>"
            f'<link rel="alternate" type="application/rss+xml" href="/feeds/news.rss">'
            f'<link rel="alternate" type="application/atom+xml" href="/feeds/news.atom">'
            f"</head><body><h1>{SITE_NAME}</h1><ul>{items}</ul></body></html>"
        )
        return DemoResponse(headers={"Content-Type": HTML}, body=body)

    def _article(self, request: DemoRequest) -> DemoResponse:
        found = self.find(request.params["slug"])
        if found is None:
            return self._not_found(request)
        return DemoResponse(
            headers={"Content-Type": HTML, "Last-Modified": _http_date(found.published)},
            body=_article_html(found, request.origin),
        )

    def _slow(self, request: DemoRequest) -> DemoResponse:
        answer = self._article(request)
        return DemoResponse(answer.status, answer.headers, answer.body, delay=SLOW_SECONDS)

    def _feed(self, request: DemoRequest) -> DemoResponse:
        name, form = request.params["name"], request.params["format"]
        if name != "news" and name not in TOPICS and name not in SENTENCES:
            return self._not_found(request)
        entries = [
            w
            for w in self.wire()
            if name == "news" or w.article.topic == name or w.article.lang == name
        ][:FEED_SIZE]
        etag = f'"{name}-{form}-{entries[0].article.slug if entries else "empty"}"'
        if request.headers.get("if-none-match") == etag:
            return DemoResponse(304, {"ETag": etag})
        origin = request.origin
        if form == "rss":
            body, kind = _rss(name, entries, origin), "application/rss+xml; charset=utf-8"
        else:
            body, kind = _atom(name, entries, origin), "application/atom+xml; charset=utf-8"
        return DemoResponse(headers={"Content-Type": kind, "ETag": etag}, body=body)

    def _media(self, request: DemoRequest) -> DemoResponse:
        drawn = [(name, w, h) for name, w, h, _alt in MEDIA] + [AVATAR]
        sizes = {name.removesuffix(".png"): (w, h) for name, w, h in drawn}
        size = sizes.get(request.params["name"])
        if size is None:
            return self._not_found(request)
        return DemoResponse(
            headers={"Content-Type": "image/png", "Cache-Control": "public, max-age=86400"},
            body=png(request.params["name"], *size),
        )

    def _page_image(self, request: DemoRequest) -> DemoResponse:
        return DemoResponse(
            headers={"Content-Type": "image/png", "Cache-Control": "public, max-age=86400"},
            body=png(request.path, *PAGE_IMAGES[request.path]),
        )

    def _hostile(self, request: DemoRequest) -> DemoResponse:
        body = (
            "<!DOCTYPE html><html><head><title>Totally normal news</title>"
            + "".join(HOSTILE_MARKUP)
            + "</head><body><article><h1>Totally normal news \u202egnp.exe</h1>"
            + "".join(f"<p>{m} Ordinary words follow this markup.</p>" for m in HOSTILE_MARKUP)
            + "</article></body></html>"
        )
        return DemoResponse(headers={"Content-Type": HTML}, body=body)

    def _page(self, request: DemoRequest) -> DemoResponse:
        name, status, encoding, kind = PAGE_ROUTES[request.path]
        body = page_text(name).replace("{BASE}", request.origin).encode(encoding)
        return DemoResponse(status, {"Content-Type": kind}, body)

    def _not_found(self, request: DemoRequest) -> DemoResponse:
        return DemoResponse(404, {"Content-Type": HTML}, page_text("error404.html"))


def _story_paragraphs(article: DemoArticle, rng: random.Random) -> tuple[str, ...]:
    """The body after the summary: what follows up its headline, then each sentence of its
    language and topic once, shuffled and dealt into paragraphs, all in its city - one story
    that never repeats itself (a body drawn from every topic read as a broken page)."""
    follow_up = FOLLOW_UPS[article.lang][article.topic][article.lead]
    story = STORY_SENTENCES[article.lang][article.topic]
    shuffled = rng.sample(story, len(story))
    dealt = (shuffled[first :: BODY_PARAGRAPHS - 1] for first in range(BODY_PARAGRAPHS - 1))
    return tuple(_paragraph(article, templates, rng) for templates in (follow_up, *dealt))


def _paragraph(article: DemoArticle, templates: Sequence[str], rng: random.Random) -> str:
    joiner = "" if article.lang in UNSPACED else " "
    return joiner.join(t.format(city=article.city, n=rng.randint(3, 400)) for t in templates)


@functools.cache
def page_text(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def _http_date(when: datetime) -> str:
    return format_datetime(when, usegmt=True)


def _article_html(found: WireArticle, origin: str) -> str:
    article = found.article
    title, url = html.escape(article.title), f"{origin}/news/{article.slug}"
    image = f"{origin}/media/{article.image}"
    alt = next((a for n, _, _, a in MEDIA if n == article.image), "")
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "NewsArticle",
            "headline": article.title,
            "datePublished": found.published.isoformat(),
            "inLanguage": article.lang,
            "author": {"@type": "Person", "name": found.author},
            "image": image,
            "isAccessibleForFree": True,
        },
        ensure_ascii=False,
    ).replace("</", "<\\/")
    paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in found.paragraphs)
    direction = ' dir="rtl"' if article.lang in RTL else ""
    return f"""<!DOCTYPE html>
<html lang="{article.lang}"{direction}>
<head>
<meta charset="utf-8">
<title>{title} | {SITE_NAME}</title>
<meta name="description" content="{html.escape(article.summary)}">
<meta property="og:title" content="{title}">
<meta property="og:site_name" content="{SITE_NAME}">
<meta property="og:type" content="article">
<meta property="og:url" content="{url}">
<meta property="og:image" content="{image}">
<meta property="article:published_time" content="{found.published.isoformat()}">
<meta name="author" content="{html.escape(found.author)}">
<link rel="canonical" href="{url}">
<script type="application/ld+json">{ld}</script>
</head>
<body>
<header><a href="/">{SITE_NAME}</a><nav><a href="/feeds/news.rss">RSS</a></nav></header>
<main>
<article>
<h1>{title}</h1>
<p class="byline">{html.escape(found.author)} ·
<time datetime="{found.published.isoformat()}">{found.published:%Y-%m-%d %H:%M}</time></p>
<figure><img src="/media/{article.image}" alt="{html.escape(alt)}"></figure>
{paragraphs}
</article>
</main>
<footer><p>© {SITE_NAME}. A demo site: nothing here is real.</p></footer>
</body>
</html>
"""


def _rss(name: str, entries: list[WireArticle], origin: str) -> str:
    items = "".join(
        f"""<item>
<title>{html.escape(w.article.title)}</title>
<link>{origin}/news/{w.article.slug}</link>
<guid isPermaLink="true">{origin}/news/{w.article.slug}</guid>
<pubDate>{_http_date(w.published)}</pubDate>
<dc:creator>{html.escape(w.author)}</dc:creator>
<category>{w.article.topic}</category>
<dc:language>{w.article.lang}</dc:language>
<description>{html.escape(w.article.summary)}</description>
<enclosure url="{origin}/media/{w.article.image}" type="image/png" length="0"/>
</item>
"""
        for w in entries
    )
    updated = _http_date(entries[0].published) if entries else ""
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
<title>{SITE_NAME}: {name}</title>
<link>{origin}/</link>
<description>The latest from {SITE_NAME} ({name})</description>
<lastBuildDate>{updated}</lastBuildDate>
{f"<language>{name}</language>" if name in SENTENCES else ""}
{items}</channel>
</rss>
"""


def _atom(name: str, entries: list[WireArticle], origin: str) -> str:
    items = "".join(
        f"""<entry>
<title>{html.escape(w.article.title)}</title>
<link rel="alternate" href="{origin}/news/{w.article.slug}"/>
<id>{origin}/news/{w.article.slug}</id>
<published>{w.published.isoformat()}</published>
<updated>{w.published.isoformat()}</updated>
<author><name>{html.escape(w.author)}</name></author>
<category term="{w.article.topic}"/>
<summary xml:lang="{w.article.lang}">{html.escape(w.article.summary)}</summary>
</entry>
"""
        for w in entries
    )
    updated = entries[0].published.isoformat() if entries else "1970-01-01T00:00:00+00:00"
    return f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
<title>{SITE_NAME}: {name}</title>
<id>{origin}/feeds/{name}.atom</id>
<link rel="self" href="{origin}/feeds/{name}.atom"/>
<link rel="alternate" href="{origin}/"/>
<updated>{updated}</updated>
{items}</feed>
"""


@functools.lru_cache(maxsize=32)
def png(name: str, width: int, height: int) -> bytes:
    """A real PNG of the given size: a sky-to-ground gradient in colours of `name`."""
    seed = random.Random(name)
    top = [seed.randint(40, 220) for _ in range(3)]
    bottom = [seed.randint(10, 160) for _ in range(3)]
    horizon = int(height * seed.uniform(0.45, 0.7))
    rows = []
    for y in range(height):
        if y < horizon:
            t = y / max(horizon, 1)
            colour = bytes(int(a + (b - a) * t) for a, b in zip(top, (230, 230, 235), strict=True))
        else:
            t = (y - horizon) / max(height - horizon, 1)
            colour = bytes(int(a * (1 - 0.5 * t)) for a in bottom)
        rows.append(b"\x00" + colour * width)
    raw = zlib.compress(b"".join(rows), 6)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")
