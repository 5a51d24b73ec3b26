"""BlueskyDemo: the demo world's Bluesky, speaking XRPC JSON as the lexicons define it.

One server answers both origins Newsdesk talks to (EGRESS_DIVERT sends both here):
the public AppView (`https://public.api.bsky.app`, keyless reads) and the entryway/PDS
(`https://bsky.social`, sessions and the signed-in reads). Posts come from `DemoWorld`
and are written as `app.bsky.feed.defs#postView` / `#feedViewPost`: facets by UTF-8 byte
offsets, reposts with `reasonRepost`, quotes as `embed.record#view`, images and link
cards; hostile posts carry a `javascript:` link facet and markup in their card.

Tests steer it: `keyless_search` (the real AppView often refuses search without an
account), `access_ttl` (how long an access token lives), `expire_sessions()`,
`fail_next` (answers to give before any other, e.g. a 429), and `hits` (from
DemoServer) to count `createSession` calls.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.demo.content import ARTICLE_ORIGIN, ARTICLES, AVATAR_URL, DemoAuthor, DemoPost, DemoWorld
from app.demo.http import DemoRequest, DemoResponse, DemoServer

PUBLIC_APPVIEW = "https://public.api.bsky.app"
ENTRYWAY = "https://bsky.social"
ORIGINS = (PUBLIC_APPVIEW, ENTRYWAY)
# The demo workspace's connected account: a world author, so others mention and reply to
# it. Connect it with `streams.services.connect` (it signs in here, as for real).
DEMO_ACCOUNT = "maya.okafor.bsky.social"
DEMO_APP_PASSWORD = "demo-demo-demo-demo"  # noqa: S105 - the offline demo's (it takes any)
WINDOW_S = 300
WINDOW_LIMIT = 3000
_TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"  # base32-sortable, as TIDs are
_TID_BASE = 1 << 60  # so every demo rkey is 13 characters, like a real TID


def divert(port: int, host: str = "127.0.0.1") -> list[str]:
    """EGRESS_DIVERT entries sending both Bluesky origins to a BlueskyDemo on `port`."""
    return [f"{origin}=http://{host}:{port}" for origin in ORIGINS]


def tid(number: int) -> str:
    value, out = _TID_BASE + number, []
    for _ in range(13):
        value, rest = divmod(value, 32)
        out.append(_TID_ALPHABET[rest])
    return "".join(reversed(out))


def untid(rkey: str) -> int | None:
    if len(rkey) != 13 or any(c not in _TID_ALPHABET for c in rkey):
        return None
    value = 0
    for c in rkey:
        value = value * 32 + _TID_ALPHABET.index(c)
    return value - _TID_BASE


def did_of(handle: str) -> str:
    from app.demo.content import stable_token

    return "did:plc:" + stable_token("bluesky-did", handle, length=24)


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _jwt(claims: dict[str, Any]) -> str:
    """A token shaped like the PDS's (the provider reads only `exp`); not signed."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'typ': 'at+jwt', 'alg': 'none'})}.{part(claims)}.demo"


def _error(status: int, error: str, message: str) -> DemoResponse:
    return DemoResponse(status, json={"error": error, "message": message})


def _byte_span(text: str, needle: str) -> tuple[int, int] | None:
    """UTF-8 offsets of `needle` as a whole word: '#climat' is not the start of '#climate'."""
    found = re.search(re.escape(needle) + r"(?!\w)", text)
    if found is None:
        return None
    at = len(text[: found.start()].encode())
    return (at, at + len(needle.encode()))


@dataclass
class _Session:
    did: str
    handle: str


