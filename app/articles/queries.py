"""Reads of the library; workspace id first; typed views out.

Search is PostgreSQL full-text search on each article's vector (in the
article's language's configuration, accents folded; title weighted A, text B,
byline and site C; migration m0005; stored in `article_search` and read through
functions that keep to the workspace, m0024 and m0026), parsed with websearch_to_tsquery
(words, "phrases", -not, or) in that same configuration - in German and the other
compounding languages a word also finds the compounds it begins (m0021) - and ranked
with ts_rank_cd, exact matches first, then title hits - the newest 2,000 results when the
word index holds more candidates (RANKED_AT_MOST). Pages are keyset-paginated on (sort time,
id) for the orders by date, (rank, created_at, id) for best match - stable while articles
arrive.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asyncpg import Record

from app.analysis.text import WORDS_PER_MINUTE
from app.analysis.types import AnalysisInput, Section
from app.articles import listing
from app.articles.listing import Cursor
from app.articles.types import (
    AnalysisState,
    ArticleRow,
    ArticleView,
    ArxivView,
    LibraryFilter,
    LibraryPage,
    SectionView,
    Sort,
    Source,
)
from app.articles.urls import InvalidUrl, url_hash
from app.core import db
from app.safe_content import Document, InvalidContent, from_json, from_text, http_url

log = logging.getLogger(__name__)

# The analysis state a person sees, in the list, its filter and the reader
# alike: an attempt that failed and waits for its retry is "failed" (the
# reader shows its reason), not "waiting" - the row is `pending` with an error.
_SHOWN_STATE = """CASE WHEN an.status = 'pending' AND an.error <> '' THEN 'failed'
    ELSE coalesce(an.status, 'pending') END"""
_ROW_COLUMNS = f"""
    a.id, a.url, a.title, a.site_name, a.byline, a.language, a.source, a.topic_id,
    coalesce(t.name, '') AS topic_name, a.published_at, a.created_at, a.deleted_at,
    a.word_count, a.warnings, {_SHOWN_STATE} AS analysis_status
"""
_STATE_JOIN = "LEFT JOIN analyses an ON an.article_id = a.id AND an.workspace_id = a.workspace_id"
# Topic names are read with the articles they label: one join instead of a
# round trip per row (the topics domain still owns every write to them).
_ROW_JOINS = f"""
    {_STATE_JOIN}
    LEFT JOIN topics t ON t.id = a.topic_id AND t.workspace_id = a.workspace_id
"""
# The query as typed (no compound prefixes, m0021) ranks above what only a compound holds
# ("Klima" above "Klimawandel"); then a hit in the title (weight A) above any number of hits
# in the text; within each group cover density decides (ts_rank_cd, scaled into [0, 1)).
_RANK = """(ts_rank_cd(sq.vector, sq.query, 32)
    + CASE WHEN sq.vector @@ sq.exact THEN 2 ELSE 0 END
    + CASE WHEN ts_filter(sq.vector, '{a}') @@ sq.query THEN 1 ELSE 0 END)::real"""
_STATE_SQL = {
    AnalysisState.PENDING: f"{_SHOWN_STATE} IN ('pending', 'running')",
    AnalysisState.COMPLETED: "an.status = 'completed'",
    AnalysisState.FAILED: f"{_SHOWN_STATE} = 'failed'",
    AnalysisState.SKIPPED: "an.status = 'skipped'",
}


class _Where:
    """WHERE clauses with numbered parameters, built in order."""

    def __init__(self, workspace_id: int) -> None:
        self.args: list[Any] = [workspace_id]
        self.clauses = ["a.workspace_id = $1"]

    def param(self, value: Any) -> str:
        self.args.append(value)
        return f"${len(self.args)}"

    def add(self, clause: str) -> None:
        self.clauses.append(clause)

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses)


def _filters(workspace_id: int, f: LibraryFilter) -> _Where:
    where = _Where(workspace_id)
    where.add("a.deleted_at IS NOT NULL" if f.deleted else "a.deleted_at IS NULL")
    if f.topic_id is not None:
        where.add(f"a.topic_id = {where.param(f.topic_id)}")
    if f.source is not None:
        where.add(f"a.source = {where.param(f.source.value)}")
    if f.state is not None:
        where.add(_STATE_SQL[f.state])
    return where


@dataclass(frozen=True)
class _Span:
    """Where a page starts (after `cursor`, then `skip` rows), the last place it may reach,
    and the only articles it may hold (None: any)."""

    cursor: Cursor | None
    skip: int = 0
    until: Cursor | None = None
    only: list[int] | None = None

    @property
    def floor(self) -> tuple[datetime, int] | None:
        """Where the first page's ranked results ended, if they were bounded (best match)."""
        for place in (self.cursor, self.until):
            if place is not None:
                return place.floor
        return None


