"""What the wall says about a column's state (seed 003 section 3.5) and its sources."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.core.i18n import N_, _, format_compact, format_number, ngettext, translate_stored
from app.safe_content import http_url
from app.streams.platforms import PLATFORMS
from app.streams.providers import needs_key
from app.streams.types import (
    AggregateState,
    ColumnType,
    ColumnView,
    Refresh,
    SourceKind,
    SourceState,
    SourceView,
)
from app.web.templating import local_time

# Marked for extraction (N_): "Failing", "Rate-limited"... were never in the catalogues, so
# they stayed English in German columns.
SOURCE_STATES = {
    SourceState.PENDING: N_("Waiting for the first poll"),
    SourceState.READY: N_("Up to date"),
    SourceState.STALE: N_("Behind"),
    SourceState.ERROR: N_("Failing"),
    SourceState.UNSUPPORTED: N_("Not supported here"),
    SourceState.RATE_LIMITED: N_("Rate-limited"),
    SourceState.BUDGET_PAUSED: N_("Budget reached"),
    SourceState.DISABLED: N_("Account removed"),
}

# Sources that do not poll: neither when a column last fetched nor when it fetches next.
_IDLE = (SourceState.DISABLED, SourceState.UNSUPPORTED)

# Short marks for the header's platform icons (with the full name as their label).
PLATFORM_MARKS = {
    "bluesky": "Bs",
    "mastodon": "M",
    "youtube": "YT",
    "x": "X",
    "instagram": "IG",
    "tiktok": "TT",
    "rss": "RSS",
}


@dataclass(frozen=True)
class Status:
    """The header's dot and line, and what to do about it."""

    tone: str  # ok | pending | warn | error | paused
    text: str
    details: tuple[str, ...] = ()  # one line per source that needs attention
    action: tuple[str, str] | None = None  # (label, href)


def platform_label(name: str) -> str:
    p = PLATFORMS.get(name)
    return p.label if p else name


def platform_mark(name: str) -> str:
    return PLATFORM_MARKS.get(name, name[:2].upper())


def source_state_label(state: SourceState) -> str:
    return _(SOURCE_STATES.get(state, state.value))


def _retrying(source: SourceView) -> bool:
    """A source whose first polls failed: still `pending` (never worked) until the third."""
    return source.state == SourceState.PENDING and bool(source.last_error)


def source_label(source: SourceView) -> str:
    """A source's state in the column's source list; one whose first poll failed is not
    "Waiting for the first poll" beside the reason it failed."""
    return _("Retrying") if _retrying(source) else source_state_label(source.state)


def platforms_of(column: ColumnView) -> list[str]:
    """The platforms a column reads, in catalogue order (its header's icons)."""
    names = {s.provider for s in column.sources}
    if column.type in (ColumnType.KEYWORD, ColumnType.SAVED_SEARCH):
        names |= set(column.spec.get("platforms", []))
    elif column.type == ColumnType.ACCOUNT_LIST:
        names |= {a.get("provider", "") for a in column.spec.get("accounts", [])}
    return [name for name in PLATFORMS if name in names]


def _last_polled(column: ColumnView) -> datetime | None:
    polled = [s.last_polled_at for s in column.sources if s.last_polled_at]
    return max(polled) if polled else None


def _source_name(column: ColumnView, provider: str, label: str) -> str:
    return f"{platform_label(provider)} · {label}" if label else platform_label(provider)


def _failing_line(column: ColumnView, source: SourceView, time_zone: str) -> str:
    """A failing source's line: which source, and why. A reason that names the source already
    is said alone ("nobody.bsky.social was not found on Bluesky.", not after "Bluesky ·
    nobody.bsky.social:")."""
    why = _why(source, time_zone)
    if source.label and source.label in why:
        return why
    return f"{_source_name(column, source.provider, source.label)}: {why}"


