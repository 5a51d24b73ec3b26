"""Incremental decoding: right bytes out, and never a big piece at once."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from app.egress.decoding import STEP, UnsupportedEncoding, decoder_for

TEXT = b"Newsdesk reads the news. " * 4000
BOMB = 20_000_000  # bytes a small compressed body expands to


def _deflate(data: bytes, wbits: int) -> bytes:
    obj = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return obj.compress(data) + obj.flush()


def _decode(encoding: str, data: bytes, chunk: int = 1000) -> tuple[bytes, int]:
    """Feed `data` in chunks; the output and the largest single piece."""
    decoder = decoder_for(encoding)
    pieces = [p for i in range(0, len(data), chunk) for p in decoder.feed(data[i : i + chunk])]
    pieces += list(decoder.finish())
    return b"".join(pieces), max((len(p) for p in pieces), default=0)


@pytest.mark.parametrize(
    ("encoding", "encoded"),
    [
        ("gzip", gzip.compress(TEXT, mtime=0)),
        ("x-gzip", gzip.compress(TEXT, mtime=0)),
        ("deflate", _deflate(TEXT, zlib.MAX_WBITS)),  # zlib-wrapped, as the RFC says
        ("deflate", _deflate(TEXT, -zlib.MAX_WBITS)),  # raw, as many servers send
        ("br", brotli.compress(TEXT)),
        ("gzip, br", brotli.compress(gzip.compress(TEXT, mtime=0))),
        ("identity", TEXT),
        ("", TEXT),
    ],
)
def test_decodes_every_offered_encoding(encoding: str, encoded: bytes) -> None:
    assert _decode(encoding, encoded)[0] == TEXT


@pytest.mark.parametrize(
    ("encoding", "bomb"),
    [
        ("gzip", gzip.compress(b"\0" * BOMB, mtime=0)),
        ("deflate", _deflate(b"\0" * BOMB, zlib.MAX_WBITS)),
        ("br", brotli.compress(b"\0" * BOMB, quality=5)),
    ],
)
def test_a_bomb_comes_out_in_bounded_pieces(encoding: str, bomb: bytes) -> None:
    decoder = decoder_for(encoding)
    # The whole bomb in one network chunk: the worst case for a naive decoder.
    pieces = decoder.feed(bomb)
    first = next(pieces)
    assert len(first) <= 2 * STEP
    # Lazy: nothing more was decoded than was asked for.
    total = len(first) + sum(len(next(pieces)) for _ in range(10))
    assert total <= 11 * 2 * STEP


def test_unknown_encodings_are_refused() -> None:
    with pytest.raises(UnsupportedEncoding):
        decoder_for("zstd")
    with pytest.raises(UnsupportedEncoding):
        decoder_for("gzip, gzip, gzip, gzip")
