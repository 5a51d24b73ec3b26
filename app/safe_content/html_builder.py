"""Build a Document from third-party HTML (Mastodon statuses, feeds, articles).

Pipeline: cap the input size; defuse pathological markup (guard.py); clean
with a prebuilt nh3 allowlist (html5ever parses hostile markup exactly as a
browser would and drops everything we do not read); then walk nh3's
well-formed output with the stdlib HTMLParser into the closed AST. The
classes nh3 lets through (Mastodon's mention/hashtag/invisible/ellipsis) are
read here and never reach the output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

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
from app.safe_content.textutil import clean_text, merge_text, trim_breaks
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

_WHITESPACE = re.compile(r"[ \t\n\r\f]+")
_HEADING_LEVEL = {"h1": 2, "h2": 2, "h3": 3, "h4": 4, "h5": 4, "h6": 4}
# Tags that end the current paragraph where they start and where they end.
_BOUNDARY = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "aside", "nav",
        "figure", "figcaption", "table", "thead", "tbody", "tfoot", "caption", "dl",
        "dt", "dd", "address", "details", "summary",
    }
)  # fmt: skip
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
    builder.close()
    return fit(Document(children=builder.finish()))


@dataclass
class _Frame:
    """An open inline element collecting its children."""

    kind: str  # "root" | "strong" | "em" | "link" | "code"
    children: list[str | Inline] = field(default_factory=list)
    href: str | None = None
    classes: frozenset[str] = frozenset()


@dataclass
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
    text = _plain(nodes).strip()
    if "hashtag" in frame.classes and text.startswith("#") and len(text) > 1:
        return [Hashtag(tag=text[1:], href=frame.href)]
    if "mention" in frame.classes and text.startswith("@") and len(text) > 1:
        return [Mention(label=text, href=frame.href)]
    nodes = merge_text(_unlink(nodes))
    if frame.href is None:
        return nodes  # not a safe http(s) link: its words stay, inert
    return [Link(href=frame.href, children=tuple(nodes))]


def _close_frame(frame: _Frame) -> list[Inline]:
    nodes = merge_text(frame.children)
    frame.children = []
    if not nodes:
        return []
    if frame.kind == "strong":
        return [Strong(tuple(nodes))]
    if frame.kind == "em":
        return [Em(tuple(nodes))]
    if frame.kind == "link":
        return _close_link(frame, nodes)
    return nodes


class _Builder(HTMLParser):
    """Turns nh3's well-formed output into blocks. One instance per document."""

    def __init__(self, base_url: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.containers = [_Container("document")]
        self.frames = [_Frame("root")]
        self.open: list[tuple[str, str]] = []  # (tag, action) for every open element
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
        text = _WHITESPACE.sub(" ", data)
        if not text:
            return
        if text[0] == " " and self.has_content and not self.line_start and not self.last_space:
            self.pending_space = True
        core = text.strip(" ")
        if not core:
            return
        self._emit_space()
        _append_str(self.frames[-1].children, core)
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
        carried: list[Inline] = []
        for frame in reversed(self.frames):
            frame.children.extend(carried)
            carried = _close_frame(frame)
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
        while self.open:
            self._end_action(*self.open.pop())
        self.flush()
        while len(self.containers) > 1:
            self._close_container()
        return tuple(b for b in self.containers[0].blocks if not isinstance(b, ListItem))

    # -- HTMLParser callbacks ----------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "img", "hr"):
            self._void(tag, dict(attrs))
            return
        self.open.append((tag, self._start_action(tag, dict(attrs))))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # "<br/>": html5ever never writes it, but be lenient

    def handle_endtag(self, tag: str) -> None:
        if not any(name == tag for name, _ in self.open):
            return
        while self.open:
            name, action = self.open.pop()
            self._end_action(name, action)
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
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

    def _void(self, tag: str, attrs: dict[str, str | None]) -> None:
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

    def _image(self, attrs: dict[str, str | None]) -> list[Inline]:
        alt = _WHITESPACE.sub(" ", clean_text(attrs.get("alt") or "")).strip()
        src = http_url(attrs.get("src") or "", self.base_url)
        if src is not None:
            return [Image(src=src, alt=alt)]
        return [Text(alt)] if alt else []

    def _start_action(self, tag: str, attrs: dict[str, str | None]) -> str:
        classes = frozenset((attrs.get("class") or "").split())
        if tag == "span":
            if "invisible" in classes:
                self.hidden += 1
                return "hidden"
            return "ellipsis" if "ellipsis" in classes else "none"
        if self.hidden or self.code_text is not None:
            return "none"
        if self.pre_depth:
            if tag == "pre":
                self.pre_depth += 1
                return "pre"
            return "none"
        if tag == "pre":
            self.flush()
            self.pre_depth = 1
            self.pre_text = []
            return "pre"
        if tag in _HEADING_LEVEL:
            self.flush()
            self.heading = _HEADING_LEVEL[tag]
            return "heading"
        if tag in ("ul", "ol"):
            return "container" if self._open_container("list", ordered=tag == "ol") else "block"
        if tag == "li":
            return "container" if self._open_container("item") else "block"
        if tag == "blockquote":
            return "container" if self._open_container("quote") else "block"
        if tag == "tr":
            self.flush()
            self.cells = 0
            return "block"
        if tag in ("td", "th"):
            self.cells += 1
            if self.cells > 1 and self.has_content:
                self._emit_text(_CELL_SEPARATOR)
            return "none"
        if tag in _BOUNDARY:
            self.flush()
            return "block"
        return self._start_inline(tag, attrs, classes)

    def _start_inline(self, tag: str, attrs: dict[str, str | None], classes: frozenset[str]) -> str:
        kind = {"b": "strong", "strong": "strong", "i": "em", "em": "em", "a": "link"}.get(tag)
        if tag == "code":
            self.code_text = []
            return "code"
        if kind is None or self._depth_left() < 1:
            return "none"
        if kind == "link":
            if any(frame.kind == "link" for frame in self.frames):
                return "none"
            href = http_url(attrs.get("href") or "", self.base_url)
            self._emit_space()  # a space before the link belongs outside it
            self.frames.append(_Frame("link", href=href, classes=classes))
        else:
            self._emit_space()
            self.frames.append(_Frame(kind))
        return "inline"

    def _end_action(self, tag: str, action: str) -> None:
        if action == "hidden":
            self.hidden -= 1
        elif action == "ellipsis" and not self.hidden:
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
        elif action == "block":
            self.flush()
        elif action == "inline" and len(self.frames) > 1:
            # A trailing space inside the element stays pending and lands after it.
            nodes = _close_frame(self.frames.pop())
            self.frames[-1].children.extend(nodes)

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
        text = _WHITESPACE.sub(" ", raw)
        if not text.strip():
            self._emit_text(text)
            return
        if text[0] == " ":
            self._emit_text(" ")
        self._emit_nodes([Code(text.strip(" "))])
        self.pending_space = text[-1] == " "
