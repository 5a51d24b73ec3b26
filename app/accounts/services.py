"""Use cases of accounts: the only writers of accounts' tables."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import asyncpg

from app.accounts import queries
from app.accounts.credentials import (
    MIN_PASSWORD_LENGTH,
    hash_password,
    needs_rehash,
    new_token,
    token_hash,
    verify_password,
)
from app.accounts.roles import GRANTABLE_ROLES, Role, may_manage
from app.accounts.throttle import SignInThrottle, device_user, minutes_of
from app.accounts.types import AccountError, NewSession
from app.accounts.validation import (
    MAX_DISPLAY_NAME,
    MAX_TOKEN_NAME,
    MAX_WORKSPACE_NAME,
    checked_email,
    checked_name,
)
from app.core import db
from app.core.config import active
from app.core.i18n import LANGUAGES, _, active_language, format_number, ngettext
from app.events.services import record
from app.live.notices import (
    access_changed,
    access_changed_after_commit,
    top_bar_changed_after_commit,
)

log = logging.getLogger(__name__)

INVITATION_DAYS = 7
API_TOKEN_PREFIX = "nd_"  # noqa: S105  (a prefix, not a secret)


def _now() -> datetime:
    return datetime.now(UTC)


# People -------------------------------------------------------------------


def _checked_display_name(value: str) -> str:
    return checked_name(
        value,
        field="display_name",
        limit=MAX_DISPLAY_NAME,
        missing=_("Enter the name others should see."),
    )


def check_new_password(password: str, field: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(
            _("Choose a password of at least %(n)s characters.")
            % {"n": format_number(MIN_PASSWORD_LENGTH)},
            field=field,
        )


def _check_new_credentials(email: str, display_name: str, password: str) -> tuple[str, str]:
    email = checked_email(email)
    display_name = _checked_display_name(display_name)
    check_new_password(password, "password")
    return email, display_name


async def create_user(email: str, display_name: str, password: str) -> int:
    """A new person, who keeps the language they are being spoken to in (the sign-up page's,
    which followed their browser; the command line's): with the table's "en" a German
    browser's sign-up was in German and everything after it in English."""
    email, display_name = _check_new_credentials(email, display_name, password)
    try:
        return int(
            await db.fetchval(
                "INSERT INTO users (email, display_name, password_hash, locale)"
                " VALUES ($1, $2, $3, $4) RETURNING id",
                email,
                display_name,
                hash_password(password),
                active_language(),
            )
        )
    except asyncpg.UniqueViolationError:
        raise AccountError(
            _("An account with this email exists already; sign in instead."), field="email"
        ) from None


async def update_profile(user_id: int, display_name: str, locale: str, time_zone: str) -> None:
    """A person's name, language and time zone. A new name shows at once in the top bar of
    their open pages, in whichever workspace each is (told on their own channel after commit,
    as a workspace's rename is); the same name again tells nothing."""
    display_name = _checked_display_name(display_name)
    if locale not in LANGUAGES:
        raise AccountError(_("Choose one of the offered languages."), field="locale")
    try:
        ZoneInfo(time_zone)
        if time_zone not in available_timezones():
            raise ZoneInfoNotFoundError(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise AccountError(_("Choose a time zone from the list."), field="time_zone") from None
    async with db.transaction() as tx:
        old = await tx.fetchval("SELECT display_name FROM users WHERE id = $1 FOR UPDATE", user_id)
        await tx.execute(
            "UPDATE users SET display_name = $2, locale = $3, time_zone = $4 WHERE id = $1",
            user_id,
            display_name,
            locale,
            time_zone,
        )
        if display_name != old:  # the person's open pages show it in their top bar
            top_bar_changed_after_commit(tx, [user_id])


async def change_password(
    user_id: int, current: str, new: str, *, keep_session_id: int | None = None
) -> None:
    """A new password ends every other session of the person: changing it is how people
    shut out a browser they lost or forgot to sign out of. This browser stays signed in."""
    row = await db.fetchrow("SELECT password_hash FROM users WHERE id = $1", user_id)
    if row is None or not verify_password(row["password_hash"], current):
        raise AccountError(_("Your current password is not right."), field="current_password")
    check_new_password(new, "new_password")
    with db.system():  # their sessions in every workspace
        async with db.transaction() as tx:
            await tx.execute(
                "UPDATE users SET password_hash = $2 WHERE id = $1", user_id, hash_password(new)
            )
            await tx.execute(
                "DELETE FROM sessions WHERE user_id = $1 AND id IS DISTINCT FROM $2",
                user_id,
                keep_session_id,
            )
    await access_changed(user_id)  # the other sessions' open pages are cut at once


# Workspaces and members ------------------------------------------------------


def _checked_workspace_name(name: str) -> str:
    return checked_name(
        name, field="name", limit=MAX_WORKSPACE_NAME, missing=_("Give the workspace a name.")
    )


async def create_workspace(name: str, owner_user_id: int) -> int:
    name = _checked_workspace_name(name)
    async with db.transaction() as tx:
        workspace_id = int(
            await tx.fetchval("INSERT INTO workspaces (name) VALUES ($1) RETURNING id", name)
        )
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'owner')",
            workspace_id,
            owner_user_id,
        )
        await record(tx, "workspace_created", actor_user_id=owner_user_id, subject=name)
    return workspace_id


