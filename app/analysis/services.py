"""Analysis use cases: queue, claim and run, record, reconcile.

The `analyses` row is the job (one per article). arq only wakes workers: a
wake-up carries ids, the worker claims the row (`FOR UPDATE SKIP LOCKED`,
status `running`, a lease), analyses outside any transaction, and writes the
result only if it still holds that very claim - the lease is the fence, so a
worker whose lease ran out, or whose article was re-queued meanwhile, writes
nothing. Failures are recorded with their reason and retried with
exponential backoff; the reconciler cron re-enqueues whatever PostgreSQL says
is due, so neither a lost wake-up nor a crashed worker loses an analysis
(seed 004 SC-004).
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from app.analysis import local, policy, queries
from app.analysis.remote import RemoteAnalyser
from app.analysis.types import AnalysisFailed, AnalysisInput, AnalysisResult, AnalysisStatus
from app.articles import queries as article_queries
from app.articles.types import LIBRARY_TOPIC, Warning, article_topic
from app.core import db, jobs, leases
from app.core.config import Settings
from app.core.i18n import N_, _
from app.live.notices import publish_after_commit

log = logging.getLogger(__name__)

# Stored English (translated when shown): why an article was not analysed. What to do about
# it is the reader's to say, to those who may (viewers cannot fetch again; the API's caller
# reads the status and the warning).
CONSENT_WALL_REASON = N_("Not analysed: the page showed a cookie consent wall, not the article.")

ANALYSE_TASK = "analyse_article"  # workers.tasks.analyse_article(ctx, workspace_id, article_id)
RECONCILE_BATCH = 500


def job_id(workspace_id: int, article_id: int) -> str:
    """One queued wake-up per article: repeated signals coalesce into it."""
    return f"analyse:{workspace_id}:{article_id}"


class Run(StrEnum):
    """What one run of `run_analysis` did."""

    COMPLETED = "completed"
    RETRYING = "retrying"  # failed; pending again after a backoff
    FAILED = "failed"  # failed QUICK_ATTEMPTS times; the reconciler retries it slowly
    SKIPPED = "skipped"  # nothing due (done, held by another worker, in backoff, trashed)
    NOT_ANALYSED = "not_analysed"  # the text is not the article (a consent wall): status skipped
    SUPERSEDED = "superseded"  # the claim was lost meanwhile; the result was dropped


@dataclass
class Claim:
    analysis_id: int
    article_id: int
    attempts: int  # including this one
    lease_until: datetime  # the fence: results are written only while it is unchanged
    # (the heartbeat moves it, app.core.leases: a dead worker's claim lapses in a minute)


# Queueing (called by app.articles.services inside its transaction) -----------------


async def queue(tx: db.Tx, article_id: int, *, wake: bool = True, again: bool = False) -> bool:
    """Make the article's analysis pending and wake a worker after commit.

    Returns False - and changes nothing - when the analysis is completed or was
    skipped (the text is a consent wall: only new text changes that). A
    running analysis whose lease is still valid is left to its worker (it will
    finish it); the wake-up still goes out and coalesces with any queued one.
    `again`: the article's text changed, so any analysis is of the old text - a
    completed one is queued again, a running one too (its worker's result is
    then refused: it writes only while its claim is the running one).
    `wake=False` sends none: the caller runs `reconcile` when it is done, and
    the reconciler cron is the backstop.
    """
    status = await tx.fetchval(
        """
        INSERT INTO analyses (workspace_id, article_id) VALUES ($1, $2)
        ON CONFLICT (workspace_id, article_id) DO UPDATE SET
          status = CASE WHEN analyses.status = 'running' AND analyses.lease_until > now()
                          AND NOT $3 THEN 'running' ELSE 'pending' END,
          attempts = CASE WHEN analyses.status = 'running' AND analyses.lease_until > now()
                            AND NOT $3 THEN analyses.attempts ELSE 0 END,
          next_attempt_at = now(),
          updated_at = now()
        WHERE analyses.status NOT IN ('completed', 'skipped') OR $3
        RETURNING status
        """,
        tx.workspace_id,
        article_id,
        again,
    )
    if status is None:
        return False
    assert tx.workspace_id is not None
    if not wake:
        return True
    jobs.enqueue_after_commit(
        tx, ANALYSE_TASK, tx.workspace_id, article_id, job_id=job_id(tx.workspace_id, article_id)
    )
    return True


# Running ----------------------------------------------------------------------------


async def run_analysis(workspace_id: int, article_id: int, settings: Settings) -> Run:
    """Claim the article's analysis if it is due, run the analyser, record the outcome."""
    claim = await _claim(workspace_id, article_id)
    if claim is None:
        return Run.SKIPPED
    article = await article_queries.analysis_input(workspace_id, article_id)
    if article is None:  # removed for good since the claim; its row went with it
        return Run.SKIPPED
    if Warning.CONSENT_WALL.value in article.warnings:
        # Keywords and a summary of a cookie dialog would pass for the article's own.
        return await _record_skip(workspace_id, claim, CONSENT_WALL_REASON)
    try:
        renew = functools.partial(_renew, workspace_id, claim)
        async with leases.heartbeat(renew, name=f"analysis:{claim.analysis_id}"):
            result = await analyse(article, settings)
    except AnalysisFailed as failure:
        return await _record_failure(workspace_id, claim, failure.reason, failure.retry_after)
    except Exception as error:
        # A bug or a database hiccup in the analyser must not leave the row
        # running until its lease expires: record it like any failure.
        log.exception("analysis of article %s crashed", article_id)
        reason = _("The analyser crashed (%(error)s).") % {"error": type(error).__name__}
        return await _record_failure(workspace_id, claim, reason, None)
    try:
        return await _record_result(workspace_id, claim, result)
    except Exception as error:
        # An answer the database refuses would otherwise leave the row running, to be
        # re-claimed and the endpoint re-asked at every lease expiry, for ever.
        log.exception("the analysis of article %s could not be saved", article_id)
        reason = f"The analysis could not be saved ({type(error).__name__}: {error})."
        return await _record_failure(
            workspace_id, claim, reason, None, status=AnalysisStatus.FAILED
        )


