"""YouTube through the scheduler: channel feeds, Data API search, quota and key errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from app.core import db
from app.streams import polling, providers, services
from app.streams.providers.youtube import YouTubeProvider
from app.streams.types import SpecInvalid
from tests.egress.servers import Reply, Seen
from tests.streams.conftest import make_due, source_row, sources_of
from tests.streams.golden import fixture
from tests.streams.statuses import status, statuses_reply

CHANNEL = "UCq5v2KmCCcqlLZHemmtYzQA"
KEY = "AIza-test-key"


def _query(seen: Seen) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(seen.target).query).items()}


def _json(data: object, status: int = 200) -> Reply:
    return Reply(status, [("Content-Type", "application/json")], json.dumps(data).encode())


def _google_error(status: int, reason: str) -> Reply:
    return _json({"error": {"code": status, "message": "no", "errors": [{"reason": reason}]}},
                 status)  # fmt: skip


class FakeYouTube:
    def __init__(self) -> None:
        self.searches: list[dict[str, str]] = []
        self.videos_asked: list[dict[str, str]] = []
        self.search_reply: Reply | None = None  # None: the golden search page

    def feed(self, seen: Seen) -> Reply:
        query = _query(seen)
        if query.get("channel_id") not in (CHANNEL, None) or (
            "playlist_id" in query and query["playlist_id"] != "UULF" + CHANNEL[2:]
        ):
            return Reply(404, [("Content-Type", "text/html")], b"<html>404</html>")
        return Reply(
            200, [("Content-Type", "application/atom+xml")], fixture("youtube_channel.xml")
        )

    def search(self, seen: Seen) -> Reply:
        self.searches.append(_query(seen))
        if _query(seen).get("key") != KEY:
            return _google_error(400, "keyInvalid")
        return self.search_reply or Reply(
            200, [("Content-Type", "application/json")], fixture("youtube_search.json")
        )

    def videos(self, seen: Seen) -> Reply:
        self.videos_asked.append(_query(seen))
        return Reply(200, [("Content-Type", "application/json")], fixture("youtube_videos.json"))

    def channels(self, seen: Seen) -> Reply:
        if _query(seen).get("forHandle") == "@klimadesk":
            return _json({"items": [{"id": CHANNEL, "snippet": {"title": "Klimadesk (API)"}}]})
        return _json({"kind": "youtube#channelListResponse", "pageInfo": {"totalResults": 0}})

    def page(self, seen: Seen) -> Reply:
        html = (
            f'<html><head><link rel="canonical" href="https://www.youtube.com/channel/{CHANNEL}">'
            '<meta property="og:title" content="Klimadesk &amp; Co"></head></html>'
        )
        return Reply(200, [("Content-Type", "text/html")], html.encode())


@pytest.fixture
async def youtube(site, site_egress) -> AsyncIterator[FakeYouTube]:  # type: ignore[no-untyped-def]
    fake = FakeYouTube()
    site.routes["/feeds/videos.xml"] = fake.feed
    site.routes["/youtube/v3/search"] = fake.search
    site.routes["/youtube/v3/videos"] = fake.videos
    site.routes["/youtube/v3/channels"] = fake.channels
    site.routes["/@klimadesk"] = fake.page
    providers.register(YouTubeProvider(site=site.base, api=f"{site.base}/youtube/v3"))
    yield fake
    providers.unregister("youtube")


def _keyword(platforms: list[str], query: str = "climate") -> dict:
    return {"type": "keyword", "title": query, "spec": {"query": query, "platforms": platforms}}


def _accounts(*accounts: dict) -> dict:
    return {"type": "account_list", "title": "Channels", "spec": {"accounts": list(accounts)}}


async def test_a_keyword_search_stores_data_api_items_that_expire_after_30_days(people, youtube):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "youtube", KEY)
    column = await services.create_column(ws, _keyword(["youtube"]), actor_user_id=None)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "ready"
    [asked] = youtube.searches
    assert asked["type"] == "video"
    assert asked["order"] == "date"
    assert asked["q"] == "climate"
    assert "publishedAfter" not in asked  # the first poll takes the newest there are
    items = await db.fetch(
        "SELECT remote_id, fetched_at, expires_at, metrics, lang FROM feed_items"
        " WHERE workspace_id = $1 ORDER BY created_at_remote DESC",
        ws,
    )
    assert [i["remote_id"] for i in items] == ["Qm9udXM1aWQ", "aG9zdGlsZTI"]
    for item in items:
        assert item["expires_at"] - item["fetched_at"] < timedelta(days=30, seconds=5)
        assert item["expires_at"] - item["fetched_at"] > timedelta(days=29, hours=23)
    assert json.loads(items[0]["metrics"]) == {"views": 18034.0, "likes": 912.0, "replies": 77.0}
    # videos.list names each video's language (search.list does not); a hostile tag is none
    assert [i["lang"] for i in items] == ["en", ""]
    [details] = youtube.videos_asked
    assert details["part"] == "snippet,statistics"
    assert "defaultLanguage" in details["fields"]

    # The next poll asks only for what was published since the last one, minus the slack.
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    since = datetime.fromisoformat(youtube.searches[-1]["publishedAfter"].replace("Z", "+00:00"))
    polled = json.loads(row["cursor"])["since"]
    assert since == datetime.fromisoformat(polled.replace("Z", "+00:00")) - timedelta(hours=1)
    used = await db.fetchval(
        "SELECT units_used FROM provider_budget_ledger WHERE workspace_id = $1", ws
    )
    assert used == 2  # one ledger unit per search call


async def test_quota_exceeded_pauses_only_the_youtube_source_until_googles_midnight(
    people, youtube, statuses, site
):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "youtube", KEY)
    spec = _keyword(["youtube", "mastodon"], "#climate")
    spec["spec"]["instances"] = ["social.example"]
    column = await services.create_column(ws, spec, actor_user_id=None)
    youtube.search_reply = _google_error(403, "quotaExceeded")
    # the test's Mastodon stand-in asks for the source's query as it is ("tag@instance")
    site.routes["/api/v1/timelines/tag/climate%40social.example"] = statuses_reply([status(1)])
    assert await polling.run_due(seconds=5, jitter=0) == 2
    states = {
        r["provider"]: r
        for r in await db.fetch(
            "SELECT provider, state, last_error, extract(epoch FROM next_poll_at - now()) AS due_in"
            " FROM stream_sources WHERE workspace_id = $1",
            ws,
        )
    }
    assert states["mastodon"]["state"] == "ready"  # the others go on
    youtube_source = states["youtube"]
    assert youtube_source["state"] == "budget_paused"
    assert "quota" in youtube_source["last_error"]
    assert 0 < youtube_source["due_in"] <= 24 * 3600  # at the next midnight Pacific time
    # Our own ledger is marked spent too: a second YouTube search pauses without a request.
    other = await services.create_column(ws, _keyword(["youtube"], "floods"), actor_user_id=None)
    [second] = await sources_of(other)
    asked = len(youtube.searches)
    await polling.poll_source(ws, second, jitter=0)
    assert len(youtube.searches) == asked
    assert (await source_row(second))["state"] == "budget_paused"
    view = await db.fetchval(
        "SELECT count(*) FROM stream_column_sources WHERE column_id = $1", column
    )
    assert view == 2


async def test_an_invalid_key_is_an_error_at_once_and_no_key_never_spends_the_ledger(
    people, youtube
):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, _keyword(["youtube"]), actor_user_id=None)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "error"
    assert "YouTube key" in row["last_error"]
    assert youtube.searches == []
    assert (
        await db.fetchval("SELECT count(*) FROM provider_budget_ledger WHERE workspace_id = $1", ws)
        == 0
    )

    await services.set_credential(ws, "youtube", "not-the-key")
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "error"
    assert "refused the workspace's API key" in row["last_error"]
    assert row["due_in"] > 20 * 60  # retried at the back-off cap, not hammered


async def test_a_channel_is_followed_through_its_keyless_feed(people, youtube):
    ws, _owner = await people.workspace()
    column = await services.create_column(
        ws,
        _accounts({"provider": "youtube", "handle": f"https://www.youtube.com/channel/{CHANNEL}"}),
        actor_user_id=None,
    )
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["state"] == "ready"
    rows = await db.fetch(
        "SELECT remote_id, expires_at FROM feed_items WHERE workspace_id = $1", ws
    )
    assert sorted(r["remote_id"] for r in rows) == ["Xy7_-AbC012", "h0st1le_v1d"]
    assert all(r["expires_at"] is None for r in rows)
    assert youtube.searches == []  # no Data API, no ledger
    assert (
        await db.fetchval("SELECT count(*) FROM provider_budget_ledger WHERE workspace_id = $1", ws)
        == 0
    )


async def test_a_handle_resolves_keyless_from_the_page_and_shorts_can_be_left_out(
    people, youtube, site
):
    ws, _owner = await people.workspace()
    column = await services.create_column(
        ws,
        _accounts(
            {"provider": "youtube", "handle": "@KlimaDesk"},
            {"provider": "youtube", "handle": "@KlimaDesk", "shorts": False},
        ),
        actor_user_id=None,
    )
    sources = await sources_of(column)
    assert len(sources) == 2  # with and without Shorts are two feeds
    labels = await db.fetch(
        "SELECT label, actor_ref FROM stream_sources WHERE workspace_id = $1", ws
    )
    assert {r["actor_ref"] for r in labels} == {
        "youtube:@klimadesk",
        "youtube:@klimadesk#no-shorts",
    }
    assert {r["label"] for r in labels} == {"Klimadesk & Co"}
    for source in sources:
        await polling.poll_source(ws, source, jitter=0)
        assert (await source_row(source))["state"] == "ready"
    asked = [h.query for h in site.hits_of("/feeds/videos.xml")]
    assert {"playlist_id": ["UULF" + CHANNEL[2:]]} in asked
    assert {"channel_id": [CHANNEL]} in asked


async def test_with_a_key_a_handle_resolves_through_channels_list(people, youtube, site):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "youtube", KEY)
    await services.create_column(
        ws, _accounts({"provider": "youtube", "handle": "@klimadesk"}), actor_user_id=None
    )
    assert site.hits_of("/youtube/v3/channels")
    assert not site.hits_of("/@klimadesk")
    label = await db.fetchval("SELECT label FROM stream_sources WHERE workspace_id = $1", ws)
    assert label == "Klimadesk (API)"


async def test_a_channel_that_does_not_exist_is_an_error_source_not_a_failed_column(
    people, youtube
):
    ws, _owner = await people.workspace()
    column = await services.create_column(
        ws, _accounts({"provider": "youtube", "handle": "UC" + "x" * 22}), actor_user_id=None
    )
    [source] = await sources_of(column)
    row = await source_row(source)
    assert row["state"] == "error"
    assert "was not found" in row["last_error"]


async def test_shorts_is_only_for_youtube_and_only_a_boolean(people):
    ws, _owner = await people.workspace()
    for account in (
        {"provider": "youtube", "handle": "@klimadesk", "shorts": "no"},
        {"provider": "mastodon", "handle": "a@social.example", "shorts": False},
    ):
        with pytest.raises(SpecInvalid) as refused:
            await services.create_column(ws, _accounts(account), actor_user_id=None)
        assert "spec.accounts[0].shorts" in refused.value.errors
