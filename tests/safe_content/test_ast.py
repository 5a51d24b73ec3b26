"""The closed tree: JSON round trip, rejection of unknown shapes, caps."""

from __future__ import annotations

import json

import pytest

from app.safe_content import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TEXT,
    Code,
    CodeBlock,
    ContentTooLarge,
    Document,
    Em,
    Hashtag,
    Heading,
    Image,
    InvalidContent,
    LineBreak,
    Link,
    List,
    ListItem,
    Mention,
    Paragraph,
    Quote,
    Strong,
    Text,
    from_builtins,
    from_json,
    to_json,
    validate,
)


def _every_node_type() -> Document:
    return Document(
        children=(
            Heading(2, (Text("Title"),)),
            Paragraph(
                (
                    Text("a "),
                    Strong((Em((Text("b"),)),)),
                    Code("c()"),
                    LineBreak(),
                    Link(
                        "https://x.example/", (Text("link"), Image("https://x.example/i.png", "i"))
                    ),
                    Mention("@alice", "https://m.example/@alice"),
                    Mention("@nobody"),
                    Hashtag("cats", "https://m.example/tags/cats"),
                    Hashtag("dogs"),
                )
            ),
            CodeBlock("x = 1\n  y = 2"),
            Quote((Paragraph((Text("quoted"),)),)),
            List((ListItem((Paragraph((Text("one"),)),)),), ordered=True),
            List(
                (
                    ListItem(
                        (Paragraph((Text("two"),)), List((ListItem(()),))),
                    ),
                )
            ),
        )
    )


def test_json_round_trip_keeps_every_node_type() -> None:
    doc = _every_node_type()
    data = to_json(doc)
    assert from_json(data) == doc
    assert from_json(data.decode()) == doc
    assert json.loads(data)["version"] == 1
    assert from_builtins(json.loads(data)) == doc


def test_json_is_tagged_by_type() -> None:
    data = json.loads(to_json(Document((Paragraph((Text("x"),)),))))
    assert data == {
        "type": "document",
        "children": [{"type": "paragraph", "children": [{"type": "text", "text": "x"}]}],
        "version": 1,
    }


def test_validate_accepts_a_valid_tree() -> None:
    doc = _every_node_type()
    assert validate(doc) is doc


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"type": "script", "text": "alert(1)"}, "script"),
        ({"type": "iframe", "src": "https://x.example"}, "iframe"),
        ({"type": "html", "html": "<b>x</b>"}, "html"),
        ({"children": []}, "type"),
    ],
)
def test_unknown_node_types_are_rejected(payload: dict[str, object], fragment: str) -> None:
    data = {"type": "document", "children": [payload], "version": 1}
    with pytest.raises(InvalidContent, match="not valid") as info:
        from_json(json.dumps(data))
    assert fragment in str(info.value) or "children[0]" in str(info.value)


@pytest.mark.parametrize(
    "paragraph",
    [
        {"type": "paragraph", "children": [], "style": "color:red"},
        {"type": "paragraph", "children": [{"type": "text", "text": "x", "onclick": "a()"}]},
        {
            "type": "paragraph",
            "children": [{"type": "link", "href": "https://x", "children": [], "data-init": "1"}],
        },
        {"type": "paragraph", "children": [{"type": "image", "src": "https://x", "class": "rich"}]},
    ],
)
def test_unknown_attributes_are_rejected(paragraph: dict[str, object]) -> None:
    data = {"type": "document", "children": [paragraph], "version": 1}
    with pytest.raises(InvalidContent, match="unknown field"):
        from_json(json.dumps(data))


def test_inline_node_in_block_position_is_rejected() -> None:
    data = {"type": "document", "children": [{"type": "text", "text": "x"}]}
    with pytest.raises(InvalidContent):
        from_json(json.dumps(data))


@pytest.mark.parametrize("level", [1, 5, 6, 0])
def test_heading_levels_outside_2_to_4_are_rejected(level: int) -> None:
    data = {"type": "document", "children": [{"type": "heading", "level": level, "children": []}]}
    with pytest.raises(InvalidContent, match="level"):
        from_json(json.dumps(data))


