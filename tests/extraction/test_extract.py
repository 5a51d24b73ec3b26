"""extract(url) against the fake web: every kind of page a newsroom meets, through egress."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.articles import queries as library
from app.articles.extraction import ExtractionError, Failure, extract, read_html, without_site_name
from app.articles.processing import prepare
from app.articles.services import process_scraped_article
from app.articles.types import OutcomeKind, Source, Warning
from app.egress import Egress, use_egress
from app.safe_content import (
    Code,
    CodeBlock,
    Document,
    Heading,
    Image,
    Link,
    List,
    Quote,
    to_text,
)
from tests.fakes.site import FakeSite
from tests.fixtures import make_test_settings


def nodes(doc: Document) -> list[object]:
    """Every node of a tree, depth first."""
    found: list[object] = []
    stack: list[object] = [doc]
    while stack:
        node = stack.pop()
        found.append(node)
        children = node.items if isinstance(node, List) else getattr(node, "children", ())
        stack.extend(reversed(children))
    return found


# Articles -------------------------------------------------------------------------


async def test_the_article_is_found_among_navigation_comments_and_footer(
    site: FakeSite, site_egress
):
    page = await extract(site.base + "/news/flood-warning")
    text = to_text(page.content)
    assert "Six councils along the River Wend have agreed to pool" in text
    assert "ending a patchwork that residents said" in text
    assert "forty new sensors, readable every five minutes" in text
    for boilerplate in (
        "Search the Courier",
        "Ferry timetable changes",
        "About time. My street",
        "All rights reserved",
        "Cookie settings",
    ):
        assert boilerplate not in text
    assert page.warnings == ()
    assert page.word_count > 250


async def test_the_article_keeps_its_structure_as_our_tree(site: FakeSite, site_egress):
    page = await extract(site.base + "/news/flood-warning")
    tree = nodes(page.content)
    headings = [to_text(Document(children=(n,))) for n in tree if isinstance(n, Heading)]
    assert headings == ["Why the towns changed course", "What happens next"]  # the h1 is the title
    assert any(isinstance(n, List) for n in tree)
    assert any(isinstance(n, Quote) for n in tree)
    images = [n for n in tree if isinstance(n, Image)]
    assert (
        images[0].src == site.base + "/media/2025/03/wend-gauge.jpg"
    )  # resolved, proxied at render
    links = [n.href for n in tree if isinstance(n, Link)]
    assert site.base + "/authors/priya-natarajan" not in links  # the byline is not body text
    assert any(isinstance(n, CodeBlock | Code) for n in tree)


async def test_the_article_metadata_comes_from_the_page(site: FakeSite, site_egress):
    page = await extract(site.base + "/news/flood-warning")
    assert page.title == "River towns vote to share one flood warning system"
    assert page.byline == "Priya Natarajan"
    assert page.site_name == "The Riverside Courier"
    assert page.language == "en"
    assert page.published_at == datetime(2025, 3, 4, 6, 30, tzinfo=UTC)
    assert page.lead_image == site.base + "/media/2025/03/wend-gauge.jpg"
    assert page.metadata["description"].startswith("Six councils along the Wend")


async def test_an_extracted_article_is_stored_through_the_one_processing_path(
    site: FakeSite, site_egress, people
):
    person = await people.member("editor")
    page = await extract(site.base + "/news/flood-warning")
    outcome = await process_scraped_article(person.workspace_id, page.scraped(Source.MANUAL))
    assert outcome.kind == OutcomeKind.NEW
    stored = await library.article(person.workspace_id, outcome.article_id)
    assert stored is not None
    assert stored.title == page.title
    assert stored.warnings == ()
    assert "single flood warning system" in stored.text


# Charsets -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected", "declared_by"),
    [
        (
            "/charset/cp1252-header",
            "„Wir müssen die Wartezeiten an Wochenenden halbieren“, sagte Geschäftsführerin Jürgensen am Dienstag – und kündigte an, dass die Überfahrt künftig 3,50 € kosten soll.",
            "header",
        ),
        (
            "/charset/latin1-meta",
            "« On n’a jamais vu ça en quarante ans », confie Hélène Garçon",
            "meta",
        ),
        (
            "/charset/sjis-meta",
            "市内を流れる川沿いの桜並木が二十八日、例年より一週間ほど早く満開となった。",
            "meta",
        ),
        (
            "/charset/undeclared",
            "Die Sanierung der Nordbrücke dauert länger als geplant.",
            "detected",
        ),
    ],
)
async def test_non_utf8_pages_come_out_right(
    site: FakeSite, site_egress, path, expected, declared_by
):
    page = await extract(site.base + path)
    assert expected in to_text(page.content)
    assert "\ufffd" not in to_text(page.content) + page.title
    assert page.metadata["charset_from"] == declared_by


async def test_a_non_utf8_title_comes_out_right(site: FakeSite, site_egress):
    page = await extract(site.base + "/charset/latin1-meta")
    assert page.title == "L’été sera chaud pour les vignerons de la vallée"
    assert page.language == "fr"


# Consent walls and paywalls ------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "platform", "language"),
    [
        ("/consent/onetrust-en", "onetrust", "en"),
        ("/consent/didomi-de", "didomi", "de"),
        ("/consent/didomi-fr", "didomi", "fr"),
        ("/consent/iubenda-it", "iubenda", "it"),
    ],
)
async def test_a_consent_wall_is_flagged(site: FakeSite, site_egress, path, platform, language):
    page = await extract(site.base + path)
    assert page.warnings == (Warning.CONSENT_WALL,)
    assert page.metadata["consent_platforms"] == [platform]
    assert page.language == language


async def test_a_consent_walls_title_is_the_pages_not_the_dialogs(site: FakeSite, site_egress):
    page = await extract(site.base + "/consent/onetrust-en")
    assert page.title.startswith("Budget talks stall over rail funding")


async def test_a_title_read_from_the_page_title_leaves_the_site_name_out(site, site_egress):
    page = await extract(site.base + "/consent/didomi-de")  # <title>.. | Rheinische Rundschau
    assert (page.title, page.site_name) == (
        "Stadtrat beschließt neues Radwegenetz",
        "Rheinische Rundschau",
    )


@pytest.mark.parametrize(
    ("title", "site", "shown"),
    [
        ("Flood warning | The Courier", "The Courier", "Flood warning"),
        ("The Courier – Flood warning", "the courier", "Flood warning"),
        ("Flood warning | Region | The Courier", "The Courier", "Flood warning | Region"),
        ("Flood warning - what we know", "The Courier", "Flood warning - what we know"),
        ("The Courier", "The Courier", "The Courier"),  # nothing else to show
        ("Flood warning | The Courier", "", "Flood warning | The Courier"),
    ],
)
def test_the_site_name_is_cut_from_either_end_of_a_page_title(title, site, shown):
    assert without_site_name(title, site) == shown


async def test_a_consent_wall_is_stored_with_the_warning_not_as_a_clean_article(
    site: FakeSite, site_egress, people
):
    person = await people.member("editor")
    page = await extract(site.base + "/consent/didomi-de")
    outcome = await process_scraped_article(person.workspace_id, page.scraped(Source.IMPORT))
    assert outcome.kind == OutcomeKind.NEW
    stored = await library.article(person.workspace_id, outcome.article_id)
    assert stored is not None
    assert stored.warnings == (Warning.CONSENT_WALL.value,)


async def test_a_consent_script_beside_a_readable_article_is_no_wall(site: FakeSite, site_egress):
    page = await extract(site.base + "/news/flood-warning")  # loads OneTrust's stub
    assert page.metadata["consent_platforms"] == ["onetrust"]
    assert Warning.CONSENT_WALL not in page.warnings


async def test_a_paywalled_teaser_is_kept_with_a_paywall_hint(site: FakeSite, site_egress):
    page = await extract(site.base + "/paywall/port-electric")
    assert page.warnings == (Warning.PAYWALL,)
    assert "json-ld" in page.metadata["paywall_signals"]
    assert "electricity by the end of the decade" in to_text(page.content)
    assert page.byline == "Tom Achterberg"


# PDF ---------------------------------------------------------------------------------


async def test_a_pdf_is_kept_as_a_link_with_its_metadata(site: FakeSite, site_egress):
    url = site.base + "/files/annual-report.pdf"
    page = await extract(url)
    assert page.warnings == (Warning.PDF,)
    assert page.title == "Annual Report 2024"
    assert page.metadata["content_type"] == "application/pdf"
    links = [n for n in nodes(page.content) if isinstance(n, Link)]
    assert [link.href for link in links] == [url]


async def test_a_pdf_sent_as_octet_stream_is_recognised_by_its_bytes(site: FakeSite, site_egress):
    page = await extract(site.base + "/files/download")
    assert page.warnings == (Warning.PDF,)


async def test_a_pdf_link_is_stored_through_the_processing_path(
    site: FakeSite, site_egress, people
):
    person = await people.member("editor")
    page = await extract(site.base + "/files/annual-report.pdf")
    outcome = await process_scraped_article(person.workspace_id, page.scraped(Source.IMPORT))
    assert outcome.kind == OutcomeKind.NEW
    stored = await library.article(person.workspace_id, outcome.article_id)
    assert stored is not None
    assert stored.warnings == (Warning.PDF.value,)


# Redirects -------------------------------------------------------------------------------


async def test_redirects_are_followed_by_egress_relative_locations_included(
    site: FakeSite, site_egress
):
    page = await extract(site.base + "/r/one")
    assert [h.path for h in site.hits] == ["/r/one", "/r/two", "/r/three", "/news/flood-warning"]
    assert page.final_url == site.base + "/news/flood-warning"
    assert page.url == site.base + "/r/one"  # the article keeps the address it was asked for
    assert page.title == "River towns vote to share one flood warning system"


async def test_a_redirect_loop_is_an_error(site: FakeSite, site_egress):
    with pytest.raises(ExtractionError) as caught:
        await extract(site.base + "/r/loop")
    assert caught.value.failure == Failure.BLOCKED
    assert "redirects" in caught.value.reason


# Errors: never stored as an article ---------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "failure", "reason", "retryable"),
    [
        ("/gone", Failure.HTTP_STATUS, "The page was not found (HTTP 404).", False),
        (
            "/broken",
            Failure.HTTP_STATUS,
            "The site had an error (HTTP 500); try again later.",
            True,
        ),
        (
            "/data.json",
            Failure.UNSUPPORTED_TYPE,
            "This address serves application/json, not a web page or a PDF.",
            False,
        ),
        (
            "/soft-404",
            Failure.ERROR_PAGE,
            "The site answered with a 'not found' page instead of the article.",
            False,
        ),
        (
            "/bot-check",
            Failure.ERROR_PAGE,
            "The site showed an access check instead of the article.",
            False,
        ),
        ("/empty", Failure.NO_TEXT, "No readable text found on the page.", False),
    ],
)
async def test_error_pages_are_errors_with_a_reason(
    site: FakeSite, site_egress, path, failure, reason, retryable
):
    with pytest.raises(ExtractionError) as caught:
        await extract(site.base + path)
    assert caught.value.failure == failure
    assert caught.value.reason == reason
    assert caught.value.retryable is retryable


@pytest.mark.parametrize("url", ["", "ftp://example.org/file", "javascript:alert(1)", "not a url"])
async def test_what_is_not_a_web_address_is_refused_before_any_request(
    site: FakeSite, site_egress, url
):
    with pytest.raises(ExtractionError) as caught:
        await extract(url)
    assert caught.value.failure == Failure.INVALID_URL
    assert site.hits == []


async def test_loopback_is_refused_without_the_allowlist(site: FakeSite, site_egress, redis):
    strict = Egress(make_test_settings(), redis)  # no EGRESS_ALLOW: production rules
    use_egress(strict)
    try:
        with pytest.raises(ExtractionError) as caught:
            await extract(site.base + "/news/flood-warning")
    finally:
        await strict.aclose()
    assert caught.value.failure == Failure.BLOCKED
    assert site.hits == []


async def test_a_page_larger_than_the_cap_is_refused(site: FakeSite, site_egress):
    with pytest.raises(ExtractionError) as caught:
        await extract(site.base + "/news/flood-warning", max_bytes=2048)
    assert caught.value.failure == Failure.TOO_LARGE


async def test_an_unreachable_site_is_a_retryable_error(site: FakeSite, site_egress):
    port = site.port
    await site.stop()
    with pytest.raises(ExtractionError) as caught:
        await extract(f"http://127.0.0.1:{port}/news/flood-warning")
    assert caught.value.failure == Failure.UNREACHABLE
    assert caught.value.retryable


# The article's language ----------------------------------------------------------------

GERMAN_PAGE = """<!doctype html><html lang="en"><head><title>Wohnungsbau in der Altstadt</title></head>
<body><article><h1>Wohnungsbau in der Altstadt</h1>
<p>Die Stadt hat am Dienstag neue Häuser für die Familien der Altstadt gebaut. Der Stadtrat
sagt, dass die Wohnungen bis zum Sommer fertig sein werden und dass die Mieten nicht steigen.</p>
<p>Die Bewohner sind mit dem Plan zufrieden, aber sie wollen mehr Grün in den Höfen und eine
Schule, die auch am Abend offen ist. Der Bau wird von der Stadt und von einer Stiftung bezahlt.</p>
</article></body></html>"""


def test_the_reader_takes_the_language_from_the_text_when_the_page_declares_another():
    page = read_html(
        GERMAN_PAGE.encode(), url="https://x.example/a", final_url="https://x.example/a"
    )
    assert page.language == "de"  # the template said "en"
    event = page.scraped(Source.IMPORT)
    assert event.language_checked  # so processing keeps it, and reads no word of it again
    assert prepare(replace(event, language="nl")).language == "nl"
    # An event nobody checked (a feed's entry) is read by processing itself.
    assert prepare(replace(event, language="en", language_checked=False)).language == "de"
