"""Mastodon through egress (EGRESS_DIVERT) to the demo's instances: normalisation, paging,
budgets and rate limits, errors as source states, content warnings, reblogs, dedup, hostile HTML."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest
from redis.asyncio import Redis

from app.core import db
from app.demo.content import DemoWorld
from app.demo.mastodon import DEMO_TOKEN, MastodonDemo
from app.egress import Egress, RateLimited, use_egress
from app.egress.policy import parse_rate_limit_reset
from app.safe_content import ContentWarning, from_json, render_html, to_json
from app.streams import polling, services
from app.streams.providers import Actor, FetchRequest
from app.streams.providers.mastodon import (
    INSTANCE_BUDGET,
    PAGED_BUDGET,
    MastodonProvider,
    _statuses,
)
from tests.streams.conftest import items_of, make_due, source_row, sources_of

GOLDEN = Path(__file__).parent / "golden"
START = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
HOSTS = ("mastodon.social", "chaos.social")


@dataclass
class Demo:
    world: DemoWorld
    servers: dict[str, MastodonDemo]
    clock: list[datetime]
    make_egress: Callable[..., Egress]

    def advance(self, minutes: float) -> None:
        self.clock[0] += timedelta(minutes=minutes)

    def api_hits(self, host: str, path: str) -> list:  # type: ignore[type-arg]
        return self.servers[host].hits_of(path)


@pytest.fixture
async def demo(redis: Redis) -> AsyncIterator[Demo]:
    """Two demo instances; the process's Egress diverts their real origins to them, with
    the instances' own budgets out of the way unless a test asks for them."""
    clock = [START]
    world = DemoWorld(seed=7, start=START, clock=lambda: clock[0])
    servers = {host: MastodonDemo(world, host) for host in HOSTS}
    for server in servers.values():
        await server.start()
    made: list[Egress] = []

    def make(*, budgets: bool = False, budget_wait: float = 5.0, **overrides: object) -> Egress:
        from tests.fixtures import make_test_settings

        loose = [f"{h}=1000/1000/10" for h in HOSTS] + [f"{h}#paged=1000/1000/10" for h in HOSTS]
        values: dict[str, object] = {
            "egress_divert": [f"https://{h}=http://127.0.0.1:{s.port}" for h, s in servers.items()],
            "egress_host_budgets": [] if budgets else loose,
            "egress_host_rate": 1000.0,
            "egress_host_burst": 1000,
            **overrides,
        }
        instance = Egress(make_test_settings(**values), redis, budget_wait=budget_wait)
        made.append(instance)
        use_egress(instance)
        return instance

    make()
    yield Demo(world, servers, clock, make)
    use_egress(None)
    for instance in made:
        await instance.aclose()
    for server in servers.values():
        await server.stop()


def keyword(instances: list[str], query: str = "#climate") -> dict:  # type: ignore[type-arg]
    return {
        "type": "keyword",
        "title": "Climate",
        "spec": {"query": query, "platforms": ["mastodon"], "instances": instances},
    }


_TAGS = {"div", "span", "p", "a", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol",
         "li", "h2", "h3", "h4", "img", "details", "summary"}  # fmt: skip
_ATTRIBUTES = {"class", "data-ignore", "href", "rel", "referrerpolicy", "src", "alt", "loading",
               "decoding"}  # fmt: skip


