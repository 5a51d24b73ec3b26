"""The provider protocol: how the wall reads one platform.

A provider says what it can do (`kinds`) and implements the calls for it;
the rest answer `ProviderError` (the `BaseProvider` defaults). Every call
takes a `Credential` - a connection's token, or the workspace's key for the
provider - or `None` for keyless use, and goes out only through app.egress.
Items come back normalised: content is already an app.safe_content
`Document`, never HTML; `canonical_id` is what dedup keys are made of.

Egress errors (RateLimited, EgressTimeout, ...) pass through untouched: the
scheduler knows what each means for the source. `ProviderError` is for an
answer that arrived but cannot be used (not a feed, a broken JSON shape).

Register a provider once at import (`register(RssProvider())`); the next
platforms slot in the same way (`_BUILTIN`).
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from app.analysis import language
from app.analysis.text import words
from app.core.i18n import _
from app.safe_content import Document
from app.streams.platforms import canonical_host
from app.streams.types import SourceKind

if TYPE_CHECKING:
    from app.egress import Fetched


class ProviderError(Exception):
    """The platform answered, but not with anything usable; `message` is for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BudgetExhausted(ProviderError):
    """The platform says the workspace's quota is spent (YouTube `quotaExceeded`) until `until`:
    the source is `budget_paused`, and the ledger's window is marked spent for its siblings."""

    def __init__(self, message: str, until: datetime) -> None:
        super().__init__(message)
        self.until = until


class CredentialRejected(ProviderError):
    """The platform refused the key or token itself (invalid, revoked, API not enabled):
    retrying soon cannot help, so the source is `error` at once (still retried at the cap)."""


class AccountNotFound(ProviderError):
    """The platform answered that the account it was asked to read does not exist (Bluesky's
    "Profile not found"): as a handle that does not resolve, the source is `error` at once."""


class ProviderRefused(ProviderError):
    """The platform refuses this without an account (Bluesky's keyless search, say): the
    source is `unsupported` until the workspace gives the provider a key."""


@dataclass(frozen=True)
class Credential:
    secret: str  # the token or key, unsealed just for this call; never logged or stored
    connection_id: int | None = None  # None: the workspace's key for the provider
    instance: str = ""  # the connection's host, for instance-based providers
    handle: str = ""  # the connected account
    # Seals a new secret into the same vault row (a provider's refreshed session tokens).
    save: Callable[[str], Awaitable[None]] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Connected:
    """An account a provider signed in to (`connect`): what the connection row stores."""

    handle: str
    display_name: str
    secret: str  # sealed into the connection; never shown again


@dataclass(frozen=True)
class Actor:
    """An account found by `resolve_handle`."""

    ref: str  # what author_feed needs: a DID, an account id, a feed's final URL
    handle: str  # canonical handle as people write it
    display_name: str = ""


@dataclass(frozen=True)
class FetchRequest:
    query: str = ""  # search: the adapted query
    actor: Actor | None = None  # author_feed: the resolved account
    cursor: str = ""  # what the provider returned last time ("" the first time)
    limit: int = 40  # items wanted at most


@dataclass(frozen=True)
class MediaRef:
    kind: str  # "image" | "video"
    url: str  # the remote http(s) URL; pages see it only through the media proxy
    alt: str = ""
    sensitive: bool = False  # marked sensitive (or behind a content warning): shown veiled


@dataclass(frozen=True)
class RemoteItem:
    remote_id: str  # the platform's id, as it gives it
    canonical_id: str  # lower-cased; "host/id" for instance-based providers (IDNA host)
    author_handle: str
    created_at: datetime  # timezone-aware
    content: Document
    plain_text: str
    author_ref: str = ""
    url: str = ""  # http(s) permalink or ""
    media: tuple[MediaRef, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)  # finite numbers only
    expires_at: datetime | None = None  # e.g. YouTube Data API items: fetched + 30 days
    reposted_by: str = ""  # the handle that boosted/reposted it (the item is the original)
    lang: str = ""  # the content's language as the platform tagged it (`language_tag`); "" unknown


@dataclass(frozen=True)
class Page:
    items: tuple[RemoteItem, ...] = ()
    cursor: str = ""  # the next "since" position; "" keeps the old one
    dropped: int = 0  # entries that could not be normalised
    units: int = 1  # ledger units this call used (calls, or posts read for X)


class Provider(Protocol):
    name: str  # the platform name of app.streams.platforms
    kinds: frozenset[SourceKind]  # what this provider implements

    def host_of(self, credential: Credential | None, handle: str) -> str:
        """The host a handle is resolved on (bounds resolutions in flight per host)."""
        ...

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page: ...

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page: ...

    async def home(self, credential: Credential | None, request: FetchRequest) -> Page: ...

    async def mentions(self, credential: Credential | None, request: FetchRequest) -> Page: ...

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None: ...

    async def connect(self, handle: str, secret: str, instance: str = "") -> Connected: ...


