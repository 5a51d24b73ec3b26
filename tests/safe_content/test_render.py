"""render_html / render_inline / render_text: only our own markup comes out."""

from __future__ import annotations

import pytest
from markupsafe import Markup, escape

from app.safe_content import (
    Code,
    CodeBlock,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    LineBreak,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_html,
    render_html,
    render_inline,
    render_text,
)
from app.safe_content.render import _e
from tests.safe_content.checks import LINK_REL, elements_in, fake_media_url, problems_in

REL = f'rel="{LINK_REL}" referrerpolicy="no-referrer"'


def _doc(*inlines: object) -> Document:
    return Document((Paragraph(inlines),))  # type: ignore[arg-type]


def test_output_is_markup_wrapped_in_data_ignore() -> None:
    out = render_html(_doc(Text("hi")))
    assert isinstance(out, Markup)
    assert out == '<div class="rich" data-ignore><p>hi</p></div>'
    assert render_html(Document()) == '<div class="rich" data-ignore></div>'


def test_all_text_is_escaped() -> None:
    out = render_html(_doc(Text("<script>alert('x')</script> & \"q\"")))
    assert out == (
        '<div class="rich" data-ignore><p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;'
        " &amp; &#34;q&#34;</p></div>"
    )


@pytest.mark.parametrize(
    "text",
    ["", "plain", "<&>\"'", "&amp;&lt;", "a'b\"c<d>e&f", "\x00\u202e<x y='1'>", "&&&<<<>>>"],
)
def test_text_is_escaped_exactly_as_markupsafe_does(text: str) -> None:
    out = render_html(_doc(Text(text))) if text else None
    assert _e(text) == str(escape(text))
    if out is not None:
        assert str(escape(text)) in out


def test_every_block_type() -> None:
    doc = Document(
        (
            Heading(3, (Text("H"),)),
            CodeBlock("a < b\n  c"),
            Quote((Paragraph((Text("q"),)),)),
            List((ListItem((Paragraph((Text("tight"),)),)), ListItem(())), ordered=True),
            List((ListItem((Paragraph((Text("a"),)), Paragraph((Text("b"),)))),)),
        )
    )
    assert render_html(doc) == (
        '<div class="rich" data-ignore><h3>H</h3><pre><code>a &lt; b\n  c</code></pre>'
        "<blockquote><p>q</p></blockquote><ol><li>tight</li><li></li></ol>"
        "<ul><li><p>a</p><p>b</p></li></ul></div>"
    )


def test_inline_types() -> None:
    doc = _doc(Strong((Em((Text("x"),)),)), Code("<i>"), LineBreak(), Text("y"))
    assert render_html(doc) == (
        '<div class="rich" data-ignore><p><strong><em>x</em></strong><code>&lt;i&gt;</code>'
        "<br>y</p></div>"
    )


def test_links_get_our_rel_and_referrer_policy_and_no_target() -> None:
    out = render_html(_doc(Link('https://a.example/?x=1&y="2"', (Text("a"),))))
    assert out == (
        '<div class="rich" data-ignore><p><a href="https://a.example/?x=1&amp;y=%222%22" '
        f"{REL}>a</a></p></div>"
    )
    assert "target" not in out


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(1)",
        "&#106;avascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,x",
        "/relative",
        "//evil.example/x",
        "https://user:pw@evil.example/",
        "vbscript:x",
    ],
)
def test_unsafe_links_in_a_stored_tree_render_as_text(href: str) -> None:
    # A tree from an older build or a bad migration: the renderer decides again.
    out = render_html(_doc(Link(href, (Text("click "), Strong((Text("me"),)))), Text("!")))
    assert out == '<div class="rich" data-ignore><p>click <strong>me</strong>!</p></div>'


def test_nested_links_render_once() -> None:
    inner = Link("https://b.example/", (Text("b"),))
    doc = _doc(Link("https://a.example/", (Text("a "), inner, Mention("@m", "https://m.example/"))))
    out = render_html(doc)
    assert [tag for tag, _ in elements_in(out)].count("a") == 1
    assert ">a b@m</a>" in out


