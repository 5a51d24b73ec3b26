"""Topics' use cases: the only writers of topics, topic_sources and topic_runs.

People create, rename and delete topics, add, remove, enable and disable
sources, and ask for a run now. The scrape step (scraping.py) claims a
source with a lease, opens a run row and closes it here; every change
tells the topic's open pages after commit.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime

import asyncpg

from app.core import db
from app.core.i18n import _, format_number
from app.core.jobs import enqueue, enqueue_after_commit
from app.core.leases import LEASE_SECONDS
from app.events.services import record
from app.live.notices import publish, publish_after_commit
from app.safe_content import http_url
from app.topics import queries
from app.topics.schedule import next_run_delay, partial_retry_delay
from app.topics.types import (
    TOPICS_CHANNEL,
    LeasedSource,
    LeaseFence,
    RunResult,
    RunStatus,
    SourceForm,
    SourceKind,
    TopicError,
    TopicForm,
    TopicNotFound,
    topic_channel,
)

log = logging.getLogger(__name__)

MAX_NAME = 100
MAX_DESCRIPTION = 500
MAX_QUERY = 500
MAX_URL = 2000
MIN_INTERVAL_MINUTES = 5  # politeness: no feed needs reading more often
MAX_INTERVAL_MINUTES = 7 * 24 * 60
SCRAPE_TASK = "scrape_topic_source"

EVENT_TOPIC_CREATED = "topic_created"
EVENT_TOPIC_RENAMED = "topic_renamed"
EVENT_TOPIC_DELETED = "topic_deleted"
EVENT_SOURCE_ADDED = "topic_source_added"
EVENT_SOURCE_REMOVED = "topic_source_removed"
EVENT_RUN_FINISHED = "topic_run_finished"


# Topics ---------------------------------------------------------------------------


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clean(value: str) -> str:
    """Without control characters (PostgreSQL refuses NUL; none belongs in a name or query)."""
    return _CONTROL.sub("", value)


def _checked_topic(form: TopicForm) -> tuple[str, str]:
    name = " ".join(_clean(form.name).split())
    description = _clean(form.description).strip()
    if not name:
        raise TopicError(_("Give the topic a name."), field="name")
    if len(name) > MAX_NAME:
        raise TopicError(
            _("Keep the name under %(n)s characters.") % {"n": format_number(MAX_NAME)},
            field="name",
        )
    if len(description) > MAX_DESCRIPTION:
        raise TopicError(
            _("Keep the description under %(n)s characters.")
            % {"n": format_number(MAX_DESCRIPTION)},
            field="description",
        )
    return name, description


def _name_taken() -> TopicError:
    return TopicError(_("There is already a topic with this name."), field="name", status=409)


async def create_topic(workspace_id: int, form: TopicForm, *, actor_user_id: int | None) -> int:
    name, description = _checked_topic(form)
    try:
        async with db.workspace_tx(workspace_id) as tx:
            topic_id = await tx.fetchval(
                "INSERT INTO topics (workspace_id, name, description) VALUES ($1, $2, $3)"
                " RETURNING id",
                workspace_id,
                name,
                description,
            )
            await record(
                tx, EVENT_TOPIC_CREATED, actor_user_id=actor_user_id, subject=name,
                topic_id=topic_id,
            )  # fmt: skip
            publish_after_commit(tx, TOPICS_CHANNEL)
    except asyncpg.UniqueViolationError:
        raise _name_taken() from None
    return int(topic_id)


async def rename_topic(
    workspace_id: int, topic_id: int, form: TopicForm, *, actor_user_id: int | None
) -> None:
    name, description = _checked_topic(form)
    try:
        async with db.workspace_tx(workspace_id) as tx:
            old = await tx.fetchval(
                "SELECT name FROM topics WHERE workspace_id = $1 AND id = $2"
                " AND deleted_at IS NULL FOR UPDATE",
                workspace_id,
                topic_id,
            )
            if old is None:
                raise TopicNotFound(topic_id)
            await tx.execute(
                "UPDATE topics SET name = $3, description = $4 WHERE workspace_id = $1 AND id = $2",
                workspace_id,
                topic_id,
                name,
                description,
            )
            if old != name:
                await record(
                    tx, EVENT_TOPIC_RENAMED, actor_user_id=actor_user_id, subject=name,
                    topic_id=topic_id, old_name=old,
                )  # fmt: skip
            publish_after_commit(tx, TOPICS_CHANNEL)
            publish_after_commit(tx, topic_channel(topic_id))
    except asyncpg.UniqueViolationError:
        raise _name_taken() from None


async def delete_topic(workspace_id: int, topic_id: int, *, actor_user_id: int | None) -> None:
    """Soft-delete: the topic leaves the list and stops scraping; its articles stay."""
    async with db.workspace_tx(workspace_id) as tx:
        name = await tx.fetchval(
            "UPDATE topics SET deleted_at = now() WHERE workspace_id = $1 AND id = $2"
            " AND deleted_at IS NULL RETURNING name",
            workspace_id,
            topic_id,
        )
        if name is None:
            raise TopicNotFound(topic_id)
        await tx.execute(
            "UPDATE topic_sources SET enabled = false WHERE workspace_id = $1 AND topic_id = $2",
            workspace_id,
            topic_id,
        )
        await record(
            tx, EVENT_TOPIC_DELETED, actor_user_id=actor_user_id, subject=name, topic_id=topic_id
        )
        publish_after_commit(tx, TOPICS_CHANNEL)
        publish_after_commit(tx, topic_channel(topic_id))


# Sources --------------------------------------------------------------------------


def checked_source(form: SourceForm) -> tuple[SourceKind, str, str, int]:
    """(kind, url, query, interval in seconds) from a form, or TopicError naming the field."""
    try:
        kind = SourceKind(form.kind)
    except ValueError:
        raise TopicError(_("Choose a feed or an arXiv query."), field="kind") from None
    url, query = "", ""
    if kind == SourceKind.FEED:
        candidate = form.url.strip()
        url = (http_url(candidate) or "") if len(candidate) <= MAX_URL else ""
        if not url or not candidate.lower().startswith(("http://", "https://")):
            raise TopicError(
                _("Enter the feed's address, starting with http:// or https://."), field="url"
            )
    else:
        query = " ".join(_clean(form.query).split())
        if not query:
            raise TopicError(_("Enter an arXiv search query, e.g. cat:cs.CL AND all:climate."),
                             field="query")  # fmt: skip
        if len(query) > MAX_QUERY:
            raise TopicError(
                _("Keep the query under %(n)s characters.") % {"n": format_number(MAX_QUERY)},
                field="query",
            )
    try:
        minutes = int(form.interval_minutes.strip() or "60")
    except ValueError:
        minutes = -1
    if not MIN_INTERVAL_MINUTES <= minutes <= MAX_INTERVAL_MINUTES:
        raise TopicError(
            _("Check every %(low)s to %(high)s minutes.")
            % {
                "low": format_number(MIN_INTERVAL_MINUTES),
                "high": format_number(MAX_INTERVAL_MINUTES),
            },
            field="interval_minutes",
        )
    return kind, url, query, minutes * 60


async def add_source(
    workspace_id: int, topic_id: int, form: SourceForm, *, actor_user_id: int | None
) -> int:
    """Add a feed or arXiv query to a topic; it is scraped at once, then every interval."""
    kind, url, query, interval = checked_source(form)
    try:
        async with db.workspace_tx(workspace_id) as tx:
            name = await tx.fetchval(
                "SELECT name FROM topics WHERE workspace_id = $1 AND id = $2"
                " AND deleted_at IS NULL FOR SHARE",
                workspace_id,
                topic_id,
            )
            if name is None:
                raise TopicNotFound(topic_id)
            source_id = await tx.fetchval(
                """
                INSERT INTO topic_sources (workspace_id, topic_id, kind, url, query,
                  interval_seconds)
                VALUES ($1, $2, $3, $4, $5, $6) RETURNING id
                """,
                workspace_id,
                topic_id,
                kind.value,
                url,
                query,
                interval,
            )
            await record(
                tx, EVENT_SOURCE_ADDED, actor_user_id=actor_user_id, subject=name,
                topic_id=topic_id, source_id=source_id, source_kind=kind.value, source=url or query,
            )  # fmt: skip
            enqueue_after_commit(tx, SCRAPE_TASK, workspace_id, source_id)
            publish_after_commit(tx, TOPICS_CHANNEL)
            publish_after_commit(tx, topic_channel(topic_id))
    except asyncpg.UniqueViolationError:
        field = "url" if kind == SourceKind.FEED else "query"
        raise TopicError(
            _("This topic already has that source."), field=field, status=409
        ) from None
    return int(source_id)


async def _source_topic(tx: db.Tx, workspace_id: int, topic_id: int, source_id: int) -> str:
    """The source's row lock, within a live topic; its topic's name. TopicNotFound otherwise."""
    name = await tx.fetchval(
        """
        SELECT t.name FROM topic_sources s
        JOIN topics t ON t.id = s.topic_id AND t.workspace_id = s.workspace_id
        WHERE s.workspace_id = $1 AND s.topic_id = $2 AND s.id = $3 AND t.deleted_at IS NULL
        FOR UPDATE OF s
        """,
        workspace_id,
        topic_id,
        source_id,
    )
    if name is None:
        raise TopicNotFound(source_id)
    return str(name)


async def remove_source(
    workspace_id: int, topic_id: int, source_id: int, *, actor_user_id: int | None
) -> None:
    """Remove a source and its runs; the articles it brought stay in the library."""
    async with db.workspace_tx(workspace_id) as tx:
        name = await _source_topic(tx, workspace_id, topic_id, source_id)
        label = await tx.fetchval(
            "DELETE FROM topic_sources WHERE workspace_id = $1 AND id = $2"
            " RETURNING CASE WHEN kind = 'feed' THEN url ELSE query END",
            workspace_id,
            source_id,
        )
        await record(
            tx, EVENT_SOURCE_REMOVED, actor_user_id=actor_user_id, subject=name,
            topic_id=topic_id, source_id=source_id, source=label,
        )  # fmt: skip
        publish_after_commit(tx, TOPICS_CHANNEL)
        publish_after_commit(tx, topic_channel(topic_id))


async def set_source_enabled(
    workspace_id: int, topic_id: int, source_id: int, enabled: bool
) -> None:
    """Pause or resume a source. Resuming clears its failures and runs it soon."""
    async with db.workspace_tx(workspace_id) as tx:
        await _source_topic(tx, workspace_id, topic_id, source_id)
        await tx.execute(
            """
            UPDATE topic_sources SET enabled = $3,
              failures = CASE WHEN $3 THEN 0 ELSE failures END,
              next_run_at = CASE WHEN $3 THEN now() ELSE next_run_at END
            WHERE workspace_id = $1 AND id = $2
            """,
            workspace_id,
            source_id,
            enabled,
        )
        if enabled:
            enqueue_after_commit(tx, SCRAPE_TASK, workspace_id, source_id)
        publish_after_commit(tx, TOPICS_CHANNEL)
        publish_after_commit(tx, topic_channel(topic_id))


async def run_source_now(workspace_id: int, topic_id: int, source_id: int) -> None:
    """Make a source due now and wake a worker for it (a paused source must be resumed first)."""
    async with db.workspace_tx(workspace_id) as tx:
        await _source_topic(tx, workspace_id, topic_id, source_id)
        enabled = await tx.fetchval(
            "UPDATE topic_sources SET next_run_at = now() WHERE workspace_id = $1 AND id = $2"
            " RETURNING enabled",
            workspace_id,
            source_id,
        )
        if not enabled:
            raise TopicError(_("This source is paused; resume it to run it."), status=409)
        # No job id: a finished run's kept result must not swallow this wake-up;
        # the lease keeps two runs of one source from overlapping.
        enqueue_after_commit(tx, SCRAPE_TASK, workspace_id, source_id)
        publish_after_commit(tx, topic_channel(topic_id))


# The scrape step's bookkeeping --------------------------------------------------------


async def claim_source(workspace_id: int, source_id: int) -> LeasedSource | None:
    """Take the lease of a due, enabled source of a live topic; None if it is not ours to run.

    SKIP LOCKED and the lease together mean two workers never run one source
    at once: the one that loses the row lock, or finds the lease taken, leaves.
    """
    async with db.workspace_tx(workspace_id) as tx:
        row = await tx.fetchrow(
            """
            WITH due AS (
              SELECT s.id FROM topic_sources s
              JOIN topics t ON t.id = s.topic_id AND t.workspace_id = s.workspace_id
              WHERE s.workspace_id = $1 AND s.id = $2 AND s.enabled AND t.deleted_at IS NULL
                AND s.next_run_at <= now()
                AND (s.lease_until IS NULL OR s.lease_until < now())
              FOR UPDATE OF s SKIP LOCKED
            )
            UPDATE topic_sources s SET lease_until = now() + make_interval(secs => $3)
            FROM due WHERE s.id = due.id
            RETURNING s.id, s.workspace_id, s.topic_id, s.kind, s.url, s.query,
              s.interval_seconds, s.etag, s.last_modified, s.failures, s.lease_until
            """,
            workspace_id,
            source_id,
            float(LEASE_SECONDS),
        )
    if row is None:
        return None
    return LeasedSource(
        id=row["id"],
        workspace_id=row["workspace_id"],
        topic_id=row["topic_id"],
        kind=SourceKind(row["kind"]),
        url=row["url"],
        query=row["query"],
        interval_seconds=row["interval_seconds"],
        etag=row["etag"],
        last_modified=row["last_modified"],
        failures=row["failures"],
        fence=LeaseFence(row["lease_until"]),
    )


async def renew_lease(source: LeasedSource) -> bool:
    """The heartbeat's renewal (app.core.leases): True while the source is still ours."""
    assert source.fence is not None
    async with db.workspace_tx(source.workspace_id) as tx:
        until = await tx.fetchval(
            """
            UPDATE topic_sources SET lease_until = now() + make_interval(secs => $4)
            WHERE workspace_id = $1 AND id = $2 AND lease_until = $3
            RETURNING lease_until
            """,
            source.workspace_id,
            source.id,
            source.fence.until,
            float(LEASE_SECONDS),
        )
    if until is None:
        return False
    source.fence.until = until
    return True


