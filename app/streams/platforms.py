"""What each platform can do, and how a column's words become each one's query. Pure.

The catalogue is the platforms' facts (seed 003 section 2.1), whether or not
this server has a provider for them yet: Mastodon has no global search, only
hashtag timelines; Instagram only single hashtags; TikTok nothing compliant.
Adaptation happens once, when a column is saved, so two columns asking the
same of a platform share one source (and one poll).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import idna

from app.articles.urls import InvalidUrl, normalize_url
from app.core.i18n import N_, _
from app.streams.types import ColumnType, SourceKind, Unsupported

# Google renews a key's daily quota at its own midnight, Pacific time.
QUOTA_RESET_ZONE = ZoneInfo("America/Los_Angeles")
MIN_INTERVAL_MS = 60_000  # a person may ask for no faster than this
MAX_INTERVAL_MS = 3_600_000  # ... and no slower
DEFAULT_INTERVAL_MS: dict[ColumnType, int] = {
    ColumnType.PLATFORM_FEED: 60_000,
    ColumnType.KEYWORD: 120_000,
    ColumnType.ACCOUNT_LIST: 180_000,
    ColumnType.SAVED_SEARCH: 300_000,
}


@dataclass(frozen=True)
class LedgerRule:
    """A provider's spend that is not per-host: every call debits `bucket` in its window."""

    bucket: str  # e.g. "yt_search_calls"
    window: timedelta  # windows start at multiples of this since the epoch
    default_cap: int  # units per window per workspace; 0 = off until an admin raises it
    kinds: frozenset[SourceKind]  # the calls it applies to
    per_item: bool = False  # units are items read (X bills per post), not calls
    min_units: int = 1  # a call needs at least this many units left (X: max_results >= 10)
    # Rolling: a unit is a distinct subject (an Instagram hashtag) that counts for `window`
    # after its first use; using it again meanwhile is free. Not per fixed window.
    rolling: bool = False
    unit_label: str = N_("calls")  # what the units are, for people (translated where shown)
    # Day windows that start at this zone's midnight instead of UTC's: Google renews a key's
    # daily quota at midnight Pacific time.
    zone: tzinfo | None = None


@dataclass(frozen=True)
class Platform:
    name: str
    label: str
    kinds: frozenset[SourceKind]  # what it can be asked for at all
    instance_based: bool = False  # hosts vary (Mastodon): ids are host-qualified
    min_interval_ms: int = MIN_INTERVAL_MS  # the per-host budget's floor for one source
    ledger: LedgerRule | None = None
    workspace_key: bool = False  # takes a workspace-level key (API key, bearer, app password)
    no_search_reason: str = ""
    no_accounts_reason: str = ""


_ALL = frozenset(SourceKind)

PLATFORMS: dict[str, Platform] = {
    p.name: p
    for p in (
        Platform("bluesky", "Bluesky", _ALL, workspace_key=True),
        Platform("mastodon", "Mastodon", _ALL, instance_based=True),
        Platform(
            "youtube",
            "YouTube",
            frozenset({SourceKind.SEARCH, SourceKind.AUTHOR}),
            workspace_key=True,
            ledger=LedgerRule(
                "yt_search_calls",
                timedelta(days=1),
                90,
                frozenset({SourceKind.SEARCH}),
                zone=QUOTA_RESET_ZONE,
            ),
        ),
        Platform(
            "x",
            "X",
            _ALL,
            workspace_key=True,
            ledger=LedgerRule(
                "x_post_reads",
                timedelta(days=30),
                0,
                _ALL,
                per_item=True,
                min_units=10,
                unit_label=N_("posts read"),
            ),
        ),
        Platform(
            "instagram",
            "Instagram",
            frozenset({SourceKind.SEARCH}),
            workspace_key=True,
            ledger=LedgerRule(
                "ig_hashtag_window",
                timedelta(days=7),
                30,
                frozenset({SourceKind.SEARCH}),
                rolling=True,
                unit_label=N_("hashtags"),
            ),
            no_accounts_reason=N_("Instagram does not let apps follow other people's accounts."),
        ),
        Platform(
            "tiktok",
            "TikTok",
            frozenset(),
            no_search_reason=N_("TikTok offers no search that a newsroom may use."),
            no_accounts_reason=N_("TikTok offers no public account feeds."),
        ),
        Platform(
            "threads",
            "Threads",
            frozenset(),
            no_search_reason=N_(
                "Threads is not available: its search API is open only to apps Meta has"
                " reviewed, one by one."
            ),
            no_accounts_reason=N_(
                "Threads is not available: reading other people's profiles needs an app Meta"
                " has reviewed."
            ),
        ),
        Platform(
            "rss",
            "RSS/Atom",
            frozenset({SourceKind.AUTHOR}),
            min_interval_ms=120_000,
            instance_based=True,
            no_search_reason=N_(
                "RSS and Atom feeds cannot be searched; add the feed to an account list."
            ),
        ),
    )
}