def analyser_for(settings: Settings) -> RemoteAnalyser | None:
    """The configured OpenAI-compatible endpoint, or None for the local analyser."""
    return RemoteAnalyser(settings) if settings.analysis_endpoint.strip() else None


async def analyse(article: AnalysisInput, settings: Settings) -> AnalysisResult:
    remote = analyser_for(settings)
    if remote is not None:
        return await remote.analyse(article)
    terms = local.count_terms(article)
    frequencies = await queries.document_frequencies(
        article.workspace_id, local.candidate_terms(terms)
    )
    return local.analyse(article, terms, frequencies)


async def _claim(workspace_id: int, article_id: int) -> Claim | None:
    async with db.workspace_tx(workspace_id) as tx:
        row = await tx.fetchrow(
            """
            WITH due AS (
              SELECT an.id FROM analyses an
              JOIN articles a ON a.id = an.article_id AND a.deleted_at IS NULL
              WHERE an.workspace_id = $1 AND an.article_id = $2
                AND ((an.status IN ('pending', 'failed') AND an.next_attempt_at <= now())
                     OR (an.status = 'running' AND an.lease_until < now()))
              FOR UPDATE OF an SKIP LOCKED
            )
            UPDATE analyses SET status = 'running', attempts = analyses.attempts + 1,
              lease_until = now() + make_interval(secs => $3), updated_at = now()
            FROM due WHERE analyses.id = due.id
            RETURNING analyses.id, analyses.article_id, analyses.attempts, analyses.lease_until
            """,
            workspace_id,
            article_id,
            float(policy.LEASE_SECONDS),
        )
        if row is None:
            return None
        publish_after_commit(tx, article_topic(article_id))
        return Claim(row["id"], row["article_id"], row["attempts"], row["lease_until"])


async def _renew(workspace_id: int, claim: Claim) -> bool:
    """The heartbeat's renewal: True while the claim is still this worker's."""
    async with db.workspace_tx(workspace_id) as tx:
        until = await tx.fetchval(
            """
            UPDATE analyses SET lease_until = now() + make_interval(secs => $4)
            WHERE workspace_id = $1 AND id = $2 AND status = 'running' AND lease_until = $3
            RETURNING lease_until
            """,
            workspace_id,
            claim.analysis_id,
            claim.lease_until,
            float(policy.LEASE_SECONDS),
        )
    if until is None:
        return False
    claim.lease_until = until
    return True


