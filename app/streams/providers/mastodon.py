"""Mastodon: REST v1 of each instance (the host is always the instance; there is no global one).

    keyword  -> GET /api/v1/timelines/tag/:tag on every instance the column names (keyless)
    account  -> GET /api/v1/accounts/lookup, then /api/v1/accounts/:id/statuses (keyless);
                an instance that keeps its API from apps without a token: its `@user.rss`
    home     -> GET /api/v1/timelines/home             (the connection's token)
    mentions -> GET /api/v1/notifications?types[]=mention

Incremental: the source's cursor is the newest id seen; the next poll asks `min_id=` it
(the statuses right after it) and, while pages come back full, follows the Link header's
`prev` page on the same instance, up to `MAX_PAGES`. A first poll reads one page only.

Normalised: the status HTML through safe_content.from_html; a reblog becomes the
original status with the booster in `reposted_by`; `spoiler_text` wraps the body in a
collapsed content warning; media attachments become refs (pages show them through the
media proxy). Items are keyed on the status `uri` (the object's id on its home server),
so the same status seen through two instances, or as a boost, is one item.

Budgets (egress, per instance host): Mastodon allows 300 requests per 5 minutes (per IP
and per account); we keep under it, and under 300 per 15 minutes for follow-up (paged)
requests. 429 and an exhausted X-RateLimit-Remaining hold the instance in egress until
X-RateLimit-Reset; the source is `rate_limited` until then.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from app.core.i18n import _
from app.egress import Fetched, HostBudget, HttpStatusError, egress
from app.safe_content import from_html, to_text, with_content_warning
from app.streams.platforms import canonical_host, instance_host, split_instance_query
from app.streams.providers import (
    Actor,
    BaseProvider,
    Connected,
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

# 300 requests per 5 min: 0.9/s plus a burst of 10 is at most 280 in any 5 minutes.
INSTANCE_BUDGET = HostBudget(rate=0.9, burst=10, inflight=4)
# Follow-up pages: 300 per 15 min (1/3 per s): 0.3/s plus 5 is at most 275.
PAGED_BUDGET = HostBudget(rate=0.3, burst=5, inflight=4)
PAGE_SIZE = 40  # the API's maximum per page
MAX_PAGES = 3  # one poll catches up at most this many pages; the next poll goes on
MAX_BYTES = 5_000_000
JSON_ACCEPT = "application/json"

_STATUS_URL = re.compile(r"/@([A-Za-z0-9_.-]+)/(\d+)/?$")


class MastodonProvider(BaseProvider):
    name = "mastodon"
    kinds = frozenset(SourceKind)

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return handle.rpartition("@")[2] or super().host_of(credential, handle)

    # Accounts -------------------------------------------------------------------------

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        """`user@host` (canonical) as "host/account id"; "rss:<feed>" when the instance
        keeps its API from apps without a token."""
        user, _sep, host = handle.rpartition("@")
        if not user or not host:
            return None
        try:
            fetched = await _get(host, "/api/v1/accounts/lookup", [("acct", user)], credential)
        except HttpStatusError as error:
            if error.status in (404, 410):
                return None
            if error.status in (401, 403):
                return Actor(ref=f"rss:https://{host}/@{user}.rss", handle=handle)
            raise
        account = _json(fetched)
        if not isinstance(account, dict) or not isinstance(account.get("id"), str):
            raise ProviderError(_("%(h)s answered the account lookup oddly.") % {"h": host})
        return Actor(
            ref=f"{host}/{account['id']}",
            handle=handle,
            display_name=_text(account.get("display_name"))[:200],
        )

    async def connect(self, handle: str, secret: str, instance: str = "") -> Connected:
        """An access token of `instance`: the instance says whose it is (`user@host`)."""
        host = instance_host(instance)
        if host is None:
            raise ProviderError(_("Enter the instance's address, e.g. mastodon.social."))
        credential = Credential(secret=secret, instance=host)
        try:
            fetched = await _get(host, "/api/v1/accounts/verify_credentials", [], credential)
        except HttpStatusError as error:
            if error.status in (401, 403):
                raise ProviderError(_("%(h)s did not accept this token.") % {"h": host}) from None
            raise
        account = _json(fetched)
        if not isinstance(account, dict) or not isinstance(account.get("acct"), str):
            raise ProviderError(_("%(h)s did not say whose token this is.") % {"h": host})
        return Connected(
            handle=_handle(account, host),
            display_name=_text(account.get("display_name"))[:200],
            secret=secret,
        )

    # Timelines ------------------------------------------------------------------------

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        tag, host = split_instance_query(request.query)
        if not host or not tag:
            raise ProviderError(_("Name the Mastodon instance to search."))
        path = f"/api/v1/timelines/tag/{quote(tag, safe='')}"
        try:
            return await _timeline(host, path, [], request, credential, _statuses)
        except HttpStatusError as error:
            if error.status == 404:  # the tag was never used there: nothing yet
                return Page(cursor=request.cursor)
            if error.status in (401, 403, 422):
                raise ProviderError(
                    _("%(h)s shows its hashtag timelines to signed-in apps only.") % {"h": host}
                ) from None
            raise

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        if request.actor is None:
            raise ProviderError(_("The account is unknown."))
        ref = request.actor.ref
        if ref.startswith("rss:"):
            return await _rss_feed(ref.removeprefix("rss:"), request)
        host, _sep, account_id = ref.partition("/")
        path = f"/api/v1/accounts/{quote(account_id, safe='')}/statuses"
        try:
            return await _timeline(
                host, path, [("exclude_replies", "true")], request, credential, _statuses
            )
        except HttpStatusError as error:
            if error.status in (404, 410):
                raise ProviderError(
                    _("%(a)s is gone from %(h)s.") % {"a": request.actor.handle, "h": host}
                ) from None
            raise

    async def home(self, credential: Credential | None, request: FetchRequest) -> Page:
        host = _connected_host(credential)
        return await _authorised(
            host, _timeline(host, "/api/v1/timelines/home", [], request, credential, _statuses)
        )

    async def mentions(self, credential: Credential | None, request: FetchRequest) -> Page:
        host = _connected_host(credential)
        params = [("types[]", "mention")]
        return await _authorised(
            host, _timeline(host, "/api/v1/notifications", params, request, credential, _mentions)
        )


# Requests -----------------------------------------------------------------------------


def _token(credential: Credential | None, host: str) -> str:
    """A connection's token goes only to its own instance."""
    if credential is None or not credential.secret:
        return ""
    return credential.secret if canonical_host(credential.instance) == host else ""