async def start_run(source: LeasedSource) -> int:
    """A `running` row the topic page shows at once.

    Any other `running` row of the source belongs to a worker that died: we
    hold the lease now, so it is closed as interrupted (its counts stay).
    """
    async with db.workspace_tx(source.workspace_id) as tx:
        await tx.execute(
            "UPDATE topic_runs SET status = 'failed', finished_at = now(), error = $3"
            " WHERE workspace_id = $1 AND source_id = $2 AND status = 'running'",
            source.workspace_id,
            source.id,
            _("The run was interrupted (the worker stopped)."),
        )
        run_id = await tx.fetchval(
            "INSERT INTO topic_runs (workspace_id, source_id) VALUES ($1, $2) RETURNING id",
            source.workspace_id,
            source.id,
        )
        publish_after_commit(tx, topic_channel(source.topic_id))
    return int(run_id)


async def record_progress(source: LeasedSource, run_id: int, result: RunResult) -> None:
    """The run row's counters as they stand, for the topic page to show while it runs.

    Best effort: a failed write (the database restarting) is logged and the
    run goes on; the next write, or the run's end, carries the counts.
    """
    try:
        async with db.workspace_tx(source.workspace_id) as tx:
            await save_counters(tx, source, run_id, result)
    except Exception as error:
        log.warning("topic run %s: counters not saved now: %r", run_id, error)


