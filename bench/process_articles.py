"""Throughput of the one processing path against a bare INSERT ... ON CONFLICT DO NOTHING.

    .venv/bin/python bench/process_articles.py [events] [tasks]

With the test services running (scripts/services.sh start test). It creates
(and drops first) its own scratch database, `newsdesk_bench` by default:
DATABASE_URL and REDIS_URL override the defaults (the test services on
ports 54339 and 63809, Redis database 15).

10,000 scraped-article events, 30 % of them duplicate URLs (half of those
spelled differently: tracking parameters, upper-case host, a fragment), are
submitted by 8 concurrent tasks through `process_scraped_article`. It
prints events/s, the rows stored (asserted equal to the distinct URLs), the
signals sent (event rows, asserted equal to new + awaiting) and the arq
wake-ups queued (one per article: they coalesce). Then the same rows go into
the same table through the same pool as bare `INSERT ... ON CONFLICT
(workspace_id, url_hash) DO NOTHING` statements from 8 tasks, and it prints
the ratio.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import random
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from app.articles.processing import PreparedArticle, prepare
from app.articles.services import process_scraped_article
from app.articles.types import OutcomeKind, ScrapedArticle, Source
from app.core import db
from app.core import redis as core_redis
from app.safe_content import from_text
from bench._setup import bench_services, bench_settings, new_person

EVENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
TASKS = int(sys.argv[2]) if len(sys.argv) > 2 else 8
DUPLICATE_SHARE = 0.30

_WORDS = [
    "the",
    "council",
    "said",
    "on",
    "tuesday",
    "that",
    "its",
    "budget",
    "for",
    "housing",
    "would",
    "rise",
    "while",
    "critics",
    "argued",
    "the",
    "plan",
    "left",
    "renters",
    "exposed",
    "to",
    "higher",
    "costs",
    "and",
    "fewer",
    "protections",
    "across",
    "the",
    "region",
    "according",
    "to",
    "documents",
    "seen",
    "by",
    "reporters",
    "and",
    "interviews",
    "with",
    "residents",
    "officials",
]


def _body(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(4, 9)):
        sentences = [
            " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 22))).capitalize() + "."
            for _ in range(rng.randint(3, 6))
        ]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def _respelled(url: str, rng: random.Random) -> str:
    """The same article, as another feed or share button would link it."""
    parts = urlsplit(url)
    choice = rng.randrange(3)
    if choice == 0:
        return url + "?utm_source=rss&utm_medium=feed"
    if choice == 1:
        return urlunsplit(parts._replace(netloc=parts.netloc.upper())) + "#comments"
    return url + "?fbclid=IwAR0abc"


def make_events(count: int, seed: int = 4) -> tuple[list[ScrapedArticle], int]:
    rng = random.Random(seed)
    distinct = round(count * (1 - DUPLICATE_SHARE))
    urls = [f"https://site{i % 97}.example/{2024 + i % 3}/story-{i}" for i in range(distinct)]
    bodies = [_body(rng) for _ in range(50)]
    submitted = list(urls)
    for _ in range(count - distinct):
        url = rng.choice(urls)
        submitted.append(url if rng.random() < 0.5 else _respelled(url, rng))
    rng.shuffle(submitted)
    events = [
        ScrapedArticle(
            url=url,
            content=from_text(bodies[i % len(bodies)]),
            source=Source.FEED,
            title=f"Story {i}: the council and its budget",
            site_name="Bench News",
        )
        for i, url in enumerate(submitted)
    ]
    return events, distinct


async def run_processing(
    workspace_id: int, events: list[ScrapedArticle]
) -> tuple[float, collections.Counter[str]]:
    queue = iter(events)
    kinds: collections.Counter[str] = collections.Counter()

    async def submitter() -> None:
        for event in queue:  # one shared iterator: each event goes to exactly one task
            kinds[(await process_scraped_article(workspace_id, event)).kind.value] += 1

    started = time.perf_counter()
    await asyncio.gather(*(submitter() for _ in range(TASKS)))
    return time.perf_counter() - started, kinds


BARE_INSERT = """
    INSERT INTO articles (workspace_id, url, url_hash, source, title, byline, site_name, language,
      published_at, topic_id, content, text, word_count, lead_image, metadata, warnings)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10::jsonb, $11, $12, $13, $14::jsonb, $15)
    ON CONFLICT (workspace_id, url_hash) DO NOTHING
"""


async def run_bare(workspace_id: int, rows: list[PreparedArticle]) -> float:
    pool = db.engine().pool
    assert pool is not None
    queue = iter(rows)

    async def inserter() -> None:
        async with pool.acquire() as conn:
            for a in queue:
                await conn.execute(
                    BARE_INSERT,
                    workspace_id,
                    a.url,
                    a.url_hash,
                    a.source,
                    a.title,
                    a.byline,
                    a.site_name,
                    a.language,
                    a.published_at,
                    a.content_json,
                    a.text,
                    a.word_count,
                    a.lead_image,
                    a.metadata_json,
                    a.warnings,
                )

    started = time.perf_counter()
    await asyncio.gather(*(inserter() for _ in range(TASKS)))
    return time.perf_counter() - started


async def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    settings = bench_settings()
    async with bench_services(settings, pool_max=TASKS + 2) as redis:
        events, distinct = make_events(EVENTS)
        processing_ws = (await new_person("processing"))[1]
        seconds, kinds = await run_processing(processing_ws, events)
        stored = await db.fetchval(
            "SELECT count(*) FROM articles WHERE workspace_id = $1", processing_ws
        )
        signals = await db.fetchval(
            "SELECT count(*) FROM events WHERE workspace_id = $1 AND kind = 'article_processed'",
            processing_ws,
        )
        queued = len(await redis.queued_jobs(queue_name=core_redis.queue_name(settings)))
        new = kinds[OutcomeKind.NEW.value]
        awaiting = kinds[OutcomeKind.DUPLICATE_AWAITING_ANALYSIS.value]
        assert kinds[OutcomeKind.FAILED.value] == 0, kinds
        assert stored == distinct, (stored, distinct)
        assert new == distinct, (new, distinct)
        assert signals == new + awaiting, (signals, new, awaiting)

        rows = [prepare(e) for e in events]  # outside the timing: the baseline only inserts
        bare_ws = (await new_person("bare"))[1]
        bare_seconds = await run_bare(bare_ws, rows)
        bare_stored = await db.fetchval(
            "SELECT count(*) FROM articles WHERE workspace_id = $1", bare_ws
        )
        assert bare_stored == distinct, (bare_stored, distinct)

        print(
            f"events submitted        {EVENTS:,} by {TASKS} tasks ({DUPLICATE_SHARE:.0%} duplicate URLs)"
        )
        print(f"process_scraped_article {seconds:.2f} s  {EVENTS / seconds:,.0f} events/s")
        print(f"  outcomes              {dict(kinds)}")
        print(f"  rows stored           {stored:,} (= {distinct:,} distinct URLs)")
        print(f"  signals sent          {signals:,} (= new {new:,} + awaiting {awaiting:,})")
        print(f"  analysis jobs queued  {queued:,} (wake-ups coalesce per article)")
        print(f"bare INSERT ON CONFLICT {bare_seconds:.2f} s  {EVENTS / bare_seconds:,.0f} rows/s")
        print(f"ratio                   {seconds / bare_seconds:.1f}x the bare insert's time")


if __name__ == "__main__":
    asyncio.run(main())
