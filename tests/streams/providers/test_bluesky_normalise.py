"""Bluesky JSON -> items, pure: golden files (XRPC answer -> AST + fields) and hostile posts.

Regenerate a golden file after a deliberate change with GOLDEN_UPDATE=1 and read the diff.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.safe_content import render_html, to_json
from app.streams.providers import RemoteItem
from app.streams.providers.bluesky import _reset_in, items_of, permalink

GOLDEN = Path(__file__).parent / "golden"


def as_json(item: RemoteItem) -> dict[str, Any]:
    return {
        "remote_id": item.remote_id,
        "canonical_id": item.canonical_id,
        "url": item.url,
        "author_handle": item.author_handle,
        "author_ref": item.author_ref,
        "created_at": item.created_at.isoformat(),
        "plain_text": item.plain_text,
        "media": [{"kind": m.kind, "url": m.url, "alt": m.alt} for m in item.media],
        "metrics": item.metrics,
        "reposted_by": item.reposted_by,
        "content": json.loads(to_json(item.content)),
    }


def check_golden(name: str, key: str) -> list[dict[str, Any]]:
    answer = json.loads((GOLDEN / f"{name}.json").read_text())
    got = [as_json(i) for i in items_of(answer[key], key)]
    expected = GOLDEN / f"{name}.expected.json"
    if os.environ.get("GOLDEN_UPDATE"):
        expected.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n")
    assert got == json.loads(expected.read_text())
    return got


def test_a_feed_page_normalises_as_the_golden_file_says():
    items = check_golden("bluesky_feed", "feed")
    # The repost is unwrapped: the item is the reposted post, the reposter kept beside it,
    # placed at the time of the repost.
    repost = items[0]
    assert repost["remote_id"] == "at://did:plc:bernd44k/app.bsky.feed.post/3lbquote002"
    assert repost["reposted_by"] == "carol.bsky.social"
    assert repost["author_handle"] == "bernd.example.de"
    assert repost["created_at"] == "2026-11-30T11:59:30+00:00"
    # The hidden (!hide) post and the broken entry are not items.
    assert len(items) == 3


def test_facets_count_utf8_bytes_past_emoji_and_umlauts():
    [item] = [i for i in check_golden("bluesky_feed", "feed") if i["url"].endswith("3lbklima001")]
    [paragraph] = item["content"]["children"]
    kinds = [
        (n["type"], n.get("text") or n.get("label") or n.get("tag")) for n in paragraph["children"]
    ]
    assert kinds[0] == ("text", "Klimaschutz 🌍 in Köln, Düsseldorf: mehr unter ")
    link = paragraph["children"][1]
    assert link["href"] == "https://example.org/klima"
    assert link["children"] == [{"type": "text", "text": "example.org/klima"}]
    assert ("mention", "@bernd.example.de") in kinds
    assert ("hashtag", "Klima") in kinds
    assert item["metrics"] == {"replies": 3, "reposts": 5, "likes": 42, "quotes": 1}
    assert item["url"] == "https://bsky.app/profile/alice.bsky.social/post/3lbklima001"


def test_quotes_and_cards_become_nested_content_and_media_refs():
    items = check_golden("bluesky_feed", "feed")
    quote = items[0]["content"]["children"][1]
    assert quote["type"] == "quote"
    assert items[0]["media"] == [
        {"kind": "image", "url": "https://cdn.bsky.app/f2.jpg", "alt": "Karte"}
    ]
    card = items[2]
    assert card["media"][0]["url"] == "https://cdn.bsky.app/card.jpg"
    assert "Quoted post unavailable" in card["plain_text"]
    assert "The <b>report</b>" in card["plain_text"]  # text, never markup


def post(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "uri": "at://did:plc:mallory/app.bsky.feed.post/3lbhostile1",
        "cid": "bafy",
        "author": {"did": "did:plc:mallory", "handle": "mallory.example"},
        "record": {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": "2026-11-30T10:00:00Z",
        },
        "indexedAt": "2026-11-30T10:00:01Z",
        **extra,
    }


def test_hostile_posts_end_inert():
    text = "click \u202ehere\u202c\x00 now <script>alert(1)</script> " + "W" * 200_000
    facets = [
        {
            "index": {"byteStart": 6, "byteEnd": 13},
            "features": [{"$type": "app.bsky.richtext.facet#link", "uri": "javascript:alert(1)"}],
        },
        {
            "index": {"byteStart": 0, "byteEnd": 5},
            "features": [
                {
                    "$type": "app.bsky.richtext.facet#link",
                    "uri": "data:text/html,<script>x</script>",
                }
            ],
        },
        {
            "index": {"byteStart": 1, "byteEnd": 10**9},
            "features": [{"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:x"}],
        },
    ]
    raw = post(
        text,
        embed={
            "$type": "app.bsky.embed.external#view",
            "external": {
                "uri": "javascript:alert(2)",
                "title": "t",
                "description": "d",
                "thumb": "javascript:x",
            },
        },
    )
    raw["record"]["facets"] = facets
    raw["author"] = {
        "did": "did:plc:mallory",
        "handle": "mallory.example",
        "displayName": "\u202egnp.exe",
    }
    [item] = items_of([raw], "posts")
    html = str(render_html(item.content))
    for bad in ("javascript:", "data:", "<script", "\u202e", "\x00"):
        assert bad not in html
    assert "&lt;script&gt;" in html  # the words stay, as text
    assert "\u202e" not in item.plain_text
    assert "\x00" not in item.plain_text
    assert item.media == ()
    assert len(item.plain_text) <= 31_000  # the text is capped, not refused


def test_missing_or_strange_fields_drop_the_entry_not_the_page():
    good = post("fine")
    no_author = {**post("x"), "author": "nobody"}
    bad_handle = {**post("x"), "author": {"did": "nope", "handle": "<b>"}}
    not_a_post = {"uri": 7}
    items = items_of([good, no_author, bad_handle, not_a_post, "junk"], "posts")  # type: ignore[list-item]
    assert [i.plain_text for i in items] == ["fine"]


def test_a_future_date_is_not_believed_and_bad_metrics_are_dropped():
    [item] = items_of(
        [post("x", indexedAt="2999-01-01T00:00:00Z", likeCount=True, replyCount=2)], "posts"
    )
    assert item.created_at <= datetime.now(UTC)
    assert item.metrics == {"replies": 2}


def test_a_post_keeps_the_first_language_its_record_names():
    def with_langs(langs: object) -> dict[str, Any]:
        raw = post("Hochwasser in Köln")
        return {**raw, "record": {**raw["record"], "langs": langs}}

    cases = [["de", "en"], ["pt_br"], [], None, ["<b>"], "de", ["und"]]
    items = items_of([with_langs(langs) for langs in cases], "posts")
    assert [i.lang for i in items] == ["de", "pt-BR", "", "", "", "", ""]


def test_permalinks_use_the_handle_and_record_key():
    author = {"did": "did:plc:abc", "handle": "Alice.Example.COM"}
    assert permalink("at://did:plc:abc/app.bsky.feed.post/3kabc", author) == (
        "https://bsky.app/profile/alice.example.com/post/3kabc"
    )
    invalid = {"did": "did:plc:abc", "handle": "handle.invalid"}
    assert permalink("at://did:plc:abc/app.bsky.feed.post/3kabc", invalid) == (
        "https://bsky.app/profile/did:plc:abc/post/3kabc"
    )
    assert permalink("at://did:plc:abc/app.bsky.feed.like/3kabc", author) == ""


def test_a_rate_limit_reset_is_believed_up_to_an_hour():
    now = int(time.time())
    wait = _reset_in({"ratelimit-reset": str(now + 120)})
    assert wait is not None
    assert 100 < wait <= 120
    assert _reset_in({"ratelimit-reset": str(now + 10**9)}) == 3600
    assert _reset_in({"retry-after": "30"}) == 30
    assert _reset_in({}) is None


def test_a_labelled_posts_media_is_marked_sensitive_and_a_repost_names_the_reposter_beside_it():
    image = {"$type": "app.bsky.embed.images#view",
             "images": [{"fullsize": "https://cdn.bsky.app/x.jpg", "alt": "scene"}]}  # fmt: skip
    post = {
        "uri": "at://did:plc:abc/app.bsky.feed.post/3lbsens001",
        "author": {"did": "did:plc:abc", "handle": "alice.bsky.social"},
        "record": {"text": "Aftermath", "createdAt": "2026-11-30T12:00:00Z"},
        "indexedAt": "2026-11-30T12:00:00Z",
        "embed": image,
        "labels": [{"val": "graphic-media", "src": "did:plc:abc"}],
    }
    repost = {"post": {**post, "labels": []}, "reason": {
        "$type": "app.bsky.feed.defs#reasonRepost", "indexedAt": "2026-11-30T12:01:00Z",
        "by": {"did": "did:plc:car", "handle": "carol.bsky.social"}}}  # fmt: skip
    labelled, reposted = items_of([{"post": post}, repost], "feed")
    assert [m.sensitive for m in labelled.media] == [True]
    assert [m.sensitive for m in reposted.media] == [False]
    assert reposted.reposted_by == "carol.bsky.social"
    assert "carol" not in reposted.plain_text  # beside the text, not in it