async def save_counters(tx: db.Tx, source: LeasedSource, run_id: int, result: RunResult) -> None:
    """Write the run's counters in `tx`: in the article's own transaction, they never lag its row."""
    await tx.execute(
        "UPDATE topic_runs SET found = $3, new = $4, duplicates = $5, failures = $6"
        " WHERE workspace_id = $1 AND id = $2 AND status = 'running'",
        source.workspace_id,
        run_id,
        result.found,
        result.new,
        result.duplicates,
        result.failures,
    )
    publish_after_commit(tx, topic_channel(source.topic_id))


async def finish_run(
    source: LeasedSource, run_id: int, result: RunResult, *, jitter: float = 0.0
) -> datetime | None:
    """Close the run and the lease, and schedule the next run (backing off after failures).

    A partial run (some entries failed) comes back within minutes to retry
    them. Returns when the source runs next; None if the lease was no longer
    ours (another worker has the source; only the run row is closed) or the run
    is gone (its source removed, its workspace deleted: nothing is written).
    """
    failed = result.status == RunStatus.FAILED
    failures = source.failures + 1 if failed else 0
    delay = next_run_delay(
        source.interval_seconds, failures, retry_after=result.retry_after, jitter=jitter
    )
    async with db.workspace_tx(source.workspace_id) as tx:
        if result.status == RunStatus.PARTIAL:
            partials = await _partial_runs_in_a_row(tx, source, run_id)
            delay = partial_retry_delay(source.interval_seconds, partials + 1, jitter=jitter)
        closed = await tx.fetchval(
            """
            UPDATE topic_runs SET status = $3, found = $4, new = $5, duplicates = $6,
              failures = $7, error = $8, finished_at = now()
            WHERE workspace_id = $1 AND id = $2 RETURNING id
            """,
            source.workspace_id,
            run_id,
            result.status.value,
            result.found,
            result.new,
            result.duplicates,
            result.failures,
            result.error[:1000],
        )
        if closed is None:  # its source was removed or its workspace deleted meanwhile
            return None
        next_run_at: datetime | None = await tx.fetchval(
            """
            UPDATE topic_sources SET lease_until = NULL, failures = $3,
              last_error = $4, next_run_at = now() + make_interval(secs => $5),
              etag = coalesce($6, etag), last_modified = coalesce($7, last_modified)
            WHERE workspace_id = $1 AND id = $2
              AND ($8::timestamptz IS NULL OR lease_until = $8)
            RETURNING next_run_at
            """,
            source.workspace_id,
            source.id,
            failures,
            result.error[:1000] if failed else "",
            delay,
            result.etag,
            result.last_modified,
            source.fence.until if source.fence else None,
        )
        await _record_run(tx, source, run_id, result)
        publish_after_commit(tx, topic_channel(source.topic_id))
        publish_after_commit(tx, TOPICS_CHANNEL)
    return next_run_at


