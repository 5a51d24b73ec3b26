"""BlueskyDemo's own wire format: what the provider tests and `make demo` rely on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.demo.bluesky import BlueskyDemo
from app.demo.content import DemoWorld

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_every_tag_and_mention_facet_covers_exactly_its_own_word() -> None:
    """'#climat' must not land on the '#climat' at the start of '#climate' (the wall showed
    '#climat' linked and a stray 'e' when a French post carried both tags)."""
    world = DemoWorld(seed=7, start=START, clock=lambda: START + timedelta(minutes=60))
    server = BlueskyDemo(world)
    checked = 0
    for post in world.posts("bluesky"):
        text = post.text.encode()
        for facet in server.record(post)["facets"]:
            feature = facet["features"][0]
            start, end = facet["index"]["byteStart"], facet["index"]["byteEnd"]
            if feature["$type"].endswith("#tag"):
                assert text[start:end].decode() == f"#{feature['tag']}"
            elif not feature["$type"].endswith("#mention"):
                continue
            after = text[end : end + 1].decode(errors="replace")
            assert not after.isalnum(), (post.text, facet)
            assert after != "_", (post.text, facet)
            checked += 1
    assert checked > 50
