"""Make a freshly built tree fit the caps by truncating it.

Builders call `fit` last: big input is cut, never refused. Builders already
bound nesting depth while they build, so this pass only counts nodes and
characters; over-deep subtrees it still meets are flattened to their text.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.safe_content.ast import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT,
    Block,
    Code,
    CodeBlock,
    ContentWarning,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    Inline,
    Label,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    within_caps,
)
from app.safe_content.labels import label_text

ELLIPSIS = "…"


@dataclass
class _Budget:
    nodes: int
    chars: int


def fit(doc: Document) -> Document:
    """`doc` unchanged when within the caps, else a truncated copy ending in "…"."""
    if within_caps(doc):
        return doc
    budget = _Budget(nodes=MAX_NODES - 3, chars=MAX_TEXT - len(ELLIPSIS))  # room for "…"
    blocks = _blocks(doc.children, budget, depth=2)
    return Document(children=(*blocks, Paragraph((Text(ELLIPSIS),))))


def with_content_warning(summary: str, doc: Document) -> Document:
    """`doc` behind a content warning (collapsed when rendered), fitted to the caps; `doc`
    itself when the summary is blank."""
    summary = " ".join(summary.split())
    if not summary:
        return doc
    return fit(Document(children=(ContentWarning(summary, doc.children),)))


def _take_text(text: str, budget: _Budget) -> str:
    kept = text[: max(budget.chars, 0)]
    budget.chars -= len(kept)
    return kept


def _blocks(blocks: tuple[Block, ...], budget: _Budget, depth: int) -> tuple[Block, ...]:
    out: list[Block] = []
    for block in blocks:
        fitted = _block(block, budget, depth)
        if fitted is not None:
            out.append(fitted)
        if budget.nodes <= 0 or budget.chars <= 0:
            break
    return tuple(out)


def _block(block: Block, budget: _Budget, depth: int) -> Block | None:
    if budget.nodes <= 0 or budget.chars <= 0 or depth >= MAX_DEPTH:
        return None  # a block at the last level could hold nothing
    budget.nodes -= 1
    if isinstance(block, CodeBlock):
        text = _take_text(block.text, budget)
        return CodeBlock(text) if text else None
    if isinstance(block, Paragraph | Heading):
        children = _inlines(block.children, budget, depth + 1)
        if not children:
            return None
        if isinstance(block, Heading):
            return Heading(block.level, children)
        return Paragraph(children)
    if isinstance(block, Quote):
        inner = _blocks(block.children, budget, depth + 1)
        return Quote(inner) if inner else None
    if isinstance(block, ContentWarning):
        summary = _take_text(block.summary, budget)
        return ContentWarning(summary, _blocks(block.children, budget, depth + 1))
    if isinstance(block, List):
        items = []
        for item in block.items:
            if budget.nodes <= 1:
                break
            budget.nodes -= 1
            item_blocks = _blocks(item.children, budget, depth + 2)
            if item_blocks:
                items.append(ListItem(item_blocks))
        return List(tuple(items), block.ordered) if items else None
    return None


def _inlines(nodes: tuple[Inline, ...], budget: _Budget, depth: int) -> tuple[Inline, ...]:
    out: list[Inline] = []
    for node in nodes:
        if budget.nodes <= 0 or budget.chars <= 0:
            break
        fitted = _inline(node, budget, depth)
        if fitted is not None:
            out.append(fitted)
    return tuple(out)


def _flat_text(node: Inline) -> str:
    if isinstance(node, Text | Code):
        return node.text
    if isinstance(node, Image):
        return node.alt
    if isinstance(node, Mention):
        return node.label
    if isinstance(node, Hashtag):
        return "#" + node.tag
    if isinstance(node, Label):
        return label_text(node.key)
    if isinstance(node, Strong | Em | Link):
        return "".join(_flat_text(child) for child in node.children)
    return ""


def _inline(node: Inline, budget: _Budget, depth: int) -> Inline | None:
    budget.nodes -= 1
    if isinstance(node, Strong | Em | Link):
        if depth + 1 > MAX_DEPTH:  # its children would be too deep: keep the words
            text = _take_text(_flat_text(node), budget)
            return Text(text) if text else None
        children = _inlines(node.children, budget, depth + 1)
        if not children:
            return None
        if isinstance(node, Link):
            return Link(node.href, children)
        return type(node)(children)
    if isinstance(node, Text | Code):
        text = _take_text(node.text, budget)
        return type(node)(text) if text else None
    if isinstance(node, Image):
        return Image(node.src, _take_text(node.alt, budget))
    if isinstance(node, Mention):
        return Mention(_take_text(node.label, budget), node.href)
    if isinstance(node, Hashtag):
        return Hashtag(_take_text(node.tag, budget), node.href)
    return node  # LineBreak, Label
