"""YouTubeDemo: the demo world's YouTube in YouTube's own formats, on one loopback server.

Serves the origins the YouTube provider talks to and its thumbnails' (EGRESS_DIVERT sends
`https://www.youtube.com`, `https://www.googleapis.com` and `https://i.ytimg.com` here):

    www.youtube.com      /feeds/videos.xml?channel_id=UC...     channel Atom feed
                         /feeds/videos.xml?playlist_id=UULF...  the same without Shorts
                         /@handle                               a channel page (canonical link)
    www.googleapis.com   /youtube/v3/search    search.list (q, type=video, order=date,
                                               publishedAfter, maxResults)
                         /youtube/v3/videos    videos.list part=snippet,statistics
                         /youtube/v3/channels  channels.list forHandle / id
    i.ytimg.com          /vi/ID/NAME.jpg       a thumbnail (a drawn PNG: the media proxy
                                               goes by the bytes, not the name)

A Data API call needs a key (`valid_keys` when set, else any); `quota_exceeded = True`
answers every Data API call 403 quotaExceeded, as Google does when a key's day is spent.
Every fifth video is a Short (its link is /shorts/ID); the playlist feed leaves them out.
Descriptions carry the world's hostile markup as text, where YouTube would carry it.
"""

from __future__ import annotations

import html
from datetime import UTC, datetime
from xml.sax.saxutils import escape, quoteattr

from app.demo.content import DemoAuthor, DemoPost, DemoWorld, stable_token
from app.demo.http import DemoRequest, DemoResponse, DemoServer
from app.demo.sites import png

FEED_LIMIT = 15  # YouTube's channel feeds carry the last 15 uploads
MAX_RESULTS = 50
SNIPPET = 160  # search.list cuts descriptions short
THUMBNAILS = {"default": (120, 90), "mqdefault": (320, 180), "hqdefault": (480, 360)}
ATOM = "application/atom+xml; charset=UTF-8"


def channel_id(author: DemoAuthor) -> str:
    return "UC" + stable_token("youtube-channel", author.handle.lower(), length=22)


def video_id(post: DemoPost) -> str:
    return stable_token("youtube-video", str(post.id), length=11)


def is_short(post: DemoPost) -> bool:
    return post.id % 5 == 0


def _rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _description(post: DemoPost) -> str:
    return f"{post.text}\n\n{post.hostile}".strip() if post.hostile else post.text