def platform(name: str) -> Platform | None:
    return PLATFORMS.get(name)


def floor_ms(p: Platform, kind: SourceKind) -> int:
    """The shortest interval the platform's budgets allow one source of `kind`."""
    floor = p.min_interval_ms
    rule = p.ledger
    # Only a per-call window spreads its calls: items read (X) and hashtags (Instagram,
    # free to poll again once used) do not depend on how often a source polls.
    if (
        rule is not None
        and kind in rule.kinds
        and rule.default_cap > 0
        and not (rule.per_item or rule.rolling)
    ):
        per_call = int(rule.window.total_seconds() * 1000 / rule.default_cap)
        floor = max(floor, per_call)
    return floor


@dataclass(frozen=True)
class RollingSlot:
    allowed: bool
    new_use: bool  # the subject takes a slot now (its 7 days start)
    frees_at: datetime  # allowed: when this subject's use ends; else when the next slot frees


def rolling_slot(
    uses: dict[str, datetime], subject: str, *, cap: int, window: timedelta, now: datetime
) -> RollingSlot:
    """A rolling ledger of distinct subjects (Instagram: 30 hashtags per 7 days): `uses` maps
    each subject to its first use; a use counts until first use + window. Pure."""
    live = {s: t for s, t in uses.items() if t + window > now}
    if subject in live:
        return RollingSlot(True, False, live[subject] + window)
    if len(live) < cap:
        return RollingSlot(True, True, now + window)
    oldest = min(live.values(), default=now)
    return RollingSlot(False, False, oldest + window)


def clamp_interval(interval_ms: int | None, column_type: ColumnType) -> int:
    wanted = DEFAULT_INTERVAL_MS[column_type] if interval_ms is None else interval_ms
    return max(MIN_INTERVAL_MS, min(MAX_INTERVAL_MS, wanted))


# Queries ------------------------------------------------------------------------------

_HASHTAG = re.compile(r"#(\w+)", re.UNICODE)
_WORD = re.compile(r"(\w+)", re.UNICODE)


def adapt_query(name: str, query: str, *, ledger_enabled: bool = False) -> str | Unsupported:
    """What `query` becomes for platform `name`, or why that platform cannot search for it."""
    p = PLATFORMS[name]
    if SourceKind.SEARCH not in p.kinds:
        return Unsupported(
            name, _(p.no_search_reason or "%(p)s cannot be searched.") % {"p": p.label}
        )
    if name == "mastodon":
        # Hashtag timelines only: the first #hashtag, or a query of one word as its hashtag.
        tag = _HASHTAG.search(query) or _WORD.fullmatch(query.strip())
        if tag is None:
            return Unsupported(name, _("Mastodon supports #hashtag queries only."))
        return tag.group(1).lower()
    if name == "instagram":
        whole = _HASHTAG.fullmatch(query.strip())
        if whole is None:
            return Unsupported(name, _("Instagram columns take a single #hashtag only."))
        return whole.group(1).lower()
    if name == "x" and not ledger_enabled:
        return Unsupported(
            name, _("X reads cost money: an admin must set a budget first."), in_settings=True
        )
    return query


def instance_query(tag: str, host: str) -> str:
    """A Mastodon hashtag search on one instance, as a source's query: "tag@host" (hashtag
    timelines are per instance, so each instance is its own source)."""
    return f"{tag}@{host}"


def split_instance_query(query: str) -> tuple[str, str]:
    """(tag, host) of an `instance_query`; host "" when the query names none."""
    tag, _sep, host = query.rpartition("@")
    return (tag, host) if tag else (query, "")


# Handles ------------------------------------------------------------------------------

