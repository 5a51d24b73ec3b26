"""Settings → Platforms: the accounts the wall reads, the workspace's keys and its budgets.

Everyone in the workspace sees what is connected, which keys are set (never the keys) and
how much of each budget is spent, because the wall's columns send them here ("reconnect",
"raise the cap"); only `settings.manage` changes anything, and the server refuses
regardless of what the page shows. Every change is one service of app.streams, the same
the JSON API calls; the page follows the columns' and settings' notices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from datastar_py.litestar import DatastarResponse
from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Template

from app.accounts.guards import allows, member_of
from app.accounts.roles import Permission
from app.core.i18n import _
from app.live.streams import follow
from app.streams import queries, services
from app.streams.platforms import PLATFORMS
from app.streams.providers import provider_for
from app.streams.types import (
    BUDGETS_TOPIC,
    COLUMNS_TOPIC,
    PLATFORM_SETTINGS_TOPIC,
    ConnectionUse,
    SourceKind,
    SourceState,
    SpecInvalid,
    StreamsError,
)
from app.wall.labels import platform_label, platform_mark
from app.web.pages import page
from app.web.templating import render_block

TEMPLATE = "wall/platforms.html"
USAGE = "wall/_platform_usage.html"  # the budgets' usage alone (a poll spent some)
URL = "/settings/platforms"
MANAGE = [allows(Permission.SETTINGS_MANAGE)]


# What the page says -----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyField:
    name: str  # the form field
    label: Callable[[], str]
    secret: bool = True  # a password input, never filled in again


@dataclass(frozen=True)
class KeySpec:
    """How a workspace key is typed: its fields, joined into the stored secret."""

    fields: tuple[KeyField, ...]
    join: str
    purpose: Callable[[], str]
    how_to: Callable[[], str]
    label_field: str = ""  # a field that is no secret and names the key ("the handle")


KEYS: dict[str, KeySpec] = {
    "bluesky": KeySpec(
        (
            KeyField("handle", lambda: _("Handle"), secret=False),
            KeyField("secret", lambda: _("App password")),
        ),
        " ",
        lambda: _(
            "Optional: Bluesky refuses searches without an account, so keyword columns"
            " search Bluesky only with it."
        ),
        lambda: connect_how_to("bluesky"),
        label_field="handle",
    ),
    "youtube": KeySpec(
        (KeyField("secret", lambda: _("API key")),),
        "",
        lambda: _("Keyword columns search YouTube with it (channel feeds need no key)."),
        lambda: _(
            "Google Cloud console → APIs & Services: enable the YouTube Data API v3,"
            " then Credentials → Create credentials → API key."
        ),
    ),
    "x": KeySpec(
        (KeyField("secret", lambda: _("Bearer token")),),
        "",
        lambda: _("Every X column reads with it, within the budget below."),
        lambda: _("X developer portal → your project's app → Keys and tokens → Bearer Token."),
    ),
    "instagram": KeySpec(
        (
            KeyField("account", lambda: _("Business account ID"), secret=False),
            KeyField("secret", lambda: _("Access token")),
        ),
        ":",
        lambda: _("Hashtag columns on Instagram search with it."),
        lambda: _(
            "A Meta app with the Instagram Graph API: the id of an Instagram Business or"
            " Creator account and a user access token for it."
        ),
    ),
}


def connect_how_to(provider: str) -> str:
    if provider == "mastodon":
        return _(
            "On your instance: Preferences → Development → New application. Give it a name,"
            " tick only the read scopes, save it, then copy “Your access token”."
        )
    if provider == "bluesky":
        return _(
            "In Bluesky: Settings → Privacy and security → App passwords → Add App Password."
            " Never use the account's own password."
        )
    return ""


def not_connectable(provider: str) -> str:
    """Why a person cannot connect their own account of this platform here."""
    reasons = {
        "youtube": _(
            "YouTube needs no connected account: channel feeds are public, and search uses"
            " the workspace's API key."
        ),
        "x": _(
            "X accounts cannot be connected: X bills every read, so Newsdesk reads X only with"
            " the workspace's bearer token, within its budget."
        ),
        "instagram": _(
            "Instagram accounts cannot be connected: Meta lets apps search hashtags only,"
            " with the workspace's key."
        ),
        "tiktok": _("TikTok offers no API a newsroom may use."),
        "threads": _("Threads is open only to apps Meta has reviewed, one by one."),
    }
    return reasons.get(provider, _("This server cannot connect accounts of it yet."))


NOT_CONNECTABLE = ("x", "instagram", "youtube", "tiktok", "threads")


def connectable() -> list[str]:
    """Platforms whose accounts can be connected: their provider reads a home timeline."""
    return [
        name
        for name in PLATFORMS
        if (p := provider_for(name)) is not None and SourceKind.HOME in p.kinds
    ]


@dataclass(frozen=True)
class Health:
    tone: str  # ok | pending | warn | error
    text: str


def health(use: ConnectionUse) -> Health:
    """A connection's state, from what its sources last said."""
    states = set(use.states)
    if not states:
        return Health("pending", _("Connected; no column reads it yet"))
    if states & {SourceState.ERROR, SourceState.STALE}:
        return Health("error", _("Not working: %(reason)s") % {"reason": use.error or _("failing")})
    if SourceState.RATE_LIMITED in states:
        return Health("warn", _("Working; the platform asked us to slow down"))
    if states == {SourceState.PENDING}:
        return Health("pending", _("Waiting for the first poll"))
    return Health("ok", _("Working"))


