"""The wall's search over stored posts: German compounds by their first word, a page of a
common word that reads about a page of posts, not every post holding it, and a rare word
looked up in the word index (m0025) - the same pages either way, and the bound workspace's
posts only."""

from __future__ import annotations

import pytest

from app.core import db
from app.wall import queries
from app.wall.types import PAGE_SIZE
from tests.fixtures import as_owner
from tests.plans import function_calls, rows_read_by_index


async def store(ws: int, texts: list[tuple[str, str]], *, repeat: int = 1, key: str = "p") -> None:
    """Posts of these (text, language), `repeat` times over, a minute apart: the first of
    `texts` the newest. `key` tells the posts of two calls apart."""
    await db.fetch(
        """
        INSERT INTO feed_items (workspace_id, dedup_key, provider, remote_id, created_at_remote,
          content, plain_text, lang)
        SELECT $1, encode(sha256(($5 || n)::bytea), 'hex'), 'mastodon', $5 || n,
          now() - make_interval(mins => n), '{"type": "doc", "children": []}',
          ($2::text[])[1 + n % cardinality($2)], ($3::text[])[1 + n % cardinality($3)]
        FROM generate_series(0, $4 - 1) n
        """,
        ws, [t for t, _ in texts], [lang for _, lang in texts], len(texts) * repeat, key,
    )  # fmt: skip
    # The planner chooses by the table's statistics: those of an earlier test's few rows
    # (TRUNCATE keeps them) would make any plan look as cheap as the index.
    await as_owner("ANALYZE feed_items, feed_item_search")


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
async def busy_wall(people, monkeypatch) -> int:
    """A wall on which "flood" is a common word: in more posts than the search looks up."""
    monkeypatch.setattr(queries, "WALK_ABOVE", HISTORY // 4)
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


async def test_a_word_the_statistics_expect_in_many_posts_walks_uncounted(busy_wall, monkeypatch):
    """Counting a common word's matches builds a bitmap of every one of them first (0.23 s
    for a word in 63 % of 390,000 posts): the planner's estimate spares it."""
    monkeypatch.setattr(queries, "WALK_ABOVE", HISTORY // 2 // (2 * queries.EXPECTED_OVER_COUNTED))
    scans = "SELECT pg_stat_get_xact_numscans('feed_item_search_vector'::regclass)"
    async with db.workspace_tx(busy_wall) as tx:
        before = await tx.fetchval(scans)
        first = await queries.search(busy_wall, "flood", None)
        assert await tx.fetchval(scans) == before
    assert len(first.items) == PAGE_SIZE


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


async def _matches(q: str) -> set[int]:
    """What the word index's function answers: the matching posts it lets the caller see."""
    rows = await db.fetch("SELECT id FROM newsdesk_feed_item_matches($1) AS id", q)
    return {r["id"] for r in rows}


async def _all_pages(ws: int, q: str) -> list[tuple[list[int], str | None]]:
    """Every page of a search, with the cursor each hands on."""
    pages, cursor = [], None
    while True:
        page = await queries.search(ws, q, cursor)
        pages.append(([post.id for post in page.items], page.next_cursor))
        if page.next_cursor is None:
            return pages
        cursor = page.next_cursor


async def test_a_rare_word_is_looked_up_in_the_word_index_not_walked(busy_wall):
    """A word in fewer posts than a page walked the whole workspace (8-10 s at 300,000
    posts): under row security `@@` on `feed_items` is never an index condition."""
    await store(busy_wall, [("A heron over the flooded valley", "en")], key="heron")
    scans = "SELECT pg_stat_get_xact_numscans('feed_item_search_vector'::regclass)"

    async with db.workspace_tx(busy_wall) as tx:
        before = await tx.fetchval(scans)
        assert await found(busy_wall, "herons") == ["A heron over the flooded valley"]
        assert await tx.fetchval(scans) > before
    read = await rows_read_by_index(
        busy_wall,
        lambda: queries.search(busy_wall, "heron", None),
        "ORDER BY",
        "feed_items",
        allow=("sort",),
    )
    assert read == 1  # the match, by its key: not the 401 posts


async def test_a_looked_up_search_parses_the_query_once(busy_wall):
    """Each parse reads the query in all 29 languages (~1-2 ms): the estimate, the count and
    the page each asked the word index again, five parses in all; one statement made three."""
    await store(busy_wall, [("A heron over the flooded valley", "en")], key="heron")

    parses = await function_calls(
        busy_wall, lambda: queries.search(busy_wall, "heron", None), "newsdesk_search_parses"
    )

    assert parses == 1  # the index's functions take the parses (m0030)


async def test_pages_are_the_same_looked_up_and_walked(people, monkeypatch):
    ws, _owner = await people.workspace()
    texts = [
        ("Neue Klimadaten aus der Arktis", "de"),
        ("Klimawandel: Fluten im Tal", "de"),
        ("Climate data from the Arctic", "en"),
        ("Klimadaten ohne Sprache", ""),
        ("Der Bahnhof wird umgebaut", "de"),
        ("Floods in the valley", "en"),
    ]
    await store(ws, texts, repeat=25)  # 150 posts, each text 25 times, interleaved

    for q in ("Klima", "Klimadaten", "flood", "climate", '"Klimawandel: Fluten"', "-Bahnhof"):
        looked_up = await _all_pages(ws, q)
        monkeypatch.setattr(queries, "WALK_ABOVE", 3)
        walked = await _all_pages(ws, q)
        monkeypatch.undo()
        assert looked_up == walked, q
    # German's two texts, more than a page; the untagged one reads no prefixes.
    pages = await _all_pages(ws, "Klima")
    assert [len(ids) for ids, _cursor in pages] == [PAGE_SIZE, 50 - PAGE_SIZE]


async def test_a_bound_search_never_sees_another_workspaces_post(people):
    """The function runs as the tables' owner - in the tests a superuser, whom no policy
    holds - so it must keep to the binding itself."""
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    await store(mine, [("A heron in my valley", "en")])
    await store(theirs, [("A heron in their valley", "en")], repeat=3)
    my_heron = await db.fetchval("SELECT id FROM feed_items WHERE workspace_id = $1", mine)

    assert await found(mine, "heron") == ["A heron in my valley"]
    async with db.workspace_tx(mine):
        assert await _matches("heron") == {my_heron}
    assert len(await _matches("heron")) == 4  # unbound: system work


async def test_the_word_index_follows_a_posts_text_and_leaves_a_poll_write_alone(people):
    ws, _owner = await people.workspace()
    await store(ws, [("A heron in the valley", "en")])
    post = await db.fetchval("SELECT id FROM feed_items WHERE workspace_id = $1", ws)
    written = "SELECT pg_stat_get_xact_tuples_updated('feed_item_search'::regclass)"

    async with db.workspace_tx(ws) as tx:
        before = await tx.fetchval(written)
        # What a poll writes on a post it sees again: the index is not written.
        await tx.execute(
            "UPDATE feed_items SET fetched_at = now(), metrics = '{}', lang = lang WHERE id = $1",
            post,
        )
        assert await tx.fetchval(written) == before
        await tx.execute("UPDATE feed_items SET plain_text = 'Reiher am Fluss' WHERE id = $1", post)
        await tx.execute("UPDATE feed_items SET lang = 'de' WHERE id = $1", post)
        assert await tx.fetchval(written) == before + 2
    async with db.workspace_tx(ws):
        assert await _matches("heron") == set()
        assert await _matches("Flüsse") == {post}  # stemmed as German now

    async with db.workspace_tx(ws) as tx:
        await tx.execute("DELETE FROM feed_items WHERE id = $1", post)
    assert await _matches("Fluss") == set()
