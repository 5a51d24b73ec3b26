"""Content decoding in bounded steps, so a compression bomb never fills memory.

httpx would decompress a whole network chunk at once: 50 kB of gzip can be
50 MB of zeros. Here every step produces at most about `STEP` bytes, and the
caller counts them against the cap as they come, aborting on the first step
that goes over.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

import brotli

# The most one decompression step may produce (brotli may overshoot a little
# because its buffer grows in blocks; it stays bounded).
STEP = 64 * 1024
# More stacked encodings than this is not a real server.
MAX_LAYERS = 3


class UnsupportedEncoding(ValueError):
    """The server used a Content-Encoding we did not offer."""


class Decoder(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...
    def finish(self) -> Iterator[bytes]: ...


class Identity:
    def feed(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data

    def finish(self) -> Iterator[bytes]:
        return iter(())


class ZlibDecoder:
    """gzip, or deflate with or without the zlib wrapper (servers send both)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._obj: zlib._Decompress | None = (
            zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
        )
        self._head = b""

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._obj is None:
            # "deflate" is zlib-wrapped by the RFC but raw in practice: look at the header.
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            self._obj = zlib.decompressobj(
                zlib.MAX_WBITS if _is_zlib_header(data) else -zlib.MAX_WBITS
            )
        yield from self._drain(data)

    def _drain(self, data: bytes) -> Iterator[bytes]:
        assert self._obj is not None
        while not self._obj.eof:
            out = self._obj.decompress(data, STEP)
            data = self._obj.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < STEP:
                return

    def finish(self) -> Iterator[bytes]:
        if self._obj is None:
            # Fewer than two bytes of deflate: nothing that can decode.
            return
        # Anything still held inside zlib comes out in bounded steps.
        yield from self._drain(b"")


def _is_zlib_header(data: bytes) -> bool:
    return data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


class BrotliDecoder:
    def __init__(self) -> None:
        self._obj = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._obj.is_finished():
            return
        out = self._obj.process(data, output_buffer_limit=STEP)
        if out:
            yield out
        # A full buffer means brotli may hold more output (or unread input);
        # it hands it out on calls with empty input.
        while not self._obj.can_accept_more_data() or (
            len(out) >= STEP and not self._obj.is_finished()
        ):
            out = self._obj.process(b"", output_buffer_limit=STEP)
            if not out:
                break  # no progress: never spin; a broken stream fails on the next call
            yield out

    def finish(self) -> Iterator[bytes]:
        return iter(())


class Chain:
    """Stacked encodings, undone last-applied first; lazy, so each step stays bounded."""

    def __init__(self, layers: list[Decoder]) -> None:
        self._layers = layers

    def feed(self, data: bytes) -> Iterator[bytes]:
        return self._through(0, data)

    def finish(self) -> Iterator[bytes]:
        for index, layer in enumerate(self._layers):
            for piece in layer.finish():
                yield from self._through(index + 1, piece)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._layers):
            yield data
            return
        for piece in self._layers[index].feed(data):
            yield from self._through(index + 1, piece)


def _decoder(name: str) -> Decoder:
    if name in ("gzip", "x-gzip"):
        return ZlibDecoder(gzip=True)
    if name == "deflate":
        return ZlibDecoder(gzip=False)
    if name == "br":
        return BrotliDecoder()
    if name == "identity":
        return Identity()
    raise UnsupportedEncoding(f"the server used an unsupported content encoding {name!r}")


def decoder_for(content_encoding: str | None) -> Decoder:
    """The decoder for a Content-Encoding header value ("gzip", "gzip, br", None)."""
    names = [n.strip().lower() for n in (content_encoding or "").split(",") if n.strip()]
    if len(names) > MAX_LAYERS:
        raise UnsupportedEncoding(f"{len(names)} stacked content encodings")
    return Chain([_decoder(name) for name in reversed(names)])


DECODE_ERRORS: tuple[type[Exception], ...] = (zlib.error, brotli.error)
