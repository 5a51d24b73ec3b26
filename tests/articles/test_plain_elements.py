"""Page readers parse into plain HtmlElements (extraction.plain_elements): a page reads the
same as with lxml.html's own element classes, forms and all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lxml.html import FormElement, HtmlElementClassLookup
from trafilatura.utils import HTML_PARSER, load_html

from app.articles.extraction import ExtractionError, plain_elements, read_html
from tests.fakes.site import DEMO_PAGES

# A page whose article sits inside a form (ASP.NET WebForms): trafilatura keeps such a form.
FORM_PAGE = """<html><head><title>Council budget</title></head><body>
<form id="aspnetForm" action="/post"><input type="hidden" name="__VIEWSTATE" value="x">
<nav><a href="/">Home</a> <a href="/news">News</a></nav>
<article><h1>Council passes the budget</h1>
<p>The city council passed next year's budget on Tuesday after a long debate about the
cost of repairing the bridges over the river and the schools in the northern districts.</p>
<p>Members of the opposition said the plan leaves too little for public transport, while
the mayor said the repairs could not wait another winter and thanked the finance team.</p>
<p>The budget takes effect in January; the first repairs are to start in the spring.</p>
</article>
<form action="/search"><input name="q"><button>Search</button></form>
</form></body></html>"""


def pages() -> list[tuple[str, str]]:
    found = [(path.name, path.read_text(encoding="utf-8")) for path in DEMO_PAGES.glob("*.html")]
    return [*sorted(found), ("form wrapper", FORM_PAGE)]


def parsed_form_class() -> type:
    tree = load_html("<html><body><form><input name='q'></form><p>x</p></body></html>")
    return type(tree.find(".//form"))


@pytest.fixture
def lookup() -> Iterator[None]:
    """Leave the parser's element classes as the test found them."""
    plain_before = parsed_form_class() is not FormElement
    yield
    if plain_before:
        plain_elements()
    else:
        HTML_PARSER.set_element_class_lookup(HtmlElementClassLookup())


def read_all() -> list[object]:
    results: list[object] = []
    for name, html in pages():
        try:
            results.append(read_html(html.encode(), url=f"https://news.example/{name}",
                                     final_url=f"https://news.example/{name}"))  # fmt: skip
        except ExtractionError as error:
            results.append((error.failure, error.reason))
    return results


def test_pages_read_the_same_with_plain_elements(lookup):
    HTML_PARSER.set_element_class_lookup(HtmlElementClassLookup())
    assert parsed_form_class() is FormElement
    with_lxml_classes = read_all()
    plain_elements()
    assert parsed_form_class() is not FormElement
    assert read_all() == with_lxml_classes
    assert any("budget" in str(result) for result in with_lxml_classes)  # the form page read