async def _record_run(tx: db.Tx, source: LeasedSource, run_id: int, result: RunResult) -> None:
    """One Activity row per run that brought something or failed (its articles add none)."""
    if not (result.new or result.failures or result.status == RunStatus.FAILED):
        return  # a quiet run every few minutes is not news
    name = await tx.fetchval(
        "SELECT name FROM topics WHERE workspace_id = $1 AND id = $2",
        source.workspace_id,
        source.topic_id,
    )
    await record(
        tx, EVENT_RUN_FINISHED, subject=name or "", topic_id=source.topic_id,
        source_id=source.id, run_id=run_id, status=result.status.value, found=result.found,
        new=result.new, duplicates=result.duplicates, failures=result.failures,
    )  # fmt: skip


async def _partial_runs_in_a_row(tx: db.Tx, source: LeasedSource, run_id: int) -> int:
    """How many of the source's latest finished runs before this one were partial."""
    statuses = await tx.fetch(
        "SELECT status FROM topic_runs WHERE workspace_id = $1 AND source_id = $2 AND id <> $3"
        " AND status <> 'running' ORDER BY id DESC LIMIT 12",
        source.workspace_id,
        source.id,
        run_id,
    )
    count = 0
    for row in statuses:
        if row["status"] != RunStatus.PARTIAL.value:
            break
        count += 1
    return count


