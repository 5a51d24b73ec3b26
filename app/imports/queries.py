"""Reads of the bulk import: workspace id first (except the workers' cross-workspace scans)."""

from __future__ import annotations

from datetime import datetime

from asyncpg import Record

from app.core import config, db
from app.imports.types import (
    Counters,
    ItemsPage,
    ItemState,
    ItemView,
    JobsPage,
    JobStatus,
    JobView,
)

ITEMS_PER_PAGE = 100
RECENT_DAYS = 30
MAX_LISTED_JOBS = 100  # on the Import page
JOBS_PER_PAGE = 100  # a page of the API's list (GET /api/v1/imports)
# The pace of a running job is read from the items it finished in this last stretch: a pause,
# or failed items retried a day later, then say nothing about how fast it goes now. At most
# the latest PACE_ITEMS of them (by index): the page asks up to four times a second.
# Every read of the job's pending items takes one row from the pending index, never a scan of
# them (up to 5,000): `waiting_for` is the host of the item that comes back first, if any waits
# (a budget wait lasts until the host's next token, mostly shorter than a retry's backoff).
PACE_WINDOW_SECONDS = 600
PACE_ITEMS = 50

_JOB_COLUMNS = f"""
  j.id, j.status, j.source, j.total, j.saved_count, j.duplicate_count, j.error_count,
  j.warning_count, j.cancelled_count, j.created_at, j.started_at, j.finished_at,
  coalesce(u.display_name, '') AS created_by_name,
  (SELECT count(*) FROM import_items i WHERE i.job_id = j.id AND i.state = 'extracting'
     AND i.leased_until > now()) AS in_flight,
  coalesce((SELECT i.waiting_for FROM import_items i WHERE i.job_id = j.id
     AND i.state = 'pending' AND i.next_attempt_at > now()
     ORDER BY i.next_attempt_at LIMIT 1), '') AS waiting_for,
  (SELECT i.next_attempt_at FROM import_items i WHERE i.job_id = j.id AND i.state = 'pending'
     ORDER BY i.next_attempt_at LIMIT 1) AS next_attempt_at,
  now() AS read_at,
  coalesce((SELECT i.url FROM import_items i
     WHERE i.workspace_id = j.workspace_id AND i.job_id = j.id ORDER BY i.idx LIMIT 1), '')
    AS first_url,
  CASE WHEN j.status = 'running' THEN
    (SELECT extract(epoch FROM now() - min(last_attempt_at))::float8 / nullif(count(*), 0)
     FROM (SELECT i.last_attempt_at FROM import_items i
           WHERE i.job_id = j.id AND i.finished_at IS NOT NULL AND i.state <> 'cancelled'
             AND i.finished_at > now() - make_interval(secs => {PACE_WINDOW_SECONDS})
           ORDER BY i.finished_at DESC LIMIT {PACE_ITEMS}) AS latest)
  END AS seconds_per_item
"""


def retry_at(
    status: JobStatus, in_flight: int, next_attempt_at: datetime | None, now: datetime
) -> datetime | None:
    """When the first item comes back, if every open item waits for its next attempt (a
    backoff, a Retry-After, a host's budget); else None: something is due or being read."""
    if status not in (JobStatus.QUEUED, JobStatus.RUNNING) or in_flight:
        return None
    return next_attempt_at if next_attempt_at is not None and next_attempt_at > now else None


def eta_seconds(
    counters: Counters, status: JobStatus, seconds_per_item: float | None, waiting: bool
) -> int | None:
    """Remaining items at the recent pace (from the first claim of the items finished in the
    last PACE_WINDOW_SECONDS to now, per item); None while there is no such pace, or while
    every open item waits for a retry (the pace says nothing of how long that is)."""
    if status != JobStatus.RUNNING or seconds_per_item is None or waiting:
        return None
    return max(0, round(seconds_per_item * counters.left))


