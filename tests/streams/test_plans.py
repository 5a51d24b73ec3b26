"""What PostgreSQL does for a poll or a page of the wall does not grow with the posts stored.

A wall keeps 30 days of posts (300,000 on a busy desk): a column's older page, the merged
feed, and every poll's write must touch their page's rows, not the history behind them. The
plans are taken with scans, hashes and sorts of whole tables off (on the tests' small tables
they are cheaper than any index, and would say nothing of a large one), and as prepared statements' generic plans
where the values matter (asyncpg prepares every statement; after five calls PostgreSQL may
plan it once for any values).
"""

from __future__ import annotations

import pytest

from app.core import db
from app.streams import polling, queries, services
from tests.fixtures import as_owner
from tests.plans import rows_read_by_index, rows_written
from tests.streams.conftest import home_column, make_due, sources_of
from tests.streams.statuses import status, statuses_reply

PAGE = 40
HISTORY = 200  # posts stored behind or around the page asked for


@pytest.fixture
async def wall(people, site, statuses) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """A workspace with a home column (platform_feed) and a keyword column; no posts yet."""
    ws, _owner = await people.workspace()
    _connection, home = await home_column(ws)
    keyword = await services.create_column(
        ws,
        {
            "type": "keyword",
            "title": "Floods",
            "spec": {"query": "flood", "platforms": ["mastodon"]},
        },
        actor_user_id=None,
    )
    return ws, home, keyword


async def store(ws: int, column_id: int, count: int, *, days_ago: int) -> None:
    """`count` posts shown in the column, a minute apart, the newest `days_ago` days old."""
    await db.fetch(
        """
        WITH items AS (
          INSERT INTO feed_items (workspace_id, dedup_key, provider, remote_id, created_at_remote,
            content, plain_text)
          SELECT $1, encode(sha256(($2 || ':' || n)::bytea), 'hex'), 'mastodon', $2 || ':' || n,
            now() - make_interval(days => $4, mins => n), '{"type": "doc", "children": []}', 'x'
          FROM generate_series(1, $3) n
          RETURNING id, created_at_remote, dedup_key)
        INSERT INTO feed_item_columns (workspace_id, column_id, item_id, created_at_remote,
          dedup_key)
        SELECT $1, $5, id, created_at_remote, dedup_key FROM items
        """,
        ws, f"c{column_id}d{days_ago}", count, days_ago, column_id,
    )  # fmt: skip
    # The planner chooses by the tables' statistics: those of an earlier test's few rows
    # (TRUNCATE keeps them) would make any plan look as cheap as the index.
    await as_owner("ANALYZE feed_items, feed_item_columns")


async def test_an_older_page_of_a_column_reads_that_page_only(wall):
    """ "Load older" deep in a column: `$cursor IS NULL OR ...` left a generic plan (under row
    security) no index range, so it read the column from its newest post down to the cursor."""
    ws, _home, keyword = wall
    await store(ws, keyword, HISTORY, days_ago=0)
    first = await queries.column_items(ws, keyword, None, PAGE)
    third = await queries.column_items(
        ws, keyword, (await queries.column_items(ws, keyword, first.next_cursor, PAGE)).next_cursor
    )
    assert third.next_cursor is not None
    older = lambda: queries.column_items(ws, keyword, third.next_cursor, PAGE)  # noqa: E731
    for generic in (False, True):
        read = await rows_read_by_index(
            ws, older, "feed_item_columns", "feed_item_columns", generic=generic
        )
        assert read <= PAGE + 1


async def test_the_merged_feed_reads_a_page_of_each_home_column(wall):
    """The merged feed filtered the workspace's posts by "shown in a home column": it read
    every newer keyword post first (behind a cursor, the whole history)."""
    ws, home, keyword = wall
    await store(ws, home, PAGE * 2, days_ago=5)
    await store(ws, keyword, HISTORY, days_ago=0)
    first = await queries.merged_items(ws, None, PAGE)
    assert len(first.items) == PAGE
    assert first.next_cursor is not None
    for cursor in (None, first.next_cursor):
        merged = lambda c=cursor: queries.merged_items(ws, c, PAGE)  # noqa: E731
        for generic in (False, True):
            assert (
                await rows_read_by_index(ws, merged, "DISTINCT", "feed_items", generic=generic)
                <= PAGE + 1
            )
            read = await rows_read_by_index(
                ws, merged, "DISTINCT", "feed_item_columns", generic=generic
            )
            assert read <= PAGE + 1  # one home column: its page


async def test_the_merged_feed_lists_a_post_of_two_home_columns_once(wall, site):
    ws, home, _keyword = wall
    _other, second = await home_column(ws, "desk2", secret="tok-2", title="Home 2")
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(1), status(2), status(3)])
    for column in (home, second):
        [source] = await sources_of(column)
        await polling.poll_source(ws, source, jitter=0)
    page = await queries.merged_items(ws, None, 2)
    rest = await queries.merged_items(ws, page.next_cursor, 2)
    assert [i.remote_id for i in page.items + rest.items] == ["1001", "1002", "1003"]
    assert rest.next_cursor is None


@pytest.mark.parametrize("table", ["feed_items", "stream_sources"])
async def test_a_poll_writes_the_posts_it_sees_again_and_its_source_in_place(wall, site, table):
    """Every poll sees most of its page again and sets its source's next poll: with an index
    on `fetched_at` or `next_poll_at` each of those writes was a new row version with an
    entry in every index (a post's words in the search index too), and a dead one behind."""
    ws, home, _keyword = wall
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(n) for n in range(1, 6)])
    [source] = await sources_of(home)
    await polling.poll_source(ws, source, jitter=0)
    await make_due(source)
    again = lambda: polling.poll_source(ws, source, jitter=0)  # noqa: E731
    assert await rows_written(ws, table, again) == {"in place"}


async def _word_index_writes(ws: int, call) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Rows `call` inserted into and updated in the wall's word index (m0025)."""
    counts = (
        "SELECT pg_stat_get_xact_tuples_inserted('feed_item_search'::regclass),"
        " pg_stat_get_xact_tuples_updated('feed_item_search'::regclass)"
    )
    async with db.workspace_tx(ws) as tx:
        inserted_before, updated_before = await tx.fetchrow(counts)
        await call()
        inserted, updated = await tx.fetchrow(counts)
    return inserted - inserted_before, updated - updated_before


async def test_a_poll_indexes_the_words_of_its_new_posts_only(wall, site):
    """The word index is written for a post's text: each new post once, the posts a poll
    sees again not at all (their own write stays in place, above)."""
    ws, home, _keyword = wall
    [source] = await sources_of(home)
    poll = lambda: polling.poll_source(ws, source, jitter=0)  # noqa: E731
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(n) for n in range(1, 6)])
    assert await _word_index_writes(ws, poll) == (5, 0)
    await make_due(source)
    site.routes["/api/v1/timelines/home"] = statuses_reply([status(n) for n in range(1, 7)])
    assert await _word_index_writes(ws, poll) == (1, 0)
