"""Build a Document from Bluesky text and its richtext facets.

Facets address the text by UTF-8 byte offsets. Anything wrong with a facet
(bad types, out of range, splitting a character, overlapping an earlier
facet, unknown or invalid feature) makes that span plain text; this module
never raises on facet data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import quote

from app.safe_content.ast import Document, Hashtag, Inline, Link, Mention
from app.safe_content.fit import fit
from app.safe_content.textutil import clean_text, lines_to_inlines, paragraph
from app.safe_content.urls import http_url

_LINK = "app.bsky.richtext.facet#link"
_MENTION = "app.bsky.richtext.facet#mention"
_TAG = "app.bsky.richtext.facet#tag"
_DID = re.compile(r"did:[a-z]+:[A-Za-z0-9._:%-]{1,2000}")
_TAG_MAX_BYTES = 640  # the lexicon's limit
_PROFILE = "https://bsky.app/profile/"
_HASHTAG = "https://bsky.app/hashtag/"
MAX_FACETS = 1000


class _Span(NamedTuple):
    start: int  # byte offset, inclusive
    end: int  # byte offset, exclusive
    kind: str  # "link" | "mention" | "tag"
    value: str  # the URL for a link, else the profile or hashtag page URL
    tag: str = ""


def _offset(value: object) -> int | None:
    return value if type(value) is int else None  # bool is an int subclass: refuse it


def _on_boundary(data: bytes, offset: int) -> bool:
    """True if `offset` does not fall inside a multi-byte UTF-8 character."""
    return offset == len(data) or (data[offset] & 0xC0) != 0x80


def _feature(feature: object) -> tuple[str, str, str] | None:
    if not isinstance(feature, Mapping):
        return None
    kind = feature.get("$type")
    if kind == _LINK and isinstance(feature.get("uri"), str):
        url = http_url(feature["uri"])
        return ("link", url, "") if url else None
    if kind == _MENTION and isinstance(feature.get("did"), str):
        did = feature["did"]
        return ("mention", _PROFILE + did, "") if _DID.fullmatch(did) else None
    if kind == _TAG and isinstance(feature.get("tag"), str):
        tag = feature["tag"].strip().lstrip("#＃")
        if not tag or len(tag.encode()) > _TAG_MAX_BYTES or any(c.isspace() for c in tag):
            return None
        return ("tag", _HASHTAG + quote(tag, safe=""), tag)
    return None


def _span(facet: object, data: bytes) -> _Span | None:
    if not isinstance(facet, Mapping):
        return None
    index = facet.get("index")
    features = facet.get("features")
    if not isinstance(index, Mapping) or not isinstance(features, list):
        return None
    start, end = _offset(index.get("byteStart")), _offset(index.get("byteEnd"))
    if start is None or end is None or not 0 <= start < end <= len(data):
        return None
    if not (_on_boundary(data, start) and _on_boundary(data, end)):
        return None
    for feature in features:
        found = _feature(feature)
        if found is not None:
            return _Span(start, end, *found)
    return None


def _spans(facets: object, data: bytes) -> list[_Span]:
    """Valid spans in text order; a span overlapping an earlier one is dropped."""
    if not isinstance(facets, list | tuple):
        return []
    candidates = [s for f in facets[:MAX_FACETS] if (s := _span(f, data)) is not None]
    kept: list[_Span] = []
    for span in sorted(candidates, key=lambda s: (s.start, s.end)):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


def _node(span: _Span, text: str) -> list[Inline]:
    label = clean_text(text)
    if span.kind == "mention":
        return [Mention(label=label, href=span.value)]
    if span.kind == "tag" and label[:1] in ("#", "＃") and len(label) > 1:
        return [Hashtag(tag=label[1:], href=span.value)]
    # A link, or a tag facet over text without "#": link the text as written.
    return [Link(href=span.value, children=tuple(lines_to_inlines(label)))]


def from_facets(text: str, facets: list[dict[str, Any]] | None) -> Document:
    """One paragraph of `text`, with facet spans as links, mentions and hashtags."""
    if not isinstance(text, str):
        return Document()
    # Lone surrogates cannot be encoded; U+FFFD has the same UTF-8 length (3).
    data = re.sub(r"[\ud800-\udfff]", "\ufffd", text).encode()
    inlines: list[Inline] = []
    pos = 0
    for span in _spans(facets, data):
        if span.start > pos:
            inlines.extend(lines_to_inlines(clean_text(data[pos : span.start].decode())))
        inlines.extend(_node(span, data[span.start : span.end].decode()))
        pos = span.end
    inlines.extend(lines_to_inlines(clean_text(data[pos:].decode())))
    block = paragraph(inlines)
    return fit(Document(children=(block,) if block else ()))
