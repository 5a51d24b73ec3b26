"""Checking a column as sent (JSON) into a `ColumnForm`, or every field's problem. Pure.

Nothing invalid is ever stored: a bad spec is a 422 naming each field
(`{"spec.query": "..."}`). Shapes (seed 003 section 1.2, snake_case here):

    platform_feed            {connection_id: int, kinds: ["home"|"mentions", ...]}  kinds default ["home"]
    keyword / saved_search   {query: 1..200 chars, no control chars, platforms: [name, ...],
                              instances?: [host, ...] (Mastodon instances to search, 1..10)}
    account_list             {accounts: 1..50 of {provider: name, handle: str, shorts?: bool}}
                             (shorts: false reads a YouTube channel's uploads without Shorts)
    refresh_policy           {interval_ms?: int, paused?: bool}  (clamped later, not refused)
"""

from __future__ import annotations

import re
from typing import Any

from app.core.i18n import _
from app.streams.platforms import PLATFORMS, canonical_handle, instance_host
from app.streams.types import (
    ColumnForm,
    ColumnType,
    RefreshPolicy,
    SourceKind,
    SpecInvalid,
    Unsupported,
)

MAX_TITLE = 80
MAX_QUERY = 200
MAX_ACCOUNTS = 50
MAX_HANDLE = 300
MAX_PLATFORMS = len(PLATFORMS)
MAX_INSTANCES = 10  # Mastodon instances one keyword column searches (one source each)
FEED_KINDS = (SourceKind.HOME, SourceKind.MENTIONS)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class _Errors(dict[str, str]):
    def add(self, field: str, message: str) -> None:
        self.setdefault(field, message)


def parse_column(data: object, *, current: ColumnForm | None = None) -> ColumnForm:
    """A whole column (create), or `current` with the fields `data` carries (update)."""
    errors = _Errors()
    if not isinstance(data, dict):
        raise SpecInvalid({"": _("Send the column as a JSON object.")})
    column_type = _type(data, current, errors)
    title = _title(data, current, errors)
    if "spec" in data or current is None:
        spec = _spec(column_type, data.get("spec"), errors) if column_type else {}
    else:
        spec = current.spec
    if "refresh_policy" in data or current is None:
        policy = _policy(data.get("refresh_policy"), errors)
    else:
        policy = current.refresh_policy
    if errors or column_type is None:
        raise SpecInvalid(errors or {"type": _("Choose a column type.")})
    return ColumnForm(type=column_type, title=title, spec=spec, refresh_policy=policy)


def _type(data: dict[str, Any], current: ColumnForm | None, errors: _Errors) -> ColumnType | None:
    if current is not None:
        if "type" in data and data["type"] != current.type.value:
            errors.add("type", _("A column's type cannot change; make a new column instead."))
        return current.type
    try:
        return ColumnType(str(data.get("type")))
    except ValueError:
        errors.add("type", _("Choose one of: platform_feed, keyword, account_list, saved_search."))
        return None


def _text(value: object) -> str | None:
    return " ".join(value.split()) if isinstance(value, str) else None


def _title(data: dict[str, Any], current: ColumnForm | None, errors: _Errors) -> str:
    if current is not None and "title" not in data:
        return current.title
    title = _text(data.get("title"))
    if not title:
        errors.add("title", _("Give the column a title."))
        return ""
    if _CONTROL.search(title):
        errors.add("title", _("The title contains control characters."))
    if len(title) > MAX_TITLE:
        errors.add("title", _("Keep the title to %(n)s characters.") % {"n": MAX_TITLE})
    return title


def _spec(column_type: ColumnType, spec: object, errors: _Errors) -> dict[str, Any]:
    if not isinstance(spec, dict):
        errors.add("spec", _("Send the column's spec as a JSON object."))
        return {}
    if column_type == ColumnType.PLATFORM_FEED:
        return _feed_spec(spec, errors)
    if column_type == ColumnType.ACCOUNT_LIST:
        return _accounts_spec(spec, errors)
    return _keyword_spec(spec, errors)