async def rename_workspace(workspace_id: int, name: str, *, actor_user_id: int) -> bool:
    """An owner renames the workspace; whether its name changed. Every member's open pages show
    it at once, whichever workspace each page is in (their top bar and switcher: told on
    their own channels after commit); Activity keeps the old one. The same name again
    changes and tells nothing."""
    name = _checked_workspace_name(name)
    async with db.workspace_tx(workspace_id) as tx:
        old = await _owned_workspace_name(
            tx, workspace_id, actor_user_id, _("Only an owner can rename the workspace.")
        )
        if name != old:
            await tx.execute("UPDATE workspaces SET name = $2 WHERE id = $1", workspace_id, name)
            await record(
                tx, "workspace_renamed", actor_user_id=actor_user_id, subject=name, old=old
            )
            members = await tx.fetch(
                "SELECT user_id FROM memberships WHERE workspace_id = $1", workspace_id
            )
            top_bar_changed_after_commit(tx, [m["user_id"] for m in members])
    return name != old


async def create_own_workspace(name: str, user_id: int) -> int:
    """A workspace a person starts for themselves (from /welcome).

    Someone who is only a viewer anywhere may not, unless the instance allows
    it (VIEWERS_CREATE_WORKSPACES): a reader invited to one desk should not
    open desks of their own on the operator's server.
    """
    roles = [w.role for w in await queries.workspaces_of(user_id)]
    if not may_create_workspace(roles, viewers_allowed=active().viewers_create_workspaces):
        raise AccountError(
            _("Viewers cannot start workspaces here. Ask an admin of your workspace."),
            field="name",
            status=403,
        )
    return await create_workspace(name, user_id)


def may_create_workspace(roles: list[Role], *, viewers_allowed: bool) -> bool:
    """People with no workspace (new accounts) and everyone above viewer somewhere may."""
    return viewers_allowed or not roles or any(r != Role.VIEWER for r in roles)


async def add_member(
    workspace_id: int, user_id: int, role: Role, *, actor_user_id: int | None
) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        if not await _insert_member(tx, user_id, role, actor_user_id=actor_user_id):
            raise AccountError(_("This person is a member already."))


async def _insert_member(tx: db.Tx, user_id: int, role: Role, *, actor_user_id: int | None) -> bool:
    inserted = await tx.fetchval(
        """
        INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3)
        ON CONFLICT (workspace_id, user_id) DO NOTHING RETURNING id
        """,
        tx.workspace_id,
        user_id,
        role.value,
    )
    if inserted is None:
        return False
    name = await tx.fetchval("SELECT display_name FROM users WHERE id = $1", user_id)
    await record(
        tx,
        "member_added",
        actor_user_id=actor_user_id,
        subject=name or "",
        role=role.value,
        user_id=user_id,
    )
    return True


