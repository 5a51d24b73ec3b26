"""The renderer: the only code that turns third-party content into HTML.

It writes only its own tags and attributes: every text and attribute value
is escaped, links are re-checked with urls.http_url (http/https only), and
images appear only as same-origin proxy URLs from `media_url`. The output is
wrapped in an element with Datastar's `data-ignore`, so even a leaked
attribute would never be evaluated by Datastar.
"""

from __future__ import annotations

from collections.abc import Callable

from markupsafe import Markup

from app.safe_content.ast import (
    MAX_DEPTH,
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
from app.safe_content.text_builder import from_text
from app.safe_content.urls import http_url

MediaUrl = Callable[[str], str | None]

WRAPPER_OPEN = '<div class="rich" data-ignore>'
INLINE_OPEN = "<span data-ignore>"
LINK_ATTRS = ' rel="nofollow noopener noreferrer ugc" referrerpolicy="no-referrer"'
IMAGE_ATTRS = ' loading="lazy" decoding="async" referrerpolicy="no-referrer"'


_HEADING_OPEN = {level: f"<h{level}>" for level in (2, 3, 4)}
_HEADING_CLOSE = {level: f"</h{level}>" for level in (2, 3, 4)}


def _e(text: str) -> str:
    """`text` escaped for HTML text and double- or single-quoted attributes.

    The same five replacements as markupsafe.escape ("&" first), as a plain str:
    making a Markup object per text node cost more than the escaping itself.
    """
    if type(text) is not str:
        text = str(text)  # an unvalidated tree: still only text
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("'", "&#39;")
        .replace('"', "&#34;")
    )


def _same_origin_path(url: str) -> bool:
    """A path on our own origin ("/media/…"), not "//host" or "/\\host"."""
    return (
        url.startswith("/")
        and url[1:2] not in ("/", "\\")
        and url.isprintable()
        and not any(c.isspace() for c in url)
    )


def proxied_src(src: str, media_url: MediaUrl | None) -> str | None:
    """The URL an <img> may load: the proxy's answer for a safe remote URL, else None."""
    remote = http_url(src)
    if remote is None or media_url is None:
        return None
    # Its answer as `object`: one that breaks the promise is refused below (compiled code
    # would otherwise raise on the declared `str | None`).
    answer: Callable[[str], object] = media_url
    proxied = answer(remote)
    if not isinstance(proxied, str):
        return None
    return proxied if _same_origin_path(proxied) or http_url(proxied) == proxied else None


