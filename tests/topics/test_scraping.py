"""The scrape step end to end: fake feeds and arXiv in, articles in the library, runs counted."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from datetime import UTC, datetime, timedelta

import pytest

from app.articles import queries as library
from app.articles.types import LibraryFilter, Source, Warning
from app.core import db
from app.core.config import Settings
from app.core.redis import queue_name
from app.topics import queries, scraping, services
from app.topics.arxiv import ArxivEndpoints
from app.topics.schedule import BACKOFF_BASE
from app.topics.types import RunStatus, SourceForm, TopicForm
from tests.egress.servers import Reply, Seen
from tests.fakes.site import FEED_ETAG, FakeSite


@pytest.fixture
async def workspace(people) -> int:
    person = await people.member("editor")
    return person.workspace_id


async def topic_with(workspace_id: int, form: SourceForm, name: str = "Floods") -> tuple[int, int]:
    topic_id = await services.create_topic(workspace_id, TopicForm(name), actor_user_id=None)
    source_id = await services.add_source(workspace_id, topic_id, form, actor_user_id=None)
    return topic_id, source_id


def arxiv_of(site: FakeSite) -> ArxivEndpoints:
    return ArxivEndpoints(site.base + "/arxiv/api/query", site.base + "/arxiv/html/{id}")


async def make_due(workspace_id: int, source_id: int) -> None:
    """What time does between runs: the source is due again."""
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE topic_sources SET next_run_at = now() WHERE workspace_id = $1 AND id = $2",
            workspace_id,
            source_id,
        )


async def latest_run(workspace_id: int, topic_id: int):  # type: ignore[no-untyped-def]
    return (await queries.recent_runs(workspace_id, topic_id))[0]


async def articles_of(workspace_id: int, topic_id: int):  # type: ignore[no-untyped-def]
    page = await library.library(workspace_id, LibraryFilter(topic_id=topic_id, limit=100))
    return [await library.article(workspace_id, row.id) for row in page.items]


# Feeds ------------------------------------------------------------------------------------


async def test_a_feed_run_stores_every_entry_with_the_topic_and_counts_them(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    run_id = await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert run.id == run_id
    assert (run.status, run.found, run.new, run.duplicates, run.failures) == (
        RunStatus.OK,
        3,
        3,
        0,
        0,
    )
    stored = await articles_of(workspace, topic_id)
    assert {a.title for a in stored} == {
        "Heat pumps outsell gas boilers in the valley for the first time",
        "Reservoir levels recover after wet February",
        "Solar co-operative opens its books to new members",
    }
    heat = next(a for a in stored if a.title.startswith("Heat pumps"))
    assert heat.source == Source.FEED
    assert heat.topic_id == topic_id
    assert heat.site_name == "Valley Climate Desk"
    assert heat.byline == "Jonas Lindqvist"
    assert "utm_source" not in heat.url  # normalised by the processing path
    assert "1,240 heat pumps fitted" in heat.text
    assert heat.metadata["full_text"] == "feed"
    # Full content in the feed: no article page was fetched.
    assert [h.path for h in site.hits] == ["/feeds/full.rss"]


async def test_the_second_run_of_an_unchanged_feed_is_a_conditional_get_answered_304(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    await scraping.scrape_source(workspace, source_id)
    source = await queries.source(workspace, source_id)
    assert source is not None
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id)
    second = site.hits_of("/feeds/full.rss")[1]
    assert second.headers["if-none-match"] == FEED_ETAG
    assert "if-modified-since" in second.headers
    run = await latest_run(workspace, topic_id)
    assert (run.status, run.found, run.new) == (RunStatus.NOT_MODIFIED, 0, 0)
    assert len(await articles_of(workspace, topic_id)) == 3


async def test_entries_seen_before_are_counted_as_duplicates_on_the_second_run(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/summaries.atom")
    )
    await scraping.scrape_source(workspace, source_id)
    await make_due(workspace, source_id)
    await scraping.scrape_source(workspace, source_id)
    second, first = await queries.recent_runs(workspace, topic_id)
    assert (first.found, first.new, first.duplicates) == (3, 3, 0)
    assert (second.status, second.found, second.new, second.duplicates) == (RunStatus.OK, 3, 0, 3)
    assert len(await articles_of(workspace, topic_id)) == 3


async def test_a_summary_only_feed_gets_each_article_in_full(site, site_egress, workspace):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/summaries.atom")
    )
    await scraping.scrape_source(workspace, source_id)
    assert [h.path for h in site.hits] == [
        "/feeds/summaries.atom",
        "/news/local/flood-warning",
        "/news/local/faehren",
        "/news/local/ferry-timetable-gone",
    ]
    stored = {a.title: a for a in await articles_of(workspace, topic_id)}
    flood = stored["River towns vote to share one flood warning system"]
    assert flood.metadata["full_text"] == "fetched"
    assert "Six councils along the River Wend have agreed" in flood.text
    assert "ending a patchwork that residents said" in flood.text  # not in the summary
    assert flood.site_name == "The Riverside Courier"
    assert flood.published_at == datetime(2025, 3, 4, 6, 30, tzinfo=UTC)  # the feed's date
    faehren = stored["Größere Fähren für den Übergang nach Königswinter"]
    assert "„Wir müssen die Wartezeiten an Wochenenden halbieren“" in faehren.text  # windows-1252


async def test_when_the_full_text_cannot_be_fetched_the_summary_is_kept_and_says_so(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/summaries.atom")
    )
    await scraping.scrape_source(workspace, source_id)
    stored = {a.title: a for a in await articles_of(workspace, topic_id)}
    ferry = stored["Ferry timetable changes for spring"]
    assert ferry.metadata["full_text"] == "summary"
    assert ferry.metadata["full_text_error"] == "The page was not found (HTTP 404)."
    assert "the first ferry leaves Millbridge at 6.10" in ferry.text


@pytest.mark.parametrize("location", ["about:blank", "mailto:desk@example.org", "http:host"])
async def test_an_entry_redirecting_where_we_cannot_follow_fails_alone(
    site, site_egress, workspace, location
):
    """One entry's unfollowable redirect is that entry's problem, not the whole run's."""
    site.routes["/news/local/faehren"] = Reply(302, [("Location", location)])
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/summaries.atom")
    )
    await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert run.status != RunStatus.FAILED
    assert run.found == 3
    stored = {a.title: a for a in await articles_of(workspace, topic_id)}
    assert len(stored) == 3
    faehren = stored["Größere Fähren für den Übergang nach Königswinter"]
    assert faehren.metadata["full_text"] == "summary"
    assert faehren.metadata["full_text_error"].startswith("This address cannot be fetched")


