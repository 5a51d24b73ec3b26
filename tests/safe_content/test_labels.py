"""Our own words in a stored tree (Label): kept as a key, said in each reader's language."""

from __future__ import annotations

import pytest

from app.core.i18n import speaking
from app.safe_content import (
    Document,
    Em,
    InvalidContent,
    Label,
    Link,
    Paragraph,
    Text,
    from_json,
    render_html,
    to_json,
    to_text,
)
from app.safe_content.labels import LABELS

REPLY = Document(
    children=(
        Paragraph(children=(Em(children=(Label("replying_to"), Text(" @alice"))),)),
        Paragraph(children=(Link("https://bsky.app/p/1", (Label("quoted_post"),)),)),
    )
)


def test_a_stored_label_is_said_in_the_readers_language():
    stored = to_json(REPLY)
    assert b"Replying to" not in stored  # a key, not the words of whoever stored it
    with speaking("de"):
        german = str(render_html(from_json(stored)))
    with speaking("en"):
        english = str(render_html(from_json(stored)))
    assert "<em>Antwort an @alice</em>" in german
    assert "zitierter Beitrag</a>" in german
    assert "<em>Replying to @alice</em>" in english


def test_every_label_has_german_words():
    with speaking("de"):
        untranslated = [key for key, words in LABELS.items() if render_of(key) == words]
    assert untranslated == []


def render_of(key: str) -> str:
    doc = Document(children=(Paragraph(children=(Label(key),)),))  # type: ignore[arg-type]
    html = str(render_html(doc))
    return html.split("<p>")[1].split("</p>")[0]


def test_a_label_this_build_does_not_know_is_refused_when_read():
    stored = to_json(REPLY).replace(b'"replying_to"', b'"<script>alert(1)</script>"')
    with pytest.raises(InvalidContent):
        from_json(stored)


def test_the_plain_text_of_a_label_is_its_words():
    with speaking("en"):
        assert to_text(REPLY) == "Replying to @alice\n\nquoted post"
