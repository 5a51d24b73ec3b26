"""MastodonDemo: one demo Mastodon instance, speaking REST v1 JSON and `@user.rss`.

Every instance of the demo world federates everything: a hashtag timeline on
mastodon.social and on chaos.social shows the same statuses (with each
instance's own local ids, the same `uri`), which is what cross-instance dedup
is for. Local ids grow with time (`post.id * 8 + instance number`), so
`max_id`/`since_id`/`min_id` page as on a real instance, and the `Link`
header names the origin the client asked for (behind EGRESS_DIVERT).

    GET /api/v1/timelines/tag/:tag      public; `tag_auth_required` -> 401 without a token
    GET /api/v1/accounts/lookup?acct=   404 when unknown
    GET /api/v1/accounts/:id/statuses   exclude_replies, exclude_reblogs
    GET /api/v1/accounts/verify_credentials, /api/v1/timelines/home,
        /api/v1/notifications?types[]=mention   Bearer DEMO_TOKEN (or one in `tokens`)
    GET /@user.rss                       RSS 2.0 of a local account

Rate limits as Mastodon sends them (X-RateLimit-Limit/Remaining/Reset, 429 when
spent; `rate_limit` per `rate_window` seconds); `fail_status` answers every API
request with that status (tests, chaos in the demo).
"""

from __future__ import annotations

import html
import re
import time
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any
from urllib.parse import unquote, urlencode

from app.demo.content import (
    ARTICLE_ORIGIN,
    AVATAR_URL,
    MASTODON_INSTANCES,
    DemoAuthor,
    DemoPost,
    DemoWorld,
)
from app.demo.http import DemoRequest, DemoResponse, DemoServer

DEMO_TOKEN = "demo-access-token"  # noqa: S105 -- the demo connection's token, not a secret
PAGE_DEFAULT, PAGE_MAX = 20, 40
_TOKENS = re.compile(r"(#\w+)|(@[\w.-]+@[\w.-]+\w)|(https?://[^\s<]+)")


