"""The wall's pure rules: spec validation, interval clamps, query adaptation, next polls, column states."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.streams.platforms import PLATFORMS, adapt_query, canonical_handle, clamp_interval, floor_ms
from app.streams.providers import dedup_key
from app.streams.queries import CursorInvalid, decode_cursor, effective_interval_ms, encode_cursor
from app.streams.schedule import (
    after_failure,
    after_not_found,
    after_rate_limit,
    after_success,
    aggregate_state,
    window_end,
    window_start,
)
from app.streams.spec import parse_column
from app.streams.types import (
    ColumnType,
    SourceKind,
    SourceState,
    SourceView,
    SpecInvalid,
    Unsupported,
)

KEYWORD = {
    "type": "keyword",
    "title": "Flood",
    "spec": {"query": "flood", "platforms": ["bluesky"]},
}


def errors_of(data: object) -> dict[str, str]:
    with pytest.raises(SpecInvalid) as caught:
        parse_column(data)
    return caught.value.errors


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"type": "tiktok_feed"}, "type", "Choose one of"),
        ({"title": ""}, "title", "title"),
        ({"title": "x" * 81}, "title", "80"),
        ({"title": "bad\x07title"}, "title", "control"),
        ({"spec": {"query": "", "platforms": ["bluesky"]}}, "spec.query", "Enter"),
        ({"spec": {"query": "q" * 201, "platforms": ["bluesky"]}}, "spec.query", "200"),
        ({"spec": {"query": "a\x00b", "platforms": ["bluesky"]}}, "spec.query", "control"),
        ({"spec": {"query": "flood", "platforms": []}}, "spec.platforms", "at least one"),
        (
            {"spec": {"query": "flood", "platforms": ["myspace"]}},
            "spec.platforms",
            "Unknown platform",
        ),
        ({"spec": "flood"}, "spec", "JSON object"),
        ({"refresh_policy": {"interval_ms": "fast"}}, "refresh_policy.interval_ms", "milliseconds"),
        ({"refresh_policy": {"paused": "yes"}}, "refresh_policy.paused", "true or false"),
    ],
)
def test_keyword_columns_are_refused_field_by_field(change, field, words):
    errors = errors_of({**KEYWORD, **change})
    assert words in errors[field]


@pytest.mark.parametrize(
    ("spec", "field", "words"),
    [
        ({"accounts": []}, "spec.accounts", "at least one"),
        ({"accounts": [{"provider": "rss", "handle": "x"}] * 51}, "spec.accounts", "50"),
        (
            {"accounts": [{"provider": "orkut", "handle": "x"}]},
            "spec.accounts[0].provider",
            "Choose",
        ),
        (
            {"accounts": [{"provider": "mastodon", "handle": "@alice"}]},
            "spec.accounts[0].handle",
            "Mastodon",
        ),
        (
            {"accounts": [{"provider": "instagram", "handle": "@a"}]},
            "spec.accounts[0].provider",
            "Instagram",
        ),
        (
            {"accounts": [{"provider": "rss", "handle": "ftp://x/feed"}]},
            "spec.accounts[0].handle",
            "RSS",
        ),
        ({"accounts": ["@alice"]}, "spec.accounts[0]", "provider, handle"),
    ],
)
def test_account_lists_are_refused_field_by_field(spec, field, words):
    assert words in errors_of({"type": "account_list", "title": "People", "spec": spec})[field]


def test_platform_feeds_need_a_connection_and_known_kinds():
    errors = errors_of({"type": "platform_feed", "title": "Home", "spec": {"kinds": ["likes"]}})
    assert set(errors) == {"spec.connection_id", "spec.kinds"}
    form = parse_column({"type": "platform_feed", "title": "Home", "spec": {"connection_id": 3}})
    assert form.spec == {"connection_id": 3, "kinds": ["home"]}


def test_valid_specs_are_normalised():
    form = parse_column(
        {
            "type": "account_list",
            "title": "  People  we   follow ",
            "spec": {
                "accounts": [
                    {"provider": "mastodon", "handle": "@Alice@Social.Example"},
                    {"provider": "mastodon", "handle": "alice@social.example"},
                    {"provider": "bluesky", "handle": "@Bob.bsky.social"},
                    {"provider": "rss", "handle": "@carol@bücher.example"},
                ]
            },
        }
    )
    assert form.title == "People we follow"
    assert form.spec["accounts"] == [
        {"provider": "mastodon", "handle": "alice@social.example"},
        {"provider": "bluesky", "handle": "bob.bsky.social"},
        {"provider": "rss", "handle": "https://xn--bcher-kva.example/@carol.rss"},
    ]


def test_intervals_are_clamped_and_never_below_the_budget_floor():
    assert clamp_interval(None, ColumnType.PLATFORM_FEED) == 60_000
    assert clamp_interval(None, ColumnType.KEYWORD) == 120_000
    assert clamp_interval(None, ColumnType.ACCOUNT_LIST) == 180_000
    assert clamp_interval(None, ColumnType.SAVED_SEARCH) == 300_000
    assert clamp_interval(1_000, ColumnType.KEYWORD) == 60_000
    assert clamp_interval(10 * 3_600_000, ColumnType.KEYWORD) == 3_600_000
    youtube_search = floor_ms(PLATFORMS["youtube"], SourceKind.SEARCH)
    assert youtube_search == 960_000  # 90 calls a day
    source = _source(SourceState.READY, provider="youtube", kind=SourceKind.SEARCH)
    assert effective_interval_ms(ColumnType.KEYWORD, {"interval_ms": 60_000}, [source]) == 960_000


@pytest.mark.parametrize(
    ("platform", "query", "expected"),
    [
        ("bluesky", "acampada 26", "acampada 26"),
        ("youtube", "flood warning", "flood warning"),
        ("mastodon", "news #Acampada26 and #other", "acampada26"),
        ("mastodon", "no tags here", None),
        ("mastodon", "Klimaschutz", "klimaschutz"),  # one word: its hashtag
        ("instagram", "#Acampada", "acampada"),
        ("instagram", "#acampada today", None),
        ("x", "flood", None),
        ("tiktok", "flood", None),
        ("rss", "flood", None),
    ],
)
def test_queries_are_adapted_per_platform(platform, query, expected):
    adapted = adapt_query(platform, query)
    if expected is None:
        assert isinstance(adapted, Unsupported)
        assert adapted.reason
    else:
        assert adapted == expected


def test_x_searches_only_when_its_ledger_is_enabled():
    assert adapt_query("x", "flood", ledger_enabled=True) == "flood"


def test_handles_are_canonical():
    assert canonical_handle("mastodon", "@Alice@Bücher.Example") == "alice@xn--bcher-kva.example"
    assert canonical_handle("youtube", "UC" + "a" * 22) == "UC" + "a" * 22
    assert canonical_handle("x", "@Jack") == "jack"
    assert isinstance(canonical_handle("tiktok", "@x"), Unsupported)


def test_dedup_keys_are_per_workspace_and_case_blind():
    assert dedup_key(1, "mastodon", "Social.Example/1") == dedup_key(
        1, "mastodon", "social.example/1"
    )
    assert dedup_key(1, "mastodon", "social.example/1") != dedup_key(
        2, "mastodon", "social.example/1"
    )
    assert len(dedup_key(1, "rss", "x")) == 64


def test_next_polls_jitter_back_off_and_cap():
    assert after_success(60_000).delay_s == 60
    assert after_success(60_000, jitter=1).delay_s == pytest.approx(72)
    assert after_success(60_000, jitter=-1).delay_s == pytest.approx(48)
    assert [after_failure(60_000, n, polled_before=True).delay_s for n in range(6)] == [
        120,
        240,
        480,
        960,
        1800,
        1800,
    ]
    assert after_failure(600_000, 9, polled_before=True, jitter=1).delay_s == 1800
    assert after_failure(60_000, 1, polled_before=True).state == SourceState.STALE
    assert after_failure(60_000, 2, polled_before=True).state == SourceState.ERROR
    limited = after_rate_limit(60_000, 2, 300)
    assert (limited.state, limited.delay_s, limited.failures) == (SourceState.RATE_LIMITED, 300, 2)


def test_not_found_is_an_error_at_the_first_answer_and_asked_again_on_the_back_off():
    # "Fetching the first posts..." stayed until the third poll that heard "not found".
    first = after_not_found(120_000, 0)
    assert (first.state, first.delay_s, first.failures) == (SourceState.ERROR, 240, 1)
    assert after_not_found(120_000, 5, jitter=1).delay_s == 1800  # capped, never a stop
    # A failure that is no answer (a timeout) still waits for the third before `error`.
    assert after_failure(120_000, 0, polled_before=False).state == SourceState.PENDING


NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _source(state, *, polled=NOW, provider="rss", kind=SourceKind.AUTHOR):  # type: ignore[no-untyped-def]
    return SourceView(
        id=1,
        provider=provider,
        connection_id=None,
        kind=kind,
        query="",
        actor_ref="",
        label="",
        state=state,
        last_polled_at=polled,
        next_poll_at=NOW,
        last_error="",
        interval_ms=60_000,
    )


@pytest.mark.parametrize(
    ("states", "has_items", "expected"),
    [
        ([SourceState.READY], True, "ready"),
        ([SourceState.READY], False, "empty"),
        ([SourceState.PENDING, SourceState.PENDING], False, "pending"),
        ([SourceState.ERROR, SourceState.DISABLED], True, "error"),
        ([SourceState.READY, SourceState.ERROR], True, "partial"),
        ([SourceState.READY, SourceState.RATE_LIMITED], True, "partial"),
        ([SourceState.BUDGET_PAUSED], True, "paused"),
        ([SourceState.READY, SourceState.STALE], True, "stale"),
        ([], False, "empty"),
    ],
)
def test_a_columns_state_is_the_worst_of_its_sources(states, has_items, expected):
    sources = [_source(s) for s in states]
    assert aggregate_state(sources, paused=False, has_items=has_items, now=NOW) == expected


def test_a_source_retrying_beside_working_ones_makes_the_column_partial_not_pending():
    # A column showing posts said "Fetching the first posts..." while an account it lists
    # was not found, for as long as that source retried (minutes, backing off). Not found is
    # `error` at once now (after_not_found); a source retrying after a timeout is this case.
    missing = replace(_source(SourceState.PENDING, polled=None), last_error="Timed out.")
    ready = _source(SourceState.READY)
    assert aggregate_state([ready, missing], paused=False, has_items=True, now=NOW) == "partial"
    assert aggregate_state([missing], paused=False, has_items=False, now=NOW) == "pending"
    new = _source(SourceState.PENDING, polled=None)
    assert aggregate_state([ready, new], paused=False, has_items=True, now=NOW) == "pending"


def test_a_ready_source_not_polled_for_two_intervals_is_stale_and_pausing_wins():
    old = _source(SourceState.READY, polled=NOW - timedelta(minutes=3))
    assert aggregate_state([old], paused=False, has_items=True, now=NOW) == "stale"
    assert aggregate_state([old], paused=True, has_items=True, now=NOW) == "paused"


def test_cursors_round_trip_and_refuse_forgeries():
    cursor = encode_cursor(NOW, "a" * 64)
    assert "=" not in cursor
    assert decode_cursor(cursor) == (NOW, "a" * 64)
    for bad in ("", "!!!", "eyJhdCI6MX0", encode_cursor(NOW, "a" * 64)[:-3]):
        with pytest.raises(CursorInvalid):
            decode_cursor(bad)


def test_canonical_ids_are_lower_case_and_host_qualified_for_instances():
    from app.streams.providers import canonical_id

    assert canonical_id("AbC") == "abc"
    assert canonical_id("109", "Bücher.Example:443") == "xn--bcher-kva.example/109"
    assert canonical_id("109", "social.example:8443") == "social.example:8443/109"


def test_zoned_day_windows_follow_the_zones_midnight_across_clock_changes():
    la = ZoneInfo("America/Los_Angeles")
    day = timedelta(days=1)
    # 2027-03-14: clocks go forward in California, so that quota day lasts 23 hours.
    now = datetime(2027, 3, 14, 12, 0, tzinfo=UTC)
    start = window_start(now, day, la)
    assert start == datetime(2027, 3, 14, 8, 0, tzinfo=UTC)  # midnight PST
    assert window_end(start, day, la) == datetime(2027, 3, 15, 7, 0, tzinfo=UTC)  # midnight PDT
    # Without a zone, windows stay multiples of the length since the epoch.
    assert window_start(now, day) == datetime(2027, 3, 14, tzinfo=UTC)
    assert window_end(window_start(now, day), day) == datetime(2027, 3, 15, tzinfo=UTC)
