"""The demo world in-process: seeded like `make demo`, polled by the real scheduler.

The servers run on this loop, the process's Egress diverts the real origins
to them (as `make demo` does with EGRESS_DIVERT), and `polling.run_due` - the
worker's cron path - fills the columns.
"""

from __future__ import annotations

import base64
import re
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from httpx import AsyncClient

from app.accounts import services as accounts
from app.core import db
from app.core.config import Settings
from app.demo.bluesky import BlueskyDemo
from app.demo.content import ARTICLE_ORIGIN, DemoWorld
from app.demo.mastodon import MastodonDemo
from app.demo.runner import DemoRefused, banner, check_demo_database, check_demo_ports
from app.demo.sites import WIRE_SECONDS
from app.demo.world import COLUMNS, PORT_BASE, DemoLogin, RunningWorld, seed, serve_world
from app.egress import egress, use_egress
from app.media.signing import key_of, sign
from app.streams import polling
from app.streams.providers import provider_for
from app.streams.types import SourceKind
from tests.egress.conftest import MakeEgress
from tests.factories import sign_in
from tests.fixtures import make_test_settings

START = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


class Clock:
    def __init__(self) -> None:
        self.now = START + timedelta(minutes=5)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def demo(
    services: None, make_egress: MakeEgress, clock: Clock
) -> AsyncIterator[RunningWorld]:
    async with serve_world(DemoWorld(7, START, clock=clock)) as running:
        use_egress(make_egress(egress_divert=running.divert))
        yield running
        use_egress(None)


async def _due_now() -> None:
    await db.fetch("UPDATE stream_sources SET next_poll_at = now(), lease_until = NULL")


async def _items(column_id: int) -> list[dict[str, str]]:
    rows = await db.fetch(
        "SELECT i.provider, i.url, i.plain_text FROM feed_item_columns f"
        " JOIN feed_items i ON i.id = f.item_id WHERE f.column_id = $1"
        " ORDER BY f.created_at_remote DESC",
        column_id,
    )
    return [dict(row) for row in rows]


def _searchable() -> list[str]:
    names = COLUMNS[0]["spec"]["platforms"]
    return [n for n in names if (p := provider_for(n)) and SourceKind.SEARCH in p.kinds]


async def test_seed_makes_a_workspace_a_person_can_sign_in_to(demo: RunningWorld) -> None:
    login = await seed()
    session = await accounts.sign_in(
        login.email, login.password, ip="127.0.0.1", user_agent="demo test"
    )
    assert session.token
    assert "The Riverside Courier" in login.columns
    assert "Reporters" in login.columns  # at least its RSS feed
    for title in login.left_out:  # left out only for want of a provider
        column = next(c for c in COLUMNS if c["title"] == title)
        assert column["type"] != "account_list" or not any(
            a["provider"] == "rss" for a in column["spec"]["accounts"]
        )
    keys = await db.fetchval(
        "SELECT count(*) FROM stream_credentials WHERE workspace_id = $1", login.workspace_id
    )
    connections = await db.fetchval(
        "SELECT count(*) FROM stream_connections WHERE workspace_id = $1", login.workspace_id
    )
    assert (keys, connections) == (1, 2)


async def test_the_rss_column_fills_through_the_scheduler_and_keeps_flowing(
    demo: RunningWorld, clock: Clock
) -> None:
    login = await seed()
    column = login.columns["The Riverside Courier"]
    assert await polling.run_due(seconds=20, jitter=0) >= 1
    first = await _items(column)
    assert len(first) == 30
    assert all(item["url"].startswith(f"{ARTICLE_ORIGIN}/news/") for item in first)

    clock.now += timedelta(seconds=WIRE_SECONDS * 3)  # the wire publishes three more
    await _due_now()
    await polling.run_due(seconds=20, jitter=0)
    later = await _items(column)
    assert len(later) == 33
    assert later[3:] == first
    hits = demo.servers["courier"].hits_of("/feeds/news.rss")
    assert hits[0].headers["host"] == "courier.example"


async def test_the_climate_keyword_column_merges_every_platform(
    demo: RunningWorld, clock: Clock
) -> None:
    platforms = _searchable()
    if not platforms:
        pytest.skip("no search provider is registered yet (bluesky, mastodon, youtube)")
    login = await seed()
    column = login.columns["Climate, everywhere"]
    await polling.run_due(seconds=30, jitter=0)
    items = await _items(column)
    assert {item["provider"] for item in items} == set(platforms)
    assert all("climate" in item["plain_text"].lower() for item in items)
    urls = [item["url"] for item in items]
    assert len(urls) == len(set(urls))  # a post seen on several instances is one item
    if "mastodon" in platforms:  # hashtag timelines are per instance: both were asked
        for instance in ("mastodon.social", "chaos.social"):
            assert demo.servers[instance].hits_of("/api/v1/timelines/tag/climate")

    clock.now += timedelta(minutes=3)  # the world goes on posting
    await _due_now()
    await polling.run_due(seconds=30, jitter=0)
    assert len(await _items(column)) > len(items)