async def library(
    workspace_id: int,
    f: LibraryFilter,
    *,
    skip: int = 0,
    until: Cursor | None = None,
    only: list[int] | None = None,
) -> LibraryPage:
    """One page of the library (or the trash) in the filter's order.

    `skip` rows after the cursor are left out and no row after `until` is read: a client's
    rows below its first page, read again; `only` keeps those of these articles that are
    in the filter (the library's live view).
    """
    span = _Span(listing.decode_cursor(f.cursor) if f.cursor else None, skip, until, only)
    rows = await (_search(workspace_id, f, span) if f.q else _recent(workspace_id, f, span))
    more = len(rows) > f.limit
    rows = rows[: f.limit]
    items = [_row(r) for r in rows]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        rank = last["rank"] if f.order == Sort.RELEVANCE else None
        floor = (last["floor_at"], last["floor_id"]) if last["floor_at"] is not None else None
        next_cursor = listing.encode_cursor(
            Cursor(f.order, rank, last["sort_at"], last["id"], floor)
        )
    empty = not items and not await db.fetchval(
        "SELECT EXISTS (SELECT 1 FROM articles WHERE workspace_id = $1 AND deleted_at IS NULL)",
        workspace_id,
    )
    return LibraryPage(
        items=items,
        next_cursor=next_cursor,
        library_is_empty=empty,
        ranked_newest=rows[0]["ranked"] if rows else None,
    )


def _sort_at(order: Sort) -> str:
    """The time a row sorts by (`articles_dated` and `articles_recent` index them).

    An article's own date is when it was published, else when it was saved;
    `least` also keeps a date in the future (a broken feed) from pinning it on top.
    """
    return "a.created_at" if order in (Sort.SAVED, Sort.RELEVANCE) else _DATED


_DATED = "least(a.published_at, a.created_at)"
# A page's columns for best match of a search with more results than it ranks (none here).
_NOT_RANKED = "NULL::int AS ranked, NULL::timestamptz AS floor_at, NULL::bigint AS floor_id"
_HIT_COLUMNS = ("rank", "sort_at", "id")  # a search's page is ordered on its CTE's columns


def _after(order: Sort, cursor: Cursor | None, where: _Where, cols: tuple[str, str, str]) -> str:
    """The keyset condition on `cols` (rank, sort time, id): rows after `cursor` in `order`."""
    if cursor is None:
        return "TRUE"
    rank_col, at_col, id_col = cols
    at, after = where.param(cursor.at), where.param(cursor.id)
    if order == Sort.RELEVANCE:
        rank = where.param(cursor.rank)
        return f"({rank_col}, {at_col}, {id_col}) < ({rank}::real, {at}, {after})"
    op = ">" if order == Sort.OLDEST else "<"
    return f"({at_col}, {id_col}) {op} ({at}, {after})"


def _within(order: Sort, span: _Span, where: _Where, cols: tuple[str, str, str]) -> str:
    """The keyset conditions on `cols` for the rows after the span's cursor, up to its end."""
    clauses = [_after(order, span.cursor, where, cols)]
    if span.until is not None:
        clauses.append(f"NOT ({_after(order, span.until, where, cols)})")
    if span.only is not None:
        clauses.append(f"{cols[2]} = ANY({where.param(span.only)}::bigint[])")
    return " AND ".join(clauses)


