"""The scheduler against loopback servers: every state a source can reach, and what it stores."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta

import pytest

from app.accounts import services as accounts
from app.core import db
from app.live.notices import channel
from app.streams import polling, services
from app.streams.types import COLUMNS_TOPIC, column_topic
from app.wall import queries as wall_queries
from tests.egress.servers import Reply
from tests.plans import per_row_conditions, plan_of
from tests.streams.conftest import home_column, items_of, make_due, source_row, sources_of
from tests.streams.statuses import status, statuses_reply

RSS = "application/rss+xml; charset=utf-8"


def rss(
    count: int,
    *,
    start: int = 0,
    title: str = "Harbour Watch",
    language: str = "",
    entry_languages: dict[int, str] | None = None,
) -> bytes:
    marks = entry_languages or {}
    entries = "".join(
        f"""<item><title>Entry {n}</title><link>https://harbour.example/posts/{n}</link>
        <guid>https://harbour.example/posts/{n}</guid>
        {f"<dc:language>{marks[n]}</dc:language>" if n in marks else ""}
        <pubDate>{(datetime(2026, 11, 30, 12, tzinfo=UTC) - timedelta(minutes=n)).strftime("%a, %d %b %Y %H:%M:%S +0000")}</pubDate>
        <description>&lt;p&gt;Body {n} &lt;script&gt;alert(1)&lt;/script&gt;&lt;a href="javascript:x"&gt;bad&lt;/a&gt;&lt;/p&gt;</description>
        </item>"""
        for n in range(start, start + count)
    )
    channel_language = f"<language>{language}</language>" if language else ""
    return f"""<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
    <channel><title>{title}</title>
    <link>https://harbour.example/</link>{channel_language}{entries}</channel></rss>""".encode()


def feed(site, path: str, body: bytes | Reply) -> str:  # type: ignore[no-untyped-def]
    site.routes[path] = (
        body if isinstance(body, Reply) else Reply(headers=[("Content-Type", RSS)], body=body)
    )
    return site.base + path


async def account_column(ws: int, *urls: str) -> int:
    return await services.create_column(
        ws,
        {
            "type": "account_list",
            "title": "Feeds",
            "spec": {"accounts": [{"provider": "rss", "handle": u} for u in urls]},
        },
        actor_user_id=None,
    )