class YouTubeDemo(DemoServer):
    name = "youtube"

    def __init__(self, world: DemoWorld, *, valid_keys: frozenset[str] | None = None) -> None:
        super().__init__()
        self.world = world
        self.valid_keys = valid_keys  # None: any non-empty key works
        self.quota_exceeded = False
        self.add("GET", r"/feeds/videos\.xml", self.feed)
        self.add("GET", r"/(?P<handle>@[A-Za-z0-9._-]{3,30})(?:/[a-z]*)?", self.channel_page)
        self.add("GET", r"/youtube/v3/search", self.search)
        self.add("GET", r"/youtube/v3/videos", self.videos)
        self.add("GET", r"/youtube/v3/channels", self.channels)
        self.add("GET", r"/vi/(?P<vid>[A-Za-z0-9_-]{11})/(?P<name>[a-z]+)\.jpg", self.thumbnail)

    # The world, as YouTube sees it --------------------------------------------------------

    def _videos(self) -> list[DemoPost]:
        return [p for p in self.world.posts("youtube") if p.repost_of is None]

    def _channel(self, wanted: str) -> DemoAuthor | None:
        for author in self.world.authors("youtube"):
            if wanted in (channel_id(author), author.handle.lower()):
                return author
        return None

    def _watch_url(self, post: DemoPost) -> str:
        kind = "shorts/" if is_short(post) else "watch?v="
        return f"https://www.youtube.com/{kind}{video_id(post)}"

    # www.youtube.com ------------------------------------------------------------------------

    def feed(self, request: DemoRequest) -> DemoResponse:
        playlist = request.arg("playlist_id")
        wanted = "UC" + playlist[4:] if playlist.startswith("UULF") else request.arg("channel_id")
        author = self._channel(wanted)
        if author is None:
            return DemoResponse(404, {"Content-Type": "text/html"}, "<html>Not Found</html>")
        videos = [v for v in self._videos() if v.author == author]
        if playlist:
            videos = [v for v in videos if not is_short(v)]
        return DemoResponse(200, {"Content-Type": ATOM}, self.atom(author, videos[:FEED_LIMIT]))

    def atom(self, author: DemoAuthor, videos: list[DemoPost]) -> str:
        cid = channel_id(author)
        channel_url = f"https://www.youtube.com/channel/{cid}"
        entries = "".join(self._entry(author, v) for v in videos)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns:yt="http://www.youtube.com/xml/schemas/2015"'
            ' xmlns:media="http://search.yahoo.com/mrss/" xmlns="http://www.w3.org/2005/Atom">\n'
            f' <link rel="self" href="http://www.youtube.com/feeds/videos.xml?channel_id={cid}"/>\n'
            f" <id>yt:channel:{cid[2:]}</id>\n <yt:channelId>{cid[2:]}</yt:channelId>\n"
            f" <title>{escape(author.display_name)}</title>\n"
            f' <link rel="alternate" href="{channel_url}"/>\n'
            f" <author><name>{escape(author.display_name)}</name><uri>{channel_url}</uri></author>\n"
            f"{entries}</feed>\n"
        )

    def _entry(self, author: DemoAuthor, post: DemoPost) -> str:
        vid, cid = video_id(post), channel_id(author)
        when = post.created_at.astimezone(UTC).isoformat()
        title = escape(post.title or post.text[:90])
        return (
            f" <entry>\n  <id>yt:video:{vid}</id>\n  <yt:videoId>{vid}</yt:videoId>\n"
            f"  <yt:channelId>{cid}</yt:channelId>\n  <title>{title}</title>\n"
            f'  <link rel="alternate" href={quoteattr(self._watch_url(post))}/>\n'
            f"  <author><name>{escape(author.display_name)}</name>"
            f"<uri>https://www.youtube.com/channel/{cid}</uri></author>\n"
            f"  <published>{when}</published>\n  <updated>{when}</updated>\n"
            f"  <media:group>\n   <media:title>{title}</media:title>\n"
            f'   <media:thumbnail url="https://i.ytimg.com/vi/{vid}/hqdefault.jpg"'
            ' width="480" height="360"/>\n'
            f"   <media:description>{escape(_description(post))}</media:description>\n"
            f'   <media:community>\n    <media:starRating count="{post.metrics.get("likes", 0)}"'
            ' average="5.00" min="1" max="5"/>\n'
            f'    <media:statistics views="{post.metrics.get("views", 0)}"/>\n'
            "   </media:community>\n  </media:group>\n </entry>\n"
        )

    def channel_page(self, request: DemoRequest) -> DemoResponse:
        author = self._channel(request.params["handle"].lower())
        if author is None:
            return DemoResponse(404, {"Content-Type": "text/html"}, "<html>404</html>")
        cid = channel_id(author)
        page = (
            f"<!DOCTYPE html><html><head><title>{html.escape(author.display_name)} - YouTube"
            f'</title><link rel="canonical" href="https://www.youtube.com/channel/{cid}">'
            f'<meta property="og:title" content="{html.escape(author.display_name)}">'
            f"</head><body>{html.escape(author.bio)}</body></html>"
        )
        return DemoResponse(200, {"Content-Type": "text/html; charset=utf-8"}, page)

    # i.ytimg.com ----------------------------------------------------------------------------

    def thumbnail(self, request: DemoRequest) -> DemoResponse:
        width, height = THUMBNAILS.get(request.params["name"], THUMBNAILS["hqdefault"])
        return DemoResponse(
            headers={"Content-Type": "image/png", "Cache-Control": "public, max-age=86400"},
            body=png(request.params["vid"], width, height),
        )

    # www.googleapis.com -------------------------------------------------------------------

    def _refused(self, request: DemoRequest) -> DemoResponse | None:
        key = request.arg("key")
        if not key or (self.valid_keys is not None and key not in self.valid_keys):
            return _google_error(400, "badRequest", "API key not valid. Please pass a valid API key.",
                                 detail="API_KEY_INVALID")  # fmt: skip
        if self.quota_exceeded:
            return _google_error(
                403, "quotaExceeded", "The request cannot be completed because you have"
                " exceeded your quota.", domain="youtube.quota",
            )  # fmt: skip
        return None

    def search(self, request: DemoRequest) -> DemoResponse:
        refused = self._refused(request)
        if refused is not None:
            return refused
        words = request.arg("q").lower().replace("#", " ").split()
        after = _time(request.arg("publishedAfter"))
        limit = max(0, min(MAX_RESULTS, int(request.arg("maxResults", "5") or 5)))
        found = []
        for post in self._videos():
            if after is not None and post.created_at <= after:
                break  # newest first: the rest is older
            # What the result shows: its title and the start of its description.
            haystack = f"{post.title} {_description(post)[:SNIPPET]}".lower()
            if all(word in haystack for word in words):
                found.append(post)
            if len(found) == limit:
                break
        return DemoResponse(
            json={
                "kind": "youtube#searchListResponse",
                "etag": stable_token("etag", request.arg("q"), length=27),
                "regionCode": "DE",
                "pageInfo": {"totalResults": len(found), "resultsPerPage": limit},
                "items": [self._search_result(p) for p in found],
            }
        )

    def _search_result(self, post: DemoPost) -> dict[str, object]:
        vid = video_id(post)
        thumbs = {}
        for size, name in (("default", "default"), ("medium", "mqdefault"), ("high", "hqdefault")):
            width, height = THUMBNAILS[name]
            url = f"https://i.ytimg.com/vi/{vid}/{name}.jpg"
            thumbs[size] = {"url": url, "width": width, "height": height}
        return {
            "kind": "youtube#searchResult",
            "etag": stable_token("etag", vid, length=27),
            "id": {"kind": "youtube#video", "videoId": vid},
            "snippet": {
                "publishedAt": _rfc3339(post.created_at),
                "channelId": channel_id(post.author),
                # search.list sends its texts HTML-escaped, and descriptions cut short
                "title": html.escape(post.title or post.text[:90]),
                "description": html.escape(_description(post)[:SNIPPET]),
                "thumbnails": thumbs,
                "channelTitle": html.escape(post.author.display_name),
                "liveBroadcastContent": "none",
                "publishTime": _rfc3339(post.created_at),
            },
        }

    def videos(self, request: DemoRequest) -> DemoResponse:
        refused = self._refused(request)
        if refused is not None:
            return refused
        wanted = set(request.arg("id").split(","))
        parts = set(request.arg("part").split(","))
        items = [self._video(p, parts) for p in self._videos() if video_id(p) in wanted]
        return DemoResponse(json={"kind": "youtube#videoListResponse", "items": items,
                                  "pageInfo": {"totalResults": len(items)}})  # fmt: skip

    def _video(self, post: DemoPost, parts: set[str]) -> dict[str, object]:
        """A videos.list resource with the parts asked for (`fields` is not applied)."""
        video: dict[str, object] = {"kind": "youtube#video", "id": video_id(post)}
        if "snippet" in parts:
            video["snippet"] = {
                "publishedAt": _rfc3339(post.created_at),
                "channelId": channel_id(post.author),
                "title": post.title or post.text[:90],
                "description": _description(post),
                "channelTitle": post.author.display_name,
                # Uploaders set these in YouTube Studio; many leave the text's language unset.
                **({"defaultLanguage": post.lang} if post.id % 3 else {}),
                "defaultAudioLanguage": post.lang,
            }
        if "statistics" in parts:
            video["statistics"] = {
                "viewCount": str(post.metrics.get("views", 0)),
                "likeCount": str(post.metrics.get("likes", 0)),
                "favoriteCount": "0",
                "commentCount": str(post.metrics.get("replies", 0)),
            }
        return video

    def channels(self, request: DemoRequest) -> DemoResponse:
        refused = self._refused(request)
        if refused is not None:
            return refused
        wanted = request.arg("forHandle").lower() or request.arg("id")
        author = self._channel(wanted)
        items = [] if author is None else [
            {
                "kind": "youtube#channel",
                "id": channel_id(author),
                "snippet": {
                    "title": author.display_name,
                    "description": author.bio,
                    "customUrl": author.handle.lower(),
                },
            }
        ]  # fmt: skip
        body: dict[str, object] = {"kind": "youtube#channelListResponse",
                                   "pageInfo": {"totalResults": len(items)}}  # fmt: skip
        if items:
            body["items"] = items  # YouTube leaves `items` out when nothing matched
        return DemoResponse(json=body)


def _google_error(
    status: int, reason: str, message: str, *, domain: str = "global", detail: str = ""
) -> DemoResponse:
    error: dict[str, object] = {
        "code": status,
        "message": message,
        "errors": [{"message": message, "domain": domain, "reason": reason}],
    }
    if detail:
        error["status"] = "INVALID_ARGUMENT"
        error["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": detail,
             "domain": "googleapis.com"}
        ]  # fmt: skip
    return DemoResponse(status, json={"error": error})


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
