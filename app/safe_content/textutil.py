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


def clean_text(text: str) -> str:
    """Drop characters that have no business in displayed text; CRLF becomes LF."""
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
    out: list[Inline] = []
    for node in nodes:
        if isinstance(node, str):
            node = Text(node)
        if isinstance(node, Text) and out and isinstance(out[-1], Text):
            out[-1] = Text(out[-1].text + node.text)
        elif not isinstance(node, Text) or node.text:
            out.append(node)
    return out


def trim_breaks(nodes: Sequence[Inline]) -> tuple[Inline, ...]:
    """Drop line breaks and blank text at both ends: they only add empty lines."""
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