async def test_an_rss_account_column_polls_and_stores_safe_items(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/harbour.rss", rss(3))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    assert (await source_row(source))["state"] == "pending"

    assert await polling.poll_source(ws, source, jitter=0)

    row = await source_row(source)
    assert row["state"] == "ready"
    assert row["consecutive_failures"] == 0
    assert 170 < row["due_in"] <= 180  # account_list default 180 s, jitter 0
    assert await items_of(column) == [
        "https://harbour.example/posts/0",
        "https://harbour.example/posts/1",
        "https://harbour.example/posts/2",
    ]
    item = await db.fetchrow(
        "SELECT * FROM feed_items WHERE remote_id = $1", "https://harbour.example/posts/0"
    )
    content = json.loads(item["content"])
    assert content["type"] == "document"
    assert "script" not in item["content"]
    assert "javascript" not in item["content"]
    assert item["plain_text"].startswith("Entry 0")
    assert len(item["dedup_key"]) == 64


async def stored_languages(ws: int) -> dict[str, str]:
    rows = await db.fetch("SELECT remote_id, lang FROM feed_items WHERE workspace_id = $1", ws)
    return {r["remote_id"].rsplit("/", 1)[1]: r["lang"] for r in rows}


async def test_feed_items_keep_the_language_their_feed_marks(people, site, site_egress):
    ws, _owner = await people.workspace()
    # The channel says German; one item marks itself English (dc:language), one badly.
    body = rss(3, language="de-DE", entry_languages={1: "en", 2: "de&lt;b&gt;"})
    column = await account_column(ws, feed(site, "/marked.rss", body))
    [source] = await sources_of(column)
    assert await polling.poll_source(ws, source, jitter=0)
    assert await stored_languages(ws) == {"0": "de", "1": "en", "2": "de"}


async def test_a_second_sighting_fills_in_an_unknown_language_only(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/later.rss", rss(2))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    assert await stored_languages(ws) == {"0": "", "1": ""}

    feed(site, "/later.rss", rss(2, entry_languages={0: "nl"}))
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert await stored_languages(ws) == {"0": "nl", "1": ""}

    feed(site, "/later.rss", rss(2, language="fr"))
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert await stored_languages(ws) == {"0": "nl", "1": "fr"}  # a known language stays


def untagged_rss(bodies: list[str]) -> bytes:
    """A feed that tags no language, channel or entry."""
    entries = "".join(
        f"<item><title>Entry {n}</title><guid>https://harbour.example/posts/{n}</guid>"
        f"<description>{body}</description></item>"
        for n, body in enumerate(bodies)
    )
    return f"""<?xml version="1.0"?><rss version="2.0"><channel><title>Harbour Watch</title>
    <link>https://harbour.example/</link>{entries}</channel></rss>""".encode()


async def test_untagged_posts_get_the_language_their_words_show(people, site, site_egress):
    ws, _owner = await people.workspace()
    bodies = [
        "Die Stadt hat am Dienstag beschlossen, dass die neue Brücke über den Fluss im Sommer"
        " für den Verkehr geöffnet wird und die Fähre dann nicht mehr fährt.",
        "The council said on Tuesday that the new bridge over the river will open to traffic"
        " in the summer and that the ferry will then stop running.",
        "Hafen, 12:00",  # too short to tell: stays untagged
    ]
    column = await account_column(ws, feed(site, "/untagged.rss", untagged_rss(bodies)))
    [source] = await sources_of(column)
    assert await polling.poll_source(ws, source, jitter=0)
    assert await stored_languages(ws) == {"0": "de", "1": "en", "2": ""}
    # The wall's search stems the German post as German: another form of its word finds it.
    found = await wall_queries.search(ws, "Brücken", None)
    [post] = found.items
    assert "Die Stadt hat am Dienstag beschlossen" in post.plain_text
    # The query is parsed in each language once per search, not once for every stored post.
    plan = await plan_of(ws, lambda: wall_queries.search(ws, "Brücken", None), "ORDER BY")
    per_row = per_row_conditions(plan)
    assert not [c for c in per_row if "newsdesk_search_parses" in c or "to_tsquery" in c]


async def test_two_columns_sharing_a_feed_cost_one_poll(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/shared.rss", rss(2))
    first = await account_column(ws, url)
    second = await account_column(ws, url)
    assert await sources_of(first) == await sources_of(second)
    resolutions = len(site.hits_of("/shared.rss"))

    assert await polling.run_due(seconds=5, jitter=0) == 1

    assert len(site.hits_of("/shared.rss")) == resolutions + 1
    assert await items_of(first) == await items_of(second) != []
    assert await db.fetchval("SELECT count(*) FROM feed_items") == 2


async def test_a_column_joining_a_polled_source_shows_its_stored_posts_at_once(
    people, site, site_egress
):
    """It used to stay empty ("Fetching the first posts...") beside a source marked up to
    date, until that source's next poll - minutes, or a YouTube search's quarter hour."""
    ws, _owner = await people.workspace()
    url = feed(site, "/shared.rss", rss(3))
    first = await account_column(ws, url)
    [source] = await sources_of(first)
    assert await polling.poll_source(ws, source, jitter=0)
    other = await account_column(ws, feed(site, "/other.rss", rss(1, title="Other")))

    second = await account_column(ws, url)

    assert await items_of(second) == await items_of(first) != []
    # Editing a column onto the source brings them too.
    await services.update_column(
        ws, other, {"spec": {"accounts": [{"provider": "rss", "handle": url}]}}
    )
    assert await items_of(other) == await items_of(first)


async def test_failures_back_off_doubling_then_error_and_are_still_retried(
    people, site, site_egress
):
    ws, _owner = await people.workspace()
    url = feed(site, "/flaky.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    site.routes["/flaky.rss"] = Reply(status=500, body=b"oops")

    seen = []
    for _attempt in range(4):
        await make_due(source)
        await polling.poll_source(ws, source, jitter=0)
        row = await source_row(source)
        seen.append((row["state"], row["consecutive_failures"], round(row["due_in"] / 60)))
    # 180 s x 2, x 4, x 8, then capped at 30 minutes; never polled OK before: pending, then error.
    assert seen == [("pending", 1, 6), ("pending", 2, 12), ("error", 3, 24), ("error", 4, 30)]
    assert row["last_error"] == "The site had an error (HTTP 500); try again later."

    site.routes["/flaky.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1))
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"], row["last_error"]) == ("ready", 0, "")


async def test_a_source_that_worked_is_stale_after_one_failure(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/once.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    site.routes["/once.rss"] = Reply(status=503, body=b"down")
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "stale"
    assert await items_of(column)  # old items stay


async def test_429_with_retry_after_is_rate_limited_until_then(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/busy.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    site.routes["/busy.rss"] = Reply(
        status=429, headers=[("Retry-After", "900")], body=b"slow down"
    )
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "rate_limited"
    assert row["consecutive_failures"] == 0
    assert 890 < row["due_in"] <= 900
    assert "slow down" in row["last_error"]


async def test_a_timeout_is_a_failure_with_a_reason(people, site, site_egress):
    site_egress(egress_total_timeout=0.5)
    ws, _owner = await people.workspace()
    url = feed(site, "/slow.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    site.routes["/slow.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1), delay=2)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert (row["state"], row["consecutive_failures"]) == ("pending", 1)
    assert row["last_error"] == "The site took too long to answer."


async def test_a_malformed_feed_fails_and_says_so(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/becomes-html.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    site.routes["/becomes-html.rss"] = Reply(
        headers=[("Content-Type", "text/html")], body=b"<html><body><h1>Moved</h1></body></html>"
    )
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["consecutive_failures"] == 1
    assert "RSS or Atom" in row["last_error"]


async def test_an_enormous_feed_is_refused_and_a_long_one_is_capped(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/huge.rss", rss(1))
    long_url = feed(site, "/long.rss", rss(400))
    column = await account_column(ws, url, long_url)
    huge, long = await sources_of(column)
    site.routes["/huge.rss"] = Reply(
        headers=[("Content-Type", RSS)], body=b"<rss>" + b"x" * 6_000_000
    )
    await polling.poll_source(ws, huge, jitter=0)
    await polling.poll_source(ws, long, jitter=0)
    assert "too large" in (await source_row(huge))["last_error"]
    assert (await source_row(long))["state"] == "ready"
    assert await db.fetchval("SELECT count(*) FROM feed_items") == polling.PAGE_LIMIT


async def test_an_unknown_handle_is_an_error_source_not_a_failed_column(people, site, site_egress):
    ws, _owner = await people.workspace()
    good = feed(site, "/good.rss", rss(1))
    column = await account_column(ws, good, site.base + "/no-such.rss")
    good_source, missing = await sources_of(column)
    row = await source_row(missing)
    assert row["state"] == "error"
    assert "was not found" in row["last_error"]
    await polling.poll_source(ws, good_source, jitter=0)
    assert await items_of(column)


async def test_second_sighting_updates_metrics_and_fetched_time_only(people, site, statuses):
    ws, _owner = await people.workspace()
    _connection, column = await home_column(ws)
    [source] = await sources_of(column)
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(1, favourites=0)])
    await polling.poll_source(ws, source, jitter=0)
    first = await db.fetchrow("SELECT * FROM feed_items")

    changed = status(1, favourites=7)
    changed["content"] = "<p>edited</p>"
    site.routes["/api/v1/timelines/home"] = statuses_reply([changed])
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    second = await db.fetchrow("SELECT * FROM feed_items")

    assert json.loads(second["metrics"])["favourites"] == 7
    assert second["fetched_at"] > first["fetched_at"]
    assert second["content"] == first["content"]
    assert second["id"] == first["id"]
    assert statuses.calls[0] == ("/api/v1/timelines/home", "tok-1")  # the vault opened the token


async def test_one_post_seen_through_two_connections_is_one_item_in_both_columns(
    people, site, statuses
):
    ws, _owner = await people.workspace()
    a = await services.add_connection(
        ws, "mastodon", "desk", instance="social.example", secret="tok-a"
    )
    b = await services.add_connection(
        ws, "mastodon", "tips", instance="social.example", secret="tok-b"
    )
    columns = [
        await services.create_column(
            ws,
            {"type": "platform_feed", "title": f"Home {c}", "spec": {"connection_id": c}},
            actor_user_id=None,
        )
        for c in (a, b)
    ]
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(1), status(2)])
    assert await polling.run_due(seconds=5, jitter=0) == 2
    assert await db.fetchval("SELECT count(*) FROM feed_items") == 2
    assert await items_of(columns[0]) == await items_of(columns[1]) == ["1001", "1002"]
    assert sorted(token for _path, token in statuses.calls) == ["tok-a", "tok-b"]


async def test_an_exhausted_ledger_pauses_until_the_cap_is_raised(people, site, site_egress):
    from app.streams import providers
    from tests.streams.statuses import StatusProvider

    provider = StatusProvider(site.base, name="youtube")
    providers.register(provider)
    try:
        ws, _owner = await people.workspace()
        await services.set_ledger_cap(ws, "youtube", 1)
        column = await services.create_column(
            ws,
            {
                "type": "keyword",
                "title": "Flood",
                "spec": {"query": "flood", "platforms": ["youtube"]},
            },
            actor_user_id=None,
        )
        [source] = await sources_of(column)
        site.routes["/api/v1/timelines/tag/flood"] = statuses_reply([status(1)])
        await polling.poll_source(ws, source, jitter=0)
        await make_due(source)
        await polling.poll_source(ws, source, jitter=0)
        row = await source_row(source)
        assert row["state"] == "budget_paused"
        assert len(provider.calls) == 1  # the paused poll made no request
        assert row["due_in"] > 60  # until the day's window ends

        await services.set_ledger_cap(ws, "youtube", 5)
        await polling.poll_source(ws, source, jitter=0)
        assert (await source_row(source))["state"] == "ready"
    finally:
        providers.unregister("youtube")


async def test_removing_a_connection_disables_its_sources_and_the_column_says_why(
    people, site, statuses
):
    from app.streams import queries

    ws, _owner = await people.workspace()
    connection, column = await home_column(ws, secret="t")
    [source] = await sources_of(column)
    await services.delete_connection(ws, connection)
    assert not await polling.poll_source(ws, source, jitter=0)
    view = await queries.column_view(ws, column)
    assert view is not None
    assert view.aggregate_state == "error"
    assert view.sources[0].state == "disabled"
    assert "reconnect" in view.sources[0].last_error


async def test_a_manual_refresh_cannot_poll_sooner_than_the_floor(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/refresh.rss", rss(1))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)

    when = (await services.request_refresh(ws, column)).next_poll_at

    assert when is not None
    seconds = (when - datetime.now(UTC)).total_seconds()
    assert 100 < seconds <= 120  # RSS's floor: two minutes after the last poll
    assert not await polling.poll_source(ws, source, jitter=0)


async def test_new_items_are_announced_on_the_columns_topic_after_commit(
    people, site, site_egress, redis
):
    ws, _owner = await people.workspace()
    url = feed(site, "/announce.rss", rss(2))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel(ws))
    try:
        await polling.poll_source(ws, source, jitter=0)
        messages = []
        for _ in range(20):
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2)
            if message:
                messages.append(json.loads(message["data"]))
            elif messages:
                break
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()
    assert {"topic": column_topic(column), "new": 2} in messages


async def _notices_of(redis, ws: int, poll) -> list[dict]:  # type: ignore[no-untyped-def]
    """The live notices published on the workspace's channel while `poll` runs."""
    pubsub = redis.pubsub()
    await pubsub.subscribe(channel(ws))
    try:
        await poll
        messages = []
        deadline = asyncio.get_running_loop().time() + 0.5
        while asyncio.get_running_loop().time() < deadline:
            message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
            if message:
                messages.append(json.loads(message["data"]))
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()
    return messages


async def test_a_failing_source_tells_its_columns_only_when_its_state_changes(
    people, site, site_egress, redis
):
    ws, _owner = await people.workspace()
    url = feed(site, "/failing.rss", Reply(status=500, body=b"oops"))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    # Failures 1 and 2 keep it `pending`: nobody is told. The third makes it `error`.
    for _attempt in range(2):
        await make_due(source)
        assert await _notices_of(redis, ws, polling.poll_source(ws, source, jitter=0)) == []
    await make_due(source)
    told = await _notices_of(redis, ws, polling.poll_source(ws, source, jitter=0))
    assert told == [{"topic": column_topic(column), "new": 0}, {"topic": COLUMNS_TOPIC}]
    assert (await source_row(source))["state"] == "error"


async def test_a_poll_is_stored_when_redis_cannot_take_its_notices(
    people, site, site_egress, caplog
):
    from arq.connections import ArqRedis

    from app.core import redis as core_redis
    from tests.workers.processes import free_port

    ws, _owner = await people.workspace()
    url = feed(site, "/quiet.rss", rss(2))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    down = ArqRedis(host="127.0.0.1", port=free_port())  # nothing listens there
    saved = core_redis._client
    core_redis.use_client(down)
    try:
        with caplog.at_level(logging.WARNING, logger="app.live.notices"):
            assert await polling.poll_source(ws, source, jitter=0)
    finally:
        core_redis._client = saved
        await down.aclose()
    assert (await source_row(source))["state"] == "ready"
    assert len(await items_of(column)) == 2
    assert any("notices were not sent" in r.getMessage() for r in caplog.records)


async def test_a_poll_while_redis_is_down_waits_and_says_so_instead_of_failing(
    people, site, tmp_path, caplog
):
    from redis.asyncio import Redis

    from app.egress import Egress, use_egress
    from tests.fixtures import make_test_settings
    from tests.workers.processes import PrivateRedis

    server = PrivateRedis(tmp_path)  # egress's host budgets live in this Redis
    server.start()
    budgets = Redis.from_url(server.url, socket_connect_timeout=1)
    settings = make_test_settings(egress_allow=[site.allow()], egress_host_rate=1000.0)
    use_egress(egress := Egress(settings, budgets))
    try:
        ws, _owner = await people.workspace()
        column = await account_column(ws, feed(site, "/outage.rss", rss(2)))
        [source] = await sources_of(column)
        await polling.poll_source(ws, source, jitter=0)
        assert (await source_row(source))["state"] == "ready"
        server.stop()
        await make_due(source)
        with caplog.at_level(logging.WARNING, logger="app.streams.polling"):
            await polling.poll_source(ws, source, jitter=0)
        row = await source_row(source)
        assert row["state"] == "stale"  # the last posts stay, the column says it is behind
        assert row["consecutive_failures"] == 0  # our outage is not the source's failure
        assert row["last_error"].startswith("Temporarily unavailable")
        assert "unexpected" not in row["last_error"]
        interval = row["interval_ms"] / 1000
        assert 2 * interval - 5 < row["due_in"] <= 2 * interval  # the normal back-off
        assert not [r for r in caplog.records if r.exc_info]  # one line, no traceback
        server.start()  # back: the next poll works again
        await make_due(source)
        await polling.poll_source(ws, source, jitter=0)
        row = await source_row(source)
        assert (row["state"], row["last_error"]) == ("ready", "")
    finally:
        use_egress(None)
        await egress.aclose()
        await budgets.aclose()
        server.stop()


async def test_the_sweeper_deletes_expired_and_month_old_items(people, site, site_egress):
    ws, _owner = await people.workspace()
    url = feed(site, "/sweep.rss", rss(3))
    column = await account_column(ws, url)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    await db.fetch(
        "UPDATE feed_items SET fetched_at = now() - interval '31 days' WHERE remote_id LIKE '%/0'"
    )
    await db.fetch(
        "UPDATE feed_items SET expires_at = now() - interval '1 minute' WHERE remote_id LIKE '%/1'"
    )
    assert await services.sweep_items() == 2
    assert await items_of(column) == ["https://harbour.example/posts/2"]


@pytest.mark.parametrize("polls", [8])
async def test_concurrent_scheduler_loops_never_poll_a_source_twice(
    people, site, site_egress, polls
):
    ws, _owner = await people.workspace()
    urls = [feed(site, f"/many/{n}.rss", rss(1, start=n)) for n in range(polls)]
    await account_column(ws, *urls)
    before = len(site.hits)
    results = await asyncio.gather(
        polling.run_due(seconds=5, jitter=0), polling.run_due(seconds=5, jitter=0)
    )
    assert sum(results) == polls
    assert len(site.hits) - before == polls


async def test_a_poll_of_a_workspace_deleted_meanwhile_ends_quietly_writing_nothing(
    people, site, site_egress, caplog
):
    ws, owner = await people.workspace()
    url = feed(site, "/gone.rss", rss(2))
    column = await account_column(ws, url)
    [source_id] = await sources_of(column)
    site.routes["/gone.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(2), delay=0.6)
    polling_now = asyncio.create_task(polling.poll_source(ws, source_id, jitter=0))
    await asyncio.sleep(0.3)  # the feed is being read

    await accounts.delete_workspace(ws, "Desk", actor_user_id=owner.user_id)

    await polling_now  # nothing raised
    assert "lease lost, the poll's result is dropped" in caplog.text  # it was mid-poll
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    for table in ("stream_sources", "feed_items", "feed_item_columns", "events"):
        count = await db.fetchval(f"SELECT count(*) FROM {table} WHERE workspace_id = $1", ws)
        assert (table, count) == (table, 0)


async def test_a_poll_that_lost_its_lease_writes_nothing(people, site, site_egress):
    from app.core.leases import LeaseLost
    from app.streams.providers import Page
    from app.streams.schedule import after_success

    ws, _owner = await people.workspace()
    url = feed(site, "/lease.rss", rss(1))
    column = await account_column(ws, url)
    [source_id] = await sources_of(column)
    claimed = await services.claim_source(ws, source_id)
    assert claimed is not None
    assert await services.renew_lease(claimed)  # the heartbeat keeps it while it is ours
    # Another worker took the source over (our lease had run out meanwhile).
    await db.fetch("UPDATE stream_sources SET lease_until = now() + interval '1 minute'")
    assert not await services.renew_lease(claimed)
    with pytest.raises(LeaseLost):
        await services.store_page(claimed, Page(), after_success(60_000))
    assert (await source_row(source_id))["state"] == "pending"


async def test_a_source_this_server_cannot_read_is_unsupported_and_never_polled(
    people, monkeypatch
):
    from app.streams import providers, queries

    # A server without the Bluesky provider (it registers itself on first use otherwise).
    monkeypatch.setattr(providers, "_load_builtin", lambda: None)
    monkeypatch.setitem(providers._registry, "bluesky", None)
    monkeypatch.delitem(providers._registry, "bluesky")
    ws, _owner = await people.workspace()
    connection = await services.add_connection(ws, "bluesky", "desk.bsky.social", secret="pw")
    column = await services.create_column(
        ws,
        {"type": "platform_feed", "title": "Sky", "spec": {"connection_id": connection}},
        actor_user_id=None,
    )
    view = await queries.column_view(ws, column)
    assert view is not None
    [source] = view.sources
    assert source.state == "unsupported"
    assert "cannot read Bluesky yet" in source.last_error
    assert view.aggregate_state == "error"
    assert await polling.run_due(seconds=2, jitter=0) == 0