def budget_title(provider: str) -> str:
    titles = {
        "youtube": _("YouTube searches per day"),
        "x": _("X posts read per 30 days"),
        "instagram": _("Instagram hashtags per 7 days"),
    }
    return titles.get(provider, platform_label(provider))


def budget_note(provider: str) -> str:
    notes = {
        "youtube": _(
            "Google's day: it renews at midnight Pacific time. 90 searches use 9,000 of the"
            " key's 10,000 daily units."
        ),
        "x": _("X bills every post read. 0 turns X off."),
        "instagram": _(
            "Instagram allows 30 different hashtags in any 7 days; each counts for 7 days from"
            " its first search."
        ),
    }
    return notes.get(provider, "")


HELPERS: dict[str, Any] = {
    "platform_label": platform_label,
    "platform_mark": platform_mark,
    "connect_how_to": connect_how_to,
    "health": health,
    "budget_title": budget_title,
    "budget_note": budget_note,
}


# The page ---------------------------------------------------------------------------------


async def _state(workspace_id: int) -> dict[str, Any]:
    keys = {k["provider"]: k for k in await queries.credentials_status(workspace_id)}
    return {
        "uses": await queries.connection_uses(workspace_id),
        "keys": [(name, KEYS[name], keys[name]) for name in KEYS if name in keys],
        "budgets": await queries.budgets(workspace_id),
    }


def _text(form: Any, key: str) -> str:
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""


