"""The process's one HTTP client, with every guard egress promises.

A request goes hop by hop: check the URL (policy), take a budget token and
an in-flight slot (Redis), send through the pinned backend (address check on
what is dialled), then either follow a redirect (at most five; every check
again) or judge the status. The body is read raw and decoded in bounded
steps against the cap. One deadline covers all hops and the body.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import ssl
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass
from http.cookiejar import Cookie, CookieJar, CookiePolicy
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

import httpcore
import httpx
from redis.asyncio import Redis

from app.core import redis as core_redis
from app.core.config import Settings
from app.egress.budgets import Budgets
from app.egress.decoding import DECODE_ERRORS, Decoder, UnsupportedEncoding, decoder_for
from app.egress.errors import (
    EgressBlocked,
    EgressConnectError,
    EgressProtocolError,
    EgressTimeout,
    EgressTooLarge,
    HttpStatusError,
    RateLimited,
)
from app.egress.network import DialRefused, PinnedBackend, Resolver, system_resolver
from app.egress.policy import (
    MAX_REDIRECTS,
    REDIRECT_STATUSES,
    EgressPolicy,
    HostBudget,
    Origin,
    budget_host,
    has_scheme,
    origin_of,
    parse_diverts,
    parse_rate_limit_reset,
    parse_retry_after,
    redirect_headers,
    redirect_method,
    scheme_refusal,
    url_host,
)
from app.egress.types import Fetched, Streamed

if TYPE_CHECKING:
    from urllib.request import Request as UrllibRequest

log = logging.getLogger(__name__)
P = ParamSpec("P")  # the keywords of Egress.stream, which Egress.fetch takes too

DEFAULT_ACCEPT: frozenset[int] = frozenset({304})
ACCEPT_ENCODING = "gzip, deflate, br"  # exactly what decoding.py can undo in bounded steps
DEFAULT_BUDGET_WAIT = 5.0  # seconds a request may wait for its host's budget
LEASE_MARGIN = 5.0  # an in-flight lease outlives the request's deadline by this much
LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=30)


class _NoCookies(CookiePolicy):
    """No jar is kept: one site's cookies must never ride along to another, or to later."""

    netscape = True
    rfc2965 = False
    hide_cookie2 = False

    def set_ok(self, cookie: Cookie, request: UrllibRequest) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: UrllibRequest) -> bool:
        return False

    def domain_return_ok(self, domain: str, request: UrllibRequest) -> bool:
        return False

    def path_return_ok(self, path: str, request: UrllibRequest) -> bool:
        return False


@functools.cache
def _default_ssl_context() -> ssl.SSLContext:
    """certifi's CAs, loaded once per process (loading takes ~20 ms)."""
    return httpx.create_ssl_context(trust_env=False)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, whose connection pool dials through `PinnedBackend`.

    httpx has no parameter for the network backend, so the pool it built is
    replaced by an equal one that has ours.
    """

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False, limits=LIMITS)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=LIMITS.max_connections,
            max_keepalive_connections=LIMITS.max_keepalive_connections,
            keepalive_expiry=LIMITS.keepalive_expiry,
            network_backend=backend,
        )


class _DivertingTransport(httpx.AsyncBaseTransport):
    """Sends requests for a diverted origin (EGRESS_DIVERT) to its target, others on.

    Only the connection moves: the request keeps its URL, Host header and
    everything else, so budgets, messages, relative redirects and Links still
    name the original origin (and are diverted again). The target is dialled
    through a transport of its own, the only one whose policy may reach it.
    """

    def __init__(
        self,
        direct: httpx.AsyncBaseTransport,
        diverted: httpx.AsyncBaseTransport,
        targets: Mapping[Origin, httpx.URL],
    ) -> None:
        self._direct = direct
        self._diverted = diverted
        self._targets = targets

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        target = self._targets.get(origin_of(request.url))
        if target is None:
            return await self._direct.handle_async_request(request)
        moved = httpx.Request(
            request.method,
            request.url.copy_with(scheme=target.scheme, host=target.host, port=target.port),
            headers=[*request.headers.multi_items(), ("Forwarded", _forwarded(request.url))],
            stream=request.stream,
            extensions=request.extensions,
        )
        try:
            return await self._diverted.handle_async_request(moved)
        except httpx.TransportError as exc:
            where = f"{url_host(request.url)} (diverted to {target.host}:{target.port})"
            raise type(exc)(f"{where}: {exc}", request=request) from exc

    async def aclose(self) -> None:
        await self._direct.aclose()
        await self._diverted.aclose()


def _forwarded(url: httpx.URL) -> str:
    """RFC 7239: tells a divert target the origin the request was meant for."""
    host = url.netloc.decode("ascii")
    return f'host="{host}";proto={url.scheme}'


class _Deadline:
    """The total time one request may take, across hops and body; budget waits extend it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._when = asyncio.get_running_loop().time() + seconds

    def extend(self, seconds: float) -> None:
        self._when += seconds

    def scope(self) -> asyncio.Timeout:
        return asyncio.timeout_at(self._when)


