"""Values of the bulk import that cross a boundary: states, views, claims, errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from uuid import UUID


class JobStatus(StrEnum):
    QUEUED = "queued"  # made; no item claimed yet
    RUNNING = "running"
    PAUSED = "paused"  # nothing new is claimed; items being read finish
    DONE = "done"  # every item is terminal
    CANCELLED = "cancelled"


ACTIVE_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.PAUSED})
# A done job's outcome on the pages when addresses failed (JobView.outcome).
DONE_WITH_ERRORS = "done-with-errors"  # some saved or already in the library, some failed
FAILED = "failed"  # every address failed


class ItemState(StrEnum):
    PENDING = "pending"  # waiting for a worker (or its next attempt)
    EXTRACTING = "extracting"  # claimed by a worker under a lease
    SAVED = "saved"
    DUPLICATE = "duplicate"  # the library had it already
    CONSENT_WALL = "consent-wall"  # stored, but the page was a cookie/consent wall
    ERROR = "error"  # failed for good (a permanent failure, or three attempts)
    CANCELLED = "cancelled"


TERMINAL_STATES = frozenset(
    {
        ItemState.SAVED,
        ItemState.DUPLICATE,
        ItemState.CONSENT_WALL,
        ItemState.ERROR,
        ItemState.CANCELLED,
    }
)

# The source of a job that fetches a stored article's page again (`fetch_again`); every
# other job's source is an articles Source value.
FETCH_AGAIN = "fetch-again"

# Live topics: the import page's job list, and one job's page.
IMPORTS_TOPIC = "imports"


def job_topic(job_id: int) -> str:
    return f"import:{job_id}"


class ImportJobNotFound(LookupError):
    """No such job in this workspace (another workspace's job is not found either)."""


class ImportRefused(ValueError):
    """The input cannot become a job; `str(error)` says why, for a person."""


@dataclass(frozen=True)
class Counters:
    total: int
    saved: int  # stored articles, consent walls included
    duplicates: int
    errors: int
    warnings: int  # stored with a warning
    cancelled: int

    @property
    def finished(self) -> int:
        return self.saved + self.duplicates + self.errors + self.cancelled

    @property
    def left(self) -> int:
        """Items not finished yet: pending or being read."""
        return self.total - self.finished

    @property
    def percent(self) -> int:
        return 100 if not self.total else int(100 * self.finished / self.total)


@dataclass(frozen=True)
class JobView:
    id: int
    status: JobStatus
    source: str  # an articles Source value
    counters: Counters
    created_by_name: str  # "" when the person is gone
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    in_flight: int  # items being read now
    waiting_for: str  # a host whose budget pending items wait for, "" if none
    eta_seconds: int | None  # an honest estimate from the pace so far; None before it is known
    # Every open item waits for its next attempt (backoff, Retry-After, a host's budget):
    # the first comes back then. None when an item is due or being read.
    retry_at: datetime | None
    first_url: str  # the first item's URL, to name a job in a list

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def outcome(self) -> str:
        """How the job went, as the pages say it: its status, except that a done job whose
        addresses failed is "done-with-errors", or "failed" when none was saved or found in
        the library. (The API's `status` stays "done": every address was tried.)"""
        c = self.counters
        if self.status != JobStatus.DONE or not c.errors:
            return self.status.value
        return DONE_WITH_ERRORS if c.saved or c.duplicates else FAILED


@dataclass(frozen=True)
class ItemView:
    id: int
    idx: int
    url: str  # as given: third-party text
    state: ItemState
    article_id: int | None
    title: str  # the article's title once stored: third-party text
    warning: str
    error: str
    waiting_for: str
    attempts: int
    next_attempt_at: datetime


@dataclass(frozen=True)
class ItemsPage:
    items: list[ItemView]
    page: int  # from 1
    pages: int
    per_page: int


@dataclass(frozen=True)
class JobsPage:
    """A page of a workspace's recent jobs (queries.recent_jobs), newest first."""

    jobs: list[JobView]
    page: int  # from 1
    pages: int  # at least 1, also when there is no job
    per_page: int


@dataclass(frozen=True)
class Claim:
    """One item held by one worker; its results are written only under `token`."""

    workspace_id: int
    job_id: int
    item_id: int
    url: str
    source: str  # the job's articles Source value
    attempts: int  # including this one
    token: UUID
    first_claim: bool  # the job's first claim: ArticleImportStarted goes out
    # "Fetch again": the stored article (a consent wall) whose content the page replaces.
    # Such an item names its article from the start; a new link's names none until stored.
    replaces: int | None = None
