"""from_html: Mastodon, feed and article HTML into the tree."""

from __future__ import annotations

import time

import pytest

from app.safe_content import (
    MAX_DEPTH,
    MAX_NODES,
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
    to_json,
    to_text,
)
from app.safe_content import guard as guard_module
from app.safe_content.ast import check_caps, children_of

MASTODON_STATUS = (
    '<p>Morning <span class="h-card" translate="no"><a href="https://mastodon.social/@alice" '
    'class="u-url mention">@<span>alice</span></a></span>! Notes from '
    '<a href="https://mastodon.social/tags/OpenData" class="mention hashtag" rel="tag">'
    "#<span>OpenData</span></a> day:</p>"
    '<p><a href="https://example.org/reports/2024/open-data-summary.html" target="_blank" '
    'rel="nofollow noopener noreferrer" translate="no"><span class="invisible">https://</span>'
    '<span class="ellipsis">example.org/reports/2024/open-da</span><span class="invisible">'
    "ta-summary.html</span></a></p>"
)


def _paragraphs(doc: Document) -> list[Paragraph]:
    return [b for b in doc.children if isinstance(b, Paragraph)]


def test_mastodon_mention_hashtag_invisible_and_ellipsis() -> None:
    doc = from_html(MASTODON_STATUS)
    first, second = _paragraphs(doc)
    assert first.children == (
        Text("Morning "),
        Mention(label="@alice", href="https://mastodon.social/@alice"),
        Text("! Notes from "),
        Hashtag(tag="OpenData", href="https://mastodon.social/tags/OpenData"),
        Text(" day:"),
    )
    assert second.children == (
        Link(
            href="https://example.org/reports/2024/open-data-summary.html",
            children=(Text("example.org/reports/2024/open-da…"),),
        ),
    )


def test_mastodon_classes_never_survive_into_the_tree() -> None:
    data = to_json(from_html(MASTODON_STATUS)).decode()
    for name in ("u-url", "invisible", "ellipsis", "h-card", "class"):
        assert f'"{name}' not in data
        assert f" {name}" not in data


def test_mention_class_without_at_sign_stays_a_link() -> None:
    doc = from_html('<a class="mention" href="https://m.example/x">not a handle</a>')
    assert doc.children == (Paragraph((Link("https://m.example/x", (Text("not a handle"),)),)),)


def test_mention_with_unsafe_href_keeps_label_without_link() -> None:
    doc = from_html('<a class="u-url mention" href="javascript:alert(1)">@<span>bob</span></a>')
    assert doc.children == (Paragraph((Mention(label="@bob", href=None),)),)


def test_relative_urls_resolve_against_base_url() -> None:
    html = '<p><a href="/about">About</a> <img src="img/a.png" alt="A"></p>'
    doc = from_html(html, base_url="https://blog.example/posts/1/")
    assert doc.children == (
        Paragraph(
            (
                Link("https://blog.example/about", (Text("About"),)),
                Text(" "),
                Image(src="https://blog.example/posts/1/img/a.png", alt="A"),
            )
        ),
    )


def test_relative_urls_without_base_degrade_to_text() -> None:
    doc = from_html('<p><a href="/about">About</a> <img src="/a.png" alt="A pic"></p>')
    assert doc.children == (Paragraph((Text("About A pic"),)),)


def test_protocol_relative_only_with_base() -> None:
    html = '<a href="//cdn.example/x">x</a>'
    assert from_html(html).children == (Paragraph((Text("x"),)),)
    assert from_html(html, base_url="https://site.example/").children == (
        Paragraph((Link("https://cdn.example/x", (Text("x"),)),)),
    )


def test_unsafe_links_become_text_and_images_without_src_become_alt() -> None:
    doc = from_html(
        '<p><a href="javascript:alert(1)">click</a> '
        '<img src="data:image/png;base64,AAAA" alt="chart"> <img src="x"></p>'
    )
    assert doc.children == (Paragraph((Text("click chart"),)),)


def test_block_structure() -> None:
    html = (
        "<h1>One</h1><h2>Two</h2><h3>Three</h3><h4>Four</h4><h5>Five</h5><h6>Six</h6>"
        "<ul><li>a</li><li><p>b</p><ol><li>c</li></ol></li></ul>"
        "<blockquote><p>quoted</p></blockquote>"
        "<pre><code>  x = 1\n  y = 2\n</code></pre>"
    )
    doc = from_html(html)
    assert doc.children == (
        Heading(2, (Text("One"),)),
        Heading(2, (Text("Two"),)),
        Heading(3, (Text("Three"),)),
        Heading(4, (Text("Four"),)),
        Heading(4, (Text("Five"),)),
        Heading(4, (Text("Six"),)),
        List(
            (
                ListItem((Paragraph((Text("a"),)),)),
                ListItem(
                    (
                        Paragraph((Text("b"),)),
                        List((ListItem((Paragraph((Text("c"),)),)),), ordered=True),
                    )
                ),
            )
        ),
        Quote((Paragraph((Text("quoted"),)),)),
        CodeBlock("  x = 1\n  y = 2"),
    )