def test_unknown_version_is_rejected_with_a_readable_message() -> None:
    with pytest.raises(InvalidContent, match="version 2 is not supported"):
        from_json('{"type":"document","children":[],"version":2}')


def test_invalid_json_is_rejected() -> None:
    with pytest.raises(InvalidContent):
        from_json(b"{not json")


def test_overlong_url_is_rejected() -> None:
    doc = Document((Paragraph((Link("https://x.example/" + "a" * 5000, (Text("x"),)),)),))
    with pytest.raises(InvalidContent):
        from_json(to_json(doc))


def _nested(depth: int) -> Document:
    node: Strong | Text = Text("x")
    for _ in range(depth):
        node = Strong((node,))
    return Document((Paragraph((node,)),))


def test_depth_cap_on_decode() -> None:
    ok = _nested(MAX_DEPTH - 3)  # document + paragraph + strongs + text == MAX_DEPTH
    assert from_json(to_json(ok)) == ok
    with pytest.raises(ContentTooLarge, match=f"nested more than {MAX_DEPTH} levels"):
        from_json(to_json(_nested(MAX_DEPTH - 2)))


def test_absurd_depth_is_refused_without_recursion_error() -> None:
    depth = 200_000
    data = '{"type":"document","children":[{"type":"paragraph","children":['
    data += '{"type":"strong","children":[' * depth + '{"type":"text","text":"x"}' + "]}" * depth
    data += "]}]}"
    with pytest.raises(ContentTooLarge):
        from_json(data)
    with pytest.raises(ContentTooLarge):
        validate(_nested(depth))


def test_node_count_cap() -> None:
    per_paragraph = 2  # a paragraph and its text
    fits = (MAX_NODES - 1) // per_paragraph
    doc = Document(tuple(Paragraph((Text("x"),)) for _ in range(fits)))
    assert from_json(to_json(doc)) == doc
    too_many = Document(tuple(Paragraph((Text("x"),)) for _ in range(fits + 1)))
    with pytest.raises(ContentTooLarge, match="more than 20,000 nodes"):
        from_json(to_json(too_many))


def test_text_length_cap_counts_all_text_fields() -> None:
    half = MAX_TEXT // 2
    doc = Document((Paragraph((Text("a" * half), Image("https://x.example/i", "b" * half))),))
    assert validate(doc) is doc
    over = Document((Paragraph((Text("a" * half), Mention("b" * (half + 1)))),))
    with pytest.raises(ContentTooLarge, match="more than 1,000,000 characters"):
        validate(over)


def test_oversized_json_is_refused_before_decoding() -> None:
    with pytest.raises(ContentTooLarge, match="larger than"):
        from_json(b" " * 16_000_001)


def test_caps_errors_are_value_errors() -> None:
    assert issubclass(ContentTooLarge, InvalidContent)
    assert issubclass(InvalidContent, ValueError)


def test_validate_rejects_wrong_types_built_in_python() -> None:
    with pytest.raises(InvalidContent):
        validate(Document((Paragraph((Text(5),)),)))  # type: ignore[arg-type]
    with pytest.raises(InvalidContent):
        validate(Document((Text("inline at block level"),)))  # type: ignore[arg-type]
    with pytest.raises(InvalidContent, match="Expected a rich-text Document"):
        validate(Paragraph(()))  # type: ignore[arg-type]


def test_validate_rejects_links_inside_links() -> None:
    inner = Link("https://b.example/", (Text("b"),))
    doc = Document((Paragraph((Link("https://a.example/", (Strong((inner,)),)),)),))
    with pytest.raises(InvalidContent, match="link inside a link"):
        validate(doc)
    with pytest.raises(InvalidContent, match="link inside a link"):
        from_json(to_json(doc))


def test_nodes_are_immutable() -> None:
    text = Text("x")
    with pytest.raises(AttributeError):
        text.text = "y"  # type: ignore[misc]