class BaseProvider:
    """Defaults for what a provider does not implement."""

    name = ""
    kinds: frozenset[SourceKind] = frozenset()
    # Kinds that cannot run keyless: without the workspace's key the poll fails before the
    # ledger is touched (e.g. YouTube search needs a Data API key).
    needs_key: frozenset[SourceKind] = frozenset()

    def host_of(self, credential: Credential | None, handle: str) -> str:
        return credential.instance if credential and credential.instance else self.name

    def _cannot(self, kind: str) -> ProviderError:
        return ProviderError(_("%(p)s cannot read %(k)s.") % {"p": self.name, "k": kind})

    async def search(self, credential: Credential | None, request: FetchRequest) -> Page:
        raise self._cannot("search")

    async def author_feed(self, credential: Credential | None, request: FetchRequest) -> Page:
        raise self._cannot("author feeds")

    async def home(self, credential: Credential | None, request: FetchRequest) -> Page:
        raise self._cannot("home timelines")

    async def mentions(self, credential: Credential | None, request: FetchRequest) -> Page:
        raise self._cannot("mentions")

    async def resolve_handle(self, credential: Credential | None, handle: str) -> Actor | None:
        return None

    async def connect(self, handle: str, secret: str, instance: str = "") -> Connected:
        """Check an account's secret with the platform (a sign-in) before it is stored."""
        raise ProviderError(_("%(p)s accounts cannot be connected here yet.") % {"p": self.name})


_registry: dict[str, Provider] = {}


def register(provider: Provider) -> None:
    _registry[provider.name] = provider


def unregister(name: str) -> None:
    _registry.pop(name, None)


def provider_for(name: str) -> Provider | None:
    _load_builtin()
    return _registry.get(name)


def needs_key(name: str, kind: SourceKind) -> bool:
    """True when `name` cannot read `kind` without the workspace's key (a poll without one
    fails saying so, and the wall links that reason to where the key is entered)."""
    return kind in getattr(provider_for(name), "needs_key", frozenset())


_BUILTIN = {
    "rss": ("app.streams.providers.rss", "RssProvider"),
    "mastodon": ("app.streams.providers.mastodon", "MastodonProvider"),
    "bluesky": ("app.streams.providers.bluesky", "BlueskyProvider"),
    "youtube": ("app.streams.providers.youtube", "YouTubeProvider"),
    "x": ("app.streams.providers.x", "XProvider"),
    "instagram": ("app.streams.providers.instagram", "InstagramProvider"),
}


def _load_builtin() -> None:
    """Register the shipped providers that are missing (imported late: they import this)."""
    for name, (module, cls) in _BUILTIN.items():
        if name not in _registry:
            register(getattr(importlib.import_module(module), cls)())


async def fetch(
    provider: Provider, kind: SourceKind, credential: Credential | None, request: FetchRequest
) -> Page:
    """The one call the scheduler makes: the provider's method for `kind`; posts the
    platform did not tag with a language get the one their words show, when they show one."""
    if kind == SourceKind.SEARCH:
        page = await provider.search(credential, request)
    elif kind == SourceKind.AUTHOR:
        page = await provider.author_feed(credential, request)
    elif kind == SourceKind.HOME:
        page = await provider.home(credential, request)
    else:
        page = await provider.mentions(credential, request)
    return with_languages(page)


def with_languages(page: Page) -> Page:
    """`page` with its untagged posts' language guessed from their words (many feeds and
    some platforms tag none): the wall's search stems a post in its language. A post too
    short or too mixed to tell stays untagged (`language.detect` says nothing unsure)."""
    if all(item.lang for item in page.items):
        return page
    items = tuple(
        item if item.lang else replace(item, lang=language.detect(words(item.plain_text)))
        for item in page.items
    )
    return replace(page, items=items)


def canonical_id(remote_id: str, host: str = "") -> str:
    """A remote id as dedup keys use it: lower-cased, and "host/id" for instance-based
    providers (the IDNA host the object lives on, default port dropped)."""
    if not host:
        return remote_id.lower()
    return f"{canonical_host(host) or host.lower()}/{remote_id}".lower()


# A BCP 47 tag as platforms send them: a 2-3 letter language, then subtags ("pt-BR",
# "zh-Hant-TW"). Anything else is not trusted as a language (it ends up in an attribute).
_LANGUAGE_TAG = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{1,8})*")
MAX_LANGUAGE_TAG = 35
# Tags that name no language: undetermined, several, none, and the private-use range X
# uses for posts of only media, hashtags or links ("qme", "qht", "qam"...).
_NOT_A_LANGUAGE = re.compile(r"und|mul|zxx|mis|q[a-t][a-z]")


def language_tag(value: object) -> str:
    """A content language tag as a platform sent it, in BCP 47's casing ("de", "pt-BR",
    "zh-Hant"), or "" when it is missing, malformed or names no language."""
    if not isinstance(value, str):
        return ""
    tag = value.strip().replace("_", "-").lower()
    if len(tag) > MAX_LANGUAGE_TAG or not _LANGUAGE_TAG.fullmatch(tag):
        return ""
    language, *subtags = tag.split("-")
    if _NOT_A_LANGUAGE.fullmatch(language):
        return ""
    return "-".join([language, *(_subtag_case(s) for s in subtags)])


def _subtag_case(subtag: str) -> str:
    if len(subtag) == 4 and subtag.isalpha():
        return subtag.title()  # a script: Hant, Latn
    if len(subtag) == 2:
        return subtag.upper()  # a region: BR, AT
    return subtag


def dedup_key(workspace_id: int, provider: str, canonical_id: str) -> str:
    """SHA-256 of workspace | provider | canonical remote id: one row per object per workspace,
    however many connections or columns reached it."""
    raw = f"{workspace_id}|{provider}|{canonical_id.lower()}"
    return hashlib.sha256(raw.encode()).hexdigest()


def json_object(fetched: Fetched, platform: str) -> dict[str, Any]:
    """An API answer's JSON object; anything else is a `ProviderError` naming the platform."""
    try:
        data = fetched.json()
    except ValueError:
        message = _("%(p)s answered with something other than JSON.")
        raise ProviderError(message % {"p": platform}) from None
    if not isinstance(data, dict):
        raise ProviderError(_("%(p)s answered with an unexpected shape.") % {"p": platform})
    return data
