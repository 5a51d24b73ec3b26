"""Size caps (after decoding, bombs included) and timeouts (connect, read, total)."""

from __future__ import annotations

import asyncio
import functools
import gzip
import itertools
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator

import brotli
import pytest

from app.egress import EgressTimeout, EgressTooLarge
from tests.egress.conftest import MakeEgress
from tests.egress.servers import Reply, serve

CAP = 1_000_000
BOMB = 50_000_000  # what the bombs below expand to: fifty times the cap


def _allow(port: int) -> list[str]:
    return [f"127.0.0.1:{port}"]


async def test_a_declared_length_over_the_cap_is_refused_before_reading(
    make_egress: MakeEgress,
) -> None:
    reply = Reply(headers=[("Content-Length", str(CAP + 1))], body=b"", delay=0)
    async with serve(reply) as server:
        with pytest.raises(EgressTooLarge, match="more than the"):
            await make_egress(egress_allow=_allow(server.port)).fetch(server.url(), max_bytes=CAP)


async def test_an_undeclared_body_over_the_cap_is_cut_off(make_egress: MakeEgress) -> None:
    endless = itertools.repeat(b"x" * 65536)  # chunked, no length, never ends
    async with serve(Reply(chunks=endless)) as server:
        with pytest.raises(EgressTooLarge):
            await make_egress(egress_allow=_allow(server.port)).fetch(server.url(), max_bytes=CAP)


async def test_the_settings_cap_applies_by_default(make_egress: MakeEgress) -> None:
    async with serve(Reply(body=b"x" * 5000)) as server:
        client = make_egress(egress_allow=_allow(server.port), egress_max_bytes=4096)
        with pytest.raises(EgressTooLarge):
            await client.fetch(server.url())


async def test_a_body_exactly_at_the_cap_is_fine(make_egress: MakeEgress) -> None:
    async with serve(Reply(body=b"x" * 4096)) as server:
        client = make_egress(egress_allow=_allow(server.port), egress_max_bytes=4096)
        assert len((await client.fetch(server.url())).content) == 4096


@functools.cache
def _gzip_bomb() -> bytes:
    return gzip.compress(b"\0" * BOMB, compresslevel=9)


@functools.cache
def _deflate_bomb() -> bytes:
    return zlib.compress(b"\0" * BOMB, 9)


@functools.cache
def _brotli_bomb() -> bytes:
    return brotli.compress(b"\0" * BOMB, quality=5)


@pytest.mark.parametrize(
    ("encoding", "make_bomb"),
    [("gzip", _gzip_bomb), ("deflate", _deflate_bomb), ("br", _brotli_bomb)],
)
async def test_a_compression_bomb_is_refused_in_bounded_memory(
    make_egress: MakeEgress, encoding: str, make_bomb
) -> None:
    bomb = make_bomb()
    assert len(bomb) < CAP  # small on the wire: only decoding reveals it
    async with serve(Reply(headers=[("Content-Encoding", encoding)], body=bomb)) as server:
        client = make_egress(egress_allow=_allow(server.port))
        tracemalloc.start()
        try:
            with pytest.raises(EgressTooLarge, match="decodes to more than"):
                await client.fetch(server.url(), max_bytes=CAP)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    # Peak Python memory stays a few times the cap (about 3 MB here); decoding
    # whole network chunks at once peaks above 100 MB on the same bomb.
    assert peak < 5 * CAP


async def _drain(body: AsyncIterator[bytes], sizes: list[int]) -> None:
    async for piece in body:
        sizes.append(len(piece))


async def test_a_stream_body_is_capped_while_iterating(make_egress: MakeEgress) -> None:
    async with serve(Reply(headers=[("Content-Encoding", "gzip")], body=_gzip_bomb())) as server:
        client = make_egress(egress_allow=_allow(server.port))
        async with client.stream(server.url(), max_bytes=CAP) as response:
            assert response.content_length is None  # the header counts encoded bytes
            received: list[int] = []
            with pytest.raises(EgressTooLarge):
                await _drain(response.body, received)
    assert sum(received) <= CAP


async def test_a_slow_server_hits_the_total_timeout(make_egress: MakeEgress) -> None:
    async with serve(Reply(delay=5)) as server:
        client = make_egress(egress_allow=_allow(server.port), egress_total_timeout=0.3)
        started = time.monotonic()
        with pytest.raises(EgressTimeout):
            await client.fetch(server.url())
    assert time.monotonic() - started < 2


async def test_a_dripping_body_hits_the_total_timeout_although_each_read_is_quick(
    make_egress: MakeEgress,
) -> None:
    drip = Reply(chunks=itertools.repeat(b"."), drip=0.02)  # a byte every 20 ms, for ever
    async with serve(drip) as server:
        client = make_egress(
            egress_allow=_allow(server.port), egress_read_timeout=5, egress_total_timeout=0.4
        )
        started = time.monotonic()
        with pytest.raises(EgressTimeout, match=r"within 0\.4 s"):
            await client.fetch(server.url())
    assert time.monotonic() - started < 2


async def test_the_read_timeout_applies_between_bytes(make_egress: MakeEgress) -> None:
    async with serve(Reply(delay=5)) as server:
        client = make_egress(egress_allow=_allow(server.port), egress_read_timeout=0.2)
        with pytest.raises(EgressTimeout, match="ReadTimeout"):
            await client.fetch(server.url())


async def test_the_connect_timeout_covers_a_slow_resolver(make_egress: MakeEgress) -> None:
    async def stuck(host: str, port: int) -> list[str]:
        await asyncio.sleep(10)
        return []

    client = make_egress(resolver=stuck, egress_connect_timeout=0.2)
    with pytest.raises(EgressTimeout, match="ConnectTimeout"):
        await client.fetch("http://slow-dns.test/")