def status(column: ColumnView, time_zone: str) -> Status:
    """The column's aggregate state, as seed 003 section 3.5 asks it to be shown."""
    state = column.aggregate_state
    at = _last_polled(column)
    hhmm = local_time(at, time_zone, "time") if at else ""
    failing = tuple(
        _failing_line(column, s, time_zone)
        for s in column.sources
        if s.state in (SourceState.ERROR, SourceState.DISABLED, SourceState.STALE) or _retrying(s)
    )
    if state == AggregateState.READY:
        return Status("ok", _("Updated %(t)s") % {"t": hhmm} if hhmm else _("Up to date"))
    if state == AggregateState.PENDING:
        return Status("pending", _("Fetching the first posts…"), failing)
    if state == AggregateState.STALE:
        return Status("warn", _("Updated %(t)s") % {"t": hhmm} if hhmm else _("Behind"), failing)
    if state == AggregateState.ERROR:
        # A column that never fetched is not "not updating": none of its sources can be read
        # (every account not found, say), and the lines below say which and why.
        if column.has_items and hhmm:
            text = _("Not updating: showing the last data from %(t)s") % {"t": hhmm}
        elif column.has_items:
            text = _("Not updating")
        else:
            text = _("No posts can be fetched")
        return Status("error", text, failing, _settings_action(column))
    if state == AggregateState.PARTIAL:
        return Status(
            "warn",
            _("Some sources are not updating"),
            failing + _paused_lines(column, time_zone),
            _settings_action(column),
        )
    if state == AggregateState.PAUSED:
        if column.refresh_policy.get("paused"):
            return Status("paused", _("Paused: resume to fetch new posts"))
        lines = _paused_lines(column, time_zone)
        return Status(
            "paused", lines[0] if lines else _("Paused"), lines[1:], _budget_action(column)
        )
    return Status("ok", _("Nothing yet"), _empty_lines(column))


def _why(source: SourceView, time_zone: str) -> str:
    """Why a source is failing: the reason its poll stored (English), in the reader's language
    and time zone, else its state."""
    return translate_stored(source.last_error, time_zone) or source_state_label(source.state)


def _paused_lines(column: ColumnView, time_zone: str) -> tuple[str, ...]:
    """Until when each paused source waits, in the reader's language and time zone (a budget
    may renew on another day than today: the day is said too)."""
    out = []
    for s in column.sources:
        until = local_time(s.next_poll_at, time_zone, "day_time")
        name = platform_label(s.provider)
        if s.state == SourceState.RATE_LIMITED:
            out.append(
                _("%(p)s asked us to slow down: next try at %(t)s") % {"p": name, "t": until}
            )
        elif s.state == SourceState.BUDGET_PAUSED:
            out.append(
                _(
                    "%(p)s paused: budget reached until %(t)s — raise the cap in Settings → Platforms"
                )
                % {"p": name, "t": until}
            )
    return tuple(out)


PLATFORMS_SETTINGS = "/settings/platforms"


def refresh_told(refresh: Refresh, column: str, time_zone: str, now: datetime) -> str:
    """What "Fetch new posts now" did, for the person who pressed it: a fetch now, or when
    the platform's minimum interval lets the next one happen (it never polls sooner)."""
    if refresh.next_poll_at is None:
        return _("%(column)s: there is nothing to fetch (no working source).") % {"column": column}
    if refresh.next_poll_at <= now + timedelta(seconds=1):
        return _("%(column)s: fetching new posts now.") % {"column": column}
    moments = {"column": column, "next": _moment(refresh.next_poll_at, time_zone, now)}
    if refresh.last_polled_at is None:
        return _("%(column)s: next fetch possible at %(next)s.") % moments
    moments["last"] = _moment(refresh.last_polled_at, time_zone, now)
    return _("%(column)s: already fetched at %(last)s; next fetch possible at %(next)s.") % moments