async def _locked_owner_count(tx: db.Tx) -> int:
    """The workspace's owners, their rows locked - first, in user order, before the member
    being changed: two owners leaving (or demoted) at once cannot both go. Counted without
    the locks, each saw the other still there and the workspace was left with no owner."""
    owners = await tx.fetch(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'"
        " ORDER BY user_id FOR UPDATE",
        tx.workspace_id,
    )
    return len(owners)


async def _member_role(tx: db.Tx, user_id: int) -> Role:
    role = await tx.fetchval(
        "SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE",
        tx.workspace_id,
        user_id,
    )
    if role is None:
        raise AccountError(_("This person is not a member of the workspace."), status=404)
    return Role(role)


def _check_rank(actor_role: Role | None, current: Role, new: Role | None = None) -> None:
    """Only owners make owners or touch them; `actor_role` None is the operator's own tools."""
    if actor_role is None:
        return
    if new == Role.OWNER and actor_role != Role.OWNER:
        raise AccountError(_("Only an owner can make owners."), status=403)
    if not may_manage(actor_role, current):
        raise AccountError(_("Only an owner can change or remove an owner."), status=403)


async def change_role(
    workspace_id: int,
    user_id: int,
    role: Role,
    *,
    actor_user_id: int,
    actor_role: Role | None = None,
) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        owners = await _locked_owner_count(tx)
        current = await _member_role(tx, user_id)
        _check_rank(actor_role, current, role)
        if current == Role.OWNER and role != Role.OWNER and owners <= 1:
            raise AccountError(_("A workspace keeps at least one owner."))
        await tx.execute(
            "UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2",
            workspace_id,
            user_id,
            role.value,
        )
        name = await tx.fetchval("SELECT display_name FROM users WHERE id = $1", user_id)
        await record(
            tx,
            "member_role_changed",
            actor_user_id=actor_user_id,
            subject=name or "",
            role=role.value,
        )
        access_changed_after_commit(tx, user_id)  # their open pages re-check at once


async def remove_member(
    workspace_id: int,
    user_id: int,
    *,
    actor_user_id: int,
    actor_role: Role | None = None,
    event: str = "member_removed",
) -> None:
    """`user_id` out of the workspace: their tokens there revoked, their open pages cut.
    `event` is what the Activity log records."""
    async with db.workspace_tx(workspace_id) as tx:
        await _leave(tx, user_id, actor_user_id=actor_user_id, actor_role=actor_role, event=event)
    # Their sessions leave the workspace too. System work: row-level security lets
    # no workspace transaction write a row out of its workspace. Until this runs the
    # sessions already work in no workspace (a session's workspace is its membership's).
    with db.system():
        await db.fetch(
            "UPDATE sessions SET workspace_id = NULL WHERE user_id = $1 AND workspace_id = $2",
            user_id,
            workspace_id,
        )


async def _leave(
    tx: db.Tx, user_id: int, *, actor_user_id: int, actor_role: Role | None, event: str
) -> None:
    """`user_id` out of `tx`'s workspace, the last owner kept: their membership and tokens
    there end, the Activity log records `event`, their open pages are cut after commit."""
    owners = await _locked_owner_count(tx)
    current = await _member_role(tx, user_id)
    _check_rank(actor_role, current)
    if current == Role.OWNER and owners <= 1:
        if user_id == actor_user_id:  # leaving
            raise AccountError(_("You are its only owner: make another member owner first."))
        raise AccountError(_("A workspace keeps at least one owner."))
    await tx.execute(
        "DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2",
        tx.workspace_id,
        user_id,
    )
    await tx.execute(
        "UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND workspace_id = $2 AND revoked_at IS NULL",
        user_id,
        tx.workspace_id,
    )
    name = await tx.fetchval("SELECT display_name FROM users WHERE id = $1", user_id)
    await record(tx, event, actor_user_id=actor_user_id, subject=name or "", user_id=user_id)
    access_changed_after_commit(tx, user_id)  # their open pages are cut at once


