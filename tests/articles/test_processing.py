"""Seed 004, article processing: every acceptance scenario, edge case, FR and SC by name.

Everything runs on the real PostgreSQL and Redis. A signal is read where it
lands: the arq queue (the analysis wake-up), the events table (the
`article_processed` row) and the workspace's live channel.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sys
import time
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from app.analysis import services as analysis
from app.analysis.services import Run
from app.analysis.types import AnalysisStatus
from app.articles import queries, services
from app.articles.services import delete_article, process_scraped_article, restore_article
from app.articles.types import (
    LIBRARY_TOPIC,
    ArticleNotFound,
    ArxivData,
    ArxivSection,
    OutcomeKind,
    Source,
    Warning,
    article_topic,
)
from app.articles.urls import normalize_url
from app.core import db
from app.safe_content import Document, from_text
from tests.articles.helpers import (
    SECTIONS,
    article_event,
    arxiv_event,
    count,
    live_notices,
    processed_events,
    queued_jobs,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def workspace(people) -> int:
    workspace_id, _owner = await people.workspace()
    return workspace_id


@asynccontextmanager
async def table_locked(settings, table: str, monkeypatch):
    """Another session holds an exclusive lock on `table`: the store cannot take writes
    to it. The service's lock timeout is shortened so the test does not wait 5 s."""
    monkeypatch.setattr(services, "LOCK_TIMEOUT", "150ms")
    conn = await asyncpg.connect(settings.database_url)
    tx = conn.transaction()
    await tx.start()
    try:
        await conn.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        yield
    finally:
        await tx.rollback()
        await conn.close()


async def complete_analysis(workspace_id: int, article_id: int, settings) -> None:
    assert await analysis.run_analysis(workspace_id, article_id, settings) == Run.COMPLETED


async def analysis_status(workspace_id: int, article_id: int) -> str:
    return await db.fetchval(
        "SELECT status FROM analyses WHERE workspace_id = $1 AND article_id = $2",
        workspace_id,
        article_id,
    )


# User story 1: a new article is saved and queued ------------------------------------


async def test_us1_s1_new_article_is_stored_once_and_signalled(workspace):
    event = article_event("https://news.example/2024/council-budget")
    async with live_notices(workspace) as notices:
        outcome = await process_scraped_article(workspace, event)

    assert outcome.kind == OutcomeKind.NEW
    assert outcome.signalled
    assert await count("articles", workspace) == 1
    stored = await db.fetchrow("SELECT id, url FROM articles WHERE workspace_id = $1", workspace)
    assert stored["id"] == outcome.article_id
    # The signal: one analysis wake-up, one event row, live notices.
    jobs = await queued_jobs()
    assert [(j.function, j.args) for j in jobs] == [
        ("analyse_article", (workspace, outcome.article_id))
    ]
    assert jobs[0].job_id == f"analyse:{workspace}:{outcome.article_id}"
    events = await processed_events(workspace)
    assert len(events) == 1
    assert events[0]["article_id"] == outcome.article_id
    assert events[0]["outcome"] == "new"
    assert events[0]["subject"] == event.title
    assert LIBRARY_TOPIC in notices.topics
    assert "activity" in notices.topics
    assert await analysis_status(workspace, outcome.article_id) == "pending"


async def test_us1_s2_arxiv_metadata_is_persisted(workspace):
    outcome = await process_scraped_article(workspace, arxiv_event())

    assert outcome.kind == OutcomeKind.NEW
    row = await db.fetchrow(
        "SELECT arxiv_id, authors, pdf_available, pdf_url, sections FROM arxiv_metadata "
        "WHERE workspace_id = $1 AND article_id = $2",
        workspace,
        outcome.article_id,
    )
    assert row["arxiv_id"] == "2401.01234v2"
    assert json.loads(row["authors"]) == ["Ada Lovelace", "Alan Turing"]
    assert row["pdf_available"] is True
    assert row["pdf_url"] == "https://arxiv.org/pdf/2401.01234v2"
    assert json.loads(row["sections"]) == [{"heading": s.heading, "text": s.text} for s in SECTIONS]


