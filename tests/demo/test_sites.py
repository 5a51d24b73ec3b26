"""The demo article site, read by Newsdesk's real extraction and feed parser through egress."""

from __future__ import annotations

import html
import re
import struct
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import urljoin

import pytest

from app.articles.extraction import ExtractionError, extract
from app.articles.types import Warning
from app.demo.content import ARTICLE_ORIGIN, ARTICLES, SENTENCES, DemoWorld
from app.demo.sites import PAGE_ROUTES, WIRE_SECONDS, ArticleSite, WireArticle
from app.demo.stories import FOLLOW_UPS, STORY_SENTENCES
from app.egress import Egress, use_egress
from app.safe_content import render_html
from app.topics.feeds import parse_feed
from tests.egress.conftest import MakeEgress

START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START + timedelta(minutes=5)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def courier(clock: Clock) -> AsyncIterator[ArticleSite]:
    async with ArticleSite(DemoWorld(7, START, clock=clock)) as site:
        yield site


@pytest.fixture
def reach(courier: ArticleSite, make_egress: MakeEgress) -> Iterator[Egress]:
    client = make_egress(egress_divert=[f"{ARTICLE_ORIGIN}={courier.base}"])
    use_egress(client)
    yield client
    use_egress(None)


@pytest.mark.parametrize("lang", ["en", "de", "ja", "ar", "uk"])
async def test_articles_posts_link_to_are_read_as_articles(reach: Egress, lang: str) -> None:
    article = next(a for a in ARTICLES if a.lang == lang)
    extracted = await extract(article.url)
    assert extracted.title == article.title
    assert extracted.language == lang
    assert extracted.lead_image == f"{ARTICLE_ORIGIN}/media/{article.image}"
    assert extracted.warnings == ()
    assert html.escape(article.summary, quote=False) in render_html(extracted.content)
    assert extracted.word_count > 60 or lang == "ja"  # Japanese has no spaces to count


async def test_the_news_feed_parses_keeps_growing_and_answers_304(
    reach: Egress, courier: ArticleSite, clock: Clock
) -> None:
    url = f"{ARTICLE_ORIGIN}/feeds/news.rss"
    first = await reach.fetch(url)
    feed = parse_feed(first.content, url=url, content_type=first.headers["content-type"])
    assert len(feed.entries) == 30
    assert all(entry.link.startswith(f"{ARTICLE_ORIGIN}/news/w") for entry in feed.entries)
    unchanged = await reach.fetch(
        url, headers={"If-None-Match": first.headers["etag"]}, accept_statuses=frozenset({304})
    )
    assert unchanged.status == 304
    clock.now += timedelta(seconds=WIRE_SECONDS * 2)
    later = await reach.fetch(url, headers={"If-None-Match": first.headers["etag"]})
    newer = parse_feed(later.content, url=url).entries
    assert [e.link for e in newer[2:5]] == [e.link for e in feed.entries[:3]]
    readable = await extract(newer[0].link)  # the newest wire article is a page too
    assert readable.title == newer[0].title


async def test_atom_topic_and_language_feeds(reach: Egress) -> None:
    atom = await reach.fetch(f"{ARTICLE_ORIGIN}/feeds/news.atom")
    assert parse_feed(atom.content, url=atom.url).entries
    climate = await reach.fetch(f"{ARTICLE_ORIGIN}/feeds/climate.rss")
    entries = parse_feed(climate.content, url=climate.url).entries
    assert entries
    assert all("-climate-" in e.link for e in entries)
    german = await reach.fetch(f"{ARTICLE_ORIGIN}/feeds/de.rss")
    german_entries = parse_feed(german.content, url=german.url).entries
    assert german_entries
    assert all("-de-" in e.link for e in german_entries)
    assert parse_feed(german.content, url=german.url).language == "de"
    # a feed of several languages marks each item with its own
    news = await reach.fetch(f"{ARTICLE_ORIGIN}/feeds/news.rss")
    marked = parse_feed(news.content, url=news.url).entries
    assert all(e.language and f"-{e.language}-" in e.link for e in marked)
    assert len({e.language for e in marked}) > 1


async def test_walls_and_missing_pages_are_what_the_real_web_serves(reach: Egress) -> None:
    consent = await extract(f"{ARTICLE_ORIGIN}/consent/didomi-de")
    assert Warning.CONSENT_WALL in consent.warnings
    paywalled = await extract(f"{ARTICLE_ORIGIN}/paywall/port-electric")
    assert Warning.PAYWALL in paywalled.warnings
    with pytest.raises(ExtractionError):
        await extract(f"{ARTICLE_ORIGIN}/news/no-such-story")


