"""YouTube: keyless channel feeds for accounts, the Data API v3 for keyword search.

Accounts read the channel's Atom feed (`/feeds/videos.xml?channel_id=UC...`,
no key, no quota); with Shorts left out it reads the channel's "uploads
without Shorts" playlist feed instead (`playlist_id=UULF` + the id after
"UC"). A handle (`@name`) becomes a channel id through `channels.list
forHandle` when the workspace has a Data API key (1 quota unit, outside the
search ledger), else through the channel page's canonical link (keyless).

Keyword columns call `search.list` (type=video, order=date, publishedAfter =
the last poll minus `SEARCH_SLACK`) with the workspace's key. A project's key
gets about 100 search calls a day (search has its own bucket; Google also
counts invalid calls), so the scheduler takes one unit of the
`yt_search_calls` ledger (90 a day by default) before each call and never
gives it back. `videos.list` (1 unit for up to 50 videos, in the general
10,000-unit bucket) adds views, likes and comments when the key allows it,
and the video's language (`defaultLanguage`, else `defaultAudioLanguage`;
channel feeds name none, so feed items keep an unknown language).
Items that came through the Data API expire 30 days after they were fetched
(YouTube's developer policies); the daily sweeper deletes them.

Errors: `quotaExceeded` -> BudgetExhausted until midnight Pacific time (when
Google resets quotas); an invalid key, an API that is not enabled or a key
restricted to other callers -> CredentialRejected; `rateLimitExceeded` ->
RateLimited. Titles and descriptions are plain text (search.list sends them
HTML-escaped), so they become AST text and links, never markup.
"""

from __future__ import annotations

import html
import json
import logging
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from lxml import etree

from app.core.i18n import _
from app.egress import EgressError, HttpStatusError, RateLimited, egress
from app.safe_content import Document, Em, Label, Link, Paragraph, Strong, from_text, to_text
from app.safe_content.urls import http_url
from app.streams.platforms import QUOTA_RESET_ZONE
from app.streams.providers import (
    Actor,
    BaseProvider,
    BudgetExhausted,
    Credential,
    CredentialRejected,
    FetchRequest,
    MediaRef,
    Page,
    ProviderError,
    RemoteItem,
    canonical_id,
    json_object,
    language_tag,
)
from app.streams.schedule import window_end, window_start
from app.streams.types import SourceKind

log = logging.getLogger(__name__)

SITE = "https://www.youtube.com"
API = "https://www.googleapis.com/youtube/v3"
NO_SHORTS = "#no-shorts"  # suffix of an account handle whose Shorts are left out
SEARCH_SLACK = timedelta(hours=1)  # search's index lags; dedup absorbs the overlap
DATA_API_RETENTION = timedelta(days=30)
MAX_RESULTS = 50  # search.list and videos.list take at most 50
# videos.list: the counts, and the two language tags of the snippet (not its texts).
VIDEO_FIELDS = "items(id,statistics,snippet(defaultLanguage,defaultAudioLanguage))"
MAX_TEXT = 5_000
FEED_MAX_BYTES = 2_000_000
PAGE_MAX_BYTES = 3_000_000  # a channel page is big; the canonical link is in its head
_DAY = timedelta(days=1)

_CHANNEL_ID = re.compile(r"UC[A-Za-z0-9_-]{22}")
_CANONICAL = re.compile(
    r'<link\s+rel="canonical"\s+href="https://www\.youtube\.com/channel/(UC[A-Za-z0-9_-]{22})"'
)
_EXTERNAL_ID = re.compile(r'"(?:externalId|channelId)"\s*:\s*"(UC[A-Za-z0-9_-]{22})"')
_NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "yt": "http://www.youtube.com/xml/schemas/2015",
    "media": "http://search.yahoo.com/mrss/",
}
# No entities, no network, no DTD: the feed is data from a stranger.
_XML = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_pis=True
)
_QUOTA = frozenset({"quotaExceeded", "dailyLimitExceeded"})
_RATE = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
_KEY = frozenset(
    {
        "keyInvalid",
        "keyExpired",
        "API_KEY_INVALID",
        "API_KEY_SERVICE_BLOCKED",
        "accessNotConfigured",
        "SERVICE_DISABLED",
        "ipRefererBlocked",
        "forbidden",
        "API_KEY_HTTP_REFERRER_BLOCKED",
        "API_KEY_IP_ADDRESS_BLOCKED",
    }
)


def uploads_without_shorts(channel_id: str) -> str:
    """The playlist of a channel's long-form uploads: "UULF" + the id after "UC"."""
    return "UULF" + channel_id[2:]


