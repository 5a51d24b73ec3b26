"""Small text helpers shared by the builders."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from app.safe_content.ast import Inline, LineBreak, Paragraph, Text

# C0/C1 controls (tab and newline kept), lone surrogates, and the bidi
# embedding/override/isolate controls that let a stranger's name reverse
# the text that follows it on our page.
_UNWANTED = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"
)


# HTML's whitespace, which a browser collapses to one space outside <pre>.
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def collapse_spaces(text: str) -> str:
    """Runs of HTML whitespace as one space (no-break spaces are kept)."""
    if "  " not in text and text.isprintable():
        return text  # the usual case, checked fast: no run, and tabs and newlines are unprintable
    return _HTML_SPACE.sub(" ", text)


def one_line(text: str) -> str:
    """What a person typed into a one-line box: unprintable characters (NUL, controls) out,
    runs of whitespace as one space, none around it."""
    return " ".join("".join(c for c in text if c.isprintable() or c.isspace()).split())


def clean_text(text: str) -> str:
    """Drop characters that have no business in displayed text; CRLF becomes LF."""
    if text.isprintable():
        return text  # the usual case, checked fast: every unwanted character is unprintable
    return _UNWANTED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def lines_to_inlines(text: str) -> list[Inline]:
    """Text with "\\n" newlines as Text nodes separated by LineBreak nodes."""
    out: list[Inline] = []
    for index, line in enumerate(text.split("\n")):
        if index:
            out.append(LineBreak())
        if line:
            out.append(Text(line))
    return out


def merge_text(nodes: Sequence[str | Inline]) -> list[Inline]:
    """Inline nodes with strings as Text and neighbouring Text nodes joined."""
    if len(nodes) == 1 and type(nodes[0]) is str:  # the usual case: one run of words
        return [Text(nodes[0])] if nodes[0] else []
    out: list[Inline] = []
    for item in nodes:
        node = Text(item) if isinstance(item, str) else item
        if type(node) is Text:
            if not node.text:
                continue
            if out and type(out[-1]) is Text:
                out[-1] = Text(out[-1].text + node.text)
                continue
        out.append(node)
    return out


def trim_breaks(nodes: Sequence[Inline]) -> tuple[Inline, ...]:
    """Drop line breaks and blank text at both ends: they only add empty lines."""
    first, last = nodes[0] if nodes else None, nodes[-1] if nodes else None
    if (
        type(first) is Text
        and type(last) is Text
        and first.text[:1].strip()
        and last.text[-1:].strip()
    ):
        return tuple(nodes)  # the usual case, checked fast: words at both ends
    start, end = 0, len(nodes)
    while start < end and _blank(nodes[start]):
        start += 1
    while end > start and _blank(nodes[end - 1]):
        end -= 1
    return tuple(nodes[start:end])


def _blank(node: Inline) -> bool:
    return isinstance(node, LineBreak) or (isinstance(node, Text) and not node.text.strip())


def paragraph(nodes: Iterable[Inline]) -> Paragraph | None:
    """A paragraph of `nodes`, or None when nothing visible is left."""
    children = trim_breaks(list(nodes))
    return Paragraph(children) if children else None