async def _record_result(workspace_id: int, claim: Claim, result: AnalysisResult) -> Run:
    async with db.workspace_tx(workspace_id) as tx:
        written = await tx.fetchval(
            """
            UPDATE analyses SET status = 'completed', summary = $4, keywords = $5::jsonb,
              language = $6, reading_minutes = $7, analyser = $8, error = '',
              lease_until = NULL, completed_at = now(), updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'running' AND lease_until = $3
            RETURNING id
            """,
            workspace_id,
            claim.analysis_id,
            claim.lease_until,
            result.summary,
            json.dumps(list(result.keywords)),
            result.language,
            result.reading_minutes,
            result.analyser,
        )
        if written is None:
            log.info("analysis of article %s superseded; result dropped", claim.article_id)
            return Run.SUPERSEDED
        publish_after_commit(tx, article_topic(claim.article_id))
        publish_after_commit(tx, LIBRARY_TOPIC)
    return Run.COMPLETED


async def _record_skip(workspace_id: int, claim: Claim, reason: str) -> Run:
    """Not analysed, on purpose: no summary or keywords (a former analysis was of another
    text), `reason` shown instead; never due again until the text changes (`queue(again)`)."""
    async with db.workspace_tx(workspace_id) as tx:
        written = await tx.fetchval(
            """
            UPDATE analyses SET status = 'skipped', summary = '', keywords = '[]',
              language = '', reading_minutes = 0, analyser = '', error = $4,
              lease_until = NULL, completed_at = NULL, updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'running' AND lease_until = $3
            RETURNING id
            """,
            workspace_id,
            claim.analysis_id,
            claim.lease_until,
            reason,
        )
        if written is None:
            return Run.SUPERSEDED
        publish_after_commit(tx, article_topic(claim.article_id))
        publish_after_commit(tx, LIBRARY_TOPIC)
    return Run.NOT_ANALYSED


async def _record_failure(
    workspace_id: int,
    claim: Claim,
    reason: str,
    retry_after: float | None,
    *,
    status: AnalysisStatus | None = None,
) -> Run:
    """Record why the claim failed; `status` FAILED says at once that asking again soon
    will not help (the reconciler still retries it, slowly)."""
    delay = policy.backoff_seconds(claim.attempts, retry_after)
    status = status or policy.status_after_failure(claim.attempts)
    log.warning(
        "analysis of article %s failed (attempt %s, next in %.0f s): %s",
        claim.article_id,
        claim.attempts,
        delay,
        reason,
    )
    async with db.workspace_tx(workspace_id) as tx:
        written = await tx.fetchval(
            """
            UPDATE analyses SET status = $4, error = $5, lease_until = NULL,
              next_attempt_at = now() + make_interval(secs => $6), updated_at = now()
            WHERE workspace_id = $1 AND id = $2 AND status = 'running' AND lease_until = $3
            RETURNING id
            """,
            workspace_id,
            claim.analysis_id,
            claim.lease_until,
            status.value,
            reason[:1000],
            delay,
        )
        if written is None:
            return Run.SUPERSEDED
        # A wake-up of its own at the retry time; the reconciler is the safety net.
        jobs.enqueue_after_commit(
            tx,
            ANALYSE_TASK,
            workspace_id,
            claim.article_id,
            job_id=f"{job_id(workspace_id, claim.article_id)}:retry:{claim.attempts}",
            defer_by=delay,
        )
        publish_after_commit(tx, article_topic(claim.article_id))
        publish_after_commit(tx, LIBRARY_TOPIC)
    return Run.FAILED if status == AnalysisStatus.FAILED else Run.RETRYING


# Reconciling ------------------------------------------------------------------------


async def reconcile(limit: int = RECONCILE_BATCH) -> int:
    """Wake a worker for every analysis PostgreSQL says is due; returns how many.

    Due means pending or failed with next_attempt_at passed, or running with an
    expired lease (its worker died). These wake-ups carry no job id: a dead
    job may still hold the article's id in Redis until arq's own timeout, and
    must not swallow the wake-up that replaces it. A wake-up too many finds
    nothing to claim and ends.
    """
    due = await queries.due(limit)
    for workspace_id, article_id in due:
        await jobs.enqueue(ANALYSE_TASK, workspace_id, article_id)
    return len(due)