_BROKEN: tuple[type[Exception], ...] = (
    httpx.HTTPError,
    httpx.InvalidURL,  # not an HTTPError; a last net for what the checks below missed
    UnsupportedEncoding,
    *DECODE_ERRORS,
)


def redirect_target(url: httpx.URL, location: str) -> httpx.URL:
    """Where a redirect from `url` to `location` leads, or a typed refusal.

    The scheme is checked on the text first: httpx's URL join would make
    `http:host` a path on the same host and `about:blank` a URL without a host.
    """
    if has_scheme(location):
        reason = scheme_refusal(location)
        if reason is not None:
            raise EgressBlocked(str(url), f"redirected to a URL we do not follow: {reason}")
    try:
        target = url.join(location)
    except httpx.InvalidURL as exc:
        raise EgressProtocolError(str(url), f"redirected to an invalid URL: {exc}") from exc
    if not target.raw_host:
        raise EgressProtocolError(str(url), f"redirected to {location!r}, which has no host")
    return target


def _check_redirect(response: httpx.Response) -> None:
    """Refuse a redirect whose Location we could not follow, even one the caller accepts."""
    location = response.headers.get("location")
    if response.status_code in REDIRECT_STATUSES and location:
        redirect_target(response.request.url, location)


@contextmanager
def _translated(url: str, deadline: _Deadline) -> Iterator[None]:
    """httpx's and our lower layers' failures as EgressError types."""
    try:
        yield
    except DialRefused as exc:
        raise EgressBlocked(url, exc.reason) from exc
    except TimeoutError as exc:
        raise EgressTimeout(url, f"no complete answer within {deadline.seconds:g} s") from exc
    except httpx.TimeoutException as exc:
        raise EgressTimeout(url, f"timed out: {type(exc).__name__}") from exc
    except httpx.NetworkError as exc:
        raise EgressConnectError(url, f"could not reach the server: {exc}") from exc
    except _BROKEN as exc:
        raise EgressProtocolError(url, f"broken response: {exc}") from exc


@dataclass(frozen=True)
class _BudgetKeys:
    """Which budget each hop of one request spends: its host's, or the caller's own key
    on the request's own host; None when the caller keeps its own ledger. On the request's
    own host the caller may name the budget it gets (`fallback`, unless EGRESS_HOST_BUDGETS
    names the host) and further budgets it spends too (`extra`, e.g. a paged-request limit)."""

    enabled: bool
    origin: str  # the canonical host of the first URL
    key: str | None
    fallback: HostBudget | None = None
    extra: tuple[tuple[str, HostBudget], ...] = ()

    def of(self, url: httpx.URL) -> str | None:
        if not self.enabled:
            return None
        host = budget_host(url)
        return self.key if self.key and host == self.origin else host

    def spends(self, url: httpx.URL) -> list[tuple[str, HostBudget | None]]:
        key = self.of(url)
        if key is None:
            return []
        if budget_host(url) != self.origin:
            return [(key, None)]
        return [(key, self.fallback), *self.extra]