def missing_told(column: str, missing: Sequence[tuple[str, str]], *, every: bool) -> str:
    """What the person who saved an account list is told of the accounts their platforms do not
    know ((line as typed, platform) pairs), "" when all were found; `every`: none was found."""
    if not missing:
        return ""
    accounts = ", ".join(
        _("%(h)s on %(p)s") % {"h": line, "p": platform_label(platform)}
        for line, platform in missing
    )
    values = {"column": column, "accounts": accounts}
    if every:
        return _("%(column)s: no account was found (%(accounts)s); it cannot show posts.") % values
    return _("%(column)s: saved, but not found: %(accounts)s.") % values


def fetch_times_told(column: ColumnView, time_zone: str, now: datetime) -> str:
    """When a column fetched and fetches next, for a reader who pulled to refresh: what is
    stored is already on their wall (it is live), so the news is when more can come."""
    working = [s for s in column.sources if s.state not in _IDLE]
    polled = [s.last_polled_at for s in working if s.last_polled_at]
    due = min((s.next_poll_at for s in working), default=None)
    moments = {"column": column.title}
    if due is None or not polled:
        return _("%(column)s: up to date; it has not fetched anything yet.") % moments
    moments["last"] = _moment(max(polled), time_zone, now)
    moments["next"] = _moment(max(due, now), time_zone, now)
    return _("%(column)s: up to date. Fetched at %(last)s; next fetch at %(next)s.") % moments


def _moment(when: datetime, time_zone: str, now: datetime) -> str:
    """A time of the reader's today as the clock reads it ("14:05"); another day's with its
    day ("1. Dez., 14:05"), so last night's fetch is not read as this afternoon's."""
    today = local_time(when, time_zone, "date") == local_time(now, time_zone, "date")
    return local_time(when, time_zone, "time" if today else "day_time")


def mended_at(source: SourceView) -> str:
    """Where in Settings a source's error is mended, "" when not there: a missing workspace
    key at its own row of Settings -> Platforms (known from the source, not its words)."""
    return f"{PLATFORMS_SETTINGS}#key-{source.provider}" if source.key_missing else ""


def _budget_action(column: ColumnView) -> tuple[str, str] | None:
    if any(s.state == SourceState.BUDGET_PAUSED for s in column.sources):
        return (_("Raise the cap in Settings → Platforms"), f"{PLATFORMS_SETTINGS}#budgets")
    return None


def _settings_action(column: ColumnView) -> tuple[str, str] | None:
    """Where a failing column is mended, when it is mended in Settings → Platforms: a removed
    or failing connected account, a platform key missing or refused, a budget spent."""
    failing = [
        s
        for s in column.sources
        if s.state in (SourceState.ERROR, SourceState.DISABLED, SourceState.UNSUPPORTED)
    ]
    if any(s.state == SourceState.DISABLED for s in failing):
        return (
            _("Reconnect the account in Settings → Platforms"),
            f"{PLATFORMS_SETTINGS}#connections",
        )
    budget = _budget_action(column)
    if budget:
        return budget
    if any(s.connection_id is not None for s in failing):
        return (_("Check the account in Settings → Platforms"), f"{PLATFORMS_SETTINGS}#connections")
    if any(_keyed(s) for s in failing):
        return (_("Check the workspace keys in Settings → Platforms"), f"{PLATFORMS_SETTINGS}#keys")
    return None


def _keyed(source: SourceView) -> bool:
    """The workspace's key may be why `source` fails: its platform takes one, and reads this
    kind with it. Accounts are read keyless (Bluesky's public AppView, YouTube's channel
    feeds) unless their kind cannot be (X): an account not found there is no key's fault,
    and "Check the workspace keys" sent its reader to the wrong page."""
    p = PLATFORMS.get(source.provider)
    if p is None or not p.workspace_key:
        return False
    return source.kind != SourceKind.AUTHOR or needs_key(source.provider, source.kind)