async def test_us1_s3_store_unavailable_returns_failed_without_signal(
    workspace, settings, monkeypatch, caplog
):
    caplog.set_level(logging.ERROR, logger="app.articles.services")
    async with live_notices(workspace) as notices, table_locked(settings, "articles", monkeypatch):
        outcome = await process_scraped_article(workspace, article_event())

    assert outcome.kind == OutcomeKind.FAILED
    assert not outcome.signalled
    assert "persistent store is temporarily unavailable" in outcome.reason
    assert "store unavailable" in caplog.text  # logged for observability
    assert await count("articles", workspace) == 0
    assert await count("analyses", workspace) == 0
    assert await processed_events(workspace) == []
    assert await queued_jobs() == []
    assert notices.topics == []


# User story 2: a duplicate of an analysed article is skipped ------------------------


async def test_us2_s1_duplicate_of_analysed_article_is_skipped_without_signal(workspace, settings):
    first = await process_scraped_article(workspace, article_event("https://news.example/a"))
    await complete_analysis(workspace, first.article_id, settings)
    jobs_before = await queued_jobs()
    events_before = await processed_events(workspace)

    async with live_notices(workspace) as notices:
        again = await process_scraped_article(workspace, article_event("https://news.example/a"))

    assert again.kind == OutcomeKind.DUPLICATE
    assert again.article_id == first.article_id
    assert not again.signalled
    assert await count("articles", workspace) == 1
    assert await queued_jobs() == jobs_before
    assert await processed_events(workspace) == events_before
    assert notices.topics == []


async def test_us2_s2_rapid_resubmissions_leave_one_record(workspace):
    url = "https://news.example/rapid"
    outcomes = await asyncio.gather(
        *(process_scraped_article(workspace, article_event(url)) for _ in range(25))
    )

    assert await count("articles", workspace) == 1
    assert [o.kind for o in outcomes].count(OutcomeKind.NEW) == 1
    assert {o.article_id for o in outcomes} == {outcomes[0].article_id}
    assert all(o.kind != OutcomeKind.FAILED for o in outcomes)


# User story 3: a duplicate without analysis is re-queued -----------------------------


async def test_us3_s1_unanalysed_duplicate_is_requeued_without_new_record(workspace, redis):
    first = await process_scraped_article(workspace, article_event("https://news.example/b"))
    await redis.flushdb()  # the first wake-up was lost (Redis restarted)
    await db.fetchval(
        "UPDATE analyses SET status = 'failed', attempts = 5, error = 'model down' "
        "WHERE article_id = $1 RETURNING id",
        first.article_id,
    )

    async with live_notices(workspace) as notices:
        again = await process_scraped_article(workspace, article_event("https://news.example/b"))

    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    assert again.article_id == first.article_id
    assert again.signalled
    assert await count("articles", workspace) == 1
    assert [(j.function, j.args) for j in await queued_jobs()] == [
        ("analyse_article", (workspace, first.article_id))
    ]
    events = await processed_events(workspace)
    assert [e["outcome"] for e in events] == ["new", "duplicate_awaiting_analysis"]
    assert article_topic(first.article_id) in notices.topics  # an open reader page updates
    row = await db.fetchrow(
        "SELECT status, attempts FROM analyses WHERE article_id = $1", first.article_id
    )
    assert (row["status"], row["attempts"]) == ("pending", 0)


async def test_us3_s1_article_without_any_analysis_row_is_requeued(workspace):
    first = await process_scraped_article(workspace, article_event("https://news.example/c"))
    await db.fetchval("DELETE FROM analyses WHERE article_id = $1 RETURNING id", first.article_id)

    again = await process_scraped_article(workspace, article_event("https://news.example/c"))

    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    assert await analysis_status(workspace, first.article_id) == "pending"
    assert await count("articles", workspace) == 1