# Before the workspace row: the rows workers write while they hold them, in the order the
# workers lock them, so a worker mid-write finishes (its rows then go with the cascade)
# instead of waiting for the workspace row while holding a row the cascade waits for (a
# deadlock). The wall's posts go before their sources, whose ON DELETE SET NULL would
# otherwise update each of them first. Everything else goes by ON DELETE CASCADE.
_BEFORE_THE_WORKSPACE = (
    "DELETE FROM import_items WHERE workspace_id = $1",
    "DELETE FROM topic_runs WHERE workspace_id = $1",
    "DELETE FROM topic_sources WHERE workspace_id = $1",
    "SELECT FROM stream_sources WHERE workspace_id = $1 FOR UPDATE",
    "DELETE FROM feed_items WHERE workspace_id = $1",
)
_T = TypeVar("_T")
_DELETE_ATTEMPTS = 3  # a deadlock with a worker the order above did not foresee: again


async def _retried_on_deadlock(work: Callable[[], Awaitable[_T]]) -> _T:
    """`work` (one transaction) run again after a deadlock, up to `_DELETE_ATTEMPTS` times."""
    for _attempt in range(1, _DELETE_ATTEMPTS):
        try:
            return await work()
        except asyncpg.DeadlockDetectedError:
            pass
    return await work()


async def delete_workspace(workspace_id: int, typed_name: str, *, actor_user_id: int) -> None:
    """An owner deletes the workspace and everything in it, its name typed as the
    confirmation. One transaction; every member's open pages are cut once it commits, and
    their sessions work in no workspace (the foreign key sets it NULL), so their next page
    takes them to another workspace of theirs or to the welcome page. The workspace's own
    Activity goes with it: the deletion is logged here."""
    members = await _retried_on_deadlock(
        lambda: _delete_workspace_rows(workspace_id, typed_name, actor_user_id)
    )
    log.info("workspace %s deleted by user %s", workspace_id, actor_user_id)
    for user_id in members:
        await access_changed(user_id)


async def _owned_workspace_name(
    tx: db.Tx, workspace_id: int, actor_user_id: int, refusal: str
) -> str:
    """The workspace's name, its row locked for a rename or deletion; AccountError (404, or 403
    with `refusal`) unless it exists and `actor_user_id` owns it."""
    # NO KEY UPDATE: one such change at a time, while workers may still insert (their
    # foreign keys take KEY SHARE) until a deletion removes the workspace row itself, last.
    name = await tx.fetchval(
        "SELECT name FROM workspaces WHERE id = $1 FOR NO KEY UPDATE", workspace_id
    )
    if name is None:
        raise AccountError(_("This workspace does not exist any more."), status=404)
    if await _member_role(tx, actor_user_id) != Role.OWNER:
        raise AccountError(refusal, status=403)
    return str(name)


async def _delete_workspace_rows(
    workspace_id: int, typed_name: str, actor_user_id: int
) -> list[int]:
    """The deletion's transaction; the members it had."""
    async with db.workspace_tx(workspace_id) as tx:
        name = await _owned_workspace_name(
            tx, workspace_id, actor_user_id, _("Only an owner can delete the workspace.")
        )
        if typed_name.strip() != name:
            raise AccountError(
                _("Type the workspace's name exactly as it is shown."), field="confirm_name"
            )
        members = [
            r["user_id"]
            for r in await tx.fetch(
                "SELECT user_id FROM memberships WHERE workspace_id = $1", workspace_id
            )
        ]
        for statement in _BEFORE_THE_WORKSPACE:
            await tx.execute(statement, workspace_id)
        await tx.execute("DELETE FROM workspaces WHERE id = $1", workspace_id)
    return members


# How long deleting an account waits for a lock before it gives up, having changed nothing:
# a worker holds an import job's row for moments, but a stuck session must not hang the
# page. Module-level so tests can shorten it.
ACCOUNT_LOCK_TIMEOUT = "5s"

# Before the user row: the rows naming the person that workers lock while they write. An
# import worker holds its job's row while it records the job's events, which name the job's
# author (the foreign key takes the user row's KEY SHARE): the deletion first waits for
# those rows, holding the user row only FOR NO KEY UPDATE, so the worker finishes instead
# of deadlocking with the DELETE's ON DELETE SET NULL. Everything else goes by the foreign
# keys. System work: a person's jobs in all their workspaces.
_BEFORE_THE_USER = ("UPDATE import_jobs SET created_by = NULL WHERE created_by = $1",)


