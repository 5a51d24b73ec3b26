"""The pure deciding parts of egress: addresses, literals, URLs, headers, budgets."""

from __future__ import annotations

from ipaddress import ip_address

import httpx
import pytest

from app.egress.policy import (
    REFUSED_NETWORKS,
    EgressPolicy,
    HostBudget,
    canonical_host,
    is_public_address,
    parse_budgets,
    parse_ip_literal,
    parse_retry_after,
    redirect_headers,
    redirect_method,
)
from tests.fixtures import make_test_settings

PUBLIC = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",  # mapped, but to a public address
    "64:ff9b::808:808",  # NAT64 of 8.8.8.8
    "2002:808:808::1",  # 6to4 of 8.8.8.8
]

REFUSED = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1",  # CGNAT: not private, and still not public
    "100.127.255.254",
    "0.0.0.0",
    "0.1.2.3",
    "255.255.255.255",
    "224.0.0.1",
    "239.255.255.250",
    "192.0.0.1",
    "192.0.2.1",  # documentation
    "198.51.100.1",
    "203.0.113.1",
    "198.18.0.1",  # benchmarking
    "198.19.255.255",
    "240.0.0.1",  # reserved
    "::",
    "::1",
    "fe80::1",
    "fc00::1",
    "fd12:3456:789a::1",
    "fec0::1",  # deprecated site-local
    "ff02::1",
    "ff0e::1",  # global-scope multicast
    "2001:db8::1",
    "100::1",  # discard-only
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0:7f00:1",  # IPv4-translated 127.0.0.1
    "::7f00:1",  # IPv4-compatible 127.0.0.1
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b:1::1",  # local-use NAT64
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001::1",  # Teredo
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo with a public-looking server
]


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_public_address(ip_address(address))


@pytest.mark.parametrize("address", REFUSED)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_public_address(ip_address(address))


def test_the_refused_ranges_include_those_is_global_misses() -> None:
    """192.0.0.0/24 and 3fff::/20 are refused whatever this Python's `is_global` says."""
    written = {str(network) for network, _ in REFUSED_NETWORKS}
    assert {"192.0.0.0/24", "3fff::/20", "2001:db8::/32", "198.18.0.0/15"} <= written
    for address in ("192.0.0.9", "192.0.0.10", "192.0.0.255", "3fff::1", "3fff:fff:ffff::1"):
        assert not is_public_address(ip_address(address)), address


@pytest.mark.parametrize(("network", "why"), REFUSED_NETWORKS, ids=lambda v: str(v))
def test_every_address_of_every_refused_range_is_refused(network, why) -> None:  # type: ignore[no-untyped-def]
    middle = network.network_address + network.num_addresses // 2
    for address in (network.network_address, middle, network.broadcast_address):
        assert not is_public_address(address), f"{address} ({why})"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("example.org", "example.org"),
        ("Example.ORG.", "example.org"),
        ("example.org.", "example.org"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("BÜCHER.example.", "xn--bcher-kva.example"),
        ("[2001:4860::1]", "2001:4860::1"),
    ],
)
def test_budget_hosts_are_canonical(host: str, expected: str) -> None:
    assert canonical_host(host) == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("fe80::1%25eth0", "fe80::1"),
        ("example.com", None),
        ("1e100.net", None),
        ("deadbeef", None),
    ],
)
def test_ip_literals_are_read_as_the_resolver_would(host: str, expected: str | None) -> None:
    literal = parse_ip_literal(host)
    assert (str(literal) if literal else None) == expected


def _policy(**overrides: object) -> EgressPolicy:
    return EgressPolicy.from_settings(make_test_settings(**overrides))


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://example.com:70/",
        "data:text/plain,hello",
        "javascript:alert(1)",
        "http://example.com:22/",
        "http://example.com:6379/",
        "https://example.com:8443/",
        "http://localhost/",
        "http://LOCALHOST./",
        "http://app.localhost/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://127.1/",
        "http://0.0.0.0/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1%25eth0]/",
    ],
)
def test_check_url_refuses_before_any_network(url: str) -> None:
    assert _policy().check_url(httpx.URL(url)) is not None


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/",
        "https://example.com/x?y=1",
        "http://8.8.8.8/",
        "https://[2606:4700:4700::1111]/",
    ],
)
def test_check_url_lets_public_urls_through(url: str) -> None:
    assert _policy().check_url(httpx.URL(url)) is None


