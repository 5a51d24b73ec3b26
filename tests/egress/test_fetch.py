"""Fetching through egress from loopback servers: bodies, redirects, headers, errors."""

from __future__ import annotations

import gzip
import socket

import brotli
import pytest

from app.egress import (
    EgressBlocked,
    EgressConnectError,
    EgressError,
    EgressProtocolError,
    HttpStatusError,
    close_egress,
    egress,
    open_egress,
)
from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, Seen, serve
from tests.fixtures import make_test_settings


def _allow(*servers: object) -> list[str]:
    return [f"127.0.0.1:{server.port}" for server in servers]  # type: ignore[attr-defined]


async def test_fetch_returns_the_response_and_sends_our_headers(make_egress: MakeEgress) -> None:
    reply = Reply(
        headers=[("Content-Type", "text/plain; charset=iso-8859-1")], body="café".encode("latin-1")
    )
    async with serve(reply) as server:
        client = make_egress(egress_allow=_allow(server))
        fetched = await client.fetch(server.url("/page"))
    seen = server.requests[0]
    assert fetched.status == 200
    assert fetched.url == server.url("/page")
    assert fetched.text == "café"
    assert fetched.media_type == "text/plain"
    assert fetched.redirects == ()
    assert seen.headers["user-agent"] == make_test_settings().egress_user_agent
    assert seen.headers["accept-encoding"] == "gzip, deflate, br"


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [("gzip", gzip.compress), ("br", brotli.compress), ("identity", lambda b: b)],
)
async def test_content_encodings_are_decoded(
    make_egress: MakeEgress, encoding: str, encode
) -> None:
    body = b"<p>" + b"hello " * 5000 + b"</p>"
    reply = Reply(headers=[("Content-Encoding", encoding)], body=encode(body))
    async with serve(reply) as server:
        fetched = await make_egress(egress_allow=_allow(server)).fetch(server.url())
    assert fetched.content == body


async def test_json_body_is_sent_and_json_answer_read(make_egress: MakeEgress) -> None:
    reply = Reply(headers=[("Content-Type", "application/json")], body=b'{"ok": true}')
    async with serve(reply) as server:
        client = make_egress(egress_allow=_allow(server))
        fetched = await client.fetch(server.url("/api"), method="POST", json={"q": "news"})
    assert server.requests[0].method == "POST"
    assert server.requests[0].body == b'{"q":"news"}'
    assert fetched.json() == {"ok": True}


def _redirects(seen: Seen) -> Reply:
    hops = {
        "/a": Reply(302, [("Location", "b")]),  # relative
        "/b": Reply(301, [("Location", "/c?x=1")]),
    }
    return hops.get(seen.target, Reply(body=seen.target.encode()))


async def test_redirects_are_followed_resolved_and_recorded(make_egress: MakeEgress) -> None:
    async with serve(_redirects) as server:
        fetched = await make_egress(egress_allow=_allow(server)).fetch(server.url("/a"))
    assert fetched.content == b"/c?x=1"
    assert fetched.url == server.url("/c?x=1")
    assert fetched.redirects == (server.url("/b"), server.url("/c?x=1"))


@pytest.mark.parametrize(
    ("status", "method"), [(303, "GET"), (302, "GET"), (307, "POST"), (308, "POST")]
)
async def test_redirect_method_follows_the_status(
    make_egress: MakeEgress, status: int, method: str
) -> None:
    def handler(seen: Seen) -> Reply:
        return Reply(status, [("Location", "/next")]) if seen.target == "/form" else Reply()

    async with serve(handler) as server:
        await make_egress(egress_allow=_allow(server)).fetch(
            server.url("/form"), method="POST", content=b"x=1"
        )
    second = server.requests[1]
    assert second.method == method
    assert second.body == (b"x=1" if method == "POST" else b"")


async def test_redirect_to_another_host_drops_authorization_and_cookie(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply()) as other:

        def handler(seen: Seen) -> Reply:
            targets = {"/same": "/landed", "/away": other.url("/landed")}
            return (
                Reply(302, [("Location", targets[seen.target])])
                if seen.target in targets
                else Reply()
            )

        async with serve(handler) as first:
            client = make_egress(egress_allow=_allow(first, other))
            secret = {"Authorization": "Bearer secret", "Cookie": "session=1"}
            await client.fetch(first.url("/same"), headers=secret)
            await client.fetch(first.url("/away"), headers=secret)
    same_host = first.requests[1].headers
    assert same_host["authorization"] == "Bearer secret"
    assert same_host["cookie"] == "session=1"
    moved = other.requests[0].headers
    assert "authorization" not in moved
    assert "cookie" not in moved


@pytest.mark.parametrize(
    ("location", "named"),
    [
        ("about:blank", "'about'"),
        ("data:text/html,<script>alert(1)</script>", "'data'"),
        ("mailto:desk@example.org", "'mailto'"),
        ("javascript:alert(1)", "'javascript'"),
        ("JavaScript:alert(1)", "'javascript'"),
        ("http:host", "http:host"),
        ("https:/one-slash", "https:/one-slash"),
        ("http://[::1", "invalid URL"),
        ("ftp://example.org/file", "'ftp'"),
    ],
)
async def test_a_redirect_to_a_location_we_cannot_follow_is_a_typed_refusal(
    make_egress: MakeEgress, location: str, named: str
) -> None:
    """httpx raises a bare InvalidURL for these; egress callers only ever see EgressError."""

    def handler(seen: Seen) -> Reply:
        return Reply(302, [("Location", location)]) if seen.target == "/moved" else Reply()

    async with serve(handler) as server:
        client = make_egress(egress_allow=_allow(server))
        with pytest.raises((EgressBlocked, EgressProtocolError)) as caught:
            await client.fetch(server.url("/moved"))
        async with serve(handler) as again:  # stream() too, as the media proxy uses it
            client = make_egress(egress_allow=_allow(again))
            with pytest.raises(EgressError):
                async with client.stream(again.url("/moved")):
                    pass
    assert named in caught.value.message
    assert len(server.requests) == 1