async def written_since(
    workspace_id: int, since: datetime | None, look_back: timedelta
) -> tuple[datetime, dict[int, datetime]]:
    """The database's time now, and the articles written since `since` (else in the last
    `look_back`) with when: the article itself or its analysis (m0018 indexes both)."""
    r = await db.fetchrow(
        """WITH written AS (
             SELECT id, updated_at AS at FROM articles
             WHERE workspace_id = $1 AND updated_at > coalesce($2, now() - $3::interval)
             UNION ALL
             SELECT article_id, updated_at FROM analyses
             WHERE workspace_id = $1 AND updated_at > coalesce($2, now() - $3::interval)
           ), last AS (SELECT id, max(at) AS at FROM written GROUP BY id)
           SELECT now(), array_agg(id) AS ids, array_agg(at) AS ats FROM last""",
        workspace_id,
        since,
        look_back,
    )
    assert r is not None
    return r["now"], dict(zip(r["ids"] or [], r["ats"] or [], strict=True))


def _order_by(order: Sort, cols: tuple[str, str, str]) -> str:
    rank_col, at_col, id_col = cols
    if order == Sort.RELEVANCE:
        return f"{rank_col} DESC, {at_col} DESC, {id_col} DESC"
    way = "ASC" if order == Sort.OLDEST else "DESC"
    return f"{at_col} {way}, {id_col} {way}"


async def _recent(workspace_id: int, f: LibraryFilter, span: _Span) -> list[Record]:
    where = _filters(workspace_id, f)
    cols = ("NULL", _sort_at(f.order), "a.id")  # written out, so the indexes apply
    where.add(_within(f.order, span, where, cols))
    limit = where.param(f.limit + 1)
    skip = where.param(span.skip)
    return await db.fetch(
        f"""
        SELECT {_ROW_COLUMNS}, NULL::real AS rank, {cols[1]} AS sort_at, {_NOT_RANKED},
          left(a.text, 600) AS opening, NULL AS headline
        FROM articles a {_ROW_JOINS}
        WHERE {where.sql}
        ORDER BY {_order_by(f.order, cols)}
        LIMIT {limit} OFFSET {skip}
        """,
        *where.args,
    )


# A date order walks the library instead of the word index above this many candidates:
# a page of a common word is found within the first few hundred articles, while sorting
# every candidate by date costs ~10 us each (44,000 candidates 0.5 s, the walk 60 ms).
WALK_ABOVE = 2000
# Best match ranks at most this many results: the newest, as "Newest first" lists them
# (each rank reads and decompresses the article's stored vector: a word in most of 50,000
# articles took 7 s on a loaded machine, 0.75 s now). With more candidates than this in the
# word index, the library is read from its newest article and each one matched, until this
# many results are found or RANK_WALK_AT_MOST articles were read (a phrase, or a word that
# other languages' stems make common, finds few results among many candidates: reading on
# to 2,000 of them read the whole library, 6-7 s).
RANKED_AT_MOST = 2000
RANK_WALK_AT_MOST = 6000
RANK_WALK_STEPS = 3  # each a part of the statement: a common word is ranked after the first


async def _candidates_above(workspace_id: int, q: str, bound: int) -> bool:
    """Whether the word index holds more than `bound` candidates for the query's words
    (counted up to there: ~35 ms for a word in most articles, ~1 ms for a rare one).

    A phrase counts as its words: the index answers a phrase only after reading each
    candidate's vector for the words' positions (a recheck: 1.6 s to count 2,000 of them,
    the words alone 0.1 s), and the words' count is as good to choose how to read."""
    async with db.workspace_tx(workspace_id) as tx:
        return bool(
            await tx.fetchval(
                f"""SELECT count(*) > $2 FROM (
                      SELECT newsdesk_article_matches({_WORDS_OF_PHRASES.format(q="$1")})
                      LIMIT $2 + 1) AS c""",
                q,
                bound,
            )
        )


