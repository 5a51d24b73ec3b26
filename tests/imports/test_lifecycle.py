"""Import jobs end to end against the loopback article site, on real PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import json
import logging

import asyncpg
import pytest
from redis.asyncio import Redis

from app.accounts import services as accounts
from app.articles import services as article_services
from app.articles.services import process_scraped_article
from app.articles.types import Source
from app.core import db
from app.egress import Egress, use_egress
from app.imports import policy, queries, services, step
from app.imports.types import ImportJobNotFound, ImportRefused, ItemState, JobStatus
from tests.articles.helpers import article_event, queued_jobs
from tests.egress.servers import Reply
from tests.fakes.site import FakeSite
from tests.fixtures import make_test_settings
from tests.imports.helpers import (
    counters_match_states,
    import_settings,
    item_rows,
    job_of,
    make_due,
    run_worker,
    states,
)
from tests.workers.processes import eventually


@pytest.fixture
async def workspace(people) -> int:
    person = await people.member("editor")
    return person.workspace_id


def articles_at(site: FakeSite, *paths: str) -> list[str]:
    """Serve the news article at each path; their URLs."""
    for path in paths:
        site.routes[path] = site.page("article.html")
    return [site.base + path for path in paths]


async def events_of(workspace_id: int, kind: str) -> list[dict]:
    rows = await db.fetch(
        "SELECT data FROM events WHERE workspace_id = $1 AND kind = $2 ORDER BY id",
        workspace_id,
        kind,
    )
    return [json.loads(r["data"]) for r in rows]


async def test_a_job_reads_every_url_to_its_state_and_finishes(workspace, site, site_egress):
    urls = [
        *articles_at(site, "/news/one", "/news/two"),
        site.base + "/consent/onetrust-en",
        site.base + "/gone",  # 404: fails at once
    ]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    assert await states(job_id) == ["pending"] * 4
    assert (await job_of(workspace, job_id)).status == JobStatus.QUEUED

    assert await run_worker() == 4

    assert await states(job_id) == ["saved", "saved", "consent-wall", "error"]
    rows = await item_rows(job_id)
    assert all(r["article_id"] for r in rows[:3])
    assert rows[2]["warning"] == "probable_consent_wall"
    assert "not found" in rows[3]["error"]
    assert rows[3]["attempts"] == 1
    job = await job_of(workspace, job_id)
    assert job.status == JobStatus.DONE
    assert job.finished_at is not None
    assert (job.counters.saved, job.counters.errors, job.counters.warnings) == (3, 1, 1)
    assert counters_match_states(job, await queries.state_counts(workspace, job_id))
    (started,) = await events_of(workspace, services.EVENT_STARTED)
    (finished,) = await events_of(workspace, services.EVENT_FINISHED)
    assert started["total_urls"] == 4
    assert (finished["saved"], finished["errors"], finished["warnings"]) == (3, 1, 1)


async def test_create_job_refuses_an_unusable_list(workspace):
    with pytest.raises(ImportRefused):
        await services.create_job(workspace, ["ftp://x.example/", "words"], actor_user_id=None)
    with import_settings(import_max_urls=2), pytest.raises(ImportRefused, match="at most 2"):
        await services.create_job(
            workspace, [f"https://x.example/{n}" for n in range(3)], actor_user_id=None
        )


async def test_the_job_and_its_wake_ups_exist_when_create_returns(workspace):
    urls = [f"https://news.example/{n}" for n in range(5)]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    assert len(await item_rows(job_id)) == 5
    wakeups = [j for j in await queued_jobs() if j.function == services.STEP_TASK]
    assert len(wakeups) == 3  # one per item allowed in flight


async def test_a_url_already_in_the_library_is_a_duplicate_without_a_fetch(
    workspace, site, site_egress
):
    (url,) = articles_at(site, "/news/known")
    stored = await process_scraped_article(workspace, article_event(url))
    job_id = await services.create_job(workspace, [url], actor_user_id=None)
    await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["article_id"]) == ("duplicate", stored.article_id)
    assert site.hits_of("/news/known") == []
    assert (await job_of(workspace, job_id)).counters.duplicates == 1


async def test_two_jobs_of_one_url_store_it_once(workspace, site, site_egress):
    (url,) = articles_at(site, "/news/twice")
    first = await services.create_job(workspace, [url], actor_user_id=None)
    second = await services.create_job(workspace, [url + "?utm_source=x"], actor_user_id=None)
    await run_worker()
    assert await states(first) == ["saved"]
    assert await states(second) == ["duplicate"]
    assert (
        await db.fetchval("SELECT count(*) FROM articles WHERE workspace_id = $1", workspace) == 1
    )


async def test_transient_failures_retry_and_the_third_makes_error(workspace, site, site_egress):
    job_id = await services.create_job(workspace, [site.base + "/broken"], actor_user_id=None)
    await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["attempts"]) == ("pending", 1)
    assert "HTTP 500" in row["error"]
    assert await run_worker() == 0  # in its backoff
    for _attempt in range(2):
        await make_due(job_id)
        await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["attempts"]) == ("error", 3)
    assert len(site.hits_of("/broken")) == 3
    assert (await job_of(workspace, job_id)).status == JobStatus.DONE


async def test_a_429_waits_at_least_its_retry_after(workspace, site, site_egress):
    site.routes["/busy"] = Reply(status=429, headers=[("Retry-After", "120")])
    job_id = await services.create_job(workspace, [site.base + "/busy"], actor_user_id=None)
    await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["attempts"]) == ("pending", 1)
    wait = await db.fetchval(
        "SELECT extract(epoch FROM next_attempt_at - now()) FROM import_items WHERE id = $1",
        row["id"],
    )
    assert wait > 110


async def test_a_spent_host_budget_is_a_wait_that_names_the_host(workspace, site, site_egress):
    site_egress(egress_host_rate=0.01, egress_host_burst=1, budget_wait=0.0)
    urls = articles_at(site, "/news/b1", "/news/b2")
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    await run_worker()
    first, second = await item_rows(job_id)
    assert first["state"] == "saved"
    assert (second["state"], second["attempts"]) == ("pending", 0)  # a wait is no attempt
    assert second["waiting_for"] == "127.0.0.1"
    assert (await job_of(workspace, job_id)).waiting_for == "127.0.0.1"


async def test_cancel_during_extraction_saves_nothing(workspace, site, site_egress):
    site.routes["/slow"] = Reply(
        headers=[("Content-Type", "text/html; charset=utf-8")],
        body=site.page("article.html").body,
        delay=1.0,
    )
    urls = [site.base + "/slow", *articles_at(site, "/news/c2", "/news/c3")]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    claim = await services.claim_next("w1")
    assert claim is not None
    assert claim.url.endswith("/slow")
    reading = asyncio.create_task(step.process(claim))
    await asyncio.sleep(0.3)
    assert await services.cancel(workspace, job_id)
    assert await reading == ItemState.CANCELLED
    assert await states(job_id) == ["cancelled"] * 3
    assert (
        await db.fetchval("SELECT count(*) FROM articles WHERE workspace_id = $1", workspace) == 0
    )
    job = await job_of(workspace, job_id)
    assert job.status == JobStatus.CANCELLED
    assert job.counters.cancelled == 3
    assert await run_worker() == 0


async def test_a_lease_on_an_item_of_a_deleted_workspace_ends_quietly(
    people, site, site_egress, caplog
):
    owner = await people.member("owner")
    workspace = owner.workspace_id
    site.routes["/slow"] = Reply(
        headers=[("Content-Type", "text/html; charset=utf-8")],
        body=site.page("article.html").body,
        delay=1.0,
    )
    await services.create_job(workspace, [site.base + "/slow"], actor_user_id=None)
    claim = await services.claim_next("w1")
    assert claim is not None
    reading = asyncio.create_task(step.process(claim))
    await asyncio.sleep(0.3)

    await accounts.delete_workspace(workspace, "Desk", actor_user_id=owner.user_id)

    assert await reading is None  # the claim is simply gone: nothing written, nothing raised
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    for table in ("import_items", "import_jobs", "articles", "events"):
        count = await db.fetchval(
            f"SELECT count(*) FROM {table} WHERE workspace_id = $1",
            workspace,
        )
        assert (table, count) == (table, 0)
    assert await run_worker() == 0


async def test_pause_stops_claims_and_resume_goes_on(workspace, site, site_egress):
    urls = articles_at(site, "/news/p1", "/news/p2")
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    assert await services.pause(workspace, job_id)
    assert await run_worker() == 0
    assert (await job_of(workspace, job_id)).status == JobStatus.PAUSED
    assert await services.resume(workspace, job_id)
    assert (await job_of(workspace, job_id)).status == JobStatus.QUEUED  # never started
    assert await run_worker() == 2
    assert (await job_of(workspace, job_id)).status == JobStatus.DONE
    assert not await services.pause(workspace, job_id)  # done: nothing to pause


async def test_retry_failed_returns_only_error_items(workspace, site, site_egress):
    urls = [*articles_at(site, "/news/r1"), site.base + "/later"]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    await run_worker()
    assert await states(job_id) == ["saved", "error"]
    articles_at(site, "/later")  # the page exists now
    assert await services.retry_failed(workspace, job_id) == 1
    job = await job_of(workspace, job_id)
    assert job.status == JobStatus.RUNNING
    assert job.counters.errors == 0
    await run_worker()
    assert await states(job_id) == ["saved", "saved"]
    assert len(site.hits_of("/news/r1")) == 1
    job = await job_of(workspace, job_id)
    assert job.status == JobStatus.DONE
    assert job.counters.saved == 2


async def _read_items(job_id: int, idx: range, began: str, ended: str) -> None:
    """Items `idx` read between `began` and `ended` ago (PostgreSQL intervals), as saved."""
    await db.fetch(
        f"""UPDATE import_items SET state = 'saved', last_attempt_at = now() - interval '{began}',
              finished_at = now() - interval '{ended}' WHERE job_id = $1 AND idx = ANY($2)""",
        job_id,
        list(idx),
    )
    await db.fetch(
        """UPDATE import_jobs SET status = 'running', started_at = now() - interval '2 hours',
             saved_count = (SELECT count(*) FROM import_items WHERE job_id = $1
                            AND state = 'saved') WHERE id = $1""",
        job_id,
    )


async def test_the_time_left_follows_the_recent_pace_not_a_pause(workspace):
    job_id = await services.create_job(
        workspace, [f"https://x.example/{n}" for n in range(20)], actor_user_id=None
    )
    # Ten items read two hours ago, then a long pause; resumed, nothing read since.
    await _read_items(job_id, range(10), "121 minutes", "120 minutes")
    assert (await job_of(workspace, job_id)).eta_seconds is None  # not "about 2 hours"
    # Since the resume four items in the last 20 s: 5 s an item, six left.
    await _read_items(job_id, range(10, 14), "20 seconds", "1 second")
    assert 25 <= (await job_of(workspace, job_id)).eta_seconds <= 35  # type: ignore[operator]


async def test_delete_is_soft_and_keeps_the_articles(workspace, site, site_egress):
    job_id = await services.create_job(workspace, articles_at(site, "/news/d1"), actor_user_id=None)
    await run_worker()
    await services.delete(workspace, job_id)
    assert await queries.job(workspace, job_id) is None
    assert (
        await db.fetchval("SELECT count(*) FROM articles WHERE workspace_id = $1", workspace) == 1
    )
    with pytest.raises(ImportJobNotFound):
        await services.pause(workspace, job_id)


async def test_another_workspace_cannot_touch_a_job(workspace, people):
    other = (await people.member("editor")).workspace_id
    job_id = await services.create_job(workspace, ["https://x.example/a"], actor_user_id=None)
    assert await queries.job(other, job_id) is None
    with pytest.raises(ImportJobNotFound):
        await services.cancel(other, job_id)


# Claims, leases, fairness ------------------------------------------------------------------


async def test_at_most_three_items_of_a_job_in_flight(workspace):
    job_id = await services.create_job(
        workspace, [f"https://x.example/{n}" for n in range(6)], actor_user_id=None
    )
    claims = [await services.claim_next(f"w{n}") for n in range(4)]
    assert [c is not None for c in claims] == [True, True, True, False]
    assert [r["state"] for r in await item_rows(job_id)][:4] == ["extracting"] * 3 + ["pending"]


async def test_a_one_url_job_does_not_wait_behind_a_large_import(workspace, people):
    big = await services.create_job(
        workspace, [f"https://x.example/{n}" for n in range(50)], actor_user_id=None
    )
    assert (await services.claim_next("w1")).job_id == big  # type: ignore[union-attr]
    small = await services.create_job(workspace, ["https://y.example/1"], actor_user_id=None)
    assert (await services.claim_next("w2")).job_id == small  # type: ignore[union-attr]
    # Across workspaces too: the workspace with nothing in flight goes first.
    other = (await people.member("editor")).workspace_id
    theirs = await services.create_job(other, ["https://z.example/1"], actor_user_id=None)
    assert (await services.claim_next("w3")).job_id == theirs  # type: ignore[union-attr]


async def test_two_workers_never_process_one_item(workspace, site, site_egress):
    paths = [f"/news/t{n}" for n in range(12)]
    for path in paths:
        site.routes[path] = Reply(
            headers=[("Content-Type", "text/html; charset=utf-8")],
            body=site.page("article.html").body,
            delay=0.05,
        )
    urls = [site.base + p for p in paths]
    first = await services.create_job(workspace, urls[:6], actor_user_id=None)
    second = await services.create_job(workspace, urls[6:], actor_user_id=None)
    await asyncio.gather(run_worker("w1"), run_worker("w2"), run_worker("w3"))
    assert [len(site.hits_of(p)) for p in paths] == [1] * 12
    for job_id in (first, second):
        assert await states(job_id) == ["saved"] * 6
        assert (await job_of(workspace, job_id)).counters.saved == 6


async def test_a_result_is_written_only_under_the_claiming_token(workspace, site, site_egress):
    with import_settings(import_lease_seconds=2):
        job_id = await services.create_job(
            workspace, articles_at(site, "/news/l1"), actor_user_id=None
        )
        stale = await services.claim_next("w-old")
        assert stale is not None
        await db.fetch(
            "UPDATE import_items SET leased_until = now() - interval '1 second' WHERE id = $1",
            stale.item_id,
        )
        assert await services.requeue_expired() == 1
        fresh = await services.claim_next("w-new")
        assert fresh is not None
        assert fresh.item_id == stale.item_id
        assert fresh.attempts == 2
        # The old worker comes back with its result: nothing is written.
        assert await services.fail(stale, policy.Fail("late")) is None
        assert not await services.renew_lease(stale)
        assert await services.renew_lease(fresh)
        await step.process(fresh)
    (row,) = await item_rows(job_id)
    assert (row["state"], row["error"]) == ("saved", "")


async def test_a_lock_held_past_the_timeout_gives_the_item_back_to_retry(
    workspace, site, site_egress, settings, monkeypatch
):
    """Another session holds the item's row (maintenance, a stuck transaction): the save
    gives up after the store's lock timeout and the item waits to be read again."""
    monkeypatch.setattr(article_services, "LOCK_TIMEOUT", "150ms")
    job_id = await services.create_job(
        workspace, articles_at(site, "/news/locked"), actor_user_id=None
    )
    claim = await services.claim_next("w-1")
    assert claim is not None
    holder = await asyncpg.connect(settings.database_owner_url)
    try:
        await holder.execute("BEGIN")
        await holder.execute("SELECT 1 FROM import_items WHERE id = $1 FOR UPDATE", claim.item_id)
        reading = asyncio.create_task(step.process(claim))
        # Fetched and read, the save waits for the row.
        waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted"
        await eventually(lambda: holder.fetchval(waiting), within=20, every=0.05)
        await asyncio.sleep(0.5)  # it gave up after 150 ms; giving the item back waits for it
    finally:
        await holder.close()
    assert await reading == ItemState.PENDING
    (row,) = await item_rows(job_id)
    assert row["state"] == "pending"
    assert row["error"] == article_services.store_unavailable_reason()
    job = await job_of(workspace, job_id)
    assert counters_match_states(job, await queries.state_counts(workspace, job_id))