class _Writer:
    def __init__(self, media_url: MediaUrl | None) -> None:
        self.media_url = media_url
        self.out: list[str] = []

    # Depth is re-checked here so that even an unvalidated tree cannot recurse without bound.

    def blocks(self, blocks: tuple[Block, ...], depth: int) -> None:
        if depth > MAX_DEPTH:
            return
        for block in blocks:
            self.block(block, depth)

    def block(self, block: Block, depth: int) -> None:
        out = self.out
        # Exact types (a stored tree decodes to exactly these); anything else writes nothing.
        if type(block) is Paragraph:
            out.append("<p>")
            self.inlines(block.children, depth + 1, False)
            out.append("</p>")
        elif type(block) is Heading:
            level = block.level if block.level in (2, 3, 4) else 4
            out.append(_HEADING_OPEN[level])
            self.inlines(block.children, depth + 1, False)
            out.append(_HEADING_CLOSE[level])
        elif type(block) is CodeBlock:
            out.append(f"<pre><code>{_e(block.text)}</code></pre>")
        elif type(block) is Quote:
            out.append("<blockquote>")
            self.blocks(block.children, depth + 1)
            out.append("</blockquote>")
        elif type(block) is ContentWarning:
            # Collapsed until the reader opens it: native <details>, no script, no attributes.
            out.append(f"<details><summary>{_e(block.summary)}</summary>")
            self.blocks(block.children, depth + 1)
            out.append("</details>")
        elif type(block) is List:
            tag = "ol" if block.ordered is True else "ul"
            out.append(f"<{tag}>")
            for item in block.items:
                self.list_item(item.children, depth + 1)
            out.append(f"</{tag}>")

    def list_item(self, blocks: tuple[Block, ...], depth: int) -> None:
        self.out.append("<li>")
        if len(blocks) == 1 and type(blocks[0]) is Paragraph:  # a tight list item
            self.inlines(blocks[0].children, depth + 2, False)
        else:
            self.blocks(blocks, depth + 1)
        self.out.append("</li>")

    def inlines(self, nodes: tuple[Inline, ...], depth: int, in_link: bool) -> None:
        if depth > MAX_DEPTH:
            return
        out = self.out
        for node in nodes:
            if type(node) is Text:  # most nodes: inlined here
                out.append(_e(node.text))
            else:
                self.inline(node, depth, in_link)

    def inline(self, node: Inline, depth: int, in_link: bool) -> None:
        out = self.out
        if type(node) is Text:
            out.append(_e(node.text))
        elif type(node) is Strong or type(node) is Em:
            tag = "strong" if type(node) is Strong else "em"
            out.append(f"<{tag}>")
            self.inlines(node.children, depth + 1, in_link)
            out.append(f"</{tag}>")
        elif type(node) is Link:
            href = None if in_link else http_url(node.href)
            if href is None:  # unsafe or nested: its content as inert text
                self.inlines(node.children, depth + 1, in_link)
            else:
                out.append(f'<a href="{_e(href)}"{LINK_ATTRS}>')
                self.inlines(node.children, depth + 1, True)
                out.append("</a>")
        elif type(node) is LineBreak:
            out.append("<br>")
        elif type(node) is Code:
            out.append(f"<code>{_e(node.text)}</code>")
        elif type(node) is Mention:
            self.anchor(node.label, node.href, in_link)
        elif type(node) is Hashtag:
            self.anchor("#" + node.tag, node.href, in_link)
        elif type(node) is Image:
            self.image(node)
        elif type(node) is Label:
            out.append(_e(label_text(node.key)))

    def anchor(self, label: str, href: str | None, in_link: bool) -> None:
        safe = None if (in_link or href is None) else http_url(href)
        if safe is None:
            self.out.append(_e(label))
        else:
            self.out.append(f'<a href="{_e(safe)}"{LINK_ATTRS}>{_e(label)}</a>')

    def image(self, node: Image) -> None:
        src = proxied_src(node.src, self.media_url)
        if src is None:
            self.out.append(_e(node.alt))  # no proxy: the words, never a remote fetch
        else:
            self.out.append(f'<img src="{_e(src)}" alt="{_e(node.alt)}"{IMAGE_ATTRS}>')


def render_html(doc: Document, *, media_url: MediaUrl | None = None) -> Markup:
    """Blocks of `doc` inside `<div class="rich" data-ignore>`."""
    writer = _Writer(media_url)
    writer.out.append(WRAPPER_OPEN)
    writer.blocks(doc.children, depth=2)
    writer.out.append("</div>")
    return Markup("".join(writer.out))  # noqa: S704 -- built only from escaped parts above


def render_inline(doc: Document, *, media_url: MediaUrl | None = None) -> Markup:
    """`doc` as inline markup inside `<span data-ignore>`, blocks joined by <br>.

    For titles, author names and card text. Headings, quotes and lists lose
    their block markup and keep their words.
    """
    writer = _Writer(media_url)
    writer.out.append(INLINE_OPEN)
    first = True
    for inlines in _inline_runs(doc.children):
        if not first:
            writer.out.append("<br>")
        writer.inlines(inlines, 3, False)
        first = False
    writer.out.append("</span>")
    return Markup("".join(writer.out))  # noqa: S704 -- built only from escaped parts above


def _inline_runs(blocks: tuple[Block, ...], depth: int = 2) -> list[tuple[Inline, ...]]:
    """The inline content of each leaf block, in order."""
    if depth > MAX_DEPTH:
        return []
    runs: list[tuple[Inline, ...]] = []
    for block in blocks:
        if isinstance(block, Paragraph | Heading):
            runs.append(block.children)
        elif isinstance(block, CodeBlock):
            runs.append((Code(block.text),))
        elif isinstance(block, Quote):
            runs.extend(_inline_runs(block.children, depth + 1))
        elif isinstance(block, ContentWarning):
            runs.append((Text(block.summary),))  # inline cannot collapse: the warning only
        elif isinstance(block, List):
            for item in block.items:
                runs.extend(_inline_runs(item.children, depth + 2))
    return runs


def render_text(text: str | None) -> Markup:
    """One third-party plain-text field (title, name, alt text) as safe inline markup."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return render_inline(from_text(text, autolink=False))
