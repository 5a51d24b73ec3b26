"""Server-side request forgery: nothing reaches a non-public address unless allowlisted.

Most tests run a real server on 127.0.0.1 and open its port (egress_extra_ports)
so that only the address rules stand between the request and the server;
`server.connections == 0` proves nothing got through.
"""

from __future__ import annotations

import socket

import pytest

from app.egress import EgressBlocked, EgressConnectError
from app.egress.network import DialRefused, PinnedBackend, system_resolver
from app.egress.policy import EgressPolicy
from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, serve
from tests.fixtures import make_test_settings

LOOPBACK_FORMS = [
    "2130706433",  # decimal
    "0177.0.0.1",  # octal
    "0x7f.1",  # hex, short
    "0x7f000001",
    "127.1",  # short form
    "127.0.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
    "[::ffff:7f00:1]",
    "0.0.0.0",  # reaches local services on Linux
    "0",
    "localhost",
    "localhost.",
    "LocalHost",
    "anything.localhost",
    "anything.localhost.",
]


@pytest.mark.parametrize("host", LOOPBACK_FORMS)
async def test_loopback_in_any_spelling_is_blocked(make_egress: MakeEgress, host: str) -> None:
    async with serve(Reply()) as server:
        client = make_egress(egress_extra_ports=[server.port])
        with pytest.raises(EgressBlocked):
            await client.fetch(f"http://{host}:{server.port}/")
    assert server.connections == 0


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",
        "0177.0.0.1",
        "0x7f.1",
        "127.1",
        "::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
        "localhost",
    ],
)
async def test_the_dialled_address_check_refuses_on_its_own(host: str) -> None:
    """Even without the URL pre-check, the backend refuses what the system resolver makes of these."""
    backend = PinnedBackend(EgressPolicy.from_settings(make_test_settings()), system_resolver)
    with pytest.raises(DialRefused, match=r"not a public address|not public"):
        await backend.connect_tcp(host, 80, timeout=2)


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "[fe80::1]",
        "[fc00::1]",
    ],
)
async def test_private_and_link_local_literals_are_blocked(
    make_egress: MakeEgress, address: str
) -> None:
    resolver = fixed_resolver({})
    with pytest.raises(EgressBlocked, match="not a public address"):
        await make_egress(resolver=resolver).fetch(f"http://{address}/")
    assert resolver.calls == []  # type: ignore[attr-defined]


