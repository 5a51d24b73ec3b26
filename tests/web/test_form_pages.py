"""Opening (or reloading) a form's address leads to the form's page, never a 405.

A form that fails re-renders its page at the address it was posted to; the
addresses come from the app's routes, so a new form is covered the day it is added.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from tests.factories import post_form, sign_in

# Not pages: the API (a 405 tells a program what it may do), the MCP endpoint and
# the browser's CSP reports.
_NOT_PAGES = ("/api/", "/mcp", "/csp-report")


def _form_addresses(web_app) -> list[str]:  # type: ignore[no-untyped-def]
    """Every page address that takes POST, as a path format (/articles/{article_id}/delete)."""
    return sorted(
        r.path_format
        for r in web_app.routes
        if "POST" in getattr(r, "methods", ()) and not r.path.startswith(_NOT_PAGES)
    )


def _filled(path_format: str) -> str:
    return re.sub(r"\{[^}]+\}", "7", path_format)


def _page_handler_of(web_app, path: str):  # type: ignore[no-untyped-def]
    """The handler that answers GET at `path` (raises if none does)."""
    return web_app.asgi_router.handle_routing(path, "GET")[1]


async def test_every_form_address_answers_get_with_a_page_or_a_way_to_its_page(
    client, web_app, people
):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    addresses = _form_addresses(web_app)
    assert {"/settings/profile", "/invite/{token}/signup", "/wall/columns/{column_id}"} <= set(
        addresses
    )  # the routes are really read
    failures = []
    for address in addresses:
        response = await client.get(_filled(address), follow_redirects=False)
        if response.status_code == 405 or response.status_code >= 500:
            failures.append((address, response.status_code))
        elif response.status_code == 303:
            target = urlsplit(response.headers["location"]).path
            handler = _page_handler_of(web_app, target)
            if handler.handler_name == "back_to_form_page":  # a page, not another hop
                failures.append((address, f"-> {target}, another redirect"))
    assert not failures, "\n".join(map(str, failures))


async def test_reloading_a_failed_profile_form_shows_the_settings_page(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    failed = await post_form(
        client, "/settings/profile", {"display_name": "N" * 121, "locale": "en", "time_zone": "UTC"}
    )
    assert failed.status_code == 400

    reloaded = await client.get("/settings/profile", follow_redirects=False)
    assert (reloaded.status_code, reloaded.headers["location"]) == (303, "/settings")
    page = await client.get("/settings/profile", follow_redirects=True)
    assert page.status_code == 200
    assert 'action="/settings/profile"' in page.text


async def test_a_form_posted_from_another_page_leads_back_to_that_page(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    expected = {
        "/articles/7/delete": "/articles/7",  # the nearest page above
        "/topics/7/sources/3/pause": "/topics/7",
        "/invite/abc/signup": "/invite/abc",
        "/workspaces": "/welcome",  # named by its handler
        f"/workspaces/{owner.workspace_id}/leave": "/settings",
        "/wall/columns/7": "/wall/columns/7/edit",
        "/logout": "/",
    }
    for address, page in expected.items():
        response = await client.get(address, follow_redirects=False)
        assert (response.status_code, response.headers.get("location")) == (303, page), address


async def test_the_api_still_says_a_post_only_operation_takes_post(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)

    response = await client.get("/api/v1/imports/7/cancel")

    assert response.status_code == 405