async def test_a_consent_wall_behind_a_feed_entry_keeps_the_summary_with_the_warning(
    site, site_egress, workspace
):
    site.routes["/news/local/flood-warning"] = site.routes["/consent/onetrust-en"]
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/summaries.atom")
    )
    await scraping.scrape_source(workspace, source_id)
    stored = {a.title: a for a in await articles_of(workspace, topic_id)}
    flood = stored["River towns vote to share one flood warning system"]
    assert flood.warnings == (Warning.CONSENT_WALL.value,)
    assert "pool sensors and sirens" in flood.text  # the feed's summary, not the dialog
    assert "partners" not in flood.text


async def test_an_address_that_is_no_feed_fails_the_run_with_a_reason(site, site_egress, workspace):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/not-a-feed")
    )
    await scraping.scrape_source(workspace, source_id)
    run = await latest_run(workspace, topic_id)
    assert run.status == RunStatus.FAILED
    assert run.error == "This address does not serve an RSS or Atom feed."


# arXiv -------------------------------------------------------------------------------------


async def test_an_arxiv_run_stores_papers_with_authors_pdf_and_sections(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("arxiv", query="all:flood AND cat:cs.LG")
    )
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    run = await latest_run(workspace, topic_id)
    assert (run.status, run.found, run.new, run.failures) == (RunStatus.OK, 2, 2, 0)
    api = site.hits_of("/arxiv/api/query")[0]
    assert api.query["search_query"] == ["all:flood AND cat:cs.LG"]
    assert api.query["sortBy"] == ["submittedDate"]
    assert api.query["sortOrder"] == ["descending"]
    stored = {a.url: a for a in await articles_of(workspace, topic_id)}
    paper = stored["https://arxiv.org/abs/2502.01234"]
    assert paper.source == Source.ARXIV
    assert paper.topic_id == topic_id
    assert "Flash floods in small catchments" in paper.text
    assert paper.arxiv is not None
    assert paper.arxiv.arxiv_id == "2502.01234v2"
    assert paper.arxiv.authors == ("Ines Carvalho", "Kwame Mensah", "Yuki Tanabe")
    assert paper.arxiv.pdf_available
    assert paper.arxiv.pdf_url == "https://arxiv.org/pdf/2502.01234v2"
    assert [s.heading for s in paper.arxiv.sections] == [
        "1 Introduction",
        "2 Method",
        "2.1 Data",
        "3 Results",
    ]