class PlatformsSettings(Controller):
    path = URL
    guards = [allows(Permission.DRAFT_VIEW)]

    async def _render(self, request: Request, *, status_code: int = 200, **extra: Any) -> Template:
        viewer, workspace_id = member_of(request)
        context: dict[str, Any] = {
            **HELPERS,
            **await _state(workspace_id),
            "can_manage": viewer.can(Permission.SETTINGS_MANAGE),
            "connectable": connectable(),
            "not_connectable": [
                (n, not_connectable(n)) for n in NOT_CONNECTABLE if n not in connectable()
            ],
            "typed": {},
            "errors": {},
            "error": None,
            "confirm": None,
            "notice": _notice(request),
        }
        context.update(extra)
        return await page(request, TEMPLATE, section="settings", status_code=status_code, **context)

    @get("/")
    async def show(self, request: Request) -> Template:
        return await self._render(request)

    @get("/stream")
    async def stream(self, request: Request) -> DatastarResponse:
        return platforms_stream(request)

    # Connected accounts -----------------------------------------------------------------

    @post("/connections", guards=MANAGE)
    async def connect(self, request: Request) -> Template | Redirect:
        """Check the account with its platform (through egress) and keep it sealed; on a
        refusal the form comes back with what was typed, never the secret."""
        viewer, workspace_id = member_of(request)
        form = await request.form()
        provider = _text(form, "provider")
        data = {k: _text(form, k) for k in ("provider", "handle", "instance", "secret")}
        try:
            connection_id = await services.connect_account(
                workspace_id, data, actor_user_id=viewer.user_id
            )
        except SpecInvalid as error:
            return await self._connect_failed(request, provider, data, error.errors, 422)
        except StreamsError as error:
            field = error.field or "_form"  # not about one field: said above the form
            return await self._connect_failed(
                request, provider, data, {field: error.message}, error.status
            )
        # Its home timeline becomes a column now, so the list below says which column reads it.
        await services.seed_platform_columns(workspace_id)
        return Redirect(f"{URL}?connected={connection_id}#connections", status_code=303)

    async def _connect_failed(
        self,
        request: Request,
        provider: str,
        data: dict[str, str],
        errors: dict[str, str],
        status: int,
    ) -> Template:
        typed = {k: v for k, v in data.items() if k != "secret"}  # the secret never comes back
        return await self._render(
            request, status_code=status, typed={provider: typed}, errors={provider: errors}
        )

    @get("/connections/{connection_id:int}/remove", guards=MANAGE)
    async def confirm_remove(self, request: Request, connection_id: FromPath[int]) -> Template:
        """The confirm step: what stops when this account goes."""
        _viewer, workspace_id = member_of(request)
        uses = await queries.connection_uses(workspace_id)
        found = next((u for u in uses if u.connection.id == connection_id), None)
        if found is None:
            raise NotFoundException()
        return await self._render(request, confirm=found)

    @post("/connections/{connection_id:int}/remove", guards=MANAGE)
    async def remove(self, request: Request, connection_id: FromPath[int]) -> Template | Redirect:
        _viewer, workspace_id = member_of(request)
        try:
            await services.delete_connection(workspace_id, connection_id)
        except StreamsError as error:
            return await self._render(request, status_code=error.status, error=error.message)
        return Redirect(f"{URL}?removed=1#connections", status_code=303)

    # Workspace keys -----------------------------------------------------------------------

    @post("/keys/{provider:str}", guards=MANAGE)
    async def set_key(self, request: Request, provider: FromPath[str]) -> Template | Redirect:
        _viewer, workspace_id = member_of(request)
        spec = KEYS.get(provider)
        if spec is None:
            return await self._render(request, status_code=404, error=_("Unknown platform."))
        form = await request.form()
        values = {f.name: _text(form, f.name) for f in spec.fields}
        missing = [f for f in spec.fields if not values[f.name] or len(values[f.name]) > 2000]
        if missing:
            typed = {f.name: values[f.name] for f in spec.fields if not f.secret}
            return await self._render(
                request,
                status_code=422,
                typed={f"key-{provider}": typed},
                errors={f"key-{provider}": {missing[0].name: _("Enter the %(what)s.")
                                            % {"what": missing[0].label()}}},
            )  # fmt: skip
        secret = spec.join.join(values[f.name] for f in spec.fields)
        label = values.get(spec.label_field, "") if spec.label_field else ""
        await services.set_credential(workspace_id, provider, secret, label)
        return Redirect(f"{URL}?saved={provider}#keys", status_code=303)

    @post("/keys/{provider:str}/remove", guards=MANAGE)
    async def remove_key(self, request: Request, provider: FromPath[str]) -> Redirect:
        _viewer, workspace_id = member_of(request)
        await services.remove_credential(workspace_id, provider)
        return Redirect(f"{URL}?saved={provider}#keys", status_code=303)

    # Budgets ------------------------------------------------------------------------------

    @post("/budgets/{provider:str}", guards=MANAGE)
    async def set_cap(self, request: Request, provider: FromPath[str]) -> Template | Redirect:
        _viewer, workspace_id = member_of(request)
        form = await request.form()
        raw = _text(form, "cap")
        try:
            if not raw.isdigit():
                raise StreamsError(_("Give the cap as a whole number, 0 or more."), field="cap")
            await services.set_ledger_cap(workspace_id, provider, int(raw))
        except StreamsError as error:
            return await self._render(
                request,
                status_code=error.status,
                typed={f"budget-{provider}": {"cap": raw}},
                errors={f"budget-{provider}": {"cap": error.message}},
            )
        return Redirect(f"{URL}?saved={provider}#budgets", status_code=303)


def platforms_stream(request: Request) -> DatastarResponse:
    """Connections follow their columns' states; keys and budgets follow the settings'
    notices only (and not when the stream opens: a page showing a refused form keeps
    what was typed and its message); a budget's usage follows what polls spend, patched
    alone so the cap form beside it is left as it is."""
    viewer, workspace_id = member_of(request)
    can_manage = viewer.can(Permission.SETTINGS_MANAGE)
    opened = False

    async def render(changed: set[str]) -> list[str]:
        nonlocal opened
        regions = [(TEMPLATE, "connections")]
        if opened and PLATFORM_SETTINGS_TOPIC in changed:
            regions += [(TEMPLATE, "keys"), (TEMPLATE, "budgets")]
        elif opened and BUDGETS_TOPIC in changed:
            regions.append((USAGE, "usage"))
        opened = True
        context = {**HELPERS, **await _state(workspace_id), "can_manage": can_manage}
        return [
            render_block(template, block, request, viewer=viewer, typed={}, errors={}, **context)
            for template, block in regions
        ]

    return follow(request, {COLUMNS_TOPIC, PLATFORM_SETTINGS_TOPIC, BUDGETS_TOPIC}, render)


def _notice(request: Request) -> str:
    """The line a redirect back to the page asks for."""
    q = request.query_params
    if q.get("connected"):
        return _("Connected. Its home timeline is a column on the wall now.")
    if q.get("removed"):
        return _("The account was removed; its columns say so until it is connected again.")
    if q.get("saved"):
        return _("Saved.")
    return ""


PAGE_HANDLERS = [PlatformsSettings]