class _Inert(HTMLParser):
    """Reads rendered HTML as a browser would and refuses anything but the renderer's own
    tags and attributes, and any link or image that is not http(s) or our proxy."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in _TAGS, tag
        for name, value in attrs:
            assert name in _ATTRIBUTES, (tag, name)
            if name in ("href", "src"):
                assert (value or "").startswith(("https://", "http://", "/media/")), value


def inert(rendered: str) -> None:
    _Inert().feed(rendered)


# Normalisation: golden files ---------------------------------------------------------------


def test_statuses_normalise_to_the_golden_ast_and_fields():
    raw = json.loads((GOLDEN / "mastodon_statuses.json").read_text())
    items, dropped = _statuses(raw, "mastodon.social")
    got = [
        {
            "remote_id": i.remote_id,
            "canonical_id": i.canonical_id,
            "author_handle": i.author_handle,
            "author_ref": i.author_ref,
            "reposted_by": i.reposted_by,
            "url": i.url,
            "created_at": i.created_at.isoformat(),
            "media": [[m.kind, m.url, m.alt, m.sensitive] for m in i.media],
            "metrics": i.metrics,
            "plain_text": i.plain_text,
            "content": json.loads(to_json(i.content)),
        }
        for i in items
    ]
    expected = json.loads((GOLDEN / "mastodon_statuses.expected.json").read_text())
    assert got == expected
    assert dropped == 2  # the one without a usable uri, and the one that is not an object


def test_a_content_warning_is_kept_and_rendered_collapsed():
    raw = json.loads((GOLDEN / "mastodon_statuses.json").read_text())
    [boost, plain] = _statuses(raw, "mastodon.social")[0]
    [warning] = boost.content.children
    assert isinstance(warning, ContentWarning)
    assert warning.summary == "Flood, injuries"
    html = str(render_html(boost.content))
    assert html.startswith(
        '<div class="rich" data-ignore><details><summary>Flood, injuries</summary>'
    )
    assert "<details open" not in html  # collapsed until the reader opens it
    assert boost.plain_text.startswith("Flood, injuries\n\nHochwasser")
    assert from_json(to_json(boost.content)) == boost.content  # stored and read back
    assert "<details>" not in str(render_html(plain.content))


def test_a_reblog_is_the_original_status_with_its_booster_kept():
    raw = json.loads((GOLDEN / "mastodon_statuses.json").read_text())
    boost = _statuses(raw, "mastodon.social")[0][0]
    assert boost.remote_id == "https://chaos.social/users/jonas/statuses/113400000000000009"
    assert boost.author_handle == "@jonas@chaos.social"
    assert boost.reposted_by == "lena@mastodon.social"
    assert boost.metrics == {"replies": 3.0, "reposts": 12.0, "likes": 40.0, "quotes": 1.0}


def test_a_status_keeps_the_language_mastodon_names():
    raw = json.loads((GOLDEN / "mastodon_statuses.json").read_text())
    boost, hostile = _statuses(raw, "mastodon.social")[0]
    assert boost.lang == "de"  # the boosted status's own, not the boost's (null)
    assert hostile.lang == ""  # an attribute smuggled into the field is no language


def test_hostile_status_html_ends_inert():
    raw = json.loads((GOLDEN / "mastodon_statuses.json").read_text())
    hostile = _statuses(raw, "mastodon.social")[0][1]
    inert(str(render_html(hostile.content, media_url=lambda url: "/media/x")))
    assert "evil" in hostile.plain_text  # the words stay, as text


def test_every_hostile_demo_status_ends_inert():
    clock = START + timedelta(hours=6)
    world = DemoWorld(seed=7, start=START, clock=lambda: clock)
    server = MastodonDemo(world, "chaos.social")
    hostile = [p for p in world.posts("mastodon") if p.hostile]
    assert len(hostile) > 10
    items, dropped = _statuses([server.status(p) for p in hostile], "chaos.social")
    assert dropped == 0
    for item in items:
        inert(str(render_html(item.content, media_url=lambda url: "/media/x")))


# Through egress to the demo instances ------------------------------------------------------


async def test_a_keyword_column_over_two_instances_stores_each_status_once(people, demo):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, keyword(list(HOSTS)), actor_user_id=None)
    sources = await sources_of(column)
    assert len(sources) == 2  # one hashtag timeline per instance
    for source in sources:
        assert await polling.poll_source(ws, source, jitter=0)
        assert (await source_row(source))["state"] == "ready"
    for host in HOSTS:
        [hit] = demo.api_hits(host, "/api/v1/timelines/tag/climate")
        assert hit.headers["host"] == host
        assert hit.arg("limit") == "40"
    both = await items_of(column)
    # Both instances federate the same statuses (own ids, same uri): one item each.
    assert len(both) == 40
    assert len(set(both)) == 40
    assert await db.fetchval("SELECT count(*) FROM feed_items WHERE workspace_id = $1", ws) == 40
    rows = await db.fetch("SELECT content, url FROM feed_items WHERE workspace_id = $1", ws)
    for row in rows:
        inert(str(render_html(from_json(row["content"]), media_url=lambda url: "/media/x")))
        assert row["url"].startswith("https://")


async def test_statuses_are_stored_in_the_language_mastodon_names(people, demo):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, keyword(["chaos.social"]), actor_user_id=None)
    [source] = await sources_of(column)
    assert await polling.poll_source(ws, source, jitter=0)
    server = demo.servers["chaos.social"]
    written = {
        server.status(p)["uri"]: p.lang for p in demo.world.posts("mastodon") if not p.repost_of
    }
    rows = await db.fetch("SELECT remote_id, lang FROM feed_items WHERE workspace_id = $1", ws)
    assert rows
    assert {r["remote_id"]: r["lang"] for r in rows} == {
        r["remote_id"]: written[r["remote_id"]] for r in rows
    }
    assert len({r["lang"] for r in rows}) > 1  # #climate is talked about in several languages


async def test_polling_goes_on_from_min_id_and_follows_the_link_header(people, demo):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, keyword(["mastodon.social"]), actor_user_id=None)
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    cursor = (await source_row(source))["cursor"]
    first = set(await items_of(column))
    newest_first = demo.servers["mastodon.social"].local_id(
        next(p for p in demo.world.posts("mastodon") if "climate" in p.topics and not p.reposted_by)
    )
    assert cursor == newest_first

    demo.advance(60)  # an hour: more than one page of new #climate statuses
    new = [
        p
        for p in demo.world.posts("mastodon")
        if "climate" in p.topics and not p.reposted_by and p.created_at > START
    ]
    assert 40 < len(new) < 120
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    hits = demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")
    assert hits[1].arg("min_id") == cursor  # asks only what is newer
    assert len(hits) == 1 + len(new) // 40 + 1  # full pages, then the short one that ends it
    assert all(h.arg("min_id") for h in hits[2:])  # the Link header's prev pages
    stored = set(await items_of(column)) - first
    assert stored == {demo.servers["mastodon.social"].status(p)["uri"] for p in new}
    assert (await source_row(source))["cursor"] == demo.servers["mastodon.social"].local_id(new[0])

    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)  # nothing new: one short page
    assert len(demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")) == len(hits) + 1
    hits = demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")

    # Far behind: one poll reads at most MAX_PAGES pages and the next goes on from there.
    demo.advance(240)
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert len(demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")) == len(hits) + 3
    behind = (await source_row(source))["cursor"]
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert (
        demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")[len(hits) + 3].arg(
            "min_id"
        )
        == behind
    )
    server = demo.servers["mastodon.social"]
    since_start = [
        server.status(p)["uri"]
        for p in reversed(demo.world.posts("mastodon"))
        if "climate" in p.topics and not p.reposted_by and p.created_at > START
    ]  # oldest first
    stored = set(await items_of(column))
    kept = [uri in stored for uri in since_start]
    assert kept == sorted(kept, reverse=True)  # the oldest ones, without a gap
    assert sum(kept) == len(new) + 2 * 3 * 40


async def test_a_429_makes_the_source_rate_limited_until_the_reset(people, demo):
    ws, _owner = await people.workspace()
    demo.servers["mastodon.social"].rate_limit = 1
    column = await services.create_column(ws, keyword(list(HOSTS)), actor_user_id=None)
    sources = await sources_of(column)
    labelled = {(await source_row(s))["query"].partition("@")[2]: s for s in sources}
    social, chaos = labelled["mastodon.social"], labelled["chaos.social"]
    await polling.poll_source(ws, social, jitter=0)  # the window's last request
    assert (await source_row(social))["state"] == "ready"
    # X-RateLimit-Remaining: 0 -> egress holds the instance until the reset: no request made.
    await make_due(social)
    await polling.poll_source(ws, social, jitter=0)
    row = await source_row(social)
    assert row["state"] == "rate_limited"
    assert 250 < row["due_in"] <= 300  # the 5-minute window's reset
    assert row["consecutive_failures"] == 0
    assert len(demo.api_hits("mastodon.social", "/api/v1/timelines/tag/climate")) == 1
    # The other instance is not affected.
    await polling.poll_source(ws, chaos, jitter=0)
    assert (await source_row(chaos))["state"] == "ready"


async def test_a_429_without_retry_after_waits_for_x_ratelimit_reset(demo):
    server = demo.servers["chaos.social"]
    server.rate_limit = 0
    with pytest.raises(RateLimited) as caught:
        await MastodonProvider().search(None, FetchRequest(query="climate@chaos.social"))
    assert caught.value.retry_after is not None
    assert 250 < caught.value.retry_after <= 300


def test_x_ratelimit_reset_reads_iso_times_epochs_and_deltas():
    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC).timestamp()
    assert parse_rate_limit_reset("2026-12-01T03:05:00.000Z", now) == 300
    assert parse_rate_limit_reset(str(int(now) + 60), now) == 60
    assert parse_rate_limit_reset("30", now) == 30
    assert parse_rate_limit_reset("2026-12-01T02:00:00Z", now) == 0
    assert parse_rate_limit_reset("soon", now) is None
    assert parse_rate_limit_reset("2026-12-01T03:05:00", now) is None  # no zone: unreadable


async def test_each_instance_has_its_own_budgets(demo):
    """300 per 5 min (0.9/s, burst 10) per instance; follow-up pages spend a second budget."""
    assert INSTANCE_BUDGET.rate * 300 + INSTANCE_BUDGET.burst <= 300
    assert PAGED_BUDGET.rate * 900 + PAGED_BUDGET.burst <= 300
    demo.make_egress(budgets=True, budget_wait=0.01)
    provider = MastodonProvider()
    started, sent = time.monotonic(), 0
    refused: RateLimited | None = None
    while refused is None and sent < 40:
        try:
            await provider.search(None, FetchRequest(query="climate@mastodon.social"))
            sent += 1
        except RateLimited as error:
            refused = error
    refilled = (time.monotonic() - started) * INSTANCE_BUDGET.rate
    assert INSTANCE_BUDGET.burst <= sent <= INSTANCE_BUDGET.burst + refilled + 1
    assert refused is not None
    assert refused.own_limit_of == "mastodon.social"
    await provider.search(None, FetchRequest(query="climate@chaos.social"))  # its own budget

    # A paged follow-up spends the instance's paged budget too (here 2, not refilled).
    demo.make_egress(budget_wait=0.01, egress_host_budgets=[
        "chaos.social=1000/1000/10", "chaos.social#paged=0.0001/2/10"
    ])  # fmt: skip
    demo.advance(240)
    cursor = demo.servers["chaos.social"].local_id(demo.world.posts("mastodon", START)[-1])
    request = FetchRequest(query="climate@chaos.social", cursor=cursor)
    page = await provider.search(None, request)  # three pages: two follow-ups
    assert len(page.items) == 3 * 40
    with pytest.raises(RateLimited) as paged:
        await provider.search(None, request)
    assert paged.value.own_limit_of == "chaos.social#paged"


async def test_errors_become_source_states(people, demo):
    ws, _owner = await people.workspace()
    column = await services.create_column(ws, keyword(["chaos.social"]), actor_user_id=None)
    [source] = await sources_of(column)
    demo.servers["chaos.social"].fail_status = 500
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["state"] == "pending"
    assert row["consecutive_failures"] == 1
    assert "500" in row["last_error"]

    demo.servers["chaos.social"].fail_status = None
    demo.servers["chaos.social"].tag_auth_required = True
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    row = await source_row(source)
    assert row["consecutive_failures"] == 2
    assert "signed-in apps only" in row["last_error"]

    demo.servers["chaos.social"].tag_auth_required = False
    await make_due(source)
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["state"] == "ready"


async def test_an_account_is_looked_up_on_its_instance_and_its_statuses_read(people, demo):
    ws, _owner = await people.workspace()
    column = await services.create_column(
        ws,
        {
            "type": "account_list",
            "title": "People",
            "spec": {"accounts": [{"provider": "mastodon", "handle": "@jonas@chaos.social"}]},
        },
        actor_user_id=None,
    )
    [source] = await sources_of(column)
    await polling.poll_source(ws, source, jitter=0)
    assert (await source_row(source))["state"] == "ready"
    [lookup] = demo.api_hits("chaos.social", "/api/v1/accounts/lookup")
    assert lookup.arg("acct") == "jonas"
    authors = await db.fetch(
        "SELECT DISTINCT author_handle, reposted_by FROM feed_items WHERE workspace_id = $1", ws
    )
    assert {r["author_handle"] for r in authors if not r["reposted_by"]} == {"@jonas@chaos.social"}
    assert {r["reposted_by"] for r in authors} <= {"", "jonas@chaos.social"}


async def test_an_instance_without_a_public_api_is_read_from_the_accounts_rss(demo):
    provider = MastodonProvider()
    server = demo.servers["mastodon.social"]
    original = server.respond

    async def no_api(request):  # type: ignore[no-untyped-def]
        if request.path.startswith("/api/"):
            from app.demo.http import DemoResponse

            return DemoResponse(401, json={"error": "This API requires an authenticated user"})
        return await original(request)

    server.respond = no_api  # type: ignore[method-assign]
    actor = await provider.resolve_handle(None, "maya@mastodon.social")
    assert actor == Actor(
        ref="rss:https://mastodon.social/@maya.rss", handle="maya@mastodon.social"
    )
    page = await provider.author_feed(None, FetchRequest(actor=actor))
    assert page.items
    via_api = MastodonDemo(demo.world, "mastodon.social")
    newest = next(
        p
        for p in demo.world.posts("mastodon")
        if p.author.handle == "maya@mastodon.social" and not p.reposted_by
    )
    # Keyed like the API's statuses: the same status from RSS and from the API is one item.
    assert page.items[0].remote_id == via_api.status(newest)["uri"]
    assert page.items[0].author_handle == "@maya@mastodon.social"


async def test_a_connection_reads_home_with_reblogs_unwrapped_and_mentions(people, demo):
    ws, _owner = await people.workspace()
    connection = await services.connect_account(
        ws,
        {"provider": "mastodon", "instance": "https://Mastodon.Social/", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    column = await services.create_column(
        ws,
        {"type": "platform_feed", "title": "Home",
         "spec": {"connection_id": connection, "kinds": ["home", "mentions"]}},
        actor_user_id=None,
    )  # fmt: skip
    home, mentions = await sources_of(column)
    for source in (home, mentions):
        await polling.poll_source(ws, source, jitter=0)
        assert (await source_row(source))["state"] == "ready"
    [hit] = demo.api_hits("mastodon.social", "/api/v1/timelines/home")
    assert hit.headers["authorization"] == f"Bearer {DEMO_TOKEN}"
    [notes] = demo.api_hits("mastodon.social", "/api/v1/notifications")
    assert notes.query["types[]"] == ["mention"]
    boosted = await db.fetch(
        "SELECT author_handle, reposted_by FROM feed_items WHERE workspace_id = $1"
        " AND reposted_by <> ''",
        ws,
    )
    assert boosted  # the demo's home timeline has boosts: stored as the original status
    assert all(r["author_handle"] != "@" + r["reposted_by"] for r in boosted)
    me = demo.servers["mastodon.social"].me.handle
    mentioned = await db.fetch(
        "SELECT plain_text FROM feed_items i JOIN feed_item_columns f ON f.item_id = i.id"
        " WHERE f.column_id = $1",
        column,
    )
    assert any("@" + me.partition("@")[0] in r["plain_text"] for r in mentioned)


async def test_connecting_checks_the_token_with_the_instance(client, people, demo):
    from app.accounts import services as accounts

    person = await people.member("admin")
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "bot")
    auth = {"Authorization": f"Bearer {token}"}
    bad = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "mastodon", "instance": "chaos.social", "secret": "wrong"},
        headers=auth,
    )
    assert bad.status_code == 422
    assert bad.json()["errors"] == {"secret": "chaos.social did not accept this token."}
    not_a_host = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "mastodon", "instance": "not a host", "secret": DEMO_TOKEN},
        headers=auth,
    )
    assert not_a_host.status_code == 422
    assert "instance" in not_a_host.json()["errors"]
    good = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        headers=auth,
    )
    assert good.status_code == 201, good.text
    body = good.json()
    assert body["handle"] == demo.servers["chaos.social"].me.handle
    assert body["instance"] == "chaos.social"
    assert body["configured"] is True
    assert DEMO_TOKEN not in good.text
    again = await client.post(
        "/api/v1/feeds/connections",
        json={"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        headers=auth,
    )
    assert again.status_code == 201
    assert again.json()["id"] == body["id"]


async def test_a_keyword_column_without_instances_searches_the_connected_ones(people, demo):
    ws, _owner = await people.workspace()
    lonely = await services.create_column(ws, keyword([]) | {"title": "x"}, actor_user_id=None)
    assert await sources_of(lonely) == []
    spec = await db.fetchval("SELECT spec FROM stream_columns WHERE id = $1", lonely)
    assert "no global search" in spec
    await services.connect_account(
        ws,
        {"provider": "mastodon", "instance": "chaos.social", "secret": DEMO_TOKEN},
        actor_user_id=None,
    )
    column = await services.create_column(
        ws, {"type": "keyword", "title": "C", "spec": {"query": "#Climate", "platforms": ["mastodon"]}},
        actor_user_id=None,
    )  # fmt: skip
    [source] = await sources_of(column)
    assert (await source_row(source))["query"] == "climate@chaos.social"


@pytest.mark.parametrize(
    "instances", [["https://evil.example/path"], ["a b"], "mastodon.social", [3], ["x"] * 11]
)
async def test_bad_instances_are_refused_by_field(client, people, instances):
    from app.accounts import services as accounts

    person = await people.member("editor")
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "bot")
    body = keyword([]) | {
        "spec": {"query": "#a", "platforms": ["mastodon"], "instances": instances}
    }
    response = await client.post(
        "/api/v1/feeds/columns", json=body, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 422
    assert set(response.json()["errors"]) == {"spec.instances"}