async def test_a_paper_without_an_html_rendering_is_stored_without_sections(
    site, site_egress, workspace
):
    topic_id, source_id = await topic_with(workspace, SourceForm("arxiv", query="all:flood"))
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    assert [h.path for h in site.hits][-1] == "/arxiv/html/2501.04321v1"  # answered 404
    stored = {a.url: a for a in await articles_of(workspace, topic_id)}
    bench = stored["https://arxiv.org/abs/2501.04321"]
    assert bench.arxiv is not None
    assert bench.arxiv.sections == ()
    assert bench.arxiv.pdf_available
    assert (await latest_run(workspace, topic_id)).failures == 0


async def test_an_arxiv_query_error_fails_the_run_with_arxivs_message(site, site_egress, workspace):
    topic_id, source_id = await topic_with(workspace, SourceForm("arxiv", query="all:(flood"))
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    run = await latest_run(workspace, topic_id)
    assert run.status == RunStatus.FAILED
    assert "unbalanced parentheses" in run.error


async def test_arxiv_requests_keep_to_the_hosts_budget(site, site_egress, workspace):
    # One request per 0.25 s for the test (arXiv's real one is 3 s: see test_parsing).
    site_egress(egress_host_budgets=["127.0.0.1=4/1/1"], budget_wait=10)
    topic_id, source_id = await topic_with(workspace, SourceForm("arxiv", query="all:flood"))
    await scraping.scrape_source(workspace, source_id, arxiv=arxiv_of(site))
    times = [h.at for h in site.hits if h.path.startswith("/arxiv/")]
    assert len(times) == 3  # the API and two renderings
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # Spaced by the budget (unbudgeted they come milliseconds apart); the margin is the
    # loopback server's own delay in noting an arrival on a loaded machine.
    assert min(gaps) >= 0.17, gaps
    assert (await latest_run(workspace, topic_id)).new == 2


# Failures, leases, the scheduler --------------------------------------------------------------


async def test_a_failing_source_backs_off_and_recovers(site, site_egress, workspace):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/failing")
    )
    before = datetime.now(UTC)
    await scraping.scrape_source(workspace, source_id)
    source = await queries.source(workspace, source_id)
    assert source is not None
    assert source.failures == 1
    assert source.last_error == "The site had an error (HTTP 503); try again later."
    wait = (source.next_run_at - before).total_seconds()
    assert BACKOFF_BASE * 0.8 - 1 <= wait <= BACKOFF_BASE * 1.2 + 1
    assert (await latest_run(workspace, topic_id)).status == RunStatus.FAILED

    await make_due(workspace, source_id)
    before = datetime.now(UTC)
    await scraping.scrape_source(workspace, source_id)
    source = await queries.source(workspace, source_id)
    assert source is not None
    assert source.failures == 2
    assert (source.next_run_at - before).total_seconds() >= BACKOFF_BASE * 2 * 0.8 - 1

    site.routes["/feeds/failing"] = site.routes["/feeds/full.rss"]
    await make_due(workspace, source_id)
    before = datetime.now(UTC)
    await scraping.scrape_source(workspace, source_id)
    source = await queries.source(workspace, source_id)
    assert source is not None
    assert (source.failures, source.last_error) == (0, "")
    assert source.next_run_at - before >= timedelta(seconds=source.interval_seconds - 1)


