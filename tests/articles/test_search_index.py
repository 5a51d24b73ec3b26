"""The library's word index, read under row security (m0024): `article_search`, kept by
triggers on `articles` and the only place each article's vector is stored (m0026), read only
through functions that keep to the binding (`newsdesk_article_matches`, `_vectors`, `_vector`)."""

from __future__ import annotations

from datetime import timedelta

import pytest

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
    PORTFOLIO,
    RAILWAY,
    dated,
    found,
)
from tests.fixtures import as_owner
from tests.plans import plan_of, rows_read_by_index

FLOODS = "The river flooded the valley roads again; the councils closed three bridges."


async def _matches(query: str) -> set[int]:
    """What the index function answers to the query as every language reads it."""
    rows = await db.fetch(
        "SELECT id FROM newsdesk_article_matches(newsdesk_search_any($1)) AS id", query
    )
    return {r["id"] for r in rows}


# Each live article of the workspace as the search is defined (m0005, m0021): its vector made
# from its columns (the generated column's expression until m0026), the query as its own
# language reads it, the library's rank; no index, no stored vector.
_BY_DEFINITION = f"""
    WITH p AS (SELECT * FROM newsdesk_search_parses($2)),
    sq AS (
      SELECT a.id, a.created_at, least(a.published_at, a.created_at) AS dated,
        newsdesk_search_vector(a.language, a.title, a.byline, a.site_name, a.text) AS vector,
        p.queries[array_position(p.configs, newsdesk_search_config(a.language))] AS query,
        p.exact[array_position(p.configs, newsdesk_search_config(a.language))] AS exact
      FROM articles a, p WHERE a.workspace_id = $1 AND a.deleted_at IS NULL
    )
    SELECT id, created_at, dated, {queries._RANK} AS rank FROM sq WHERE vector @@ query
"""


async def _unindexed(workspace_id: int, query: str) -> set[int]:
    """The articles matching the query by the search's definition, read without the index."""
    return {r["id"] for r in await db.fetch(_BY_DEFINITION, workspace_id, query)}


async def _in_order_by_definition(workspace_id: int, query: str, sort: str) -> list[int]:
    """Every hit of the query by the search's definition, in the order `sort` lists them."""
    rows = await db.fetch(_BY_DEFINITION, workspace_id, query)
    keys = {
        "relevance": lambda r: (-r["rank"], -r["created_at"].timestamp(), -r["id"]),
        "newest": lambda r: (-r["dated"].timestamp(), -r["id"]),
        "oldest": lambda r: (r["dated"].timestamp(), r["id"]),
        "saved": lambda r: (-r["created_at"].timestamp(), -r["id"]),
    }
    return [r["id"] for r in sorted(rows, key=keys[sort])]


async def _every_page(workspace_id: int, query: str, sort: str) -> list[int]:
    """The ids of every page of the library's search, three rows a page, cursor after cursor."""
    ids: list[int] = []
    cursor = ""
    while True:
        params = {"q": query, "sort": sort, "limit": "3", "cursor": cursor}
        page = await queries.library(workspace_id, parse_filter(params))
        ids += [r.id for r in page.items]
        if not page.next_cursor:
            return ids
        cursor = page.next_cursor


# Words, compounds, phrases, negation, or, a stop word: what each search test asks.
SEARCHES = (
    "Klima",
    "Klimawandel",
    '"Klimawandel trifft"',
    "Bauern Sommer",
    "zurich",
    "flood",
    '"flooded roads"',
    "roads -bridges",
    "bridges or Häuser",
    "the",
)


