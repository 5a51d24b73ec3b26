"""Values of accounts that cross a boundary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.accounts.roles import Permission, Role


@dataclass(frozen=True)
class Viewer:
    """The person behind a request, in the workspace they are working in."""

    user_id: int
    email: str
    display_name: str
    locale: str  # UI language, e.g. "en"
    time_zone: str  # IANA name, e.g. "Europe/Berlin"
    workspace_id: int | None  # None when the person belongs to no workspace
    workspace_name: str
    role: Role | None
    permissions: frozenset[Permission]
    session_id: int | None  # None for API-token requests
    api_token_id: int | None = None

    def can(self, permission: Permission) -> bool:
        return permission in self.permissions


@dataclass(frozen=True)
class WorkspaceChoice:
    id: int
    name: str
    role: Role


@dataclass(frozen=True)
class WorkspaceView:
    """A workspace as the API shows it (GET/PATCH /api/v1/workspace)."""

    id: int
    name: str  # 1-120 characters, spaces folded (validation.checked_name)
    created_at: datetime
    members: int  # how many people belong to it, owners included


@dataclass(frozen=True)
class MemberView:
    user_id: int
    email: str
    display_name: str
    role: Role
    joined_at: datetime


@dataclass(frozen=True)
class InvitationView:
    id: int
    role: Role
    email: str
    created_at: datetime
    expires_at: datetime
    accepted_at: datetime | None


@dataclass(frozen=True)
class ApiTokenView:
    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class ResetLinkShown:
    """A reset link an admin just issued for a member: shown this once."""

    name: str
    link: str


@dataclass(frozen=True)
class NewSession:
    token: str  # the cookie value; shown to nobody, stored only as a hash
    user_id: int
    workspace_id: int | None


class AccountError(ValueError):
    """A request about accounts that cannot be done, with a message for people."""

    def __init__(self, message: str, *, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status
