"""X and Instagram through the scheduler, against loopback servers in their wire formats."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from app.core import db, i18n
from app.streams import polling, providers, services
from app.streams.providers.instagram import InstagramProvider
from app.streams.providers.x import XProvider
from app.streams.types import SpecInvalid
from tests.egress.servers import Reply, Seen
from tests.streams.conftest import make_due, source_row, sources_of
from tests.streams.golden import assert_inert
from tests.streams.test_api import api

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)> \u202e javascript:alert(3)"


def _json(data: object, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Reply:
    return Reply(status, [("Content-Type", "application/json"), *(headers or [])],
                 json.dumps(data).encode())  # fmt: skip


def _query(seen: Seen) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(seen.target).query).items()}


class FakeX:
    """Recent search and counts: returns as many posts as asked (`max_results`), newest first."""

    def __init__(self) -> None:
        self.asked: list[int] = []
        self.next_id = 1_000
        self.matched_last_week = 70

    def search(self, seen: Seen) -> Reply:
        wanted = int(_query(seen)["max_results"])
        assert 10 <= wanted <= 100
        self.asked.append(wanted)
        posts = []
        for _ in range(wanted):
            self.next_id += 1
            posts.append(
                {
                    "id": str(self.next_id),
                    "text": f"post {self.next_id} {HOSTILE} https://t.co/abc",
                    "created_at": (NOW - timedelta(seconds=self.next_id)).isoformat(),
                    "author_id": "42",
                    # X's own detection; "qme" is its code for a post of only media
                    "lang": ("en", "de", "qme")[self.next_id % 3],
                    "public_metrics": {"reply_count": 1, "retweet_count": 2, "like_count": 3,
                                       "quote_count": 0, "impression_count": 99},
                    "entities": {"urls": [{"url": "https://t.co/abc",
                                           "expanded_url": "https://courier.example/a"}]},
                }
            )  # fmt: skip
        return _json(
            {
                "data": posts[::-1],
                "includes": {"users": [{"id": "42", "username": "desk", "name": "Desk"}]},
                "meta": {"newest_id": str(self.next_id), "result_count": wanted},
            }
        )

    def counts(self, seen: Seen) -> Reply:
        return _json({"data": [], "meta": {"total_tweet_count": self.matched_last_week}})


@pytest.fixture
async def fake_x(site, site_egress) -> AsyncIterator[FakeX]:  # type: ignore[no-untyped-def]
    fake = FakeX()
    site.routes["/2/tweets/search/recent"] = fake.search
    site.routes["/2/tweets/counts/recent"] = fake.counts
    providers.register(XProvider(api=f"{site.base}/2"))
    yield fake
    providers.unregister("x")


async def _x_workspace(people, cap: int) -> int:  # type: ignore[no-untyped-def]
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "x", "bearer-token")
    await services.set_ledger_cap(ws, "x", cap)
    return ws


def _keyword(platforms: list[str], query: str = "climate") -> dict:
    return {"type": "keyword", "title": query, "spec": {"query": query, "platforms": platforms}}


async def test_x_polls_stop_exactly_at_the_spend_cap(people, fake_x):
    ws = await _x_workspace(people, 100)
    fake_x.matched_last_week = 20  # ~86 a month: fits the 100 left
    column = await services.create_column(ws, _keyword(["x"]), actor_user_id=None)
    [source] = await sources_of(column)
    for _ in range(4):
        await make_due(source)
        await polling.poll_source(ws, source, jitter=0)
    assert fake_x.asked == [40, 40, 20]  # the last call asked only for what was left
    used = await db.fetchval(
        "SELECT units_used FROM provider_budget_ledger WHERE workspace_id = $1 AND provider = 'x'",
        ws,
    )
    assert used == 100
    row = await source_row(source)
    assert row["state"] == "budget_paused"
    assert "spent" in row["last_error"]
    assert await db.fetchval("SELECT count(*) FROM feed_items WHERE workspace_id = $1", ws) == 100
    item = await db.fetchrow("SELECT * FROM feed_items WHERE workspace_id = $1 LIMIT 1", ws)
    assert item["url"].startswith("https://x.com/desk/status/")
    assert "https://courier.example/a" in item["plain_text"]  # t.co expanded
    langs = await db.fetch("SELECT DISTINCT lang FROM feed_items WHERE workspace_id = $1", ws)
    assert {r["lang"] for r in langs} == {"en", "de", ""}  # as X detected it; "qme" is none


async def test_x_posts_end_inert(fake_x):
    from app.streams.providers import Credential, FetchRequest

    page = await providers.provider_for("x").search(  # type: ignore[union-attr]
        Credential("bearer"), FetchRequest(query="climate", limit=10)
    )
    assert page.units == 10
    assert_inert(list(page.items))


async def test_x_posts_keep_the_language_x_detected(fake_x):
    from app.streams.providers import Credential, FetchRequest

    page = await providers.provider_for("x").search(  # type: ignore[union-attr]
        Credential("bearer"), FetchRequest(query="climate", limit=12)
    )
    by_id = {int(i.remote_id): i.lang for i in page.items}
    assert by_id == {n: ("en", "de", "")[n % 3] for n in by_id}
    assert set(by_id.values()) == {"en", "de", ""}


async def test_an_x_column_over_the_budget_is_refused_with_the_estimate(people, fake_x):
    ws = await _x_workspace(people, 100)
    fake_x.matched_last_week = 7_000  # ~30,000 a month: far over a 100-post budget
    with pytest.raises(SpecInvalid) as refused:
        await services.create_column(ws, _keyword(["x", "youtube"]), actor_user_id=None)
    assert "would read about" in refused.value.errors["spec.platforms"]
    assert await db.fetchval("SELECT count(*) FROM stream_columns WHERE workspace_id = $1", ws) == 0


async def test_the_estimate_endpoint_answers_and_the_column_create_says_422(client, people, fake_x):
    person, auth = await api(people, "admin")
    await services.set_credential(person.workspace_id, "x", "bearer-token")
    await services.set_ledger_cap(person.workspace_id, "x", 1_000)
    response = await client.post(
        "/api/v1/feeds/estimates", json={"platform": "x", "query": "climate"}, headers=auth
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["matched_last_7_days"] == 70
    assert body["expected_units"] == 300
    assert body["remaining"] == 1_000
    assert body["fits"] is True

    fake_x.matched_last_week = 700
    response = await client.post("/api/v1/feeds/columns", json=_keyword(["x"]), headers=auth)
    assert response.status_code == 422
    assert "raise the X budget" in response.json()["errors"]["spec.platforms"]

    _viewer, viewer_auth = await api(people, "viewer", person.workspace_id)
    refused = await client.post(
        "/api/v1/feeds/estimates", json={"query": "climate"}, headers=viewer_auth
    )
    assert refused.status_code == 403


async def test_x_is_unsupported_while_its_budget_is_off(people, fake_x):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, _keyword(["x"]), actor_user_id=None)
    assert await sources_of(column) == []
    spec = await db.fetchval("SELECT spec FROM stream_columns WHERE id = $1", column)
    [unsupported] = json.loads(spec)["unsupported_platforms"]
    assert unsupported["platform"] == "x"
    assert "budget" in unsupported["reason"]


async def _unsupported(column: int) -> list[dict]:
    spec = await db.fetchval("SELECT spec FROM stream_columns WHERE id = $1", column)
    return json.loads(spec)["unsupported_platforms"]


async def test_raising_the_x_budget_brings_x_into_a_column_saved_while_it_was_off(people, fake_x):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "x", "bearer-token")
    column = await services.create_column(ws, _keyword(["x"]), actor_user_id=None)
    assert await sources_of(column) == []
    assert [u["settings"] for u in await _unsupported(column)] == [True]  # linked to Settings

    await services.set_ledger_cap(ws, "x", 1_000)
    [source] = await sources_of(column)
    assert await _unsupported(column) == []
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert fake_x.asked == [40]
    assert (await source_row(source))["state"] == "ready"
    assert (
        await db.fetchval("SELECT count(*) FROM feed_item_columns WHERE column_id = $1", column)
        == 40
    )

    await services.set_ledger_cap(ws, "x", 0)  # and back: X leaves the column, saying why
    assert await sources_of(column) == []
    [off] = await _unsupported(column)
    assert "budget" in off["reason"]
    assert (await source_row(source))["active"] is False


async def test_adding_and_removing_the_x_key_brings_x_into_a_column_and_takes_it_out(
    people, fake_x
):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, _keyword(["x"]), actor_user_id=None)
    with i18n.speaking("de"):  # a German admin: the stored reason is English all the same
        await services.set_ledger_cap(ws, "x", 1_000)  # a budget, but no key yet
    [no_key] = await _unsupported(column)
    assert no_key["reason"] == "Add the workspace's X key in Settings first."
    assert no_key["settings"] is True
    assert await sources_of(column) == []

    await services.set_credential(ws, "x", "bearer-token")
    [source] = await sources_of(column)
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert fake_x.asked == [40]

    await services.remove_credential(ws, "x")
    assert await sources_of(column) == []
    [removed] = await _unsupported(column)
    assert "key" in removed["reason"]


# Instagram ---------------------------------------------------------------------------


@pytest.fixture
async def fake_instagram(site, site_egress) -> AsyncIterator[list[str]]:  # type: ignore[no-untyped-def]
    searched: list[str] = []

    def hashtag_search(seen: Seen) -> Reply:
        tag = _query(seen)["q"]
        searched.append(tag)
        return _json({"data": [{"id": str(17_000 + len(tag))}]})

    def recent(seen: Seen) -> Reply:
        return _json(
            {
                "data": [
                    {
                        "id": "1790001",
                        "caption": f"Flooded street #climate {HOSTILE}",
                        "media_type": "IMAGE",
                        "media_url": "https://scontent.example/1.jpg",
                        "permalink": "https://www.instagram.com/p/abc/",
                        "timestamp": "2026-11-30T10:00:00+0000",
                        "like_count": 12,
                        "comments_count": 3,
                    }
                ]
            }
        )

    for n in range(5, 12):
        site.routes[f"/v21.0/{17_000 + n}/recent_media"] = recent
    site.routes["/v21.0/ig_hashtag_search"] = hashtag_search
    providers.register(InstagramProvider(api=f"{site.base}/v21.0"))
    yield searched
    providers.unregister("instagram")


async def test_instagram_past_its_hashtag_window_is_rate_limited_until_a_slot_frees(
    people, fake_instagram
):
    ws, _owner = await people.workspace()
    await services.set_credential(ws, "instagram", "17841400000000001:ig-token")
    await services.set_ledger_cap(ws, "instagram", 1)
    first = await services.create_column(
        ws, _keyword(["instagram"], "#climate"), actor_user_id=None
    )
    second = await services.create_column(
        ws, _keyword(["instagram"], "#floods"), actor_user_id=None
    )
    [a], [b] = await sources_of(first), await sources_of(second)
    await polling.poll_source(ws, a, jitter=0)
    assert (await source_row(a))["state"] == "ready"
    item = await db.fetchrow("SELECT * FROM feed_items WHERE workspace_id = $1", ws)
    assert item["url"] == "https://www.instagram.com/p/abc/"
    assert json.loads(item["metrics"]) == {"likes": 12.0, "replies": 3.0}

    await polling.poll_source(ws, b, jitter=0)
    row = await source_row(b)
    assert row["state"] == "rate_limited"
    assert 7 * 86400 - 120 < row["due_in"] <= 7 * 86400  # when #climate's 7 days end
    assert "next one frees up" in row["last_error"]
    assert fake_instagram == ["climate"]  # #floods never reached Instagram

    await make_due(a)
    await polling.poll_source(ws, a, jitter=0)  # the same hashtag again: free
    assert (await source_row(a))["state"] == "ready"
    assert fake_instagram == ["climate"]  # and its id came from the cursor


async def test_instagram_captions_end_inert(fake_instagram):
    from app.streams.providers import Credential, FetchRequest

    page = await providers.provider_for("instagram").search(  # type: ignore[union-attr]
        Credential("17841400000000001:tok"), FetchRequest(query="climate")
    )
    assert len(page.items) == 1
    assert_inert(list(page.items))


async def test_tiktok_and_threads_are_listed_as_not_available_with_the_reason(client, people):
    _person, auth = await api(people, "viewer")
    response = await client.get("/api/v1/feeds/platforms", headers=auth)
    assert response.status_code == 200
    listed = {p["platform"]: p for p in response.json()["platforms"]}
    for name in ("tiktok", "threads"):
        assert listed[name]["search"]["available"] is False
        assert listed[name]["accounts"]["available"] is False
        assert listed[name]["search"]["reason"]
    assert "Meta" in listed["threads"]["search"]["reason"]
    assert listed["youtube"]["search"]["available"] is True
    assert listed["youtube"]["budget"] == {
        "unit": "calls", "window_days": 1, "rolling": False, "cap": 90, "used": 0,
    }  # fmt: skip
    assert listed["x"]["budget"]["cap"] == 0  # off until an admin sets a budget
    assert listed["instagram"]["budget"]["rolling"] is True


async def test_x_out_of_credits_pauses_and_marks_the_budget_spent(people, fake_x, site):
    ws = await _x_workspace(people, 100)
    fake_x.matched_last_week = 20
    column = await services.create_column(ws, _keyword(["x"]), actor_user_id=None)
    [source] = await sources_of(column)
    site.routes["/2/tweets/search/recent"] = _json(
        {"title": "CreditsDepleted", "detail": "no credits", "type": "about:blank"}, 402
    )
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "budget_paused"
    assert "no credits" in row["last_error"]
    used = await db.fetchval(
        "SELECT units_used FROM provider_budget_ledger WHERE workspace_id = $1 AND provider = 'x'",
        ws,
    )
    assert used == 100  # spent, and the reserved page is not given back
