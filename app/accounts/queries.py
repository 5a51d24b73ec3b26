"""Reads of accounts. Workspace id first where a workspace is involved."""

from __future__ import annotations

from typing import NamedTuple

from app.accounts.credentials import token_hash
from app.accounts.roles import Role, permissions_of
from app.accounts.types import (
    ApiTokenView,
    InvitationView,
    MemberView,
    Viewer,
    WorkspaceChoice,
    WorkspaceView,
)
from app.core import db

_VIEWER_COLUMNS = """
    u.id AS user_id, u.email, u.display_name, u.locale, u.time_zone,
    w.id AS workspace_id, coalesce(w.name, '') AS workspace_name, m.role
"""


def _viewer(row, *, session_id: int | None, api_token_id: int | None = None) -> Viewer:
    role = Role(row["role"]) if row["role"] else None
    return Viewer(
        user_id=row["user_id"],
        email=row["email"],
        display_name=row["display_name"],
        locale=row["locale"],
        time_zone=row["time_zone"],
        workspace_id=row["workspace_id"] if role else None,
        workspace_name=row["workspace_name"] if role else "",
        role=role,
        permissions=permissions_of(role) if role else frozenset(),
        session_id=session_id,
        api_token_id=api_token_id,
    )


class Identified(NamedTuple):
    viewer: Viewer
    # The session or token was last marked as used over a minute ago: the
    # caller marks it now. Deciding here saves a write round trip per request.
    touch_due: bool


async def viewer_for_session(token: str) -> Identified | None:
    """The signed-in person of a live session cookie, or None."""
    row = await db.fetchrow(
        f"""
        SELECT s.id AS session_id, s.last_seen_at < now() - interval '1 minute' AS touch_due,
          {_VIEWER_COLUMNS}
        FROM sessions s
        JOIN users u ON u.id = s.user_id AND u.is_active
        LEFT JOIN memberships m ON m.user_id = u.id AND m.workspace_id = s.workspace_id
        LEFT JOIN workspaces w ON w.id = m.workspace_id
        WHERE s.token_hash = $1 AND s.expires_at > now()
        """,
        token_hash(token),
    )
    if row is None:
        return None
    return Identified(_viewer(row, session_id=row["session_id"]), row["touch_due"])


async def viewer_for_api_token(token: str) -> Identified | None:
    """The person and workspace of a live API token, or None."""
    row = await db.fetchrow(
        f"""
        SELECT t.id AS token_id,
          coalesce(t.last_used_at < now() - interval '1 minute', true) AS touch_due,
          {_VIEWER_COLUMNS}
        FROM api_tokens t
        JOIN users u ON u.id = t.user_id AND u.is_active
        JOIN memberships m ON m.user_id = u.id AND m.workspace_id = t.workspace_id
        JOIN workspaces w ON w.id = m.workspace_id
        WHERE t.token_hash = $1 AND t.revoked_at IS NULL
        """,
        token_hash(token),
    )
    if row is None:
        return None
    return Identified(_viewer(row, session_id=None, api_token_id=row["token_id"]), row["touch_due"])


async def workspaces_of(user_id: int) -> list[WorkspaceChoice]:
    with db.system():  # the person's memberships in every workspace (the switcher)
        rows = await db.fetch(
            """
            SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
            WHERE m.user_id = $1 ORDER BY lower(w.name), w.id
            """,
            user_id,
        )
    return [WorkspaceChoice(id=r["id"], name=r["name"], role=Role(r["role"])) for r in rows]


async def workspace(workspace_id: int) -> WorkspaceView | None:
    row = await db.fetchrow(
        """
        SELECT w.id, w.name, w.created_at,
          (SELECT count(*) FROM memberships m WHERE m.workspace_id = w.id) AS members
        FROM workspaces w WHERE w.id = $1
        """,
        workspace_id,
    )
    return WorkspaceView(**dict(row)) if row else None


