"""from_html reads nh3's output in one pass (`_TAG`) instead of a second HTML parser.

The differential tests drive the same builder from the stdlib's general
HTMLParser, which from_html used before, and require the same tree on the
hostile corpus, the builder tests' shapes and a seeded random corpus of tag
soup. So the fast reader changes speed, not meaning.
"""

from __future__ import annotations

import random
from html.parser import HTMLParser

import pytest

from app.safe_content import Document, Paragraph, Text, from_html, render_html
from app.safe_content import guard as guard_module
from app.safe_content.ast import Block
from app.safe_content.html_builder import _CLEANER, _TAG, _Builder
from tests.safe_content.checks import problems_in
from tests.safe_content.hostile_corpus import CASES

BASE = "https://news.example/articles/1"


class _StdlibReader(HTMLParser):
    """Feeds a builder's token callbacks from the stdlib HTMLParser (the old reader)."""

    def __init__(self, builder: _Builder) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = builder

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.builder.start(tag, {name: value or "" for name, value in attrs})

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self.builder.end(tag)

    def handle_data(self, data: str) -> None:
        self.builder.data(data)


def _one_pass(markup: str, base_url: str | None) -> tuple[Block, ...]:
    builder = _Builder(base_url)
    builder.feed(markup)
    return builder.finish()


def _stdlib(markup: str, base_url: str | None) -> tuple[Block, ...]:
    builder = _Builder(base_url)
    reader = _StdlibReader(builder)
    reader.feed(markup)
    reader.close()
    return builder.finish()


# -- a seeded random corpus: tag soup over what the builder reads and what nh3 drops --

_TAGS = (
    "a", "b", "strong", "em", "i", "code", "pre", "p", "br", "hr", "span", "img", "h1", "h2",
    "h3", "h5", "ul", "ol", "li", "blockquote", "figure", "figcaption", "table", "tr", "td",
    "th", "div", "section", "dl", "dt", "dd", "details", "summary", "script", "style", "svg",
    "u", "font", "sub", "textarea", "title", "tbody", "caption", "noscript", "select",
    "option", "math", "template",
)  # fmt: skip
_ATTRS = (
    'class="mention"', 'class="u-url mention"', 'class="mention hashtag"', 'class="invisible"',
    'class="ellipsis"', 'class="h-card"', 'href="https://example.org/x?a=1&amp;b=2"',
    'href="javascript:alert(1)"', 'href="/relative/path"', 'href="//proto.example/x"',
    'href="jav&#x09;ascript:x"', 'href="https://a@b.example/"', 'src="https://cdn.example/i.png"',
    'src="data:image/png;base64,AAAA"', 'src="rel.png"', 'alt="an &quot;alt&quot; &lt;b&gt;"',
    'alt=" spaced\n alt "', 'onclick="x()"', 'style="color:red"', 'data-on-click="@get(1)"',
    "title=t", "href=unquoted&amp;x",
)  # fmt: skip
_TEXTS = (
    "hello", " world ", "  ", "\n", "a&amp;b", "&lt;tag&gt;", "&nbsp;", "\u00a0x\u00a0", "#tag",
    "@alice", "x\x01y", "\u202eevil", "caf\u00e9", " \t ", "https://", "example.org/long", "…",
    "1 < 2", "a <3 b", "end.", "\r\n", "&#13;", "emoji \U0001f600", "&amp;lt;", "<!-- c -->",
    '<a href="https://m.example/tags/x" class="mention hashtag">#x</a>',
)  # fmt: skip


def _tag_soup(rng: random.Random, size: int) -> str:
    out: list[str] = []
    open_tags: list[str] = []
    for _ in range(size):
        roll = rng.random()
        if roll < 0.35:
            out.append(rng.choice(_TEXTS))
        elif roll < 0.7:
            tag = rng.choice(_TAGS)
            attrs = "".join(" " + rng.choice(_ATTRS) for _ in range(rng.randint(0, 2)))
            out.append(f"<{tag}{attrs}>")
            open_tags.append(tag)
        elif roll < 0.95 and open_tags:
            out.append(f"</{open_tags.pop(rng.randrange(len(open_tags)))}>")
        else:
            out.append(f"</{rng.choice(_TAGS)}>")
    return "".join(out)


