"""Roles and the permissions they grant: the one table guards consult."""

from __future__ import annotations

from enum import StrEnum

from app.core.i18n import N_


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    EDITOR = "editor"
    VIEWER = "viewer"


# Pages show a role as `_(role.value)`: these make the names reach the catalogues.
ROLE_NAMES = (N_("owner"), N_("admin"), N_("editor"), N_("viewer"))


class Permission(StrEnum):
    DRAFT_VIEW = "draft.view"  # read the wall, the library and activity
    COLUMNS_MANAGE = "streams.columns.manage"  # add, edit and remove wall columns
    ARTICLES_IMPORT = "articles.import"  # save and import articles, manage topics
    SETTINGS_MANAGE = "settings.manage"  # workspace settings and connections
    MEMBERS_MANAGE = "members.manage"  # invite, change roles, remove members
    WORKSPACE_DELETE = "workspace.delete"  # delete the workspace and everything in it
    WORKSPACE_RENAME = "workspace.rename"  # change the workspace's name


ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.OWNER: frozenset(Permission),
    # The workspace itself is the owners' alone: an admin could otherwise end it, or rename
    # it out from under its owners.
    Role.ADMIN: frozenset(Permission) - {Permission.WORKSPACE_DELETE, Permission.WORKSPACE_RENAME},
    Role.EDITOR: frozenset(
        {Permission.DRAFT_VIEW, Permission.COLUMNS_MANAGE, Permission.ARTICLES_IMPORT}
    ),
    Role.VIEWER: frozenset({Permission.DRAFT_VIEW}),
}

# Roles an invitation or a role change may grant; ownership is not handed out by link.
GRANTABLE_ROLES: tuple[Role, ...] = (Role.ADMIN, Role.EDITOR, Role.VIEWER)


def may_manage(actor: Role, member: Role) -> bool:
    """Whether `actor` may change, remove or reset `member`: only owners touch owners,
    or an admin could demote the owners and take the workspace over."""
    return actor == Role.OWNER or member != Role.OWNER


def permissions_of(role: str) -> frozenset[Permission]:
    return ROLE_PERMISSIONS.get(Role(role), frozenset())
