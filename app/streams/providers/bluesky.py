"""Bluesky: XRPC JSON from the public AppView (keyless) or a PDS session (app password).

Calls (lexicons app.bsky.* and com.atproto.*):
    search       app.bsky.feed.searchPosts?sort=latest  (a session if the workspace has an
                 app password; keyless the AppView often answers 403: `unsupported`)
    author_feed  app.bsky.feed.getAuthorFeed            (keyless, public AppView)
    home         app.bsky.feed.getTimeline              (the connection's session)
    mentions     app.bsky.notification.listNotifications, reasons mention/reply, the posts
                 hydrated by app.bsky.feed.getPosts     (the connection's session)
    resolve      com.atproto.identity.resolveHandle     (keyless, public AppView)

Sessions: the PDS limits createSession (30 per 5 min, 300 a day), so a login happens once
(when the account is connected, or the first time a workspace key is used); its tokens are
sealed back into the same vault row through `Credential.save`, and later polls use the
access token until it expires, then refreshSession. Only a refused refresh logs in again.

Posts become items: text and facets through app.safe_content.from_facets (UTF-8 byte
offsets), reposts unwrapped (the reposter in `reposted_by`, not the text), images/video/external
cards as media refs, quoted posts and cards as nested Quote blocks. Items are ordered by
the server's `indexedAt` (the client's `createdAt` can say anything). The source's cursor
remembers the newest entry seen; the next poll pages back only until it meets it again.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from app.core.i18n import _
from app.egress import RateLimited, egress
from app.egress.policy import parse_retry_after
from app.safe_content import (
    Block,
    Document,
    Em,
    Inline,
    Label,
    Link,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_facets,
    http_url,
    to_text,
)
from app.safe_content.fit import fit
from app.safe_content.textutil import clean_text
from app.streams.providers import (
    AccountNotFound,
    Actor,
    BaseProvider,
    Connected,
    Credential,
    FetchRequest,
    MediaRef,
    Page,
    ProviderError,
    ProviderRefused,
    RemoteItem,
    canonical_id,
    language_tag,
)
from app.streams.types import SourceKind

PUBLIC_APPVIEW = "https://public.api.bsky.app"
ENTRYWAY = "bsky.social"  # where an account without a stated PDS host signs in
APP = "https://bsky.app"
PAGE_MAX = 100  # the lexicons' maximum `limit`
PAGES_PER_POLL = 3  # an incremental poll pages back at most this far to meet its cursor
HYDRATE_MAX = 25  # getPosts takes at most 25 URIs
MAX_BYTES = 4_000_000  # one XRPC answer; 100 post views are ~300 KB
MAX_TEXT_BYTES = 30_000  # of a post's text (the lexicon allows 3,000; strangers send more)
MAX_MEDIA = 8
MAX_WAIT_S = 3600.0  # a rate-limit reset further away than this is not believed
EXPIRY_MARGIN_S = 60  # an access token this close to its end is refreshed first
MENTION_REASONS = ("mention", "reply")
HIDDEN_LABELS = frozenset({"!hide", "!takedown"})
# Labels (self-applied or a labeller's) whose media the wall shows veiled, as Bluesky's app does.
SENSITIVE_LABELS = frozenset({"porn", "sexual", "nudity", "graphic-media", "gore", "!warn"})
_HANDLE = re.compile(
    r"([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?", re.IGNORECASE
)
_DID = re.compile(r"did:[a-z]+:[a-zA-Z0-9._:%-]{1,2000}")
_APP_PASSWORD = re.compile(r"[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}")
_EXPIRED = frozenset({"ExpiredToken", "InvalidToken"})
# What the AppView says (400 InvalidRequest) of an actor it does not know or no longer has.
_NO_PROFILE = frozenset({"Profile not found"})


# Sessions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    did: str
    handle: str
    access: str
    refresh: str
    pds: str  # https origin the account's XRPC calls go to


@dataclass(frozen=True)
class Login:
    """What a Bluesky credential's secret holds (JSON, sealed in the vault)."""

    identifier: str  # handle, DID or email the password belongs to
    password: str  # the app password
    host: str  # where to sign in ("bsky.social" or a self-hosted PDS)
    session: Session | None = None

    def dump(self) -> str:
        data: dict[str, Any] = {
            "identifier": self.identifier,
            "password": self.password,
            "host": self.host,
        }
        if self.session:
            data["session"] = self.session.__dict__
        return json.dumps(data)