def next_quota_reset(now: datetime) -> datetime:
    """The next midnight in Pacific time, when Google renews a key's daily quota (UTC):
    the end of the ledger's window (the ledger's days are Google's days)."""
    start = window_start(now.astimezone(UTC), _DAY, QUOTA_RESET_ZONE)
    return window_end(start, _DAY, QUOTA_RESET_ZONE)


class YouTubeProvider(BaseProvider):
    name = "youtube"
    kinds = frozenset({SourceKind.SEARCH, SourceKind.AUTHOR})
    needs_key = frozenset({SourceKind.SEARCH})

    def __init__(self, *, site: str = SITE, api: str = API) -> None:
        self.site = site.rstrip("/")
        self.api = api.rstrip("/")

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return "www.youtube.com"

    # Accounts --------------------------------------------------------------------------

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        wanted, _sep, _option = handle.partition("#")
        no_shorts = handle.endswith(NO_SHORTS)
        found: tuple[str, str] | None
        if _CHANNEL_ID.fullmatch(wanted):
            title = await self._feed_title(wanted)
            found = (wanted, title) if title is not None else None
        else:
            found = await self._channel_of_handle(credential, wanted)
        if found is None:
            return None
        channel_id, title = found
        ref = (
            f"playlist:{uploads_without_shorts(channel_id)}"
            if no_shorts
            else f"channel:{channel_id}"
        )
        return Actor(ref=ref, handle=handle, display_name=title)

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        if request.actor is None:
            raise ProviderError(_("The channel is unknown."))
        kind, _sep, ident = request.actor.ref.partition(":")
        param = "playlist_id" if kind == "playlist" else "channel_id"
        fetched = await egress().fetch(
            f"{self.site}/feeds/videos.xml?{urlencode({param: ident})}",
            headers={"Accept": "application/atom+xml, application/xml;q=0.9"},
            max_bytes=FEED_MAX_BYTES,
        )
        items, dropped = parse_channel_feed(fetched.content)
        return Page(items=tuple(items[: request.limit]), dropped=dropped)

    async def _feed_title(self, channel_id: str) -> str | None:
        """The channel's name from its feed; None when YouTube has no such channel."""
        try:
            fetched = await egress().fetch(
                f"{self.site}/feeds/videos.xml?{urlencode({'channel_id': channel_id})}",
                max_bytes=FEED_MAX_BYTES,
            )
        except HttpStatusError as error:
            if error.status in (400, 404):
                return None
            raise
        root = _parse_xml(fetched.content)
        return _text(root.find("atom:title", _NS)) if root is not None else ""

    async def _channel_of_handle(
        self, credential: Credential | None, handle: str
    ) -> tuple[str, str] | None:
        if credential is not None:
            try:
                data = await self._api(
                    "channels", {"part": "snippet", "forHandle": handle}, credential
                )
            except (BudgetExhausted, CredentialRejected) as error:
                log.info("youtube: handle lookup through the page (%s)", error.message)
            else:
                for channel in _list(data.get("items")):
                    channel_id = str(channel.get("id", ""))
                    if _CHANNEL_ID.fullmatch(channel_id):
                        snippet = _dict(channel.get("snippet"))
                        return channel_id, html.unescape(str(snippet.get("title", "")))
                return None
        return await self._channel_of_page(handle)

    async def _channel_of_page(self, handle: str) -> tuple[str, str] | None:
        """Keyless: the channel page names its channel id in its canonical link."""
        try:
            fetched = await egress().fetch(
                f"{self.site}/{handle}", headers={"Accept": "text/html"}, max_bytes=PAGE_MAX_BYTES
            )
        except HttpStatusError as error:
            if error.status in (404, 410):
                return None
            raise
        page = fetched.text
        found = _CANONICAL.search(page) or _EXTERNAL_ID.search(page)
        if found is None:
            # A consent wall or a changed page: say so in the log, the source says "not found".
            log.warning("youtube: no channel id on the page of %s", handle)
            return None
        title = re.search(r'<meta\s+property="og:title"\s+content="([^"]{0,300})"', page)
        return found.group(1), html.unescape(title.group(1)) if title else handle

    # Search ----------------------------------------------------------------------------

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        if credential is None:
            raise CredentialRejected(_("YouTube search needs the workspace's YouTube API key."))
        started = datetime.now(UTC)
        params = {
            "part": "snippet",
            "type": "video",
            "order": "date",
            "q": request.query,
            "maxResults": str(min(request.limit, MAX_RESULTS)),
        }
        since = _since(request.cursor)
        if since is not None:
            params["publishedAfter"] = _rfc3339(since - SEARCH_SLACK)
        data = await self._api("search", params, credential)
        fetched = datetime.now(UTC)
        results = [r for r in _list(data.get("items")) if _video_id(r)]
        details = await self._details(credential, [_video_id(r) for r in results])
        items = []
        for result in results:
            item = search_result_item(result, fetched, details.get(_video_id(result)))
            if item is not None:
                items.append(item)
        cursor = json.dumps({"since": _rfc3339(started)})
        return Page(items=tuple(items), cursor=cursor, dropped=len(results) - len(items))

    async def _details(self, credential: Credential, video_ids: list[str]) -> dict[str, Details]:
        """views/likes/comments and the language of each video from videos.list (search.list
        says neither); {} when the key may not read them. Asking for the snippet costs no
        more units; `fields` keeps the answer to the two language tags."""
        if not video_ids:
            return {}
        try:
            data = await self._api("videos", {
                "part": "snippet,statistics", "id": ",".join(video_ids[:MAX_RESULTS]),
                "fields": VIDEO_FIELDS,
            }, credential)  # fmt: skip
        except (ProviderError, EgressError) as error:
            log.info("youtube: no metrics this time (%s)", error)
            return {}
        return {str(v.get("id")): video_details(v) for v in _list(data.get("items"))}

    async def _api(
        self, method: str, params: dict[str, str], credential: Credential
    ) -> dict[str, Any]:
        query = urlencode({**params, "key": credential.secret})
        fetched = await egress().fetch(
            f"{self.api}/{method}?{query}",
            headers={"Accept": "application/json"},
            accept_statuses=frozenset({400, 401, 403}),
        )
        data = json_object(fetched, "YouTube")
        if fetched.status != 200 or "error" in data:
            raise api_error(fetched.url, fetched.status, data, datetime.now(UTC))
        return data