async def test_a_dead_workers_last_attempt_becomes_error(workspace):
    job_id = await services.create_job(workspace, ["https://x.example/a"], actor_user_id=None)
    await db.fetch(
        "UPDATE import_items SET state = 'extracting', attempts = 3,"
        " leased_until = now() - interval '1 second', lease_token = gen_random_uuid()"
        " WHERE job_id = $1",
        job_id,
    )
    await services.requeue_expired()
    assert await states(job_id) == ["error"]
    assert (await job_of(workspace, job_id)).status == JobStatus.DONE


async def test_redis_flushed_mid_job_the_reconciler_wakes_it(workspace, site, site_egress, redis):
    urls = articles_at(site, "/news/f1", "/news/f2", "/news/f3")
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    claim = await services.claim_next("w1")
    assert claim is not None
    await step.process(claim)
    await redis.flushdb()  # every wake-up and budget is gone
    assert [j for j in await queued_jobs() if j.function == services.STEP_TASK] == []
    assert await services.reconcile() == 1
    assert [j.function for j in await queued_jobs()] == [services.STEP_TASK]
    await run_worker()
    job = await job_of(workspace, job_id)
    assert job.status == JobStatus.DONE
    assert job.counters.saved == 3


async def test_redis_down_while_reading_gives_the_item_back_uncounted(workspace, site, site_egress):
    """The host budget lives in Redis: an outage is ours, not the page's, so the item waits
    and is read again (it used to end as "failed on an unexpected error")."""
    urls = articles_at(site, "/news/r1")
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    unreachable = Redis.from_url("redis://127.0.0.1:9/0", socket_connect_timeout=0.5)
    use_egress(Egress(make_test_settings(egress_allow=[site.allow()]), unreachable))
    claim = await services.claim_next("w1")
    assert claim is not None
    assert await step.process(claim) == ItemState.PENDING
    (row,) = await item_rows(job_id)
    assert (row["state"], row["attempts"]) == ("pending", 0)
    await unreachable.aclose()
    site_egress()  # Redis is back
    await make_due(job_id)
    await run_worker()
    assert await states(job_id) == ["saved"]