def login_of(credential: Credential) -> Login:
    """The secret as stored: our JSON, or what a person typed for a workspace key
    ("handle app-password", or just the app password of a connection's handle)."""
    secret = credential.secret.strip()
    host = credential.instance or ENTRYWAY
    if secret.startswith("{"):
        try:
            data = json.loads(secret)
            session = data.get("session")
            return Login(
                identifier=str(data["identifier"]),
                password=str(data["password"]),
                host=str(data.get("host") or host),
                session=Session(**session) if isinstance(session, dict) else None,
            )
        except (ValueError, KeyError, TypeError):
            raise ProviderError(_("The stored Bluesky login is damaged; enter it again.")) from None
    parts = secret.split()
    if len(parts) == 2:
        return Login(parts[0].removeprefix("@"), parts[1], host)
    if len(parts) == 1 and credential.handle:
        return Login(credential.handle.removeprefix("@"), parts[0], host)
    raise ProviderError(
        _("Enter the Bluesky key as the account's handle and an app password, with a space.")
    )


def _jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT (not verified: the PDS does that), or None."""
    try:
        payload = token.split(".")[1]
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        exp = data.get("exp")
        return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None
    except (IndexError, ValueError, TypeError, AttributeError):
        return None


def _usable(token: str) -> bool:
    exp = _jwt_expiry(token)
    return exp is None or exp - EXPIRY_MARGIN_S > time.time()


def _pds_of(data: Mapping[str, Any], fallback: str) -> str:
    """The account's PDS from the session's DID document, if it names an https one."""
    doc = data.get("didDoc")
    services = doc.get("service") if isinstance(doc, Mapping) else None
    for service in services if isinstance(services, list) else []:
        if (
            isinstance(service, Mapping)
            and str(service.get("id", "")).endswith("#atproto_pds")
            and isinstance(service.get("serviceEndpoint"), str)
        ):
            url = http_url(service["serviceEndpoint"])
            if url and url.startswith("https://"):
                return url.rstrip("/")
    return fallback


def _session_of(data: object, fallback_pds: str) -> Session:
    if not isinstance(data, Mapping) or not all(
        isinstance(data.get(k), str) for k in ("accessJwt", "refreshJwt", "did", "handle")
    ):
        raise ProviderError(_("Bluesky answered the sign-in with something unexpected."))
    return Session(
        did=data["did"],
        handle=data["handle"],
        access=data["accessJwt"],
        refresh=data["refreshJwt"],
        pds=_pds_of(data, fallback_pds),
    )


# Sessions are also remembered in this process, keyed by what opens them (the password):
# two polls of one account share a refresh instead of racing.
_sessions: dict[str, Session] = {}
_locks: dict[str, asyncio.Lock] = {}


def _session_key(login: Login) -> str:
    raw = f"{login.host}|{login.identifier.lower()}|{login.password}"
    return hashlib.sha256(raw.encode()).hexdigest()


class _Expired(ProviderError):
    """The access (or refresh) token was refused: refresh (or sign in) and try again."""

    def __init__(self) -> None:
        super().__init__(_("Bluesky no longer accepts the session; connect the account again."))


# XRPC -----------------------------------------------------------------------------------


def _xrpc_url(base: str, nsid: str, params: Mapping[str, Any] | None) -> str:
    url = f"{base}/xrpc/{nsid}"
    return f"{url}?{urlencode(params, doseq=True)}" if params else url


def _reset_in(headers: Mapping[str, str]) -> float | None:
    """Seconds until Bluesky's rate-limit window resets (`ratelimit-reset`: epoch seconds)."""
    value = headers.get("ratelimit-reset", "").strip()
    if value.isdigit():
        return min(max(float(value) - time.time(), 1.0), MAX_WAIT_S)
    return parse_retry_after(headers.get("retry-after"))


