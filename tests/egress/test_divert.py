"""EGRESS_DIVERT: a real origin answered by a loopback server, everything else unchanged."""

from __future__ import annotations

import socket

import pytest
from pydantic import ValidationError

from app.egress import EgressBlocked, EgressConnectError, RateLimited
from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, Seen, serve
from tests.fixtures import make_test_settings

BSKY = "https://public.api.bsky.app"


def _divert(origin: str, port: int) -> list[str]:
    return [f"{origin}=http://127.0.0.1:{port}"]


async def test_a_diverted_request_reaches_the_loopback_server(make_egress: MakeEgress) -> None:
    resolver = fixed_resolver({})  # knows no names: the original host is never resolved
    async with serve(Reply(body=b"demo")) as server:
        client = make_egress(resolver=resolver, egress_divert=_divert(BSKY, server.port))
        fetched = await client.fetch(f"{BSKY}/xrpc/app.bsky.feed.searchPosts?q=climate")
    seen = server.requests[0]
    assert fetched.content == b"demo"
    assert fetched.url == f"{BSKY}/xrpc/app.bsky.feed.searchPosts?q=climate"
    assert seen.target == "/xrpc/app.bsky.feed.searchPosts?q=climate"
    assert seen.headers["host"] == "public.api.bsky.app"
    assert seen.headers["forwarded"] == 'host="public.api.bsky.app";proto=https'
    assert resolver.calls == []  # type: ignore[attr-defined]


async def test_the_budget_stays_the_original_hosts(make_egress: MakeEgress) -> None:
    async with serve(Reply(body=b"ok")) as server:
        client = make_egress(
            budget_wait=0.05,
            egress_divert=_divert(BSKY, server.port),
            egress_host_budgets=["public.api.bsky.app=0.01/1/1"],
        )
        await client.fetch(f"{BSKY}/one")
        with pytest.raises(RateLimited) as caught:
            await client.fetch(f"{BSKY}/two")
    assert caught.value.own_limit_of == "public.api.bsky.app"
    assert "public.api.bsky.app" in caught.value.message
    assert len(server.requests) == 1


async def test_errors_name_the_original_host(make_egress: MakeEgress) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    client = make_egress(egress_divert=_divert(BSKY, port))
    with pytest.raises(EgressConnectError) as caught:
        await client.fetch(f"{BSKY}/xrpc/x")
    assert caught.value.url == f"{BSKY}/xrpc/x"
    assert "public.api.bsky.app" in caught.value.message


def _redirecting(seen: Seen) -> Reply:
    hops = {
        "/a": Reply(302, [("Location", f"{BSKY}/b")]),  # absolute, the original origin
        "/b": Reply(301, [("Location", "c")]),  # relative to the original URL
    }
    return hops.get(seen.target, Reply(body=seen.target.encode()))


async def test_redirects_to_the_original_origin_are_diverted_again(
    make_egress: MakeEgress,
) -> None:
    async with serve(_redirecting) as server:
        client = make_egress(resolver=fixed_resolver({}), egress_divert=_divert(BSKY, server.port))
        fetched = await client.fetch(f"{BSKY}/a")
    assert [seen.target for seen in server.requests] == ["/a", "/b", "/c"]
    assert fetched.redirects == (f"{BSKY}/b", f"{BSKY}/c")
    assert fetched.url == f"{BSKY}/c"
    assert fetched.content == b"/c"


async def test_other_hosts_go_where_they_always_went(make_egress: MakeEgress) -> None:
    async with serve(Reply(body=b"diverted")) as demo, serve(Reply(body=b"direct")) as other:
        client = make_egress(
            egress_divert=_divert(BSKY, demo.port), egress_allow=[f"127.0.0.1:{other.port}"]
        )
        fetched = await client.fetch(other.url("/page"))
    assert fetched.content == b"direct"
    assert demo.requests == []


async def test_the_target_cannot_be_reached_directly(make_egress: MakeEgress) -> None:
    async with serve(Reply(body=b"demo")) as server:
        client = make_egress(egress_divert=_divert(BSKY, server.port))
        with pytest.raises(EgressBlocked):
            await client.fetch(server.url("/"))
        with pytest.raises(EgressBlocked):  # whichever origin it stands in for
            await make_egress(egress_divert=_divert("https://example.org", server.port)).fetch(
                server.url("/")
            )
    assert server.requests == []


async def test_only_the_exact_origin_is_diverted(make_egress: MakeEgress) -> None:
    """Another scheme or port of the same host is not diverted: SSRF rules apply as before."""
    resolver = fixed_resolver({"public.api.bsky.app": ["127.0.0.1"]})
    async with serve(Reply(body=b"demo")) as server:
        client = make_egress(resolver=resolver, egress_divert=_divert(BSKY, server.port))
        for url in ("http://public.api.bsky.app/", "https://public.api.bsky.app:8443/"):
            with pytest.raises(EgressBlocked):
                await client.fetch(url)
        with pytest.raises(EgressBlocked):  # a private address stays refused
            await client.fetch("http://10.0.0.1/")
    assert server.requests == []


async def test_a_redirect_away_from_a_diverted_origin_is_checked_as_ever(
    make_egress: MakeEgress,
) -> None:
    def to_the_target_itself(seen: Seen) -> Reply:
        return Reply(302, [("Location", f"http://127.0.0.1:{server.port}/admin")])

    async with serve(to_the_target_itself) as server:
        client = make_egress(egress_divert=_divert(BSKY, server.port))
        with pytest.raises(EgressBlocked):
            await client.fetch(f"{BSKY}/go")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "entry",
    [
        "https://bsky.social",  # no target
        "bsky.social=http://127.0.0.1:8701",  # no scheme
        "https://bsky.social/xrpc=http://127.0.0.1:8701",  # a path is not an origin
        "https://bsky.social=ftp://127.0.0.1:8701",
        "https://bsky.social=http://127.0.0.1:port",
    ],
)
def test_bad_divert_entries_are_refused_at_start(entry: str) -> None:
    with pytest.raises(ValidationError, match="origin=target"):
        make_test_settings(egress_divert=[entry])


def test_divert_entries_are_read_from_a_comma_separated_list() -> None:
    settings = make_test_settings(
        egress_divert="https://bsky.social=http://127.0.0.1:1, https://x.example=http://[::1]:2"
    )
    assert settings.egress_divert == [
        "https://bsky.social=http://127.0.0.1:1",
        "https://x.example=http://[::1]:2",
    ]