async def test_a_search_finds_what_the_stored_vectors_hold(people):
    ws, _owner = await people.workspace()
    await save(ws, title="Klimawandel und Landwirtschaft", text=CLIMATE_CHANGE, language="de")
    await save(ws, title="Bericht aus den Alpen", text=CLIMATE, language="de")
    await save(ws, title="Neue Häuser", text=GERMAN, language="de")
    await save(ws, title="Flooded roads", text=ENGLISH, language="en")
    await save(ws, title="Bridges closed", text=FLOODS, language="en")

    for query in (*SEARCHES, "haus"):
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
        # Twice: counting the candidates (best match ranks at most RANKED_AT_MOST), then
        # finding them.
        assert await tx.fetchval(scans) == before + 2
    read = await rows_read_by_index(
        ws, lambda: found(ws, "flood"), "newsdesk_search_parses", "articles", allow=("sort",)
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


KLIMADATEN = (
    "Die Klimadaten des Sommers zeigen, dass der Klimawandel die Alpen schneller erwärmt; "
    "das Klima der Täler ändert sich, sagen die Forscher, und die Bauern spüren es."
)


async def _seeded_library(people) -> int:
    """A library of German and English articles on shared words - compounds, phrases, title
    hits, equal dates, a trashed one - beside another workspace holding the same words."""
    ws, _owner = await people.workspace()
    theirs, _ = await people.workspace("Theirs")
    day = timedelta(days=1)
    for title, text, language, published in (
        ("Klimawandel und Landwirtschaft", CLIMATE_CHANGE, "de", NOW - 3 * day),
        ("Bericht aus den Alpen", CLIMATE, "de", NOW - 3 * day),
        ("Klima", KLIMADATEN, "de", NOW - 10 * day),
        ("Klimadaten", CLIMATE, "de", None),
        ("Neue Häuser in Zürich", GERMAN, "de", NOW - 2 * day),
        ("Die Bahn", RAILWAY, "de", NOW - 40 * day),
        ("Flooded roads", ENGLISH, "en", NOW - 3 * day),
        ("Bridges closed", FLOODS, "en", NOW - 5 * day),
        ("The valley", FLOODS + " " + ENGLISH, "en", NOW + 30 * day),
        ("Funds", PORTFOLIO, "en", NOW - 1 * day),
        ("Klima talks in Zurich", ENGLISH, "en", NOW - 7 * day),
    ):
        await save(ws, title=title, text=text, language=language, published_at=published)
        await save(theirs, title=title, text=text, language=language, published_at=published)
    trashed = await save(ws, title="Klimawandel", text=CLIMATE_CHANGE, language="de")
    async with db.workspace_tx(ws) as tx:
        await tx.execute("UPDATE articles SET deleted_at = now() WHERE id = $1", trashed)
    return ws


@pytest.mark.parametrize("sort", ["relevance", "newest", "oldest", "saved"])
async def test_every_page_lists_the_hits_as_the_search_defines_them(people, monkeypatch, sort):
    """The vectors are read through functions, by id, in another table (m0026): the pages
    (their order, ranks included, and where each ends) are what the search's definition
    gives - by the word index, and by walking the library for a date order."""
    ws = await _seeded_library(people)

    for query in SEARCHES:
        expected = await _in_order_by_definition(ws, query, sort)
        assert await _every_page(ws, query, sort) == expected, query
        if sort != "relevance":
            monkeypatch.setattr(queries, "WALK_ABOVE", 0)  # every date order walks
            assert await _every_page(ws, query, sort) == expected, (query, "walked")
            monkeypatch.setattr(queries, "WALK_ABOVE", 2000)
    assert await _every_page(ws, "Klima", sort)  # the library has hits to order


async def test_an_article_vector_is_made_once_from_its_columns_and_follows_them(people):
    ws, _owner = await people.workspace()
    article = await save(ws, title="Neue Häuser in Zürich", text=GERMAN, language="de")
    same = """SELECT v.vector = newsdesk_search_vector(a.language, a.title, a.byline,
                                                      a.site_name, a.text)
              FROM articles a JOIN newsdesk_article_vectors(ARRAY[a.id]) v ON v.article_id = a.id
              WHERE a.id = $1"""
    assert await db.fetchval(same, article) is True
    assert await found(ws, "haus") == [article]  # German stems, accents folded

    async with db.workspace_tx(ws) as tx:  # read as English: no stems of German words
        await tx.execute("UPDATE articles SET language = 'en' WHERE id = $1", article)
    assert await db.fetchval(same, article) is True
    assert await found(ws, "haus") == []
    assert "search" not in {
        r["column_name"]
        for r in await db.fetch(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'articles'"
        )
    }


async def test_the_vector_functions_answer_only_the_bound_workspaces_articles(people):
    """They run as the tables' owner - in the tests a superuser, whom no policy holds."""
    mine, _ = await people.workspace("Mine")
    theirs, _ = await people.workspace("Theirs")
    my_flood = await save(mine, title="Flood in the valley", text=FLOODS)
    their_flood = await save(theirs, title="Flood in the city", text=FLOODS)
    both = [my_flood, their_flood]
    vectors = "SELECT article_id FROM newsdesk_article_vectors($1::bigint[])"
    one = "SELECT newsdesk_article_vector($1) IS NOT NULL"

    async with db.workspace_tx(mine) as tx:
        assert {r["article_id"] for r in await tx.fetch(vectors, both)} == {my_flood}
        assert (await tx.fetchval(one, my_flood), await tx.fetchval(one, their_flood)) == (
            True,
            False,
        )
    async with db.workspace_tx(theirs) as tx:
        assert {r["article_id"] for r in await tx.fetch(vectors, both)} == {their_flood}
    # Unbound: system work, as the policy.
    assert {r["article_id"] for r in await db.fetch(vectors, both)} == set(both)


def _function_scans(plan: dict, name: str) -> list[dict]:
    found = [plan] if plan.get("Function Name") == name else []
    for child in plan.get("Plans", []):
        found += _function_scans(child, name)
    return found


async def test_ranking_reads_the_candidates_vectors_in_one_call(people):
    """Ranking needs every candidate's vector: one call answers them all, not one call (and
    its set-up as the owner) per candidate."""
    ws, _owner = await people.workspace()
    for i in range(30):
        await save(ws, title=f"Flood report {i}", text=FLOODS)

    plan = await plan_of(ws, lambda: found(ws, "flood"), "newsdesk_search_parses", analyze=True)

    [scan] = _function_scans(plan, "newsdesk_article_vectors")
    assert (scan["Actual Loops"], scan["Actual Rows"]) == (1, 30)
    assert "newsdesk_article_vector(" not in str(plan)