def _empty_lines(column: ColumnView) -> tuple[str, ...]:
    """Per-platform copy for a healthy column that has never had an item."""
    lines = []
    for s in column.sources:
        name = platform_label(s.provider)
        if s.kind == SourceKind.SEARCH:
            lines.append(_("No public posts match %(q)s on %(p)s yet.") % {"q": s.label, "p": name})
        elif s.kind == SourceKind.AUTHOR:
            lines.append(_("No posts from %(a)s on %(p)s yet.") % {"a": s.label, "p": name})
        elif s.kind == SourceKind.MENTIONS:
            lines.append(_("Nobody has mentioned you on %(p)s yet.") % {"p": name})
        else:
            lines.append(_("Your %(p)s home timeline is empty so far.") % {"p": name})
    if not column.sources:
        lines.append(
            _("None of this column's platforms can be read here; edit it to choose others.")
        )
    return tuple(lines)


def interval_label(ms: int) -> str:
    minutes = round(ms / 60_000)
    if minutes < 1:
        seconds = ms // 1000
        return ngettext("every %(num)s second", "every %(num)s seconds", seconds) % {
            "num": format_number(seconds)
        }
    if minutes == 1:
        return _("every minute")
    return ngettext("every %(num)s minute", "every %(num)s minutes", minutes) % {
        "num": format_number(minutes)
    }


def polls_label(column: ColumnView) -> str:
    """How often the column fetches: its sources' fastest interval, then each platform whose
    sources fetch slower ("every 2 minutes · YouTube: every 16 minutes"). The column's
    effective interval is its slowest source's, and said alone it made a column whose Bluesky
    and Mastodon searches fetch every 2 minutes read as one fetched every 16 (YouTube's quota)."""
    paces = [(s.provider, s.interval_ms) for s in column.sources]
    return paces_label(paces) if paces else interval_label(column.effective_interval_ms)


def paces_label(paces: Sequence[tuple[str, int]]) -> str:
    """(platform, interval ms) pairs said as the wall says a column's pace: the fastest, then
    each platform slower than it with its slowest ("every 2 minutes · YouTube: every 16
    minutes"). The column header (its sources) and the editor (what it will ask) share it."""
    fastest = min(ms for _p, ms in paces)
    slower: dict[str, int] = {}
    for provider, ms in paces:
        if ms > fastest:
            slower[provider] = max(ms, slower.get(provider, 0))
    parts = [interval_label(fastest)]
    parts += [_("%(p)s: %(every)s") % {"p": platform_label(p), "every": interval_label(ms)}
              for p, ms in slower.items()]  # fmt: skip
    return " · ".join(parts)


METRICS = (("replies", "↩"), ("reposts", "⟳"), ("likes", "♥"), ("quotes", "❝"), ("views", "▶"))
# What a metric's mark means, spelled out on hover: "1.234 Likes".
_METRIC_TITLES: dict[str, Callable[[int], str]] = {
    "replies": lambda n: ngettext("%(num)s reply", "%(num)s replies", n),
    "reposts": lambda n: ngettext("%(num)s repost", "%(num)s reposts", n),
    "likes": lambda n: ngettext("%(num)s like", "%(num)s likes", n),
    "quotes": lambda n: ngettext("%(num)s quote", "%(num)s quotes", n),
    "views": lambda n: ngettext("%(num)s view", "%(num)s views", n),
}


def metrics_of(metrics: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(name, mark, short number, spelled-out title) of the metrics an item has, in the
    reader's language: "1.2K" / "1234" under the mark, "1,234 likes" / "1.234 Likes" on hover."""
    out = []
    for name, mark in METRICS:
        value = metrics.get(name)
        if isinstance(value, int | float) and value > 0:
            n = int(value)
            title = _METRIC_TITLES[name](n) % {"num": format_number(n)}
            out.append((name, mark, format_compact(n), title))
    return out


TEMPLATE_HELPERS: dict[str, Any] = {
    "column_status": status,
    "platform_label": platform_label,
    "platform_mark": platform_mark,
    "platforms_of": platforms_of,
    "source_label": source_label,
    "mended_at": mended_at,
    "interval_label": interval_label,
    "polls_label": polls_label,
    "metrics_of": metrics_of,
    "http_url": http_url,
}