async def test_two_workers_never_scrape_one_source_at_once(site, site_egress, workspace):
    feed = site.routes["/feeds/full.rss"]
    assert callable(feed)

    def slow(seen: Seen) -> Reply:
        return dataclasses.replace(feed(seen), delay=0.3)

    site.routes["/feeds/slow.rss"] = slow
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/slow.rss")
    )
    first, second = await asyncio.gather(
        scraping.scrape_source(workspace, source_id), scraping.scrape_source(workspace, source_id)
    )
    assert sorted([first is None, second is None]) == [False, True]
    assert len(site.hits_of("/feeds/slow.rss")) == 1
    assert len(await queries.recent_runs(workspace, topic_id)) == 1


async def test_a_leased_source_is_not_claimed_again(site, site_egress, workspace):
    _topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    assert await services.claim_source(workspace, source_id) is not None
    assert await services.claim_source(workspace, source_id) is None
    assert await scraping.scrape_source(workspace, source_id) is None
    assert site.hits == []


async def test_a_source_that_is_not_due_is_not_run(site, site_egress, workspace):
    _topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    await scraping.scrape_source(workspace, source_id)
    assert await scraping.scrape_source(workspace, source_id) is None
    assert len(site.hits) == 1


async def test_the_cron_tick_enqueues_one_job_per_due_source(
    site, workspace, redis, settings: Settings
):
    _t, due = await topic_with(workspace, SourceForm("feed", url=site.base + "/feeds/full.rss"))
    _t, paused = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/other.rss"), "Paused"
    )
    await services.set_source_enabled(workspace, _t, paused, False)
    deleted_topic, in_deleted = await topic_with(
        workspace, SourceForm("arxiv", query="all:x"), "Gone"
    )
    await services.delete_topic(workspace, deleted_topic, actor_user_id=None)
    await redis.flushdb()  # the wake-ups add_source sent; the tick is what is tested

    # A dead job may still hold an old job id in Redis: wake-ups carry none, so
    # none is swallowed (a wake-up too many finds the source claimed and leaves).
    await redis.set(f"arq:job:topic-source:{due}", b"held by a dead job")
    assert await services.wake_due_sources() == 1
    assert await services.wake_due_sources() == 1
    jobs = await redis.queued_jobs(queue_name=queue_name(settings))
    assert [(j.function, j.args) for j in jobs] == [("scrape_topic_source", (workspace, due))] * 2
    assert in_deleted not in [j.args[1] for j in jobs]


async def test_adding_and_running_a_source_wake_a_worker(workspace, redis, settings: Settings):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url="https://feeds.example/a.xml")
    )
    await services.run_source_now(workspace, topic_id, source_id)
    jobs = await redis.queued_jobs(queue_name=queue_name(settings))
    assert [(j.function, j.args) for j in jobs] == [
        ("scrape_topic_source", (workspace, source_id))
    ] * 2


async def test_a_run_left_running_by_a_dead_worker_is_closed(site, site_egress, workspace):
    topic_id, source_id = await topic_with(
        workspace, SourceForm("feed", url=site.base + "/feeds/full.rss")
    )
    leased = await services.claim_source(workspace, source_id)
    assert leased is not None
    await services.start_run(leased)
    assert await services.close_interrupted_runs() == 0  # a live run is left alone
    async with db.workspace_tx(workspace) as tx:  # no heartbeat renewed the lease
        await tx.execute(
            "UPDATE topic_sources SET lease_until = now() - interval '1 second'"
            " WHERE workspace_id = $1",
            workspace,
        )
    assert await services.close_interrupted_runs() == 1
    run = await latest_run(workspace, topic_id)
    assert run.status == RunStatus.FAILED
    assert "interrupted" in run.error
