"""Odd input gets a 4xx a person can read, never a 500: every API operation, every page.

The operations come from the API's own OpenAPI document and the pages from the app's
routes, so a new endpoint is covered the day it is added.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.accounts import services

_ODD_IDS = ("abc", "-1", "0", "99999999999999999999", "1.5", "%00")
_ODD_QUERIES = (  # as sent, already percent-encoded
    "limit=-5",
    "limit=abc",
    "limit=100000000000",
    "cursor=not-a-cursor",
    "cursor=eyJ4IjogMX0",  # base64 JSON of the wrong shape
    "q=%00" + "a" * 5000,
    "state=nonsense&source=nonsense&topic=x&deleted=maybe",
    "kind=%ED%A0%80&since=yesterday",  # a lone surrogate, as UTF-8 bytes
    "q=%FF%FE",  # not UTF-8 at all
)
_ODD_BODIES: tuple[Any, ...] = (
    b"not json",
    b"{",
    b"null",
    b"[]",
    b'"a string"',
    b"1e999",
    b'{"urls": "https://example.com"}',
    b'{"urls": [1, 2, 3]}',
    b'{"urls": [null]}',
    b'{"name": {"nested": [[[[[]]]]]}}',
    b'{"url": "\\u0000"}',
)


async def _operations(client) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    schema = (await client.get("/api/v1/schema/openapi.json")).json()
    return [
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    ]


def _with(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", value, path)


def _page_routes(web_app, method: str, *, leave_out: tuple[str, ...] = ()) -> list[Any]:  # type: ignore[no-untyped-def]
    """The app's page routes (not the API's) that answer `method`, in path order."""
    left_out = ("/api/", "/mcp", "/static", *leave_out)
    return sorted(
        (
            r
            for r in web_app.routes
            if method in getattr(r, "methods", ()) and not r.path.startswith(left_out)
        ),
        key=lambda r: r.path_format,
    )


async def _signed_in_owner(client, people):  # type: ignore[no-untyped-def]
    from tests.factories import sign_in

    owner = await people.member("owner")
    await sign_in(client, owner.email)
    return owner


def _readable(response) -> bool:  # type: ignore[no-untyped-def]
    if response.status_code == 404 and "application/json" not in response.headers.get(
        "content-type", ""
    ):
        return True  # no such route at all (an id that is not a number)
    detail = response.json().get("detail")
    return isinstance(detail, str) and len(detail) > 3


@pytest.fixture
async def bearer(people):  # type: ignore[no-untyped-def]
    owner = await people.member("owner")
    token = await services.issue_api_token(owner.workspace_id, owner.user_id, "fuzz")
    return {"authorization": f"Bearer {token}"}


async def test_odd_ids_queries_and_bodies_never_make_a_500(client, bearer):
    failures = []
    for method, path in await _operations(client):
        calls: list[dict[str, Any]] = []
        for odd in _ODD_IDS:
            calls.append({"url": _with(path, odd)})
        for query in _ODD_QUERIES:
            calls.append({"url": f"{_with(path, '1')}?{query}"})
        if method in ("POST", "PUT", "PATCH"):
            for body in _ODD_BODIES:
                calls.append(
                    {
                        "url": _with(path, "1"),
                        "content": body,
                        "headers": {"content-type": "application/json"},
                    }
                )
        for call in calls:
            headers = {**bearer, **call.pop("headers", {})}
            response = await client.request(method, headers=headers, **call)
            if response.status_code >= 500 or (
                response.status_code >= 400 and not _readable(response)
            ):
                failures.append((method, call, response.status_code, response.text[:200]))
    assert not failures, "\n".join(f"{m} {c} -> {s}: {t}" for m, c, s, t in failures)


async def test_pages_with_an_id_no_row_can_have_are_not_found(client, web_app, people):
    await _signed_in_owner(client, people)
    paths = [r.path_format for r in _page_routes(web_app, "GET") if ":int}" in r.path]
    assert "/articles/{article_id}" in paths  # the routes are really read
    for path in paths:
        for odd in ("99999999999999999999", "0"):
            response = await client.get(_with(path, odd))
            assert response.status_code == 404, (path, odd, response.status_code)


_ODD_PAGE_QUERIES = (
    "page=-1",
    "page=99999999999999999999",
    "url=%00",
    "next=//x",
    "datastar=%7B",  # Datastar's signals, not JSON
    "datastar=%5B1%5D",  # JSON, not an object
    "datastar=%7B%22text%22%3A1%2C%22q%22%3Anull%2C%22urls%22%3A%7B%7D%7D",  # wrong types
    "datastar=%7B%22text%22%3A%22a%5Cu0000b%22%7D",  # a NUL inside
)
_ODD_FIELD_VALUES = ("a\x00b", "99999999999999999999", "-1", "x" * 100_000)
_LAST = ("logout", "leave", "delete", "remove", "purge", "revoke")  # may end the session


def _form_fields() -> set[str]:
    """Every form field name the templates use."""
    from app.web.templating import TEMPLATE_DIR

    names: set[str] = set()
    for template in TEMPLATE_DIR.rglob("*.html"):
        names |= set(re.findall(r"""\bname=["']([a-z_][a-z0-9_\-]*)["']""", template.read_text()))
    return names - {"_csrf_token"}


async def test_odd_form_values_sent_to_every_form_never_make_a_500(client, web_app, people):
    from tests.factories import csrf_of, post_form, sign_in

    fields = _form_fields()
    assert {"email", "url"} <= fields  # the templates are really read
    paths = sorted(
        {r.path_format for r in _page_routes(web_app, "POST")},
        key=lambda p: (any(word in p for word in _LAST), p),
    )
    failures = []
    reached: set[int] = set()
    for path in paths:
        owner = await people.member("owner")  # a route may remove its workspace
        for odd in _ODD_FIELD_VALUES:
            client.cookies.clear()  # ... or end its session
            await sign_in(client, owner.email)
            response = await post_form(client, _with(path, "1"), dict.fromkeys(fields, odd))
            if response.status_code >= 500:
                failures.append((path, odd[:30], response.status_code, response.text[:300]))
        for body in _ODD_BODIES:  # as Datastar posts its signals
            client.cookies.clear()
            await sign_in(client, owner.email)
            headers = {
                "content-type": "application/json",
                "datastar-request": "true",
                "x-csrf-token": csrf_of(client),
            }
            response = await client.post(_with(path, "1"), content=body, headers=headers)
            reached.add(response.status_code)
            if response.status_code >= 500:
                failures.append((path, body[:30], response.status_code, response.text[:300]))
    assert not failures, "\n".join(map(str, failures))
    assert reached - {401, 403}, reached  # the handlers were reached, not only the CSRF check


async def test_an_email_holding_a_nul_signs_no_one_in(client, people):
    from tests.factories import post_form

    response = await post_form(client, "/login", {"email": "a\x00b@example.com", "password": "x"})

    assert response.status_code == 400
    assert "The email or the password is not right." in response.text


async def test_odd_query_strings_on_every_page_never_make_a_500(client, web_app, people):
    await _signed_in_owner(client, people)
    paths = [
        r.path_format
        for r in _page_routes(web_app, "GET")
        if not r.path.endswith("/stream")  # live streams: they would not end
    ]
    failures = []
    for path in paths:
        for query in (*_ODD_QUERIES, *_ODD_PAGE_QUERIES):
            response = await client.get(
                f"{_with(path, '1')}?{query}",
                headers={"datastar-request": "true"} if "datastar" in query else {},
                follow_redirects=False,
            )
            if response.status_code >= 500:
                failures.append((path, query[:40], response.status_code))
    assert not failures, failures
