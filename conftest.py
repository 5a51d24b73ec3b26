"""Shared fixtures for both suites (tests/ and e2e/) live in tests/fixtures.py."""

pytest_plugins = ["tests.fixtures"]


def pytest_sessionstart(session: object) -> None:
    # The suites read the compiled catalogues; set-up compiles them too, this keeps a
    # checkout whose .po changed since set-up honest (atomic, safe under xdist).
    from app.core.i18n import compile_catalogs

    compile_catalogs()
