"""Rendering pages in the layout, with what every page shows around itself."""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.enums import RequestEncodingType
from litestar.params import Body
from litestar.response import Template

from app.accounts.queries import workspaces_of
from app.accounts.types import Viewer
from app.core.i18n import _
from app.web.templating import render_block

# How handlers take an HTML form: `data: Annotated[SomeForm, Form]`.
Form = Body(media_type=RequestEncodingType.URL_ENCODED)


def lost_access() -> str:
    """What an open page says once its viewer may no longer see it (removed, demoted)."""
    return _("You no longer have access to this page. Reload it to go on.")


def same_site_path(target: str, default: str = "/", *, under: str = "/") -> str:
    """`target` when it is a path of this site below `under`, else `default`:
    never an absolute or scheme-relative address (an open redirect)."""
    if target.startswith(under) and not target.startswith(("//", "/\\")):
        return target
    return default


def is_datastar(request: Request) -> bool:
    """A request made by Datastar in the browser (it wants SSE or a fragment back)."""
    return request.headers.get("datastar-request") == "true"


async def page(
    request: Request, template: str, *, section: str = "", status_code: int = 200, **context: Any
) -> Template:
    """A full page: the layout with the navigation and the workspace switcher."""
    viewer = request.scope.get("user")
    workspaces = await workspaces_of(viewer.user_id) if isinstance(viewer, Viewer) else []
    return Template(
        template_name=template,
        context={"viewer": viewer, "workspaces": workspaces, "section": section, **context},
        status_code=status_code,
    )


async def top_bar(viewer: Viewer) -> str:
    """The top bar's live parts as they are now: the workspace's name or its switcher (block
    workspace_bar of the layout) and the person's name (block top_bar_who). Every live stream
    sends them when it opens and whenever it reads its viewer again, so a renamed workspace
    or a new display name shows in the person's open pages."""
    workspaces = await workspaces_of(viewer.user_id)
    return "\n".join(
        render_block("base.html", block, None, viewer=viewer, workspaces=workspaces).strip()
        for block in ("workspace_bar", "top_bar_who")
    )