async def delete_account(user_id: int, password: str) -> None:
    """A person deletes their own account, password confirmed. Refused while they are a
    workspace's only owner (the workspace would have no one to run it). One transaction:
    they leave every workspace as `remove_member` does, then the user row goes and with it
    their sessions, API tokens, reset links and the invitations they made; what they made
    for a workspace (articles, columns, imports, events) stays with it, its author unknown.
    Their open pages are cut once it commits. Held up by a lock past ACCOUNT_LOCK_TIMEOUT,
    it changes nothing and says so."""
    row = await db.fetchrow("SELECT password_hash FROM users WHERE id = $1", user_id)
    if row is None or not verify_password(row["password_hash"], password):
        raise AccountError(_("Your password is not right."), field="delete_password")
    try:
        await _retried_on_deadlock(lambda: _delete_account_rows(user_id))
    except (asyncpg.LockNotAvailableError, asyncpg.TransactionRollbackError) as error:
        log.warning("account %s not deleted, nothing changed: %s", user_id, error)
        raise AccountError(
            _(
                "Your account could not be deleted just now: other work in your workspaces"
                " held on to it. Nothing was changed. Try again in a minute."
            ),
            status=409,
        ) from None


async def _delete_account_rows(user_id: int) -> None:
    """The deletion's transaction, unbound (the person's rows in every workspace); each
    workspace's part bound to it."""
    async with db.transaction(lock_timeout=ACCOUNT_LOCK_TIMEOUT) as tx:
        # NO KEY UPDATE: one deletion of the account at a time, while workers may still
        # name it (their foreign keys take KEY SHARE) until its row goes, last.
        if await tx.fetchrow("SELECT FROM users WHERE id = $1 FOR NO KEY UPDATE", user_id) is None:
            return  # deleted meanwhile (another tab): done
        await _refuse_only_owner(tx, user_id)
        for statement in _BEFORE_THE_USER:
            await tx.execute(statement, user_id)
        for workspace in await queries.workspaces_of(user_id):
            async with db.workspace_part(tx, workspace.id) as part:
                await _leave(
                    part, user_id, actor_user_id=user_id, actor_role=None, event="account_deleted"
                )
        await tx.execute("DELETE FROM users WHERE id = $1", user_id)
        access_changed_after_commit(tx, user_id)  # a person in no workspace has pages too


async def _refuse_only_owner(tx: db.Tx, user_id: int) -> None:
    """AccountError, naming them, when the person is the only owner of any workspace.

    Their memberships and the other owners' are locked first, in the order leaving locks
    them (per workspace its owners by user, then the person): two owners of a workspace
    deleting their accounts or leaving at once cannot both go."""
    await tx.execute(
        """SELECT FROM memberships
           WHERE workspace_id IN (SELECT workspace_id FROM memberships WHERE user_id = $1)
             AND (user_id = $1 OR role = 'owner')
           ORDER BY workspace_id, role <> 'owner', user_id FOR UPDATE""",
        user_id,
    )
    only_owner_of = await queries.workspaces_only_owned_by(user_id)
    alone_in = [name for name, alone in only_owner_of if alone]
    if alone_in:  # nobody to hand it to: the workspace goes first, by its own confirmation
        raise AccountError(
            _(
                "No one else is in %(names)s: delete the workspace first (switch to it, then"
                " Settings, Workspace), then delete your account."
            )
            % {"names": ", ".join(alone_in)}
        )
    if only_owner_of:
        raise AccountError(
            _(
                "You are the only owner of %(names)s. Make another member owner there"
                " (Settings, Members), then delete your account."
            )
            % {"names": ", ".join(name for name, _alone in only_owner_of)}
        )


# Signing in -----------------------------------------------------------------


