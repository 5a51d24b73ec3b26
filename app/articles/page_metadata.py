"""A page's metadata as trafilatura finds it, without the parts we never read.

`trafilatura.bare_extraction(with_metadata=True)` runs `extract_metadata`, whose
categories, tags and licence test every link of the page against several XPaths: about
5 ms of a 100 KB news page's 30 ms of reading, for fields we do not keep. `page_metadata`
makes `extract_metadata`'s other calls in its order (trafilatura 2.3.1), so title,
author, site name, date, image and description come out the same
(tests/extraction/test_page_metadata.py holds it to `extract_metadata`). Its byline
search in the page (`page_author`) runs trafilatura's XPaths rewritten to stay in C.
"""

from __future__ import annotations

import logging
from copy import deepcopy
from typing import Any

from lxml.etree import XPath
from lxml.html import HtmlElement
from trafilatura.htmlprocessing import prune_unwanted_nodes
from trafilatura.json_metadata import normalize_authors
from trafilatura.metadata import (
    META_URL,
    Document,
    examine_meta,
    extract_meta_json,
    extract_metainfo,
    extract_sitename,
    extract_title,
    extract_url,
    find_date,
)
from trafilatura.xpaths import AUTHOR_DISCARD_XPATHS

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
        found.author = page_author(tree)
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


# Author -------------------------------------------------------------------------
#
# trafilatura's `extract_author` looks for a byline in the page with XPaths like
# `//*[self::a or self::div ...][@id='author' or re:test(@class, 'author|...')]`: libxml2
# evaluates each element's tests as node-sets, and lxml calls Python for every EXSLT
# regular expression - ~5 ms per XPath on a 100 KB page, 18 ms for the four, on the half
# of news pages whose meta tags and JSON-LD name no author. The same XPaths written from
# the attributes up (`//@class[contains(., 'author') or ...]/parent::*[self::a or ...]`),
# each pattern's alternatives as starts-with() and contains(), select the same elements,
# in C: 9 ms. From trafilatura 2.3.1's AUTHOR_XPATHS and AUTHOR_DISCARD_XPATHS;
# tests/extraction/test_page_metadata.py fails when trafilatura changes those.


def _matching(
    attribute: str, *parts: str, equal: tuple[str, ...] = (), starts: tuple[str, ...] = ()
) -> str:
    """`attribute` (a path) where its value is one of `equal`, starts with one of `starts`
    or contains one of `parts`: re:test(attribute, 'a|b|^c') without a regex."""
    tests = [f". = '{e}'" for e in equal] + [f"starts-with(., '{s}')" for s in starts]
    tests += [f"contains(., '{p}')" for p in parts]
    return f"{attribute}[{' or '.join(tests)}]"


def _of(*tags: str) -> str:
    return "parent::*[" + " or ".join(f"self::{tag}" for tag in tags) + "]"


AUTHOR_PATHS = [
    # specific and almost specific
    XPath(
        "(" + " | ".join([
            _matching("//@rel", equal=("author",)),
            _matching("//@id", equal=("author",)),
            _matching("//@class", "author-name", "authorname", "AuthorName", "authorName",
                      equal=("author",)),
            _matching("//@itemprop", equal=("author name",)),
            _matching("//rel", equal=("me",)),  # sic: rel='me', a child <rel>me</rel>
            _matching("//@data-testid", equal=("AuthorCard", "AuthorURL")),
        ]) + ")/" + _of("a", "address", "div", "link", "p", "span", "strong") + " | //author"
    ),
    # almost generic and generic
    XPath(
        "(" + " | ".join([
            _matching("//@class", "author", "channel-name", "zuozhe", "bianji", "xiaobian",
                      "submitted-by", "posted-by", "journalist-name",
                      equal=("byline", "username", "byl", "BBL")),
            _matching("//@itemprop", "author"),
            _matching("//@id", "author", "zuozhe", "bianji", "xiaobian"),
        ]) + ")/" + _of("a", "div", "h3", "h4", "p", "span")
    ),
    # last resort: any element
    XPath(
        "(" + " | ".join([
            _matching("//@data-component", "Byline"),
            _matching("//@itemprop", "author"),
            _matching("//@id", "Author", "author"),
            _matching("//@class", "Author", "author", "screenname", "writer", "Byline", "byline"),
        ]) + ")/.."
    ),
]  # fmt: skip

AUTHOR_DISCARD_PATHS = [
    # `descendant::*/@id`, not `.//@id`: as `.//*[...]`, never the element itself
    XPath(
        "(" + " | ".join([
            _matching("descendant::*/@id", "commentlist", "comment-list", "ProductReviews",
                      equal=("comments",), starts=("comments",)),
            _matching("descendant::*/@class", "commentlist", "comments-list", "sidebar",
                      "is-hidden", "quote", "embedly-instagram", "article-share",
                      "article-support", "print", "category", "meta-date", "meta-reviewer",
                      equal=("comments", "title", "date"), starts=("Comments", "comments")),
            _matching("descendant::*/@data-component", "Figure"),
        ]) + ")/" + _of("a", "div", "section", "span")
    ),
    AUTHOR_DISCARD_XPATHS[1],  # //time|//figure, in C already
]  # fmt: skip


def page_author(tree: HtmlElement) -> str | None:
    """`trafilatura.metadata.extract_author(tree)`, its XPaths in C."""
    subtree = prune_unwanted_nodes(deepcopy(tree), AUTHOR_DISCARD_PATHS)
    author = extract_metainfo(subtree, AUTHOR_PATHS, len_limit=120)
    return normalize_authors(None, author) if author else author
