"""Build a Document from third-party HTML (Mastodon statuses, feeds, articles).

Pipeline: cap the input size; defuse pathological markup (guard.py); clean
with a prebuilt nh3 allowlist (html5ever parses hostile markup exactly as a
browser would and drops everything we do not read); then build the closed
AST in one pass over nh3's output. That output is html5ever's serialisation
of a tree holding only our allowlist, so one regular expression reads it
(`_TAG`); no second HTML parser re-reads it. The classes nh3 lets through
(Mastodon's mention/hashtag/invisible/ellipsis) are read here and never
reach the output.
"""

from __future__ import annotations

import re
from collections.abc import Callable
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
# in which "<" is always escaped as "&lt;". `_TAG.split` cuts the markup into
# text, then (slash, name, attributes, text) per tag. Text and attribute values
# are entity-decoded once, as any HTML parser would. A "<" that starts no such
# tag (it never happens) stays in the text: the builder only ever gains words.
_TAG = re.compile(r'<(/?)([a-z][a-z0-9]*)((?: [a-z][a-z0-9-]*="[^"]*")*+)>')
# A <span> with these attributes does nothing (Mastodon's h-card loses its class in nh3).
_INERT_SPAN = frozenset({"", ' class=""'})
# Mastodon wraps handles and tags in inert spans ("@<span>alice</span>") and hides
# parts of long links in invisible ones. Holding text only, such a span is read
# exactly as its text (an inert one) or as nothing (an invisible one), so `feed`
# rewrites them first: a third of a status's tokens. "\r" stays out: inside <pre>
# a "\r" and a "\n" in two text runs are two lines, in one run a single CRLF.
_INVISIBLE_SPAN = re.compile(r'<span class="invisible">[^<]*</span>')
_INERT_TEXT_SPAN = re.compile(r'<span(?: class="")?>([^<\r]*)</span>')
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
    return {
        name: unescape(value) if "&" in value else value
        for name, value in _ATTRIBUTE.findall(markup)
    }


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


# What an end tag undoes: a function of the builder, or None for nothing.
_Closer = Callable[["_Builder"], None] | None