async def test_the_hostile_page_ends_inert(reach: Egress) -> None:
    extracted = await extract(f"{ARTICLE_ORIGIN}/hostile")
    rendered = render_html(extracted.content)
    for bad in ("<script", "onerror", "javascript:", "<iframe", "<style", "<svg"):
        assert bad not in rendered


async def test_media_are_real_pngs_of_their_size(reach: Egress) -> None:
    fetched = await reach.fetch(f"{ARTICLE_ORIGIN}/media/flood.png")
    assert fetched.media_type == "image/png"
    assert fetched.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", fetched.content[16:24]) == (1200, 800)


@pytest.mark.parametrize("path", sorted(PAGE_ROUTES))
async def test_every_picture_a_page_shows_is_served(reach: Egress, path: str) -> None:
    page = (await reach.fetch(ARTICLE_ORIGIN + path)).content.decode("utf-8", "replace")
    pictures = re.findall(r'(?:<img src|property="og:image" content)="([^"]+)"', page)
    for picture in pictures:
        fetched = await reach.fetch(urljoin(ARTICLE_ORIGIN + path, html.unescape(picture)))
        assert fetched.content[:8] == b"\x89PNG\r\n\x1a\n", (path, picture)


def _written(seed: int) -> list[WireArticle]:
    """The articles posts link to and the first 90 minutes of the wire, as `seed` writes them."""
    site = ArticleSite(DemoWorld(seed, START, clock=lambda: START + timedelta(minutes=90)))
    linked = [site.find(article.slug) for article in ARTICLES]
    return [w for w in linked if w is not None] + site.wire()


def _pattern(template: str, city: str) -> str:
    """A story sentence as a regex: its own city, any count."""
    escaped = re.escape(template)
    return escaped.replace(re.escape("{city}"), re.escape(city)).replace(re.escape("{n}"), "[0-9]+")


def _story_sentences(found: WireArticle) -> list[int]:
    """Which of its topic's story sentences the body's paragraphs after the first are made of.

    Fails on any text that is not one of them, set in the article's own city."""
    article = found.article
    templates = STORY_SENTENCES[article.lang][article.topic]
    sentence = re.compile(
        "|".join(f"(?P<s{i}>{_pattern(t, article.city)})" for i, t in enumerate(templates))
    )
    used = []
    for paragraph in found.paragraphs[2:]:
        position = 0
        while position < len(paragraph):
            match = sentence.match(paragraph, position)
            assert match, f"{article.slug}: not its story: {paragraph[position:]!r}"
            used.append(int(str(match.lastgroup)[1:]))
            position = match.end() + paragraph.startswith(" ", match.end())
    return used


def _follows_up_its_headline(found: WireArticle) -> bool:
    """The summary is its `lead` headline, and the first body paragraph that one's follow-up."""
    article = found.article
    headline = SENTENCES[article.lang][article.topic][article.lead]
    follow_up = FOLLOW_UPS[article.lang][article.topic][article.lead]
    sequence = " ?".join(_pattern(t, article.city) for t in follow_up)
    return bool(
        re.fullmatch(_pattern(headline, article.city), article.summary)
        and re.fullmatch(sequence, found.paragraphs[1])
    )


def test_every_headline_has_a_follow_up_and_every_topic_a_story() -> None:
    for lang, topics in SENTENCES.items():
        for topic, headlines in topics.items():
            assert len(FOLLOW_UPS[lang][topic]) == len(headlines), (lang, topic)
            assert all(FOLLOW_UPS[lang][topic]), (lang, topic)
            assert len(STORY_SENTENCES[lang][topic]) >= (8 if lang in ("en", "de") else 5)


@pytest.mark.parametrize("seed", [7, 42])
def test_an_article_body_is_one_story_on_its_own_topic_in_its_own_city(seed: int) -> None:
    written = _written(seed)
    assert {w.article.lang for w in written} == set(SENTENCES)  # every language is sampled
    assert len({(w.article.lang, w.article.topic, w.article.lead) for w in written}) > 40
    for found in written:
        article = found.article
        assert found.paragraphs[0] == article.summary
        body = found.paragraphs[1:]
        assert len(body) == 6
        assert len(set(body)) == len(body), f"{article.slug} repeats a paragraph"
        assert _follows_up_its_headline(found), f"{article.slug}: {body[0]!r}"
        used = _story_sentences(found)
        assert len(used) == len(set(used)), f"{article.slug} repeats a sentence"


def test_the_same_seed_writes_the_same_bodies_and_another_seed_others() -> None:
    first, again, other = _written(7), _written(7), _written(8)
    assert [w.paragraphs for w in first] == [w.paragraphs for w in again]
    linked = len(ARTICLES)
    assert [w.paragraphs for w in first[:linked]] != [w.paragraphs for w in other[:linked]]
