"""Templates show remote images only as proxy URLs that verify back to the original."""

from __future__ import annotations

import re

import pytest

from app.media.signing import key_of, verify
from app.safe_content import Document, Image, Paragraph, Text
from app.web.templating import environment


def _proxy_target(path: str, settings) -> str | None:  # type: ignore[no-untyped-def]
    _, media, signature, payload = path.split("/")
    assert media == "media"
    return verify(signature, payload, key_of(settings))


async def test_an_image_in_a_document_renders_through_the_proxy(web_app, settings):
    original = "https://cdn.example.org/photos/cat.jpg?size=large"
    doc = Document(
        children=(Paragraph(children=(Text("look: "), Image(src=original, alt="a cat"))),)
    )
    html = environment().from_string("{{ doc|rich }}").render(doc=doc)
    [src] = re.findall(r'<img src="([^"]+)"', html)
    assert src.startswith("/media/")
    assert "cdn.example.org" not in html
    assert _proxy_target(src.replace("&amp;", "&"), settings) == original


async def test_an_unsafe_image_renders_as_its_words(web_app):
    doc = Document(children=(Paragraph(children=(Image(src="javascript:alert(1)", alt="x"),)),))
    html = environment().from_string("{{ doc|rich }}").render(doc=doc)
    assert "<img" not in html
    assert "javascript" not in html


@pytest.mark.parametrize(
    ("value", "proxied"),
    [
        ("https://news.example.org/lead.webp", True),
        ("javascript:alert(1)", False),
        ("data:image/png;base64,AAAA", False),
        ("", False),
        (None, False),
    ],
)
async def test_the_media_url_filter(web_app, settings, value, proxied):
    out = environment().from_string("{{ value|media_url }}").render(value=value)
    if proxied:
        assert _proxy_target(out, settings) == value
    else:
        assert out == ""