_RNG = random.Random(9)
SOUP = [_tag_soup(_RNG, _RNG.randint(1, 80)) for _ in range(600)]
SHAPES = [
    '<p>Morning <span class="h-card"><a href="https://m.example/@a" class="u-url mention">'
    '@<span>a</span></a></span>! <a href="https://m.example/tags/x" class="mention hashtag">'
    '#<span>x</span></a> <a href="https://e.example/long"><span class="invisible">https://'
    '</span><span class="ellipsis">e.example/lo</span><span class="invisible">ng</span></a></p>',
    "<h1>One</h1><ul><li>a</li><li><p>b</p><ol><li>c</li></ol></li></ul>"
    "<blockquote><p>quoted</p></blockquote><pre><code>  x = 1\n</code></pre>",
    "<p>  a \n\t b  <b> c </b>  d <br>  e  </p><pre>\nline 1\n    indented</pre>",
    "<table><tr><th>Name</th><th>Votes</th></tr><tr><td>A</td><td>3</td></tr></table>",
    "<p>&lt;b&gt; &amp;amp; &quot;q&quot; caf&eacute; \u202eevil\u202c\x07</p>",
    "<blockquote>" * 60 + "deep" + "</blockquote>" * 60,
    "<b><i>" * 40 + "deep" + "<p>a</p>" * 3,
]


@pytest.mark.parametrize("base_url", [None, BASE], ids=["no-base", "base"])
def test_one_pass_reads_nh3_output_as_the_stdlib_parser_does(base_url: str | None) -> None:
    inputs = [case.html for case in CASES] + SHAPES + SOUP
    differ = []
    for html in inputs:
        markup = _CLEANER.clean(html)
        if _one_pass(markup, base_url) != _stdlib(markup, base_url):
            differ.append(html)
    assert differ == []


def test_the_random_corpus_reaches_every_kind_of_node() -> None:
    # Guards the differential test above against a corpus that tests nothing.
    kinds: set[str] = set()
    for html in SOUP:
        kinds.update(_node_kinds(from_html(html, base_url=BASE)))
    assert kinds >= {
        "Paragraph", "Heading", "CodeBlock", "Quote", "List", "ListItem", "Text", "Strong",
        "Em", "Code", "Link", "Mention", "Hashtag", "Image", "LineBreak",
    }  # fmt: skip


def _node_kinds(node: object) -> set[str]:
    kinds = {type(node).__name__}
    for name in ("children", "items"):
        for child in getattr(node, name, ()):
            kinds |= _node_kinds(child)
    return kinds


def test_every_character_of_the_markup_is_in_one_part() -> None:
    markup = _CLEANER.clean(SHAPES[0] + SHAPES[1]) + "<not from nh3 <x"
    parts = _TAG.split(markup)
    tags = zip(parts[1::4], parts[2::4], parts[3::4], parts[4::4], strict=True)
    rebuilt = parts[0] + "".join(
        f"<{slash}{name}{attrs}>{text}" for slash, name, attrs, text in tags
    )
    assert rebuilt == markup
    assert parts[-1] == "<not from nh3 <x"  # no tag there: text


def test_markup_nh3_never_writes_is_read_as_words() -> None:
    # A "<" that starts no tag nh3 writes can only come from elsewhere; it stays text.
    builder = _Builder(None)
    builder.feed("<p>a <b class=x>b</b> <3 <x/></p>")
    assert Document(builder.finish()).children == (Paragraph((Text("a <b class=x>b <3 <x/>"),)),)


@pytest.mark.parametrize("html", SOUP[:200])
def test_random_corpus_renders_safely(html: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for threshold in (guard_module.GUARD_TAG_THRESHOLD, 0):
        monkeypatch.setattr(guard_module, "GUARD_TAG_THRESHOLD", threshold)
        markup = render_html(from_html(html, base_url=BASE))
        assert problems_in(markup) == [], markup
