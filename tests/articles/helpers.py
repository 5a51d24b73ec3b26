"""Making scraped-article events and reading what the processing path did.

Signals are read where they really land: the arq queue in Redis, the events
table and the workspace's live channel. Nothing of ours is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from arq.connections import ArqRedis

from app.articles.types import ArxivData, ArxivSection, ScrapedArticle, Source
from app.core import db
from app.core import redis as core_redis
from app.core.config import active
from app.live.notices import channel
from app.safe_content import from_text

_n = itertools.count(1)

ENGLISH = (
    "The city council approved a new budget for public transport on Tuesday. "
    "The budget adds night buses on six routes and lowers the price of a monthly ticket. "
    "Council members argued for hours about the cost of the tram extension. "
    "Supporters said the extension would connect the northern districts to the centre. "
    "Opponents warned that construction would close the main bridge for two years. "
    "The mayor said the transport budget was the largest investment in a decade.\n\n"
    "Residents of the northern districts welcomed the decision. "
    "Many of them commute for more than an hour each day. "
    "A survey by the transport authority found that most residents would use the tram. "
    "The first trams are expected to run in three years."
)


def article_event(
    url: str | None = None,
    *,
    text: str = ENGLISH,
    title: str | None = None,
    source: Source = Source.FEED,
    **fields: Any,
) -> ScrapedArticle:
    n = next(_n)
    return ScrapedArticle(
        url=url if url is not None else f"https://news.example/story/{n}",
        content=from_text(text),
        source=source,
        title=title if title is not None else f"Council approves transport budget ({n})",
        **fields,
    )


SECTIONS = (
    ArxivSection(
        "Introduction",
        "Graph neural networks learn representations of molecules. "
        "We study message passing on molecular graphs with attention.",
    ),
    ArxivSection(
        "Method",
        "Our method combines equivariant message passing with attention "
        "over molecular conformers. Conformers are sampled with a diffusion model.",
    ),
    ArxivSection(
        "Results",
        "Equivariant attention improves property prediction on three "
        "molecular benchmarks. Conformer sampling adds a further gain.",
    ),
)


def arxiv_event(url: str = "https://arxiv.org/abs/2401.01234", **fields: Any) -> ScrapedArticle:
    arxiv = fields.pop(
        "arxiv",
        ArxivData(
            arxiv_id="2401.01234v2",
            authors=("Ada Lovelace", "Alan Turing"),
            pdf_available=True,
            pdf_url="https://arxiv.org/pdf/2401.01234v2",
            sections=SECTIONS,
        ),
    )
    values: dict[str, Any] = {
        "text": "We present equivariant attention for molecular property prediction.",
        "title": "Equivariant attention for molecules",
        "source": Source.ARXIV,
        "published_at": datetime(2024, 1, 3, tzinfo=UTC),
        **fields,
    }
    return article_event(url, arxiv=arxiv, **values)


@dataclass(frozen=True)
class QueuedJob:
    job_id: str
    function: str
    args: tuple[Any, ...]


async def queued_jobs() -> list[QueuedJob]:
    """The jobs waiting in this installation's arq queue."""
    client: ArqRedis = core_redis.client()
    jobs = await client.queued_jobs(queue_name=core_redis.queue_name(active()))
    return sorted(
        (QueuedJob(j.job_id or "", j.function, tuple(j.args)) for j in jobs),
        key=lambda j: j.job_id,
    )


async def processed_events(workspace_id: int) -> list[dict[str, Any]]:
    rows = await db.fetch(
        "SELECT subject, data FROM events WHERE workspace_id = $1 AND kind = 'article_processed' "
        "ORDER BY id",
        workspace_id,
    )
    return [
        {
            "subject": r["subject"],
            **(json.loads(r["data"]) if isinstance(r["data"], str) else r["data"]),
        }
        for r in rows
    ]


async def count(table: str, workspace_id: int) -> int:
    return int(
        await db.fetchval(f"SELECT count(*) FROM {table} WHERE workspace_id = $1", workspace_id)
    )


@dataclass
class Notices:
    topics: list[str] = field(default_factory=list)


@contextlib.asynccontextmanager
async def live_notices(workspace_id: int) -> AsyncIterator[Notices]:
    """Collect the live notices published on the workspace's channel meanwhile."""
    seen = Notices()
    await db.settle()  # notices of what came before are out (writers do not wait for them)
    pubsub = core_redis.client().pubsub()
    await pubsub.subscribe(channel(workspace_id))
    await pubsub.get_message(timeout=1.0)  # the subscribe confirmation
    try:
        yield seen
        await db.settle()
        await asyncio.sleep(0.05)
        while message := await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.2):
            seen.topics.append(json.loads(message["data"])["topic"])
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()
