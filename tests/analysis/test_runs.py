"""Running analyses: claims, the OpenAI-compatible endpoint, retries, leases, the reconciler.

The remote analyser talks to a loopback server that speaks the chat
completions format, reached through egress (EGRESS_ALLOW); everything else is
the real PostgreSQL, Redis and an arq worker in burst mode.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest
from arq.worker import Worker

from app.analysis import policy, remote, services
from app.analysis.services import Run, reconcile, run_analysis
from app.analysis.types import AnalysisStatus
from app.articles.services import delete_article, process_scraped_article
from app.articles.types import OutcomeKind, Warning, article_topic
from app.core import db
from app.core import redis as core_redis
from app.egress import Egress, use_egress
from tests.articles.helpers import (
    SECTIONS,
    article_event,
    arxiv_event,
    live_notices,
    queued_jobs,
)
from tests.egress.servers import Reply, Seen, serve
from tests.fixtures import as_owner, make_test_settings
from workers import tasks
from workers.settings import WorkerSettings


@pytest.fixture
async def workspace(people) -> int:
    workspace_id, _owner = await people.workspace()
    return workspace_id


async def row(article_id: int):
    return await db.fetchrow("SELECT * FROM analyses WHERE article_id = $1", article_id)


async def new_article(workspace: int, **fields) -> int:
    outcome = await process_scraped_article(workspace, article_event(**fields))
    assert outcome.article_id is not None
    return outcome.article_id


def chat_answer(content: object, status: int = 200, headers=()) -> Reply:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": content if isinstance(content, str) else json.dumps(content),
                },
            }
        ],
    }
    return Reply(
        status=status,
        headers=[("Content-Type", "application/json"), *headers],
        body=json.dumps(body).encode(),
    )


@asynccontextmanager
async def endpoint(handler: Callable[[Seen], Reply] | Reply, redis) -> AsyncIterator[tuple]:
    """A fake chat-completions server, and settings whose analyser and egress use it."""
    async with serve(handler) as server:
        allow = f"127.0.0.1:{server.port}"
        settings = make_test_settings(
            analysis_endpoint=server.url("/v1"),
            analysis_api_key="sk-test-key",
            analysis_model="test-model",
            egress_allow=[allow],
            egress_host_rate=1000.0,
            egress_host_burst=1000,
        )
        instance = Egress(settings, redis)
        use_egress(instance)
        try:
            yield server, settings
        finally:
            use_egress(None)
            await instance.aclose()


GOOD = {
    "summary": "Council approves a transport budget. Night buses arrive. Trams follow.",
    "keywords": ["transport", "budget", "trams"],
    "language": "en",
}


# Claims ------------------------------------------------------------------------------


async def test_a_pending_analysis_is_claimed_once_even_by_many_workers(workspace, settings):
    article_id = await new_article(workspace)

    runs = await asyncio.gather(*(run_analysis(workspace, article_id, settings) for _ in range(8)))

    assert runs.count(Run.COMPLETED) == 1
    assert runs.count(Run.SKIPPED) == 7
    assert (await row(article_id))["attempts"] == 1


async def test_a_completed_analysis_is_not_run_again(workspace, settings):
    article_id = await new_article(workspace)
    assert await run_analysis(workspace, article_id, settings) == Run.COMPLETED
    completed_at = (await row(article_id))["completed_at"]

    assert await run_analysis(workspace, article_id, settings) == Run.SKIPPED
    assert (await row(article_id))["completed_at"] == completed_at


async def test_a_trashed_article_is_not_analysed(workspace, settings):
    article_id = await new_article(workspace)
    await delete_article(workspace, article_id, actor_user_id=None)

    assert await run_analysis(workspace, article_id, settings) == Run.SKIPPED
    assert (await row(article_id))["status"] == "pending"


async def test_another_workspaces_article_cannot_be_claimed(people, settings):
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    article_id = await new_article(theirs)

    assert await run_analysis(mine, article_id, settings) == Run.SKIPPED
    assert (await row(article_id))["status"] == "pending"


async def test_completion_notifies_the_reader_page(workspace, settings):
    article_id = await new_article(workspace)

    async with live_notices(workspace) as notices:
        await run_analysis(workspace, article_id, settings)

    assert article_topic(article_id) in notices.topics


async def test_a_result_from_a_lost_claim_is_dropped(workspace, settings):
    article_id = await new_article(workspace)
    claim = await services._claim(workspace, article_id)
    assert claim is not None
    # The lease ran out and another worker took the analysis over.
    await db.fetchval(
        "UPDATE analyses SET lease_until = now() + interval '1 minute' WHERE id = $1 RETURNING id",
        claim.analysis_id,
    )
    result = await services.analyse(
        await services.article_queries.analysis_input(workspace, article_id), settings
    )

    assert await services._record_result(workspace, claim, result) == Run.SUPERSEDED
    assert (await row(article_id))["status"] == "running"
    assert (await row(article_id))["summary"] == ""


# The OpenAI-compatible endpoint ------------------------------------------------------


async def test_the_openai_compatible_endpoint_writes_summary_keywords_and_language(
    workspace, redis
):
    article_id = await new_article(workspace, title="Council approves budget")
    async with endpoint(chat_answer(GOOD), redis) as (server, settings):
        assert await run_analysis(workspace, article_id, settings) == Run.COMPLETED

    [request] = server.requests
    assert (request.method, request.target) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test-key"
    sent = json.loads(request.body)
    assert sent["model"] == "test-model"
    assert sent["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert "Council approves budget" in sent["messages"][1]["content"]
    assert "night buses" in sent["messages"][1]["content"]
    stored = await row(article_id)
    assert stored["status"] == "completed"
    assert stored["summary"] == GOOD["summary"]
    assert json.loads(stored["keywords"]) == GOOD["keywords"]
    assert stored["language"] == "en"
    assert stored["reading_minutes"] == 1  # always computed locally
    assert stored["analyser"] == "openai:test-model"


async def test_the_endpoint_receives_stored_arxiv_sections(workspace, redis):
    outcome = await process_scraped_article(workspace, arxiv_event())
    async with endpoint(chat_answer(GOOD), redis) as (server, settings):
        await run_analysis(workspace, outcome.article_id, settings)

    prompt = json.loads(server.requests[0].body)["messages"][1]["content"]
    assert all(s.text in prompt for s in SECTIONS)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(status=500, body=b"oops"), "HTTP 500"),
        (Reply(status=401, body=b"{}"), "HTTP 401"),
        (Reply(status=200, body=b"<html>proxy error</html>"), "chat completion"),
        (chat_answer("not json at all"), "chat completion"),
        (chat_answer({"keywords": ["x"]}), "no summary"),
        (chat_answer({"summary": "s", "keywords": "x"}), "not a list"),
    ],
)
async def test_endpoint_failures_are_recorded_and_retried_with_backoff(
    workspace, redis, reply, reason
):
    article_id = await new_article(workspace)
    await redis.flushdb()
    async with endpoint(reply, redis) as (_server, settings):
        started = datetime.now(UTC)
        assert await run_analysis(workspace, article_id, settings) == Run.RETRYING

    stored = await row(article_id)
    assert stored["status"] == "pending"
    assert stored["attempts"] == 1
    assert reason in stored["error"]
    assert "sk-test-key" not in stored["error"]
    assert stored["lease_until"] is None
    delay = (stored["next_attempt_at"] - started).total_seconds()
    assert 29 <= delay <= 32  # 30 s x 2^0
    [job] = await queued_jobs()  # its own wake-up at the retry time
    assert job.job_id == f"analyse:{workspace}:{article_id}:retry:1"
    assert job.args == (workspace, article_id)


async def test_a_rate_limited_endpoint_is_retried_no_sooner_than_it_asks(workspace, redis):
    article_id = await new_article(workspace)
    async with endpoint(Reply(status=429, headers=[("Retry-After", "600")]), redis) as (
        _server,
        settings,
    ):
        started = datetime.now(UTC)
        assert await run_analysis(workspace, article_id, settings) == Run.RETRYING

    stored = await row(article_id)
    assert (stored["next_attempt_at"] - started).total_seconds() >= 599
    assert "wait" in stored["error"]


def test_backoff_doubles_from_30_seconds_and_is_capped():
    assert [policy.backoff_seconds(n) for n in range(1, 7)] == [30, 60, 120, 240, 480, 960]
    assert policy.backoff_seconds(30) == policy.MAX_DELAY_SECONDS
    assert policy.backoff_seconds(1, retry_after=90) == 90
    assert policy.status_after_failure(policy.QUICK_ATTEMPTS - 1) == AnalysisStatus.PENDING
    assert policy.status_after_failure(policy.QUICK_ATTEMPTS) == AnalysisStatus.FAILED


async def time_passes(article_id: int) -> None:
    """The backoff is over: move the next attempt into the past."""
    await db.fetchval(
        "UPDATE analyses SET next_attempt_at = now() - interval '1 second' "
        "WHERE article_id = $1 RETURNING id",
        article_id,
    )


async def test_after_five_failures_the_status_is_failed(workspace, redis):
    article_id = await new_article(workspace)
    async with endpoint(Reply(status=503, body=b"down"), redis) as (_server, settings):
        runs = []
        for _attempt in range(policy.QUICK_ATTEMPTS):
            runs.append(await run_analysis(workspace, article_id, settings))
            await time_passes(article_id)

    assert runs == [Run.RETRYING] * 4 + [Run.FAILED]
    stored = await row(article_id)
    assert (stored["status"], stored["attempts"]) == ("failed", 5)
    assert "HTTP 503" in stored["error"]


async def test_sc004_a_failed_analysis_is_recovered_on_the_next_run_without_manual_steps(
    workspace, redis
):
    article_id = await new_article(workspace)
    await db.fetchval(
        "UPDATE analyses SET status = 'failed', attempts = 5, error = 'model down', "
        "next_attempt_at = now() - interval '1 second' WHERE article_id = $1 RETURNING id",
        article_id,
    )
    await redis.flushdb()  # and every wake-up is lost

    async with endpoint(chat_answer(GOOD), redis) as (_server, settings):
        assert await reconcile() == 1  # the cron finds it in PostgreSQL
        [job] = await queued_jobs()
        assert (job.function, job.args) == ("analyse_article", (workspace, article_id))
        assert await run_analysis(*job.args, settings) == Run.COMPLETED

    stored = await row(article_id)
    assert (stored["status"], stored["error"], stored["summary"]) == (
        "completed",
        "",
        GOOD["summary"],
    )


async def test_an_expired_lease_is_taken_over(workspace, settings, redis):
    article_id = await new_article(workspace)
    # A worker claimed it and died.
    await db.fetchval(
        "UPDATE analyses SET status = 'running', attempts = 1, "
        "lease_until = now() - interval '1 second' WHERE article_id = $1 RETURNING id",
        article_id,
    )
    await redis.flushdb()

    assert await reconcile() == 1
    assert [j.args for j in await queued_jobs()] == [(workspace, article_id)]
    assert await run_analysis(workspace, article_id, settings) == Run.COMPLETED
    assert (await row(article_id))["attempts"] == 2


async def test_a_dead_jobs_arq_id_does_not_swallow_the_reconcilers_wake_up(
    workspace, settings, redis
):
    article_id = await new_article(workspace)
    await db.fetchval(  # claimed by a worker that was killed; its lease ran out
        "UPDATE analyses SET status = 'running', attempts = 1, "
        "lease_until = now() - interval '1 second' WHERE article_id = $1 RETURNING id",
        article_id,
    )
    await redis.flushdb()
    # arq still holds the dead job under the article's id (until its own timeout).
    await redis.set(f"arq:job:analyse:{workspace}:{article_id}", b"held by a dead job")

    assert await reconcile() == 1
    assert [j.args for j in await queued_jobs()] == [(workspace, article_id)]


async def test_a_claim_lasts_a_minute_and_its_heartbeat_keeps_the_fence(workspace, settings):
    from app.analysis.services import _claim, _renew

    article_id = await new_article(workspace)
    claim = await _claim(workspace, article_id)
    assert claim is not None
    left = await db.fetchval(
        "SELECT extract(epoch FROM lease_until - now()) FROM analyses WHERE article_id = $1",
        article_id,
    )
    assert 50 < left <= 60
    before = claim.lease_until
    assert await _renew(workspace, claim)
    assert claim.lease_until > before  # the result is still written under the new fence
    assert (
        await db.fetchval("SELECT lease_until FROM analyses WHERE article_id = $1", article_id)
        == claim.lease_until
    )


async def test_a_live_lease_is_left_alone(workspace, settings):
    article_id = await new_article(workspace)
    await db.fetchval(
        "UPDATE analyses SET status = 'running', lease_until = now() + interval '5 minutes' "
        "WHERE article_id = $1 RETURNING id",
        article_id,
    )

    assert await reconcile() == 0
    assert await run_analysis(workspace, article_id, settings) == Run.SKIPPED


async def test_the_reconciler_waits_for_the_backoff(workspace, redis):
    article_id = await new_article(workspace)
    await db.fetchval(
        "UPDATE analyses SET next_attempt_at = now() + interval '10 minutes' "
        "WHERE article_id = $1 RETURNING id",
        article_id,
    )
    await redis.flushdb()

    assert await reconcile() == 0
    assert await queued_jobs() == []


async def test_an_analyser_crash_is_recorded_like_a_failure(workspace, settings, monkeypatch):
    article_id = await new_article(workspace)

    def broken(*_args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(services.local, "analyse", broken)

    assert await run_analysis(workspace, article_id, settings) == Run.RETRYING
    stored = await row(article_id)
    assert stored["status"] == "pending"
    assert "ZeroDivisionError" in stored["error"]


# The worker --------------------------------------------------------------------------


async def test_the_arq_worker_consumes_the_signal(workspace, settings):
    url = "https://news.example/worker"
    article_id = await new_article(workspace, url=url)
    worker = Worker(
        functions=WorkerSettings.functions,
        redis_pool=core_redis.client(),
        queue_name=core_redis.queue_name(settings),
        burst=True,
        poll_delay=0.05,
        handle_signals=False,
    )
    await worker.main()  # burst: returns once the queue is empty (the pool is ours: not closed)

    assert worker.jobs_complete == 1
    assert (await row(article_id))["status"] == "completed"
    # The job id is free again at once: the next signal queues a new wake-up.
    await db.fetchval(
        "UPDATE analyses SET status = 'pending' WHERE article_id = $1 RETURNING id", article_id
    )
    again = await process_scraped_article(workspace, article_event(url))
    assert again.signalled
    assert [j.args for j in await queued_jobs()] == [(workspace, article_id)]


async def test_the_task_functions_call_the_services(workspace, settings):
    article_id = await new_article(workspace)
    await db.fetchval(
        "UPDATE analyses SET next_attempt_at = now() - interval '1 second' WHERE article_id = $1 "
        "RETURNING id",
        article_id,
    )

    assert await tasks.reconcile_analyses({}) == 1
    assert await tasks.analyse_article({}, workspace, article_id) == "completed"


async def test_a_running_analysis_is_not_reset_by_a_resubmission(workspace, settings):
    url = "https://news.example/running"
    article_id = await new_article(workspace, url=url)
    claim = await services._claim(workspace, article_id)
    assert claim is not None

    again = await process_scraped_article(workspace, article_event(url))

    assert again.signalled  # still a signal: the wake-up coalesces
    stored = await row(article_id)
    assert (stored["status"], stored["lease_until"]) == ("running", claim.lease_until)
    assert stored["next_attempt_at"] <= datetime.now(UTC) + timedelta(seconds=1)


# Answers the database would refuse ---------------------------------------------------

HOSTILE = {
    "summary": "Council\u0000 approves\x01 a budget.\ud800 Trams\u202e follow.",
    "keywords": ["trans\u0000port", "\u0000", "bud\ud800get"],
    "language": "e\u0000n",
}


async def test_nul_and_other_refused_characters_are_stripped_before_saving(workspace, redis):
    article_id = await new_article(workspace)
    async with endpoint(chat_answer(HOSTILE), redis) as (_server, settings):
        assert await run_analysis(workspace, article_id, settings) == Run.COMPLETED

    stored = await row(article_id)
    assert stored["status"] == "completed"
    assert stored["summary"] == "Council approves a budget. Trams follow."
    assert json.loads(stored["keywords"]) == ["transport", "budget"]
    assert stored["language"] == "en"


async def test_an_answer_that_cannot_be_saved_fails_the_analysis_with_its_reason(
    workspace, redis, monkeypatch
):
    """Whatever the database refuses while recording, the row says failed, never running."""
    article_id = await new_article(workspace)
    # Let a NUL through the cleaning, as a character we did not foresee would.
    monkeypatch.setattr(remote, "_plain", lambda text, limit: text[:limit])
    async with endpoint(chat_answer(HOSTILE), redis) as (server, settings):
        assert await run_analysis(workspace, article_id, settings) == Run.FAILED
        # Not claimable again at once: the endpoint is not asked again and again.
        assert await run_analysis(workspace, article_id, settings) == Run.SKIPPED
        assert await reconcile() == 0

    stored = await row(article_id)
    assert stored["status"] == "failed"
    assert stored["lease_until"] is None
    assert "could not be saved" in stored["error"]
    assert len(server.requests) == 1


async def test_analysis_calls_do_not_spend_the_budget_of_a_host_that_serves_feeds(workspace, redis):
    """A slow analysis call holds no slot of its host: a feed on that host is still read."""

    def handler(seen: Seen) -> Reply:
        if seen.target == "/feed.xml":
            return Reply(body=b"<rss/>")
        return Reply(
            delay=1.0, headers=[("Content-Type", "application/json")], body=chat_answer(GOOD).body
        )

    article_id = await new_article(workspace)
    async with endpoint(handler, redis) as (server, settings):
        # One request at a time to this host, and no waiting for it.
        strict = settings.model_copy(update={"egress_host_budgets": ["127.0.0.1=1000/1000/1"]})
        process, feeds = Egress(strict, redis), Egress(strict, redis, budget_wait=0)
        use_egress(process)
        try:
            analysis = asyncio.create_task(run_analysis(workspace, article_id, strict))
            await server.connected.wait()
            feed = await feeds.fetch(server.url("/feed.xml"))
            assert await analysis == Run.COMPLETED
        finally:
            await process.aclose()
            await feeds.aclose()
    assert feed.content == b"<rss/>"


# A consent wall is not the article -----------------------------------------------------

WALL_TEXT = (
    "We value your privacy. We and our partners use cookies to store and access information "
    "on your device. Accept all cookies or manage your choices with our partners."
)


async def test_a_consent_wall_is_not_analysed_and_says_why(workspace, settings, redis):
    article_id = await new_article(
        workspace, text=WALL_TEXT, title="Before you continue", warnings=(Warning.CONSENT_WALL,)
    )

    assert await run_analysis(workspace, article_id, settings) == Run.NOT_ANALYSED
    analysis = await row(article_id)
    assert analysis["status"] == AnalysisStatus.SKIPPED
    assert (analysis["summary"], json.loads(analysis["keywords"])) == ("", [])
    assert analysis["error"] == services.CONSENT_WALL_REASON
    assert "consent wall" in analysis["error"]
    assert "Fetch again" not in analysis["error"]  # the reader's to say, to whom it may
    # Done until its text changes: no reconciler wake-up, saving it again is a duplicate.
    await redis.flushdb()
    assert await reconcile() == 0
    assert await queued_jobs() == []
    again = await process_scraped_article(
        workspace, article_event(url=await _url_of(article_id), warnings=(Warning.CONSENT_WALL,))
    )
    assert (again.kind, again.article_id) == (OutcomeKind.DUPLICATE, article_id)
    assert (await row(article_id))["status"] == AnalysisStatus.SKIPPED


async def test_a_wall_reason_stored_with_the_fetch_again_hint_loses_it(workspace, settings):
    """Skipped before the hint moved to the reader: the migration leaves the reason alone."""
    article_id = await new_article(workspace, text=WALL_TEXT, warnings=(Warning.CONSENT_WALL,))
    assert await run_analysis(workspace, article_id, settings) == Run.NOT_ANALYSED
    hinted = services.CONSENT_WALL_REASON + " Fetch again to read the article; it is analysed then."
    await db.fetchval(
        "UPDATE analyses SET error = $2 WHERE article_id = $1 RETURNING id", article_id, hinted
    )

    await as_owner(importlib.import_module("migrations.m0031_consent_wall_reason_plain").SQL)

    assert (await row(article_id))["error"] == services.CONSENT_WALL_REASON


async def test_an_analysis_of_the_wall_made_before_is_dropped(workspace, settings):
    """A walled article analysed before skipping existed (m0028 makes it pending again)."""
    article_id = await new_article(workspace, text=WALL_TEXT, warnings=(Warning.CONSENT_WALL,))
    await db.fetchval(
        """UPDATE analyses SET status = 'pending', summary = 'We value your privacy.',
           keywords = '["cookies", "partners"]', analyser = 'local-v1'
           WHERE article_id = $1 RETURNING id""",
        article_id,
    )
    assert await run_analysis(workspace, article_id, settings) == Run.NOT_ANALYSED
    analysis = await row(article_id)
    assert (analysis["summary"], analysis["keywords"], analysis["analyser"]) == ("", "[]", "")


async def test_the_real_page_fetched_again_is_analysed(workspace, settings):
    article_id = await new_article(workspace, text=WALL_TEXT, warnings=(Warning.CONSENT_WALL,))
    assert await run_analysis(workspace, article_id, settings) == Run.NOT_ANALYSED

    replaced = await process_scraped_article(
        workspace, article_event(url=await _url_of(article_id)), replacing=article_id
    )

    assert replaced.kind == OutcomeKind.REPLACED
    assert (await row(article_id))["status"] == AnalysisStatus.PENDING
    assert await run_analysis(workspace, article_id, settings) == Run.COMPLETED
    analysis = await row(article_id)
    assert analysis["summary"]
    assert json.loads(analysis["keywords"])
    assert analysis["error"] == ""


async def _url_of(article_id: int) -> str:
    return str(await db.fetchval("SELECT url FROM articles WHERE id = $1", article_id))