async def _call(
    base: str,
    nsid: str,
    params: Mapping[str, Any] | None = None,
    *,
    token: str = "",
    body: Mapping[str, Any] | None = None,
    keyless: bool = False,
) -> dict[str, Any]:
    """One XRPC call; the JSON object it answered. 429 -> RateLimited (until the window's
    reset), expired token -> _Expired, keyless 401/403 -> ProviderRefused, other 4xx ->
    ProviderError with the server's words; 5xx and network trouble are egress errors."""
    url = _xrpc_url(base, nsid, params)
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    fetched = await egress().fetch(
        url,
        method="POST" if body is not None else "GET",
        headers=headers,
        json=body,
        max_bytes=MAX_BYTES,
        accept_statuses=frozenset({400, 401, 403, 404, 429}),
    )
    try:
        data = json.loads(fetched.content) if fetched.content else {}
    except ValueError:
        data = None
    if fetched.status == 429:
        raise RateLimited(url, _("Bluesky asks to wait (HTTP 429)."), _reset_in(fetched.headers))
    if not isinstance(data, dict):
        raise ProviderError(_("Bluesky answered with something that is not JSON."))
    if fetched.status < 400:
        return data
    error = str(data.get("error", ""))
    if token and error in _EXPIRED:
        raise _Expired()
    if keyless and fetched.status in (401, 403):
        raise ProviderRefused(
            _(
                "Bluesky does not allow this without an account. Add a Bluesky app password"
                " to the workspace's keys."
            )
        )
    said = str(data.get("message") or error or fetched.status)[:200]
    if fetched.status == 400 and said in _NO_PROFILE:
        raise AccountNotFound(_("Bluesky has no such account."))
    raise ProviderError(_("Bluesky refused the request: %(m)s") % {"m": said})


