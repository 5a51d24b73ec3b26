"""The Bluesky provider end to end: the scheduler polls BlueskyDemo (app/demo/bluesky.py)
through egress, EGRESS_DIVERT sending the real origins to it.

Covers searchPosts/getAuthorFeed/getTimeline/listNotifications, incremental polling that
stops at the known URI, sessions (one createSession across many polls, refresh after
expiry), keyless refusals and 429s mapped to source states, connections over the API, and
the demo's hostile posts ending inert.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from app.core import db
from app.demo.bluesky import DEMO_ACCOUNT, DEMO_APP_PASSWORD, BlueskyDemo, divert
from app.demo.content import DemoWorld
from app.demo.http import DemoResponse
from app.egress import Egress, use_egress
from app.safe_content import from_json, render_html
from app.streams import polling, queries, services, vault_contexts
from app.streams.providers import Credential, bluesky
from app.streams.providers.bluesky import items_of as normalise
from app.streams.types import SpecInvalid
from app.vault import unseal
from tests.fixtures import make_test_settings
from tests.streams.conftest import items_of, make_due, source_row, sources_of
from tests.streams.test_api import api

START = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PASSWORD = DEMO_APP_PASSWORD
ACCOUNT = DEMO_ACCOUNT  # a demo author: others mention and reply to her


class Clock:
    def __init__(self) -> None:
        self.now = START + timedelta(minutes=30)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def clock() -> Clock:
    return Clock()


@pytest.fixture
async def bsky(redis: Redis, clock: Clock) -> AsyncIterator[BlueskyDemo]:
    server = BlueskyDemo(DemoWorld(seed=7, start=START, clock=clock))
    bluesky._sessions.clear()  # sessions this process remembers from other tests' servers
    await server.start()
    egress = Egress(
        make_test_settings(
            egress_divert=divert(server.port),
            egress_host_rate=1000.0,
            egress_host_burst=1000,
        ),
        redis,
        budget_wait=5.0,
    )
    use_egress(egress)
    yield server
    use_egress(None)
    await egress.aclose()
    await server.stop()


def hits(server: BlueskyDemo, nsid: str) -> int:
    return len(server.hits_of(f"/xrpc/{nsid}"))


async def keyword_column(ws: int, query: str = "climate") -> tuple[int, int]:
    column = await services.create_column(
        ws,
        {"type": "keyword", "title": query, "spec": {"query": query, "platforms": ["bluesky"]}},
        actor_user_id=None,
    )
    [source] = await sources_of(column)
    return column, source


async def connected_column(ws: int, kinds: list[str]) -> tuple[int, int, list[int]]:
    connection = await services.connect_account(
        ws, {"provider": "bluesky", "handle": ACCOUNT, "secret": PASSWORD}, actor_user_id=None
    )
    column = await services.create_column(
        ws,
        {
            "type": "platform_feed",
            "title": "Sky",
            "spec": {"connection_id": connection, "kinds": kinds},
        },
        actor_user_id=None,
    )
    return connection, column, await sources_of(column)


async def stored(column: int) -> list[dict]:
    rows = await db.fetch(
        "SELECT i.* FROM feed_item_columns f JOIN feed_items i ON i.id = f.item_id"
        " WHERE f.column_id = $1 ORDER BY f.created_at_remote DESC, f.dedup_key DESC",
        column,
    )
    return [dict(r) for r in rows]


# Keyword search --------------------------------------------------------------------------------


async def test_a_keyword_column_searches_latest_posts_and_stores_them_in_order(people, bsky):
    ws, _owner = await people.workspace()
    column, source = await keyword_column(ws)

    assert await polling.poll_source(ws, source, jitter=0)

    assert (await source_row(source))["state"] == "ready"
    [search] = bsky.hits_of("/xrpc/app.bsky.feed.searchPosts")
    assert search.query["sort"] == ["latest"]
    assert search.query["q"] == ["climate"]
    items = await stored(column)
    assert len(items) >= 10
    times = [i["created_at_remote"] for i in items]
    assert times == sorted(times, reverse=True)
    for item in items:
        assert item["url"].startswith("https://bsky.app/profile/")
        assert "/post/" in item["url"]
        assert item["remote_id"].startswith("at://did:plc:")
        metrics = json.loads(item["metrics"])
        assert set(metrics) == {"replies", "reposts", "likes", "quotes"}
        assert "climate" in item["plain_text"].lower() or "klima" in item["plain_text"].lower()
    hashtags = [
        n for i in items for p in json.loads(i["content"])["children"] for n in p.get("children", [])
        if n["type"] == "hashtag"
    ]  # fmt: skip
    assert {
        "tag": "climate",
        "type": "hashtag",
        "href": "https://bsky.app/hashtag/climate",
    } in hashtags


async def test_posts_are_stored_in_the_language_their_record_names(people, bsky):
    ws, _owner = await people.workspace()
    column, source = await keyword_column(ws)
    assert await polling.poll_source(ws, source, jitter=0)
    written = {bsky.uri(p): p.lang for p in bsky.world.posts("bluesky")}
    items = await stored(column)
    assert items
    assert [i["lang"] for i in items] == [written[i["remote_id"]] for i in items]
    assert len({i["lang"] for i in items}) > 1  # the demo talks about climate in several


async def test_the_next_poll_stops_at_the_first_known_post(people, bsky, clock):
    ws, _owner = await people.workspace()
    column, source = await keyword_column(ws)
    await polling.poll_source(ws, source, jitter=0)
    first = await stored(column)
    cursor = json.loads((await source_row(source))["cursor"])
    assert cursor == {"key": first[0]["remote_id"]}

    # Nothing new: one call, nothing stored twice.
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert hits(bsky, "app.bsky.feed.searchPosts") == 2
    assert len(await stored(column)) == len(first)

    # An hour passes: the poll pages back until it meets the post it knew, no further.
    clock.now += timedelta(hours=1)
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    calls = bsky.hits_of("/xrpc/app.bsky.feed.searchPosts")[2:]
    assert len(calls) >= 2  # the new posts did not fit one page of 40
    assert "cursor" not in calls[0].query
    assert calls[1].query["cursor"]
    after = await stored(column)
    assert len(after) > len(first)
    ids = [i["remote_id"] for i in after]
    assert len(ids) == len(set(ids))
    assert ids[-len(first) :] == [i["remote_id"] for i in first]  # the old ones, still in order


async def test_keyless_search_refused_makes_the_source_unsupported_until_a_key_is_added(
    people, bsky
):
    bsky.keyless_search = False
    ws, _owner = await people.workspace()
    column, source = await keyword_column(ws)

    await polling.poll_source(ws, source, jitter=0)

    row = await source_row(source)
    assert row["state"] == "unsupported"
    assert "app password" in row["last_error"]
    assert (await queries.column_view(ws, column)).aggregate_state == "error"  # type: ignore[union-attr]

    # A workspace key: the source comes back and searches signed in.
    await services.set_credential(ws, "bluesky", f"desk.bsky.social {PASSWORD}")
    assert (await source_row(source))["state"] == "pending"
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["state"] == "ready"
    assert bsky.session_calls() == 1
    assert bsky.hits_of("/xrpc/app.bsky.feed.searchPosts")[-1].headers["authorization"]
    assert await items_of(column)


async def test_a_429_is_rate_limited_until_the_ratelimit_reset(people, bsky):
    ws, _owner = await people.workspace()
    _column, source = await keyword_column(ws)
    reset = int(datetime.now(UTC).timestamp()) + 240
    bsky.fail_next.append(
        DemoResponse(
            429,
            {"ratelimit-limit": "3000", "ratelimit-remaining": "0", "ratelimit-reset": str(reset)},
            json={"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
        )
    )

    await polling.poll_source(ws, source, jitter=0)

    row = await source_row(source)
    assert row["state"] == "rate_limited"
    assert 200 < row["due_in"] <= 241
    assert row["consecutive_failures"] == 0


async def test_server_errors_and_broken_answers_are_failures_with_reasons(people, bsky):
    ws, _owner = await people.workspace()
    _column, source = await keyword_column(ws)
    bsky.fail_next.append(DemoResponse(502, body="upstream down"))
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("pending", 1)
    assert "502" in row["last_error"]

    bsky.fail_next.append(DemoResponse(200, body="<html>not json</html>"))
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["consecutive_failures"] == 2
    assert "not JSON" in row["last_error"]


# Accounts ---------------------------------------------------------------------------------------


async def test_an_account_column_resolves_the_handle_and_reads_its_feed_keyless(people, bsky):
    ws, _owner = await people.workspace()
    column = await services.create_column(
        ws,
        {
            "type": "account_list",
            "title": "People",
            "spec": {"accounts": [{"provider": "bluesky", "handle": "@Jonas.Brandt.bsky.social"},
                                  {"provider": "bluesky", "handle": "nobody.bsky.social"}]},
        },
        actor_user_id=None,
    )  # fmt: skip
    found, missing = sorted(await sources_of(column))
    assert (await source_row(missing))["state"] == "error"

    await polling.poll_source(ws, found, jitter=0)

    assert (await source_row(found))["state"] == "ready"
    [feed] = bsky.hits_of("/xrpc/app.bsky.feed.getAuthorFeed")
    assert feed.query["actor"][0].startswith("did:plc:")
    assert "authorization" not in feed.headers
    items = await stored(column)
    assert items
    for item in items:
        # Its posts, and the posts it reposted (kept as the originals, with the reposter).
        assert "jonas.brandt.bsky.social" in (item["author_handle"], item["reposted_by"])
    assert any(i["reposted_by"] for i in items)


# A connected account: sessions, home, mentions --------------------------------------------------


async def test_a_connected_account_signs_in_once_across_many_polls(people, bsky):
    ws, _owner = await people.workspace()
    _connection, column, sources = await connected_column(ws, ["home", "mentions"])
    assert bsky.session_calls() == 1  # connecting checked the password

    for _ in range(3):
        await make_due(*sources)
        for source in sources:
            await polling.poll_source(ws, source, jitter=0)
            assert (await source_row(source))["state"] == "ready"

    assert bsky.session_calls() == 1
    assert hits(bsky, "com.atproto.server.refreshSession") == 0
    assert hits(bsky, "app.bsky.feed.getTimeline") == 3
    assert hits(bsky, "app.bsky.notification.listNotifications") == 3
    # The sealed secret holds the session, never in the clear.
    sealed = await db.fetchval(
        "SELECT credentials FROM stream_connections WHERE workspace_id = $1", ws
    )
    assert PASSWORD.encode() not in sealed
    assert b"accessJwt" not in sealed
    assert await stored(column)


async def test_a_connection_stored_with_its_password_signs_in_on_the_first_poll_only(people, bsky):
    ws, _owner = await people.workspace()  # as the demo seeds it: the password itself
    connection = await services.add_connection(ws, "bluesky", ACCOUNT, secret=PASSWORD)
    column = await services.create_column(
        ws,
        {"type": "platform_feed", "title": "Sky", "spec": {"connection_id": connection}},
        actor_user_id=None,
    )
    [home] = await sources_of(column)
    for _ in range(3):
        await make_due(home)
        await polling.poll_source(ws, home, jitter=0)
    assert (await source_row(home))["state"] == "ready"
    assert bsky.session_calls() == 1
    sealed = await db.fetchval(
        "SELECT credentials FROM stream_connections WHERE id = $1", connection
    )
    stored_secret = json.loads(unseal(sealed, context=vault_contexts.connection(ws, connection)))
    assert stored_secret["session"]["handle"] == ACCOUNT


async def test_an_expired_session_is_refreshed_not_signed_in_again(people, bsky):
    ws, _owner = await people.workspace()
    _connection, _column, [home] = await connected_column(ws, ["home"])
    await polling.poll_source(ws, home, jitter=0)

    bsky.expire_sessions()  # the access token is refused from now on
    await make_due(home)
    await polling.poll_source(ws, home, jitter=0)
    assert (await source_row(home))["state"] == "ready"
    assert hits(bsky, "com.atproto.server.refreshSession") == 1

    # The refreshed tokens were sealed back: the next poll uses them as they are.
    await make_due(home)
    await polling.poll_source(ws, home, jitter=0)
    assert hits(bsky, "com.atproto.server.refreshSession") == 1
    assert bsky.session_calls() == 1


async def test_a_session_near_its_end_is_refreshed_before_the_call(people, bsky):
    bsky.access_ttl = 30  # shorter than the provider's safety margin
    ws, _owner = await people.workspace()
    _connection, _column, [home] = await connected_column(ws, ["home"])
    await polling.poll_source(ws, home, jitter=0)
    assert hits(bsky, "com.atproto.server.refreshSession") == 1
    timeline = bsky.hits_of("/xrpc/app.bsky.feed.getTimeline")
    assert len(timeline) == 1  # no refused call first
    assert bsky.session_calls() == 1


async def test_mentions_are_mention_and_reply_notifications_hydrated_as_posts(people, bsky):
    ws, _owner = await people.workspace()
    _connection, column, [mentions] = await connected_column(ws, ["mentions"])
    await polling.poll_source(ws, mentions, jitter=0)

    [listed] = bsky.hits_of("/xrpc/app.bsky.notification.listNotifications")
    assert sorted(listed.query["reasons"]) == ["mention", "reply"]
    assert bsky.hits_of("/xrpc/app.bsky.feed.getPosts")
    items = await stored(column)
    assert items
    for item in items:
        assert item["author_handle"] != ACCOUNT
        content = render_html(from_json(item["content"]))
        assert "maya.okafor.bsky.social" in str(content) or "Replying to" in item["plain_text"]
        assert set(json.loads(item["metrics"])) == {"replies", "reposts", "likes", "quotes"}


async def connect(ws: int, secret: str) -> int:
    return await services.connect_account(
        ws, {"provider": "bluesky", "handle": ACCOUNT, "secret": secret}, actor_user_id=None
    )


async def test_a_wrong_app_password_is_refused_with_a_clear_message(people, bsky):
    ws, _owner = await people.workspace()
    with pytest.raises(SpecInvalid) as caught:
        await connect(ws, "hunter2")
    assert "app password" in caught.value.errors["secret"]
    assert bsky.session_calls() == 0  # an account password is never sent

    bsky.fail_next.append(
        DemoResponse(401, json={"error": "AuthenticationRequired", "message": "Invalid password"})
    )
    with pytest.raises(SpecInvalid) as refused:
        await connect(ws, PASSWORD)
    assert "did not accept" in refused.value.errors["secret"]
    assert await queries.connections(ws) == []


async def test_connecting_over_the_api_stores_only_configured(client, people, bsky):
    person, auth = await api(people, "admin")
    response = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "bluesky", "handle": f"@{ACCOUNT}", "secret": PASSWORD},
        headers=auth,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["provider"], body["handle"], body["configured"]) == ("bluesky", ACCOUNT, True)
    assert PASSWORD not in response.text

    refused = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "bluesky", "handle": "", "secret": PASSWORD},
        headers=auth,
    )
    assert refused.status_code == 422
    assert set(refused.json()["errors"]) == {"handle"}

    # Connected again (a new app password): the same connection, a fresh session.
    again = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "bluesky", "handle": ACCOUNT, "secret": "wxyz-wxyz-wxyz-wxyz"},
        headers=auth,
    )
    assert again.json()["id"] == body["id"]
    assert bsky.session_calls() == 2

    _editor, editor_auth = await api(people, "editor", person.workspace_id)
    forbidden = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "bluesky", "handle": ACCOUNT, "secret": PASSWORD},
        headers=editor_auth,
    )
    assert forbidden.status_code == 403


# Hostile content --------------------------------------------------------------------------------


async def test_the_demos_hostile_posts_end_inert(people, bsky):
    ws, _owner = await people.workspace()
    column, source = await keyword_column(ws, "attached")  # the demo's "Invoice ... attached"
    hostile = [p for p in bsky.world.posts("bluesky") if p.hostile and p.repost_of is None]
    assert hostile
    # Every hostile post, as the demo writes it, through the provider's normaliser.
    items = normalise([bsky.post_view(p) for p in hostile], "posts")
    assert len(items) == len(hostile)
    # ... and those a search finds, through the whole poll into the database.
    await polling.poll_source(ws, source, jitter=0)
    rows = await stored(column)
    assert rows
    documents = [i.content for i in items] + [from_json(r["content"]) for r in rows]
    for document in documents:
        html = str(render_html(document))
        # Markup arrives as words at most: no element, attribute or script link of its own.
        for bad in ("<script", "<img", "<svg", "<iframe", "<style", "<meta", "<form", "<base",
                    'href="javascript:', 'onerror="', 'onload="', "\u202e"):  # fmt: skip
            assert bad not in html, (bad, html[:300])


def test_a_credential_never_compares_or_prints_its_save_hook():
    async def save(secret: str) -> None: ...

    hooked = Credential(secret="x", save=save)
    assert hooked == Credential(secret="x")
    assert "save" not in repr(hooked)
