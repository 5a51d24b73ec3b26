"""The closed rich-text tree: node types, caps, validation and JSON.

Every third-party post or article is stored as one `Document`. The node set
is closed: decoding rejects unknown node types and unknown fields, so a tree
read back from the database can only contain what the renderer knows how to
write safely.
"""

from __future__ import annotations

from typing import Annotated, Union

import msgspec

from app.safe_content.errors import ContentTooLarge, InvalidContent
from app.safe_content.labels import LabelKey

VERSION = 1
MAX_DEPTH = 32  # nodes on the path from the document to any leaf, document included
MAX_NODES = 20_000  # nodes in one document, the document included
MAX_TEXT = 1_000_000  # characters of text, alt text, labels and code together
MAX_URL_LENGTH = 4096  # characters; longer links degrade to text in builders
MAX_JSON_BYTES = 16_000_000  # stored JSON over this is refused before decoding

Url = Annotated[str, msgspec.Meta(max_length=MAX_URL_LENGTH)]


class _Node(msgspec.Struct, frozen=True, forbid_unknown_fields=True, tag_field="type", gc=False):
    """Base of every node: immutable, tagged by `type`, no unknown fields."""


# Inline nodes -------------------------------------------------------------


class Text(_Node, tag="text", frozen=True):
    text: str


class LineBreak(_Node, tag="line_break", frozen=True):
    pass


class Code(_Node, tag="code", frozen=True):
    """Inline code; its text is shown as is."""

    text: str


class Image(_Node, tag="image", frozen=True):
    """An image; `src` is the original remote http(s) URL, never a proxy URL."""

    src: Url
    alt: str = ""


class Strong(_Node, tag="strong", frozen=True):
    children: tuple[Inline, ...]


class Em(_Node, tag="em", frozen=True):
    children: tuple[Inline, ...]


class Link(_Node, tag="link", frozen=True):
    """A link; the renderer re-checks `href` and degrades to text if unsafe."""

    href: Url
    children: tuple[Inline, ...]


class Mention(_Node, tag="mention", frozen=True):
    """A person: `label` is the visible handle text, e.g. "@alice"."""

    label: str
    href: Url | None = None


class Hashtag(_Node, tag="hashtag", frozen=True):
    """A tag; `tag` is without the leading "#" (the renderer adds it)."""

    tag: str
    href: Url | None = None


class Label(_Node, tag="label", frozen=True):
    """One of our own words (safe_content.labels), said in the reader's language when shown."""

    key: LabelKey


Inline = Union[Text, LineBreak, Code, Image, Strong, Em, Link, Mention, Hashtag, Label]  # noqa: UP007

# Block nodes --------------------------------------------------------------


class Paragraph(_Node, tag="paragraph", frozen=True):
    children: tuple[Inline, ...]


class Heading(_Node, tag="heading", frozen=True):
    level: Annotated[int, msgspec.Meta(ge=2, le=4)]
    children: tuple[Inline, ...]


class CodeBlock(_Node, tag="code_block", frozen=True):
    """Preformatted code; whitespace and newlines are kept."""

    text: str


class Quote(_Node, tag="quote", frozen=True):
    children: tuple[Block, ...]


class ListItem(_Node, tag="list_item", frozen=True):
    children: tuple[Block, ...]


class List(_Node, tag="list", frozen=True):
    items: tuple[ListItem, ...]
    ordered: bool = False


class ContentWarning(_Node, tag="content_warning", frozen=True):
    """Blocks behind a warning (Mastodon's `spoiler_text`): shown collapsed, the summary
    visible; the renderer writes a native <details> (no script)."""

    summary: str
    children: tuple[Block, ...]


Block = Union[Paragraph, Heading, CodeBlock, Quote, List, ContentWarning]  # noqa: UP007


class Document(_Node, tag="document", frozen=True):
    """The root. `version` lets a later release migrate stored trees."""

    children: tuple[Block, ...] = ()
    version: int = VERSION


_INTERACTIVE = frozenset({Link, Mention, Hashtag})

# Measuring and checking ---------------------------------------------------


# Which field holds a node's children and which its own text, by node type.
_CHILDREN_FIELD: dict[type, str] = {
    Strong: "children",
    Em: "children",
    Link: "children",
    Paragraph: "children",
    Heading: "children",
    Quote: "children",
    ContentWarning: "children",
    ListItem: "children",
    Document: "children",
    List: "items",
}
_TEXT_FIELD: dict[type, str] = {
    Text: "text",
    Code: "text",
    CodeBlock: "text",
    Image: "alt",
    Mention: "label",
    Hashtag: "tag",
    ContentWarning: "summary",
}


