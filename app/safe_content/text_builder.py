"""Build a Document from plain text (a field that is text, not HTML)."""

from __future__ import annotations

import re

from app.safe_content.ast import Block, Document, Inline, Link, Text
from app.safe_content.fit import fit
from app.safe_content.textutil import clean_text, lines_to_inlines, paragraph
from app.safe_content.urls import http_url

MAX_TEXT_INPUT = 2_000_000  # characters; more is cut before building

_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")
# Candidates only: http_url makes the decision. Quotes and angle brackets end
# a URL in prose ("<https://…>", "'https://…'").
_URL = re.compile(r"https?://[^\s<>\"'`]+", re.I)
_TRAILING = ".,;:!?*_~"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def trim_url(candidate: str) -> str:
    """Drop trailing punctuation that belongs to the sentence, keeping balanced brackets."""
    while candidate:
        last = candidate[-1]
        unbalanced = last in _CLOSERS and candidate.count(_CLOSERS[last]) < candidate.count(last)
        if last not in _TRAILING and not unbalanced:
            break
        candidate = candidate[:-1]
    return candidate


def _linkify(line: str) -> list[Inline]:
    out: list[Inline] = []
    pos = 0
    for match in _URL.finditer(line):
        candidate = trim_url(match.group())
        href = http_url(candidate)
        if href is None:
            continue
        start, end = match.start(), match.start() + len(candidate)
        if start > pos:
            out.append(Text(line[pos:start]))
        out.append(Link(href=href, children=(Text(candidate),)))
        pos = end
    if pos < len(line):
        out.append(Text(line[pos:]))
    return out


def _paragraph_inlines(text: str, autolink: bool) -> list[Inline]:
    if not autolink:
        return lines_to_inlines(text)
    out: list[Inline] = []
    for node in lines_to_inlines(text):
        out.extend(_linkify(node.text) if isinstance(node, Text) else [node])
    return out


def from_text(text: str, *, autolink: bool = True) -> Document:
    """Paragraphs on blank lines, line breaks on single newlines, http(s) URLs linked."""
    text = clean_text(text[:MAX_TEXT_INPUT]).strip()
    blocks: list[Block] = []
    for chunk in _BLANK_LINE.split(text):
        block = paragraph(_paragraph_inlines(chunk, autolink))
        if block is not None:
            blocks.append(block)
    return fit(Document(children=tuple(blocks)))
