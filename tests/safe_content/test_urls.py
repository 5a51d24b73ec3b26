"""The http/https decision."""

from __future__ import annotations

import pytest

from app.safe_content.urls import http_url, is_http_url

BASE = "https://news.example/dir/page.html"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://example.com/a?b=1&c=2#f", "https://example.com/a?b=1&c=2#f"),
        ("http://example.com", "http://example.com"),
        ("HTTPS://Example.com/Path", "https://Example.com/Path"),
        ("  https://example.com/x  ", "https://example.com/x"),
        ("https://exa\tmple.com/x\n", "https://example.com/x"),
        ("https://example.com/a b", "https://example.com/a%20b"),
        ('https://example.com/"><script>', "https://example.com/%22%3E%3Cscript%3E"),
        ("https:\\\\example.com\\x", "https://example.com/x"),
        # A browser reads "\\" as "/", so "@good.example" is path, not credentials.
        ("https://evil.example\\@good.example/", "https://evil.example/@good.example/"),
        ("https://例え.jp/パス", "https://例え.jp/パス"),
        ("https://[2001:db8::1]:8443/x", "https://[2001:db8::1]:8443/x"),
    ],
)
def test_http_urls_are_kept_in_browser_form(raw: str, expected: str) -> None:
    assert http_url(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        " \x01javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "java\x00script:alert(1)",
        "&#106;avascript:alert(1)",
        "&#x6A;avascript:alert(1)",
        "&#106avascript:alert(1)",
        "javascript&colon;alert(1)",
        "java&Tab;script:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "java\u200bscript:alert(1)",
        "\ufeffjavascript:alert(1)",
        "ｊａｖａｓｃｒｉｐｔ:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "mailto:a@example.com",
        "ftp://example.com/",
        "https://",
        "https:example.com",
        "https://user:pw@example.com/",
        "https://good.example@evil.example/",
        "https://ex.example:99999/",
        "http://[::1",
        "",
        "https://x.example/" + "a" * 5000,
    ],
)
def test_everything_else_is_refused(raw: str) -> None:
    assert http_url(raw) is None
    assert http_url(raw, BASE) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/a/b", "https://news.example/a/b"),
        ("c.html", "https://news.example/dir/c.html"),
        ("../up", "https://news.example/up"),
        ("?q=1", "https://news.example/dir/page.html?q=1"),
        ("//cdn.example/i.png", "https://cdn.example/i.png"),
    ],
)
def test_relative_urls_resolve_only_against_a_base(raw: str, expected: str) -> None:
    assert http_url(raw, BASE) == expected
    assert http_url(raw) is None


def test_an_unsafe_base_resolves_nothing() -> None:
    assert http_url("/a", "javascript:alert(1)//") is None
    assert http_url("/a", "/relative-base") is None


def test_is_http_url() -> None:
    assert is_http_url("https://example.com/x")
    assert not is_http_url("https://example.com/a b")
    assert not is_http_url("javascript:alert(1)")
