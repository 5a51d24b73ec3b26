"""Guards: signed in, working in a workspace, allowed by role."""

from __future__ import annotations

from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.handlers.base import BaseRouteHandler
from litestar.types import Guard

from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.core.i18n import _


class NoWorkspace(PermissionDeniedException):
    """Signed in, but not a member of any workspace yet."""


def viewer_of(connection: ASGIConnection) -> Viewer:
    viewer = connection.scope.get("user")
    if not isinstance(viewer, Viewer):
        raise NotAuthorizedException(_("Sign in to continue."))
    return viewer


def member_of(connection: ASGIConnection) -> tuple[Viewer, int]:
    """The viewer and the workspace they work in, for handlers behind `allows`."""
    viewer = viewer_of(connection)
    if viewer.workspace_id is None:
        raise NoWorkspace(_("You are not a member of any workspace yet."))
    return viewer, viewer.workspace_id


def signed_in(connection: ASGIConnection, _handler: BaseRouteHandler) -> None:
    viewer_of(connection)


def refused(refusal: str | None = None) -> str:
    """What a member is told when their role does not allow something: `refusal` (marked
    with N_) translated, or the general words. The pages, the API and MCP say the same."""
    return _(refusal) if refusal else _("Your role in this workspace does not allow this.")


def allows(permission: Permission, refusal: str | None = None) -> Guard:
    """A guard admitting members whose role grants `permission` in their workspace.

    `refusal` (marked with N_, translated when it is said) tells the others what their
    role does not allow, instead of the general "does not allow this".
    """

    def guard(connection: ASGIConnection, _handler: BaseRouteHandler) -> None:
        viewer, _workspace_id = member_of(connection)
        if not viewer.can(permission):
            raise PermissionDeniedException(refused(refusal))

    guard.__name__ = f"allows_{permission.value.replace('.', '_')}"
    return guard
