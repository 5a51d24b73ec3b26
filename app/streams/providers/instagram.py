"""Instagram (Graph API hashtag search): one #hashtag per keyword column. Off by default.

Instagram lets a Business or Creator account query at most 30 distinct
hashtags in a rolling 7 days; a hashtag counts from its first query for 7
days and querying it again meanwhile is free. The scheduler keeps that
ledger per workspace (`ig_hashtag_window`, rolling): a 31st hashtag waits as
`rate_limited` until the oldest one's 7 days are over.

Calls: `ig_hashtag_search?user_id=&q=` finds the hashtag's id (kept in the
source's cursor, ids are global and static), then
`{hashtag-id}/recent_media` lists the last 24 hours' posts. The workspace
key is "<instagram business account id>:<user access token>". Captions are
plain text; error code 190 (token) -> CredentialRejected, 4/17/32/613
(rate limits) -> RateLimited.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from app.core.i18n import _
from app.egress import RateLimited, egress
from app.safe_content import from_text, to_text
from app.safe_content.urls import http_url
from app.streams.providers import (
    BaseProvider,
    Credential,
    CredentialRejected,
    FetchRequest,
    MediaRef,
    Page,
    ProviderError,
    RemoteItem,
    canonical_id,
    json_object,
)
from app.streams.types import SourceKind

API = "https://graph.facebook.com/v21.0"
FIELDS = "id,caption,media_type,media_url,permalink,timestamp,like_count,comments_count"
_ID = re.compile(r"[0-9]{1,30}")
_TOKEN_CODES = frozenset({102, 190, 10, 200})
_RATE_CODES = frozenset({4, 17, 32, 613})


class InstagramProvider(BaseProvider):
    name = "instagram"
    kinds = frozenset({SourceKind.SEARCH})
    needs_key = frozenset({SourceKind.SEARCH})

    def __init__(self, *, api: str = API) -> None:
        self.api = api.rstrip("/")

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return "graph.facebook.com"

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        user_id, token = _account(credential)
        known = _cursor(request.cursor)
        tag_id = known.get("hashtag_id", "")
        if not _ID.fullmatch(tag_id):
            found = await self._get(
                "ig_hashtag_search", {"user_id": user_id, "q": request.query}, token
            )
            ids = [str(d.get("id", "")) for d in found.get("data") or [] if isinstance(d, dict)]
            tag_id = next((i for i in ids if _ID.fullmatch(i)), "")
            if not tag_id:
                raise ProviderError(_("Instagram knows no hashtag #%(t)s.") % {"t": request.query})
        params = {"user_id": user_id, "fields": FIELDS, "limit": str(min(request.limit, 50))}
        data = await self._get(f"{quote(tag_id)}/recent_media", params, token)
        posts = [p for p in data.get("data") or [] if isinstance(p, dict)]
        items = [i for p in posts if (i := media_item(p)) is not None]
        return Page(
            items=tuple(items),
            cursor=json.dumps({"hashtag_id": tag_id}),
            dropped=len(posts) - len(items),
        )

    async def _get(self, path: str, params: dict[str, str], token: str) -> dict[str, Any]:
        fetched = await egress().fetch(
            f"{self.api}/{path}?{urlencode({**params, 'access_token': token})}",
            headers={"Accept": "application/json"},
            accept_statuses=frozenset({400, 401, 403}),
        )
        data = json_object(fetched, "Instagram")
        error = data.get("error")
        if fetched.status == 200 and not isinstance(error, dict):
            return data
        error = error if isinstance(error, dict) else {}
        code = error.get("code")
        if code in _RATE_CODES:
            raise RateLimited(fetched.url, _("Instagram asked us to slow down."), None)
        if code in _TOKEN_CODES or fetched.status == 401:
            raise CredentialRejected(
                _("Instagram refused the workspace's access token; connect the account again.")
            )
        message = str(error.get("message", ""))[:200]
        raise ProviderError(_("Instagram refused the request: %(m)s") % {"m": message})


def media_item(post: dict[str, Any]) -> RemoteItem | None:
    media_id = str(post.get("id", ""))
    created = _time(str(post.get("timestamp", "")))
    if not _ID.fullmatch(media_id) or created is None:
        return None
    content = from_text(str(post.get("caption") or ""))
    url = http_url(str(post.get("permalink", ""))) or ""
    media_url = http_url(str(post.get("media_url", "")))
    kind = "video" if post.get("media_type") == "VIDEO" else "image"
    metrics = {
        name: float(value)
        for field, name in (("like_count", "likes"), ("comments_count", "replies"))
        if isinstance(value := post.get(field), int) and not isinstance(value, bool) and value >= 0
    }
    return RemoteItem(
        remote_id=media_id,
        canonical_id=canonical_id(media_id),
        author_handle="",  # hashtag search does not name the author
        created_at=created,
        content=content,
        plain_text=to_text(content),
        url=url,
        media=(MediaRef(kind, media_url),) if media_url else (),
        metrics=metrics,
    )


def _account(credential: Credential | None) -> tuple[str, str]:
    user_id, _sep, token = (credential.secret if credential else "").partition(":")
    if not _ID.fullmatch(user_id) or not token:
        raise CredentialRejected(
            _("Instagram needs the workspace key as <business account id>:<access token>.")
        )
    return user_id, token


def _cursor(cursor: str) -> dict[str, str]:
    try:
        value = json.loads(cursor) if cursor else {}
    except ValueError:
        return {}
    return {k: str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _time(value: str) -> datetime | None:
    # Graph API times look like 2026-11-30T10:00:00+0000
    try:
        parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
