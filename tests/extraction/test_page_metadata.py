"""What read_html asks of trafilatura comes out as trafilatura's own calls would give it:
the metadata (page_metadata), the visible text (visible_text)."""

from __future__ import annotations

import pytest
from trafilatura import html2txt
from trafilatura.metadata import extract_metadata
from trafilatura.utils import load_html

from app.articles.extraction import DATE_PARAMS, visible_text
from app.articles.page_metadata import page_metadata
from tests.fakes.site import DEMO_PAGES

URL = "https://www.dailyplanet.com/2025/03/flood-plan"
FIELDS = ("title", "author", "sitename", "date", "image", "description", "url")
STORY = "<p>" + "The council's flood plan says where the new sensors go. " * 20 + "</p>"


def page(head: str, body: str) -> str:
    return f"<html><head>{head}</head><body>{body}{STORY}</body></html>"


PAGES = {
    "json-ld and og tags": page(
        '<title>Flood plan | Daily Planet</title><meta property="og:title" content="Flood plan">'
        '<meta property="og:image" content="/img/flood.jpg">'
        '<meta name="description" content="Sensors &amp; sirens">'
        '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Flood plan",'
        ' "datePublished": "2025-03-04", "author": {"@type": "Person", "name": "Lois Lane"},'
        ' "publisher": {"@type": "Organization", "name": "Daily Planet"}}</script>',
        "<h1>Flood plan</h1>",
    ),
    "a byline in the page only": page(
        "<title>Flood plan</title>",
        '<h1>Flood plan</h1><p class="byline">By Lois Lane <time>4 March 2025</time></p>',
    ),
    "a one-word author tag and a twitter handle": page(
        '<title>Flood plan - dailyplanet.com</title><meta name="author" content="desk">'
        '<meta name="twitter:site" content="@dailyplanet">',
        '<h1>Flood plan</h1><h1>Other news</h1><span class="author-name">Lois Lane</span>',
    ),
    "a canonical link and nothing else": page(
        '<link rel="canonical" href="/2025/03/flood-plan-canonical">'
        '<meta property="og:url" content="https://dailyplanet.com/x">',
        "<h2>Flood plan</h2>",
    ),
    "broken json-ld": page(
        '<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Flood',
        "<h1>Flood plan</h1>",
    ),
    **{path.name: path.read_text() for path in sorted(DEMO_PAGES.glob("*.html"))},
}


@pytest.mark.parametrize("html", PAGES.values(), ids=PAGES.keys())
def test_every_field_we_read_is_the_one_extract_metadata_finds(html: str):
    ours = page_metadata(load_html(html), URL, DATE_PARAMS)
    theirs = extract_metadata(load_html(html), URL, DATE_PARAMS)
    assert {f: getattr(ours, f) for f in FIELDS} == {f: getattr(theirs, f) for f in FIELDS}


def test_the_pages_hold_every_field():
    """The pages above exercise each step: meta tags, JSON-LD, the page's own elements."""
    found = [page_metadata(load_html(html), URL, DATE_PARAMS) for html in PAGES.values()]
    for name in FIELDS:
        assert any(getattr(f, name) for f in found), name
    authors = {f.author for f in found}
    assert "Lois Lane" in authors  # from JSON-LD, from the byline, from the author-name span
    assert "Dailyplanet" in {f.sitename for f in found}  # "@dailyplanet", tidied


def test_categories_and_licence_are_not_looked_for():
    """What page_metadata leaves out (they scan every link of the page; we keep neither)."""
    html = page(
        "<title>Flood plan</title>",
        '<div class="post-meta"><a href="/category/floods/">Floods</a></div>'
        '<a rel="license" href="https://creativecommons.org/licenses/by/4.0/">CC BY</a>',
    )
    theirs = extract_metadata(load_html(html), URL, DATE_PARAMS)
    assert (theirs.categories, theirs.license) == (["Floods"], "CC BY 4.0")
    ours = page_metadata(load_html(html), URL, DATE_PARAMS)
    assert (ours.categories, ours.license) == (None, None)


VISIBLE = {
    "an article": page("<title>Flood plan</title>", "<nav>Home · News</nav><h1>Flood plan</h1>"),
    "a head and no body": "<html><head><title>Only a title here</title></head></html>",
    "a frameset": "<html><head><title>t</title></head><frameset><frame src=a></frameset></html>",
    **{path.name: path.read_text() for path in sorted(DEMO_PAGES.glob("consent_*.html"))},
}


@pytest.mark.parametrize("html", VISIBLE.values(), ids=VISIBLE.keys())
def test_the_visible_text_of_the_parsed_tree_is_that_of_the_page(html: str):
    assert visible_text(load_html(html), html) == (html2txt(html) or "")
    assert visible_text(None, html) == (html2txt(html) or "")
