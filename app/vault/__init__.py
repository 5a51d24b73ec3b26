"""The vault: sealing secrets (connection tokens, workspace API keys) at rest.

`seal(secret, context=...)` returns bytes to store; `unseal(sealed, context=...)`
gives the secret back to the code that must send it (a provider call), never
to a page or an API answer - those only ever learn `configured: true/false`.

AES-256-GCM with a key derived from SECRET_KEY by HKDF under its own label,
so the vault key is never a session, CSRF or media key. `context` (e.g.
"ws:3:connection:17") is bound in as associated data: a sealed value copied
into another row, or another workspace, does not open. The stored form is
`b"v1" + nonce(12) + ciphertext+tag`, so the scheme can change later.
"""

from __future__ import annotations

import os
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app.core import config

VERSION = b"v1"
NONCE_BYTES = 12
KEY_LABEL = b"newsdesk vault v1"
MAX_SECRET_BYTES = 16_384  # an OAuth token or an API key is far smaller


class VaultError(ValueError):
    """A sealed value did not open: another key, another context, or damaged."""


@lru_cache(maxsize=4)
def _key(secret_key: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_LABEL).derive(
        secret_key.encode()
    )


def _active_key() -> bytes:
    return _key(config.active().secret_key.get_secret_value())


def seal(secret: str, *, context: str) -> bytes:
    data = secret.encode()
    if len(data) > MAX_SECRET_BYTES:
        raise VaultError(f"a secret is at most {MAX_SECRET_BYTES} bytes")
    nonce = os.urandom(NONCE_BYTES)
    return VERSION + nonce + AESGCM(_active_key()).encrypt(nonce, data, context.encode())


def unseal(sealed: bytes, *, context: str) -> str:
    if not sealed.startswith(VERSION) or len(sealed) < len(VERSION) + NONCE_BYTES + 16:
        raise VaultError("not a sealed value")
    nonce = sealed[len(VERSION) : len(VERSION) + NONCE_BYTES]
    try:
        data = AESGCM(_active_key()).decrypt(
            nonce, sealed[len(VERSION) + NONCE_BYTES :], context.encode()
        )
    except InvalidTag:
        raise VaultError("the sealed value does not open with this key and context") from None
    return data.decode()


__all__ = ["VaultError", "seal", "unseal"]
