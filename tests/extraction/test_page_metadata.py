"""What read_html asks of trafilatura comes out as trafilatura's own calls would give it:
the metadata (page_metadata, page_author), the visible text (visible_text)."""

from __future__ import annotations

import hashlib
from copy import deepcopy

import pytest
from trafilatura import html2txt
from trafilatura.htmlprocessing import prune_unwanted_nodes
from trafilatura.metadata import extract_author, extract_metadata
from trafilatura.utils import load_html
from trafilatura.xpaths import AUTHOR_DISCARD_XPATHS, AUTHOR_XPATHS

from app.articles.extraction import DATE_PARAMS, visible_text
from app.articles.page_metadata import (
    AUTHOR_DISCARD_PATHS,
    AUTHOR_PATHS,
    page_author,
    page_metadata,
)
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

# Bylines for each of trafilatura's author XPaths, and the places it leaves out.
STORY_BYLINES = {
    "rel author": '<a rel="author" href="/lois">Lois Lane</a>',
    "author-name class": '<span class="story__author-name">Lois Lane</span>',
    "AuthorName class": '<div class="AuthorName">Lois Lane</div>',
    "rel me": "<p>Lois Lane<rel>me</rel></p>",
    "author element": "<author>Lois Lane</author>",
    "data-testid": '<a data-testid="AuthorURL" href="/lois">Lois Lane</a>',
    "byline class": '<p class="byline">By Lois Lane</p>',
    "itemprop": '<span itemprop="author creator">Lois Lane</span>',
    "zuozhe id": '<div id="zuozhe">Lois Lane</div>',
    "posted-by class": '<span class="entry posted-by">Lois Lane</span>',
    "Author id, any element": '<section id="mainAuthor">Lois Lane</section>',
    "writer class, any element": '<li class="writer">Lois Lane</li>',
    "data-component": '<em data-component="TopByline">Lois Lane</em>',
    "in the comments": '<div id="comments"><span class="author">Clark Kent</span></div>'
    '<p class="byline">Lois Lane</p>',
    "in a Comments class": '<div class="Comments-box"><span class="author">Clark Kent</span></div>',
    "in a commentlist id": '<section id="x-comment-list"><a class="author">Clark Kent</a></section>',
    "in a sidebar": '<span class="right sidebar"><span class="author">Clark Kent</span></span>'
    '<h4 class="author">Lois Lane</h4>',
    "in an article-share": '<div class="article-share"><p class="byline">Share it</p></div>',
    "in a figure": '<figure><span class="author">Photo: Kent</span></figure>',
    "with a date": '<p class="byline">Lois Lane <time>4 March 2025</time></p>',
    "a title class": '<div class="title"><span class="author">Clark Kent</span></div>',
    "a Figure component": '<div data-component="Figure"><span class="author">Kent</span></div>',
    "none": "<p>No byline here.</p>",
}
PAGES.update(
    {f"byline: {name}": page("<title>Flood plan</title>", f"<h1>Flood plan</h1>{byline}")
     for name, byline in STORY_BYLINES.items()}
)  # fmt: skip


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


@pytest.mark.parametrize("html", PAGES.values(), ids=PAGES.keys())
def test_the_author_paths_select_what_trafilaturas_select(html: str):
    tree = load_html(html)
    assert page_author(tree) == extract_author(tree)
    for ours, theirs in zip(AUTHOR_DISCARD_PATHS, AUTHOR_DISCARD_XPATHS, strict=True):
        assert ours(tree) == theirs(tree)
    pruned = prune_unwanted_nodes(deepcopy(tree), AUTHOR_DISCARD_XPATHS)
    for ours, theirs in zip(AUTHOR_PATHS, AUTHOR_XPATHS, strict=True):
        assert ours(pruned) == theirs(pruned)


def test_every_author_path_finds_a_byline_and_the_discarded_places_are_left_out():
    found = {
        name: page_author(load_html(page("<title>Flood plan</title>", byline)))
        for name, byline in STORY_BYLINES.items()
    }
    assert {name for name, author in found.items() if "Lois Lane" in (author or "")} == {
        name for name in STORY_BYLINES if "Lois Lane" in STORY_BYLINES[name]
    }
    assert not any("Kent" in (author or "") for author in found.values())


def test_the_author_paths_are_translated_from_trafilaturas_own():
    """page_author's XPaths are trafilatura 2.3.1's, rewritten: when trafilatura changes its
    own, translate them again (app/articles/page_metadata.py) and record the new digest."""
    paths = "\n".join(x.path for x in AUTHOR_XPATHS + AUTHOR_DISCARD_XPATHS)
    assert hashlib.sha256(paths.encode()).hexdigest() == (
        "bd5f280624916a837f627a558a6f87d6ebde80d97a00908c8a856c7b7b9eae82"
    )


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