async def _get(
    host: str,
    path: str,
    params: Sequence[tuple[str, str]],
    credential: Credential | None,
    *,
    url: str = "",
    paged: bool = False,
) -> Fetched:
    """One request to an instance's API, within its budgets (and the paged one for follow-ups)."""
    headers = {"Accept": JSON_ACCEPT}
    token = _token(credential, host)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    target = url or f"https://{host}{path}" + (f"?{urlencode(params)}" if params else "")
    extra = ((f"{host}#paged", PAGED_BUDGET),) if paged else ()
    return await egress().fetch(
        target,
        headers=headers,
        max_bytes=MAX_BYTES,
        host_budget=INSTANCE_BUDGET,
        extra_budgets=extra,
    )


def _connected_host(credential: Credential | None) -> str:
    host = instance_host(credential.instance) if credential else None
    if credential is None or not credential.secret or host is None:
        raise ProviderError(_("This timeline needs a connected Mastodon account."))
    return host


async def _authorised(host: str, call: Awaitable[Page]) -> Page:
    """A connected account's timeline; a refused token says to connect again."""
    try:
        page = await call
    except HttpStatusError as error:
        if error.status in (401, 403):
            raise ProviderError(
                _("%(h)s no longer accepts the connection's token; connect the account again.")
                % {"h": host}
            ) from None
        raise
    return page