async def workspaces_only_owned_by(user_id: int) -> list[tuple[str, bool]]:
    """The workspaces `user_id` is the one owner of: (name, whether they are its only member)."""
    with db.system():  # the person's memberships in every workspace
        rows = await db.fetch(
            """
            SELECT w.name, NOT EXISTS (
              SELECT 1 FROM memberships o
              WHERE o.workspace_id = m.workspace_id AND o.user_id <> $1) AS alone
            FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
            WHERE m.user_id = $1 AND m.role = 'owner' AND NOT EXISTS (
              SELECT 1 FROM memberships o
              WHERE o.workspace_id = m.workspace_id AND o.role = 'owner' AND o.user_id <> $1)
            ORDER BY lower(w.name), w.id
            """,
            user_id,
        )
    return [(r["name"], r["alone"]) for r in rows]


async def preferred_workspace(user_id: int) -> int | None:
    """The workspace a person worked in last (by their sessions), else their first one."""
    with db.system():  # across the person's workspaces
        value = await db.fetchval(
            """
            SELECT m.workspace_id FROM memberships m
            LEFT JOIN sessions s ON s.user_id = m.user_id AND s.workspace_id = m.workspace_id
            WHERE m.user_id = $1 GROUP BY m.workspace_id
            ORDER BY max(s.last_seen_at) DESC NULLS LAST, m.workspace_id LIMIT 1
            """,
            user_id,
        )
    return int(value) if value is not None else None


async def members_of(workspace_id: int) -> list[MemberView]:
    rows = await db.fetch(
        """
        SELECT u.id, u.email, u.display_name, m.role, m.created_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 ORDER BY m.created_at, u.id
        """,
        workspace_id,
    )
    return [
        MemberView(
            user_id=r["id"],
            email=r["email"],
            display_name=r["display_name"],
            role=Role(r["role"]),
            joined_at=r["created_at"],
        )
        for r in rows
    ]


async def open_invitations(workspace_id: int) -> list[InvitationView]:
    rows = await db.fetch(
        """
        SELECT id, role, email, created_at, expires_at, accepted_at FROM invitations
        WHERE workspace_id = $1 AND accepted_at IS NULL AND expires_at > now()
        ORDER BY created_at DESC
        """,
        workspace_id,
    )
    return [
        InvitationView(
            id=r["id"],
            role=Role(r["role"]),
            email=r["email"],
            created_at=r["created_at"],
            expires_at=r["expires_at"],
            accepted_at=r["accepted_at"],
        )
        for r in rows
    ]


async def api_tokens_of(workspace_id: int, user_id: int) -> list[ApiTokenView]:
    rows = await db.fetch(
        """
        SELECT id, name, prefix, created_at, last_used_at, revoked_at FROM api_tokens
        WHERE workspace_id = $1 AND user_id = $2 ORDER BY created_at DESC
        """,
        workspace_id,
        user_id,
    )
    return [ApiTokenView(**dict(r)) for r in rows]


class OpenInvitation(NamedTuple):
    id: int
    workspace_name: str
    role: Role
    email: str  # the address it was made for; "" when the admin gave none
    workspace_id: int


async def invitation_by_token(token: str) -> OpenInvitation | None:
    """A usable invitation link's invitation."""
    with db.system():  # an invitation to another workspace than the viewer's
        row = await db.fetchrow(
            """
            SELECT i.id, w.name, i.role, i.email, i.workspace_id FROM invitations i
            JOIN workspaces w ON w.id = i.workspace_id
            WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > now()
            """,
            token_hash(token),
        )
    if row is None:
        return None
    return OpenInvitation(
        row["id"], row["name"], Role(row["role"]), row["email"], row["workspace_id"]
    )


async def user_count() -> int:
    return int(await db.fetchval("SELECT count(*) FROM users"))


async def session_roles(workspace_id: int, session_ids: list[int]) -> dict[int, Role]:
    """The role each live session holds in `workspace_id` now (absent: none any more).

    Live streams ask this before every patch they send, for all their clients at once.
    """
    rows = await db.fetch(
        """
        SELECT s.id, m.role
        FROM sessions s
        JOIN users u ON u.id = s.user_id AND u.is_active
        JOIN memberships m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
        WHERE s.id = ANY($2::bigint[]) AND s.workspace_id = $1 AND s.expires_at > now()
        """,
        workspace_id,
        session_ids,
    )
    return {row["id"]: Role(row["role"]) for row in rows}
