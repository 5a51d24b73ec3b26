"""Compatibility: fixtures moved to tests/fixtures.py (loaded by the root conftest)."""

from tests.fixtures import make_test_settings

__all__ = ["make_test_settings"]