def _job(r: Record) -> JobView:
    counters = Counters(
        total=r["total"],
        saved=r["saved_count"],
        duplicates=r["duplicate_count"],
        errors=r["error_count"],
        warnings=r["warning_count"],
        cancelled=r["cancelled_count"],
    )
    status = JobStatus(r["status"])
    comes_back_at = retry_at(status, r["in_flight"], r["next_attempt_at"], r["read_at"])
    return JobView(
        id=r["id"],
        status=status,
        source=r["source"],
        counters=counters,
        created_by_name=r["created_by_name"],
        created_at=r["created_at"],
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        in_flight=r["in_flight"],
        waiting_for=r["waiting_for"],
        eta_seconds=eta_seconds(
            counters, status, r["seconds_per_item"], waiting=comes_back_at is not None
        ),
        retry_at=comes_back_at,
        first_url=r["first_url"],
    )


async def job(workspace_id: int, job_id: int) -> JobView | None:
    r = await db.fetchrow(
        f"""SELECT {_JOB_COLUMNS} FROM import_jobs j
            LEFT JOIN users u ON u.id = j.created_by
            WHERE j.workspace_id = $1 AND j.id = $2 AND j.deleted_at IS NULL""",
        workspace_id,
        job_id,
    )
    return None if r is None else _job(r)


# The Import page's list and the API's: not deleted, not archived, active or of the last
# RECENT_DAYS. $1 the workspace, $2 RECENT_DAYS.
_RECENT_JOBS = """j.workspace_id = $1 AND j.deleted_at IS NULL AND j.archived_at IS NULL
  AND (j.status IN ('queued', 'running', 'paused')
       OR j.created_at > now() - make_interval(days => $2))"""


async def recent_jobs(
    workspace_id: int, page: int = 1, per_page: int = MAX_LISTED_JOBS
) -> list[JobView]:
    """Active jobs and those of the last 30 days, newest first: the Import page shows the
    first MAX_LISTED_JOBS; the API pages through them all (recent_jobs_page)."""
    rows = await db.fetch(
        f"""SELECT {_JOB_COLUMNS} FROM import_jobs j
            LEFT JOIN users u ON u.id = j.created_by
            WHERE {_RECENT_JOBS}
            ORDER BY j.created_at DESC, j.id DESC LIMIT $3 OFFSET $4""",
        workspace_id,
        RECENT_DAYS,
        per_page,
        (max(1, page) - 1) * per_page,
    )
    return [_job(r) for r in rows]


