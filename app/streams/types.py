"""Values of the wall that cross a boundary: states, views, errors, live topics."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class ColumnType(StrEnum):
    PLATFORM_FEED = "platform_feed"  # one connection's home and/or mentions
    KEYWORD = "keyword"  # one query across platforms
    ACCOUNT_LIST = "account_list"  # curated accounts across platforms
    SAVED_SEARCH = "saved_search"  # a keyword column that came from a saved search


class SourceKind(StrEnum):
    HOME = "home"
    MENTIONS = "mentions"
    SEARCH = "search"
    AUTHOR = "author"


class SourceState(StrEnum):
    PENDING = "pending"  # never polled yet
    READY = "ready"  # the last poll worked
    STALE = "stale"  # one or two polls failed after it had worked; old items stay
    ERROR = "error"  # three or more failures in a row (still retried at the cap)
    UNSUPPORTED = "unsupported"  # this server has no provider for it; never polled
    RATE_LIMITED = "rate_limited"  # the host said wait (429/Retry-After)
    BUDGET_PAUSED = "budget_paused"  # the provider ledger's window is spent
    DISABLED = "disabled"  # its connection was removed


class AggregateState(StrEnum):
    READY = "ready"
    PENDING = "pending"
    STALE = "stale"
    ERROR = "error"
    PARTIAL = "partial"
    EMPTY = "empty"
    PAUSED = "paused"


def column_topic(column_id: int) -> str:
    """The live topic of one column's items and sources: a wall page follows one per column."""
    return f"streams.column:{column_id}"


# The live topic of the wall's column list (added, removed, renamed, reordered, states).
COLUMNS_TOPIC = "streams.columns"


class StreamsError(Exception):
    """A request the wall cannot carry out, with a message a person understands."""

    def __init__(self, message: str, *, field: str = "", status: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.field = field  # e.g. "spec.query", "" when not about one field
        self.status = status


class SpecInvalid(StreamsError):
    """The column (or its spec/refresh policy) is not valid: 422 with every field's message."""

    def __init__(self, errors: dict[str, str]) -> None:
        first = next(iter(errors.items()))
        super().__init__(first[1], field=first[0], status=422)
        self.errors = errors  # field path -> message


class NotFound(StreamsError):
    def __init__(self, what: str) -> None:
        super().__init__(what, status=404)


@dataclass(frozen=True)
class RefreshPolicy:
    interval_ms: int | None = None  # as asked; None: the type's default
    paused: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"paused": self.paused}
        if self.interval_ms is not None:
            out["interval_ms"] = self.interval_ms
        return out


@dataclass(frozen=True)
class Refresh:
    """What a manual refresh of a column could do, for the person who asked."""

    next_poll_at: datetime | None  # the earliest its sources may poll; None: none to poll
    last_polled_at: datetime | None  # the latest any of them polled; None: never


@dataclass(frozen=True)
class ColumnForm:
    """A column as asked for, after validation (spec.py)."""

    type: ColumnType
    title: str
    spec: dict[str, Any]  # the normalised spec of its type
    refresh_policy: RefreshPolicy


@dataclass(frozen=True)
class Unsupported:
    platform: str
    reason: str  # for people: "Mastodon supports #hashtag queries only."
    in_settings: bool = False  # an admin can change it in Settings -> Platforms (budget, key)

    def to_json(self) -> dict[str, Any]:
        return {"platform": self.platform, "reason": self.reason, "settings": self.in_settings}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Unsupported:
        return cls(data["platform"], data["reason"], bool(data.get("settings", False)))


@dataclass(frozen=True)
class SourceView:
    id: int
    provider: str
    connection_id: int | None
    kind: SourceKind
    query: str
    actor_ref: str
    label: str
    state: SourceState
    last_polled_at: datetime | None
    next_poll_at: datetime
    last_error: str
    interval_ms: int
    # It cannot be read without its platform's workspace key, and the workspace has none:
    # its error says so, and Settings -> Platforms (where keys are entered) mends it. Known
    # from the key's absence, never from the stored text; the API leaves it out.
    key_missing: bool = False


@dataclass(frozen=True)
class ColumnView:
    id: int
    type: ColumnType
    title: str
    position: int
    spec: dict[str, Any]
    refresh_policy: dict[str, Any]
    effective_interval_ms: int
    sources: tuple[SourceView, ...]
    aggregate_state: AggregateState
    unsupported_platforms: tuple[Unsupported, ...] = ()
    has_items: bool = False


@dataclass(frozen=True)
class ItemView:
    id: int
    dedup_key: str
    remote_id: str
    provider: str
    connection_id: int | None
    source_id: int | None
    author_handle: str
    author_ref: str
    url: str
    created_at: datetime
    fetched_at: datetime
    content: Any  # the stored AST (JSON value); app.safe_content validates it on render
    plain_text: str
    media: list[dict[str, Any]]
    metrics: dict[str, float]
    reposted_by: str = ""
    lang: str = ""  # the content's language (BCP 47), "" when the platform did not say


@dataclass(frozen=True)
class ItemPage:
    items: tuple[ItemView, ...]
    next_cursor: str | None


@dataclass(frozen=True)
class ConnectionView:
    id: int
    provider: str
    instance: str
    handle: str
    display_name: str
    configured: bool  # has sealed credentials; the secret itself never leaves the vault
    capabilities: tuple[str, ...] = field(default=())

    @property
    def other_name(self) -> str:
        """The account's name when it says more than its handle, else "": Bluesky's sign-in
        gives only the handle, and "maya.bsky.social · maya.bsky.social" read as a mistake."""
        name = self.display_name.strip()
        return "" if name in ("", self.handle) else name

    @property
    def title(self) -> str:
        """How people call it: "Maya Okafor · maya@mastodon.social", or just the handle."""
        return f"{self.other_name} · {self.handle}" if self.other_name else self.handle


# The live topic of a workspace's platform settings: its keys and budget caps.
PLATFORM_SETTINGS_TOPIC = "streams.platform_settings"
# A provider budget's usage changed (a poll spent units, gave some back, or the platform said
# the quota is spent): Settings → Platforms shows the usage live.
BUDGETS_TOPIC = "streams.budgets"


@dataclass(frozen=True)
class ConnectionUse:
    """A connection as Settings shows it: what its sources say and which columns read it."""

    connection: ConnectionView
    states: tuple[SourceState, ...]  # its active sources' states (empty: nothing reads it)
    error: str  # the last error of a failing source, for people ("" if none)
    columns: tuple[tuple[int, str], ...]  # live columns reading it: (id, title)


@dataclass(frozen=True)
class BudgetView:
    """One provider ledger in its current window."""

    provider: str
    used: int  # units spent this window (live subjects for a rolling ledger)
    cap: int  # units allowed per window; 0 = off
    window_days: int
    rolling: bool  # a unit counts for window_days after its first use (Instagram)
    renews_at: datetime | None  # the window's end; rolling: when the oldest use frees (None: none)