def test_inline_formatting() -> None:
    doc = from_html("<p><b>bold</b> <strong>s</strong> <i>it</i> <em>em</em> <code>f(x)</code></p>")
    assert doc.children == (
        Paragraph(
            (
                Strong((Text("bold"),)),
                Text(" "),
                Strong((Text("s"),)),
                Text(" "),
                Em((Text("it"),)),
                Text(" "),
                Em((Text("em"),)),
                Text(" "),
                Code("f(x)"),
            )
        ),
    )


def test_text_outside_blocks_is_wrapped_in_paragraphs() -> None:
    doc = from_html("loose text<div>in a div</div>more <b>bold</b>")
    assert doc.children == (
        Paragraph((Text("loose text"),)),
        Paragraph((Text("in a div"),)),
        Paragraph((Text("more "), Strong((Text("bold"),)))),
    )


def test_whitespace_collapses_like_a_browser() -> None:
    doc = from_html("<p>  a \n\t b  <b> c </b>  d <br>  e  </p>")
    assert doc.children == (
        Paragraph((Text("a b "), Strong((Text("c"),)), Text(" d"), LineBreak(), Text("e"))),
    )


def test_code_blocks_keep_whitespace() -> None:
    doc = from_html("<pre>\nline 1\n    indented\n\nline 4</pre>")
    assert doc.children == (CodeBlock("line 1\n    indented\n\nline 4"),)


def test_tables_flatten_to_paragraphs_per_row() -> None:
    doc = from_html(
        "<table><tr><th>Name</th><th>Votes</th></tr><tr><td>A</td><td>3</td></tr></table>"
    )
    assert doc.children == (Paragraph((Text("Name | Votes"),)), Paragraph((Text("A | 3"),)))


def test_figure_caption_becomes_a_paragraph() -> None:
    doc = from_html(
        '<figure><img src="https://x.example/p.jpg" alt="Protest"><figcaption>Photo: AP</figcaption></figure>'
    )
    assert doc.children == (
        Paragraph((Image("https://x.example/p.jpg", "Protest"),)),
        Paragraph((Text("Photo: AP"),)),
    )


def test_scripts_styles_and_widgets_lose_their_content() -> None:
    doc = from_html("<p>a<script>var x</script><style>p{}</style><svg><text>t</text></svg>b</p>")
    assert doc.children == (Paragraph((Text("ab"),)),)


def test_entities_are_decoded_once() -> None:
    doc = from_html("<p>&lt;b&gt; &amp;amp; &quot;q&quot; caf&eacute;</p>")
    assert to_text(doc) == '<b> &amp; "q" café'


def test_bidi_overrides_and_controls_are_dropped_from_text() -> None:
    doc = from_html("<p>\u202eevil\u202c name\x07</p>")
    assert to_text(doc) == "evil name"


def test_empty_input() -> None:
    assert from_html("") == Document()
    assert from_html("<p> </p><div></div>") == Document()


def _depth(node: object, level: int = 1) -> int:
    return max([level, *(_depth(child, level + 1) for child in children_of(node))])


@pytest.mark.parametrize(
    "html",
    [
        "<blockquote>" * 200 + "deep text" + "</blockquote>" * 200,
        "<ul><li>" * 200 + "deep text",
        "<b><i>" * 200 + "deep text",
        "<div><blockquote><b>" * 100 + "deep text",
    ],
)
def test_over_deep_nesting_is_flattened_not_refused(html: str) -> None:
    doc = from_html(html)
    check_caps(doc)
    assert _depth(doc) <= MAX_DEPTH
    assert "deep text" in to_text(doc)


def test_huge_input_is_truncated_with_an_ellipsis() -> None:
    html = "<p>word</p>" * (MAX_NODES + 100)
    doc = from_html(html)
    check_caps(doc)
    assert doc.children[-1] == Paragraph((Text("…"),))
    assert len(doc.children) < MAX_NODES // 2 + 10


def test_guard_path_gives_the_same_tree_for_ordinary_articles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    html = (
        MASTODON_STATUS
        + "<article><h2>Head</h2><p>Text with <a href='https://x.example/?a=1&amp;b=2'>a link</a>"
        + " &amp; <em>emphasis</em>.</p><ul><li>one<li>two</ul><pre>  code\n</pre>"
        + "<table><tr><td>a<td>b</table><img src='/i.png' alt='i'></article>"
    )
    direct = from_html(html, base_url="https://x.example/")
    monkeypatch.setattr(guard_module, "GUARD_TAG_THRESHOLD", 0)
    guarded = from_html(html, base_url="https://x.example/")
    assert guarded == direct


def test_pathological_nesting_is_fast() -> None:
    bombs = [
        "<div>" * 50_000,
        "".join(f'<b a="{i}">' for i in range(20_000)) + "<p>x</p>" * 2_000,
        "".join(f"<div><b a={i}></div>" for i in range(10_000)) + "x" + "<p>x</p>" * 5_000,
        "<a " * 100_000,
    ]
    for bomb in bombs:
        started = time.process_time()
        from_html(bomb)
        assert time.process_time() - started < 3.0
