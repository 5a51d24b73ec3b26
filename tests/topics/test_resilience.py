"""Runs that survive faults and waste nothing: short leases, live counters, partial runs, known URLs."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from datetime import UTC, datetime

import pytest

from app.accounts import services as accounts
from app.core import db
from app.core.leases import LEASE_SECONDS
from app.topics import queries, scraping, services
from app.topics.types import RunStatus, SourceForm
from tests.egress.servers import Reply
from tests.fakes.site import FakeSite
from tests.topics.test_scraping import arxiv_of, latest_run, make_due, topic_with


@pytest.fixture
async def workspace(people) -> int:
    person = await people.member("editor")
    return person.workspace_id


def serve_feed(site: FakeSite, name: str, count: int, *, page_delay: float = 0.0) -> str:
    """An RSS feed of `count` title-only entries, each page at /story/<name>-<i>."""
    items = "".join(
        f"<item><title>Story {i}</title><link>{site.base}/story/{name}-{i}</link>"
        f"<guid>{name}-{i}</guid></item>"
        for i in range(count)
    )
    body = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Wire</title><link>{site.base}/</link>{items}</channel></rss>"
    ).encode()
    site.routes[f"/feeds/{name}.rss"] = Reply(
        headers=[("Content-Type", "application/rss+xml; charset=utf-8")], body=body
    )
    for i in range(count):
        site.routes[f"/story/{name}-{i}"] = dataclasses.replace(
            site.page("article.html"), delay=page_delay
        )
    return f"{site.base}/feeds/{name}.rss"


def story_hits(site: FakeSite) -> list[str]:
    return [h.path for h in site.hits if h.path.startswith("/story/")]


# Known URLs (item 6) -----------------------------------------------------------------------


async def test_stored_entries_skip_the_page_fetch_and_count_as_duplicates_at_once(
    site, site_egress, workspace
):
    url = serve_feed(site, "wire", 4)
    topic_id, source_id = await topic_with(workspace, SourceForm("feed", url=url))
    await scraping.scrape_source(workspace, source_id)
    assert len(story_hits(site)) == 4
    # Two more stories appear; the four stored ones are not fetched again.
    serve_feed(site, "wire", 6)
    site.hits.clear()
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id)
    assert story_hits(site) == ["/story/wire-4", "/story/wire-5"]
    run = await latest_run(workspace, topic_id)
    assert (run.status, run.found, run.new, run.duplicates, run.failures) == (
        RunStatus.OK, 6, 2, 4, 0,
    )  # fmt: skip


async def test_stored_arxiv_papers_skip_their_html_rendering(site, site_egress, workspace):
    topic_id, source_id = await topic_with(workspace, SourceForm("arxiv", query="cat:cs.CL"))
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    first = await latest_run(workspace, topic_id)
    assert first.new > 0
    site.hits.clear()
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    assert [h.path for h in site.hits] == ["/arxiv/api/query"]
    second = await latest_run(workspace, topic_id)
    assert (second.new, second.duplicates) == (0, first.found)


# Counters as they go -------------------------------------------------------------------


async def test_the_run_row_carries_its_counters_while_the_run_goes_on(site, site_egress, workspace):
    url = serve_feed(site, "slow", 3, page_delay=0.6)
    topic_id, source_id = await topic_with(workspace, SourceForm("feed", url=url))
    running = asyncio.create_task(scraping.scrape_source(workspace, source_id))
    seen: set[tuple[str, int, int]] = set()
    while not running.done():
        runs = await queries.recent_runs(workspace, topic_id)
        if runs:
            seen.add((runs[0].status.value, runs[0].found, runs[0].new))
        await asyncio.sleep(0.05)
    await running
    assert ("running", 3, 1) in seen
    assert ("running", 3, 2) in seen


# Partial runs --------------------------------------------------------------------------


async def test_a_run_with_failed_entries_is_partial_and_comes_back_within_minutes(
    site, site_egress, workspace
):
    url = serve_feed(site, "flaky", 3)
    site.routes["/story/flaky-1"] = Reply(status=503, body=b"try later")
    topic_id, source_id = await topic_with(workspace, SourceForm("feed", url=url))
    await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert (run.status, run.new, run.failures) == (RunStatus.PARTIAL, 2, 1)
    source = await queries.source(workspace, source_id)
    assert source is not None
    wait = (source.next_run_at - datetime.now(UTC)).total_seconds()
    assert 90 < wait < 150  # 2 min (+/- jitter), not the hour-long interval
    assert source.failures == 0  # the source itself was read

    # The site is back: the retry fetches only the failed entry.
    site.routes["/story/flaky-1"] = site.page("article.html")
    site.hits.clear()
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id)
    assert story_hits(site) == ["/story/flaky-1"]
    run = await latest_run(workspace, topic_id)
    assert (run.status, run.new, run.duplicates) == (RunStatus.OK, 1, 2)


# Leases --------------------------------------------------------------------------------


async def test_a_run_of_a_workspace_deleted_meanwhile_ends_quietly_writing_nothing(
    site, site_egress, people, caplog
):
    owner = await people.member("owner")
    workspace = owner.workspace_id
    url = serve_feed(site, "gone", 2, page_delay=0.6)
    _topic_id, source_id = await topic_with(workspace, SourceForm("feed", url=url))
    running = asyncio.create_task(scraping.scrape_source(workspace, source_id))
    await asyncio.sleep(0.3)  # reading the first entry's page

    await accounts.delete_workspace(workspace, "Desk", actor_user_id=owner.user_id)

    await running  # nothing raised
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    for table in ("topic_runs", "topic_sources", "articles", "events"):
        count = await db.fetchval(
            f"SELECT count(*) FROM {table} WHERE workspace_id = $1", workspace
        )
        assert (table, count) == (table, 0)


async def test_a_source_is_claimed_for_a_minute_and_the_heartbeat_extends_only_its_own_lease(
    workspace,
):
    _topic, source_id = await topic_with(workspace, SourceForm("feed", url="https://c.example/f"))
    leased = await services.claim_source(workspace, source_id)
    assert leased is not None
    assert leased.fence is not None
    left = (leased.fence.until - datetime.now(UTC)).total_seconds()
    assert LEASE_SECONDS - 5 < left <= LEASE_SECONDS
    first = leased.fence.until
    await asyncio.sleep(0.01)
    assert await services.renew_lease(leased)
    assert leased.fence.until > first
    async with db.workspace_tx(workspace) as tx:  # another worker took it after expiry
        await tx.execute(
            "UPDATE topic_sources SET lease_until = now() + interval '1 minute' WHERE id = $1",
            source_id,
        )
    assert not await services.renew_lease(leased)


# Our own limit is not the site's ----------------------------------------------------------


async def test_a_run_stopped_by_our_own_host_budget_says_so(site, site_egress, workspace):
    site_egress(egress_host_budgets=["127.0.0.1=0.01/1/1"], budget_wait=0)  # one request
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    await scraping.scrape_source(workspace, source_id)  # spends the one token
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert run.status == RunStatus.FAILED
    assert run.error == ("Waiting for our own limit for 127.0.0.1; it will be tried again later.")
    assert "asked us to slow down" not in run.error


async def test_a_site_answering_429_still_asked_us_to_slow_down(site, site_egress, workspace):
    site.routes["/feeds/busy.rss"] = Reply(status=429, headers=[("Retry-After", "120")])
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/busy.rss")
    )
    await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert run.error == "The site asked us to slow down; it will be tried again later."


async def test_the_topic_page_shows_a_partial_run_as_partial(client, people, site, site_egress):
    from tests.factories import sign_in

    person = await people.member("editor")
    await sign_in(client, person.email)
    url = serve_feed(site, "flaky", 2)
    site.routes["/story/flaky-1"] = Reply(status=503, body=b"try later")
    topic_id, source_id = await topic_with(person.workspace_id, SourceForm("feed", url=url))
    run_id = await scraping.scrape_source(person.workspace_id, source_id)
    page = await client.get(f"/topics/{topic_id}")
    assert page.status_code == 200
    row = page.text.split(f'id="run-{run_id}"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="status">partial</td>' in row