_BSKY_HANDLE = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}")
_DID = re.compile(r"did:(?:plc|web):[a-z0-9._:%-]{1,200}")
_MASTODON = re.compile(r"@?([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})@([^@\s/]{1,253})")
_YT_CHANNEL = re.compile(r"UC[A-Za-z0-9_-]{22}")
_YT_HANDLE = re.compile(r"@[A-Za-z0-9._-]{3,30}")
_X_HANDLE = re.compile(r"@?([A-Za-z0-9_]{1,15})")


def canonical_host(host: str) -> str | None:
    """A host lower-cased and IDNA-encoded, without a trailing dot or default port; None if invalid."""
    name, port = host.strip(), ""
    head, sep, tail = name.rpartition(":")
    if sep and tail.isdigit():
        name, port = head, tail
    try:
        encoded = idna.encode(name.rstrip("."), uts46=True, transitional=False).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return None
    encoded = encoded.lower()
    return encoded if port in ("", "80", "443") else f"{encoded}:{port}"


_INSTANCE = re.compile(r"[^\s/@?#\\]+\.[^\s/@?#\\]+")


def instance_host(text: str) -> str | None:
    """A Mastodon instance as people type it ("mastodon.social", "https://Chaos.Social/")
    as its canonical host; None if it is not a host name."""
    bare = text.strip()
    for scheme in ("https://", "http://"):
        if bare.lower().startswith(scheme):
            bare = bare[len(scheme) :]
    bare = bare.rstrip("/")
    if not _INSTANCE.fullmatch(bare):
        return None
    return canonical_host(bare)


def canonical_handle(name: str, handle: str) -> str | Unsupported | None:
    """The handle in the platform's canonical form; None if it is not one; Unsupported if the
    platform has no account feeds. RSS takes a feed address, which is canonicalised by its
    provider (see providers/rss.py), so it passes through trimmed."""
    p = PLATFORMS[name]
    if SourceKind.AUTHOR not in p.kinds:
        return Unsupported(
            name, _(p.no_accounts_reason or "%(p)s has no account feeds.") % {"p": p.label}
        )
    handle = handle.strip()
    if name == "bluesky":
        bare = handle.removeprefix("@").lower()
        return bare if _BSKY_HANDLE.fullmatch(bare) or _DID.fullmatch(bare) else None
    if name == "mastodon":
        found = _MASTODON.fullmatch(handle)
        host = canonical_host(found.group(2)) if found else None
        return f"{found.group(1).lower()}@{host}" if found and host else None
    if name == "youtube":
        return youtube_channel(handle)
    if name == "x":
        found = _X_HANDLE.fullmatch(handle)
        return found.group(1).lower() if found else None
    return feed_address(handle)


_YT_URL = re.compile(
    r"(?:https?://)?(?:www\.|m\.)?youtube\.com/(?:channel/(UC[A-Za-z0-9_-]{22})|(@[A-Za-z0-9._-]{3,30}))"
    r"(?:/[a-z]*)?/?(?:[?#].*)?",
    re.IGNORECASE,
)


def youtube_channel(handle: str) -> str | None:
    """A channel id (`UC` + 22), or a lower-cased `@handle`, from either or a channel URL
    (youtube.com/channel/UC..., youtube.com/@name, with a tab such as /videos)."""
    if _YT_CHANNEL.fullmatch(handle):
        return handle
    if _YT_HANDLE.fullmatch(handle):
        return handle.lower()
    found = _YT_URL.fullmatch(handle)
    if found is None:
        return None
    channel = found.group(1)
    if channel:
        return channel if _YT_CHANNEL.fullmatch(channel) else None
    return found.group(2).lower()


def feed_address(handle: str) -> str | None:
    """An RSS/Atom follow as a feed URL: a feed's http(s) address, a Mastodon
    `@user@host` (its public `@user.rss`) or a YouTube channel id (its channel feed)."""
    mastodon = _MASTODON.fullmatch(handle)
    if mastodon and handle.startswith("@"):
        host = canonical_host(mastodon.group(2))
        return f"https://{host}/@{mastodon.group(1)}.rss" if host else None
    if _YT_CHANNEL.fullmatch(handle):
        return f"https://www.youtube.com/feeds/videos.xml?channel_id={handle}"
    if not handle.lower().startswith(("http://", "https://")):
        return None
    try:
        return normalize_url(handle)
    except InvalidUrl:
        return None