class MastodonDemo(DemoServer):
    """One instance (`host`) of the demo world's Mastodon."""

    def __init__(self, world: DemoWorld, host: str = MASTODON_INSTANCES[0]) -> None:
        super().__init__()
        self.world = world
        self.host = host
        self.name = f"mastodon:{host}"
        self.number = MASTODON_INSTANCES.index(host) if host in MASTODON_INSTANCES else 7
        self.tokens = {DEMO_TOKEN}
        self.rate_limit = 300
        self.rate_window = 300.0
        self.fail_status: int | None = None
        self.tag_auth_required = False
        self._window = (0.0, 0)  # (started, requests counted)
        authors = world.authors("mastodon")
        self.accounts = {a.handle: 1000 + n for n, a in enumerate(authors)}
        self.by_id = {1000 + n: a for n, a in enumerate(authors)}
        local = [a for a in authors if a.instance == host] or authors
        self.me = local[0]  # whose the demo token is
        self.add("GET", r"/api/v1/timelines/tag/(?P<tag>[^/]+)", self._tag)
        self.add("GET", r"/api/v1/accounts/lookup", self._lookup)
        self.add("GET", r"/api/v1/accounts/verify_credentials", self._verify)
        self.add("GET", r"/api/v1/accounts/(?P<id>\d+)/statuses", self._account_statuses)
        self.add("GET", r"/api/v1/timelines/home", self._home)
        self.add("GET", r"/api/v1/notifications", self._notifications)
        self.add("GET", r"/@(?P<user>[A-Za-z0-9_.-]+)\.rss", self._rss)

    # Routes ---------------------------------------------------------------------------

    async def respond(self, request: DemoRequest) -> DemoResponse:
        if not request.path.startswith("/api/"):
            return await super().respond(request)
        if self.fail_status is not None:
            return DemoResponse(self.fail_status, json={"error": "the demo instance fails"})
        limit_headers, spent = self._count()
        if spent:
            return DemoResponse(429, limit_headers, json={"error": "Too many requests"})
        answer = await super().respond(request)
        headers = dict(
            answer.headers.items() if isinstance(answer.headers, dict) else answer.headers
        )
        return DemoResponse(answer.status, {**headers, **limit_headers}, answer.body, answer.json)

    def _tag(self, request: DemoRequest) -> DemoResponse:
        if self.tag_auth_required and not self._authorised(request):
            return DemoResponse(401, json={"error": "The access token is invalid"})
        tag = unquote(request.params["tag"]).lower()
        posts = [
            p
            for p in self._posts()
            if p.reposted_by is None
            and (tag in {t.lower() for t in p.hashtags} or tag in {t.lower() for t in p.topics})
        ]
        return self._page(request, [(self.local_id(p), self.status(p)) for p in posts])

    def _lookup(self, request: DemoRequest) -> DemoResponse:
        acct = request.arg("acct").removeprefix("@")
        handle = acct if "@" in acct else f"{acct}@{self.host}"
        if handle not in self.accounts:
            return DemoResponse(404, json={"error": "Record not found"})
        return DemoResponse(json=self.account(self.by_id[self.accounts[handle]]))

    def _verify(self, request: DemoRequest) -> DemoResponse:
        if not self._authorised(request):
            return DemoResponse(401, json={"error": "The access token is invalid"})
        return DemoResponse(json=self.account(self.me))

    def _account_statuses(self, request: DemoRequest) -> DemoResponse:
        author = self.by_id.get(int(request.params["id"]))
        if author is None:
            return DemoResponse(404, json={"error": "Record not found"})
        posts = [
            p
            for p in self._posts()
            if (p.author == author and p.reposted_by is None)
            or (p.reposted_by == author and request.arg("exclude_reblogs") != "true")
        ]
        return self._page(request, [(self.local_id(p), self.status(p)) for p in posts])

    def _home(self, request: DemoRequest) -> DemoResponse:
        if not self._authorised(request):
            return DemoResponse(401, json={"error": "The access token is invalid"})
        followed = {a.handle for n, a in enumerate(self.world.authors("mastodon")) if n % 2 == 0}
        posts = [p for p in self._posts() if (p.reposted_by or p.author).handle in followed]
        return self._page(request, [(self.local_id(p), self.status(p)) for p in posts])

    def _notifications(self, request: DemoRequest) -> DemoResponse:
        if not self._authorised(request):
            return DemoResponse(401, json={"error": "The access token is invalid"})
        types = request.query.get("types[]") or ["mention"]
        if "mention" not in types:
            return self._page(request, [])
        me = self.me.handle
        posts = [p for p in self._posts() if p.reposted_by is None and me in p.mentions]
        return self._page(
            request,
            [
                (
                    self.local_id(p),
                    {
                        "id": self.local_id(p),
                        "type": "mention",
                        "created_at": _iso(p.created_at),
                        "account": self.account(p.author),
                        "status": self.status(p),
                    },
                )
                for p in posts
            ],
        )

    def _rss(self, request: DemoRequest) -> DemoResponse:
        handle = f"{request.params['user'].lower()}@{self.host}"
        author = self.by_id.get(self.accounts.get(handle, 0))
        if author is None:
            return DemoResponse(404, body="Not found\n")
        posts = [p for p in self._posts() if p.author == author and p.reposted_by is None][:20]
        items = "".join(
            f'<item><guid isPermaLink="true">{html.escape(self.status_url(p))}</guid>'
            f"<link>{html.escape(self.status_url(p))}</link>"
            f"<pubDate>{format_datetime(p.created_at)}</pubDate>"
            f"<description>{html.escape(self.content(p))}</description></item>"
            for p in posts
        )
        user = author.handle.partition("@")[0]
        body = (
            '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel>'
            f"<title>{html.escape(author.display_name)}</title>"
            f"<link>https://{self.host}/@{user}</link>"
            f"<description>Public posts from @{html.escape(author.handle)}</description>"
            f"{items}</channel></rss>"
        )
        return DemoResponse(
            headers={"Content-Type": "application/rss+xml; charset=utf-8"}, body=body
        )

    # Rate limits and tokens -----------------------------------------------------------

    def _count(self) -> tuple[dict[str, str], bool]:
        now = time.time()
        started, used = self._window
        if now - started >= self.rate_window:
            started, used = now, 0
        used += 1
        self._window = (started, used)
        reset = datetime.fromtimestamp(started + self.rate_window, UTC)
        headers = {
            "X-RateLimit-Limit": str(self.rate_limit),
            "X-RateLimit-Remaining": str(max(self.rate_limit - used, 0)),
            "X-RateLimit-Reset": reset.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        return headers, used > self.rate_limit

    def _authorised(self, request: DemoRequest) -> bool:
        scheme, _sep, token = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and token in self.tokens

    # Paging ---------------------------------------------------------------------------

    def _page(
        self, request: DemoRequest, entries: list[tuple[str, dict[str, Any]]]
    ) -> DemoResponse:
        """Entries (newest first) as Mastodon pages them, with the Link header."""
        try:
            limit = max(1, min(int(request.arg("limit", str(PAGE_DEFAULT))), PAGE_MAX))
        except ValueError:
            limit = PAGE_DEFAULT
        order = _order
        if request.arg("max_id"):
            entries = [e for e in entries if order(e[0]) < order(request.arg("max_id"))]
        if request.arg("since_id"):
            entries = [e for e in entries if order(e[0]) > order(request.arg("since_id"))]
        if request.arg("min_id"):
            newer = [e for e in entries if order(e[0]) > order(request.arg("min_id"))]
            page = newer[-limit:]  # the ones right after min_id, still newest first
        else:
            page = entries[:limit]
        headers: dict[str, str] = {}
        if page:
            base = {
                k: v for k, v in request.query.items() if k not in ("max_id", "min_id", "since_id")
            }

            def link(**cursor: str) -> str:
                query = urlencode(
                    [*((k, v) for k, vs in base.items() for v in vs), *cursor.items()]
                )
                return f"{request.origin}{request.path}?{query}"

            headers["Link"] = (
                f'<{link(max_id=page[-1][0])}>; rel="next", <{link(min_id=page[0][0])}>; rel="prev"'
            )
        return DemoResponse(headers=headers, json=[body for _id, body in page])

    # The wire format ------------------------------------------------------------------

    def _posts(self) -> list[DemoPost]:
        return self.world.posts("mastodon")

    def local_id(self, post: DemoPost) -> str:
        """This instance's id of a status: grows with time, differs between instances."""
        return str(post.id * 8 + self.number)

    def home_id(self, post: DemoPost) -> str:
        home = post.author.instance
        number = MASTODON_INSTANCES.index(home) if home in MASTODON_INSTANCES else 7
        return str(post.id * 8 + number)

    def status_url(self, post: DemoPost) -> str:
        user, _sep, home = post.author.handle.partition("@")
        return f"https://{home}/@{user}/{self.home_id(post)}"

    def account(self, author: DemoAuthor) -> dict[str, Any]:
        user, _sep, home = author.handle.partition("@")
        return {
            "id": str(self.accounts[author.handle]),
            "username": user,
            "acct": user if home == self.host else author.handle,
            "display_name": author.display_name,
            "url": f"https://{home}/@{user}",
            "note": f"<p>{html.escape(author.bio)}</p>",
            "avatar": AVATAR_URL,
        }

    def status(self, post: DemoPost) -> dict[str, Any]:
        if post.reposted_by is not None and post.repost_of is not None:
            original = self.world.post(post.repost_of)
            if original is not None:
                user, _sep, home = post.reposted_by.handle.partition("@")
                return {
                    **self._status_fields(original),
                    "id": self.local_id(post),
                    "uri": f"https://{home}/users/{user}/statuses/{post.id * 8}/activity",
                    "url": None,
                    "created_at": _iso(post.created_at),
                    "account": self.account(post.reposted_by),
                    "content": "",
                    "language": None,  # a boost says nothing itself: its status does
                    "reblog": self.status(original),
                }
        return self._status_fields(post)

    def _status_fields(self, post: DemoPost) -> dict[str, Any]:
        user, _sep, home = post.author.handle.partition("@")
        metrics = post.metrics
        parent = self.world.post(post.reply_to) if post.reply_to else None
        return {
            "id": self.local_id(post),
            "uri": f"https://{home}/users/{user}/statuses/{self.home_id(post)}",
            "url": self.status_url(post),
            "created_at": _iso(post.created_at),
            "account": self.account(post.author),
            "content": self.content(post),
            "spoiler_text": post.content_warning,
            "sensitive": bool(post.content_warning),
            "visibility": "public",
            "language": post.lang,
            "in_reply_to_id": self.local_id(parent) if parent else None,
            "media_attachments": [
                {
                    "id": f"{post.id}{n}",
                    "type": m.kind,
                    "url": f"{ARTICLE_ORIGIN}{m.path}",
                    "preview_url": f"{ARTICLE_ORIGIN}{m.path}",
                    "remote_url": None,
                    "description": m.alt,
                    "meta": {"original": {"width": m.width, "height": m.height}},
                }
                for n, m in enumerate(post.media)
            ],
            "tags": [
                {"name": t.lower(), "url": f"https://{self.host}/tags/{t.lower()}"}
                for t in post.hashtags
            ],
            "mentions": [{"acct": h, "url": _profile(h)} for h in post.mentions],
            "emojis": [],
            "replies_count": metrics.get("replies", 0),
            "reblogs_count": metrics.get("reposts", 0),
            "favourites_count": metrics.get("likes", 0),
            "quotes_count": metrics.get("quotes", 0),
            "reblog": None,
            "card": None,
            "poll": None,
        }

    def content(self, post: DemoPost) -> str:
        """The status HTML as Mastodon writes it (hashtags, mentions, shortened links),
        with the post's hostile markup where a hostile server would put it."""

        def token(found: re.Match[str]) -> str:
            tag, mention, url = found.groups()
            if tag:
                name = tag[1:]
                return (
                    f'<a href="https://{self.host}/tags/{name.lower()}" class="mention hashtag"'
                    f' rel="tag">#<span>{name}</span></a>'
                )
            if mention:
                user, _sep, home = mention[1:].partition("@")
                return (
                    f'<span class="h-card"><a href="https://{home}/@{user}" class="u-url mention">'
                    f"@<span>{user}</span></a></span>"
                )
            scheme, _sep, rest = url.partition("://")
            return (
                f'<a href="{url}" rel="nofollow noopener noreferrer" target="_blank">'
                f'<span class="invisible">{scheme}://</span><span class="ellipsis">{rest[:30]}</span>'
                f'<span class="invisible">{rest[30:]}</span></a>'
            )

        body = _TOKENS.sub(token, html.escape(post.text, quote=False))
        return f"<p>{body}</p>{post.hostile}"


def _order(value: str) -> tuple[int, str]:
    return (len(value), value) if value.isdigit() else (0, value)


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _profile(handle: str) -> str:
    user, _sep, home = handle.partition("@")
    return f"https://{home}/@{user}"