async def sign_in(
    email: str, password: str, *, ip: str, user_agent: str, device: str | None = None
) -> NewSession:
    """A new session for the right email and password, unless attempts are throttled.

    `device` is the browser's known-device cookie: a person who signed in on this
    browser before is exempt from the slow per-account limit (app.accounts.throttle).
    """
    email = email.strip()
    # No account's email holds a NUL (and PostgreSQL refuses one in a query): no account.
    row = (
        None
        if "\x00" in email
        else await db.fetchrow(
            "SELECT id, password_hash FROM users WHERE lower(email) = lower($1) AND is_active",
            email,
        )
    )
    throttle = SignInThrottle(email, ip)
    known_device = row is not None and device_user(device) == row["id"]
    wait = await throttle.wait_seconds(known_device=known_device)
    if wait:
        minutes = minutes_of(wait)
        raise AccountError(
            ngettext(
                "Too many failed sign-ins. Try again in %(num)s minute.",
                "Too many failed sign-ins. Try again in %(num)s minutes.",
                minutes,
            )
            % {"num": format_number(minutes)},
            status=429,
        )
    if row is None or not verify_password(row["password_hash"], password):
        await throttle.failed()
        raise AccountError(_("The email or the password is not right."), status=400)
    await throttle.succeeded()
    if needs_rehash(row["password_hash"]):
        await db.fetch(
            "UPDATE users SET password_hash = $2 WHERE id = $1", row["id"], hash_password(password)
        )
    return await start_session(row["id"], user_agent=user_agent)


async def start_session(user_id: int, *, user_agent: str = "") -> NewSession:
    """A fresh session (a new cookie value every time: sign-in rotates the session)."""
    token = new_token()
    workspace_id = await queries.preferred_workspace(user_id)
    expires = _now() + timedelta(days=active().session_days)
    # System work: the browser may still carry another person's session, and the
    # request is bound to that session's workspace, not to this one.
    with db.system():
        await db.fetch(
            """
            INSERT INTO sessions (token_hash, user_id, workspace_id, expires_at, user_agent)
            VALUES ($1, $2, $3, $4, $5)
            """,
            token_hash(token),
            user_id,
            workspace_id,
            expires,
            user_agent[:300],
        )
    if workspace_id is not None:
        async with db.workspace_tx(workspace_id) as tx:
            await record(tx, "signed_in", actor_user_id=user_id)
    return NewSession(token=token, user_id=user_id, workspace_id=workspace_id)


async def end_session(token: str) -> None:
    user_id = await db.fetchval(
        "DELETE FROM sessions WHERE token_hash = $1 RETURNING user_id", token_hash(token)
    )
    if user_id is not None:
        await access_changed(user_id)  # the session's open pages are cut at once


async def touch_session(session_id: int) -> None:
    """Slide the expiry of a session in use (at most once a minute per session)."""
    await db.fetch(
        """
        UPDATE sessions SET last_seen_at = now(), expires_at = now() + make_interval(days => $2)
        WHERE id = $1 AND last_seen_at < now() - interval '1 minute'
        """,
        session_id,
        active().session_days,
    )


async def switch_workspace(session_id: int, user_id: int, workspace_id: int) -> None:
    with db.system():  # from one workspace to another: neither binds this
        member = db.is_id(workspace_id) and await db.fetchval(
            "SELECT 1 FROM memberships WHERE user_id = $1 AND workspace_id = $2",
            user_id,
            workspace_id,
        )
        if not member:
            raise AccountError(_("You are not a member of that workspace."), status=404)
        await db.fetch(
            "UPDATE sessions SET workspace_id = $3 WHERE id = $1 AND user_id = $2",
            session_id,
            user_id,
            workspace_id,
        )


# API tokens -------------------------------------------------------------------


async def issue_api_token(workspace_id: int, user_id: int, name: str) -> str:
    """A new API token for this person in this workspace; returned once, stored hashed."""
    name = checked_name(
        name,
        field="name",
        limit=MAX_TOKEN_NAME,
        missing=_("Name the token after what will use it."),
    )
    token = new_token(API_TOKEN_PREFIX)
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            """
            INSERT INTO api_tokens (workspace_id, user_id, name, token_hash, prefix)
            VALUES ($1, $2, $3, $4, $5)
            """,
            workspace_id,
            user_id,
            name,
            token_hash(token),
            token[: len(API_TOKEN_PREFIX) + 6],
        )
        await record(tx, "api_token_created", actor_user_id=user_id, subject=name)
    return token