async def test_us3_s2_requeued_arxiv_article_carries_its_sections(workspace, settings):
    first = await process_scraped_article(workspace, arxiv_event())
    # The re-submission carries only the abstract: no sections, no metadata at all.
    bare = arxiv_event(arxiv=None)

    again = await process_scraped_article(workspace, bare)

    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    assert (await processed_events(workspace))[-1]["article_id"] == first.article_id
    article = await queries.analysis_input(workspace, first.article_id)
    assert [s.heading for s in article.sections] == ["Introduction", "Method", "Results"]
    assert "Conformers are sampled with a diffusion model." in article.full_text
    assert await analysis.run_analysis(workspace, first.article_id, settings) == Run.COMPLETED
    keywords = json.loads(
        await db.fetchval("SELECT keywords FROM analyses WHERE article_id = $1", first.article_id)
    )
    assert "conformers" in [k.lower() for k in keywords]  # only the sections say so


# Edge cases --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "The URL is empty."),
        ("   ", "The URL is empty."),
        ("not a url", "must start with http:// or https://"),
        ("javascript:alert(1)", "must start with http:// or https://"),
        ("https://exa mple.com/x", "is not valid"),
        ("https://example.com:99999/", "port"),
    ],
)
async def test_edge_empty_or_malformed_url_fails_with_a_reason(workspace, url, reason):
    outcome = await process_scraped_article(workspace, article_event(url))

    assert outcome.kind == OutcomeKind.FAILED
    assert reason in outcome.reason
    assert outcome.article_id is None
    assert await count("articles", workspace) == 0
    assert await processed_events(workspace) == []
    assert await queued_jobs() == []


@pytest.mark.parametrize("text", ["", "   \n\n  "])
async def test_edge_empty_content_with_valid_url_fails_with_a_reason(workspace, text):
    outcome = await process_scraped_article(
        workspace, article_event("https://news.example/empty", text=text)
    )

    assert outcome.kind == OutcomeKind.FAILED
    assert "no text" in outcome.reason
    assert await count("articles", workspace) == 0
    assert await queued_jobs() == []


async def test_edge_pdf_kept_as_a_link_is_accepted_without_text(workspace):
    event = article_event(
        "https://papers.example/report.pdf",
        text="",
        warnings=(Warning.PDF,),
        metadata={"content_type": "application/pdf", "pages": 12},
    )

    outcome = await process_scraped_article(workspace, event)

    assert outcome.kind == OutcomeKind.NEW
    stored = await db.fetchrow(
        "SELECT warnings, metadata FROM articles WHERE id = $1", outcome.article_id
    )
    assert stored["warnings"] == ["pdf_link_only"]
    assert json.loads(stored["metadata"]) == {"content_type": "application/pdf", "pages": 12}


async def test_edge_arxiv_metadata_failure_keeps_the_article(
    workspace, settings, monkeypatch, caplog
):
    caplog.set_level(logging.WARNING, logger="app.articles.services")
    async with table_locked(settings, "arxiv_metadata", monkeypatch):
        outcome = await process_scraped_article(workspace, arxiv_event())

    assert outcome.kind == OutcomeKind.NEW
    assert await count("articles", workspace) == 1
    assert await count("arxiv_metadata", workspace) == 0
    assert "arXiv metadata of article" in caplog.text
    assert len(await processed_events(workspace)) == 1  # the article is signalled all the same
    assert len(await queued_jobs()) == 1


async def test_edge_metadata_missing_after_a_failure_is_filled_in_by_the_next_run(
    workspace, settings, monkeypatch
):
    async with table_locked(settings, "arxiv_metadata", monkeypatch):
        first = await process_scraped_article(workspace, arxiv_event())

    again = await process_scraped_article(workspace, arxiv_event())

    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    assert again.article_id == first.article_id
    assert await count("arxiv_metadata", workspace) == 1


async def test_edge_concurrent_tasks_leave_one_row_and_lose_no_signal(workspace):
    urls = [f"https://news.example/concurrent/{i}" for i in range(5)]
    events = [article_event(u) for u in urls for _ in range(8)]

    outcomes = await asyncio.gather(*(process_scraped_article(workspace, e) for e in events))

    assert await count("articles", workspace) == 5
    kinds = [o.kind for o in outcomes]
    assert kinds.count(OutcomeKind.NEW) == 5
    assert kinds.count(OutcomeKind.DUPLICATE_AWAITING_ANALYSIS) == 35
    assert len(await processed_events(workspace)) == 40  # one signal per submission
    assert {j.args for j in await queued_jobs()} == {(workspace, o.article_id) for o in outcomes}