# Errors -------------------------------------------------------------------------------


def api_error(url: str, status: int, data: dict[str, Any], now: datetime) -> Exception:
    """The Data API's error body as what the scheduler understands."""
    error = _dict(data.get("error"))
    reasons = {str(e.get("reason", "")) for e in _list(error.get("errors"))}
    reasons |= {str(d.get("reason", "")) for d in _list(error.get("details"))}
    if reasons & _QUOTA:
        return BudgetExhausted(
            _("The YouTube API key's daily quota is spent; searching resumes after it renews."),
            next_quota_reset(now),
        )
    if reasons & _RATE:
        return RateLimited(url, _("YouTube asked us to slow down."), None)
    if reasons & _KEY or status == 401:
        message = _(
            "YouTube refused the workspace's API key (invalid, or the YouTube Data API is not"
            " enabled for it); check the key in Settings."
        )
        return CredentialRejected(message)
    return ProviderError(_("YouTube refused the request (HTTP %(s)s).") % {"s": status})


# Normalising --------------------------------------------------------------------------


def parse_channel_feed(content: bytes) -> tuple[list[RemoteItem], int]:
    """A channel or playlist Atom feed as items (newest first as YouTube sends them); dropped."""
    root = _parse_xml(content)
    if root is None or root.tag != f"{{{_NS['atom']}}}feed":
        raise ProviderError(_("YouTube did not answer with a channel feed."))
    items: list[RemoteItem] = []
    dropped = 0
    for entry in root.findall("atom:entry", _NS):
        item = _feed_item(entry)
        if item is None:
            dropped += 1
        else:
            items.append(item)
    return items, dropped


def _feed_item(entry: etree._Element) -> RemoteItem | None:
    video_id = _text(entry.find("yt:videoId", _NS))
    published = _time(_text(entry.find("atom:published", _NS)))
    if not video_id or published is None:
        return None
    channel_id = _text(entry.find("yt:channelId", _NS))
    group = entry.find("media:group", _NS)
    description = _text(group.find("media:description", _NS)) if group is not None else ""
    thumb = group.find("media:thumbnail", _NS) if group is not None else None
    stats = group.find("media:community/media:statistics", _NS) if group is not None else None
    rating = group.find("media:community/media:starRating", _NS) if group is not None else None
    link = entry.find("atom:link[@rel='alternate']", _NS)
    metrics = {}
    if stats is not None and _number(stats.get("views")) is not None:
        metrics["views"] = _number(stats.get("views")) or 0.0
    if rating is not None and _number(rating.get("count")) is not None:
        metrics["likes"] = _number(rating.get("count")) or 0.0
    return _item(
        video_id=video_id,
        title=_text(entry.find("atom:title", _NS)),
        description=description,
        channel_id=channel_id,
        channel_title=_text(entry.find("atom:author/atom:name", _NS)),
        created_at=published,
        url=(link.get("href") if link is not None else "") or "",
        thumbnail=(thumb.get("url") if thumb is not None else "") or "",
        metrics=metrics,
        expires_at=None,
        lang="",  # a channel feed names no language; only the Data API does
    )