def children_of(node: object) -> tuple[object, ...]:
    """The child nodes of any node (list items for a list), else ()."""
    name = _CHILDREN_FIELD.get(type(node))
    children = getattr(node, name, ()) if name else ()
    return children if isinstance(children, tuple) else ()


def image_sources(node: object) -> frozenset[str]:
    """The `src` of every image in a tree."""
    if isinstance(node, Image):
        return frozenset((node.src,))
    return frozenset().union(*map(image_sources, children_of(node)))


def text_size(node: object) -> int:
    """Characters a node carries itself (not counting its children)."""
    name = _TEXT_FIELD.get(type(node))
    value = getattr(node, name, None) if name else None
    return len(value) if isinstance(value, str) else 0  # wrong types are caught by validate


def check_caps(doc: Document) -> None:
    """Raise ContentTooLarge/InvalidContent if `doc` breaks a cap or a nesting rule.

    Iterative, and it stops at the first violation, so a hostile tree that is
    a million levels deep costs no more than MAX_DEPTH steps down one path.
    """
    if doc.version != VERSION:
        raise InvalidContent(
            f"Rich text version {doc.version!r} is not supported; this build reads version "
            f"{VERSION}."
        )
    # Walks sibling groups (a node's children tuple) rather than single nodes:
    # a group is counted before it is read, so a huge one stops at once.
    nodes = 0
    chars = 0
    stack: list[tuple[tuple[object, ...], int, bool]] = [((doc,), 1, False)]
    pop, push = stack.pop, stack.append
    text_field, children_field = _TEXT_FIELD.get, _CHILDREN_FIELD.get
    while stack:
        group, depth, in_link = pop()
        nodes += len(group)
        if nodes > MAX_NODES:
            raise ContentTooLarge(f"Rich text has more than {MAX_NODES:,} nodes.")
        if depth > MAX_DEPTH:
            raise ContentTooLarge(f"Rich text is nested more than {MAX_DEPTH} levels deep.")
        for node in group:
            kind = type(node)
            name = text_field(kind)
            if name is not None:
                value = getattr(node, name, None)
                if isinstance(value, str):  # wrong types are caught by validate
                    chars += len(value)
            if in_link and kind in _INTERACTIVE:
                raise InvalidContent("A link inside a link is not allowed in rich text.")
            name = children_field(kind)
            if name is not None:
                children = getattr(node, name, ())
                if children and isinstance(children, tuple):
                    push((children, depth + 1, in_link or kind is Link))
        if chars > MAX_TEXT:
            raise ContentTooLarge(f"Rich text holds more than {MAX_TEXT:,} characters.")


def within_caps(doc: Document) -> bool:
    try:
        check_caps(doc)
    except InvalidContent:
        return False
    return True


def validate(doc: Document) -> Document:
    """Check a tree built in Python: node types, fields, caps. Returns `doc`."""
    if not isinstance(doc, Document):
        raise InvalidContent(f"Expected a rich-text Document, got {type(doc).__name__}.")
    check_caps(doc)  # first: it bounds the depth the type check below recurses into
    try:
        msgspec.convert(msgspec.to_builtins(doc), Document)
    except (msgspec.ValidationError, TypeError) as exc:
        raise InvalidContent(f"Rich text is not valid: {exc}") from None
    return doc


# JSON ---------------------------------------------------------------------

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Document)


def to_json(doc: Document) -> bytes:
    return _encoder.encode(doc)


def from_json(data: bytes | str) -> Document:
    """Decode stored rich text; raises InvalidContent/ContentTooLarge, never repairs."""
    if len(data) > MAX_JSON_BYTES:
        raise ContentTooLarge(f"Stored rich text is larger than {MAX_JSON_BYTES:,} bytes.")
    try:
        doc = _decoder.decode(data)
    except RecursionError:
        raise ContentTooLarge(
            f"Stored rich text is nested more than {MAX_DEPTH} levels deep."
        ) from None
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        raise InvalidContent(f"Stored rich text is not valid: {exc}") from None
    check_caps(doc)
    return doc


def from_builtins(data: object) -> Document:
    """Like from_json, for an already parsed JSON value (e.g. a JSONB column as dict)."""
    try:
        doc = msgspec.convert(data, Document)
    except RecursionError:
        raise ContentTooLarge(
            f"Stored rich text is nested more than {MAX_DEPTH} levels deep."
        ) from None
    except msgspec.ValidationError as exc:
        raise InvalidContent(f"Stored rich text is not valid: {exc}") from None
    check_caps(doc)
    return doc