async def test_edge_concurrent_submissions_from_several_processes_leave_one_row(
    workspace, settings
):
    urls = [f"https://news.example/processes/{i}" for i in range(4)]
    args = {
        "database_url": settings.database_url,
        "redis_url": settings.redis_url,
        "redis_prefix": settings.redis_prefix,
        "workspace_id": workspace,
        "urls": urls,
        "copies": 5,
        "start_at": time.time() + 2.5,  # all processes are connected by then
    }
    processes = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.articles.submit_process",
            json.dumps(args),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(3)
    ]
    results = [await p.communicate() for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], [
        err.decode()[-2000:] for _o, err in results
    ]
    outcomes = [o for out, _err in results for o in json.loads(out)]

    assert len(outcomes) == 60
    assert await count("articles", workspace) == 4
    kinds = [o["kind"] for o in outcomes]
    assert kinds.count("new") == 4
    assert kinds.count("duplicate_awaiting_analysis") == 56
    assert len({o["article_id"] for o in outcomes}) == 4
    assert len(await processed_events(workspace)) == 60  # no lost signal
    article_ids = {o["article_id"] for o in outcomes}
    assert {j.args for j in await queued_jobs()} == {(workspace, a) for a in article_ids}


async def test_edge_same_url_in_two_workspaces_is_two_articles(people):
    one, _ = await people.workspace("One")
    two, _ = await people.workspace("Two")

    a = await process_scraped_article(one, article_event("https://news.example/shared"))
    b = await process_scraped_article(two, article_event("https://news.example/shared"))

    assert (a.kind, b.kind) == (OutcomeKind.NEW, OutcomeKind.NEW)
    assert a.article_id != b.article_id


async def test_edge_trashed_article_is_a_duplicate_and_stays_in_the_trash(workspace):
    first = await process_scraped_article(workspace, article_event("https://news.example/t"))
    await delete_article(workspace, first.article_id, actor_user_id=None)

    again = await process_scraped_article(workspace, article_event("https://news.example/t"))

    assert again.kind == OutcomeKind.DUPLICATE
    assert not again.signalled
    assert await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", first.article_id)


async def test_edge_topic_of_another_workspace_is_not_linked(people):
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    topic_id = await db.fetchval(
        "INSERT INTO topics (workspace_id, name) VALUES ($1, 'Theirs') RETURNING id", theirs
    )

    outcome = await process_scraped_article(mine, article_event(topic_id=topic_id))

    assert outcome.kind == OutcomeKind.NEW
    assert (
        await db.fetchval("SELECT topic_id FROM articles WHERE id = $1", outcome.article_id) is None
    )


async def test_edge_nul_characters_from_a_feed_do_not_fail_the_save(workspace):
    event = article_event(title="Bad\x00title", byline="A\x00B", metadata={"x": "a\x00b"})

    outcome = await process_scraped_article(workspace, event)

    assert outcome.kind == OutcomeKind.NEW
    row = await db.fetchrow("SELECT title, byline FROM articles WHERE id = $1", outcome.article_id)
    assert (row["title"], row["byline"]) == ("Badtitle", "AB")


# Functional requirements -------------------------------------------------------------


async def test_fr001_dedup_uses_the_hash_of_the_normalised_url(workspace):
    first = await process_scraped_article(
        workspace, article_event("HTTPS://News.Example:443/a?id=1&utm_source=rss#top")
    )
    again = await process_scraped_article(
        workspace, article_event("https://news.example/a?id=1&fbclid=xyz")
    )
    other = await process_scraped_article(workspace, article_event("https://news.example/a?id=2"))

    assert again.article_id == first.article_id
    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    assert other.kind == OutcomeKind.NEW
    row = await db.fetchrow("SELECT url, url_hash FROM articles WHERE id = $1", first.article_id)
    assert row["url"] == "https://news.example/a?id=1"
    assert row["url_hash"] == hashlib.sha256(b"https://news.example/a?id=1").hexdigest()