class BlueskyDemo(DemoServer):
    name = "bluesky"

    def __init__(self, world: DemoWorld | None = None, *, keyless_search: bool = True) -> None:
        super().__init__()
        self.world = world or DemoWorld()
        self.keyless_search = keyless_search
        self.access_ttl = 2 * 3600.0  # seconds an access token lives (the PDS: about 2 h)
        self.fail_next: deque[DemoResponse] = deque()
        self._access: dict[str, tuple[_Session, float]] = {}  # token -> (who, expires at)
        self._refresh: dict[str, _Session] = {}
        self._serial = itertools.count(1)
        self._authors = {a.handle: a for a in self.world.authors("bluesky")}
        self._by_did = {did_of(h): a for h, a in self._authors.items()}
        self.add("POST", r"/xrpc/com\.atproto\.server\.createSession", self._create_session)
        self.add("POST", r"/xrpc/com\.atproto\.server\.refreshSession", self._refresh_session)
        reads = {
            "com.atproto.identity.resolveHandle": self._resolve_handle,
            "app.bsky.feed.searchPosts": self._search,
            "app.bsky.feed.getAuthorFeed": self._author_feed,
            "app.bsky.feed.getTimeline": self._timeline,
            "app.bsky.notification.listNotifications": self._notifications,
            "app.bsky.feed.getPosts": self._get_posts,
        }
        for nsid, handler in reads.items():
            self.add("GET", "/xrpc/" + re.escape(nsid), self._guarded(handler))

    # Steering (tests) ----------------------------------------------------------------------

    def expire_sessions(self) -> None:
        """Every access token is refused from now on (ExpiredToken); refresh tokens still work."""
        self._access.clear()

    def session_calls(self) -> int:
        return len(self.hits_of("/xrpc/com.atproto.server.createSession"))

    # Plumbing --------------------------------------------------------------------------------

    def _limits(self) -> dict[str, str]:
        reset = int(time.time() // WINDOW_S * WINDOW_S + WINDOW_S)
        return {
            "ratelimit-limit": str(WINDOW_LIMIT),
            "ratelimit-remaining": str(max(WINDOW_LIMIT - len(self.hits), 0)),
            "ratelimit-reset": str(reset),
            "ratelimit-policy": f"{WINDOW_LIMIT};w={WINDOW_S}",
        }

    def _answer(self, response: DemoResponse) -> DemoResponse:
        headers = dict(response.headers) if isinstance(response.headers, dict) else {}
        return DemoResponse(
            response.status, {**self._limits(), **headers}, response.body, response.json,
            response.delay,
        )  # fmt: skip

    def _guarded(self, handler: Any) -> Any:
        def handle(request: DemoRequest) -> DemoResponse:
            if self.fail_next:
                return self._answer(self.fail_next.popleft())
            return self._answer(handler(request))

        return handle

    def _viewer(self, request: DemoRequest) -> _Session | DemoResponse | None:
        """The signed-in account, None when keyless, or the error to answer."""
        header = request.headers.get("authorization", "")
        if not header:
            return None
        token = header.removeprefix("Bearer ").strip()
        found = self._access.get(token)
        if found is None or found[1] < time.time():
            return _error(400, "ExpiredToken", "Token has expired")
        if not request.origin.endswith("bsky.social"):
            return _error(401, "AuthenticationRequired", "the AppView takes no PDS tokens")
        return found[0]

    def _new_session(self, who: _Session, origin: str) -> dict[str, Any]:
        serial = next(self._serial)
        access = _jwt({"sub": who.did, "scope": "com.atproto.appPass", "n": serial,
                       "exp": int(time.time() + self.access_ttl)})  # fmt: skip
        refresh = _jwt({"sub": who.did, "scope": "com.atproto.refresh", "n": serial,
                        "exp": int(time.time() + 90 * 86400)})  # fmt: skip
        self._access[access] = (who, time.time() + self.access_ttl)
        self._refresh[refresh] = who
        return {
            "accessJwt": access,
            "refreshJwt": refresh,
            "handle": who.handle,
            "did": who.did,
            "didDoc": {
                "@context": ["https://www.w3.org/ns/did/v1"],
                "id": who.did,
                "alsoKnownAs": [f"at://{who.handle}"],
                "service": [
                    {
                        "id": "#atproto_pds",
                        "type": "AtprotoPersonalDataServer",
                        "serviceEndpoint": ENTRYWAY,
                    }
                ],
            },
            "active": True,
        }

    # Sessions ----------------------------------------------------------------------------------

    def _create_session(self, request: DemoRequest) -> DemoResponse:
        if self.fail_next:
            return self._answer(self.fail_next.popleft())
        try:
            body = request.json()
            identifier = str(body["identifier"]).lower().removeprefix("@")
            password = str(body["password"])
        except (ValueError, KeyError, TypeError):
            return self._answer(_error(400, "InvalidRequest", "Input must have identifier"))
        if not password or "." not in identifier:  # any password opens the demo's accounts
            return self._answer(
                _error(401, "AuthenticationRequired", "Invalid identifier or password")
            )
        who = _Session(did_of(identifier), identifier)
        return self._answer(DemoResponse(json=self._new_session(who, request.origin)))

    def _refresh_session(self, request: DemoRequest) -> DemoResponse:
        token = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        who = self._refresh.get(token)
        if who is None:
            return self._answer(_error(400, "ExpiredToken", "Token has expired"))
        return self._answer(DemoResponse(json=self._new_session(who, request.origin)))

    # Reads ---------------------------------------------------------------------------------------

    def _resolve_handle(self, request: DemoRequest) -> DemoResponse:
        handle = request.arg("handle").lower()
        if handle in self._authors or handle.endswith(".demo.bsky.social"):
            return DemoResponse(json={"did": did_of(handle)})
        return _error(400, "InvalidRequest", "Unable to resolve handle")

    def _search(self, request: DemoRequest) -> DemoResponse:
        viewer = self._viewer(request)
        if isinstance(viewer, DemoResponse):
            return viewer
        if viewer is None and not self.keyless_search:
            return _error(403, "Forbidden", "search requires authentication")
        terms = [t.lstrip("#").lower() for t in request.arg("q").split() if t.lstrip("#")]
        if not terms:
            return _error(400, "BadQueryString", "q is empty")
        found = [
            p for p in self._posts() if p.repost_of is None and all(_matches(p, t) for t in terms)
        ]
        page, cursor = self._page(found, request)
        return DemoResponse(json={"posts": [self.post_view(p) for p in page], **cursor})

    def _author_feed(self, request: DemoRequest) -> DemoResponse:
        actor = request.arg("actor").lower()
        author = self._authors.get(actor) or self._by_did.get(actor)
        if author is None:
            return _error(400, "InvalidRequest", "Profile not found")
        mine = [
            p
            for p in self._posts()
            if (p.reposted_by == author) or (p.author == author and p.repost_of is None)
        ]
        page, cursor = self._page(mine, request)
        return DemoResponse(json={"feed": [self.feed_view(p) for p in page], **cursor})

    def _timeline(self, request: DemoRequest) -> DemoResponse:
        viewer = self._viewer(request)
        if not isinstance(viewer, _Session):
            return viewer or _error(401, "AuthenticationRequired", "Authentication Required")
        page, cursor = self._page(self._posts(), request)
        return DemoResponse(json={"feed": [self.feed_view(p) for p in page], **cursor})

    def _notifications(self, request: DemoRequest) -> DemoResponse:
        viewer = self._viewer(request)
        if not isinstance(viewer, _Session):
            return viewer or _error(401, "AuthenticationRequired", "Authentication Required")
        reasons = set(request.query.get("reasons", [])) or {"mention", "reply"}
        found: list[tuple[str, DemoPost]] = []
        for post in self._posts():
            if post.repost_of is not None or post.author.handle == viewer.handle:
                continue
            parent = self.world.post(post.reply_to) if post.reply_to else None
            if "reply" in reasons and parent and parent.author.handle == viewer.handle:
                found.append(("reply", post))
            elif "mention" in reasons and viewer.handle in post.mentions:
                found.append(("mention", post))
        page, cursor = self._page([p for _r, p in found], request)
        reason_of = {p.id: r for r, p in found}
        return DemoResponse(
            json={
                "notifications": [
                    {
                        "uri": self.uri(p),
                        "cid": self.cid(p),
                        "author": self.profile(p.author),
                        "reason": reason_of[p.id],
                        "record": self.record(p),
                        "isRead": False,
                        "indexedAt": _iso(p.created_at),
                        "labels": [],
                    }
                    for p in page
                ],
                **cursor,
            }
        )

    def _get_posts(self, request: DemoRequest) -> DemoResponse:
        viewer = self._viewer(request)
        if isinstance(viewer, DemoResponse):
            return viewer
        views = []
        for uri in request.query.get("uris", [])[:25]:
            number = untid(uri.rpartition("/")[2])
            post = self.world.post(number) if number is not None else None
            if post is not None and post.platform == "bluesky" and post.repost_of is None:
                views.append(self.post_view(post))
        return DemoResponse(json={"posts": views})

    def _posts(self) -> list[DemoPost]:
        return self.world.posts("bluesky")

    def _page(
        self, posts: list[DemoPost], request: DemoRequest
    ) -> tuple[list[DemoPost], dict[str, str]]:
        """Newest first; the cursor is the last post's id (the next page is older)."""
        try:
            limit = max(1, min(100, int(request.arg("limit", "50"))))
        except ValueError:
            limit = 50
        before = request.arg("cursor")
        if before.isdigit():
            posts = [p for p in posts if p.id < int(before)]
        page = posts[:limit]
        more = len(posts) > limit
        return page, ({"cursor": str(page[-1].id)} if more and page else {})

    # Wire format -----------------------------------------------------------------------------

    def uri(self, post: DemoPost) -> str:
        return f"at://{did_of(post.author.handle)}/app.bsky.feed.post/{tid(post.id)}"

    def cid(self, post: DemoPost) -> str:
        return "bafyrei" + tid(post.id * 7919)

    def profile(self, author: DemoAuthor) -> dict[str, Any]:
        did = did_of(author.handle)
        return {
            "did": did,
            "handle": author.handle,
            "displayName": author.display_name,
            "avatar": AVATAR_URL,  # as its media: on the demo site, not Bluesky's CDN
            "labels": [],
            "createdAt": "2023-04-01T10:00:00.000Z",
        }

    def record(self, post: DemoPost) -> dict[str, Any]:
        record: dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "text": post.text,
            "createdAt": _iso(post.created_at),
            "langs": [post.lang],
            "facets": self._facets(post),
        }
        parent = self.world.post(post.reply_to) if post.reply_to else None
        if parent is not None:
            root = parent
            while root.reply_to and (up := self.world.post(root.reply_to)) is not None:
                root = up
            record["reply"] = {
                "root": {"uri": self.uri(root), "cid": self.cid(root)},
                "parent": {"uri": self.uri(parent), "cid": self.cid(parent)},
            }
        return record

    def _facets(self, post: DemoPost) -> list[dict[str, Any]]:
        facets: list[dict[str, Any]] = []

        def add(needle: str, feature: dict[str, Any]) -> None:
            span = _byte_span(post.text, needle)
            if span:
                facets.append({"index": {"byteStart": span[0], "byteEnd": span[1]},
                               "features": [feature]})  # fmt: skip

        for link in post.links:
            add(link, {"$type": "app.bsky.richtext.facet#link", "uri": link})
        for handle in post.mentions:
            add(f"@{handle}", {"$type": "app.bsky.richtext.facet#mention", "did": did_of(handle)})
        for tag in post.hashtags:
            add(f"#{tag}", {"$type": "app.bsky.richtext.facet#tag", "tag": tag})
        if post.hostile:  # a stranger's link facet pointing at script, over the first word
            first = post.text.split(" ", 1)[0]
            add(first, {"$type": "app.bsky.richtext.facet#link", "uri": "javascript:alert(1)"})
        return facets

    def _media_view(self, post: DemoPost) -> dict[str, Any] | None:
        images = [m for m in post.media if m.kind == "image"]
        if images:
            return {
                "$type": "app.bsky.embed.images#view",
                "images": [
                    {
                        "thumb": ARTICLE_ORIGIN + m.path,
                        "fullsize": ARTICLE_ORIGIN + m.path,
                        "alt": m.alt,
                        "aspectRatio": {"width": m.width, "height": m.height},
                    }
                    for m in images
                ],
            }
        if post.links or post.hostile:
            url = post.links[0] if post.links else "https://evil.example/"
            article = next((a for a in ARTICLES if a.url == url), None)
            return {
                "$type": "app.bsky.embed.external#view",
                "external": {
                    "uri": url,
                    "title": post.hostile or (article.title if article else url),
                    "description": article.summary if article else "",
                    "thumb": f"{ARTICLE_ORIGIN}/media/{article.image}" if article else "",
                },
            }
        return None

    def _embed(self, post: DemoPost) -> dict[str, Any] | None:
        media = self._media_view(post)
        quoted = self.world.post(post.quote_of) if post.quote_of else None
        if quoted is None:
            return media
        record_view = {
            "$type": "app.bsky.embed.record#view",
            "record": {
                "$type": "app.bsky.embed.record#viewRecord",
                "uri": self.uri(quoted),
                "cid": self.cid(quoted),
                "author": self.profile(quoted.author),
                "value": self.record(quoted),
                "embeds": [e for e in [self._media_view(quoted)] if e],
                "indexedAt": _iso(quoted.created_at),
                **self._counts(quoted),
            },
        }
        if media is None:
            return record_view
        return {"$type": "app.bsky.embed.recordWithMedia#view", "record": record_view,
                "media": media}  # fmt: skip

    def _counts(self, post: DemoPost) -> dict[str, int]:
        m = post.metrics
        return {"replyCount": m.get("replies", 0), "repostCount": m.get("reposts", 0),
                "likeCount": m.get("likes", 0), "quoteCount": m.get("quotes", 0)}  # fmt: skip

    def post_view(self, post: DemoPost) -> dict[str, Any]:
        original = self.world.post(post.repost_of) if post.repost_of else None
        post = original or post
        view: dict[str, Any] = {
            "$type": "app.bsky.feed.defs#postView",
            "uri": self.uri(post),
            "cid": self.cid(post),
            "author": self.profile(post.author),
            "record": self.record(post),
            **self._counts(post),
            "indexedAt": _iso(post.created_at),
            "labels": [],
        }
        embed = self._embed(post)
        if embed:
            view["embed"] = embed
        return view

    def feed_view(self, post: DemoPost) -> dict[str, Any]:
        entry: dict[str, Any] = {"post": self.post_view(post)}
        if post.reposted_by is not None:
            entry["reason"] = {
                "$type": "app.bsky.feed.defs#reasonRepost",
                "by": self.profile(post.reposted_by),
                "uri": f"at://{did_of(post.reposted_by.handle)}/app.bsky.feed.repost/{tid(post.id)}",
                "cid": self.cid(post),
                "indexedAt": _iso(post.created_at),
            }
        parent = self.world.post(post.reply_to) if post.reply_to else None
        if parent is not None:
            entry["reply"] = {"root": self.post_view(parent), "parent": self.post_view(parent)}
        return entry


def _matches(post: DemoPost, term: str) -> bool:
    """Search as Bluesky's does, roughly: the word in the text or a hashtag of the post."""
    return term in post.text.lower() or term in (t.lower() for t in post.hashtags)