async def test_an_accepted_redirect_is_returned_unless_its_location_is_one_we_refuse(
    make_egress: MakeEgress,
) -> None:
    def handler(seen: Seen) -> Reply:
        location = "mailto:desk@example.org" if seen.target == "/mail" else "/elsewhere"
        return Reply(301, [("Location", location)])

    async with serve(handler) as server:
        client = make_egress(egress_allow=_allow(server))
        moved = await client.fetch(server.url("/moved"), accept_statuses=frozenset({301}))
        with pytest.raises(EgressBlocked, match="'mailto'"):
            await client.fetch(server.url("/mail"), accept_statuses=frozenset({301}))
    assert (moved.status, moved.headers["location"], moved.redirects) == (301, "/elsewhere", ())
    assert [seen.target for seen in server.requests] == ["/moved", "/mail"]


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("about:blank", "'about'"),
        ("mailto:desk@example.org", "'mailto'"),
        ("javascript:alert(1)", "'javascript'"),
        ("data:text/plain,hi", "'data'"),
        ("example.org/news", "no scheme"),
        ("http:example.org", "no host"),
    ],
)
async def test_a_scheme_refusal_names_the_scheme(
    make_egress: MakeEgress, url: str, named: str
) -> None:
    with pytest.raises(EgressBlocked) as caught:
        await make_egress(resolver=fixed_resolver({})).fetch(url)
    assert named in caught.value.message


def _endless(seen: Seen) -> Reply:
    step = int(seen.target.strip("/") or 0)
    return Reply(302, [("Location", f"/{step + 1}")]) if step < 100 else Reply()


async def test_five_redirects_are_followed(make_egress: MakeEgress) -> None:
    def five(seen: Seen) -> Reply:
        return _endless(seen) if int(seen.target.strip("/") or 0) < 5 else Reply()

    async with serve(five) as server:
        fetched = await make_egress(egress_allow=_allow(server)).fetch(server.url("/0"))
    assert len(fetched.redirects) == 5


async def test_more_than_five_redirects_are_blocked(make_egress: MakeEgress) -> None:
    async with serve(_endless) as server:
        client = make_egress(egress_allow=_allow(server))
        with pytest.raises(EgressBlocked, match="more than 5 redirects"):
            await client.fetch(server.url("/0"))
    assert len(server.requests) == 6  # the first request and five redirects, no seventh


async def test_cookies_are_never_kept_between_requests(make_egress: MakeEgress) -> None:
    reply = Reply(headers=[("Set-Cookie", "track=me; Path=/")])
    async with serve(reply) as server:
        client = make_egress(egress_allow=_allow(server))
        await client.fetch(server.url("/one"))
        await client.fetch(server.url("/two"))
    assert "cookie" not in server.requests[1].headers


async def test_proxy_environment_is_ignored(
    make_egress: MakeEgress, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with serve(Reply(body=b"direct")) as server:
        fetched = await make_egress(egress_allow=_allow(server)).fetch(server.url())
    assert fetched.content == b"direct"


async def test_error_statuses_raise_unless_accepted(make_egress: MakeEgress) -> None:
    def handler(seen: Seen) -> Reply:
        return Reply(int(seen.target.strip("/")))

    async with serve(handler) as server:
        client = make_egress(egress_allow=_allow(server))
        for status in (404, 410, 500, 502):
            with pytest.raises(HttpStatusError) as caught:
                await client.fetch(server.url(f"/{status}"))
            assert caught.value.status == status
        gone = await client.fetch(server.url("/410"), accept_statuses=frozenset({410}))
        not_modified = await client.fetch(server.url("/304"))
    assert gone.status == 410
    assert not_modified.status == 304


async def test_a_refused_connection_is_a_connect_error(make_egress: MakeEgress) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = make_egress(egress_allow=[f"127.0.0.1:{port}"])
    with pytest.raises(EgressConnectError):
        await client.fetch(f"http://127.0.0.1:{port}/")


async def test_a_dns_failure_is_a_connect_error(make_egress: MakeEgress) -> None:
    client = make_egress(resolver=fixed_resolver({}))
    with pytest.raises(EgressConnectError, match=r"cannot resolve nowhere\.test"):
        await client.fetch("http://nowhere.test/")


async def test_stream_gives_status_type_length_and_body(make_egress: MakeEgress) -> None:
    reply = Reply(headers=[("Content-Type", "image/png")], body=b"\x89PNG" + b"\0" * 5000)
    async with serve(reply) as server:
        client = make_egress(egress_allow=_allow(server))
        async with client.stream(server.url("/img.png")) as response:
            assert response.status == 200
            assert response.media_type == "image/png"
            assert response.content_length == 5004
            body = b"".join([piece async for piece in response.body])
    assert body == reply.body


async def test_open_egress_makes_the_process_instance(redis: object) -> None:
    instance = open_egress(make_test_settings())
    try:
        assert egress() is instance
    finally:
        await close_egress()
    with pytest.raises(RuntimeError):
        egress()
