"""Values of analysis that cross a boundary: its input, its result, its view."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol


class AnalysisStatus(StrEnum):
    PENDING = "pending"  # waiting for a worker (also: waiting out a backoff)
    RUNNING = "running"  # a worker holds it until lease_until
    COMPLETED = "completed"
    FAILED = "failed"  # gave up for now; the reconciler retries it at the capped backoff
    SKIPPED = "skipped"  # not analysed, on purpose (`error` says why); done until the text changes


@dataclass(frozen=True)
class Section:
    """One heading/text pair of an arXiv paper, as stored with its article."""

    heading: str
    text: str


@dataclass(frozen=True)
class AnalysisInput:
    """Everything an analyser reads, assembled from PostgreSQL at run time.

    Stored arXiv sections are merged in here, so a re-queued arXiv article is
    analysed with the same full text as the first time (seed 004 FR-007, SC-005).
    """

    workspace_id: int
    article_id: int
    title: str  # third-party text
    text: str  # the article's plain text (derived from its stored AST)
    language: str = ""  # what the page declared (ISO 639-1), "" when unknown
    sections: tuple[Section, ...] = ()  # arXiv sections, in order
    warnings: tuple[str, ...] = ()  # the article's (app.articles.types.Warning values)

    @property
    def full_text(self) -> str:
        """The body and every section whose text the body does not already contain."""
        parts = [self.text] if self.text.strip() else []
        for section in self.sections:
            body = section.text.strip()
            if body and body[:200] not in self.text:
                parts.append(f"{section.heading}\n\n{body}" if section.heading else body)
        return "\n\n".join(parts)


@dataclass(frozen=True)
class AnalysisResult:
    summary: str  # at most three sentences, from the article (local) or the model (remote)
    keywords: tuple[str, ...]  # most relevant first
    language: str  # ISO 639-1, "" when unknown
    reading_minutes: int  # at least 1
    analyser: str  # e.g. "local-v1", "openai:gpt-4o-mini"


@dataclass(frozen=True)
class DocumentFrequencies:
    """How many of the workspace's live articles contain each term (for IDF)."""

    total: int  # live articles in the workspace, this one included
    counts: dict[str, int] = field(default_factory=dict)  # term -> articles containing it


class AnalysisFailed(Exception):
    """An analyser could not produce a result; `str()` is a reason a person can read.

    `retry_after` (seconds) is a floor for the next attempt when the other side said so.
    """

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Analyser(Protocol):
    name: str

    async def analyse(self, article: AnalysisInput) -> AnalysisResult: ...


@dataclass(frozen=True)
class AnalysisView:
    """An article's analysis as the reader page and the API show it."""

    status: AnalysisStatus
    summary: str = ""  # third-party (derived from the article or a model): render escaped
    keywords: tuple[str, ...] = ()  # third-party
    language: str = ""
    reading_minutes: int = 0
    analyser: str = ""
    error: str = ""  # the last failure's reason, or why it was skipped (stored English)
    attempts: int = 0
    next_attempt_at: datetime | None = None
    completed_at: datetime | None = None

    @property
    def done(self) -> bool:
        return self.status == AnalysisStatus.COMPLETED