# The query as every language reads it, each phrase's words followed by each other (`<->`,
# `<N>`) read as words anywhere (`&`): a superset that the index answers alone.
_WORDS_OF_PHRASES = (
    "regexp_replace(newsdesk_search_any({q})::text, '<(-|[0-9]+)>', '&', 'g')::tsquery"
)


async def _search(workspace_id: int, f: LibraryFilter, span: _Span) -> list[Record]:
    where = _filters(workspace_id, f)
    query = where.param(f.q)
    if f.order == Sort.RELEVANCE:
        # A floor: the first page found more candidates than are ranked.
        walk = span.floor is not None or await _candidates_above(workspace_id, f.q, RANKED_AT_MOST)
        hits = (
            _newest_ranked(where, span, _STATE_JOIN if f.state else "")
            if walk
            else _all_ranked(where, query)
        )
    else:
        walk = await _candidates_above(workspace_id, f.q, WALK_ABOVE)
        hits = _by_date(f.order, where, query, by_index=not walk)
    page_where = _within(f.order, span, where, _HIT_COLUMNS)
    limit = where.param(f.limit + 1)
    skip = where.param(span.skip)
    markers = where.param(listing.HIT_START + listing.HIT_END)
    options = where.param(listing.HEADLINE_OPTIONS)
    # A date order matches its candidates in the page's order, only until the page is full
    # (the candidates were sorted by their dates alone, `_by_date`).
    matched_late = f.order != Sort.RELEVANCE and not walk
    if matched_late:
        page_where += " AND newsdesk_article_vector(id) @@ query"
    # The index finds candidates with the query as any language reads it (made once, in
    # its own SELECT: as a condition it was made again for every article a scan looked at);
    # each is then matched with the query as its own language reads it (migration m0005),
    # so a German article is found by its German stems whatever the UI language.
    # Only the page's rows get their columns, joins and text (ORDER BY ... LIMIT keeps
    # whole rows in its sort otherwise). ts_headline is costly, so it runs only on the
    # page's rows; it reads the plain text (never HTML), cleared of the two marker
    # characters first.
    return await db.fetch(
        f"""
        WITH parsed AS MATERIALIZED (SELECT * FROM newsdesk_search_parses({query})),
        {hits}, page AS (
          SELECT * FROM hits WHERE {page_where}
          ORDER BY {_order_by(f.order, _HIT_COLUMNS)}
          LIMIT {limit} OFFSET {skip}
        )
        SELECT {_ROW_COLUMNS}, page.rank, page.sort_at, page.ranked, page.floor_at,
          page.floor_id, NULL AS opening,
          ts_headline(page.config, translate(left(a.text, 200000), {markers}, ''),
                      page.query, {options}) AS headline
        FROM page
        JOIN articles a ON a.id = page.id AND a.workspace_id = $1
        {_ROW_JOINS}
        ORDER BY {_order_by(f.order, ("page.rank", "page.sort_at", "page.id"))}
        """,
        *where.args,
    )


def _matched(vector: str) -> str:
    """The columns a search reads of each article it looks at (`sq`): `vector` as `vector`,
    the configuration of the article's language, and the query as that configuration reads
    it, with compound prefixes (`query`) and as typed (`exact`) - parsed once per
    configuration (`parsed`), not once per article."""
    return f"""CROSS JOIN LATERAL (
            SELECT {vector} AS vector,
              newsdesk_search_config(a.language) AS config,
              (SELECT queries[array_position(configs, newsdesk_search_config(a.language))]
               FROM parsed) AS query,
              (SELECT exact[array_position(configs, newsdesk_search_config(a.language))]
               FROM parsed) AS exact
            OFFSET 0  -- a subquery of its own: evaluated once per article, its values kept
          ) AS sq"""