def _feed_spec(spec: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    connection_id = spec.get("connection_id")
    if isinstance(connection_id, bool) or not isinstance(connection_id, int) or connection_id < 1:
        errors.add("spec.connection_id", _("Choose one of the workspace's connected accounts."))
    kinds = spec.get("kinds", ["home"])
    if (
        not isinstance(kinds, list)
        or not kinds
        or any(k not in {k.value for k in FEED_KINDS} for k in kinds)
    ):
        errors.add("spec.kinds", _("Show the home timeline, mentions, or both."))
        kinds = []
    ordered = [k.value for k in FEED_KINDS if k.value in kinds]
    return {"connection_id": connection_id, "kinds": ordered}


def _keyword_spec(spec: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    raw = spec.get("query")
    query = raw.strip() if isinstance(raw, str) else ""
    if not query:
        errors.add("spec.query", _("Enter words, a phrase or a #hashtag to look for."))
    elif _CONTROL.search(query):
        errors.add("spec.query", _("The query contains control characters."))
    elif len(query) > MAX_QUERY:
        errors.add("spec.query", _("Keep the query to %(n)s characters.") % {"n": MAX_QUERY})
    platforms = spec.get("platforms")
    if not isinstance(platforms, list) or not platforms:
        errors.add("spec.platforms", _("Choose at least one platform to search."))
        platforms = []
    unknown = [p for p in platforms if not isinstance(p, str) or p not in PLATFORMS]
    if unknown:
        errors.add(
            "spec.platforms",
            _("Unknown platform %(p)r; choose from %(all)s.")
            % {"p": str(unknown[0])[:40], "all": ", ".join(PLATFORMS)},
        )
    chosen = list(dict.fromkeys(p for p in platforms if p in PLATFORMS))
    clean: dict[str, Any] = {"query": query, "platforms": chosen[:MAX_PLATFORMS]}
    instances = _instances(spec.get("instances"), errors)
    if instances:
        clean["instances"] = instances
    return clean


def _instances(value: object, errors: _Errors) -> list[str]:
    """Mastodon instances to search (hashtag timelines are per instance: there is no global
    one). Missing: the workspace's connected instances are searched."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_INSTANCES:
        errors.add(
            "spec.instances",
            _("List up to %(n)s Mastodon instances, e.g. mastodon.social.") % {"n": MAX_INSTANCES},
        )
        return []
    hosts: list[str] = []
    for entry in value:
        host = instance_host(entry) if isinstance(entry, str) and len(entry) <= 300 else None
        if host is None:
            shown = str(entry)[:60] if isinstance(entry, str) else type(entry).__name__
            errors.add("spec.instances", _("%(h)r is not an instance's address.") % {"h": shown})
            return []
        if host not in hosts:
            hosts.append(host)
    return hosts


def _accounts_spec(spec: dict[str, Any], errors: _Errors) -> dict[str, Any]:
    accounts = spec.get("accounts")
    if not isinstance(accounts, list) or not accounts:
        errors.add("spec.accounts", _("Add at least one account."))
        return {"accounts": []}
    if len(accounts) > MAX_ACCOUNTS:
        errors.add(
            "spec.accounts", _("A column follows at most %(n)s accounts.") % {"n": MAX_ACCOUNTS}
        )
        return {"accounts": []}
    clean: list[dict[str, Any]] = []
    for i, entry in enumerate(accounts):
        field = f"spec.accounts[{i}]"
        account = _account(entry, field, errors)
        if account is not None and account not in clean:
            clean.append(account)
    return {"accounts": clean}


def _account(entry: object, field: str, errors: _Errors) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        errors.add(field, _("Each account is {provider, handle}."))
        return None
    provider, handle = entry.get("provider"), entry.get("handle")
    if not isinstance(provider, str) or provider not in PLATFORMS:
        errors.add(f"{field}.provider", _("Choose from %(all)s.") % {"all": ", ".join(PLATFORMS)})
        return None
    if not isinstance(handle, str) or not handle.strip() or len(handle) > MAX_HANDLE:
        errors.add(f"{field}.handle", _("Enter the account's handle."))
        return None
    if _CONTROL.search(handle):
        errors.add(f"{field}.handle", _("The handle contains control characters."))
        return None
    canonical = canonical_handle(provider, handle)
    if isinstance(canonical, Unsupported):
        errors.add(f"{field}.provider", canonical.reason)
        return None
    if canonical is None:
        errors.add(
            f"{field}.handle",
            _("%(h)r is not a %(p)s handle.") % {"h": handle[:60], "p": PLATFORMS[provider].label},
        )
        return None
    account: dict[str, Any] = {"provider": provider, "handle": canonical}
    shorts = entry.get("shorts")
    if shorts is not None:
        if provider != "youtube" or not isinstance(shorts, bool):
            errors.add(f"{field}.shorts", _("shorts is true or false, for YouTube channels only."))
            return None
        if not shorts:
            account["shorts"] = False  # read the channel's uploads without its Shorts
    return account


def _policy(policy: object, errors: _Errors) -> RefreshPolicy:
    if policy is None:
        return RefreshPolicy()
    if not isinstance(policy, dict):
        errors.add("refresh_policy", _("Send the refresh policy as a JSON object."))
        return RefreshPolicy()
    interval = policy.get("interval_ms")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int)):
        errors.add("refresh_policy.interval_ms", _("Give the interval in whole milliseconds."))
        interval = None
    paused = policy.get("paused", False)
    if not isinstance(paused, bool):
        errors.add("refresh_policy.paused", _("paused is true or false."))
        paused = False
    return RefreshPolicy(interval_ms=interval, paused=paused)


def form_of(type_: str, title: str, spec: dict[str, Any], policy: dict[str, Any]) -> ColumnForm:
    """A stored column as a form again (to apply an update to it)."""
    return ColumnForm(
        type=ColumnType(type_),
        title=title,
        spec=spec,
        refresh_policy=RefreshPolicy(
            interval_ms=policy.get("interval_ms"), paused=bool(policy.get("paused", False))
        ),
    )
