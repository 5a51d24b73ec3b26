"""Jinja filters: the only way templates show third-party content.

{{ item.body | rich }}          a Document, or its stored JSON (str/bytes/dict)
{{ item.title | rich_inline }}  the same, inline (<span data-ignore>)
{{ item.author | third_party }} a plain third-party string
"""

from __future__ import annotations

import logging

import jinja2
from markupsafe import Markup

from app.safe_content.ast import Document, from_builtins, from_json
from app.safe_content.errors import InvalidContent
from app.safe_content.render import MediaUrl, render_html, render_inline, render_text
from app.safe_content.text_builder import from_text

log = logging.getLogger(__name__)

UNREADABLE = "[This content could not be displayed.]"


def coerce_document(value: object) -> Document | None:
    """A Document from a Document, JSON text/bytes or a parsed JSON dict; None if invalid."""
    if value is None:
        return Document()
    try:
        if isinstance(value, Document):
            return value
        if isinstance(value, str | bytes | bytearray | memoryview):
            return from_json(bytes(value) if not isinstance(value, str) else value)
        return from_builtins(value)
    except InvalidContent as exc:
        # One bad stored item must not take down a whole page of items.
        log.warning("unrenderable rich text: %s", exc)
        return None


def register_filters(env: jinja2.Environment, media_url: MediaUrl | None = None) -> None:
    """Add `rich`, `rich_inline` and `third_party` to `env`."""

    def rich(value: object) -> Markup:
        doc = coerce_document(value)
        return render_html(doc or from_text(UNREADABLE, autolink=False), media_url=media_url)

    def rich_inline(value: object) -> Markup:
        doc = coerce_document(value)
        return render_inline(doc, media_url=media_url) if doc else render_text(UNREADABLE)

    def third_party(value: object) -> Markup:
        return render_text("" if value is None else str(value))

    env.filters["rich"] = rich
    env.filters["rich_inline"] = rich_inline
    env.filters["third_party"] = third_party
