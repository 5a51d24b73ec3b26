"""YouTube's formats -> items: golden files, hostile content, errors. Pure, no network."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from app.egress import RateLimited
from app.safe_content import Label
from app.streams.providers import BudgetExhausted, CredentialRejected, ProviderError
from app.streams.providers.youtube import (
    api_error,
    next_quota_reset,
    parse_channel_feed,
    search_result_item,
    uploads_without_shorts,
    video_details,
)
from tests.streams.golden import assert_golden, assert_inert, fixture

FETCHED = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _search_items():
    search = json.loads(fixture("youtube_search.json"))
    videos = json.loads(fixture("youtube_videos.json"))
    details = {v["id"]: video_details(v) for v in videos["items"]}
    found = [search_result_item(r, FETCHED, details.get(r["id"].get("videoId", "")))
             for r in search["items"]]  # fmt: skip
    return [i for i in found if i is not None]


def test_a_channel_feed_becomes_items_as_the_golden_file_says():
    items, dropped = parse_channel_feed(fixture("youtube_channel.xml"))
    assert dropped == 1  # the entry without a video id or time
    assert_golden("youtube_channel.expected.json", items)
    first = items[0]
    assert first.url == "https://www.youtube.com/watch?v=Xy7_-AbC012"
    assert first.metrics == {"views": 48211.0, "likes": 1520.0}
    assert first.expires_at is None  # the keyless feed is not Data API content
    assert first.author_ref == "youtube:UCq5v2KmCCcqlLZHemmtYzQA"


def test_search_results_with_metrics_become_items_as_the_golden_file_says():
    items = _search_items()
    assert [i.remote_id for i in items] == ["Qm9udXM1aWQ", "aG9zdGlsZTI"]  # the channel is skipped
    assert_golden("youtube_search.expected.json", items)
    first = items[0]
    assert first.metrics == {"views": 18034.0, "likes": 912.0, "replies": 77.0}
    # search.list sends its texts HTML-escaped: they are unescaped once, then kept as text
    assert first.plain_text.startswith("Climate talks: what's next & who pays?")
    assert first.author_handle == "Planet & People"
    assert first.expires_at == FETCHED + timedelta(days=30)  # YouTube's 30-day rule


def test_a_search_result_keeps_the_language_videos_list_names():
    first, hostile = _search_items()
    # the language of the title and description the wall shows, not the spoken one
    assert first.lang == "en"
    assert hostile.lang == ""  # markup in a language field is no language
    items, _dropped = parse_channel_feed(fixture("youtube_channel.xml"))
    assert {i.lang for i in items} == {""}  # a channel feed names no language


def test_every_item_ends_with_the_attribution_line_linking_the_video():
    for item in [*parse_channel_feed(fixture("youtube_channel.xml"))[0], *_search_items()]:
        last = item.content.children[-1]
        link = last.children[0].children[0]  # Paragraph > Em > Link
        assert link.href == item.url
        assert link.children == (Label("watch_on_youtube"),)  # said in each reader's language


def test_hostile_titles_descriptions_and_links_end_inert():
    feed_items, _dropped = parse_channel_feed(fixture("youtube_channel.xml"))
    items = [*feed_items, *_search_items()]
    assert_inert(items)
    hostile = next(i for i in feed_items if i.remote_id == "h0st1le_v1d")
    assert "<script>alert(1)</script>" in hostile.plain_text  # shown as text, not run
    assert "\u202e" not in hostile.plain_text  # the bidi override is dropped
    assert hostile.url == "https://www.youtube.com/watch?v=h0st1le_v1d"  # not javascript:
    assert hostile.media == ()  # a javascript: thumbnail is no image
    assert hostile.metrics == {}  # NaN and negative counts are not numbers we keep


def test_uploads_without_shorts_is_the_uulf_playlist():
    assert uploads_without_shorts("UCq5v2KmCCcqlLZHemmtYzQA") == "UULFq5v2KmCCcqlLZHemmtYzQA"


@pytest.mark.parametrize(
    ("now", "reset"),
    [
        # Winter (PST, UTC-8): midnight Pacific is 08:00 UTC
        (datetime(2026, 12, 1, 7, 59, tzinfo=UTC), datetime(2026, 12, 1, 8, 0, tzinfo=UTC)),
        (datetime(2026, 12, 1, 8, 0, tzinfo=UTC), datetime(2026, 12, 2, 8, 0, tzinfo=UTC)),
        # Summer (PDT, UTC-7): 07:00 UTC
        (datetime(2026, 7, 1, 12, 0, tzinfo=UTC), datetime(2026, 7, 2, 7, 0, tzinfo=UTC)),
    ],
)
def test_googles_quota_renews_at_midnight_pacific(now, reset):
    assert next_quota_reset(now) == reset


def _error(status, reason, *, detail=False):
    key = "details" if detail else "errors"
    return {"error": {"code": status, "message": "m", key: [{"reason": reason}]}}


def test_api_errors_map_to_what_the_scheduler_understands():
    now = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)
    quota = api_error("u", 403, _error(403, "quotaExceeded"), now)
    assert isinstance(quota, BudgetExhausted)
    assert quota.until == datetime(2026, 12, 1, 8, tzinfo=UTC)
    assert isinstance(api_error("u", 400, _error(400, "API_KEY_INVALID", detail=True), now),
                      CredentialRejected)  # fmt: skip
    assert isinstance(api_error("u", 400, _error(400, "keyInvalid"), now), CredentialRejected)
    assert isinstance(api_error("u", 403, _error(403, "accessNotConfigured"), now),
                      CredentialRejected)  # fmt: skip
    assert isinstance(api_error("u", 403, _error(403, "rateLimitExceeded"), now), RateLimited)
    other = api_error("u", 400, _error(400, "invalidSearchFilter"), now)
    assert type(other) is ProviderError
    assert "HTTP 400" in other.message