async def test_old_finished_jobs_are_archived(workspace, site, site_egress):
    job_id = await services.create_job(workspace, articles_at(site, "/news/o1"), actor_user_id=None)
    await run_worker()
    assert await services.archive_old_jobs() == 0
    await db.fetch(
        "UPDATE import_jobs SET finished_at = now() - interval '31 days' WHERE id = $1", job_id
    )
    assert await services.archive_old_jobs() == 1
    assert await item_rows(job_id) == []
    assert (await job_of(workspace, job_id)).counters.saved == 1


async def test_the_quick_add_source_reaches_the_article(workspace, site, site_egress):
    job_id = await services.create_job(
        workspace, articles_at(site, "/news/q1"), actor_user_id=None, source=Source.MANUAL
    )
    await run_worker()
    (row,) = await item_rows(job_id)
    source = await db.fetchval("SELECT source FROM articles WHERE id = $1", row["article_id"])
    assert source == "manual"


async def test_the_heartbeat_keeps_a_slow_item_leased(workspace, site, site_egress):
    site.routes["/slow"] = Reply(
        headers=[("Content-Type", "text/html; charset=utf-8")],
        body=site.page("article.html").body,
        delay=3.0,
    )
    with import_settings(import_lease_seconds=2):
        job_id = await services.create_job(workspace, [site.base + "/slow"], actor_user_id=None)
        claim = await services.claim_next("w1")
        assert claim is not None
        reading = asyncio.create_task(step.process(claim))
        await asyncio.sleep(2.5)  # past the first lease: only the heartbeat holds it
        assert await services.requeue_expired() == 0
        assert await reading == ItemState.SAVED
    (row,) = await item_rows(job_id)
    assert (row["state"], row["attempts"]) == ("saved", 1)
