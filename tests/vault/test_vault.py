"""The vault seals secrets so they open only with this server's key, in their own row."""

import pytest

from app.core import config
from app.vault import VaultError, seal, unseal
from tests.fixtures import make_test_settings


def test_a_sealed_secret_opens_in_its_context_and_hides_the_plaintext(settings):
    sealed = seal("mastodon-token-123", context="ws:1:connection:2")
    assert b"mastodon-token-123" not in sealed
    assert unseal(sealed, context="ws:1:connection:2") == "mastodon-token-123"
    assert seal("same", context="c") != seal("same", context="c")  # fresh nonce each time


def test_a_sealed_secret_does_not_open_in_another_row_or_workspace(settings):
    sealed = seal("key", context="ws:1:credential:youtube")
    with pytest.raises(VaultError):
        unseal(sealed, context="ws:2:credential:youtube")


def test_a_sealed_secret_does_not_open_under_another_secret_key(settings):
    sealed = seal("key", context="c")
    try:
        config.activate(make_test_settings(secret_key="another-secret-key-that-is-long-enough-42"))
        with pytest.raises(VaultError):
            unseal(sealed, context="c")
    finally:
        config.activate(settings)


def test_damaged_values_are_refused(settings):
    sealed = bytearray(seal("key", context="c"))
    sealed[-1] ^= 1
    with pytest.raises(VaultError):
        unseal(bytes(sealed), context="c")
    with pytest.raises(VaultError):
        unseal(b"plain", context="c")