def _page_within(page: int, total: int, per_page: int) -> tuple[int, int]:
    """The page asked for, kept within 1..pages (a page past the last is the last), and how
    many pages `total` rows make (at least 1, also when there is none)."""
    pages = max(1, -(-int(total) // per_page))
    return min(max(1, page), pages), pages


async def recent_jobs_page(
    workspace_id: int, page: int = 1, per_page: int = JOBS_PER_PAGE
) -> JobsPage:
    """One page of recent_jobs, numbered as a job's items are (a page past the last is the
    last)."""
    total = await db.fetchval(
        f"SELECT count(*) FROM import_jobs j WHERE {_RECENT_JOBS}", workspace_id, RECENT_DAYS
    )
    page, pages = _page_within(page, total, per_page)
    return JobsPage(await recent_jobs(workspace_id, page, per_page), page, pages, per_page)


def _item(r: Record) -> ItemView:
    return ItemView(
        id=r["id"],
        idx=r["idx"],
        url=r["url"],
        state=ItemState(r["state"]),
        article_id=r["article_id"],
        title=r["title"] or "",
        warning=r["warning"],
        error=r["error"],
        waiting_for=r["waiting_for"],
        attempts=r["attempts"],
        next_attempt_at=r["next_attempt_at"],
    )


async def items(
    workspace_id: int, job_id: int, page: int = 1, per_page: int = ITEMS_PER_PAGE
) -> ItemsPage:
    """One page of a job's items in input order, with the stored article's title."""
    total = await db.fetchval(
        "SELECT count(*) FROM import_items WHERE workspace_id = $1 AND job_id = $2",
        workspace_id,
        job_id,
    )
    page, pages = _page_within(page, total, per_page)
    rows = await db.fetch(
        """SELECT i.id, i.idx, i.url, i.state, i.article_id, a.title, i.warning, i.error,
             i.waiting_for, i.attempts, i.next_attempt_at
           FROM import_items i
           LEFT JOIN articles a ON a.id = i.article_id AND a.workspace_id = i.workspace_id
           WHERE i.workspace_id = $1 AND i.job_id = $2
           ORDER BY i.idx LIMIT $3 OFFSET $4""",
        workspace_id,
        job_id,
        per_page,
        (page - 1) * per_page,
    )
    return ItemsPage([_item(r) for r in rows], page, pages, per_page)


async def state_counts(workspace_id: int, job_id: int) -> dict[str, int]:
    """How many items are in each state: the truth the counters keep track of."""
    rows = await db.fetch(
        "SELECT state, count(*) AS n FROM import_items WHERE workspace_id = $1 AND job_id = $2"
        " GROUP BY state",
        workspace_id,
        job_id,
    )
    return {r["state"]: r["n"] for r in rows}


# Workers' scans, across workspaces ------------------------------------------------------


async def claim_candidates(limit: int = 20) -> list[tuple[int, int]]:
    """(workspace, job) pairs with due items and room in flight, fairest first: the
    workspace with the fewest items in flight, then the job, then the least recently served.
    Once per item claimed: stateless, its connection goes back without the reset round trip."""
    rows = await db.fetch_stateless(
        """
        WITH flight AS (
          SELECT workspace_id, job_id, count(*) AS n FROM import_items
          WHERE state = 'extracting' AND leased_until > now() GROUP BY workspace_id, job_id
        ), per_workspace AS (
          SELECT workspace_id, sum(n) AS n FROM flight GROUP BY workspace_id
        )
        SELECT j.workspace_id, j.id FROM import_jobs j
        LEFT JOIN flight f ON f.job_id = j.id
        LEFT JOIN per_workspace w ON w.workspace_id = j.workspace_id
        WHERE j.status IN ('queued', 'running') AND j.deleted_at IS NULL
          AND coalesce(f.n, 0) < $1
          AND EXISTS (SELECT 1 FROM import_items i WHERE i.job_id = j.id
                      AND i.state = 'pending' AND i.next_attempt_at <= now())
        ORDER BY coalesce(w.n, 0), coalesce(f.n, 0), j.last_claim_at NULLS FIRST, j.id
        LIMIT $2
        """,
        config.active().import_in_flight_per_job,
        limit,
    )
    return [(r["workspace_id"], r["id"]) for r in rows]


async def items_being_read() -> bool:
    """Whether a worker process, anywhere, holds a live lease on an import item."""
    rows = await db.fetch_stateless(
        "SELECT EXISTS (SELECT 1 FROM import_items WHERE state = 'extracting'"
        " AND leased_until > now())"
    )
    return bool(rows[0][0])


async def expired_items(limit: int = 500) -> list[tuple[int, int, int]]:
    rows = await db.fetch(
        """SELECT workspace_id, job_id, id FROM import_items
           WHERE state = 'extracting' AND leased_until < now() ORDER BY leased_until LIMIT $1""",
        limit,
    )
    return [(r["workspace_id"], r["job_id"], r["id"]) for r in rows]


async def jobs_with_due_items(limit: int = 500) -> list[int]:
    rows = await db.fetch(
        """SELECT j.id FROM import_jobs j
           WHERE j.status IN ('queued', 'running') AND j.deleted_at IS NULL
             AND EXISTS (SELECT 1 FROM import_items i WHERE i.job_id = j.id
                         AND i.state = 'pending' AND i.next_attempt_at <= now())
           ORDER BY j.last_claim_at NULLS FIRST LIMIT $1""",
        limit,
    )
    return [r["id"] for r in rows]


async def jobs_to_archive(days: int, limit: int = 500) -> list[tuple[int, int]]:
    rows = await db.fetch(
        """SELECT workspace_id, id FROM import_jobs
           WHERE status IN ('done', 'cancelled') AND archived_at IS NULL
             AND finished_at < now() - make_interval(days => $1) LIMIT $2""",
        days,
        limit,
    )
    return [(r["workspace_id"], r["id"]) for r in rows]
