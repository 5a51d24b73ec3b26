"""Library search and an analysis's term counts in a library of thousands, against a bare lookup.

    .venv/bin/python bench/search.py [articles]

With the test services running (scripts/services.sh start test); DATABASE_URL and
REDIS_URL as for the other benchmarks (it recreates `newsdesk_bench`).

It stores `articles` (3,000 by default) through `process_scraped_article`: English news
text of ~600 words drawn from a 4,000-word vocabulary with the long tail real text has
(Zipf: a few words in most articles, most words in a few). Then, each the median of a few runs:

- the library's search (`queries.library`, first page of 25 by relevance, with its
  highlighted snippets) for a common word, a word of middling frequency, a rare one and
  a phrase;
- the analyser's document frequencies (`analysis.queries.document_frequencies`) for
  the 40 candidate terms of one article, as `run_analysis` asks them.

The bare baseline for each is PostgreSQL alone on the same rows: the GIN lookup of
the words in English, `ORDER BY` the newest, `LIMIT 26` (the search) or `count(*)` per
term (the frequencies). The ratio says what reading every language, ranking and the
snippets cost on top.
"""

from __future__ import annotations

import asyncio
import logging
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.analysis import local
from app.analysis import queries as analysis_queries
from app.articles import queries as library_queries
from app.articles.services import process_scraped_article
from app.articles.types import LibraryFilter, ScrapedArticle, Source
from app.core import db
from app.safe_content import from_text
from bench._setup import bench_services, bench_settings, new_person

ARTICLES = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
TASKS = 8
RUNS = 5
VOCABULARY = 4000
_SYLLABLES = ["ka", "lo", "mer", "tan", "vi", "sor", "pel", "dun", "ra", "qui", "bes", "ton"]
SEARCHES = {  # what, found by rank in the vocabulary (0 = the most common word)
    "common word": "{w5}",
    "middling word": "{w200}",
    "rare word": "{w3000}",
    "phrase": '"{w5} {w6}"',
}


def vocabulary() -> list[str]:
    rng = random.Random(7)
    words: list[str] = []
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words


def article_text(rng: random.Random, words: list[str], weights: list[float]) -> str:
    sentences = []
    for _ in range(rng.randint(30, 60)):
        sentence = " ".join(rng.choices(words, weights, k=rng.randint(8, 20)))
        sentences.append(sentence.capitalize() + ".")
    return " ".join(sentences)


async def fill_library(workspace_id: int, words: list[str]) -> None:
    rng = random.Random(11)
    weights = [1 / (rank + 1) for rank in range(len(words))]  # Zipf
    events = iter(
        ScrapedArticle(
            url=f"https://news{i % 50}.example/story-{i}",
            content=from_text(article_text(rng, words, weights)),
            source=Source.FEED,
            title=" ".join(rng.choices(words, weights, k=6)).capitalize(),
            site_name="Bench News",
            language="en",
        )
        for i in range(ARTICLES)
    )

    async def submitter() -> None:
        for event in events:  # one shared iterator: each event goes to exactly one task
            await process_scraped_article(workspace_id, event, wake_analysis=False)

    await asyncio.gather(*(submitter() for _ in range(TASKS)))


async def median_ms(call: Callable[[], Awaitable[object]]) -> float:
    await call()  # warm: plans, dictionaries, caches
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        await call()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


async def bare_search(workspace_id: int, words: str) -> object:
    return await db.fetch(
        """SELECT id FROM articles WHERE workspace_id = $1 AND deleted_at IS NULL
             AND id = ANY(ARRAY(SELECT newsdesk_article_matches(plainto_tsquery('english', $2))))
           ORDER BY created_at DESC LIMIT 26""",
        workspace_id,
        words,
    )


async def bare_counts(workspace_id: int, terms: list[str]) -> object:
    return await db.fetch(
        """SELECT t, (SELECT count(*) FROM articles WHERE workspace_id = $1
                        AND deleted_at IS NULL AND id = ANY(ARRAY(
                          SELECT newsdesk_article_matches(plainto_tsquery('english', t)))))
           FROM unnest($2::text[]) AS t""",
        workspace_id,
        terms,
    )


def line(what: str, ours: float, bare: float) -> None:
    print(f"{what:28s} {ours:8.1f} ms   bare {bare:6.1f} ms   ratio {ours / bare:5.1f}x")


async def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    settings = bench_settings()
    async with bench_services(settings, pool_max=TASKS + 2):
        words = vocabulary()
        workspace_id = (await new_person("search"))[1]
        started = time.perf_counter()
        await fill_library(workspace_id, words)
        print(f"library                      {ARTICLES:,} articles stored in "
              f"{time.perf_counter() - started:.1f} s (~600 words each, Zipf over "
              f"{VOCABULARY:,} words)")  # fmt: skip
        for what, pattern in SEARCHES.items():
            q = pattern.format(**{f"w{n}": words[n] for n in (5, 6, 200, 3000)})
            f = LibraryFilter(q=q)
            page = await library_queries.library(workspace_id, f)
            ours = await median_ms(lambda f=f: library_queries.library(workspace_id, f))
            bare = await median_ms(lambda q=q: bare_search(workspace_id, q.strip('"')))
            line(f"search, {what} ({len(page.items)})", ours, bare)

        article_id = await db.fetchval(
            "SELECT id FROM articles WHERE workspace_id = $1 ORDER BY id LIMIT 1", workspace_id
        )
        article = await library_queries.analysis_input(workspace_id, article_id)
        assert article is not None
        terms = local.candidate_terms(local.count_terms(article))
        ours = await median_ms(lambda: analysis_queries.document_frequencies(workspace_id, terms))
        bare = await median_ms(lambda: bare_counts(workspace_id, terms))
        line(f"term counts ({len(terms)} terms)", ours, bare)


if __name__ == "__main__":
    asyncio.run(main())