async def test_fr002_new_article_persists_source_title_content_date_topic_metadata(workspace):
    topic_id = await db.fetchval(
        "INSERT INTO topics (workspace_id, name) VALUES ($1, 'Transport') RETURNING id", workspace
    )
    published = datetime(2024, 5, 6, 7, 8, tzinfo=UTC)
    event = article_event(
        "https://news.example/fr002",
        title="Trams return",
        byline="Kim Reporter",
        site_name="City News",
        language="en-GB",
        published_at=published,
        topic_id=topic_id,
        lead_image="https://img.example/tram.jpg",
        metadata={"feed": "https://news.example/rss", "entry_id": "42"},
        warnings=(Warning.PAYWALL,),
        source=Source.FEED,
    )

    outcome = await process_scraped_article(workspace, event)

    view = await queries.article(workspace, outcome.article_id)
    assert view.source == Source.FEED
    assert (view.title, view.byline, view.site_name) == (
        "Trams return",
        "Kim Reporter",
        "City News",
    )
    assert view.published_at == published
    assert view.topic_id == topic_id
    assert view.topic_name == "Transport"
    assert view.content == event.content
    assert "night buses" in view.text
    assert view.word_count > 100
    assert view.lead_image == "https://img.example/tram.jpg"
    assert view.metadata == {"feed": "https://news.example/rss", "entry_id": "42"}
    assert view.warnings == ("probable_paywall",)
    assert view.language == "en-gb"


async def test_fr003_three_processing_outcomes_are_distinguished(workspace, settings):
    url = "https://news.example/fr003"
    new = await process_scraped_article(workspace, article_event(url))
    awaiting = await process_scraped_article(workspace, article_event(url))
    await complete_analysis(workspace, new.article_id, settings)
    duplicate = await process_scraped_article(workspace, article_event(url))

    assert [new.kind, awaiting.kind, duplicate.kind] == [
        OutcomeKind.NEW,
        OutcomeKind.DUPLICATE_AWAITING_ANALYSIS,
        OutcomeKind.DUPLICATE,
    ]
    assert new.article_id == awaiting.article_id == duplicate.article_id


async def test_fr004_signal_only_for_new_and_unanalysed_duplicates(workspace, settings, redis):
    analysed = await process_scraped_article(workspace, article_event("https://news.example/x"))
    await complete_analysis(workspace, analysed.article_id, settings)
    await process_scraped_article(workspace, article_event("https://news.example/y"))
    await redis.flushdb()  # the wake-ups so far were consumed
    events_before = len(await processed_events(workspace))

    outcomes = [
        await process_scraped_article(
            workspace, article_event("https://news.example/x")
        ),  # duplicate
        await process_scraped_article(
            workspace, article_event("https://news.example/y")
        ),  # awaiting
        await process_scraped_article(workspace, article_event("https://news.example/z")),  # new
        await process_scraped_article(workspace, article_event("")),  # failed
    ]

    assert [o.signalled for o in outcomes] == [False, True, True, False]
    events = (await processed_events(workspace))[events_before:]
    assert [e["outcome"] for e in events] == ["duplicate_awaiting_analysis", "new"]
    queued_articles = {j.args[1] for j in await queued_jobs()}
    assert queued_articles == {outcomes[1].article_id, outcomes[2].article_id}


async def test_fr005_arxiv_metadata_is_stored_apart_from_the_article(workspace):
    outcome = await process_scraped_article(workspace, arxiv_event())

    article = await db.fetchrow(
        "SELECT metadata, text FROM articles WHERE id = $1", outcome.article_id
    )
    assert "Lovelace" not in article["metadata"]
    assert "diffusion model" not in article["text"]
    assert await count("arxiv_metadata", workspace) == 1
    view = await queries.article(workspace, outcome.article_id)
    assert view.arxiv.authors == ("Ada Lovelace", "Alan Turing")
    assert [s.heading for s in view.arxiv.sections] == ["Introduction", "Method", "Results"]


