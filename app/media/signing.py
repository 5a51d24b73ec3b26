"""Proxy URLs: `/media/<signature>/<payload>`, signed so only we can mint them.

`payload` is the remote URL, UTF-8, base64url without padding; `signature`
is HMAC-SHA256 over the payload text, base64url without padding, under a key
derived from SECRET_KEY with its own label, so a media signature is never
valid as a session or CSRF token and the other way round. A URL is signable
only if app.safe_content's one rule (`http_url`) accepts it, and its
canonical form is what is signed; `verify` applies the rule again.

The first part is pure; `signer` and `media_url` bind it to settings for
templates and the safe_content renderer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Callable
from functools import lru_cache

from app.core import config
from app.core.config import Settings
from app.safe_content import MediaUrl, http_url

PREFIX = "/media/"
KEY_LABEL = b"newsdesk media v1"  # change the version to invalidate every media link
SIGNATURE_CHARS = 43  # 32 bytes of HMAC-SHA256 in base64url without padding
MAX_PAYLOAD_CHARS = 6000  # a 4096-character URL is about 5,500; refuse more before hashing


def derive_key(secret: str) -> bytes:
    """The media key: HMAC(secret, label), distinct from every other use of the secret."""
    return hmac.new(secret.encode(), KEY_LABEL, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _signature(payload: str, key: bytes) -> bytes:
    digest = hmac.new(key, payload.encode("ascii"), hashlib.sha256).digest()
    return _b64(digest).encode("ascii")


def sign(url: str, key: bytes) -> str | None:
    """The proxy path for `url`, or None if it is not an http(s) URL with a host."""
    canonical = http_url(url) if isinstance(url, str) else None
    if canonical is None:
        return None
    payload = _b64(canonical.encode())
    return f"{PREFIX}{_signature(payload, key).decode()}/{payload}"


def verify(signature: str, payload: str, key: bytes) -> str | None:
    """The remote URL of a proxy path's two parts, or None unless we signed it."""
    if len(signature) != SIGNATURE_CHARS or len(payload) > MAX_PAYLOAD_CHARS:
        return None
    if not payload.isascii():  # our payloads are base64url; anything else is not ours
        return None
    if not hmac.compare_digest(signature.encode(), _signature(payload, key)):
        return None
    try:
        url = base64.b64decode(payload + "=" * (-len(payload) % 4), b"-_", validate=True)
        text = url.decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    # Signed by us, so this holds; checked again so a leaked key alone cannot reach file:.
    return text if http_url(text) == text else None


# Bound to settings ---------------------------------------------------------------


@lru_cache(maxsize=4)
def _key_for(secret: str) -> bytes:
    return derive_key(secret)


def key_of(settings: Settings) -> bytes:
    return _key_for(settings.secret_key.get_secret_value())


def signer(settings: Settings) -> MediaUrl:
    """`sign` under `settings`' key: what safe_content's renderer takes as `media_url`."""
    key = key_of(settings)
    return lambda url: sign(url, key)


def media_url(url: str) -> str | None:
    """The proxy path for `url` under the process's settings, or None."""
    return sign(url, key_of(config.active()))


def template_filter(settings: Settings) -> Callable[[object], str]:
    """The Jinja filter `media_url`: a remote URL's proxy path, or "" when there is none."""
    sign_with = signer(settings)

    def media_url_filter(value: object) -> str:
        return (sign_with(value) if isinstance(value, str) else None) or ""

    return media_url_filter