async def close_interrupted_runs() -> int:
    """Runs left `running` by a worker that died: failed once their source's lease ran out.

    A running job renews its lease every 20 s (app.core.leases), so a source
    whose lease is gone has no worker, and its `running` rows never finish.
    They keep the counts they had reached; the scheduler runs the source again.
    """
    async with db.transaction() as tx:
        rows = await tx.fetch(
            """
            UPDATE topic_runs r SET status = 'failed', finished_at = now(), error = $1
            FROM topic_sources s
            WHERE r.status = 'running' AND s.id = r.source_id
              AND (s.lease_until IS NULL OR s.lease_until < now())
            RETURNING r.workspace_id, s.topic_id
            """,
            _("The run was interrupted (the worker stopped)."),
        )
    for workspace_id, topic_id in {(r["workspace_id"], r["topic_id"]) for r in rows}:
        await publish(workspace_id, topic_channel(topic_id))
    return len(rows)


async def wake_due_sources(limit: int = 200) -> int:
    """The scheduler's tick: one scrape job per due source, at most `limit`.

    Nothing is claimed here; the job claims its source (lease, SKIP LOCKED),
    so a wake-up too many is harmless and a lost one is repeated next tick.
    The wake-ups carry no job id: a dead job still holding an id in Redis
    must never swallow the wake-up that replaces it (the row is the truth).
    """
    due = await queries.due_sources(limit)
    for source in due:
        await enqueue(SCRAPE_TASK, source.workspace_id, source.source_id)
    return len(due)
