"""Values of topics that cross a boundary: forms, views, run summaries, errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class SourceKind(StrEnum):
    FEED = "feed"  # an RSS or Atom feed; `url` is its address
    ARXIV = "arxiv"  # an arXiv API query; `query` is its search_query


class RunStatus(StrEnum):
    RUNNING = "running"
    OK = "ok"
    PARTIAL = "partial"  # the source was read, but some entries could not be stored
    NOT_MODIFIED = "not_modified"  # the feed answered 304: nothing new, nothing fetched
    FAILED = "failed"


def topic_channel(topic_id: int) -> str:
    """The live topic a topic page follows (its sources and runs)."""
    return f"topic:{topic_id}"


TOPICS_CHANNEL = "topics"  # the list of topics changed


class TopicError(ValueError):
    """A topic request that cannot be done, with a message for people."""

    def __init__(self, message: str, *, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.field = field  # the form field to mark, if one is to blame
        self.status = status


class TopicNotFound(LookupError):
    """No such topic (or source) in this workspace."""


# Forms: every field defaults, so a half-filled form reaches the service,
# which names what is wrong, instead of a bare 400.


@dataclass
class TopicForm:
    name: str = ""
    description: str = ""


@dataclass
class SourceForm:
    kind: str = "feed"
    url: str = ""  # for feeds
    query: str = ""  # for arXiv
    interval_minutes: str = "60"  # text: a bad number is the service's message, not a 400


# Views


@dataclass(frozen=True)
class TopicSummary:
    """One topic in the list."""

    id: int
    name: str
    description: str
    sources: int
    enabled_sources: int
    last_run_at: datetime | None
    articles: int  # stored articles that came from this topic


@dataclass(frozen=True)
class TopicView:
    id: int
    name: str
    description: str
    created_at: datetime


@dataclass(frozen=True)
class SourceView:
    id: int
    topic_id: int
    kind: SourceKind
    url: str  # feeds
    query: str  # arXiv
    enabled: bool
    interval_seconds: int
    next_run_at: datetime
    running: bool  # a worker holds its lease now
    failures: int  # consecutive failed runs
    last_error: str  # may quote a remote server: third-party text

    @property
    def label(self) -> str:
        return self.url if self.kind == SourceKind.FEED else self.query


@dataclass(frozen=True)
class RunView:
    id: int
    source_id: int
    source_label: str  # the feed URL or the arXiv query
    status: RunStatus
    found: int  # entries in the feed or API answer
    new: int
    duplicates: int
    failures: int  # entries that could not be stored
    error: str  # the run's error (failed) or the last entry's failure; third-party text
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class DueSource:
    """A source the scheduler found due."""

    workspace_id: int
    source_id: int


@dataclass(frozen=True)
class LeasedSource:
    """A source a worker holds for one run."""

    id: int
    workspace_id: int
    topic_id: int
    kind: SourceKind
    url: str
    query: str
    interval_seconds: int
    etag: str
    last_modified: str
    failures: int
    fence: LeaseFence | None = None  # the lease this worker holds; renewals move it


@dataclass
class LeaseFence:
    """The `lease_until` this worker last wrote: while the row still says so, the source is ours."""

    until: datetime


@dataclass(frozen=True)
class RunResult:
    """What one run did; the run row and the source are updated from it."""

    status: RunStatus
    found: int = 0
    new: int = 0
    duplicates: int = 0
    failures: int = 0
    error: str = ""
    etag: str | None = None  # None: keep what the source has
    last_modified: str | None = None
    retry_after: float | None = None  # seconds the remote asked us to wait