async def revoke_api_token(workspace_id: int, user_id: int, token_id: int) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        name = await tx.fetchval(
            """
            UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
            WHERE id = $1 AND workspace_id = $2 AND user_id = $3 RETURNING name
            """,
            token_id,
            workspace_id,
            user_id,
        )
        if name is None:
            raise AccountError(_("There is no such token."), status=404)
        await record(tx, "api_token_revoked", actor_user_id=user_id, subject=name)


async def note_api_token_use(token_id: int) -> None:
    await db.fetch(
        """
        UPDATE api_tokens SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
        """,
        token_id,
    )


# Invitations -----------------------------------------------------------------


async def invite(workspace_id: int, role: Role | str, *, email: str, actor_user_id: int) -> str:
    """A link that makes whoever opens it a member with `role`; returned once."""
    granted = next((r for r in GRANTABLE_ROLES if r == role), None)
    if granted is None:
        raise AccountError(_("Choose admin, editor or viewer."), field="role")
    email = checked_email(email) if email.strip() else ""
    token = new_token()
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            """
            INSERT INTO invitations (workspace_id, token_hash, role, email, created_by, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """,
            workspace_id,
            token_hash(token),
            granted.value,
            email,
            actor_user_id,
            _now() + timedelta(days=INVITATION_DAYS),
        )
        await record(tx, "invitation_created", actor_user_id=actor_user_id, role=granted.value)
    return token


async def revoke_invitation(workspace_id: int, invitation_id: int, *, actor_user_id: int) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        deleted = await tx.fetchval(
            "DELETE FROM invitations WHERE id = $1 AND workspace_id = $2 AND accepted_at IS NULL RETURNING id",
            invitation_id,
            workspace_id,
        )
        if deleted is None:
            raise AccountError(_("There is no such open invitation."), status=404)
        await record(tx, "invitation_revoked", actor_user_id=actor_user_id)


def already_member_message() -> str:
    """An invitation opened by a member: the admin trying their own link, usually."""
    return _(
        "You are a member of this workspace already. The link is for the person you invite:"
        " send it to them."
    )


async def _is_member(tx: db.Tx, user_id: int) -> bool:
    return bool(
        await tx.fetchval(
            "SELECT 1 FROM memberships WHERE workspace_id = $1 AND user_id = $2",
            tx.workspace_id,
            user_id,
        )
    )


async def accept_invitation(token: str, user_id: int) -> int:
    """Make `user_id` a member through an invitation link; returns the workspace id."""
    expired = AccountError(_("This invitation link has expired or was used already."), status=404)
    with db.system():  # the invitation's workspace is not (yet) the viewer's
        workspace_id = await db.fetchval(
            "SELECT workspace_id FROM invitations WHERE token_hash = $1", token_hash(token)
        )
    if workspace_id is None:
        raise expired
    async with db.workspace_tx(workspace_id) as tx:
        if await _is_member(tx, user_id):  # the link stays for the person it is for
            raise AccountError(already_member_message(), status=409)
        role = await tx.fetchval(
            """
            UPDATE invitations SET accepted_at = now(), accepted_by = $2
            WHERE token_hash = $1 AND workspace_id = $3 AND accepted_at IS NULL AND expires_at > now()
            RETURNING role
            """,
            token_hash(token),
            user_id,
            workspace_id,
        )
        if role is None:
            raise expired
        await _insert_member(tx, user_id, Role(role), actor_user_id=user_id)
    return int(workspace_id)


async def bootstrap(
    email: str, display_name: str, password: str, workspace_name: str
) -> int | None:
    """The first owner and workspace of a new installation; None when people exist."""
    if await queries.user_count() > 0:
        return None
    user_id = await create_user(email, display_name, password)
    await create_workspace(workspace_name, user_id)
    return user_id