async def test_fr006_failed_save_is_recorded_and_never_signalled(
    workspace, settings, monkeypatch, caplog
):
    caplog.set_level(logging.ERROR, logger="app.articles.services")
    async with table_locked(settings, "analyses", monkeypatch):
        outcome = await process_scraped_article(workspace, article_event("https://news.example/f"))

    assert outcome.kind == OutcomeKind.FAILED
    # The article insert had succeeded inside the transaction; it rolled back with it.
    assert await count("articles", workspace) == 0
    assert await processed_events(workspace) == []
    assert await queued_jobs() == []
    assert any(
        r.levelno == logging.ERROR and "news.example/f" in r.getMessage() for r in caplog.records
    )


async def test_fr007_requeued_arxiv_article_is_enriched_with_stored_sections(workspace):
    first = await process_scraped_article(workspace, arxiv_event())
    thin = arxiv_event(
        arxiv=ArxivData(arxiv_id="2401.01234v2", authors=("Ada Lovelace",), sections=())
    )

    again = await process_scraped_article(workspace, thin)

    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    article = await queries.analysis_input(workspace, first.article_id)
    assert [(s.heading, s.text) for s in article.sections] == [
        (s.heading, s.text) for s in SECTIONS
    ]
    # The stored metadata was not thinned by the re-submission.
    view = await queries.article(workspace, first.article_id)
    assert view.arxiv.authors == ("Ada Lovelace", "Alan Turing")


# Success criteria --------------------------------------------------------------------


async def test_sc001_every_url_is_stored_once_or_classified_duplicate(workspace):
    urls = [f"https://news.example/sc1/{i % 7}" for i in range(30)]

    outcomes = [await process_scraped_article(workspace, article_event(u)) for u in urls]

    assert await count("articles", workspace) == 7
    assert all(
        o.kind in (OutcomeKind.NEW, OutcomeKind.DUPLICATE_AWAITING_ANALYSIS) for o in outcomes
    )
    assert [o.kind for o in outcomes].count(OutcomeKind.NEW) == 7
    distinct = await db.fetchval(
        "SELECT count(DISTINCT url_hash) FROM articles WHERE workspace_id = $1", workspace
    )
    assert distinct == 7


async def test_sc002_resubmitting_analysed_articles_creates_nothing_and_signals_nothing(
    workspace, settings
):
    firsts = [
        await process_scraped_article(workspace, article_event(f"https://news.example/sc2/{i}"))
        for i in range(3)
    ]
    for o in firsts:
        await complete_analysis(workspace, o.article_id, settings)
    tables = ("articles", "analyses", "arxiv_metadata", "events")
    before = [await count(t, workspace) for t in tables]
    jobs_before = await queued_jobs()

    for _round in range(3):
        for i in range(3):
            again = await process_scraped_article(
                workspace, article_event(f"https://news.example/sc2/{i}")
            )
            assert again.kind == OutcomeKind.DUPLICATE

    assert [await count(t, workspace) for t in tables] == before
    assert await queued_jobs() == jobs_before


async def test_sc003_each_resubmission_of_an_unanalysed_article_signals_exactly_once(workspace):
    first = await process_scraped_article(workspace, article_event("https://news.example/sc3"))

    for n in range(1, 5):
        again = await process_scraped_article(workspace, article_event("https://news.example/sc3"))
        assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
        events = await processed_events(workspace)
        assert len(events) == 1 + n  # exactly one more signal per re-submission
        # The wake-ups coalesce into one queued job per article.
        assert [j.args for j in await queued_jobs()] == [(workspace, first.article_id)]

    assert await count("articles", workspace) == 1


async def test_sc004_a_failed_save_is_recovered_on_the_next_run_without_manual_steps(
    workspace, settings, monkeypatch
):
    event = article_event("https://news.example/sc4")
    async with table_locked(settings, "articles", monkeypatch):
        failed = await process_scraped_article(workspace, event)
    assert failed.kind == OutcomeKind.FAILED

    recovered = await process_scraped_article(workspace, event)  # the next scrape cycle

    assert recovered.kind == OutcomeKind.NEW
    assert recovered.signalled
    assert await count("articles", workspace) == 1
    assert len(await queued_jobs()) == 1