# The vectors are in `article_search` only, read through functions that keep to the binding
# (m0024, m0026): the word index's candidates, and each one's vector by id.
_CANDIDATES = "ARRAY(SELECT newsdesk_article_matches(newsdesk_search_any({query})))"
# To rank, a vector is decompressed once: each of its four uses would do it again (~9 us a
# use); its copy (`|| ''`) is in memory.
_COPY = "{vector} || ''::tsvector"


def _all_ranked(where: _Where, query: str) -> str:
    """Every candidate ranked: their vectors in one call (a call per article costs ~13 us
    more: its set-up as the owner)."""
    candidates = _CANDIDATES.format(query=query)
    return f"""hits AS (
          SELECT a.id, {_RANK} AS rank, a.created_at AS sort_at, sq.config, sq.query,
            {_NOT_RANKED}
          FROM newsdesk_article_vectors({candidates}) AS v
          JOIN articles a ON a.id = v.article_id
          {_matched(_COPY.format(vector="v.vector"))}
          {_ROW_JOINS}
          WHERE {where.sql} AND sq.vector @@ sq.query
        )"""


def _newest_ranked(where: _Where, span: _Span, joins: str) -> str:
    """The newest RANKED_AT_MOST results ranked: the library read in "Newest first" order
    (its index), in RANK_WALK_STEPS steps, each step's vectors in one call and each
    article matched as its own language reads the query, until that many are found or
    RANK_WALK_AT_MOST articles were read; on later pages down to the first page's oldest
    ranked result (`span.floor`). Each row says, when there may be older results than those
    ranked, how many are ranked (`ranked`) and where they end (`floor_at`, `floor_id`: the
    next cursor keeps it)."""
    floor = span.floor
    if floor is not None:  # the first page's results (and what arrived since), no older one
        at, after = where.param(floor[0]), where.param(floor[1])
        where.add(f"({_DATED}, a.id) >= ({at}, {after})")
    # Caps for a floor that came from a client: arrivals since the first page fit in twice.
    scale = 1 if floor is None else 2
    most, step = RANKED_AT_MOST * scale, -(-RANK_WALK_AT_MOST * scale // RANK_WALK_STEPS)
    steps = RANK_WALK_STEPS
    parts = []
    for k in range(steps):
        found_before = " + ".join(f"(SELECT count(*) FROM found{j})" for j in range(k))
        # Each step is read only while fewer were found than are ranked (a one-time test),
        # from where the step before ended (its last article, by the index).
        going_on = (
            f"({found_before}) < {most} AND ({_DATED}, a.id) < "
            f"(SELECT dated, id FROM read{k - 1} ORDER BY dated, id LIMIT 1)"
            if k
            else "TRUE"
        )
        parts.append(
            f"""read{k} AS MATERIALIZED (
          SELECT a.id, {_DATED} AS dated FROM articles a {joins}
          WHERE {where.sql} AND {going_on}
          ORDER BY {_DATED} DESC, a.id DESC LIMIT {step}
        ), found{k} AS MATERIALIZED (
          -- matched on the stored vector; only a result's is copied, to be ranked
          SELECT m.id, m.created_at, m.dated, m.config, m.query, {_RANK} AS rank
          FROM (
            SELECT a.id, a.created_at, r.dated, sq.config, sq.query, sq.exact, sq.vector AS stored
            FROM newsdesk_article_vectors(ARRAY(SELECT id FROM read{k})) AS v
            JOIN read{k} r ON r.id = v.article_id
            JOIN articles a ON a.id = v.article_id AND a.workspace_id = $1
            {_matched("v.vector")}
            WHERE sq.vector @@ sq.query
          ) AS m
          CROSS JOIN LATERAL (
            SELECT {_COPY.format(vector="m.stored")} AS vector, m.query, m.exact OFFSET 0
          ) AS sq
        )"""
        )
    found = " UNION ALL ".join(f"SELECT * FROM found{k}" for k in range(steps))
    return f"""{", ".join(parts)}, ranked AS MATERIALIZED (
          SELECT * FROM ({found}) AS f ORDER BY dated DESC, id DESC LIMIT {most}
        ), bounded AS (
          -- Older results, maybe: as many found as are ranked (the word index holds more
          -- candidates), or the last step was read in full.
          SELECT count(*) = {most} OR (SELECT count(*) FROM read{steps - 1}) = {step}
            OR {"TRUE" if floor else "FALSE"} AS bounded, count(*)::int AS ranked
          FROM ranked
        ), oldest AS (
          SELECT dated, id FROM ranked ORDER BY dated, id LIMIT 1
        ), hits AS (
          SELECT r.id, r.rank, r.created_at AS sort_at, r.config, r.query,
            CASE WHEN b.bounded THEN b.ranked END AS ranked,
            CASE WHEN b.bounded THEN o.dated END AS floor_at,
            CASE WHEN b.bounded THEN o.id END AS floor_id
          FROM ranked r, bounded b, oldest o
        )"""


def _by_date(order: Sort, where: _Where, query: str, *, by_index: bool) -> str:
    """A date order's hits, no rank. By the index, the candidates are sorted first (their
    dates only) and matched in that order until the page is full (the page's condition): a
    common word's thousands of candidates would each have their stored vector read and
    matched otherwise (~150 us each). Walking (above WALK_ABOVE candidates), the library
    itself is read in date order, each article matched as its own language reads the query,
    each vector read only when its turn comes."""
    if by_index:  # the candidates' ids are one array made once (an init plan)
        where.add(f"a.id = ANY({_CANDIDATES.format(query=query)})")
        vector, in_order = (
            "NULL::tsvector",
            f"ORDER BY {_order_by(order, ('NULL', 'sort_at', 'a.id'))} OFFSET 0",
        )
    else:
        where.add("sq.vector @@ sq.query")
        vector, in_order = "newsdesk_article_vector(a.id)", ""
    return f"""hits AS (
          SELECT a.id, NULL::real AS rank, {_sort_at(order)} AS sort_at, sq.config, sq.query,
            {_NOT_RANKED}
          FROM articles a {_matched(vector)}
          {_ROW_JOINS}
          WHERE {where.sql}
          {in_order}
        )"""


def _row(r: Record) -> ArticleRow:
    snippet = (
        listing.snippet_document(r["headline"])
        if r["headline"] is not None
        else listing.opening_document(r["opening"] or "")
    )
    return ArticleRow(
        id=r["id"],
        url=r["url"],
        title=r["title"],
        site_name=r["site_name"],
        byline=r["byline"],
        source=Source(r["source"]),
        topic_id=r["topic_id"],
        topic_name=r["topic_name"],
        published_at=r["published_at"],
        created_at=r["created_at"],
        deleted_at=r["deleted_at"],
        word_count=r["word_count"],
        warnings=tuple(r["warnings"] or ()),
        analysis_status=r["analysis_status"],
        snippet=snippet,
        language=r["language"] or "",
    )


async def article(workspace_id: int, article_id: int) -> ArticleView | None:
    """One article, in the library or in the trash; None if the workspace has no such one."""
    r = await db.fetchrow(
        """
        SELECT a.id, a.url, a.source, a.title, a.byline, a.site_name, a.language,
          a.published_at, a.created_at, a.deleted_at, a.topic_id, coalesce(t.name, '') AS topic_name,
          a.content, a.text, a.word_count, a.lead_image, a.metadata, a.warnings,
          m.id AS arxiv_row, m.arxiv_id, m.authors, m.pdf_available, m.pdf_url, m.sections
        FROM articles a
        LEFT JOIN topics t ON t.id = a.topic_id AND t.workspace_id = a.workspace_id
        LEFT JOIN arxiv_metadata m ON m.article_id = a.id AND m.workspace_id = a.workspace_id
        WHERE a.workspace_id = $1 AND a.id = $2
        """,
        workspace_id,
        article_id,
    )
    if r is None:
        return None
    return ArticleView(
        id=r["id"],
        url=r["url"],
        source=Source(r["source"]),
        title=r["title"],
        byline=r["byline"],
        site_name=r["site_name"],
        language=r["language"],
        published_at=r["published_at"],
        created_at=r["created_at"],
        deleted_at=r["deleted_at"],
        topic_id=r["topic_id"],
        topic_name=r["topic_name"],
        content=_document(r["content"], r["text"], r["id"]),
        text=r["text"],
        word_count=r["word_count"],
        reading_minutes=max(1, -(-r["word_count"] // WORDS_PER_MINUTE)),
        lead_image=r["lead_image"],
        metadata=_json(r["metadata"]) or {},
        warnings=tuple(r["warnings"] or ()),
        arxiv=_arxiv(r) if r["arxiv_row"] is not None else None,
    )


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _document(stored: Any, text: str, article_id: int) -> Document:
    try:
        return (
            from_json(stored) if isinstance(stored, str | bytes) else from_json(json.dumps(stored))
        )
    except InvalidContent as error:
        # A tree this build cannot read still has its plain text to show.
        log.warning("article %s: stored content unreadable (%s)", article_id, error)
        return from_text(text, autolink=False)


def _sections(value: Any) -> tuple[Section, ...]:
    out = []
    for item in _json(value) or ():
        if isinstance(item, dict):
            out.append(Section(str(item.get("heading", "")), str(item.get("text", ""))))
    return tuple(out)


def _arxiv(r: Record) -> ArxivView:
    return ArxivView(
        arxiv_id=r["arxiv_id"],
        authors=tuple(str(a) for a in _json(r["authors"]) or ()),
        pdf_available=r["pdf_available"],
        pdf_url=http_url(r["pdf_url"]) or "" if r["pdf_url"] else "",
        sections=tuple(
            SectionView(s.heading, from_text(s.text, autolink=False))
            for s in _sections(r["sections"])
        ),
    )


async def analysis_input(workspace_id: int, article_id: int) -> AnalysisInput | None:
    """What the analyser reads: the article with its stored arXiv sections merged in."""
    r = await db.fetchrow(
        """
        SELECT a.title, a.text, a.language, a.warnings, m.sections
        FROM articles a
        LEFT JOIN arxiv_metadata m ON m.article_id = a.id AND m.workspace_id = a.workspace_id
        WHERE a.workspace_id = $1 AND a.id = $2
        """,
        workspace_id,
        article_id,
    )
    if r is None:
        return None
    return AnalysisInput(
        workspace_id=workspace_id,
        article_id=article_id,
        title=r["title"],
        text=r["text"],
        language=r["language"],
        sections=_sections(r["sections"]),
        warnings=tuple(r["warnings"] or ()),
    )


async def article_id_by_url(workspace_id: int, url: str) -> int | None:
    """The article already stored for `url` (normalised), trashed ones included; None if none.
    Once per import item: stateless, its connection goes back without the reset round trip."""
    rows = await db.fetch_stateless(
        "SELECT id FROM articles WHERE workspace_id = $1 AND url_hash = $2",
        workspace_id,
        url_hash(url),
    )
    return rows[0]["id"] if rows else None


async def stored_urls(workspace_id: int, urls: list[str]) -> set[str]:
    """Which of `urls` (as given) are already articles of the workspace, trashed ones included.

    Compared by the normalised URL's hash, the article's identity; a URL the
    library could not take is never stored.
    """
    hashes: dict[str, list[str]] = {}
    for url in urls:
        try:
            hashes.setdefault(url_hash(url), []).append(url)
        except InvalidUrl:
            continue
    if not hashes:
        return set()
    rows = await db.fetch(
        "SELECT url_hash FROM articles WHERE workspace_id = $1 AND url_hash = ANY($2::text[])",
        workspace_id,
        list(hashes),
    )
    return {url for r in rows for url in hashes[r["url_hash"]]}