Entries = Callable[[list[Any], str], tuple[list[RemoteItem], int]]


async def _timeline(
    host: str,
    path: str,
    params: list[tuple[str, str]],
    request: FetchRequest,
    credential: Credential | None,
    entries: Entries,
) -> Page:
    """Statuses newer than the cursor: `min_id`, then the Link header's `prev` pages while
    they come back full. The cursor becomes the newest id seen."""
    limit = max(1, min(request.limit, PAGE_SIZE))
    query = [*params, ("limit", str(limit))]
    if request.cursor:
        query.append(("min_id", request.cursor))
    items: list[RemoteItem] = []
    dropped, newest, url = 0, request.cursor, ""
    for page in range(MAX_PAGES):
        fetched = await _get(host, path, query, credential, url=url, paged=page > 0)
        batch = _json(fetched)
        if not isinstance(batch, list):
            raise ProviderError(
                _("%(h)s answered with something other than a timeline.") % {"h": host}
            )
        found, failed = entries(batch, host)
        items.extend(found)
        dropped += failed
        newest = max([newest, *_ids(batch)], key=_id_order)
        if not request.cursor or len(batch) < limit:
            break  # a first poll reads the newest page only; a short page is the end
        url = _link(fetched.headers.get("link", ""), "prev", host)
        if not url:
            break
    return Page(items=tuple(items), cursor=newest, dropped=dropped)


def _json(fetched: Fetched) -> Any:
    try:
        return json.loads(fetched.content)
    except ValueError:
        raise ProviderError(_("The instance answered with something other than JSON.")) from None


def _ids(batch: list[Any]) -> list[str]:
    return [e["id"] for e in batch if isinstance(e, dict) and isinstance(e.get("id"), str)]


def _id_order(value: str) -> tuple[int, str]:
    """Mastodon ids are decimal strings that grow with time: compare them as numbers."""
    return (len(value), value) if value.isdigit() else (0, value)


_LINK = re.compile(r"<([^>]*)>\s*;([^,<]*)")


def _link(header: str, rel: str, host: str) -> str:
    """The `rel` URL of a Link header, only if it stays on the same instance over https."""
    for target, params in _LINK.findall(header):
        rels = re.findall(r'rel="?([^";]+)"?', params)
        if rel not in " ".join(rels).split():
            continue
        parts = urlsplit(target)
        if parts.scheme == "https" and canonical_host(parts.netloc) == host:
            return target
    return ""


# Normalising --------------------------------------------------------------------------


def _statuses(batch: list[Any], host: str) -> tuple[list[RemoteItem], int]:
    items, dropped = [], 0
    for raw in batch:
        item = _item(raw, host)
        if item is None:
            dropped += 1
        else:
            items.append(item)
    return items, dropped


def _mentions(batch: list[Any], host: str) -> tuple[list[RemoteItem], int]:
    """Notifications of type mention: their statuses (anything else is skipped)."""
    statuses = [
        n["status"]
        for n in batch
        if isinstance(n, dict) and n.get("type") == "mention" and isinstance(n.get("status"), dict)
    ]
    return _statuses(statuses, host)


def _item(raw: object, host: str) -> RemoteItem | None:
    """One status as an item (a reblog: the reblogged status, its booster kept), or None
    when it lacks what an item needs."""
    if not isinstance(raw, dict):
        return None
    reblog = raw.get("reblog")
    if not isinstance(reblog, dict):
        return _status_item(raw, host, reposted_by="")
    account = raw.get("account")
    return _status_item(reblog, host, _handle(account, host) if isinstance(account, dict) else "")