def _read_whole(
    stream: Callable[Concatenate[Egress, P], AbstractAsyncContextManager[Streamed]],
) -> Callable[Concatenate[Egress, P], Coroutine[Any, Any, Fetched]]:
    """`Egress.fetch` from `Egress.stream`: its keywords, typed as they are listed there
    (once), and the whole body read."""

    async def fetch(self: Egress, *args: P.args, **kwargs: P.kwargs) -> Fetched:
        async with stream(self, *args, **kwargs) as response:
            body = bytearray()
            async for piece in response.body:
                body += piece
        return Fetched(
            response.url, response.status, response.headers, bytes(body), response.redirects
        )

    return fetch


class Egress:
    """Every outbound HTTP request of the process. Make it with `open_egress`."""

    def __init__(
        self,
        settings: Settings,
        redis: Redis,
        *,
        resolver: Resolver = system_resolver,
        ssl_context: ssl.SSLContext | None = None,
        budget_wait: float = DEFAULT_BUDGET_WAIT,
    ) -> None:
        self._settings = settings
        self._policy = EgressPolicy.from_settings(settings)
        self._budgets = Budgets(redis, settings)
        self._budget_wait = budget_wait
        context = ssl_context or _default_ssl_context()
        transport: httpx.AsyncBaseTransport = _PinnedTransport(
            PinnedBackend(self._policy, resolver), context
        )
        targets = parse_diverts(settings)
        if targets:
            dialling = self._policy.dialling_targets(targets.values())
            diverted = _PinnedTransport(PinnedBackend(dialling, resolver), context)
            transport = _DivertingTransport(transport, diverted, targets)
        self._client = httpx.AsyncClient(
            transport=transport,
            headers={
                "User-Agent": settings.egress_user_agent,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            timeout=httpx.Timeout(
                settings.egress_read_timeout, connect=settings.egress_connect_timeout
            ),
            cookies=CookieJar(policy=_NoCookies()),
            follow_redirects=False,
            trust_env=False,
        )
        # Requests are built by the client (headers, timeouts) and sent by the transport:
        # the client's send would only add what we refuse or do ourselves (cookies, auth,
        # redirects) at a tenth of a fetch's CPU.
        self._transport = transport

    async def aclose(self) -> None:
        await self._client.aclose()

    @asynccontextmanager
    async def stream(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        data: Mapping[str, str] | None = None,
        json: Any = None,
        max_bytes: int | None = None,
        accept_statuses: frozenset[int] = DEFAULT_ACCEPT,
        budget: bool = True,
        budget_key: str | None = None,
        budget_wait: float | None = None,
        total_timeout: float | None = None,
        host_budget: HostBudget | None = None,
        extra_budgets: Sequence[tuple[str, HostBudget]] = (),
    ) -> AsyncIterator[Streamed]:
        """A response whose body is read on demand from `Streamed.body`: 2xx or an
        accepted status, decoded and capped. The connection, the in-flight slot and
        the total deadline last until the block ends; leave it soon.

        `max_bytes` defaults to EGRESS_MAX_BYTES, `total_timeout` (all hops and
        the body) to EGRESS_TOTAL_TIMEOUT, `budget_wait` (seconds to wait for the
        host's budget before RateLimited) to the Egress's default. `budget=False`
        skips the host budget (for callers with their own ledger); `budget_key`
        spends a budget of that name instead of the host's on the URL's own host
        (the analysis endpoint, so its calls never use up a feed host's). `host_budget`
        is the URL's own host's budget unless EGRESS_HOST_BUDGETS names the host (a
        platform's documented limit, e.g. a Mastodon instance's); `extra_budgets` are
        (name, budget) pairs spent too on that host (e.g. "host#paged"). A redirect
        status listed in `accept_statuses` is returned instead of followed.
        """
        cap = max_bytes if max_bytes is not None else self._settings.egress_max_bytes
        deadline = _Deadline(
            total_timeout if total_timeout is not None else self._settings.egress_total_timeout
        )
        wait = budget_wait if budget_wait is not None else self._budget_wait
        request = self._build(url, method, headers, content, data, json)
        keys = _BudgetKeys(
            budget, budget_host(request.url), budget_key, host_budget, tuple(extra_budgets)
        )
        async with AsyncExitStack() as stack:
            response, redirects = await self._follow(
                request, deadline, stack, accept_statuses, keys=keys, wait=wait
            )
            await self._judge(response, accept_statuses, keys)
            body = self._body(response, self._decoder(response, cap), cap, deadline)
            stack.push_async_callback(body.aclose)
            yield Streamed(
                str(response.url), response.status_code, response.headers, redirects, body
            )

    # One whole response, body read into `Fetched.content`; the same keywords as `stream`.
    fetch = _read_whole(stream)

    def _build(
        self,
        url: str,
        method: str,
        headers: Mapping[str, str] | None,
        content: bytes | None,
        data: Mapping[str, str] | None,
        json: Any,
    ) -> httpx.Request:
        reason = scheme_refusal(url)
        if reason is not None:
            raise EgressBlocked(url, reason)
        try:
            return self._client.build_request(
                method, url, headers=headers, content=content, data=data, json=json
            )
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise EgressBlocked(url, f"not a valid URL: {exc}") from exc

    async def _follow(
        self,
        request: httpx.Request,
        deadline: _Deadline,
        stack: AsyncExitStack,
        accept_statuses: frozenset[int],
        *,
        keys: _BudgetKeys,
        wait: float,
    ) -> tuple[httpx.Response, tuple[str, ...]]:
        """Send `request` and follow its redirects; the last response stays open on `stack`."""
        redirects: list[str] = []
        while True:
            response = await self._hop(request, deadline, stack, keys=keys, wait=wait)
            following = (
                None
                if response.status_code in accept_statuses
                else self._redirect(request, response)
            )
            if following is None:
                return response, tuple(redirects)
            await stack.aclose()  # this hop's response and in-flight slot
            if len(redirects) == MAX_REDIRECTS:
                raise EgressBlocked(str(request.url), f"more than {MAX_REDIRECTS} redirects")
            request = following
            redirects.append(str(request.url))

    async def _hop(
        self,
        request: httpx.Request,
        deadline: _Deadline,
        stack: AsyncExitStack,
        *,
        keys: _BudgetKeys,
        wait: float,
    ) -> httpx.Response:
        """One request on the way: checks, budget, send. Its slot and response go on `stack`."""
        url = str(request.url)
        reason = self._policy.check_url(request.url)
        if reason is not None:
            raise EgressBlocked(url, reason)
        for key, fallback in keys.spends(request.url):
            lease_for = deadline.seconds + LEASE_MARGIN
            lease, waited = await self._budgets.acquire(
                key, url, lease=lease_for, wait=wait, fallback=fallback
            )
            stack.push_async_callback(lease.release)
            deadline.extend(waited)
        with _translated(url, deadline):
            async with deadline.scope():
                response = await self._transport.handle_async_request(request)
        response.request = request
        stack.push_async_callback(response.aclose)
        _check_redirect(response)
        log.debug("egress: %s %s -> %s", request.method, url, response.status_code)
        return response

    def _redirect(self, request: httpx.Request, response: httpx.Response) -> httpx.Request | None:
        """The next hop's request, if `response` is a redirect."""
        location = response.headers.get("location")
        if response.status_code not in REDIRECT_STATUSES or not location:
            return None
        target = redirect_target(request.url, location)
        method = redirect_method(response.status_code, request.method)
        keep_body = method == request.method
        return self._client.build_request(
            method,
            target,
            headers=redirect_headers(request.headers, request.url, target, keep_body),
            content=request.content if keep_body else None,
        )

    async def _judge(
        self, response: httpx.Response, accept_statuses: frozenset[int], keys: _BudgetKeys
    ) -> None:
        """Raise for a status the caller did not accept; remember a Retry-After for everyone."""
        status, url, host = response.status_code, str(response.url), budget_host(response.url)
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        reset = parse_rate_limit_reset(response.headers.get("x-ratelimit-reset"))
        if status == 429 and retry_after is None:
            retry_after = reset  # Mastodon and others say when the window resets instead
        if status in (429, 503) and retry_after is not None:
            await self._budgets.hold(keys.of(response.url) or host, retry_after)
        elif reset and response.headers.get("x-ratelimit-remaining", "").strip() == "0":
            # The site's own window is spent: the next request would be a 429, so every
            # process waits for the reset instead of asking.
            await self._budgets.hold(keys.of(response.url) or host, reset)
        if 200 <= status < 300 or status in accept_statuses:
            return
        if status == 429 or (status == 503 and retry_after is not None):
            raise RateLimited(url, f"{host} answered HTTP {status}", retry_after)
        raise HttpStatusError(url, status)

    def _decoder(self, response: httpx.Response, cap: int) -> Decoder:
        url = str(response.url)
        length = response.headers.get("content-length", "")
        # A HEAD answer announces a body it does not send.
        if response.request.method != "HEAD" and length.isdigit() and int(length) > cap:
            raise EgressTooLarge(url, f"the body is {length} bytes, more than the {cap} allowed")
        try:
            return decoder_for(response.headers.get("content-encoding"))
        except UnsupportedEncoding as exc:
            raise EgressProtocolError(url, str(exc)) from exc

    async def _body(
        self, response: httpx.Response, decoder: Decoder, cap: int, deadline: _Deadline
    ) -> AsyncGenerator[bytes, None]:
        """The decoded body; raw and decoded bytes both count against `cap`."""
        url = str(response.url)
        raw = response.aiter_raw()
        received = produced = 0
        with _translated(url, deadline):
            while True:
                async with deadline.scope():
                    chunk = await anext(raw, None)
                if chunk is None:
                    break
                received += len(chunk)
                if received > cap:
                    raise EgressTooLarge(url, f"the body is larger than the {cap} bytes allowed")
                for piece in decoder.feed(chunk):
                    produced += len(piece)
                    if produced > cap:
                        raise EgressTooLarge(url, f"the body decodes to more than {cap} bytes")
                    yield piece
            for piece in decoder.finish():
                produced += len(piece)
                if produced > cap:
                    raise EgressTooLarge(url, f"the body decodes to more than {cap} bytes")
                yield piece


_egress: Egress | None = None


def open_egress(
    settings: Settings,
    *,
    redis: Redis | None = None,
    resolver: Resolver = system_resolver,
    ssl_context: ssl.SSLContext | None = None,
    budget_wait: float = DEFAULT_BUDGET_WAIT,
) -> Egress:
    """Make the process's Egress (Redis defaults to app.core.redis.client())."""
    instance = Egress(
        settings,
        redis or core_redis.client(),
        resolver=resolver,
        ssl_context=ssl_context,
        budget_wait=budget_wait,
    )
    use_egress(instance)
    return instance


def use_egress(instance: Egress | None) -> None:
    """Adopt an Egress made elsewhere (tests, the worker's startup)."""
    global _egress
    _egress = instance


def egress() -> Egress:
    if _egress is None:
        raise RuntimeError("egress is not open (app.egress.open_egress)")
    return _egress


async def close_egress() -> None:
    global _egress
    if _egress is not None:
        await _egress.aclose()
    _egress = None