def test_mentions_and_hashtags() -> None:
    doc = _doc(
        Mention("@alice", "https://m.example/@alice"),
        Text(" "),
        Mention("@ghost"),
        Text(" "),
        Hashtag("cats", "https://m.example/tags/cats"),
        Text(" "),
        Hashtag("dogs", "javascript:alert(1)"),
    )
    assert render_html(doc) == (
        f'<div class="rich" data-ignore><p><a href="https://m.example/@alice" {REL}>@alice</a>'
        f' @ghost <a href="https://m.example/tags/cats" {REL}>#cats</a> #dogs</p></div>'
    )


def test_images_only_through_the_media_proxy() -> None:
    doc = _doc(Image("https://img.example/a.png", 'a "cat"'))
    proxied = render_html(doc, media_url=lambda url: "/media/sig/abc")
    assert proxied == (
        '<div class="rich" data-ignore><p><img src="/media/sig/abc" alt="a &#34;cat&#34;" '
        'loading="lazy" decoding="async" referrerpolicy="no-referrer"></p></div>'
    )
    assert render_html(doc) == '<div class="rich" data-ignore><p>a &#34;cat&#34;</p></div>'
    assert render_html(doc, media_url=lambda url: None) == render_html(doc)


def test_media_url_receives_the_original_remote_url() -> None:
    seen: list[str] = []

    def media_url(url: str) -> str:
        seen.append(url)
        return fake_media_url(url)

    render_html(_doc(Image("https://img.example/a.png", "")), media_url=media_url)
    assert seen == ["https://img.example/a.png"]


@pytest.mark.parametrize(
    "answer", ["//evil.example/x", "/\\evil.example", "javascript:alert(1)", "/media/a b", 5]
)
def test_bad_proxy_answers_fall_back_to_alt_text(answer: object) -> None:
    doc = _doc(Image("https://img.example/a.png", "alt"))
    out = render_html(doc, media_url=lambda url: answer)  # type: ignore[arg-type,return-value]
    assert out == '<div class="rich" data-ignore><p>alt</p></div>'


def test_unsafe_image_src_is_never_offered_to_the_proxy() -> None:
    calls: list[str] = []
    doc = _doc(Image("javascript:alert(1)", "alt"))
    render_html(doc, media_url=lambda url: calls.append(url) or "/media/x")  # type: ignore[func-returns-value]
    assert calls == []


def test_render_inline_joins_blocks_with_breaks() -> None:
    doc = Document(
        (
            Paragraph((Text("a"),)),
            Heading(2, (Strong((Text("b"),)),)),
            Quote((Paragraph((Text("c"),)),)),
            List((ListItem((Paragraph((Text("d"),)),)),)),
            CodeBlock("e"),
        )
    )
    assert render_inline(doc) == (
        "<span data-ignore>a<br><strong>b</strong><br>c<br>d<br><code>e</code></span>"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jane <b>Doe</b>", "<span data-ignore>Jane &lt;b&gt;Doe&lt;/b&gt;</span>"),
        ("line\nbreak", "<span data-ignore>line<br>break</span>"),
        ("https://a.example", "<span data-ignore>https://a.example</span>"),
        ("", "<span data-ignore></span>"),
        ("\u202eevil", "<span data-ignore>evil</span>"),
    ],
)
def test_render_text(text: str, expected: str) -> None:
    assert render_text(text) == expected


def test_render_text_tolerates_none() -> None:
    assert render_text(None) == "<span data-ignore></span>"


def test_realistic_article_renders_cleanly() -> None:
    html = (
        "<article><h1>Title</h1><p>Intro with <a href='/x'>a link</a>.</p>"
        "<figure><img src='/p.jpg' alt='Pic'><figcaption>Caption</figcaption></figure>"
        "<ul><li>one</li><li>two</li></ul></article>"
    )
    out = render_html(from_html(html, base_url="https://news.example/"), media_url=fake_media_url)
    assert problems_in(out) == []
    assert [tag for tag, _ in elements_in(out)] == [
        "div", "h2", "p", "a", "p", "img", "p", "ul", "li", "li",
    ]  # fmt: skip