class _Builder:
    """Turns nh3's well-formed output into blocks. One instance per document.

    `start`, `end` and `data` are the three token callbacks `feed` calls;
    tests drive the same callbacks from the stdlib HTMLParser to show that
    `_TAG` reads nh3's output exactly as a general HTML parser does.
    A start tag is dispatched by name (`_OPENERS`) and leaves on a stack
    what its end tag must undo (a `_Closer`), so an end tag is a pop and a call.
    """

    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.containers = [_Container("document")]
        # Open inline elements, the paragraph itself ("root") first: the kind of each
        # and the children it collects; `children` is the innermost one's (text goes there).
        self.kinds = ["root"]  # "root" | "strong" | "em" | "link"
        self.frames: list[list[str | Inline]] = [[]]
        self.children = self.frames[0]
        self.link_open = False  # a link frame is open: no link may start inside it ...
        self.link_href: str | None = None  # ... so one link's href and classes suffice
        self.link_classes: tuple[str, ...] = ()
        self.open_tags: list[str] = []  # every open element, innermost last ...
        self.open_closers: list[_Closer] = []  # ... and what its end tag must undo
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
        text = data if data.isprintable() and "  " not in data else collapse_spaces(data)
        if not text:
            return
        if text[0] == " " and self.has_content and not self.line_start and not self.last_space:
            self.pending_space = True
        core = text.strip(" ")
        if not core:
            return
        children = self.children
        if self.pending_space:
            core = " " + core
        if children and type(children[-1]) is str:
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
            _append_str(self.children, " ")

    def _emit_nodes(self, nodes: list[Inline]) -> None:
        if not nodes:
            return
        self._emit_space()
        self.children.extend(nodes)
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
            if not frames[0]:
                self._reset_line()
                return  # nothing to end: the usual case at a block's start
            carried = merge_text(frames[0])
            frames[0] = self.children = []
        else:
            carried = []
            kinds = self.kinds
            for index in range(len(frames) - 1, -1, -1):
                collected = frames[index]
                collected.extend(carried)
                frames[index] = []
                carried = self._close(kinds[index], collected)
            self.children = frames[-1]
        if carried:
            children = trim_breaks(carried)
            last = children[-1] if children else None
            if type(last) is Text and last.text.endswith(" "):
                children = (*children[:-1], Text(last.text.rstrip(" ")))
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
        tags, closers = self.open_tags, self.open_closers
        while tags:
            tags.pop()
            closer = closers.pop()
            if closer is not None:
                closer(self)
        self.flush()
        while len(self.containers) > 1:
            self._close_container()
        return tuple(b for b in self.containers[0].blocks if not isinstance(b, ListItem))

    # -- tokens ----------------------------------------------------------------

    def feed(self, markup: str) -> None:
        """Read nh3's output tag by tag (see `_TAG`); the callbacks, inlined."""
        start, end, text_token, emit_text = self.start, self.end, self._text, self._emit_text
        tags, closers = self.open_tags, self.open_closers
        if "<span" in markup:
            # split keeps the captured text between the pieces: joined, the spans are gone
            markup = "".join(_INERT_TEXT_SPAN.split(_INVISIBLE_SPAN.sub("", markup)))
        parts = _TAG.split(markup)
        if parts[0]:
            text_token(unescape(parts[0]))
        for slash, tag, attributes, text in zip(
            parts[1::4], parts[2::4], parts[3::4], parts[4::4], strict=True
        ):
            if slash:
                if tags and tags[-1] == tag:  # always, in nh3's well-formed output
                    tags.pop()
                    closer = closers.pop()
                    if closer is not None:
                        closer(self)
                else:
                    end(tag)
            elif tag == "span" and attributes in _INERT_SPAN:
                tags.append(tag)  # `start`, shortened: such a span never acts
                closers.append(None)
            else:
                start(tag, _attributes(attributes) if attributes else _NO_ATTRIBUTES)
            if text and not self.hidden:
                if "&" in text:
                    text = unescape(text)
                if self.pre_depth or self.code_text is not None:
                    text_token(text)
                else:  # `_text`, inlined for prose
                    emit_text(text if text.isprintable() else clean_text(text))

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if tag in _VOID:
            self._void(tag, attrs)
            return
        closer: _Closer = None
        if tag == "span":
            closer = self._span(attrs)
        elif self.hidden or self.code_text is not None:
            pass
        elif self.pre_depth:
            if tag == "pre":
                self.pre_depth += 1
                closer = _Builder._end_pre
        else:
            opener = _OPENERS.get(tag)
            if opener is not None:
                closer = opener(self, tag, attrs)
        self.open_tags.append(tag)
        self.open_closers.append(closer)

    def end(self, tag: str) -> None:
        tags, closers = self.open_tags, self.open_closers
        if tag not in tags:
            return  # a stray end tag closes nothing
        while tags:
            name = tags.pop()
            closer = closers.pop()
            if closer is not None:
                closer(self)
            if name == tag:
                return

    def data(self, data: str) -> None:
        if not self.hidden:
            self._text(data)

    def _text(self, data: str) -> None:
        data = clean_text(data)
        if self.pre_depth:
            self.pre_text.append(data)
        elif self.code_text is not None:
            self.code_text.append(data)
        else:
            self._emit_text(data)

    # -- element actions: openers return what the end tag undoes -------------

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

    def _span(self, attrs: dict[str, str]) -> _Closer:
        """Mastodon's shortened links: hide "invisible" parts, mark the "ellipsis" one."""
        value = attrs.get("class")
        if not value:
            return None
        classes = value.split()
        if "invisible" in classes:
            self.hidden += 1
            return _Builder._end_hidden
        return _Builder._end_ellipsis if "ellipsis" in classes else None

    def _open_inline(self, tag: str, attrs: dict[str, str]) -> _Closer:
        if self._depth_left() < 1:
            return None
        self._emit_space()  # a space before the element belongs outside it
        self.kinds.append(_INLINE_KIND[tag])
        self.children = []
        self.frames.append(self.children)
        return _Builder._end_inline

    def _open_link(self, tag: str, attrs: dict[str, str]) -> _Closer:
        if self.link_open or self._depth_left() < 1:
            return None  # no links inside links
        classes = attrs.get("class")
        self.link_href = http_url(attrs.get("href") or "", self.base_url)
        self.link_classes = tuple(classes.split()) if classes else ()
        self.link_open = True
        self._emit_space()
        self.kinds.append("link")
        self.children = []
        self.frames.append(self.children)
        return _Builder._end_inline

    def _open_boundary(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.flush()
        return _Builder.flush

    def _open_code(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.code_text = []
        return _Builder._end_code

    def _open_pre(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.flush()
        self.pre_depth = 1
        self.pre_text = []
        return _Builder._end_pre

    def _open_heading(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.flush()
        self.heading = _HEADING_LEVEL[tag]
        return _Builder._end_heading

    def _open_list(self, tag: str, attrs: dict[str, str]) -> _Closer:
        opened = self._open_container(_CONTAINER_KIND[tag], ordered=tag == "ol")
        return _Builder._close_container if opened else _Builder.flush

    def _open_row(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.flush()
        self.cells = 0
        return _Builder.flush

    def _open_cell(self, tag: str, attrs: dict[str, str]) -> _Closer:
        self.cells += 1
        if self.cells > 1 and self.has_content:
            self._emit_text(_CELL_SEPARATOR)
        return None

    def _end_inline(self) -> None:
        frames = self.frames
        if len(frames) > 1:
            # A trailing space inside the element stays pending and lands after it.
            children = frames.pop()
            kind = self.kinds.pop()
            if kind == "link":
                self.link_open = False
            self.children = frames[-1]
            if children:
                self.children.extend(self._close(kind, children))

    def _close(self, kind: str, children: list[str | Inline]) -> list[Inline]:
        """The nodes of a finished inline element (its children, for the root)."""
        if len(children) == 1 and type(children[0]) is str:
            nodes: list[Inline] = [Text(children[0])]  # the usual case: one run of words
        else:
            nodes = merge_text(children)
        if kind == "root" or not nodes:
            return nodes
        if kind == "strong":
            return [Strong(tuple(nodes))]
        if kind == "em":
            return [Em(tuple(nodes))]
        return self._close_link(nodes)

    def _close_link(self, nodes: list[Inline]) -> list[Inline]:
        """A finished <a>: a mention, a hashtag, a link, or just its content."""
        classes, href = self.link_classes, self.link_href
        if classes:
            text = _plain(nodes).strip()
            if "hashtag" in classes and text.startswith("#") and len(text) > 1:
                return [Hashtag(tag=text[1:], href=href)]
            if "mention" in classes and text.startswith("@") and len(text) > 1:
                return [Mention(label=text, href=href)]
        for node in nodes:
            if type(node) in _HAS_LINKS:  # never, as built; kept so a link never nests
                nodes = merge_text(_unlink(nodes))
                break
        if href is None:
            return nodes  # not a safe http(s) link: its words stay, inert
        return [Link(href=href, children=tuple(nodes))]

    def _end_hidden(self) -> None:
        self.hidden -= 1

    def _end_ellipsis(self) -> None:
        if not self.hidden:
            self._emit_text("…")

    def _end_heading(self) -> None:
        self.flush()
        self.heading = None

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


_INLINE_KIND = {"b": "strong", "strong": "strong", "i": "em", "em": "em"}
_CONTAINER_KIND = {"ul": "list", "ol": "list", "li": "item", "blockquote": "quote"}
# What a start tag does, by name (a tag not listed only opens and closes).
_OPENERS: dict[str, Callable[[_Builder, str, dict[str, str]], _Closer]] = {
    "pre": _Builder._open_pre,
    **dict.fromkeys(_HEADING_LEVEL, _Builder._open_heading),
    **dict.fromkeys(_CONTAINER_KIND, _Builder._open_list),
    "tr": _Builder._open_row,
    "td": _Builder._open_cell,
    "th": _Builder._open_cell,
    **dict.fromkeys(_BOUNDARY, _Builder._open_boundary),
    **dict.fromkeys(_INLINE_KIND, _Builder._open_inline),
    "a": _Builder._open_link,
    "code": _Builder._open_code,
}
