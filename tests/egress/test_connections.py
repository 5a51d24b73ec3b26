"""Keep-alive: a connection is reused only for its own origin, never once its server left."""

from __future__ import annotations

import asyncio

from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, serve


async def test_a_kept_alive_connection_serves_the_next_request_to_its_origin(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply(body=b"page"), keep_alive=10) as server:
        resolver = fixed_resolver({"news.test": ["127.0.0.1"]})
        client = make_egress(resolver=resolver, egress_allow=[f"news.test:{server.port}"])
        url = f"http://news.test:{server.port}"
        first = await client.fetch(f"{url}/one")
        second = await client.fetch(f"{url}/two")
    assert (first.content, second.content) == (b"page", b"page")
    assert [seen.target for seen in server.requests] == ["/one", "/two"]
    assert server.connections == 1
    assert resolver.calls == ["news.test"]  # type: ignore[attr-defined]


async def test_another_name_on_the_same_address_is_resolved_checked_and_dialled_anew(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply(body=b"page"), keep_alive=10) as server:
        resolver = fixed_resolver({"a.test": ["127.0.0.1"], "b.test": ["127.0.0.1"]})
        client = make_egress(
            resolver=resolver,
            egress_allow=[f"a.test:{server.port}", f"b.test:{server.port}"],
        )
        await client.fetch(f"http://a.test:{server.port}/")
        await client.fetch(f"http://b.test:{server.port}/")
    assert server.connections == 2
    assert resolver.calls == ["a.test", "b.test"]  # type: ignore[attr-defined]


async def test_a_connection_the_server_closed_while_idle_is_not_reused(
    make_egress: MakeEgress,
) -> None:
    # One request per connection, closed afterwards without "Connection: close".
    async with serve(Reply(body=b"page"), keep_alive=1) as server:
        client = make_egress(egress_allow=[f"127.0.0.1:{server.port}"])
        await client.fetch(server.url("/one"))
        await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
        second = await client.fetch(server.url("/two"))
    assert second.content == b"page"
    assert server.connections == 2
