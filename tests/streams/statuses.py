"""The network edge for wall tests: a loopback server speaking Mastodon's status JSON, and a
provider that reads it through egress (the platform providers arrive in the next issue).

`StatusProvider` registers under a catalogue name ("mastodon" by default) so the wall treats it
like the real one: connections, home timelines, hashtag search, the ledger of its platform.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlsplit

from app.egress import egress
from app.safe_content import from_html, to_text
from app.streams.platforms import canonical_host
from app.streams.providers import (
    Actor,
    BaseProvider,
    Credential,
    FetchRequest,
    MediaRef,
    Page,
    RemoteItem,
)
from app.streams.types import SourceKind
from tests.egress.servers import Reply

BASE_TIME = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def status(
    n: int, *, host: str = "social.example", minutes: int | None = None, favourites: int = 0
) -> dict:
    at = BASE_TIME - timedelta(minutes=n if minutes is None else minutes)
    return {
        "id": str(1000 + n),
        "uri": f"https://{host}/users/alice/statuses/{1000 + n}",
        "url": f"https://{host}/@alice/{1000 + n}",
        "created_at": at.isoformat().replace("+00:00", "Z"),
        "content": f'<p>Status {n} about <a href="https://{host}/tags/acampada" class="mention hashtag">#<span>acampada</span></a>'
        f' <script>alert(1)</script><a href="javascript:alert(1)">x</a></p>',
        "account": {"acct": "alice", "url": f"https://{host}/@alice"},
        "favourites_count": favourites,
        "reblogs_count": 1,
        "replies_count": 0,
        "media_attachments": [
            {"type": "image", "url": f"https://{host}/media/{n}.png", "description": "a photo"}
        ],
    }


def statuses_reply(items: list[dict]) -> Reply:
    return Reply(headers=[("Content-Type", "application/json")], body=json.dumps(items).encode())


class StatusProvider(BaseProvider):
    """Mastodon-shaped: home/mentions with the connection's token, hashtag search keyless."""

    kinds = frozenset({SourceKind.HOME, SourceKind.MENTIONS, SourceKind.SEARCH})

    def __init__(self, base_url: str, name: str = "mastodon") -> None:
        self.name = name
        self.base_url = base_url
        self.host = canonical_host(urlsplit(base_url).netloc) or ""
        self.calls: list[tuple[str, str]] = []  # (path, bearer)

    async def _get(self, path: str, credential: Credential | None) -> Page:
        headers = (
            {"Authorization": f"Bearer {credential.secret}"}
            if credential and credential.secret
            else {}
        )
        self.calls.append((path, credential.secret if credential else ""))
        fetched = await egress().fetch(self.base_url + path, headers=headers)
        items = []
        for raw in json.loads(fetched.content):
            content = from_html(raw["content"])
            # Instance-based: the object's id is qualified by its home host (from its URI).
            home = canonical_host(urlsplit(raw["uri"]).netloc) or self.host
            items.append(
                RemoteItem(
                    remote_id=raw["id"],
                    canonical_id=f"{home}/{raw['id']}",
                    author_handle=f"@{raw['account']['acct']}@{home}",
                    author_ref=f"{self.name}:{raw['account']['acct']}@{home}",
                    created_at=datetime.fromisoformat(raw["created_at"].replace("Z", "+00:00")),
                    content=content,
                    plain_text=to_text(content),
                    url=raw["url"],
                    media=tuple(
                        MediaRef(m["type"], m["url"], m.get("description") or "")
                        for m in raw["media_attachments"]
                    ),
                    metrics={
                        "favourites": raw["favourites_count"],
                        "reblogs": raw["reblogs_count"],
                        "replies": raw["replies_count"],
                    },
                )
            )
        return Page(items=tuple(items))

    async def home(self, credential: Credential | None, request: FetchRequest) -> Page:
        return await self._get("/api/v1/timelines/home", credential)

    async def mentions(self, credential: Credential | None, request: FetchRequest) -> Page:
        return await self._get("/api/v1/notifications", credential)

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        return await self._get(f"/api/v1/timelines/tag/{quote(request.query)}", credential)

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        return None
