"""The column editor: its HTML form as the API's column, and the hints it shows as you type.

The form is plain HTML (it works without JavaScript); what it sends is turned
into the very JSON shape the API takes, so `app.streams.spec` is the one
place that decides what a valid column is.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.i18n import _
from app.egress import EgressError
from app.streams import queries, resolver, services
from app.streams.platforms import (
    PLATFORMS,
    adapt_query,
    canonical_handle,
    clamp_interval,
    floor_ms,
)
from app.streams.providers import ProviderError, provider_for
from app.streams.spec import MAX_ACCOUNTS, MAX_QUERY, MAX_TITLE
from app.streams.types import ColumnType, ColumnView, ConnectionView, SourceKind, Unsupported
from app.wall.labels import PLATFORMS_SETTINGS, interval_label, paces_label

# The fields take no more than the spec keeps: a longer title was typed, then refused.
LIMITS = {"title": MAX_TITLE, "query": MAX_QUERY}
# The intervals people pick from (minutes); the effective value is shown beside it.
INTERVAL_CHOICES = (1, 2, 5, 10, 30, 60)
# Search-capable platforms a saved search starts with.
SEARCH_PLATFORMS = ("bluesky", "mastodon", "youtube")
RESOLVE_TIMEOUT_S = 4.0
_KINDS = frozenset(k.value for k in SourceKind)


class FormData(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...
    def getall(self, key: str, default: Any = ...) -> list[Any]: ...


@dataclass(frozen=True)
class Typed:
    """The editor's fields as a person typed them (put back on a 422)."""

    type: str
    title: str = ""
    connection_id: str = ""
    kinds: tuple[str, ...] = ("home",)
    query: str = ""
    platforms: tuple[str, ...] = SEARCH_PLATFORMS
    instances: str = ""  # Mastodon instances to search, space- or comma-separated
    accounts: str = ""
    interval: str = ""
    paused: bool = False

    @classmethod
    def of(cls, form: FormData) -> Typed:
        return cls(
            type=str(form.get("type", "")),
            title=str(form.get("title", "")),
            connection_id=str(form.get("connection_id", "")),
            kinds=tuple(str(k) for k in form.getall("kinds", [])),
            query=str(form.get("query", "")),
            platforms=tuple(str(p) for p in form.getall("platforms", [])),
            instances=str(form.get("instances", "")),
            accounts=str(form.get("accounts", "")),
            interval=str(form.get("interval", "")),
            paused=form.get("paused") in ("on", "1", "true"),
        )

    @classmethod
    def of_column(cls, v: ColumnView) -> Typed:
        interval = v.refresh_policy.get("interval_ms")
        accounts = "\n".join(f"{a['provider']}:{a['handle']}" for a in v.spec.get("accounts", []))
        return cls(
            type=v.type.value,
            title=v.title,
            connection_id=str(v.spec.get("connection_id", "")),
            kinds=tuple(v.spec.get("kinds", ("home",))),
            query=str(v.spec.get("query", "")),
            platforms=tuple(v.spec.get("platforms", ())),
            instances=" ".join(v.spec.get("instances", ())),
            accounts=accounts,
            interval=str(interval // 60_000) if isinstance(interval, int) else "",
            paused=bool(v.refresh_policy.get("paused")),
        )


def column_data(typed: Typed) -> dict[str, Any]:
    """The form as the API's column JSON (validated by app.streams.spec)."""
    data: dict[str, Any] = {"type": typed.type, "title": typed.title}
    policy: dict[str, Any] = {"paused": typed.paused}
    if typed.interval.strip():
        minutes = typed.interval.strip()
        policy["interval_ms"] = int(minutes) * 60_000 if minutes.isdigit() else minutes
    data["refresh_policy"] = policy
    if typed.type == ColumnType.PLATFORM_FEED:
        raw = typed.connection_id.strip()
        connection: Any = int(raw) if raw.isdigit() else raw
        data["spec"] = {"connection_id": connection, "kinds": list(typed.kinds)}
    elif typed.type == ColumnType.ACCOUNT_LIST:
        data["spec"] = {"accounts": [account_entry(line) for line in account_lines(typed.accounts)]}
    else:
        data["spec"] = {"query": typed.query, "platforms": list(typed.platforms)}
        instances = typed.instances.replace(",", " ").split()
        if instances:
            data["spec"]["instances"] = instances
    return data


def account_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


_PREFIX = re.compile(r"([a-z]+):(?!//)(.+)")
_YT = re.compile(r"UC[A-Za-z0-9_-]{22}")


def account_entry(line: str) -> dict[str, str]:
    """`provider:handle`, or a handle whose shape names its platform."""
    prefixed = _PREFIX.fullmatch(line)
    if prefixed and prefixed.group(1) in PLATFORMS:
        return {"provider": prefixed.group(1), "handle": prefixed.group(2).strip()}
    return {"provider": infer_platform(line), "handle": line}


def infer_platform(handle: str) -> str:
    """`https://...` a feed; `UC...` a YouTube channel; `@user@host` Mastodon; else Bluesky."""
    if handle.lower().startswith(("http://", "https://")):
        return "rss"
    if _YT.fullmatch(handle) or (
        handle.startswith("@") and "@" not in handle[1:] and "." not in handle
    ):
        return "youtube"
    if "@" in handle.lstrip("@"):
        return "mastodon"
    return "bluesky"


def field_errors(errors: Mapping[str, str]) -> dict[str, str]:
    """API field paths as the editor's fields (every account problem under "accounts")."""
    out: dict[str, str] = {}
    for path, message in errors.items():
        found = re.match(r"spec\.accounts\[(\d+)\]", path)
        if found:
            line = _("Line %(n)s: %(m)s") % {"n": int(found.group(1)) + 1, "m": message}
            out["accounts"] = f"{out['accounts']} {line}" if "accounts" in out else line
            continue
        name = {
            "spec.query": "query",
            "spec.platforms": "platforms",
            "spec.instances": "instances",
            "spec.connection_id": "connection_id",
            "spec.kinds": "kinds",
            "spec.accounts": "accounts",
            "refresh_policy.interval_ms": "interval",
            "refresh_policy": "interval",
        }.get(path, path or "title")
        out.setdefault(name, message)
    return out


# Hints as you type --------------------------------------------------------------------


@dataclass(frozen=True)
class Hint:
    platform: str
    label: str
    ok: bool
    note: str  # "full text", "#acampada only", the reason it cannot
    fix: tuple[str, str] | None = None  # (what to do, where): a budget that is off


def query_hints(query: str, budgets_off: frozenset[str] = frozenset()) -> list[Hint]:
    """What each platform would make of `query` (Bluesky ✓ full text · Mastodon #tag only ...);
    `budgets_off`: platforms whose budget cap is 0 here (X reads nothing until it is raised)."""
    hints = []
    for name, p in PLATFORMS.items():
        # Nothing typed yet: a hashtag stands in, to say what each platform takes.
        adapted = adapt_query(
            name, query.strip() or "#news", ledger_enabled=name not in budgets_off
        )
        if isinstance(adapted, Unsupported):
            fix = (_("Set a budget in Settings → Platforms"), f"{PLATFORMS_SETTINGS}#budgets")
            hints.append(
                Hint(name, p.label, False, adapted.reason, fix if name in budgets_off else None)
            )
        elif provider_for(name) is None or SourceKind.SEARCH not in services.provider_kinds(name):
            hints.append(Hint(name, p.label, False, _("not available on this server yet")))
        elif name in ("mastodon", "instagram"):
            only = _("#%(t)s only") % {"t": adapted} if query.strip() else _("#hashtags only")
            hints.append(Hint(name, p.label, True, only))
        elif p.ledger is not None and p.ledger.per_item:
            hints.append(Hint(name, p.label, True, _("billed per post read, within its budget")))
        elif p.ledger is not None:
            hints.append(Hint(name, p.label, True, _("uses its daily quota")))
        else:
            hints.append(Hint(name, p.label, True, _("full text")))
    return hints


async def budgets_off(workspace_id: int) -> frozenset[str]:
    """The platforms whose budget cap is 0 in this workspace (off until an admin raises it)."""
    return frozenset(b.provider for b in await queries.budgets(workspace_id) if b.cap == 0)


async def workspace_hints(workspace_id: int, query: str) -> list[Hint]:
    """query_hints with this workspace's budgets: what the editor's form, its hints and its
    "Effective:" line read."""
    return query_hints(query, await budgets_off(workspace_id))


@dataclass(frozen=True)
class AccountRow:
    line: str
    platform: str
    state: str  # ok | missing | invalid | unknown (could not ask now)
    note: str


async def check_accounts(workspace_id: int, text: str) -> list[AccountRow]:
    """Each pasted line resolved through its provider (cached), at most MAX_ACCOUNTS."""
    lines = account_lines(text)[:MAX_ACCOUNTS]
    return list(await asyncio.gather(*(_check(workspace_id, line) for line in lines)))


async def _check(workspace_id: int, line: str) -> AccountRow:
    entry = account_entry(line)
    name, handle = entry["provider"], entry["handle"]
    label = PLATFORMS[name].label
    canonical = canonical_handle(name, handle)
    if isinstance(canonical, Unsupported):
        return AccountRow(line, name, "invalid", canonical.reason)
    if canonical is None:
        return AccountRow(line, name, "invalid", _("not a %(p)s handle") % {"p": label})
    provider = provider_for(name)
    if provider is None or SourceKind.AUTHOR not in provider.kinds:
        return AccountRow(
            line, name, "unknown", _("%(p)s accounts cannot be followed here yet") % {"p": label}
        )
    credential = await services.workspace_credential(workspace_id, name)
    try:
        async with asyncio.timeout(RESOLVE_TIMEOUT_S):
            actor = await resolver.resolve(provider, credential, canonical)
    except (EgressError, TimeoutError, ProviderError):  # ProviderError: e.g. X without its key
        return AccountRow(
            line,
            name,
            "unknown",
            _("could not ask %(p)s now; checked again when saved") % {"p": label},
        )
    if actor is None:
        return AccountRow(line, name, "missing", _("not found on %(p)s") % {"p": label})
    return AccountRow(line, name, "ok", actor.display_name or canonical)


async def missing_accounts(workspace_id: int, typed: Typed) -> list[AccountRow]:
    """The saved account list's lines its platform answered "not found" to: told to the person
    who saved it at once. The save resolved them a moment ago, so the handle cache answers."""
    if typed.type != ColumnType.ACCOUNT_LIST:
        return []
    rows = await check_accounts(workspace_id, typed.accounts)
    return [row for row in rows if row.state == "missing"]


def _asked(typed: Typed) -> tuple[ColumnType, int]:
    """The column's type and the interval it asks for (clamped; its type's default unset)."""
    try:
        column_type = ColumnType(typed.type)
    except ValueError:
        column_type = ColumnType.KEYWORD
    minutes = typed.interval.strip()
    return column_type, clamp_interval(
        int(minutes) * 60_000 if minutes.isdigit() else None, column_type
    )


def effective_paces(
    typed: Typed, *, readable: Collection[str] | None = None, feed_provider: str = ""
) -> list[tuple[str, int]]:
    """(platform, interval ms) of each source the column will poll: the clamped ask, raised to
    that platform's floor. A column is fetched at each source's own pace (wall.md), so a
    YouTube search's 16 minutes is YouTube's alone. `readable`: the keyword platforms that can
    take the query (the hints' ✓); `feed_provider`: the chosen connection's platform."""
    column_type, asked = _asked(typed)
    wanted: list[tuple[str, SourceKind]] = []
    if column_type in (ColumnType.KEYWORD, ColumnType.SAVED_SEARCH):
        wanted = [(p, SourceKind.SEARCH) for p in typed.platforms
                  if readable is None or p in readable]  # fmt: skip
    elif column_type == ColumnType.ACCOUNT_LIST:
        wanted = [(account_entry(line)["provider"], SourceKind.AUTHOR)
                  for line in account_lines(typed.accounts)]  # fmt: skip
    elif feed_provider:
        wanted = [(feed_provider, SourceKind(k)) for k in typed.kinds if k in _KINDS]
    return [
        (name, max(asked, floor_ms(PLATFORMS[name], kind)))
        for name, kind in wanted
        if name in PLATFORMS and kind in services.provider_kinds(name)
    ]


def effective_label(
    typed: Typed, hints: Sequence[Hint], connections: Sequence[ConnectionView]
) -> str:
    """The editor's "Effective:": each platform at its pace ("every 2 minutes · YouTube: every
    16 minutes"), as the column's header will say it; the ask alone while no source is named.
    `hints`: what each platform makes of the query; `connections`: the feed's choices (the
    select shows the first while none is chosen)."""
    feed = next((k for k in connections if str(k.id) == typed.connection_id), None)
    if feed is None and connections:
        feed = connections[0]
    paces = effective_paces(
        typed,
        readable={h.platform for h in hints if h.ok},
        feed_provider=feed.provider if feed else "",
    )
    return paces_label(paces) if paces else interval_label(_asked(typed)[1])