def test_allowlist_matches_host_and_port_exactly() -> None:
    policy = _policy(egress_allow=["127.0.0.1:8101", "demo.localhost:8102", "[::1]:8103"])
    assert policy.check_url(httpx.URL("http://127.0.0.1:8101/")) is None
    assert policy.check_url(httpx.URL("http://demo.localhost:8102/")) is None
    assert policy.check_url(httpx.URL("http://[::1]:8103/")) is None
    # Same host, another port; same port, another host.
    assert policy.check_url(httpx.URL("http://127.0.0.1:8102/")) is not None
    assert policy.check_url(httpx.URL("http://127.0.0.1/")) is not None
    assert policy.check_url(httpx.URL("http://demo.localhost:8101/")) is not None


def test_extra_ports_apply_to_public_addresses_only() -> None:
    policy = _policy(egress_extra_ports=[8080])
    assert policy.check_url(httpx.URL("http://example.com:8080/")) is None
    assert policy.check_address("example.com", ip_address("8.8.8.8"), 8080) is None
    assert policy.check_address("example.com", ip_address("127.0.0.1"), 8080) is not None


def test_an_allowed_ip_is_allowed_for_any_name_that_resolves_to_it() -> None:
    policy = _policy(egress_allow=["127.0.0.1:8101"])
    assert policy.check_address("svc.test", ip_address("127.0.0.1"), 8101) is None
    assert policy.check_address("svc.test", ip_address("127.0.0.2"), 8101) is not None
    assert policy.check_address("svc.test", ip_address("127.0.0.1"), 8102) is not None


def test_retry_after_in_seconds_and_as_a_date() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412400.0) == 80.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412500.0) == 0.0
    assert parse_retry_after("9999999") == 24 * 3600.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_redirects_change_method_like_browsers() -> None:
    assert redirect_method(303, "POST") == "GET"
    assert redirect_method(302, "POST") == "GET"
    assert redirect_method(307, "POST") == "POST"
    assert redirect_method(308, "PUT") == "PUT"
    assert redirect_method(303, "HEAD") == "HEAD"


def test_redirect_to_another_host_drops_credentials() -> None:
    headers = httpx.Headers(
        {"Authorization": "Bearer x", "Cookie": "a=b", "Host": "a.example", "X-Keep": "1"}
    )
    old = httpx.URL("https://a.example/")
    other = redirect_headers(headers, old, httpx.URL("https://b.example/"), keep_body=True)
    same = redirect_headers(headers, old, httpx.URL("https://a.example/next"), keep_body=True)
    downgrade = redirect_headers(headers, old, httpx.URL("http://a.example/"), keep_body=True)
    assert "authorization" not in other
    assert "cookie" not in other
    assert other["x-keep"] == "1"
    assert same["authorization"] == "Bearer x"
    assert same["cookie"] == "a=b"
    assert "authorization" not in downgrade
    assert "host" not in same


def test_budgets_parse_and_refuse_nonsense() -> None:
    settings = make_test_settings(
        egress_host_budgets=["export.arxiv.org=0.333/1/1", "API.Example.=5/10/3"]
    )
    assert parse_budgets(settings) == {
        "export.arxiv.org": HostBudget(0.333, 1, 1),
        "api.example": HostBudget(5.0, 10, 3),
    }
    for bad in ["arxiv", "a=1/2", "a=x/1/1", "a=0/1/1", "a=nan/1/1", "a=inf/1/1", "a=1/0/1"]:
        with pytest.raises(ValueError, match="EGRESS_HOST_BUDGETS"):
            parse_budgets(make_test_settings(egress_host_budgets=[bad]))
