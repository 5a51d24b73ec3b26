"""HEAD answers as GET does, without the body: pages, form addresses, health, streams.

Litestar routes HEAD only to handlers declared for it; link checkers, uptime monitors and
`curl -I` got 405 from every page (app/web/head.py).
"""

from __future__ import annotations

import asyncio

from tests.factories import sign_in
from tests.web.test_form_pages import _filled, _form_addresses


async def _both(client, path: str):  # type: ignore[no-untyped-def]
    get = await client.get(path, follow_redirects=False)
    head = await client.head(path, follow_redirects=False)
    return get, head


async def test_a_page_answers_head_as_get_without_its_body(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    for path in ("/settings", "/articles", "/articles/import", "/healthz"):
        get, head = await _both(client, path)
        assert (head.status_code, head.content) == (get.status_code, b""), path
        assert get.status_code == 200, path
        assert get.content, path
        assert head.headers["content-type"] == get.headers["content-type"], path
        assert int(head.headers["content-length"]) > 0, path
    for path in ("/", "/articles/987654321", "/no/such/page"):  # redirects and 404s too
        get, head = await _both(client, path)
        assert (head.status_code, head.headers.get("location")) == (
            get.status_code,
            get.headers.get("location"),
        ), path


async def test_a_form_address_answers_head_with_the_way_to_its_page(client, web_app, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    addresses = _form_addresses(web_app)
    assert "/settings/profile" in addresses
    failures = []
    for address in addresses:
        get, head = await _both(client, _filled(address))
        if (head.status_code, head.headers.get("location")) != (
            get.status_code,
            get.headers.get("location"),
        ) or head.content:
            failures.append((address, get.status_code, head.status_code))
    assert not failures, "\n".join(map(str, failures))
    head = await client.head("/settings/profile", follow_redirects=False)
    assert (head.status_code, head.headers["location"]) == (303, "/settings")


async def test_signed_out_head_leads_to_sign_in_and_the_api_keeps_its_405(client):
    get, head = await _both(client, "/settings")
    assert (head.status_code, head.headers["location"]) == (303, get.headers["location"])
    get, head = await _both(client, "/api/v1/imports/7/cancel")  # POST only: says so
    assert (get.status_code, head.status_code) == (405, 405)
    static = await client.head("/static/css/app.css")  # its own HEAD handler, as before
    assert (static.status_code, static.content) == (200, b"")


async def test_head_on_a_live_stream_ends_after_its_headers(client, people):
    editor = await people.member("editor")
    await sign_in(client, editor.email)
    head = await asyncio.wait_for(client.head("/articles/import/stream"), 10)
    assert head.status_code == 200
    assert head.headers["content-type"].startswith("text/event-stream")
    assert head.content == b""
