"""The YouTube demo server, read by the real YouTube provider at YouTube's real addresses
(EGRESS_DIVERT sends them to loopback): the demo and the test suite share one fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from app.core import db
from app.demo.content import DemoWorld
from app.demo.youtube import YouTubeDemo, channel_id, is_short, video_id
from app.egress import use_egress
from app.safe_content import from_json
from app.streams import polling, providers, services
from app.streams.providers import Actor, Credential, FetchRequest
from app.streams.providers.youtube import NO_SHORTS
from tests.streams.golden import assert_inert

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
NOW = START + timedelta(minutes=20)
KEY = "AIza-demo"


@pytest.fixture
async def demo(make_egress) -> AsyncIterator[YouTubeDemo]:  # type: ignore[no-untyped-def]
    world = DemoWorld(seed=7, start=START, clock=lambda: NOW)
    async with YouTubeDemo(world, valid_keys=frozenset({KEY})) as server:
        loopback = f"http://127.0.0.1:{server.port}"
        use_egress(
            make_egress(
                egress_divert=[
                    f"https://www.youtube.com={loopback}",
                    f"https://www.googleapis.com={loopback}",
                ]
            )
        )
        providers.unregister("youtube")  # the shipped provider, at its real addresses
        yield server
        use_egress(None)


def _youtube():  # type: ignore[no-untyped-def]
    provider = providers.provider_for("youtube")
    assert provider is not None
    return provider


async def test_search_finds_climate_videos_newest_first_with_metrics(demo):
    page = await _youtube().search(Credential(KEY), FetchRequest(query="climate", limit=10))
    assert 0 < len(page.items) <= 10
    times = [i.created_at for i in page.items]
    assert times == sorted(times, reverse=True)
    posts = {video_id(p): p for p in demo.world.posts("youtube")}
    for item in page.items:
        post = posts[item.remote_id]
        assert "climate" in item.plain_text.lower()
        assert item.plain_text.startswith(post.title)
    assert all(set(i.metrics) == {"views", "likes", "replies"} for i in page.items)
    assert all(i.expires_at is not None for i in page.items)
    # videos.list names the language: the text's where the uploader set it, else the speech's
    assert [i.lang for i in page.items] == [posts[i.remote_id].lang for i in page.items]
    [search] = [h for h in demo.hits if h.path == "/youtube/v3/search"]
    assert search.origin == "https://www.googleapis.com"  # reached through the divert


async def test_every_channel_feed_normalises_and_hostile_videos_end_inert(demo):
    provider = _youtube()
    seen_hostile = False
    for author in demo.world.authors("youtube"):
        actor = await provider.resolve_handle(None, author.handle.lower())
        assert actor is not None
        assert actor.ref == f"channel:{channel_id(author)}"
        page = await provider.author_feed(None, FetchRequest(actor=actor))
        assert page.dropped == 0
        assert_inert(list(page.items))
        seen_hostile |= any("<" in i.plain_text for i in page.items)
    assert seen_hostile  # the world's hostile markup reached the provider, as text


async def test_without_shorts_the_uploads_playlist_leaves_shorts_out(demo):
    provider = _youtube()
    author = next(
        a for a in demo.world.authors("youtube")
        if any(is_short(p) for p in demo.world.posts("youtube") if p.author == a)
    )  # fmt: skip
    actor = await provider.resolve_handle(None, author.handle.lower() + NO_SHORTS)
    assert actor == Actor(
        ref=f"playlist:UULF{channel_id(author)[2:]}",
        handle=author.handle.lower() + NO_SHORTS,
        display_name=author.display_name,
    )
    without = await provider.author_feed(None, FetchRequest(actor=actor))
    everything = await provider.author_feed(
        None, FetchRequest(actor=Actor(ref=f"channel:{channel_id(author)}", handle=""))
    )
    assert "/shorts/" not in " ".join(i.url for i in without.items)
    assert any("/shorts/" in i.url for i in everything.items)


async def test_a_keyword_column_pauses_on_quota_errors_on_demand(demo, people):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "youtube", KEY)
    column = await services.create_column(
        ws,
        {"type": "keyword", "title": "Climate",
         "spec": {"query": "climate", "platforms": ["youtube"]}},
        actor_user_id=None,
    )  # fmt: skip
    [source] = [
        r["source_id"]
        for r in await db.fetch(
            "SELECT source_id FROM stream_column_sources WHERE column_id = $1", column
        )
    ]
    await polling.poll_source(ws, source, jitter=0)
    rows = await db.fetch("SELECT remote_id, content FROM feed_items WHERE workspace_id = $1", ws)
    known = {video_id(p) for p in demo.world.posts("youtube")}
    assert rows
    assert {r["remote_id"] for r in rows} <= known
    for row in rows:
        from_json(row["content"])  # stored as a valid AST

    demo.quota_exceeded = True
    await db.fetch("UPDATE stream_sources SET next_poll_at = now() WHERE id = $1", source)
    await polling.poll_source(ws, source, jitter=0)
    state = await db.fetchval("SELECT state FROM stream_sources WHERE id = $1", source)
    assert state == "budget_paused"
