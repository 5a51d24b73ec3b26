"""The wall's search over stored posts: German compounds by their first word, and a page of a
common word that reads about a page of posts, not every post holding it."""

from __future__ import annotations

import pytest

from app.core import db
from app.wall import queries
from app.wall.types import PAGE_SIZE
from tests.fixtures import as_owner
from tests.plans import rows_read_by_index


async def store(ws: int, texts: list[tuple[str, str]], *, repeat: int = 1) -> None:
    """Posts of these (text, language), `repeat` times over, a minute apart: the first of
    `texts` the newest."""
    await db.fetch(
        """
        INSERT INTO feed_items (workspace_id, dedup_key, provider, remote_id, created_at_remote,
          content, plain_text, lang)
        SELECT $1, encode(sha256(('p' || n)::bytea), 'hex'), 'mastodon', 'p' || n,
          now() - make_interval(mins => n), '{"type": "doc", "children": []}',
          ($2::text[])[1 + n % cardinality($2)], ($3::text[])[1 + n % cardinality($3)]
        FROM generate_series(0, $4 - 1) n
        """,
        ws, [t for t, _ in texts], [lang for _, lang in texts], len(texts) * repeat,
    )  # fmt: skip
    # The planner chooses by the table's statistics: those of an earlier test's few rows
    # (TRUNCATE keeps them) would make any plan look as cheap as the index.
    await as_owner("ANALYZE feed_items")


async def found(ws: int, q: str) -> list[str]:
    return [post.plain_text for post in (await queries.search(ws, q, None)).items]


async def test_a_german_compound_is_found_by_its_first_word_and_english_reads_no_prefixes(people):
    ws, _owner = await people.workspace()
    await store(
        ws,
        [
            ("Neue Klimadaten aus der Arktis", "de"),
            ("Der Klimawandel trifft die Bauern", "de"),
            ("Der Bahnhof wird umgebaut", "de"),
            ("Our portfolio grew this year", "en"),
        ],
    )

    assert await found(ws, "Klima") == [
        "Neue Klimadaten aus der Arktis",
        "Der Klimawandel trifft die Bauern",
    ]
    assert await found(ws, "Bahn") == ["Der Bahnhof wird umgebaut"]
    assert await found(ws, "Ei") == []  # too short to be a prefix: it would begin everything
    assert await found(ws, "an") == []
    assert await found(ws, "port") == []  # English keeps its words whole
    assert await found(ws, '"Klima trifft"') == []  # a phrase is what was typed
    assert await found(ws, '"Klimawandel trifft"') == ["Der Klimawandel trifft die Bauern"]


HISTORY = 400  # posts in the workspace; every other one says "flood"


@pytest.fixture
async def busy_wall(people) -> int:
    ws, _owner = await people.workspace()
    texts = [("Flood warning for the valley", "en"), ("A quiet day in the valley", "en")]
    await store(ws, texts, repeat=HISTORY // 2)
    return ws


async def test_a_common_word_walks_the_newest_posts_until_its_page_is_full(busy_wall):
    """Reading every post of the workspace, matching and sorting them took 84 s for a word in
    one of eight of 300,000 posts: under row security the word index is never used."""
    read = await rows_read_by_index(
        busy_wall,
        lambda: queries.search(busy_wall, "flood", None),
        "ORDER BY",
        "feed_items",
        allow=("bitmapscan", "sort"),
    )
    assert read <= 2 * (PAGE_SIZE + 1) + 1


async def test_a_prepared_search_can_walk_too(busy_wall):
    # The generic plan knows neither workspace nor cursor: on the tests' 400 posts a sort
    # looks cheaper than any walk (at 300,000 it walked: 456 posts for a word in one of eight).
    read = await rows_read_by_index(
        busy_wall,
        lambda: queries.search(busy_wall, "flood", None),
        "ORDER BY",
        "feed_items",
        generic=True,
    )
    assert read <= 2 * (PAGE_SIZE + 1) + 1


async def test_a_walked_search_pages_newest_first_without_repeats(busy_wall):
    first = await queries.search(busy_wall, "flood", None)
    second = await queries.search(busy_wall, "flood", first.next_cursor)
    posts = first.items + second.items

    assert len(posts) == 2 * PAGE_SIZE
    assert {post.plain_text for post in posts} == {"Flood warning for the valley"}
    assert len({post.id for post in posts}) == len(posts)
    times = [post.created_at for post in posts]
    assert times == sorted(times, reverse=True)
    newest = await db.fetch(
        "SELECT id FROM feed_items WHERE workspace_id = $1 AND plain_text LIKE 'Flood%'"
        " ORDER BY created_at_remote DESC LIMIT $2",
        busy_wall, 2 * PAGE_SIZE,
    )  # fmt: skip
    assert [post.id for post in posts] == [r["id"] for r in newest]
