"""RSS and Atom: keyless author feeds (a site's feed, Mastodon's `@user.rss`, a YouTube channel).

Feeds are read with feedparser through app.topics.feeds (the same parser the
library's topic scrapers use), fetched only through egress, with a
conditional GET: the source's cursor keeps the feed's ETag and Last-Modified,
so an unchanged feed costs a 304 and no parsing. A handle resolves to the
feed's final address once it has been read as a feed.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from urllib.parse import urlsplit

from app.core.i18n import _
from app.egress import HttpStatusError, egress
from app.safe_content import Document, Paragraph, Strong, Text, from_text, to_text
from app.streams.platforms import feed_address
from app.streams.providers import (
    Actor,
    BaseProvider,
    Credential,
    FetchRequest,
    MediaRef,
    Page,
    ProviderError,
    RemoteItem,
    canonical_id,
    language_tag,
)
from app.streams.types import SourceKind
from app.topics.feeds import FeedEntry, NotAFeed, ParsedFeed, entry_document, parse_feed

FEED_ACCEPT = (
    "application/atom+xml, application/rss+xml, application/feed+xml;q=0.9, "
    "application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5"
)
FEED_MAX_BYTES = 5_000_000  # a bigger "feed" is refused by egress, the source fails
MAX_TEXT = 5_000  # characters of an entry's body kept for the wall; the article is a click away


class RssProvider(BaseProvider):
    name = "rss"
    kinds = frozenset({SourceKind.AUTHOR})

    def host_of(self, credential: Credential | None, handle: str) -> str:
        address = feed_address(handle) or ""
        return urlsplit(address).netloc.lower() or self.name

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        address = feed_address(handle)
        if address is None:
            return None
        try:
            feed, final_url, _validators = await _read(address, "")
        except HttpStatusError as error:
            if error.status in (404, 410):
                return None
            raise
        except ProviderError:
            return None  # answered, but not with a feed: no such feed
        assert feed is not None  # no validators were sent, so no 304
        return Actor(ref=final_url, handle=address, display_name=feed.title)

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        if request.actor is None:
            raise ProviderError(_("The feed's address is unknown."))
        feed, final_url, validators = await _read(request.actor.ref, request.cursor)
        if feed is None:
            return Page(cursor=request.cursor)  # 304: nothing new
        host = urlsplit(final_url).netloc
        author = feed.title or host
        items = tuple(_item(entry, host, author, final_url, feed) for entry in feed.entries)
        return Page(items=items[: request.limit], cursor=validators, dropped=feed.without_link)


async def _read(url: str, cursor: str) -> tuple[ParsedFeed | None, str, str]:
    """(the feed or None for 304, its final URL, the validators to send next time)."""
    headers = {"Accept": FEED_ACCEPT}
    known = _validators(cursor)
    if known.get("etag"):
        headers["If-None-Match"] = known["etag"]
    if known.get("last_modified"):
        headers["If-Modified-Since"] = known["last_modified"]
    fetched = await egress().fetch(
        url, headers=headers, accept_statuses=frozenset({304}), max_bytes=FEED_MAX_BYTES
    )
    validators = json.dumps(
        {
            "etag": fetched.headers.get("etag", ""),
            "last_modified": fetched.headers.get("last-modified", ""),
        }
    )
    if fetched.status == 304:
        return None, fetched.url, cursor
    try:
        feed = await asyncio.to_thread(
            parse_feed, fetched.content, url=fetched.url, content_type=fetched.media_type
        )
    except NotAFeed:
        raise ProviderError(_("This address does not serve an RSS or Atom feed.")) from None
    return feed, fetched.url, validators


def _validators(cursor: str) -> dict[str, str]:
    try:
        value = json.loads(cursor) if cursor else {}
    except ValueError:
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _item(entry: FeedEntry, host: str, author: str, feed_url: str, feed: ParsedFeed) -> RemoteItem:
    body = entry_document(entry)
    text = to_text(body)
    if len(text) > MAX_TEXT:
        body = from_text(text[:MAX_TEXT].rstrip() + "…")
    blocks = body.children
    if entry.title:
        blocks = (Paragraph(children=(Strong(children=(Text(text=entry.title),)),)), *blocks)
    content = Document(children=blocks)
    remote_id = entry.entry_id or entry.link
    media = (MediaRef("image", entry.lead_image),) if entry.lead_image else ()
    return RemoteItem(
        remote_id=remote_id,
        canonical_id=canonical_id(remote_id, host),
        author_handle=author[:300],
        author_ref=f"rss:{feed_url}",
        created_at=entry.published_at or datetime.now(UTC),
        content=content,
        plain_text=to_text(content),
        url=entry.link,
        media=media,
        # The entry's own mark (a feed of several languages marks each), else the feed's.
        lang=language_tag(entry.language) or language_tag(feed.language),
    )