class BlueskyProvider(BaseProvider):
    name = "bluesky"
    kinds = frozenset(SourceKind)

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return "public.api.bsky.app"

    # Connecting and sessions -------------------------------------------------------------

    async def connect(self, handle: str, secret: str, instance: str = "") -> Connected:
        """Sign in once with the handle and an app password (a real check, even if a session
        is cached); what the connection keeps is the session, so polls never sign in."""
        if not _APP_PASSWORD.fullmatch(secret.strip().lower()):
            raise ProviderError(
                _(
                    "Use an app password (Bluesky: Settings, Privacy and security, App"
                    " passwords), not the account's own password."
                )
            )
        login = Login(handle.strip().removeprefix("@"), secret.strip(), instance or ENTRYWAY)
        session = await self._create_session(login)
        _sessions[_session_key(login)] = session
        return Connected(
            handle=session.handle,
            display_name=session.handle,
            secret=replace(login, session=session).dump(),
        )

    async def _create_session(self, login: Login) -> Session:
        base = f"https://{login.host}"
        try:
            data = await _call(
                base,
                "com.atproto.server.createSession",
                body={"identifier": login.identifier, "password": login.password},
            )
        except ProviderError:
            raise ProviderError(
                _("Bluesky did not accept this handle and app password; enter them again.")
            ) from None
        return _session_of(data, base)

    async def _refresh(self, session: Session) -> Session | None:
        try:
            data = await _call(session.pds, "com.atproto.server.refreshSession",
                               token=session.refresh, body={})  # fmt: skip
        except (_Expired, ProviderError):
            return None
        return _session_of(data, session.pds)

    async def _session(self, credential: Credential, stale: Session | None = None) -> Session:
        """A usable session: the cached one, refreshed if expired (or refused: `stale`), or a
        new sign-in when the refresh is refused too. New tokens are sealed back at once."""
        login = login_of(credential)
        key = _session_key(login)
        async with _locks.setdefault(key, asyncio.Lock()):
            # This process's copy, or the sealed one if another process refreshed since.
            known = [s for s in (_sessions.get(key), login.session) if s is not None]
            session = max(known, key=lambda s: _jwt_expiry(s.access) or 0.0, default=None)
            if session is not None and session != stale and _usable(session.access):
                _sessions[key] = session
                return session
            fresh = await self._refresh(session) if session is not None else None
            if fresh is None:
                fresh = await self._create_session(login)
            _sessions[key] = fresh
            if credential.save is not None:
                await credential.save(replace(login, session=fresh).dump())
            return fresh

    async def _authed(
        self, credential: Credential, nsid: str, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        session = await self._session(credential)
        try:
            return await _call(session.pds, nsid, params, token=session.access)
        except _Expired:
            session = await self._session(credential, stale=session)
            return await _call(session.pds, nsid, params, token=session.access)

    async def _read(
        self, credential: Credential | None, nsid: str, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        """With a session when there is a credential, else keyless from the public AppView."""
        if credential is not None:
            return await self._authed(credential, nsid, params)
        return await _call(PUBLIC_APPVIEW, nsid, params, keyless=True)

    # The protocol -------------------------------------------------------------------------

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        bare = handle.strip().removeprefix("@").lower()
        if _DID.fullmatch(bare):
            return Actor(ref=bare, handle=bare)
        if not _HANDLE.fullmatch(bare) or len(bare) > 253:
            return None
        try:
            data = await _call(PUBLIC_APPVIEW, "com.atproto.identity.resolveHandle",
                               {"handle": bare}, keyless=True)  # fmt: skip
        except ProviderError:
            return None  # HandleNotFound / "Unable to resolve handle"
        did = data.get("did")
        return Actor(ref=did, handle=bare) if isinstance(did, str) and _DID.fullmatch(did) else None

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        query = request.query.strip()
        if not query:
            raise ProviderError(_("The search is empty."))
        return await self._paged(
            lambda cursor, limit: self._read(
                credential,
                "app.bsky.feed.searchPosts",
                {"q": query, "sort": "latest", "limit": limit, **cursor},
            ),
            "posts",
            request,
        )

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        if request.actor is None:
            raise ProviderError(_("The account is unknown."))
        actor = request.actor.ref
        return await self._paged(
            lambda cursor, limit: _call(
                PUBLIC_APPVIEW,
                "app.bsky.feed.getAuthorFeed",
                {"actor": actor, "filter": "posts_and_author_threads", "limit": limit, **cursor},
                keyless=True,
            ),
            "feed",
            request,
        )

    async def home(self, credential: Credential | None, request: FetchRequest) -> Page:
        signed_in = _signed_in(credential)
        return await self._paged(
            lambda cursor, limit: self._authed(
                signed_in, "app.bsky.feed.getTimeline", {"limit": limit, **cursor}
            ),
            "feed",
            request,
        )

    async def mentions(self, credential: Credential | None, request: FetchRequest) -> Page:
        signed_in = _signed_in(credential)

        async def page(cursor: dict[str, str], limit: int) -> dict[str, Any]:
            data = await self._authed(
                signed_in,
                "app.bsky.notification.listNotifications",
                {"reasons": list(MENTION_REASONS), "limit": limit, **cursor},
            )
            wanted = [
                n
                for n in _list(data.get("notifications"))
                if n.get("reason") in MENTION_REASONS and isinstance(n.get("uri"), str)
            ]
            posts = await self._hydrate(signed_in, [n["uri"] for n in wanted])
            data["notifications"] = [
                {**n, "post": posts.get(n["uri"]) or _post_of_notification(n)} for n in wanted
            ]
            return data

        return await self._paged(page, "notifications", request)

    async def _hydrate(self, credential: Credential, uris: list[str]) -> dict[str, Any]:
        """Post views (metrics, embeds with CDN URLs) for notification records."""
        found: dict[str, Any] = {}
        for start in range(0, len(uris), HYDRATE_MAX):
            data = await self._authed(
                credential, "app.bsky.feed.getPosts", {"uris": uris[start : start + HYDRATE_MAX]}
            )
            found.update(
                (p["uri"], p) for p in _list(data.get("posts")) if isinstance(p.get("uri"), str)
            )
        return found

    async def _paged(self, call: Any, key: str, request: FetchRequest) -> Page:
        """Newest first, page after page, until the entry the cursor remembers (a first poll
        reads one page). The new cursor is the newest entry seen."""
        known = _known(request.cursor)
        limit = max(1, min(PAGE_MAX, request.limit))
        entries: list[_Entry] = []
        dropped = calls = 0
        newest: _Entry | None = None
        api_cursor: dict[str, str] = {}
        met = False
        for _page in range(PAGES_PER_POLL if known else 1):
            data = await call(api_cursor, limit)
            calls += 1
            for raw in _list(data.get(key)):
                entry = _entry(raw, key)
                if entry is None:
                    dropped += 1
                    continue
                newest = newest or entry
                if known and entry.key == known:
                    met = True
                    break
                entries.append(entry)
            next_cursor = data.get("cursor")
            if met or not isinstance(next_cursor, str) or not next_cursor:
                break
            api_cursor = {"cursor": next_cursor}
        items: list[RemoteItem] = []
        for entry in entries:
            item = _item(entry)
            if item is None:
                dropped += 1
            else:
                items.append(item)
        items.sort(key=lambda i: i.created_at, reverse=True)
        cursor = json.dumps({"key": newest.key}) if newest else ""
        return Page(items=tuple(items), cursor=cursor, dropped=dropped, units=calls)


def _signed_in(credential: Credential | None) -> Credential:
    if credential is None or not credential.secret:
        raise ProviderError(_("Connect the Bluesky account again (its app password is missing)."))
    return credential


def _known(cursor: str) -> str:
    try:
        data = json.loads(cursor) if cursor else {}
    except ValueError:
        return ""
    key = data.get("key") if isinstance(data, dict) else None
    return key if isinstance(key, str) else ""


def _list(value: object) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _plain(value: object, limit: int) -> str:
    """A stranger's short text (a card title, alt text) without controls, on one line."""
    return " ".join(clean_text(_str(value)[:limit]).split())


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _post_of_notification(n: Mapping[str, Any]) -> dict[str, Any]:
    """A post view made of the notification itself, for a post getPosts did not return."""
    return {"uri": n["uri"], "cid": n.get("cid"), "author": n.get("author"),
            "record": n.get("record"), "indexedAt": n.get("indexedAt")}  # fmt: skip


# Normalising ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    key: str  # what the cursor remembers: the post's URI, or the repost record's
    post: dict[str, Any]
    at: str  # indexedAt of what put it in the feed (the repost, else the post)
    reposted_by: dict[str, Any] | None = None
    reply_to: dict[str, Any] | None = None  # the parent post's author


def _entry(raw: dict[str, Any], key: str) -> _Entry | None:
    # searchPosts gives post views; feeds give feed view posts, mentions notifications + post
    post = raw if key == "posts" else _dict(raw.get("post"))
    if not _str(post.get("uri")).startswith("at://"):
        return None
    reason = _dict(raw.get("reason"))
    by = _dict(reason.get("by")) or None
    if reason and by:  # a repost: the feed's entry is the repost, the item the post
        entry_key = _str(reason.get("uri")) or f"{post['uri']}#repost:{_str(by.get('did'))}"
        at = _str(reason.get("indexedAt")) or _str(post.get("indexedAt"))
    else:
        entry_key = post["uri"]
        at = _str(raw.get("indexedAt")) if key == "notifications" else ""
        at = at or _str(post.get("indexedAt"))
    parent_author = _dict(_dict(_dict(raw.get("reply")).get("parent")).get("author"))
    return _Entry(
        key=entry_key,
        post=post,
        at=at,
        reposted_by=by,
        reply_to=parent_author or None,
    )


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return min(parsed, datetime.now(UTC))  # a date in the future would pin it to the top


def _handle(author: Mapping[str, Any]) -> str:
    handle = _str(author.get("handle")).lower()
    if _HANDLE.fullmatch(handle) and handle != "handle.invalid":
        return handle
    did = _str(author.get("did"))
    return did if _DID.fullmatch(did) else ""


def _profile_url(author: Mapping[str, Any]) -> str:
    handle = _handle(author)
    return f"{APP}/profile/{quote(handle, safe=':.')}" if handle else ""


def permalink(uri: str, author: Mapping[str, Any]) -> str:
    """https://bsky.app/profile/<handle>/post/<rkey> for at://<did>/app.bsky.feed.post/<rkey>."""
    parts = uri.removeprefix("at://").split("/")
    profile = _profile_url(author)
    if len(parts) != 3 or parts[1] != "app.bsky.feed.post" or not profile:
        return ""
    return f"{profile}/post/{quote(parts[2], safe='')}"


def _who(author: Mapping[str, Any]) -> Inline:
    handle = _handle(author) or "unknown"
    return Mention(label=f"@{handle}", href=_profile_url(author) or None)


def _text_blocks(record: object) -> tuple[Block, ...]:
    if not isinstance(record, dict):
        return ()
    data = _str(record.get("text")).encode("utf-8", "replace")
    text = data[:MAX_TEXT_BYTES].decode("utf-8", "ignore")
    facets = record.get("facets") if isinstance(record.get("facets"), list) else None
    return from_facets(text, facets).children


def _images(view: Mapping[str, Any]) -> list[MediaRef]:
    kind = _str(view.get("$type"))
    refs: list[MediaRef] = []
    if kind in ("app.bsky.embed.images#view", "app.bsky.embed.gallery#view"):
        for image in _list(view.get("images") or view.get("items")):
            url = http_url(_str(image.get("fullsize")) or _str(image.get("thumb")))
            if url:
                refs.append(MediaRef("image", url, _plain(image.get("alt"), 1000)))
    elif kind == "app.bsky.embed.video#view":
        url = http_url(_str(view.get("thumbnail")))
        if url:
            refs.append(MediaRef("video", url, _plain(view.get("alt"), 1000)))
    elif kind == "app.bsky.embed.external#view":
        external = _dict(view.get("external"))
        url = http_url(_str(external.get("thumb")))
        if url:
            refs.append(MediaRef("image", url, _plain(external.get("title"), 1000)))
    return refs


def _card(view: Mapping[str, Any]) -> Block | None:
    """An external link card as a quote: the title linked, the description under it."""
    external = _dict(view.get("external"))
    url = http_url(_str(external.get("uri")))
    if not url:
        return None
    title = _plain(external.get("title"), 300) or url
    blocks: list[Block] = [
        Paragraph(children=(Link(href=url, children=(Strong(children=(Text(title),)),)),))
    ]
    description = _plain(external.get("description"), 1000)
    if description:
        blocks.append(Paragraph(children=(Text(description),)))
    return Quote(children=tuple(blocks))


def _quoted(view: Mapping[str, Any]) -> tuple[Block | None, list[MediaRef]]:
    """A quoted post (embed.record#view) as a nested quote, with its media."""
    record = _dict(view.get("record"))
    if not _str(record.get("$type")).endswith("#viewRecord") or not isinstance(
        record.get("author"), dict
    ):
        unavailable = Paragraph(children=(Em(children=(Label("quoted_post_unavailable"),)),))
        return Quote(children=(unavailable,)), []
    author = record["author"]
    link = permalink(_str(record.get("uri")), author)
    head: list[Inline] = [_who(author)]
    if link:
        head += [Text(" · "), Link(href=link, children=(Label("quoted_post"),))]
    media = [m for e in _list(record.get("embeds")) for m in _images(e)]
    return Quote(
        children=(Paragraph(children=tuple(head)), *_text_blocks(record.get("value")))
    ), media


def _embed(view: object) -> tuple[list[Block], list[MediaRef]]:
    if not isinstance(view, dict):
        return [], []
    kind = _str(view.get("$type"))
    if kind == "app.bsky.embed.record#view":
        block, media = _quoted(view)
        return [block] if block else [], media
    if kind == "app.bsky.embed.recordWithMedia#view":
        inner = _dict(view.get("record"))
        block, quoted_media = _quoted(inner)
        blocks, media = _embed(view.get("media"))
        return blocks + ([block] if block else []), media + quoted_media
    card = _card(view) if kind == "app.bsky.embed.external#view" else None
    return [card] if card else [], _images(view)


def _metrics(post: Mapping[str, Any]) -> dict[str, float]:
    names = {"replies": "replyCount", "reposts": "repostCount", "likes": "likeCount",
             "quotes": "quoteCount"}  # fmt: skip
    out: dict[str, float] = {}
    for name, field in names.items():
        value = post.get(field)
        if type(value) is int and 0 <= value < 10**12:
            out[name] = float(value)
    return out


def _hidden(post: Mapping[str, Any]) -> bool:
    return any(_str(label.get("val")) in HIDDEN_LABELS for label in _list(post.get("labels")))


def _sensitive(post: Mapping[str, Any]) -> bool:
    return any(_str(label.get("val")) in SENSITIVE_LABELS for label in _list(post.get("labels")))


def _item(entry: _Entry) -> RemoteItem | None:
    post = entry.post
    author = _dict(post.get("author"))
    created = _time(entry.at) or _time(_str(_dict(post.get("record")).get("createdAt")))
    if not _handle(author) or created is None or _hidden(post):
        return None
    uri = post["uri"]
    blocks: list[Block] = []
    if entry.reply_to:
        blocks.append(
            Paragraph(
                children=(Em(children=(Label("replying_to"), Text(" "), _who(entry.reply_to))),)
            )
        )
    blocks.extend(_text_blocks(post.get("record")))
    embedded, media = _embed(post.get("embed"))
    if _sensitive(post):
        media = [replace(m, sensitive=True) for m in media]
    blocks.extend(embedded)
    content = fit(Document(children=tuple(blocks)))
    did = _str(author.get("did"))
    return RemoteItem(
        remote_id=uri,
        canonical_id=canonical_id(uri),
        author_handle=_handle(author),
        author_ref=f"bluesky:{did}" if _DID.fullmatch(did) else "",
        created_at=created,
        content=content,
        plain_text=to_text(content),
        url=permalink(uri, author),
        media=tuple(media[:MAX_MEDIA]),
        metrics=_metrics(post),
        reposted_by=_handle(entry.reposted_by) if entry.reposted_by else "",
        lang=_language(post.get("record")),
    )


def _language(record: object) -> str:
    """The post's language: the first of the record's `langs` (the author's client sets them)."""
    langs = _dict(record).get("langs")
    return language_tag(langs[0]) if isinstance(langs, list) and langs else ""


def items_of(entries: Iterable[dict[str, Any]], key: str) -> list[RemoteItem]:
    """Normalise raw XRPC entries (post views, feed view posts, notifications with `post`):
    the golden-file tests' way in."""
    out = []
    for raw in _list(list(entries)):
        entry = _entry(raw, key)
        item = _item(entry) if entry else None
        if item is not None:
            out.append(item)
    return out
