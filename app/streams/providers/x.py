"""X (API v2): recent search for keyword columns, user timelines for accounts. Off by default.

X bills reads per post, so every X source is gated by the workspace's
`x_post_reads` ledger (cap 0 = off until an admin sets one): the scheduler
reserves up to a page of posts before the call, asks X for no more than
that (`max_results`, 10..100), and gives back what was not read, so a
workspace's spend stops exactly at its cap. Before a keyword column on X is
created, `estimate` asks X how many posts matched the query in the last 7
days (`tweets/counts/recent`), and the column is refused (422) when the
expected reads do not fit the budget left.

Auth is the workspace's app bearer token. Errors: 401 or a 403 for the
project's access -> CredentialRejected; 402 (no credits) -> BudgetExhausted;
429 -> RateLimited until `x-rate-limit-reset`. Post text is plain text: it
becomes AST text and links (t.co links replaced by their expanded address).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from app.core.i18n import _
from app.egress import RateLimited, egress
from app.safe_content import from_text, to_text
from app.safe_content.urls import http_url
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
from app.streams.types import SourceKind

API = "https://api.x.com/2"
TWEET_FIELDS = "created_at,public_metrics,author_id,lang,entities,attachments"
SEARCH_MIN, TIMELINE_MIN, MAX_RESULTS = 10, 5, 100  # X's bounds on max_results
_ID = re.compile(r"[0-9]{1,25}")
_METRICS = {
    "reply_count": "replies",
    "retweet_count": "reposts",
    "like_count": "likes",
    "quote_count": "quotes",
    "impression_count": "views",
}


class XProvider(BaseProvider):
    name = "x"
    kinds = frozenset({SourceKind.SEARCH, SourceKind.AUTHOR})
    needs_key = frozenset({SourceKind.SEARCH, SourceKind.AUTHOR})

    def __init__(self, *, api: str = API) -> None:
        self.api = api.rstrip("/")

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return "api.x.com"

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        params = {"query": request.query, "max_results": str(_clamp(request.limit, SEARCH_MIN))}
        return await self._posts("tweets/search/recent", params, credential, request.cursor)

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        if request.actor is None or not _ID.fullmatch(request.actor.ref):
            raise ProviderError(_("The X account is unknown."))
        params = {"max_results": str(_clamp(request.limit, TIMELINE_MIN))}
        path = f"users/{request.actor.ref}/tweets"
        return await self._posts(path, params, credential, request.cursor)

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        if credential is None:
            raise CredentialRejected(_("Reading X needs the workspace's X bearer token."))
        data = await self._get(f"users/by/username/{quote(handle)}", {}, credential)
        user = _dict(data.get("data"))
        if not _ID.fullmatch(str(user.get("id", ""))):
            return None  # X answers 200 with an `errors` list for an unknown user
        return Actor(
            ref=str(user["id"]), handle=handle, display_name=str(user.get("name", ""))[:200]
        )

    async def estimate(self, credential: Credential, query: str) -> int:
        """Posts that matched `query` in the last 7 days (X's counts endpoint)."""
        data = await self._get(
            "tweets/counts/recent", {"query": query, "granularity": "day"}, credential
        )
        total = _dict(data.get("meta")).get("total_tweet_count")
        if isinstance(total, bool) or not isinstance(total, int) or total < 0:
            raise ProviderError(_("X did not say how many posts match."))
        return total

    async def _posts(
        self, path: str, params: dict[str, str], credential: Credential | None, cursor: str
    ) -> Page:
        if credential is None:
            raise CredentialRejected(_("Reading X needs the workspace's X bearer token."))
        params = {
            **params,
            "tweet.fields": TWEET_FIELDS,
            "expansions": "author_id,attachments.media_keys",
            "user.fields": "username,name",
            "media.fields": "url,preview_image_url,type,alt_text",
        }
        if _ID.fullmatch(cursor):
            params["since_id"] = cursor
        data = await self._get(path, params, credential)
        posts = [p for p in data.get("data") or [] if isinstance(p, dict)]
        includes = _dict(data.get("includes"))
        users = {str(u.get("id")): u for u in includes.get("users") or [] if isinstance(u, dict)}
        media = {
            str(m.get("media_key")): m for m in includes.get("media") or [] if isinstance(m, dict)
        }
        items = [i for p in posts if (i := post_item(p, users, media)) is not None]
        newest = str(_dict(data.get("meta")).get("newest_id", ""))
        return Page(
            items=tuple(items),
            cursor=newest if _ID.fullmatch(newest) else "",
            dropped=len(posts) - len(items),
            units=len(posts),  # X bills every post it returned, used or not
        )

    async def _get(
        self, path: str, params: dict[str, str], credential: Credential
    ) -> dict[str, Any]:
        url = f"{self.api}/{path}" + (f"?{urlencode(params)}" if params else "")
        fetched = await egress().fetch(
            url,
            headers={"Authorization": f"Bearer {credential.secret}", "Accept": "application/json"},
            accept_statuses=frozenset({400, 401, 402, 403, 429}),
        )
        data = json_object(fetched, "X")
        if fetched.status == 200:
            return data
        now = datetime.now(UTC)
        if fetched.status == 429:
            reset = _int(fetched.headers.get("x-rate-limit-reset"))
            wait = max(1.0, reset - now.timestamp()) if reset else None
            raise RateLimited(fetched.url, _("X asked us to wait."), wait)
        if fetched.status == 402:
            raise BudgetExhausted(
                _("The X account has no credits left; reading resumes when it has."),
                now + timedelta(hours=1),
            )
        if fetched.status in (401, 403):
            raise CredentialRejected(
                _("X refused the workspace's bearer token, or its project may not use this API.")
            )
        detail = str(data.get("detail") or data.get("title") or "")[:200]
        raise ProviderError(_("X refused the request: %(d)s") % {"d": detail or fetched.status})


def post_item(
    post: dict[str, Any], users: dict[str, dict[str, Any]], media: dict[str, dict[str, Any]]
) -> RemoteItem | None:
    post_id = str(post.get("id", ""))
    created = _time(str(post.get("created_at", "")))
    if not _ID.fullmatch(post_id) or created is None:
        return None
    author = users.get(str(post.get("author_id", "")), {})
    username = str(author.get("username", ""))
    text = expand_links(str(post.get("text", "")), _dict(post.get("entities")))
    content = from_text(text)
    metrics = {
        name: float(value)
        for field, name in _METRICS.items()
        if isinstance(value := _dict(post.get("public_metrics")).get(field), int)
        and not isinstance(value, bool)
        and value >= 0
    }
    refs = []
    for key in _dict(post.get("attachments")).get("media_keys") or []:
        found = media.get(str(key), {})
        url = http_url(str(found.get("url") or found.get("preview_image_url") or ""))
        if url:
            kind = "image" if found.get("type") == "photo" else "video"
            refs.append(MediaRef(kind, url, alt=str(found.get("alt_text") or "")[:500]))
    permalink = f"https://x.com/{quote(username or 'i')}/status/{post_id}"
    return RemoteItem(
        remote_id=post_id,
        canonical_id=canonical_id(post_id),
        author_handle=f"@{username}" if username else str(post.get("author_id", "")),
        author_ref=f"x:{post.get('author_id', '')}",
        created_at=created,
        content=content,
        plain_text=to_text(content),
        url=permalink,
        media=tuple(refs),
        metrics=metrics,
        lang=language_tag(post.get("lang")),  # X's detection; "und"/"qme"... name no language
    )


def expand_links(text: str, entities: dict[str, Any]) -> str:
    """t.co links replaced by the address they stand for (when it is http(s))."""
    for entity in entities.get("urls") or []:
        if not isinstance(entity, dict):
            continue
        short, expanded = str(entity.get("url", "")), http_url(str(entity.get("expanded_url", "")))
        if short and expanded:
            text = text.replace(short, expanded)
    return text


def _clamp(limit: int, least: int) -> int:
    return max(least, min(MAX_RESULTS, limit))


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _int(value: str | None) -> int:
    return int(value) if value and value.isdigit() else 0


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
