"""A GET on a form's address goes back to the page the form is on.

A form that fails re-renders its page at the address it was posted to
(docs/development.md, Forms). Reloading that page, or opening the address from
the history, is a GET, which a POST-only route would answer with 405. So every
page address that takes POST and no GET answers GET with a 303 to its form's
page: the nearest address above it that has a page (/settings/profile ->
/settings, /articles/7/delete -> /articles/7), unless its handler names the
page with `opt={FORM_PAGE: "/welcome"}`. One handler, made from the route table,
so a new form cannot be missed.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import quote

from litestar import Request, Router, get
from litestar.handlers import HTTPRouteHandler
from litestar.response import Redirect
from litestar.routes import HTTPRoute

# A POST handler's opt key naming the page its form is on, where the address
# above it is not that page (/workspaces is posted from /welcome).
FORM_PAGE = "form_page"


class FormAddress(NamedTuple):
    path: str  # as routed: /articles/{article_id:int}/delete
    path_format: str  # as in a matched request's scope: /articles/{article_id}/delete
    page: str  # the form's page, a path format: /articles/{article_id}


def _nearest_page(path_format: str, pages: set[str]) -> str:
    """The longest address above `path_format` that has a page ("/" has one)."""
    parts = path_format.split("/")
    for end in range(len(parts) - 1, 1, -1):
        if (above := "/".join(parts[:end])) in pages:
            return above
    return "/"


def form_pages(router: Router) -> list[FormAddress]:
    """The POST-only addresses of `router`, each with the page its form is on."""
    routes = [route for route in router.routes if isinstance(route, HTTPRoute)]
    pages = {route.path_format for route in routes if "GET" in route.methods}
    addresses = []
    for route in routes:
        if "POST" not in route.methods or "GET" in route.methods:
            continue
        named = [h.opt[FORM_PAGE] for h in route.route_handlers if FORM_PAGE in h.opt]
        page = named[0] if named else _nearest_page(route.path_format, pages)
        addresses.append(FormAddress(route.path, route.path_format, page))
    return addresses


def _back_to_form_page(addresses: list[FormAddress]) -> HTTPRouteHandler:
    page_of = {address.path_format: address.page for address in addresses}

    @get([address.path for address in addresses], include_in_schema=False, sync_to_thread=False)
    def back_to_form_page(request: Request) -> Redirect:
        page = page_of[request.scope["path_template"]]
        values = {name: quote(str(value), safe="") for name, value in request.path_params.items()}
        return Redirect(page.format(**values), status_code=303)

    return back_to_form_page


def redirect_gets_to_form_pages(router: Router) -> None:
    """Give every POST-only address of `router` a GET that leads to its form's page."""
    if addresses := form_pages(router):
        router.register(_back_to_form_page(addresses))