async def test_sc005_requeued_arxiv_article_is_analysed_like_the_original(people, settings):
    # The same paper in two workspaces: analysed at once in one, re-queued in the other.
    original_ws, _ = await people.workspace("Original")
    requeued_ws, _ = await people.workspace("Requeued")
    original = await process_scraped_article(original_ws, arxiv_event())
    await complete_analysis(original_ws, original.article_id, settings)
    first = await process_scraped_article(requeued_ws, arxiv_event())
    await db.fetchval("DELETE FROM analyses WHERE article_id = $1 RETURNING id", first.article_id)
    again = await process_scraped_article(requeued_ws, arxiv_event(arxiv=None))
    assert again.kind == OutcomeKind.DUPLICATE_AWAITING_ANALYSIS
    await complete_analysis(requeued_ws, first.article_id, settings)

    columns = "summary, keywords, language, reading_minutes"
    a = await db.fetchrow(
        f"SELECT {columns} FROM analyses WHERE article_id = $1", original.article_id
    )
    b = await db.fetchrow(f"SELECT {columns} FROM analyses WHERE article_id = $1", first.article_id)
    assert dict(a) == dict(b)
    assert "Conformer" in a["summary"] or "conformer" in a["summary"]


# Trash -------------------------------------------------------------------------------


async def test_delete_moves_an_article_to_the_trash_with_an_event_and_a_notice(people):
    owner_ws, owner = await people.workspace()
    outcome = await process_scraped_article(owner_ws, article_event(title="To be deleted"))

    async with live_notices(owner_ws) as notices:
        assert await delete_article(owner_ws, outcome.article_id, actor_user_id=owner.user_id)

    assert await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", outcome.article_id)
    event = await db.fetchrow(
        "SELECT actor_user_id, subject FROM events WHERE kind = 'article_deleted'"
    )
    assert (event["actor_user_id"], event["subject"]) == (owner.user_id, "To be deleted")
    assert LIBRARY_TOPIC in notices.topics
    assert not await delete_article(owner_ws, outcome.article_id, actor_user_id=owner.user_id)


async def test_restore_brings_an_article_back_and_requeues_its_unfinished_analysis(
    workspace, redis
):
    outcome = await process_scraped_article(workspace, article_event())
    await delete_article(workspace, outcome.article_id, actor_user_id=None)
    await redis.flushdb()

    assert await restore_article(workspace, outcome.article_id, actor_user_id=None)

    assert (
        await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", outcome.article_id)
        is None
    )
    assert [j.args for j in await queued_jobs()] == [(workspace, outcome.article_id)]
    assert await db.fetchval("SELECT count(*) FROM events WHERE kind = 'article_restored'") == 1


async def test_trash_of_another_workspace_is_not_found(people):
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    outcome = await process_scraped_article(theirs, article_event())

    with pytest.raises(ArticleNotFound):
        await delete_article(mine, outcome.article_id, actor_user_id=None)
    with pytest.raises(ArticleNotFound):
        await restore_article(mine, outcome.article_id, actor_user_id=None)
    assert (
        await db.fetchval("SELECT deleted_at FROM articles WHERE id = $1", outcome.article_id)
        is None
    )


async def test_content_round_trips_as_the_same_tree(workspace):
    doc: Document = from_text("First paragraph.\n\nSecond paragraph with https://example.org/x")
    event = article_event(url=normalize_url("https://news.example/round-trip"))
    event = type(event)(**{**event.__dict__, "content": doc})

    outcome = await process_scraped_article(workspace, event)

    assert (await queries.article(workspace, outcome.article_id)).content == doc


async def test_sections_heading_and_text_are_stored_in_order(workspace):
    sections = tuple(ArxivSection(f"S{i}", f"Text {i}.") for i in range(12))
    outcome = await process_scraped_article(
        workspace, arxiv_event(arxiv=ArxivData(arxiv_id="1", sections=sections))
    )

    view = await queries.article(workspace, outcome.article_id)
    assert [s.heading for s in view.arxiv.sections] == [f"S{i}" for i in range(12)]
    assert (
        AnalysisStatus(await analysis_status(workspace, outcome.article_id))
        == AnalysisStatus.PENDING
    )
