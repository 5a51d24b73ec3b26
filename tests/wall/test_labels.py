"""The wall's state copy (app.wall.labels) for columns built by hand."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core import i18n
from app.streams.types import (
    AggregateState,
    ColumnType,
    ColumnView,
    SourceKind,
    SourceState,
    SourceView,
)
from app.wall.labels import polls_label

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _source(id_: int, provider: str, interval_ms: int) -> SourceView:
    return SourceView(
        id=id_, provider=provider, connection_id=None, kind=SourceKind.SEARCH, query="climate",
        actor_ref="", label="", state=SourceState.READY, last_polled_at=NOW, next_poll_at=NOW,
        last_error="", interval_ms=interval_ms,
    )  # fmt: skip


def _column(*sources: SourceView) -> ColumnView:
    return ColumnView(
        id=1, type=ColumnType.KEYWORD, title="Climate", position=0, spec={}, refresh_policy={},
        effective_interval_ms=max((s.interval_ms for s in sources), default=120_000),
        sources=sources, aggregate_state=AggregateState.READY,
    )  # fmt: skip


def test_a_column_says_how_often_it_fetches_and_which_platform_fetches_slower():
    # "4 sources · every 16 minutes" over a column whose Bluesky and Mastodon searches fetch
    # every 2 minutes: only YouTube's quota holds its search to 16, and the column read as slow.
    mixed = _column(
        _source(1, "bluesky", 120_000),
        _source(2, "mastodon", 120_000),
        _source(3, "youtube", 960_000),
    )
    assert polls_label(mixed) == "every 2 minutes · YouTube: every 16 minutes"
    assert polls_label(_column(_source(1, "bluesky", 60_000))) == "every minute"
    assert polls_label(_column()) == "every 2 minutes"
    with i18n.speaking("de"):
        assert polls_label(mixed) == "alle 2 Minuten · YouTube: alle 16 Minuten"
