"""Deciding what a file is: the declared type and the first bytes must both say media."""

from __future__ import annotations

import pytest

from app.media.sniff import ALLOWED_TYPES, SNIFF_BYTES, served_type, sniff
from tests.media import samples


@pytest.mark.parametrize(("media_type", "body"), list(samples.ALLOWED.items()))
def test_each_allowlisted_kind_is_recognised(media_type: str, body: bytes) -> None:
    assert sniff(body[:SNIFF_BYTES]) == media_type
    assert served_type(media_type, body[:SNIFF_BYTES]) == media_type


def test_the_allowlist_is_exactly_the_raster_images_and_videos() -> None:
    assert set(samples.ALLOWED) == ALLOWED_TYPES


@pytest.mark.parametrize(
    "body",
    [
        samples.SVG,
        samples.HTML,
        b"  <svg>",
        b"\xef\xbb\xbf<html>",
        samples.MKV,
        samples.HEIC,
        b"%PDF-1.7",
        b"",
        b"\x89PN",
        b"RIFF\x00\x00\x00\x00WAVEfmt ",
        (8).to_bytes(4, "big") + b"ftyp",
    ],
)
def test_other_bytes_are_not_media(body: bytes) -> None:
    assert sniff(body[:SNIFF_BYTES]) is None


@pytest.mark.parametrize(
    ("declared", "body"),
    [
        ("image/png", samples.SVG),
        ("image/png", samples.HTML),
        ("image/svg+xml", samples.SVG),
        ("image/svg+xml", samples.PNG),
        ("text/html", samples.PNG),
        ("application/octet-stream", samples.PNG),
        (None, samples.PNG),
        ("image/heic", samples.HEIC),
    ],
)
def test_a_file_is_refused_unless_label_and_bytes_both_say_media(
    declared: str | None, body: bytes
) -> None:
    assert served_type(declared, body[:SNIFF_BYTES]) is None


def test_the_bytes_decide_the_type_served() -> None:
    assert served_type("image/jpeg", samples.PNG[:SNIFF_BYTES]) == "image/png"
    assert served_type("image/jpg", samples.JPEG[:SNIFF_BYTES]) == "image/jpeg"
    assert served_type("IMAGE/PNG", samples.PNG[:SNIFF_BYTES]) == "image/png"
