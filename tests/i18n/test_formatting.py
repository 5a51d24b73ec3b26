"""Dates, times, numbers and relative times read as the reader's language says them."""

from datetime import UTC, datetime, timedelta

import pytest

from app.core import i18n
from app.web.templating import local_time

MOMENT = datetime(2026, 11, 30, 13, 5, 7, tzinfo=UTC)


@pytest.fixture
def speak():
    tokens = []

    def activate(language: str) -> None:
        tokens.append(i18n.activate(language))

    yield activate
    for token in reversed(tokens):
        i18n._active.reset(token)


@pytest.mark.parametrize(("language", "expected"), [("en", "1,234"), ("de", "1.234")])
def test_numbers_group_thousands_the_readers_way(speak, language, expected):
    speak(language)
    assert i18n.format_number(1234) == expected


@pytest.mark.parametrize(
    ("language", "style", "expected"),
    [
        ("en", "date", "Nov 30, 2026"),
        ("de", "date", "30. Nov. 2026"),
        ("de", "day_time", "30. Nov., 14:05"),
        ("de", "day_time_seconds", "30. Nov., 14:05:07"),
        ("de", "datetime", "30.11.26, 14:05"),
    ],
)
def test_dates_read_in_the_readers_language_and_time_zone(speak, language, style, expected):
    speak(language)
    assert local_time(MOMENT, "Europe/Berlin", style) == expected


def test_english_times_follow_english_clock_and_the_zone(speak):
    speak("en")
    assert local_time(MOMENT, "America/New_York", "day_time").replace("\u202f", " ") == (
        "Nov 30, 8:05 AM"
    )


def test_an_unknown_time_zone_reads_as_utc(speak):
    speak("de")
    assert local_time(MOMENT, "Mars/Olympus", "day_time") == "30. Nov., 13:05"


@pytest.mark.parametrize(
    ("language", "ago", "ahead"),
    [("en", "3 minutes ago", "in 2 hours"), ("de", "vor 3 Minuten", "in 2 Stunden")],
)
def test_relative_times(speak, language, ago, ahead):
    speak(language)
    assert i18n.format_relative(MOMENT, now=MOMENT + timedelta(minutes=3)) == ago
    assert i18n.format_relative(MOMENT, now=MOMENT - timedelta(hours=2)) == ahead
    assert i18n.format_relative(None) == ""


@pytest.mark.parametrize(("language", "expected"), [("en", "German"), ("de", "Deutsch")])
def test_a_content_language_is_named_in_the_readers(speak, language, expected):
    speak(language)
    assert i18n.language_name("de") == expected
    assert i18n.language_name("") == ""


def test_the_browser_header_picks_german_by_quality():
    assert i18n.pick_language(None, "fr;q=0.9,de-CH;q=0.8,en;q=0.5") == "de"
    assert i18n.pick_language(None, "en;q=0.5,de") == "de"
    assert i18n.pick_language(None, "de;q=0") == "en"
    assert i18n.pick_language("en", "de") == "en"  # the profile's choice wins


def test_import_progress_counts_group_thousands_in_german(speak):
    from types import SimpleNamespace

    from app.imports.labels import summary
    from app.imports.types import Counters

    speak("de")
    counters = Counters(total=5000, saved=1000, duplicates=1234, errors=0, warnings=0, cancelled=0)
    label = summary(SimpleNamespace(counters=counters))  # type: ignore[arg-type]
    assert label == "2.234 / 5.000 — 1.234 Duplikate"


def test_activity_counts_group_thousands_in_german(speak):
    from app.events.describe import _import_detail

    speak("de")
    assert _import_detail({"saved": 1234, "duplicates": 2000}) == (
        "1.234 gespeichert, 2.000 Duplikate"
    )


@pytest.mark.parametrize(
    ("language", "value", "expected"),
    [
        ("en", 7, "7"),
        ("en", 1234, "1.2K"),
        ("en", 1_234_567, "1.2M"),
        ("de", 7, "7"),
        ("de", 12_345, "12.345"),  # German abbreviates from a million only: grouped in full
        ("de", 1_234_567, "1,2\xa0Mio."),
    ],
)
def test_short_counts_abbreviate_the_readers_way(speak, language, value, expected):
    speak(language)
    assert i18n.format_compact(value) == expected


def test_wall_metrics_spell_out_their_meaning_in_german(speak):
    from app.wall.labels import metrics_of

    speak("de")
    assert metrics_of({"likes": 1234, "replies": 1, "views": 2_500_000}) == [
        ("replies", "↩", "1", "1 Antwort"),
        ("likes", "♥", "1.234", "1.234 Likes"),
        ("views", "▶", "2,5\xa0Mio.", "2.500.000 Aufrufe"),
    ]


@pytest.mark.parametrize(
    ("language", "expected"), [("en", "1,234 minutes read"), ("de", "1.234 Minuten Lesezeit")]
)
def test_counts_in_templates_use_the_readers_number_format(speak, language, expected):
    from app.web.templating import make_environment

    speak(language)
    template = make_environment().from_string(
        '{{ ngettext("%(num)s minute read", "%(num)s minutes read", n) }}'
    )
    assert template.render(n=1234) == expected


def test_a_template_may_still_pass_its_own_num(speak):
    from app.web.templating import make_environment

    speak("de")
    template = make_environment().from_string(
        '{{ ngettext("%(num)s minute read", "%(num)s minutes read", n, num="viele") }}'
    )
    assert template.render(n=5) == "viele Minuten Lesezeit"


def test_a_length_limit_reads_in_the_readers_number_format(speak):
    from app.accounts.types import AccountError
    from app.accounts.validation import checked_name

    speak("de")
    with pytest.raises(AccountError) as refused:
        checked_name("x" * 1234, field="name", limit=1000, missing="")
    assert refused.value.message == "Höchstens 1.000 Zeichen (dieser Text hat 1.234)."
