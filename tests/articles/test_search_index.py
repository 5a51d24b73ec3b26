"""The library's word index, read under row security (m0024): `article_search`, kept by
triggers on `articles`, read only through `newsdesk_article_matches`."""

from __future__ import annotations

from datetime import timedelta

from app.articles import queries
from app.articles.listing import parse_filter
from app.core import db
from tests.articles.test_pages import save
from tests.articles.test_search_and_order import (
    CLIMATE,
    CLIMATE_CHANGE,
    ENGLISH,
    GERMAN,
    NOW,
    dated,
    found,
)
from tests.fixtures import as_owner
from tests.plans import rows_read_by_index

FLOODS = "The river flooded the valley roads again; the councils closed three bridges."


async def _matches(query: str) -> set[int]:
    """What the index function answers to the query as every language reads it."""
    rows = await db.fetch(
        "SELECT id FROM newsdesk_article_matches(newsdesk_search_any($1)) AS id", query
    )
    return {r["id"] for r in rows}


async def _unindexed(workspace_id: int, query: str) -> set[int]:
    """The articles matching as the search found them before m0024: the stored column
    itself, in each article's own language, read without the index."""
    rows = await db.fetch(
        """SELECT a.id FROM articles a, newsdesk_search_parses($2) p
           WHERE a.workspace_id = $1 AND a.deleted_at IS NULL
             AND a.search @@ p.queries[array_position(p.configs, newsdesk_search_config(a.language))]""",
        workspace_id,
        query,
    )
    return {r["id"] for r in rows}


async def test_a_search_finds_what_the_stored_vectors_hold(people):
    ws, _owner = await people.workspace()
    await save(ws, title="Klimawandel und Landwirtschaft", text=CLIMATE_CHANGE, language="de")
    await save(ws, title="Bericht aus den Alpen", text=CLIMATE, language="de")
    await save(ws, title="Neue Häuser", text=GERMAN, language="de")
    await save(ws, title="Flooded roads", text=ENGLISH, language="en")
    await save(ws, title="Bridges closed", text=FLOODS, language="en")

    for query in (
        "Klima",
        "Klimawandel",
        '"Klimawandel trifft"',
        "haus",
        "zurich",
        "flood",
        '"flooded roads"',
        "roads -bridges",
        "bridges or Häuser",
        "the",
    ):
        assert set(await found(ws, query)) == await _unindexed(ws, query), query


async def test_a_bound_search_never_sees_another_workspaces_article(people):
    """The function runs as the tables' owner - in the tests a superuser, whom no policy
    holds - so it must keep to the binding itself."""
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    my_flood = await save(mine, title="Flood in the valley", text=FLOODS)
    their_flood = await save(theirs, title="Flood in the city", text=FLOODS)

    assert await found(mine, "flood") == [my_flood]
    assert await found(theirs, "flood") == [their_flood]
    async with db.workspace_tx(mine):
        assert await _matches("flood") == {my_flood}
    assert await _matches("flood") == {my_flood, their_flood}  # unbound: system work


async def test_the_app_reads_the_word_index_not_every_article(people):
    """Under forced row security `@@` on `articles` is never an index condition: the search
    read every article. Through the function the index finds the candidates."""
    ws, _owner = await people.workspace()
    for i in range(30):
        await save(ws, title=f"Council report {i}", text=GERMAN, language="de")
    flood = await save(ws, title="Flood", text=FLOODS)
    await as_owner("ANALYZE articles")  # unanalysed, 31 rows look as cheap read whole as by key
    scans = "SELECT pg_stat_get_xact_numscans('article_search_vector'::regclass)"

    async with db.workspace_tx(ws) as tx:
        await tx.execute("SET LOCAL enable_seqscan = off")  # planned as for a large table
        before = await tx.fetchval(scans)
        assert await found(ws, "flood") == [flood]
        assert await tx.fetchval(scans) == before + 1
    read = await rows_read_by_index(
        ws, lambda: found(ws, "flood"), "newsdesk_article_matches", "articles", allow=("sort",)
    )
    assert read <= 2  # the candidate (and the page's row), not the 31 articles


async def test_the_index_follows_an_articles_text_and_its_deletion(people):
    ws, _owner = await people.workspace()
    article = await save(ws, title="Flood", text=FLOODS)
    written = "SELECT pg_stat_get_xact_tuples_updated('article_search'::regclass)"

    async with db.workspace_tx(ws) as tx:
        before = await tx.fetchval(written)
        await tx.execute("UPDATE articles SET deleted_at = now() WHERE id = $1", article)
        await tx.execute("UPDATE articles SET title = title, text = text WHERE id = $1", article)
        assert await tx.fetchval(written) == before  # the vector did not change
        await tx.execute("UPDATE articles SET text = 'Drought in the hills' WHERE id = $1", article)
        assert await tx.fetchval(written) == before + 1
    assert await _matches("drought") == {article}
    assert await _matches("bridges") == set()

    async with db.workspace_tx(ws) as tx:
        await tx.execute("DELETE FROM articles WHERE id = $1", article)
    assert await _matches("drought") == set()
    other = await save(ws, title="Drought", text="Drought in the hills")
    async with db.transaction() as tx:  # unbound: a workspace's removal is system work
        await tx.execute("DELETE FROM workspaces WHERE id = $1", ws)
    assert other not in await _matches("drought")


async def _pages_by_date(workspace_id: int, query: str) -> list[list[int]]:
    """Every page of a search newest first and oldest first, three rows a page."""
    pages = []
    for sort in ("newest", "oldest"):
        cursor = ""
        while True:
            params = {"q": query, "sort": sort, "limit": "3", "cursor": cursor}
            page = await queries.library(workspace_id, parse_filter(params))
            pages.append([r.id for r in page.items])
            if not page.next_cursor:
                break
            cursor = page.next_cursor
    return pages


async def test_a_date_order_pages_alike_by_the_index_and_by_walking_the_library(
    people, monkeypatch
):
    """A date order walks the library when the index holds more candidates than a walk reads
    (queries.WALK_ABOVE); either way a page is the same."""
    ws, _owner = await people.workspace()
    for i in range(8):
        await dated(ws, f"Budget {i}", NOW - timedelta(days=i))
        await save(ws, title=f"Council report {i}", text=GERMAN, language="de")

    by_index = await _pages_by_date(ws, "budget")
    monkeypatch.setattr(queries, "WALK_ABOVE", 3)
    walked = await _pages_by_date(ws, "budget")

    assert walked == by_index
    assert len([i for page in by_index for i in page]) == 16  # each of the 8, both ways
