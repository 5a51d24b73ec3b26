"""The demo world: deterministic, flowing, and holding every kind of post the wall must handle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.demo.content import ARTICLE_ORIGIN, ARTICLES, HISTORY, PLATFORMS, DemoWorld

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _world(seed: int = 7, minutes: float = 0) -> DemoWorld:
    return DemoWorld(seed, START, clock=lambda: START + timedelta(minutes=minutes))


def test_the_same_seed_makes_the_same_world_and_another_seed_another() -> None:
    first, again, other = _world(7), _world(7), _world(8)
    for platform in PLATFORMS:
        assert first.posts(platform) == again.posts(platform)
    assert first.posts("bluesky") != other.posts("bluesky")


def test_a_history_exists_and_new_posts_keep_coming() -> None:
    world = _world()
    before = {platform: world.posts(platform) for platform in PLATFORMS}
    later = {
        platform: world.posts(platform, START + timedelta(minutes=2)) for platform in PLATFORMS
    }
    assert sum(len(posts) for posts in before.values()) in range(HISTORY - 5, HISTORY + 2)
    new = sum(len(later[p]) - len(before[p]) for p in PLATFORMS)
    assert 20 <= new <= 28  # 12 a minute
    for platform in PLATFORMS:
        posts = later[platform]
        assert posts[: len(posts) - len(before[platform])][-1].created_at > START
        assert posts == sorted(posts, key=lambda p: p.created_at, reverse=True)
        assert [p.id for p in posts] == sorted((p.id for p in posts), reverse=True)
        assert all(p.created_at.tzinfo is UTC for p in posts)


def test_post_finds_published_posts_only() -> None:
    world = _world()
    newest = world.posts("mastodon")[0]
    assert world.post(newest.id) == newest
    assert world.post(newest.id + 50) is None  # not yet published
    assert world.post(0) is None


@pytest.mark.parametrize("seed", [1, 7, 42])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platform_has_climate_hostile_media_and_links(seed: int, platform: str) -> None:
    posts = _world(seed).posts(platform)
    climate = [p for p in posts if "climate" in p.topics]
    assert climate
    assert all("climate" in p.hashtags for p in climate if p.reply_to is None)
    assert {p.lang for p in climate} >= {"en", "de"} or platform == "youtube"
    assert any(p.hostile for p in posts)
    assert any(len(word) >= 10_000 for p in posts for word in p.text.split()) or any(
        "\u202e" in p.text or "<script>" in p.text for p in posts
    )
    assert any(p.media for p in posts)
    assert any(link.startswith(ARTICLE_ORIGIN) for p in posts for link in p.links)
    assert len({p.lang for p in posts}) >= 4


@pytest.mark.parametrize("platform", ["bluesky", "mastodon"])
def test_threads_reposts_and_quotes_point_at_earlier_posts_on_the_same_platform(
    platform: str,
) -> None:
    world = _world()
    posts = world.posts(platform)
    replies = [p for p in posts if p.reply_to is not None]
    reposts = [p for p in posts if p.repost_of is not None]
    assert replies
    assert reposts
    for post in posts:
        for ref in (post.reply_to, post.quote_of, post.repost_of):
            if ref is not None:
                parent = world.post(ref)
                assert parent is not None
                assert parent.platform == platform
                assert parent.created_at < post.created_at
    for repost in reposts:
        original = world.post(repost.repost_of)  # type: ignore[arg-type]
        assert repost.reposted_by is not None
        assert repost.reposted_by != repost.author
        assert original is not None
        assert (repost.text, repost.author) == (
            original.text,
            original.author,
        )
    longest = max(_thread_length(world, p.id) for p in replies)
    assert longest >= 8  # long threads exist


def _thread_length(world: DemoWorld, post_id: int) -> int:
    length, post = 1, world.post(post_id)
    while post is not None and post.reply_to is not None:
        post, length = world.post(post.reply_to), length + 1
    return length


def test_mastodon_has_two_instances_and_content_warnings() -> None:
    posts = _world().posts("mastodon")
    assert len({p.instance for p in posts}) >= 2
    assert all(p.author.handle.endswith("@" + p.instance) for p in posts)
    assert any(p.content_warning for p in posts)


def test_youtube_posts_are_videos_with_titles() -> None:
    posts = _world().posts("youtube")
    assert all(p.title and p.media and p.media[0].kind == "video" for p in posts)


def test_authors_are_per_platform_and_articles_link_to_the_site() -> None:
    world = _world()
    for platform in PLATFORMS:
        authors = world.authors(platform)
        assert authors
        assert all(a.platform == platform for a in authors)
        assert len({a.handle for a in authors}) == len(authors)
    assert {a.lang for a in ARTICLES} >= {"en", "de", "fr", "ja", "ar", "uk"}
    with pytest.raises(ValueError):
        world.posts("myspace")
