"""What egress may reach, decided without I/O.

`EgressPolicy.check_url` runs before every hop (scheme, port, obvious local
names and IP literals) so that refusals are early and clear; the network
backend calls `check_address` on every address a name resolves to, which is
the check that actually protects us. Both return a reason to refuse, or None.
"""

from __future__ import annotations

import math
import re
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from email.utils import parsedate_to_datetime
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

import httpx

from app.core.config import Settings

IPAddress = IPv4Address | IPv6Address

SCHEMES = frozenset({"http", "https"})
STANDARD_PORTS = frozenset({80, 443})
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# A hostile or confused server must not park a host for ever.
MAX_RETRY_AFTER = 24 * 3600.0

# Every public IPv6 unicast address is in 2000::/3; anything outside it is
# local, reserved, multicast or a wrapper around an IPv4 address.
_GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")

# The special-purpose ranges (IANA's IPv4 and IPv6 special-purpose registries)
# that are never a news site, refused whatever this Python's `is_global` says:
# its tables lag the registries (3.11 calls 192.0.0.9 and 3fff::/20 global).
# `is_global` stays as a second opinion; a test walks this table.
REFUSED_NETWORKS: tuple[tuple[IPv4Network | IPv6Network, str], ...] = tuple(
    (ip_network(network), why)
    for network, why in (
        ("0.0.0.0/8", "this network"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared address space (CGNAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation (TEST-NET-1)"),
        ("192.31.196.0/24", "AS112-v4"),
        ("192.52.193.0/24", "AMT"),
        ("192.88.99.0/24", "6to4 relay anycast (deprecated)"),
        ("192.168.0.0/16", "private"),
        ("192.175.48.0/24", "direct delegation AS112"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation (TEST-NET-2)"),
        ("203.0.113.0/24", "documentation (TEST-NET-3)"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("255.255.255.255/32", "limited broadcast"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "local-use IPv4/IPv6 translation"),
        ("100::/64", "discard-only"),
        ("2001::/23", "IETF protocol assignments (Teredo, ORCHID, AS112, ...)"),
        ("2001:db8::/32", "documentation"),
        ("2620:4f:8000::/48", "direct delegation AS112"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "segment routing (SRv6) SIDs"),
        ("fc00::/7", "unique local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local (deprecated)"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = IPv6Network("64:ff9b::/96")
_TRANSLATED = IPv6Network("::ffff:0:0:0/96")
# The shapes inet_aton (and so getaddrinfo) reads as IPv4: 2130706433,
# 0177.0.0.1, 0x7f.1, 127.1.
_NUMERIC_HOST = re.compile(r"[0-9][0-9a-fx.]*", re.IGNORECASE)


def embedded_ipv4(ip: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 wrapper (mapped, translated, NAT64, 6to4) leads to."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _TRANSLATED or ip in _NAT64:
        return IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def refused_network(ip: IPAddress) -> str | None:
    """What special-purpose range of REFUSED_NETWORKS `ip` is in, if any."""
    for network, why in REFUSED_NETWORKS:
        if ip.version == network.version and ip in network:
            return why
    return None


def is_public_address(ip: IPAddress) -> bool:
    """True only for addresses on the public internet: in no refused range, and global."""
    if isinstance(ip, IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            return is_public_address(inner)
        if ip.teredo is not None or ip not in _GLOBAL_UNICAST_V6:
            return False
    if refused_network(ip) is not None:
        return False
    return ip.is_global and not ip.is_multicast


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host names by itself, in any form the resolver would accept."""
    bare = host.strip("[]").split("%", 1)[0]
    if ":" in bare:
        try:
            return ip_address(bare)
        except ValueError:
            return None
    if _NUMERIC_HOST.fullmatch(bare):
        try:
            return IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


def is_localhost_name(host: str) -> bool:
    """`localhost` and every name under it (RFC 6761), with or without the root dot."""
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def url_host(url: httpx.URL) -> str:
    """The host as written in the URL, in its ASCII (IDNA) form, as it is dialled."""
    return url.raw_host.decode("ascii").lower()


def canonical_host(host: str) -> str:
    """One name per host for budgets: lower-case, IDNA, no root dot (`Example.ORG.` is
    `example.org`), so a spelling cannot buy a second budget."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name.isascii():
        return name
    try:
        return httpx.URL(f"http://{name}/").raw_host.decode("ascii")
    except httpx.InvalidURL:
        return name


def budget_host(url: httpx.URL) -> str:
    """The host whose budget a request to `url` spends."""
    return canonical_host(url_host(url))


# A URL's scheme as RFC 3986 writes it; checked on the text, because httpx
# reads `about:blank` or `mailto:x` as a relative path and loses the scheme.
_SCHEME = re.compile(r"\s*([a-zA-Z][a-zA-Z0-9+.-]*):")


def has_scheme(text: str) -> bool:
    """Whether `text` is an absolute URL (a redirect without one is relative)."""
    return _SCHEME.match(text) is not None


def scheme_refusal(text: str) -> str | None:
    """Why the URL `text` may not be requested for its scheme, naming the scheme; or None."""
    found = _SCHEME.match(text)
    if found is None:
        return "the URL has no scheme (only http and https are allowed)"
    scheme = found.group(1).lower()
    if scheme not in SCHEMES:
        return f"the scheme {scheme!r} is not allowed (only http and https)"
    rest = text[found.end() :]
    if not rest.startswith("//"):
        return f"{text.strip()!r} has no host after {scheme}:"
    return None


def url_port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _host_port(entry: str) -> tuple[str, int]:
    host, _, port = entry.rpartition(":")
    host = host.strip("[]").lower()
    literal = parse_ip_literal(host)
    return (str(literal) if literal is not None else host), int(port)


# (scheme, canonical host, port): what EGRESS_DIVERT matches a request on.
Origin = tuple[str, str, int]


def origin_of(url: httpx.URL) -> Origin:
    return (url.scheme, canonical_host(url_host(url)), url_port(url))


def parse_diverts(settings: Settings) -> dict[Origin, httpx.URL]:
    """EGRESS_DIVERT entries origin=target: where requests for each origin really go."""
    diverts: dict[Origin, httpx.URL] = {}
    for entry in settings.egress_divert:
        origin, _, target = entry.partition("=")
        diverts[origin_of(httpx.URL(origin.strip()))] = httpx.URL(target.strip())
    return diverts


@dataclass(frozen=True)
class EgressPolicy:
    allow: frozenset[tuple[str, int]]  # (host or IP, port) reachable although not public
    ports: frozenset[int]  # ports any public address may be reached on
    diverted: frozenset[Origin] = frozenset()  # origins EGRESS_DIVERT sends elsewhere

    @classmethod
    def from_settings(cls, settings: Settings) -> EgressPolicy:
        return cls(
            allow=frozenset(_host_port(entry) for entry in settings.egress_allow),
            ports=STANDARD_PORTS | frozenset(settings.egress_extra_ports),
            diverted=frozenset(parse_diverts(settings)),
        )

    def dialling_targets(self, targets: Iterable[httpx.URL]) -> EgressPolicy:
        """This policy, able to dial the divert targets too (for diverted requests only)."""
        extra = {(_host_port(f"{url_host(t)}:{url_port(t)}")) for t in targets}
        return replace(self, allow=self.allow | extra)

    def allows(self, host: str, port: int) -> bool:
        return (host, port) in self.allow

    def check_url(self, url: httpx.URL) -> str | None:
        if url.scheme not in SCHEMES:
            return f"the scheme {url.scheme!r} is not allowed (only http and https)"
        if not url.raw_host:
            return "the URL has no host"
        if origin_of(url) in self.diverted:
            return None  # never dialled: the divert target is, through its own check
        host, port = url_host(url), url_port(url)
        if self.allows(host, port):
            return None
        if port not in self.ports and port not in {p for _, p in self.allow}:
            return f"port {port} is not allowed"
        if is_localhost_name(host):
            return f"{host} is this machine"
        literal = parse_ip_literal(host)
        if literal is not None:
            return self.check_address(host, literal, port)
        return None

    def check_address(self, host: str, ip: IPAddress, port: int) -> str | None:
        """Whether a connection to `ip` for `host` (as written in the URL) may be made."""
        if self.allows(host, port) or self.allows(str(ip), port):
            return None
        if port not in self.ports:
            return f"port {port} is only allowed for the hosts listed in EGRESS_ALLOW"
        if not is_public_address(ip):
            # People read this in run errors: name what they wrote, never what it resolved to.
            if parse_ip_literal(host) is not None:
                return f"{host} is not a public address"
            return f"{host} leads to an address that is not public"
        return None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or HTTP-date), capped."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def parse_rate_limit_reset(value: str | None, now: float | None = None) -> float | None:
    """Seconds until an X-RateLimit-Reset, capped: an ISO 8601 time (Mastodon), epoch
    seconds (GitHub, X) or seconds from now (a small number); None if unreadable."""
    if not value:
        return None
    value = value.strip()
    clock = time.time() if now is None else now
    try:
        number = float(value)
    except ValueError:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - clock
    else:
        if number != number:  # NaN
            return None
        seconds = number - clock if number >= 1e9 else number
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def redirect_method(status: int, method: str) -> str:
    """The method of the next hop, as browsers do it."""
    if status == 303 and method != "HEAD":
        return "GET"
    if status in (301, 302) and method == "POST":
        return "GET"
    return method


def keeps_credentials(old: httpx.URL, new: httpx.URL) -> bool:
    """Authorization and Cookie go on only to the same origin (or its https upgrade)."""
    if url_host(old) != url_host(new):
        return False
    if old.scheme == new.scheme:
        return url_port(old) == url_port(new)
    return old.scheme == "http" and new.scheme == "https" and url_port(new) == 443


_CREDENTIALS = ("authorization", "proxy-authorization", "cookie")
_BODY_HEADERS = ("content-length", "content-type", "content-encoding", "transfer-encoding")


def redirect_headers(
    headers: httpx.Headers, old: httpx.URL, new: httpx.URL, keep_body: bool
) -> httpx.Headers:
    """The request headers for the next hop: no stale Host, credentials only same-origin."""
    out = httpx.Headers(headers)
    out.pop("host", None)
    if not keeps_credentials(old, new):
        for name in _CREDENTIALS:
            out.pop(name, None)
    if not keep_body:
        for name in _BODY_HEADERS:
            out.pop(name, None)
    return out


@dataclass(frozen=True)
class HostBudget:
    rate: float  # requests per second, shared by every process
    burst: int  # requests that may go at once after a quiet spell
    inflight: int  # requests open at the same time, across processes


def parse_budgets(settings: Settings) -> dict[str, HostBudget]:
    """EGRESS_HOST_BUDGETS entries host=rate/burst/inflight, e.g. export.arxiv.org=0.333/1/1."""
    budgets: dict[str, HostBudget] = {}
    for entry in settings.egress_host_budgets:
        host, sep, spec = entry.partition("=")
        parts = spec.split("/")
        try:
            if not sep or not host.strip() or len(parts) != 3:
                raise ValueError
            budget = HostBudget(float(parts[0]), int(parts[1]), int(parts[2]))
        except ValueError:
            raise ValueError(
                f"EGRESS_HOST_BUDGETS: {entry!r} is not host=rate/burst/inflight"
            ) from None
        if not 0 < budget.rate < math.inf or budget.burst < 1 or budget.inflight < 1:
            raise ValueError(
                f"EGRESS_HOST_BUDGETS: {entry!r} needs rate > 0, burst and inflight >= 1"
            )
        budgets[canonical_host(host)] = budget
    return budgets


def default_budget(settings: Settings) -> HostBudget:
    return HostBudget(
        settings.egress_host_rate, settings.egress_host_burst, settings.egress_host_inflight
    )
