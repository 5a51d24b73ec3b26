"""GET /media/...: signed remote files through egress, checked, capped and boxed in."""

from __future__ import annotations

import pytest
from litestar.exceptions import LitestarException

from app.egress import EgressTooLarge
from app.media.controllers import STRICT_HEADERS
from app.media.services import ACCEPT
from tests.egress.servers import Reply, Seen, serve
from tests.fixtures import make_test_settings
from tests.media import samples


def _causes(error: BaseException) -> list[BaseException]:
    """`error`, its causes and the members of exception groups among them."""
    found: list[BaseException] = []
    pending = [error]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(getattr(current, "exceptions", ()))
        if current.__cause__ is not None:
            pending.append(current.__cause__)
        if current.__context__ is not None:
            pending.append(current.__context__)
    return found


def _strict(response) -> None:  # type: ignore[no-untyped-def]
    for name, value in STRICT_HEADERS.items():
        assert response.headers.get(name) == value, name
    assert "set-cookie" not in response.headers


def _refused(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status
    _strict(response)
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["content-type"].startswith("text/plain")


@pytest.mark.parametrize(("media_type", "body"), list(samples.ALLOWED.items()))
async def test_each_allowlisted_kind_is_served_with_strict_headers(
    client, upstream, proxied, media_type, body
):
    upstream.replies["/file"] = Reply(
        headers=[
            ("Content-Type", media_type),
            ("ETag", '"v1"'),
            ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
            ("Set-Cookie", "tracker=1"),
        ],
        body=body,
    )
    response = await client.get(proxied(upstream.url("/file")))
    assert response.status_code == 200
    assert response.content == body
    assert response.headers["content-type"] == media_type
    assert response.headers["content-length"] == str(len(body))
    assert response.headers["cache-control"] == "public, max-age=86400, immutable"
    assert response.headers["etag"] == '"v1"'
    assert response.headers["last-modified"] == "Wed, 21 Oct 2015 07:28:00 GMT"
    _strict(response)
    assert client.cookies == {}


async def test_nothing_of_the_viewer_goes_upstream(client, upstream, proxied):
    upstream.replies["/a.png"] = Reply(headers=[("Content-Type", "image/png")], body=samples.PNG)
    response = await client.get(
        proxied(upstream.url("/a.png")),
        headers={
            "Cookie": "nd_session=secret-session; nd_csrf=token",
            "Referer": "http://testserver.local/wall",
            "Authorization": "Bearer nd_secret",
            "Origin": "http://testserver.local",
            "X-Forwarded-For": "203.0.113.7",
        },
    )
    assert response.status_code == 200
    [seen] = upstream.requests
    assert seen.target == "/a.png"
    assert seen.headers["accept"] == ACCEPT
    assert seen.headers["user-agent"] == make_test_settings().egress_user_agent
    for name in ("cookie", "referer", "authorization", "origin", "x-forwarded-for"):
        assert name not in seen.headers


async def test_a_chunked_body_is_relayed_whole(client, upstream, proxied):
    chunks = [samples.PNG[:10], samples.PNG[10:40], samples.PNG[40:]]
    upstream.replies["/c.png"] = Reply(headers=[("Content-Type", "image/png")], chunks=chunks)
    response = await client.get(proxied(upstream.url("/c.png")))
    assert response.status_code == 200
    assert response.content == samples.PNG
    assert "content-length" not in response.headers or response.headers["content-length"] == str(
        len(samples.PNG)
    )


async def test_the_type_served_is_the_one_the_bytes_show(client, upstream, proxied):
    upstream.replies["/x"] = Reply(headers=[("Content-Type", "image/jpeg")], body=samples.PNG)
    response = await client.get(proxied(upstream.url("/x")))
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png"


@pytest.mark.parametrize(
    ("declared", "body"),
    [
        ("image/svg+xml", samples.SVG),
        ("image/png", samples.SVG),
        ("image/png", samples.HTML),
        ("text/html; charset=utf-8", samples.HTML),
        ("text/html", samples.PNG),
        (None, samples.PNG),
        ("image/png", b""),
    ],
)
async def test_anything_but_allowlisted_media_is_refused(client, upstream, proxied, declared, body):
    headers = [("Content-Type", declared)] if declared else []
    upstream.replies["/x"] = Reply(headers=headers, body=body)
    response = await client.get(proxied(upstream.url("/x")))
    _refused(response, 502)
    assert b"<" not in response.content
    assert "image or a video" in response.text


async def test_a_file_announced_over_the_cap_is_refused(client, upstream, proxied, settings):
    too_big = str(settings.media_max_bytes + 1)
    upstream.replies["/big.png"] = Reply(
        headers=[("Content-Type", "image/png"), ("Content-Length", too_big)], body=samples.PNG
    )
    response = await client.get(proxied(upstream.url("/big.png")))
    _refused(response, 502)
    assert "larger than the 15 MB allowed" in response.text


async def test_a_file_that_grows_over_the_cap_is_cut_off_not_ended(
    client, upstream, proxied, settings
):
    """No Content-Length: the cap is hit after the response started, so it must break."""
    piece = bytes(1_000_000)
    count = settings.media_max_bytes // len(piece) + 1
    upstream.replies["/grows.png"] = Reply(
        headers=[("Content-Type", "image/png")], chunks=[samples.PNG, *[piece] * count]
    )
    # In-process the app's failure surfaces as an exception; a real server drops the
    # connection before the last chunk, which a browser reports as a failed download.
    with pytest.raises(LitestarException, match="after response started") as caught:
        await client.get(proxied(upstream.url("/grows.png")))
    assert any(isinstance(e, EgressTooLarge) for e in _causes(caught.value))


@pytest.mark.parametrize(("upstream_status", "status"), [(404, 404), (410, 404), (500, 502)])
async def test_upstream_errors(client, upstream, proxied, upstream_status, status):
    upstream.replies["/x.png"] = Reply(upstream_status, body=b"<h1>error page</h1>")
    response = await client.get(proxied(upstream.url("/x.png")))
    _refused(response, status)
    assert b"error page" not in response.content


async def test_an_address_egress_refuses_is_never_contacted(client, upstream, proxied):
    async with serve(Reply(headers=[("Content-Type", "image/png")], body=samples.PNG)) as inside:
        response = await client.get(proxied(inside.url("/a.png")))
    _refused(response, 502)
    assert inside.connections == 0


@pytest.mark.parametrize("location", ["about:blank", "data:image/png;base64,AAAA", "http:host"])
async def test_a_redirect_we_cannot_follow_is_refused_not_a_500(
    client, upstream, proxied, location
):
    upstream.replies["/moved.png"] = Reply(302, [("Location", location)])
    response = await client.get(proxied(upstream.url("/moved.png")))
    _refused(response, 502)
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    "path",
    [
        "/media/{bad_signature}/{payload}",
        "/media/{signature}/{other_payload}",
        "/media/{signature}/{payload}A",
        "/media/x/y",
        "/media/" + "A" * 43 + "/aHR0cHM6Ly9hLmV4YW1wbGUv",
    ],
)
async def test_a_bad_signature_is_403_and_fetches_nothing(client, upstream, proxied, path):
    upstream.replies["/a.png"] = Reply(headers=[("Content-Type", "image/png")], body=samples.PNG)
    _, _, signature, payload = proxied(upstream.url("/a.png")).split("/")
    other_payload = proxied(upstream.url("/b.png")).split("/")[3]
    bad_signature = ("A" if signature[0] != "A" else "B") + signature[1:]
    response = await client.get(
        path.format(
            signature=signature,
            payload=payload,
            other_payload=other_payload,
            bad_signature=bad_signature,
        )
    )
    _refused(response, 403)
    assert upstream.requests == []


async def test_a_malformed_media_path_is_not_found(client):
    assert (await client.get("/media/only-one-part")).status_code == 404


async def test_revalidation_passes_a_304_through(client, upstream, proxied):
    def answer(seen: Seen) -> Reply:
        if seen.headers.get("if-none-match") == '"v1"':
            return Reply(304, headers=[("ETag", '"v1"')])
        return Reply(headers=[("Content-Type", "image/png"), ("ETag", '"v1"')], body=samples.PNG)

    upstream.server.handler = answer
    path = proxied(upstream.url("/a.png"))
    first = await client.get(path)
    again = await client.get(path, headers={"If-None-Match": first.headers["etag"]})
    assert first.status_code == 200
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == '"v1"'
    _strict(again)


async def test_an_unasked_304_is_not_passed_on(client, upstream, proxied):
    upstream.replies["/a.png"] = Reply(304, headers=[("ETag", '"v1"')])
    response = await client.get(proxied(upstream.url("/a.png")))
    _refused(response, 502)
