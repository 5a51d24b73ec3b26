"""Plain text from a Document, for search indexing, previews and analysis.

Images say nothing here, not even their alt text: it describes a picture,
not the story, and would run into excerpts and search hits (the reader still
shows the image with its alt).
"""

from __future__ import annotations

from app.safe_content.ast import (
    Block,
    Code,
    CodeBlock,
    ContentWarning,
    Document,
    Em,
    Hashtag,
    Heading,
    Inline,
    Label,
    LineBreak,
    Link,
    List,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
)
from app.safe_content.labels import label_text


def to_text(doc: Document) -> str:
    """Blocks separated by blank lines, list items and line breaks by newlines."""
    return _blocks_text(doc.children)


def _blocks_text(blocks: tuple[Block, ...]) -> str:
    return "\n\n".join(text for text in map(_block_text, blocks) if text)


def _block_text(block: Block) -> str:
    if isinstance(block, Paragraph | Heading):
        return inline_text(block.children).strip()
    if isinstance(block, CodeBlock):
        return block.text
    if isinstance(block, Quote):
        return _blocks_text(block.children)
    if isinstance(block, ContentWarning):  # searchable by its warning and its words
        return "\n\n".join(t for t in (block.summary.strip(), _blocks_text(block.children)) if t)
    if isinstance(block, List):
        items = (_blocks_text(item.children) for item in block.items)
        return "\n".join(text for text in items if text)
    return ""


def inline_text(nodes: tuple[Inline, ...]) -> str:
    """The text of inline nodes (images left out)."""
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text | Code):
            parts.append(node.text)
        elif isinstance(node, LineBreak):
            parts.append("\n")
        elif isinstance(node, Mention):
            parts.append(node.label)
        elif isinstance(node, Hashtag):
            parts.append("#" + node.tag)
        elif isinstance(node, Label):
            parts.append(label_text(node.key))
        elif isinstance(node, Strong | Em | Link):
            parts.append(inline_text(node.children))
    return "".join(parts)
