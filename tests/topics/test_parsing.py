"""Reading feeds and arXiv answers, deciding full-text fetches and backoff: pure functions."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.config import Settings
from app.egress.policy import HostBudget, parse_budgets
from app.safe_content import Link, to_text
from app.topics.arxiv import (
    API_URL,
    ArxivApiError,
    arxiv_article,
    parse_api,
    parse_sections,
    query_url,
)
from app.topics.feeds import (
    FULL_TEXT_MIN_WORDS,
    FeedEntry,
    NotAFeed,
    entry_document,
    needs_full_text,
    parse_feed,
)
from app.topics.schedule import BACKOFF_BASE, BACKOFF_CAP, next_run_delay, with_arxiv_budgets
from tests.fakes.site import DEMO_PAGES
from tests.fixtures import make_test_settings

FAKES = Path(__file__).parents[1] / "fakes"
BASE = "https://courier.example"


def fixture(folder: str, name: str) -> bytes:
    return (FAKES / folder / name).read_text(encoding="utf-8").replace("{BASE}", BASE).encode()


# Feeds ----------------------------------------------------------------------------------


def test_an_rss_feed_with_full_content_is_read_entry_by_entry():
    feed = parse_feed(fixture("feeds", "full.rss"), url=f"{BASE}/feeds/full.rss")
    assert feed.title == "Valley Climate Desk"
    assert feed.language == "en"
    assert [e.title for e in feed.entries] == [
        "Heat pumps outsell gas boilers in the valley for the first time",
        "Reservoir levels recover after wet February",
        "Solar co-operative opens its books to new members",
    ]
    first = feed.entries[0]
    assert first.link.startswith(f"{BASE}/climate/heat-pumps-outsell-boilers")
    assert first.byline == "Jonas Lindqvist"
    assert first.published_at == datetime(2025, 3, 4, 7, 0, tzinfo=UTC)
    assert first.lead_image == f"{BASE}/media/heat-pump.jpg"
    assert not first.summary_only


def test_full_feed_content_needs_no_fetch_and_resolves_links_against_the_article():
    feed = parse_feed(fixture("feeds", "full.rss"), url=f"{BASE}/feeds/full.rss")
    entry = feed.entries[0]
    document = entry_document(entry)
    assert not needs_full_text(entry, document)
    assert "1,240 heat pumps fitted between October and December" in to_text(document)
    links = [
        n
        for block in document.children
        for n in getattr(block, "children", ())
        if isinstance(n, Link)
    ]
    assert links[0].href == f"{BASE}/climate/data/heat-pumps-2024.csv"


def test_an_atom_feed_with_summaries_only_needs_the_full_text():
    feed = parse_feed(fixture("feeds", "summaries.atom"), url=f"{BASE}/feeds/summaries.atom")
    assert feed.language == "en"
    assert all(e.summary_only for e in feed.entries)
    assert all(needs_full_text(e, entry_document(e)) for e in feed.entries)
    assert feed.entries[1].title == "Größere Fähren für den Übergang nach Königswinter"


def test_an_entry_keeps_the_language_it_is_marked_with():
    atom = parse_feed(fixture("feeds", "summaries.atom"), url=f"{BASE}/feeds/summaries.atom")
    # xml:lang on the German entry; the others inherit the feed's
    assert [e.language for e in atom.entries] == ["en", "de", "en"]
    rss = parse_feed(fixture("feeds", "full.rss"), url=f"{BASE}/feeds/full.rss")
    assert {e.language for e in rss.entries} == {""}  # RSS marks the channel (<language>) only
    assert rss.language == "en"


def _entry(body: str, *, summary_only: bool = False) -> FeedEntry:
    return FeedEntry(f"{BASE}/a", "", "t", "", None, body, summary_only, "")


@pytest.mark.parametrize(
    ("body", "summary_only", "fetch"),
    [
        ("<p>" + "word " * (FULL_TEXT_MIN_WORDS + 5) + "</p>", False, False),
        ("<p>" + "word " * (FULL_TEXT_MIN_WORDS - 5) + "</p>", False, True),  # an RSS teaser
        ("<p>" + "word " * (FULL_TEXT_MIN_WORDS + 5) + "</p>", True, True),  # Atom <summary> only
        ("", False, True),
    ],
)
def test_when_the_full_text_is_fetched(body, summary_only, fetch):
    entry = _entry(body, summary_only=summary_only)
    assert needs_full_text(entry, entry_document(entry)) is fetch


def test_an_html_page_is_not_a_feed():
    with pytest.raises(NotAFeed):
        parse_feed((DEMO_PAGES / "article.html").read_bytes(), url=f"{BASE}/feed")


def test_feed_bytes_that_name_a_local_file_are_never_opened(tmp_path):
    # feedparser opens bytes as a file name when it can; ours hands it a stream.
    secret = tmp_path / "secret.xml"
    secret.write_text(
        '<rss version="2.0"><channel><title>local file</title><item><title>leak</title>'
        "<link>https://x.example/leak</link></item></channel></rss>"
    )
    with pytest.raises(NotAFeed):
        parse_feed(str(secret).encode(), url=f"{BASE}/feed")


def test_entries_without_a_usable_link_are_counted_not_stored():
    body = (
        b'<rss version="2.0"><channel><title>t</title>'
        b"<item><title>a</title><link>javascript:alert(1)</link></item>"
        b"<item><title>b</title><link>https://x.example/b</link></item></channel></rss>"
    )
    feed = parse_feed(body, url=f"{BASE}/feed")
    assert [e.link for e in feed.entries] == ["https://x.example/b"]
    assert feed.without_link == 1


# arXiv -----------------------------------------------------------------------------------


def test_the_api_query_asks_for_the_newest_papers():
    url = query_url(API_URL, "all:flood AND cat:cs.LG", 25)
    assert url == (
        "https://export.arxiv.org/api/query?search_query=all%3Aflood+AND+cat%3Acs.LG"
        "&sortBy=submittedDate&sortOrder=descending&start=0&max_results=25"
    )


def test_an_api_answer_gives_ids_authors_pdf_and_abstract():
    first, second = parse_api(fixture("arxiv", "query.atom"))
    assert first.arxiv_id == "2502.01234v2"
    assert first.abs_url == "https://arxiv.org/abs/2502.01234"  # one article for every version
    assert first.title == "Sparse Attention over River Gauge Networks for Flash Flood Nowcasting"
    assert first.authors == ("Ines Carvalho", "Kwame Mensah", "Yuki Tanabe")
    assert first.pdf_url == "https://arxiv.org/pdf/2502.01234v2"
    assert first.abstract.startswith("Flash floods in small catchments leave minutes")
    assert first.primary_category == "cs.LG"
    assert first.categories == ("cs.LG", "physics.ao-ph")
    assert first.comment == "14 pages, 6 figures; v2: added a third basin"
    assert first.published_at == datetime(2025, 2, 3, 11, 2, 55, tzinfo=UTC)
    assert second.doi == "10.1234/flood.bench.2025"
    assert second.journal_ref == "Proc. Hydroinformatics 2025"


def test_an_api_error_answer_raises_arxivs_message():
    with pytest.raises(ArxivApiError, match="unbalanced parentheses"):
        parse_api(fixture("arxiv", "error.atom"))


def test_sections_are_ordered_heading_text_pairs_with_formulas_as_tex():
    sections = parse_sections(fixture("arxiv", "2502.01234v2.html").decode())
    assert [s.heading for s in sections] == ["1 Introduction", "2 Method", "2.1 Data", "3 Results"]
    intro = sections[0].text
    assert "Full attention across n gauges costs O(n^{2}) per step." in intro
    assert intro.count("\n\n") == 1  # two paragraphs
    assert sections[1].text == "Each gauge attends to at most k=8 upstream neighbours."
    assert "212 gauges" not in sections[1].text  # the subsection's text is its own
    assert all("Gauge forecasting. 2020" not in s.text for s in sections)  # no bibliography


def test_a_page_without_sections_has_none():
    assert parse_sections("<html><body><p>No LaTeXML here.</p></body></html>") == ()
    assert parse_sections("") == ()


def test_an_arxiv_paper_becomes_an_event_with_its_metadata_apart():
    entry = parse_api(fixture("arxiv", "query.atom"))[0]
    sections = parse_sections(fixture("arxiv", "2502.01234v2.html").decode())
    event = arxiv_article(entry, sections, topic_id=7, query="all:flood")
    assert event.url == "https://arxiv.org/abs/2502.01234"
    assert event.byline == "Ines Carvalho, Kwame Mensah, Yuki Tanabe"
    assert to_text(event.content).startswith("Flash floods in small catchments")
    assert event.arxiv is not None
    assert event.arxiv.pdf_available
    assert event.arxiv.sections == sections
    assert event.metadata["primary_category"] == "cs.LG"


# Scheduling --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "failures", "retry_after", "expected"),
    [
        (3600, 0, None, 3600),
        (3600, 1, None, BACKOFF_BASE),
        (3600, 2, None, BACKOFF_BASE * 2),
        (3600, 5, None, BACKOFF_BASE * 16),
        (3600, 30, None, BACKOFF_CAP),
        (86400 * 2, 30, None, 86400 * 2),  # the cap never beats the interval
        (3600, 1, 900.0, 900.0),  # a Retry-After is honoured
    ],
)
def test_next_run_delay_backs_off_exponentially_up_to_a_cap(
    interval, failures, retry_after, expected
):
    assert next_run_delay(interval, failures, retry_after=retry_after) == expected


@pytest.mark.parametrize("jitter", [-1.0, 1.0, 5.0])
def test_jitter_stays_within_twenty_percent(jitter):
    delay = next_run_delay(3600, 1, jitter=jitter)
    assert BACKOFF_BASE * 0.8 <= delay <= BACKOFF_BASE * 1.2


def test_arxiv_gets_one_request_every_three_seconds_by_default():
    budgets = parse_budgets(with_arxiv_budgets(make_test_settings()))
    for host in ("export.arxiv.org", "arxiv.org"):
        assert budgets[host] == HostBudget(rate=0.333, burst=1, inflight=1)
        assert 1 / budgets[host].rate >= 3.0


def test_the_operators_arxiv_budget_wins_and_other_hosts_are_kept():
    settings: Settings = make_test_settings(
        egress_host_budgets=["export.arxiv.org=0.1/1/1", "api.example.org=5/5/2"]
    )
    budgets = parse_budgets(with_arxiv_budgets(settings))
    assert budgets["export.arxiv.org"].rate == 0.1
    assert budgets["api.example.org"].rate == 5
    assert budgets["arxiv.org"].rate == 0.333


@pytest.mark.parametrize("stray", ["\x01", ""], ids=["loosely-parsed", "well-formed"])
def test_feed_authors_are_plain_text_once_even_when_the_feed_is_parsed_loosely(stray: str) -> None:
    from app.topics.feeds import parse_feed

    body = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        "<title>Tom &amp; Jerry News</title><link>https://a.example/</link><item>"
        f"<title>Fish &amp; chips{stray}</title><link>https://a.example/1</link>"
        "<author>Smith &amp; Jones</author><description>x</description></item></channel></rss>"
    ).encode()
    feed = parse_feed(body, url="https://a.example/feed")
    entry = feed.entries[0]
    assert entry.byline == "Smith & Jones"
    assert entry.title == "Fish & chips"
    assert feed.title == "Tom & Jerry News"
