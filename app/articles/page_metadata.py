"""A page's metadata as trafilatura finds it, without the parts we never read.

`trafilatura.bare_extraction(with_metadata=True)` runs `extract_metadata`, whose
categories, tags and licence test every link of the page against several XPaths: about
5 ms of a 100 KB news page's 30 ms of reading, for fields we do not keep. `page_metadata`
makes `extract_metadata`'s other calls in its order (trafilatura 2.3.1), so title,
author, site name, date, image and description come out the same
(tests/extraction/test_page_metadata.py holds it to `extract_metadata`).
"""

from __future__ import annotations

import logging
from typing import Any

from lxml.html import HtmlElement
from trafilatura.metadata import (
    META_URL,
    Document,
    examine_meta,
    extract_author,
    extract_meta_json,
    extract_sitename,
    extract_title,
    extract_url,
    find_date,
)

log = logging.getLogger(__name__)


def page_metadata(tree: HtmlElement, url: str, date_params: dict[str, Any]) -> Document:
    """`extract_metadata(tree, url, date_params)` without categories, tags, licence and
    hostname: the meta tags, then JSON-LD, then the page's own elements where both said
    nothing. `tree` is only read."""
    found = examine_meta(tree)
    if found.author and " " not in found.author:  # trafilatura's rule: one word is no name
        found.author = None
    try:
        found = extract_meta_json(tree, found)
    except Exception as error:  # trafilatura guards its JSON-LD reader the same way
        log.warning("error in JSON metadata extraction: %s", error)
    if not found.title:
        found.title = extract_title(tree)
    if not found.author:
        found.author = extract_author(tree)
    if not found.url:
        found.url = extract_url(tree, url)
    found.date = find_date(tree, **{**date_params, "url": found.url})
    found.sitename = _sitename(found.sitename or extract_sitename(tree), found.url)
    found.clean_and_trim()
    return found


def _sitename(named: str | None, url: str | None) -> str | None:
    """The site's name as trafilatura tidies it ("@planet" -> "Planet"), else the URL's host."""
    if named:
        named = named.lstrip("@")
        if named and "." not in named and not named[0].isupper():
            named = named.title()
        return named
    host = META_URL.match(url) if url else None
    return host[1] if host else named
