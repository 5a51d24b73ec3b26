"""The network backend that resolves, checks and dials: DNS pinning.

httpcore asks its network backend for a TCP connection to (host, port). Ours
resolves the host once, checks every address it got, and connects to a
checked address itself. What is checked is therefore exactly what is dialled:
a DNS answer that changes between a check and a connect (rebinding) cannot
slip through. TLS still runs on top with the hostname, so SNI and certificate
verification are unchanged. A connection is only reused for its own origin,
so keep-alive never carries a request to an unchecked address.

The checked address is dialled by `AsyncioBackend`, plain asyncio streams
under httpcore: anyio's layer cost a third of a loopback fetch's CPU, and
its TLS runs through memory BIOs in Python where asyncio's is the loop's own.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from ipaddress import ip_address
from typing import Any

import httpcore
from httpcore._utils import is_socket_readable

from app.egress.policy import EgressPolicy, IPAddress

log = logging.getLogger(__name__)

# (host, port) -> the addresses the host resolves to, as strings.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]


class DialRefused(Exception):
    """The backend would not connect; the client turns this into EgressBlocked."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def system_resolver(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection for httpcore, on asyncio's streams; failures as httpcore's errors."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            async with asyncio.timeout(timeout):
                return await self._reader.read(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout("reading timed out") from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        try:
            async with asyncio.timeout(timeout):
                self._writer.write(buffer)
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpcore.WriteTimeout("writing timed out") from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    async def aclose(self) -> None:
        self._writer.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            async with asyncio.timeout(timeout):
                await self._writer.start_tls(ssl_context, server_hostname=server_hostname)
        except TimeoutError as exc:
            self._writer.close()
            raise httpcore.ConnectTimeout("the TLS handshake timed out") from exc
        except OSError as exc:  # ssl.SSLError is an OSError
            self._writer.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle keep-alive connection with anything to read (or its end) is not reused.
            sock = self._writer.get_extra_info("socket")
            return self._reader.at_eof() or sock is None or is_socket_readable(sock)
        name = _EXTRA_INFO.get(info)
        return None if name is None else self._writer.get_extra_info(name)


# httpcore's names for what a connection can tell, and asyncio's.
_EXTRA_INFO = {
    "ssl_object": "ssl_object",
    "client_addr": "sockname",
    "server_addr": "peername",
    "socket": "socket",
}


class _TcpOnly(httpcore.AsyncNetworkBackend):
    """Egress dials TCP, never a local socket."""

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise DialRefused("unix sockets are never used")


class AsyncioBackend(_TcpOnly):
    """Connects to an address (never a name: PinnedBackend resolved and checked it)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        local = None if local_address is None else (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"connecting to {host} timed out") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        for option in socket_options or ():
            writer.get_extra_info("socket").setsockopt(*option)
        return AsyncioStream(reader, writer)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class PinnedBackend(_TcpOnly):
    def __init__(
        self,
        policy: EgressPolicy,
        resolver: Resolver = system_resolver,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = inner or AsyncioBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        addresses = self.checked(host, port, await self._resolve(host, port, timeout))
        error: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in addresses:
            left = None if deadline is None else max(deadline - loop.time(), 0.001)
            try:
                return await self._inner.connect_tcp(
                    str(address), port, left, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                # Try the next address, like a browser would. The message names the host,
                # never the address: it reaches people in run errors (the log keeps it).
                log.info(
                    "egress: connecting to %s (%s) port %s failed: %s", host, address, port, exc
                )
                error = httpcore.ConnectError(f"{host}: {_reason(exc)}")
                error.__cause__ = exc
        raise error

    async def _resolve(self, host: str, port: int, limit: float | None) -> Sequence[str]:
        if _is_address(host):
            return [host]  # nothing to ask a resolver (getaddrinfo runs in a thread)
        try:
            async with asyncio.timeout(limit):
                return await self._resolver(host, port)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} took too long") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc

    def checked(self, host: str, port: int, answers: Sequence[str]) -> list[IPAddress]:
        """Every address must pass: a name that also points inward is not trusted at all."""
        addresses = [ip_address(answer.split("%", 1)[0]) for answer in answers]
        for address in addresses:
            reason = self._policy.check_address(host, address, port)
            if reason is not None:
                raise DialRefused(reason)
        return addresses

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _is_address(host: str) -> bool:
    try:
        ip_address(host)
    except ValueError:
        return False
    return True


def _reason(error: BaseException) -> str:
    """Why a connect failed, in words without addresses ("Connection refused")."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return os.strerror(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return "the connection failed"
