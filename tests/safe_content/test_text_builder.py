"""from_text: paragraphs, line breaks and autolinks."""

from __future__ import annotations

import pytest

from app.safe_content import Document, LineBreak, Link, Paragraph, Text, from_text
from app.safe_content.text_builder import trim_url


def test_paragraphs_split_on_blank_lines_and_newlines_become_breaks() -> None:
    doc = from_text("first line\nsecond line\n\n  \nnext paragraph\r\n\r\nlast")
    assert doc.children == (
        Paragraph((Text("first line"), LineBreak(), Text("second line"))),
        Paragraph((Text("next paragraph"),)),
        Paragraph((Text("last"),)),
    )


def test_markup_is_just_text() -> None:
    doc = from_text("<b>not bold</b> & <script>alert(1)</script>")
    assert doc.children == (Paragraph((Text("<b>not bold</b> & <script>alert(1)</script>"),)),)


def test_empty_and_blank_text() -> None:
    assert from_text("") == Document()
    assert from_text(" \n\n \t") == Document()


def _link(url: str) -> Link:
    return Link(href=url, children=(Text(url),))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://example.com.", (Text("see "), _link("https://example.com"), Text("."))),
        ("https://a.example/x, and", (_link("https://a.example/x"), Text(", and"))),
        (
            "(https://a.example/x)",
            (Text("("), _link("https://a.example/x"), Text(")")),
        ),
        (
            "wiki https://en.wikipedia.org/wiki/Python_(language) ok",
            (Text("wiki "), _link("https://en.wikipedia.org/wiki/Python_(language)"), Text(" ok")),
        ),
        (
            "(see https://en.wikipedia.org/wiki/X_(y))",
            (Text("(see "), _link("https://en.wikipedia.org/wiki/X_(y)"), Text(")")),
        ),
        (
            "<https://a.example/q?x=1&y=2>",
            (Text("<"), _link("https://a.example/q?x=1&y=2"), Text(">")),
        ),
        ('"https://a.example/"', (Text('"'), _link("https://a.example/"), Text('"'))),
        (
            "HTTP://A.EXAMPLE/X!",  # the text as typed, the href normalised
            (Link("http://A.EXAMPLE/X", (Text("HTTP://A.EXAMPLE/X"),)), Text("!")),
        ),
        (
            "two: https://a.example https://b.example",
            (Text("two: "), _link("https://a.example"), Text(" "), _link("https://b.example")),
        ),
    ],
)
def test_autolinks(text: str, expected: tuple[object, ...]) -> None:
    assert from_text(text).children == (Paragraph(expected),)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    [
        "javascript:alert(1)",
        "ftp://example.com/file",
        "www.example.com",
        "https://",
        "https://user:pass@example.com/",
        "data:text/html,hi",
        "mailto:a@example.com",
    ],
)
def test_non_http_or_broken_urls_stay_text(text: str) -> None:
    assert from_text(text).children == (Paragraph((Text(text),)),)


def test_autolink_can_be_switched_off() -> None:
    assert from_text("https://a.example", autolink=False).children == (
        Paragraph((Text("https://a.example"),)),
    )


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        ("https://a.example/x).", "https://a.example/x"),
        ("https://a.example/(x)", "https://a.example/(x)"),
        ("https://a.example/[x]]", "https://a.example/[x]"),
        ("https://a.example/x?!", "https://a.example/x"),
    ],
)
def test_trim_url(candidate: str, expected: str) -> None:
    assert trim_url(candidate) == expected