async def test_a_name_that_resolves_to_loopback_is_blocked(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        resolver = fixed_resolver({"rebind.test": ["127.0.0.1"]})
        client = make_egress(resolver=resolver, egress_extra_ports=[server.port])
        with pytest.raises(EgressBlocked, match=r"rebind.test leads to an address that is not"):
            await client.fetch(f"http://rebind.test:{server.port}/")
    assert resolver.calls == ["rebind.test"]  # type: ignore[attr-defined]
    assert server.connections == 0


async def test_a_name_with_one_inward_answer_among_public_ones_is_blocked(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply()) as server:
        resolver = fixed_resolver({"mixed.test": ["8.8.8.8", "127.0.0.1"]})
        client = make_egress(resolver=resolver, egress_extra_ports=[server.port])
        with pytest.raises(EgressBlocked):
            await client.fetch(f"http://mixed.test:{server.port}/")
    assert server.connections == 0


async def test_an_allowlisted_address_is_dialled_as_resolved(make_egress: MakeEgress) -> None:
    """DNS pinning: one resolution, and the connection goes to the address checked."""
    async with serve(Reply(body=b"pinned")) as server:
        resolver = fixed_resolver({"svc.test": ["127.0.0.1"]})
        client = make_egress(resolver=resolver, egress_allow=[f"127.0.0.1:{server.port}"])
        fetched = await client.fetch(f"http://svc.test:{server.port}/")
    assert fetched.content == b"pinned"
    assert resolver.calls == ["svc.test"]  # type: ignore[attr-defined]
    assert server.requests[0].headers["host"] == f"svc.test:{server.port}"


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:{port}/",  # another port of the same loopback host
        "http://localhost:{port}/",
        "http://2130706433:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://rebind.test:{port}/",  # resolves to 127.0.0.1
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:{port}/",
    ],
)
async def test_a_redirect_from_an_allowlisted_host_to_an_inward_address_is_blocked(
    make_egress: MakeEgress, target: str
) -> None:
    async with serve(Reply()) as inner:
        location = target.format(port=inner.port)
        async with serve(Reply(302, [("Location", location)])) as outer:
            client = make_egress(
                resolver=fixed_resolver({"rebind.test": ["127.0.0.1"]}),
                egress_allow=[f"127.0.0.1:{outer.port}"],
                egress_extra_ports=[inner.port],
            )
            with pytest.raises(EgressBlocked):
                await client.fetch(outer.url())
    assert len(outer.requests) == 1
    assert inner.connections == 0


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/file",
        "gopher://example.com:70/_x",
        "data:text/plain;base64,aGVsbG8=",
        "javascript:alert(1)",
        "ws://example.com/",
        "dict://127.0.0.1:11211/",
    ],
)
async def test_non_http_schemes_are_blocked(make_egress: MakeEgress, url: str) -> None:
    resolver = fixed_resolver({})
    with pytest.raises(EgressBlocked, match=r"scheme|not a valid URL"):
        await make_egress(resolver=resolver).fetch(url)
    assert resolver.calls == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("port", [22, 25, 6379, 5432, 8080, 11211])
async def test_ports_outside_the_allowlist_are_blocked(make_egress: MakeEgress, port: int) -> None:
    resolver = fixed_resolver({"example.test": ["8.8.8.8"]})
    with pytest.raises(EgressBlocked, match=f"port {port}"):
        await make_egress(resolver=resolver).fetch(f"http://example.test:{port}/")
    assert resolver.calls == []  # type: ignore[attr-defined]


async def test_an_allowlisted_port_is_for_its_own_host_only(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        resolver = fixed_resolver({"public.test": ["8.8.8.8"], "other.test": ["127.0.0.1"]})
        client = make_egress(resolver=resolver, egress_allow=[f"127.0.0.1:{server.port}"])
        # A public address on that port: refused at the dial, nothing reaches the internet.
        with pytest.raises(EgressBlocked, match=f"port {server.port} is only allowed"):
            await client.fetch(f"http://public.test:{server.port}/")
        # Loopback on the allowlisted port but under another literal address.
        with pytest.raises(EgressBlocked):
            await client.fetch(f"http://127.0.0.2:{server.port}/")
    assert server.connections == 0


async def test_a_refusal_never_says_what_a_name_resolved_to(make_egress: MakeEgress) -> None:
    """Run errors are read by people: they name the host written, not the inside address."""
    resolver = fixed_resolver({"inside.test": ["10.1.2.3"], "also.test": ["8.8.8.8", "192.0.0.9"]})
    client = make_egress(resolver=resolver)
    for host in ("inside.test", "also.test"):
        with pytest.raises(EgressBlocked) as caught:
            await client.fetch(f"http://{host}/")
        assert host in caught.value.message
        assert "10.1.2.3" not in str(caught.value)
        assert "192.0.0.9" not in str(caught.value)
        assert "8.8.8.8" not in str(caught.value)


async def test_a_failed_connect_never_says_what_a_name_resolved_to(make_egress: MakeEgress) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    resolver = fixed_resolver({"closed.test": ["127.0.0.1"]})
    client = make_egress(resolver=resolver, egress_allow=[f"127.0.0.1:{port}"])
    with pytest.raises(EgressConnectError) as caught:
        await client.fetch(f"http://closed.test:{port}/")
    assert "closed.test" in caught.value.message
    assert "refused" in caught.value.message.lower()
    assert "127.0.0.1" not in str(caught.value)