@dataclass(frozen=True)
class Details:
    """What videos.list adds to a search result."""

    metrics: dict[str, float]
    lang: str = ""


def video_details(video: dict[str, Any]) -> Details:
    return Details(statistics(_dict(video.get("statistics"))), video_language(video.get("snippet")))


def video_language(snippet: object) -> str:
    """The language of a video's title and description (what the wall shows), else the
    language spoken in it; "" when the uploader set neither."""
    found = _dict(snippet)
    return language_tag(found.get("defaultLanguage")) or language_tag(
        found.get("defaultAudioLanguage")
    )


def search_result_item(
    result: dict[str, Any], fetched: datetime, details: Details | None = None
) -> RemoteItem | None:
    """One search.list result (its snippet's texts are HTML-escaped) as an item."""
    details = details or Details({})
    snippet = _dict(result.get("snippet"))
    created = _time(str(snippet.get("publishedAt", "")))
    video_id = _video_id(result)
    if created is None or not video_id:
        return None
    thumbs = _dict(snippet.get("thumbnails"))
    thumb = next(
        (_dict(thumbs.get(k)).get("url") for k in ("high", "medium", "default") if k in thumbs), ""
    )
    return _item(
        video_id=video_id,
        title=html.unescape(str(snippet.get("title", ""))),
        description=html.unescape(str(snippet.get("description", ""))),
        channel_id=str(snippet.get("channelId", "")),
        channel_title=html.unescape(str(snippet.get("channelTitle", ""))),
        created_at=created,
        url="",
        thumbnail=str(thumb or ""),
        metrics=details.metrics,
        expires_at=fetched + DATA_API_RETENTION,
        lang=details.lang or video_language(snippet),
    )


def statistics(stats: dict[str, Any]) -> dict[str, float]:
    """videos.list statistics (numbers as strings; hidden ones absent) as metrics."""
    out: dict[str, float] = {}
    for field, name in (
        ("viewCount", "views"),
        ("likeCount", "likes"),
        ("commentCount", "replies"),
    ):
        value = _number(stats.get(field))
        if value is not None:
            out[name] = value
    return out


def _item(
    *,
    video_id: str,
    title: str,
    description: str,
    channel_id: str,
    channel_title: str,
    created_at: datetime,
    url: str,
    thumbnail: str,
    metrics: dict[str, float],
    expires_at: datetime | None,
    lang: str,
) -> RemoteItem:
    watch = http_url(url) or f"https://www.youtube.com/watch?{urlencode({'v': video_id})}"
    content = video_document(title, description, watch)
    thumb = http_url(thumbnail)
    return RemoteItem(
        remote_id=video_id,
        canonical_id=canonical_id(video_id),
        author_handle=(channel_title or channel_id)[:300],
        author_ref=f"youtube:{channel_id}" if channel_id else "",
        created_at=created_at,
        content=content,
        plain_text=to_text(content),
        url=watch,
        media=(MediaRef("image", thumb, alt=title[:500]),) if thumb else (),
        metrics=metrics,
        expires_at=expires_at,
        lang=lang,
    )


def video_document(title: str, description: str, watch_url: str) -> Document:
    """Title (strong), description (text, URLs linked), and the attribution line last."""
    if len(description) > MAX_TEXT:
        description = description[:MAX_TEXT].rstrip() + "…"
    blocks = list(from_text(description).children)
    heading = from_text(title, autolink=False).children
    if heading:
        first = heading[0]
        assert isinstance(first, Paragraph)
        blocks.insert(0, Paragraph(children=(Strong(children=first.children),)))
    attribution = Link(href=watch_url, children=(Label("watch_on_youtube"),))
    blocks.append(Paragraph(children=(Em(children=(attribution,)),)))
    return Document(children=tuple(blocks))


# Small readers ------------------------------------------------------------------------


def _parse_xml(content: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(content, parser=_XML)
    except etree.XMLSyntaxError:
        return None


def _text(node: etree._Element | None) -> str:
    return (node.text or "").strip() if node is not None else ""


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _since(cursor: str) -> datetime | None:
    try:
        value = json.loads(cursor) if cursor else {}
    except ValueError:
        return None
    return _time(str(value.get("since", ""))) if isinstance(value, dict) else None


def _number(value: object) -> float | None:
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") and number >= 0 else None


def _video_id(result: dict[str, Any]) -> str:
    value = str(_dict(result.get("id")).get("videoId", ""))
    return value if re.fullmatch(r"[A-Za-z0-9_-]{6,20}", value) else ""


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
