"""The library list's pure parts: its filter, its keyset cursor, its snippets.

Snippets are built from the article's plain text, never from HTML:
PostgreSQL's ts_headline marks hits with two private-use characters (which
the query first removes from the text), and `snippet_document` turns the
marked text into a rich-text tree - hits as Strong nodes - that only the
safe_content renderer writes out. No markup from the database reaches a page.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TypeVar

from app.articles.types import AnalysisState, LibraryFilter, Sort, Source
from app.core.i18n import _, format_number
from app.safe_content import Document, Inline, Paragraph, Strong, Text, one_line

HIT_START = "\ue000"  # private-use: cannot come from the text (the query removes them)
HIT_END = "\ue001"
HEADLINE_OPTIONS = (
    f"StartSel={HIT_START}, StopSel={HIT_END}, MaxWords=32, MinWords=12, ShortWord=2, "
    'MaxFragments=2, FragmentDelimiter=" … "'
)
OPENING_CHARS = 260
MAX_QUERY = 300
MAX_LIMIT = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
E = TypeVar("E", bound=StrEnum)


class FilterError(ValueError):
    """A filter value the library cannot use; `field` names the form field."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts: after this (rank, at, id) in the `sort` order."""

    sort: Sort
    rank: float | None  # set when the list is ordered by search rank
    at: datetime  # the row's sort time: its own date, or when it was saved
    id: int
    # Best match of a search with more results than it ranks: the oldest ranked result
    # (its own date, its id), fixed on the first page so that later pages rank the same
    # results while articles arrive (queries.RANKED_AT_MOST). None: every result is ranked.
    floor: tuple[datetime, int] | None = None


def parse_filter(params: Mapping[str, str], *, default_limit: int = 25) -> LibraryFilter:
    """The library filter from a query string; FilterError names what is wrong."""
    # Control characters (NUL above all, which PostgreSQL refuses) never mean anything in a search.
    q = one_line(params.get("q", ""))
    if len(q) > MAX_QUERY:
        raise FilterError(
            _("Search for at most %(n)s characters.") % {"n": format_number(MAX_QUERY)}, "q"
        )
    sort = _choice(params.get("sort", ""), Sort, "sort", _("Unknown order."))
    cursor = params.get("cursor", "").strip()
    if cursor:
        cursor_in(cursor, LibraryFilter(q=q, sort=sort))
    return LibraryFilter(
        q=q,
        sort=sort,
        topic_id=_topic(params.get("topic", "")),
        source=_choice(params.get("source", ""), Source, "source", _("Unknown source.")),
        state=_choice(
            params.get("state", ""), AnalysisState, "state", _("Unknown analysis state.")
        ),
        deleted=params.get("deleted", "") in {"1", "true", "yes", "on"},
        cursor=cursor,
        limit=_limit(params.get("limit", ""), default_limit),
    )


def _topic(value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit() or len(value) > 18:
        raise FilterError(_("Choose a topic from the list."), "topic")
    return int(value)


def _choice(value: str, kind: type[E], field: str, message: str) -> E | None:
    value = value.strip()
    if not value:
        return None
    try:
        return kind(value)
    except ValueError:
        raise FilterError(message, field) from None


def _limit(value: str, default: int) -> int:
    value = value.strip()
    if not value:
        return default
    if not value.isdigit() or not 1 <= int(value) <= MAX_LIMIT:
        raise FilterError(
            _("The limit must be between 1 and %(n)s.") % {"n": format_number(MAX_LIMIT)}, "limit"
        )
    return int(value)


def cursor_in(value: str, f: LibraryFilter) -> Cursor:
    """`value` decoded, if it is a place in `f`'s order (else FilterError)."""
    decoded = decode_cursor(value)
    if decoded.sort != f.order or (decoded.rank is None) == (f.order == Sort.RELEVANCE):
        raise FilterError(_("This page link belongs to another search."), "cursor")
    return decoded


def _micros(at: datetime) -> int:
    return (at - _EPOCH) // timedelta(microseconds=1)


def encode_cursor(cursor: Cursor) -> str:
    values: list[object] = [cursor.sort.value, cursor.rank, _micros(cursor.at), cursor.id]
    if cursor.floor is not None:
        values += [_micros(cursor.floor[0]), cursor.floor[1]]
    raw = json.dumps(values, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(value: str) -> Cursor:
    bad = FilterError(_("This page link is broken. Start again from the first page."), "cursor")
    if len(value) > 200:
        raise bad
    try:
        raw = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
        # A floor follows only a rank (cursors made before it had none: still good).
        sort_name, rank, micros, article_id, *floor = raw
        sort = Sort(sort_name)
    except (ValueError, TypeError, binascii.Error):
        raise bad from None
    if rank is not None and (
        not isinstance(rank, int | float) or isinstance(rank, bool) or not math.isfinite(rank)
    ):
        raise bad
    if floor and (rank is None or len(floor) != 2):
        raise bad
    places = [(micros, article_id), *([tuple(floor)] if floor else [])]
    if not all(_is_place(at, place_id) for at, place_id in places):
        raise bad
    return Cursor(
        sort,
        None if rank is None else float(rank),
        _EPOCH + timedelta(microseconds=micros),
        article_id,
        (_EPOCH + timedelta(microseconds=floor[0]), floor[1]) if floor else None,
    )


def _is_place(micros: object, article_id: object) -> bool:
    """Whether a cursor's (time, id) could be a row's: integers, an id in range, a time
    Python can hold."""
    if not isinstance(micros, int) or not isinstance(article_id, int):
        return False
    if isinstance(micros, bool) or isinstance(article_id, bool):
        return False
    try:
        _EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        return False
    return 0 < article_id < 2**63


def snippet_document(marked: str) -> Document:
    """ts_headline output (hits between HIT_START and HIT_END) as a one-paragraph tree."""
    nodes: list[Inline] = []
    rest = " ".join(marked.split())
    while rest:
        before, start, after = rest.partition(HIT_START)
        if before:
            nodes.append(Text(before.replace(HIT_END, "")))
        if not start:
            break
        hit, _end, rest = after.partition(HIT_END)
        if hit:
            nodes.append(Strong((Text(hit.replace(HIT_START, "")),)))
    return Document(children=(Paragraph(tuple(nodes)),) if nodes else ())


def opening_document(text: str) -> Document:
    """The first words of the text, cut at a word boundary."""
    flat = " ".join(text[: OPENING_CHARS * 2].split())
    if len(flat) > OPENING_CHARS:
        flat = flat[:OPENING_CHARS].rsplit(" ", 1)[0] + " …"
    return Document(children=(Paragraph((Text(flat),)),) if flat else ())
