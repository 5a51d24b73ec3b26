"""Proxy URLs: only we can make them, they name exactly one http(s) URL, and nothing else."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from app.media.signing import SIGNATURE_CHARS, derive_key, sign, verify

KEY = derive_key("test-secret-key-that-is-long-enough-0123456789")


def _parts(path: str) -> tuple[str, str]:
    prefix, media, signature, payload = path.split("/")
    assert (prefix, media) == ("", "media")
    return signature, payload


@pytest.mark.parametrize(
    "url",
    [
        "https://cdn.example.org/a.png",
        "http://example.org:8080/img?x=1&y=%20#frag",
        "https://example.org/bilder/größe.jpg",
        "https://[2001:db8::1]/v.mp4",
    ],
)
def test_a_signed_url_verifies_back_to_itself(url: str) -> None:
    path = sign(url, KEY)
    assert path is not None
    signature, payload = _parts(path)
    assert len(signature) == SIGNATURE_CHARS
    assert "=" not in payload
    assert verify(signature, payload, KEY) == url


def test_the_canonical_form_is_what_is_signed() -> None:
    path = sign("  HTTPS://cdn.example.org/a b.png\n", KEY)
    assert path is not None
    assert verify(*_parts(path), KEY) == "https://cdn.example.org/a%20b.png"


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "data:image/png;base64,AAAA",
        "file:///etc/passwd",
        "ftp://example.org/a.png",
        "/media/abc/def",
        "//cdn.example.org/a.png",
        "a.png",
        "https://",
        "https://user:pw@example.org/a.png",
        "",
    ],
)
def test_only_http_urls_with_a_host_are_signable(url: str) -> None:
    assert sign(url, KEY) is None


def test_a_non_string_is_not_signable() -> None:
    assert sign(None, KEY) is None  # type: ignore[arg-type]


def test_tampering_with_either_part_fails() -> None:
    signature, payload = _parts(sign("https://a.example/x.png", KEY) or "")
    _, other_payload = _parts(sign("https://b.example/x.png", KEY) or "")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    assert verify(flipped, payload, KEY) is None
    assert verify(signature, other_payload, KEY) is None
    assert verify(signature, payload + "A", KEY) is None
    assert verify(signature, payload + "=", KEY) is None
    assert verify(signature[:-1], payload, KEY) is None


def test_another_key_fails() -> None:
    path = sign("https://a.example/x.png", derive_key("another-secret-key-that-is-long-enough-0"))
    assert verify(*_parts(path or ""), KEY) is None


def test_the_key_is_separated_from_other_uses_of_the_secret() -> None:
    secret = "test-secret-key-that-is-long-enough-0123456789"
    assert secret.encode() != KEY
    assert hashlib.sha256(secret.encode()).digest() != KEY
    # A signature made with the bare secret (as CSRF tokens are) is not a media signature.
    payload = base64.urlsafe_b64encode(b"https://a.example/x.png").rstrip(b"=").decode()
    bare = hmac.new(secret.encode(), payload.encode(), hashlib.sha256).digest()
    bare_signature = base64.urlsafe_b64encode(bare).rstrip(b"=").decode()
    assert verify(bare_signature, payload, KEY) is None


@pytest.mark.parametrize(
    ("signature", "payload"),
    [
        ("", ""),
        ("x" * SIGNATURE_CHARS, "aHR0cHM6Ly9hLmV4YW1wbGUv"),
        ("é" * SIGNATURE_CHARS, "aHR0cHM6Ly9hLmV4YW1wbGUv"),
        ("x" * SIGNATURE_CHARS, "é"),
        ("x" * SIGNATURE_CHARS, "A" * 100_000),
    ],
)
def test_garbage_is_refused_without_errors(signature: str, payload: str) -> None:
    assert verify(signature, payload, KEY) is None


def _forge(url: bytes) -> tuple[str, str]:
    """A correctly signed payload for `url`, as someone holding the key could make."""
    payload = base64.urlsafe_b64encode(url).rstrip(b"=").decode()
    digest = hmac.new(KEY, payload.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode(), payload


@pytest.mark.parametrize("url", [b"file:///etc/passwd", b"javascript:alert(1)", b"\xff\xfe"])
def test_even_a_signed_non_http_url_is_refused(url: bytes) -> None:
    assert verify(*_forge(url), KEY) is None