def _status_item(raw: dict[str, Any], host: str, reposted_by: str) -> RemoteItem | None:
    uri, account = _text(raw.get("uri")), raw.get("account")
    created = _time(raw.get("created_at"))
    key = _uri_key(uri)
    if key is None or not isinstance(account, dict) or created is None:
        return None
    content = from_html(_text(raw.get("content")), base_url=f"https://{host}/")
    content = with_content_warning(_text(raw.get("spoiler_text"))[:500], content)
    handle = _handle(account, host)
    url = raw.get("url")
    return RemoteItem(
        remote_id=uri,
        canonical_id=key,
        author_handle=f"@{handle}",
        author_ref=f"mastodon:{handle}",
        created_at=created,
        content=content,
        plain_text=to_text(content),
        url=url if isinstance(url, str) and url.startswith(("https://", "http://")) else "",
        media=_media(
            raw.get("media_attachments"),
            sensitive=raw.get("sensitive") is True or bool(_text(raw.get("spoiler_text"))),
        ),
        metrics=_metrics(raw),
        reposted_by=reposted_by,
        lang=language_tag(raw.get("language")),  # ISO 639-1 as the author's app set it, or null
    )


def _uri_key(uri: str) -> str | None:
    """The canonical id of a status from its `uri` (its id on its home server), so every
    instance's copy of it is one item: "home.host/users/u/statuses/1"."""
    parts = urlsplit(uri)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        return None
    path = parts.path.lstrip("/") + (f"?{parts.query}" if parts.query else "")
    return canonical_id(path, parts.netloc)


def _handle(account: dict[str, Any], host: str) -> str:
    """`user@host` for any account: local accounts' `acct` has no host."""
    acct = _text(account.get("acct")) or _text(account.get("username"))
    if "@" in acct:
        user, _sep, domain = acct.rpartition("@")
        return f"{user}@{canonical_host(domain) or domain}"
    return f"{acct}@{host}"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


_MEDIA_KINDS = {"image": "image", "gifv": "video", "video": "video"}


def _media(value: object, *, sensitive: bool) -> tuple[MediaRef, ...]:
    refs = []
    for media in value if isinstance(value, list) else []:
        if not isinstance(media, dict):
            continue
        kind = _MEDIA_KINDS.get(_text(media.get("type")))
        url = _text(media.get("url")) or _text(media.get("remote_url"))
        if kind == "video":  # pages show the still; the video is a click away on the post
            kind, url = "image", _text(media.get("preview_url")) or url
        if kind and url.startswith(("https://", "http://")):
            refs.append(MediaRef(kind, url, _text(media.get("description"))[:1500], sensitive))
    return tuple(refs[:8])


_METRICS = {
    "replies_count": "replies",
    "reblogs_count": "reposts",
    "favourites_count": "likes",
    "quotes_count": "quotes",
}


def _metrics(raw: dict[str, Any]) -> dict[str, float]:
    return {
        name: float(raw[field])
        for field, name in _METRICS.items()
        if isinstance(raw.get(field), int) and not isinstance(raw.get(field), bool)
    }


# The keyless fallback: an account's public RSS ---------------------------------------------


async def _rss_feed(address: str, request: FetchRequest) -> Page:
    """An instance without a public API: the account's `@user.rss`, read by the RSS
    provider and keyed like the API's statuses (`https://host/users/u/statuses/id`)."""
    from app.streams.providers.rss import RssProvider

    actor = Actor(ref=address, handle=request.actor.handle if request.actor else address)
    page = await RssProvider().author_feed(None, FetchRequest(actor=actor, cursor=request.cursor))
    return Page(
        items=tuple(_from_rss(item) for item in page.items),
        cursor=page.cursor,
        dropped=page.dropped,
    )


def _from_rss(item: RemoteItem) -> RemoteItem:
    parts = urlsplit(item.url)
    found = _STATUS_URL.search(parts.path)
    if not found:
        return item
    user, status_id = found.groups()
    uri = f"https://{parts.netloc}/users/{user}/statuses/{status_id}"
    handle = f"{user.lower()}@{canonical_host(parts.netloc) or parts.netloc}"
    return replace(
        item,
        remote_id=uri,
        canonical_id=canonical_id(f"users/{user}/statuses/{status_id}", parts.netloc),
        author_handle=f"@{handle}",
        author_ref=f"mastodon:{handle}",
    )