def test_the_demo_refuses_a_database_it_would_empty() -> None:
    with pytest.raises(DemoRefused, match="_demo"):
        check_demo_database(make_test_settings())
    demo_db = make_test_settings(
        database_url="postgresql://newsdesk_app@127.0.0.1:5432/newsdesk_demo"
    )
    check_demo_database(demo_db)


def test_the_demo_refuses_ports_another_server_holds_and_says_which_to_use() -> None:
    """`make run` on 8000, or a demo already running: the banner would point at it."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        with socket.socket() as spare:
            spare.bind(("127.0.0.1", 0))
            free = spare.getsockname()[1]
        with pytest.raises(DemoRefused, match=f"port {taken} is taken.*PORT={taken + 1} make demo"):
            check_demo_ports(make_test_settings(port=taken), PORT_BASE)
        with pytest.raises(DemoRefused, match=f"ports {taken} to .*--port-base"):
            check_demo_ports(make_test_settings(port=free), taken)


async def test_every_picture_a_column_shows_is_served_by_the_demo(demo: RunningWorld) -> None:
    """Offline, a thumbnail at an origin no demo server answers for is a broken image (the
    media proxy's 502): YouTube's thumbnails live on i.ytimg.com."""
    await seed()
    await polling.run_due(seconds=30, jitter=0)
    urls = {
        row["url"]
        for row in await db.fetch(
            "SELECT DISTINCT m->>'url' AS url FROM feed_items, jsonb_array_elements(media) m"
        )
    }
    assert any("ytimg" in url for url in urls) or "youtube" not in _searchable()
    served = {entry.split("=", 1)[0] for entry in demo.divert}
    for url in urls:
        origin = "/".join(url.split("/", 3)[:3])
        assert origin in served, url
        fetched = await egress().fetch(url)
        assert fetched.content.startswith(b"\x89PNG"), url


def test_the_banner_names_each_column_apart_even_with_a_comma_in_a_title() -> None:
    login = DemoLogin("demo@newsdesk.example", "pw", 1, {"Climate, everywhere": 1, "Reporters": 2})
    running = RunningWorld(DemoWorld(7, START))
    text = banner(make_test_settings(), login, running)
    assert "Columns   Climate, everywhere · Reporters" in text


async def test_the_demo_wall_loads_every_picture_and_avatar_through_the_media_proxy(
    demo: RunningWorld, client: AsyncClient, settings: Settings
) -> None:
    """The wall showed one broken picture on every load: a hostile post's `<img src="x">`,
    resolved against its chaos.social status, went to the proxy as https://chaos.social/x,
    which the demo's Mastodon server does not serve (the proxy's 404, a console error).
    The accounts' avatars pointed at nothing the demo serves either."""
    login = await seed(password="demo-password")
    await polling.run_due(seconds=30, jitter=0)
    await sign_in(client, login.email, "demo-password")
    page = await client.get("/wall")
    shown = set(re.findall(r'src="(/media/[\w-]+/[\w-]+)"', page.text))
    key = key_of(settings)
    pictures = {sign(url, key) for url in (*_avatars(demo), f"{ARTICLE_ORIGIN}/media/protest.png")}
    assert len(shown) > 3
    for path in sorted(shown | pictures):
        response = await client.get(path)
        payload = base64.urlsafe_b64decode(path.rsplit("/", 1)[1] + "==").decode()
        assert response.status_code == 200, payload
        assert response.headers["content-type"] == "image/png", payload


def _avatars(demo: RunningWorld) -> set[str]:
    """Every account's picture as the demo's Mastodon and Bluesky servers hand it out."""
    mastodon = demo.servers["chaos.social"]
    bluesky = demo.servers["bluesky"]
    assert isinstance(mastodon, MastodonDemo)
    assert isinstance(bluesky, BlueskyDemo)
    toots, skeets = demo.world.posts("mastodon")[:20], demo.world.posts("bluesky")[:20]
    return {mastodon.account(p.author)["avatar"] for p in toots} | {
        bluesky.profile(p.author)["avatar"] for p in skeets
    }
