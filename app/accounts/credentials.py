"""Password hashing (argon2-cffi) and opaque tokens stored only as hashes."""

from __future__ import annotations

import hashlib
import secrets
from functools import cache

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

from app.core.config import active

MIN_PASSWORD_LENGTH = 10


@cache
def _hasher(kind: str) -> PasswordHasher:
    if kind == "fast":  # argon2's cheapest parameters: for test suites only
        return PasswordHasher.from_parameters(profiles.CHEAPEST)
    return PasswordHasher()  # argon2id with the library's recommended parameters


def hasher() -> PasswordHasher:
    return _hasher(active().password_hashing)


@cache
def _dummy_hash(kind: str) -> str:
    """Verifying against this keeps a sign-in for an unknown email as slow as a known one."""
    return _hasher(kind).hash("not a real password")


def hash_password(password: str) -> str:
    return hasher().hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        matched = hasher().verify(password_hash or _dummy_hash(active().password_hashing), password)
    except (VerificationError, InvalidHashError):
        return False
    return matched and password_hash is not None


def needs_rehash(password_hash: str) -> bool:
    return hasher().check_needs_rehash(password_hash)


def new_token(prefix: str = "") -> str:
    """A random token for cookies, links and API keys (256 bits)."""
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
