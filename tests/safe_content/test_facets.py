"""from_facets: Bluesky byte-offset facets, including broken ones."""

from __future__ import annotations

from typing import Any

import pytest

from app.safe_content import Hashtag, LineBreak, Link, Mention, Paragraph, Text, from_facets

LINK = "app.bsky.richtext.facet#link"
MENTION = "app.bsky.richtext.facet#mention"
TAG = "app.bsky.richtext.facet#tag"


def facet(text: str, part: str, feature: dict[str, Any], occurrence: int = 0) -> dict[str, Any]:
    """A facet over `part` in `text`, offsets in UTF-8 bytes as Bluesky sends them."""
    start_char = -1
    for _ in range(occurrence + 1):
        start_char = text.index(part, start_char + 1)
    start = len(text[:start_char].encode())
    return {
        "index": {"byteStart": start, "byteEnd": start + len(part.encode())},
        "features": [feature],
    }


def test_link_mention_and_tag_after_emoji_and_multibyte_text() -> None:
    text = "Grüße 👋🏽 @alice.bsky.social — read https://exa.mple/ü #Überblick ok"
    facets = [
        facet(text, "@alice.bsky.social", {"$type": MENTION, "did": "did:plc:abc123"}),
        facet(text, "https://exa.mple/ü", {"$type": LINK, "uri": "https://exa.mple/ü"}),
        facet(text, "#Überblick", {"$type": TAG, "tag": "Überblick"}),
    ]
    doc = from_facets(text, facets)
    assert doc.children == (
        Paragraph(
            (
                Text("Grüße 👋🏽 "),
                Mention("@alice.bsky.social", "https://bsky.app/profile/did:plc:abc123"),
                Text(" — read "),
                Link("https://exa.mple/ü", (Text("https://exa.mple/ü"),)),
                Text(" "),
                Hashtag("Überblick", "https://bsky.app/hashtag/%C3%9Cberblick"),
                Text(" ok"),
            )
        ),
    )


def test_newlines_become_line_breaks() -> None:
    doc = from_facets("one\ntwo\n\nthree", [])
    assert doc.children == (
        Paragraph((Text("one"), LineBreak(), Text("two"), LineBreak(), LineBreak(), Text("three"))),
    )


def test_no_facets_is_plain_text() -> None:
    assert from_facets("plain https://not.linked", None).children == (
        Paragraph((Text("plain https://not.linked"),)),
    )


TEXT = "hi 🎉 @bob there"
GOOD = facet(TEXT, "@bob", {"$type": MENTION, "did": "did:plc:bob"})
START = GOOD["index"]["byteStart"]


@pytest.mark.parametrize(
    "bad",
    [
        {"index": {"byteStart": START, "byteEnd": 10_000}, "features": GOOD["features"]},
        {"index": {"byteStart": -1, "byteEnd": 3}, "features": GOOD["features"]},
        {"index": {"byteStart": 5, "byteEnd": 5}, "features": GOOD["features"]},
        {"index": {"byteStart": 6, "byteEnd": 4}, "features": GOOD["features"]},
        {
            "index": {"byteStart": 4, "byteEnd": START + 4},
            "features": GOOD["features"],
        },  # inside 🎉
        {"index": {"byteStart": 0, "byteEnd": 5}, "features": GOOD["features"]},  # ends inside 🎉
        {"index": {"byteStart": "3", "byteEnd": 7}, "features": GOOD["features"]},
        {"index": {"byteStart": True, "byteEnd": 7}, "features": GOOD["features"]},
        {"index": {"byteStart": 3.0, "byteEnd": 7}, "features": GOOD["features"]},
        {"index": None, "features": GOOD["features"]},
        {"index": GOOD["index"], "features": "nope"},
        {"index": GOOD["index"], "features": []},
        {"index": GOOD["index"], "features": [{"$type": "app.bsky.richtext.facet#bold"}]},
        {"index": GOOD["index"], "features": [{"$type": MENTION, "did": "not-a-did"}]},
        {"index": GOOD["index"], "features": [{"$type": MENTION, "did": 42}]},
        {"index": GOOD["index"], "features": [{"$type": LINK, "uri": "javascript:alert(1)"}]},
        {"index": GOOD["index"], "features": [{"$type": LINK, "uri": "/relative"}]},
        {"index": GOOD["index"], "features": [{"$type": TAG, "tag": "two words"}]},
        {"index": GOOD["index"], "features": [{"$type": TAG, "tag": ""}]},
        {"index": GOOD["index"], "features": [{"$type": TAG, "tag": "x" * 700}]},
        "not a dict",
        None,
        42,
    ],
)
def test_bad_facets_degrade_to_plain_text(bad: Any) -> None:
    assert from_facets(TEXT, [bad]).children == (Paragraph((Text(TEXT),)),)


def test_non_list_facets_degrade_to_plain_text() -> None:
    for facets in ({"index": 1}, "facets", 7):
        assert from_facets(TEXT, facets).children == (Paragraph((Text(TEXT),)),)  # type: ignore[arg-type]


def test_offsets_splitting_a_multibyte_character_are_ignored() -> None:
    text = "ab🎉cd"
    emoji_start = len(b"ab")
    inside = {
        "index": {"byteStart": emoji_start + 1, "byteEnd": emoji_start + 4},
        "features": [{"$type": LINK, "uri": "https://x.example/"}],
    }
    assert from_facets(text, [inside]).children == (Paragraph((Text(text),)),)
    whole = {
        "index": {"byteStart": emoji_start, "byteEnd": emoji_start + 4},
        "features": [{"$type": LINK, "uri": "https://x.example/"}],
    }
    assert from_facets(text, [whole]).children == (
        Paragraph((Text("ab"), Link("https://x.example/", (Text("🎉"),)), Text("cd"))),
    )


def test_overlapping_facets_keep_the_first_and_drop_the_rest() -> None:
    text = "visit example.com today"
    first = facet(text, "example.com", {"$type": LINK, "uri": "https://example.com/"})
    overlapping = facet(text, "com today", {"$type": LINK, "uri": "https://evil.example/"})
    doc = from_facets(text, [overlapping, first])
    assert doc.children == (
        Paragraph(
            (Text("visit "), Link("https://example.com/", (Text("example.com"),)), Text(" today"))
        ),
    )


def test_first_valid_feature_wins() -> None:
    text = "go here"
    doc = from_facets(
        text,
        [
            {
                "index": {"byteStart": 3, "byteEnd": 7},
                "features": [
                    {"$type": LINK, "uri": "javascript:x"},
                    {"$type": LINK, "uri": "https://ok.example/"},
                ],
            }
        ],
    )
    assert doc.children == (Paragraph((Text("go "), Link("https://ok.example/", (Text("here"),)))),)


def test_tag_facet_over_text_without_hash_stays_a_link() -> None:
    text = "topic cats"
    doc = from_facets(text, [facet(text, "cats", {"$type": TAG, "tag": "cats"})])
    assert doc.children == (
        Paragraph((Text("topic "), Link("https://bsky.app/hashtag/cats", (Text("cats"),)))),
    )


def test_lone_surrogates_do_not_break_offsets() -> None:
    text = "\ud800 @bob"
    start = len("\ufffd ".encode())
    doc = from_facets(
        text,
        [
            {
                "index": {"byteStart": start, "byteEnd": start + 4},
                "features": [{"$type": MENTION, "did": "did:plc:b"}],
            }
        ],
    )
    assert doc.children == (
        Paragraph((Text("\ufffd "), Mention("@bob", "https://bsky.app/profile/did:plc:b"))),
    )
