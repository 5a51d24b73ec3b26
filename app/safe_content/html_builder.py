"""Build a Document from third-party HTML (Mastodon statuses, feeds, articles).

Pipeline: cap the input size; defuse pathological markup (guard.py); clean
with a prebuilt nh3 allowlist (html5ever parses hostile markup exactly as a
browser would and drops everything we do not read); then build the closed
AST in one pass over nh3's output. That output is html5ever's serialisation
of a tree holding only our allowlist, so one regular expression reads it
(`_TOKEN`); no second HTML parser re-reads it. The classes nh3 lets through
(Mastodon's mention/hashtag/invisible/ellipsis) are read here and never
reach the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html import unescape

import nh3

from app.safe_content.ast import (
    MAX_DEPTH,
    Block,
    Code,
    CodeBlock,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    Inline,
    LineBreak,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
)
from app.safe_content.fit import fit
from app.safe_content.guard import KEEP_TAGS, defuse, needs_guard
from app.safe_content.textutil import clean_text, collapse_spaces, merge_text, trim_breaks
from app.safe_content.urls import http_url

MAX_HTML_CHARS = 4_000_000  # input beyond this is cut before parsing

_CLEANER = nh3.Cleaner(
    tags=set(KEEP_TAGS),
    # Content of these is not prose (scripts, styles, widgets, vector art).
    clean_content_tags={
        "script", "style", "template", "noscript", "iframe", "object", "embed",
        "textarea", "title", "svg", "math", "select", "head", "noembed",
        "noframes", "xmp", "plaintext", "audio", "video", "canvas", "applet", "button",
    },
    attributes={"a": {"href"}, "img": {"src", "alt"}},
    # Read by this builder only; the renderer never writes a class from content.
    allowed_classes={"a": {"mention", "hashtag", "u-url"}, "span": {"invisible", "ellipsis"}},
    url_schemes={"http", "https"},
    url_relative="pass_through",  # resolved against base_url below, per document
    link_rel=None,
    strip_comments=True,
)  # fmt: skip

# html5ever's serialiser (nh3's output) writes three kinds of token: a start
# tag with a lowercase name and double-quoted attributes, an end tag, and text
# in which "<" is always escaped as "&lt;". Text and attribute values are
# entity-decoded once, as any HTML parser would. A "<" that starts none of
# these (it never happens) is read as text: the builder only ever gains words.
_TOKEN = re.compile(r'<(/?)([a-z][a-z0-9]*)((?: [a-z][a-z0-9-]*="[^"]*")*)>|([^<]+|<)')
_ATTRIBUTE = re.compile(r' ([a-z][a-z0-9-]*)="([^"]*)"')
_NO_ATTRIBUTES: dict[str, str] = {}
_HEADING_LEVEL = {"h1": 2, "h2": 2, "h3": 3, "h4": 4, "h5": 4, "h6": 4}
# Tags that end the current paragraph where they start and where they end.
_BOUNDARY = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "nav",
        "figure", "figcaption", "table", "thead", "tbody", "tfoot", "caption", "dl",
        "dt", "dd", "address", "details", "summary",
    }
)  # fmt: skip
# What a start tag does to the tree, by tag name (a tag not listed does nothing).
_ROLE = {
    "pre": "pre",
    **dict.fromkeys(_HEADING_LEVEL, "heading"),
    "ul": "list",
    "ol": "list",
    "li": "item",
    "blockquote": "quote",
    "tr": "row",
    "td": "cell",
    "th": "cell",
    **dict.fromkeys(_BOUNDARY, "boundary"),
    "b": "strong",
    "strong": "strong",
    "i": "em",
    "em": "em",
    "a": "link",
    "code": "code",
}
_VOID = frozenset({"br", "img", "hr"})
# Tree levels charged per open container: a list needs two (list, item), and
# charging every container the same keeps the depth bound simple and safe.
_CONTAINER_LEVELS = 2
_CELL_SEPARATOR = " | "


def from_html(html: str, base_url: str | None = None) -> Document:
    """Parse third-party HTML into a Document; never raises on hostile or big input."""
    html = html[:MAX_HTML_CHARS]
    if needs_guard(html):
        html = defuse(html)
    builder = _Builder(http_url(base_url) if base_url else None)
    builder.feed(_CLEANER.clean(html))
    return fit(Document(children=builder.finish()))


def _attributes(markup: str) -> dict[str, str]:
    return {name: unescape(value) for name, value in _ATTRIBUTE.findall(markup)}


@dataclass(slots=True)
class _Frame:
    """An open inline element collecting its children."""

    kind: str  # "root" | "strong" | "em" | "link" | "code"
    children: list[str | Inline] = field(default_factory=list)
    href: str | None = None
    classes: tuple[str, ...] = ()


@dataclass(slots=True)
class _Container:
    """An open block container collecting its blocks."""

    kind: str  # "document" | "quote" | "list" | "item"
    blocks: list[Block | ListItem] = field(default_factory=list)
    ordered: bool = False


def _append_str(children: list[str | Inline], text: str) -> None:
    """Append text, merging with a text run before it."""
    if children and isinstance(children[-1], str):
        children[-1] += text
    else:
        children.append(text)


def _plain(nodes: list[Inline]) -> str:
    parts: list[str] = []
    for node in nodes:
        if isinstance(node, Text | Code):
            parts.append(node.text)
        elif isinstance(node, Strong | Em | Link):
            parts.append(_plain(list(node.children)))
    return "".join(parts)


# Nodes that are, or may hold, a link: what `_unlink` has to look into.
_HAS_LINKS = frozenset({Link, Mention, Hashtag, Strong, Em})


def _unlink(nodes: list[Inline]) -> list[Inline]:
    """Inline nodes with links replaced by their content (no links inside links)."""
    out: list[Inline] = []
    for node in nodes:
        if isinstance(node, Link):
            out.extend(_unlink(list(node.children)))
        elif isinstance(node, Mention):
            out.append(Text(node.label))
        elif isinstance(node, Hashtag):
            out.append(Text("#" + node.tag))
        elif isinstance(node, Strong | Em):
            out.append(type(node)(tuple(_unlink(list(node.children)))))
        else:
            out.append(node)
    return out


def _close_link(frame: _Frame, nodes: list[Inline]) -> list[Inline]:
    """A finished <a>: a mention, a hashtag, a link, or just its content."""
    if frame.classes:
        text = _plain(nodes).strip()
        if "hashtag" in frame.classes and text.startswith("#") and len(text) > 1:
            return [Hashtag(tag=text[1:], href=frame.href)]
        if "mention" in frame.classes and text.startswith("@") and len(text) > 1:
            return [Mention(label=text, href=frame.href)]
    for node in nodes:
        if type(node) in _HAS_LINKS:  # never, as built; kept so a link never nests
            nodes = merge_text(_unlink(nodes))
            break
    if frame.href is None:
        return nodes  # not a safe http(s) link: its words stay, inert
    return [Link(href=frame.href, children=tuple(nodes))]


def _close_frame(frame: _Frame) -> list[Inline]:
    """The nodes of a finished inline element (its children, for the root)."""
    children = frame.children
    if not children:
        return []
    frame.children = []
    nodes = merge_text(children)
    kind = frame.kind
    if kind == "root" or not nodes:
        return nodes
    if kind == "strong":
        return [Strong(tuple(nodes))]
    if kind == "em":
        return [Em(tuple(nodes))]
    return _close_link(frame, nodes)


class _Builder:
    """Turns nh3's well-formed output into blocks. One instance per document.

    `start`, `end` and `data` are the three token callbacks `feed` calls;
    tests drive the same callbacks from the stdlib HTMLParser to show that
    `_TOKEN` reads nh3's output exactly as a general HTML parser does.
    """

    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.containers = [_Container("document")]
        self.frames = [_Frame("root", [])]
        self.link_open = False  # a link frame is open: no link may start inside it
        self.open_tags: list[str] = []  # every open element, innermost last ...
        self.open_actions: list[str] = []  # ... and what its end tag must undo
        self.heading: int | None = None
        self.pre_depth = 0
        self.pre_text: list[str] = []
        self.code_text: list[str] | None = None  # set while inside inline <code>
        self.hidden = 0  # inside Mastodon's <span class="invisible">
        self.cells = 0  # cells seen in the current table row
        self._reset_line()

    # -- paragraph state: whitespace collapsing as a browser does ----------

    def _reset_line(self) -> None:
        self.has_content = False
        self.line_start = True  # at the paragraph start or right after a line break
        self.pending_space = False  # a collapsed space waiting for the next content
        self.last_space = False  # the last thing written was a space

    def _emit_text(self, data: str) -> None:
        text = collapse_spaces(data)
        if not text:
            return
        if text[0] == " " and self.has_content and not self.line_start and not self.last_space:
            self.pending_space = True
        core = text.strip(" ")
        if not core:
            return
        children = self.frames[-1].children
        if self.pending_space:
            core = " " + core
        if children and isinstance(children[-1], str):
            children[-1] += core
        else:
            children.append(core)
        self.has_content = True
        self.line_start = False
        self.last_space = False
        self.pending_space = text[-1] == " "

    def _emit_space(self) -> None:
        if self.pending_space:
            self.pending_space = False
            self.last_space = True
            _append_str(self.frames[-1].children, " ")

    def _emit_nodes(self, nodes: list[Inline]) -> None:
        if not nodes:
            return
        self._emit_space()
        self.frames[-1].children.extend(nodes)
        self.has_content = True
        self.last_space = False
        self.line_start = isinstance(nodes[-1], LineBreak)

    # -- depth -------------------------------------------------------------

    def _depth_left(self) -> int:
        """Levels still free: document, containers, paragraph, frames and a leaf."""
        used = 1 + _CONTAINER_LEVELS * (len(self.containers) - 1) + 1 + len(self.frames)
        return MAX_DEPTH - used

    # -- blocks ------------------------------------------------------------

    def _append_block(self, block: Block | ListItem) -> None:
        container = self.containers[-1]
        if container.kind == "list" and not isinstance(block, ListItem):
            block = ListItem((block,))  # text straight inside <ul>
        elif container.kind != "list" and isinstance(block, ListItem):
            block = List((block,))  # <li> outside a list
        container.blocks.append(block)

    def flush(self) -> None:
        """End the current paragraph; open inline elements continue in the next one."""
        frames = self.frames
        if len(frames) == 1:
            if not frames[0].children:
                self._reset_line()
                return  # nothing to end: the usual case at a block's start
            carried = _close_frame(frames[0])
        else:
            carried = []
            for frame in reversed(frames):
                frame.children.extend(carried)
                carried = _close_frame(frame)
        if carried:
            children = trim_breaks(carried)
            if children and isinstance(children[-1], Text) and children[-1].text.endswith(" "):
                children = (*children[:-1], Text(children[-1].text.rstrip(" ")))
            if children:
                if self.heading is not None:
                    self._append_block(Heading(self.heading, children))
                else:
                    self._append_block(Paragraph(children))
        self._reset_line()

    def _open_container(self, kind: str, ordered: bool = False) -> bool:
        self.flush()
        if self._depth_left() < _CONTAINER_LEVELS:
            return False  # too deep: the content stays, the structure goes
        self.containers.append(_Container(kind, ordered=ordered))
        return True

    def _close_container(self) -> None:
        self.flush()
        container = self.containers.pop()
        blocks = container.blocks
        if not blocks:
            return
        if container.kind == "quote":
            self._append_block(Quote(tuple(b for b in blocks if not isinstance(b, ListItem))))
        elif container.kind == "item":
            self._append_block(ListItem(tuple(b for b in blocks if not isinstance(b, ListItem))))
        elif container.kind == "list":
            items = tuple(b for b in blocks if isinstance(b, ListItem))
            self._append_block(List(items, container.ordered))

    def finish(self) -> tuple[Block, ...]:
        while self.open_tags:
            self.open_tags.pop()
            self._end_action(self.open_actions.pop())
        self.flush()
        while len(self.containers) > 1:
            self._close_container()
        return tuple(b for b in self.containers[0].blocks if not isinstance(b, ListItem))

    # -- tokens ----------------------------------------------------------------

    def feed(self, markup: str) -> None:
        """Read nh3's output token by token (see `_TOKEN`)."""
        start, end, data = self.start, self.end, self.data
        tags, actions, end_action = self.open_tags, self.open_actions, self._end_action
        for slash, tag, attributes, text in _TOKEN.findall(markup):
            if text:
                data(unescape(text) if "&" in text else text)
            elif not slash:
                start(tag, _attributes(attributes) if attributes else _NO_ATTRIBUTES)
            elif tags and tags[-1] == tag:  # `end`, inlined for the usual case
                tags.pop()
                action = actions.pop()
                if action != "none":
                    end_action(action)
            else:
                end(tag)

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag in _VOID:
            self._void(tag, attrs)
            return
        if tag == "span":
            action = self._span(attrs)
        elif self.hidden or self.code_text is not None:
            action = "none"
        elif self.pre_depth:
            action = "none"
            if tag == "pre":
                self.pre_depth += 1
                action = "pre"
        else:
            role = _ROLE.get(tag)
            action = "none" if role is None else self._start_role(role, tag, attrs)
        self.open_tags.append(tag)
        self.open_actions.append(action)

    def end(self, tag: str) -> None:
        tags, actions = self.open_tags, self.open_actions
        if tags and tags[-1] == tag:  # always, in nh3's well-formed output
            tags.pop()
            action = actions.pop()
            if action != "none":
                self._end_action(action)
            return
        if tag not in tags:
            return  # a stray end tag closes nothing
        while tags:
            name = tags.pop()
            self._end_action(actions.pop())
            if name == tag:
                return

    def data(self, data: str) -> None:
        if self.hidden:
            return
        data = clean_text(data)
        if self.pre_depth:
            self.pre_text.append(data)
        elif self.code_text is not None:
            self.code_text.append(data)
        else:
            self._emit_text(data)

    # -- element actions -----------------------------------------------------

    def _void(self, tag: str, attrs: dict[str, str]) -> None:
        if self.hidden:
            return
        if tag == "hr":
            self.flush()
        elif self.pre_depth:
            self.pre_text.append("\n" if tag == "br" else "")
        elif tag == "br":
            self.pending_space = False
            self._emit_nodes([LineBreak()])
        elif self.code_text is None:
            self._emit_nodes(self._image(attrs))

    def _image(self, attrs: dict[str, str]) -> list[Inline]:
        alt = collapse_spaces(clean_text(attrs.get("alt") or "")).strip()
        src = http_url(attrs.get("src") or "", self.base_url)
        if src is not None:
            return [Image(src=src, alt=alt)]
        return [Text(alt)] if alt else []

    def _span(self, attrs: dict[str, str]) -> str:
        """Mastodon's shortened links: hide "invisible" parts, mark the "ellipsis" one."""
        classes = attrs.get("class", "").split()
        if "invisible" in classes:
            self.hidden += 1
            return "hidden"
        return "ellipsis" if "ellipsis" in classes else "none"

    def _start_role(self, role: str, tag: str, attrs: dict[str, str]) -> str:
        """Open an element the builder reads; returns the action for its end tag."""
        if role in ("strong", "em", "link"):
            if self._depth_left() < 1:
                return "none"
            if role == "link":
                if self.link_open:
                    return "none"  # no links inside links
                href = http_url(attrs.get("href") or "", self.base_url)
                frame = _Frame("link", [], href, tuple(attrs.get("class", "").split()))
                self.link_open = True
            else:
                frame = _Frame(role, [])
            self._emit_space()  # a space before the element belongs outside it
            self.frames.append(frame)
            return "inline"
        if role == "boundary":
            self.flush()
            return "block"
        if role == "code":
            self.code_text = []
            return "code"
        if role == "pre":
            self.flush()
            self.pre_depth = 1
            self.pre_text = []
            return "pre"
        if role == "heading":
            self.flush()
            self.heading = _HEADING_LEVEL[tag]
            return "heading"
        if role in ("list", "item", "quote"):
            ordered = tag == "ol"
            return "container" if self._open_container(role, ordered=ordered) else "block"
        if role == "row":
            self.flush()
            self.cells = 0
            return "block"
        # a table cell
        self.cells += 1
        if self.cells > 1 and self.has_content:
            self._emit_text(_CELL_SEPARATOR)
        return "none"

    def _end_action(self, action: str) -> None:
        if action == "inline":
            if len(self.frames) > 1:
                # A trailing space inside the element stays pending and lands after it.
                frame = self.frames.pop()
                if frame.kind == "link":
                    self.link_open = False
                self.frames[-1].children.extend(_close_frame(frame))
        elif action == "block":
            self.flush()
        elif action == "hidden":
            self.hidden -= 1
        elif action == "ellipsis":
            if not self.hidden:
                self._emit_text("…")
        elif action == "pre":
            self._end_pre()
        elif action == "code":
            self._end_code()
        elif action == "heading":
            self.flush()
            self.heading = None
        elif action == "container":
            self._close_container()

    def _end_pre(self) -> None:
        self.pre_depth -= 1
        if self.pre_depth:
            return
        text = "".join(self.pre_text)
        self.pre_text = []
        if text.startswith("\n"):  # as browsers do, the newline right after <pre> is not content
            text = text[1:]
        text = text.rstrip()
        if text.strip():
            self._append_block(CodeBlock(text))

    def _end_code(self) -> None:
        raw = "".join(self.code_text or [])
        self.code_text = None
        text = collapse_spaces(raw)
        if not text.strip():
            self._emit_text(text)
            return
        if text[0] == " ":
            self._emit_text(" ")
        self._emit_nodes([Code(text.strip(" "))])
        self.pending_space = text[-1] == " "
