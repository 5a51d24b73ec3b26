"""What "Save to library" saves of a wall post, and a post as an article. Pure.

A person saving a post means the article it shares: a post that links one (a link card,
else its first link off the platform) saves that article through the ordinary import,
which fetches and extracts it. A post without a link is saved as itself, from what the
wall stored - its rich text, plain text, author and time; the platforms' post pages are
script shells that extraction cannot read (and the demo serves none), so nothing is
fetched. Either way the article goes through `process_scraped_article` in a one-item
import job, deduplicated by URL hash: the post's own URL is its permalink.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.articles.types import ScrapedArticle, Source
from app.core.i18n import _
from app.safe_content import (
    Document,
    Link,
    Paragraph,
    Quote,
    Text,
    from_builtins,
    http_url,
    to_text,
)
from app.safe_content.ast import children_of
from app.streams.platforms import PLATFORMS
from app.streams.types import ItemView

# A feed entry is a web page: its own link is the article (RSS/Atom).
PAGES = frozenset({"rss"})
# A video is what a person saves; the links in its description are the channel's.
ITSELF = frozenset({"youtube"})
TITLE_WORDS = 12  # a post's title: its author and this many of its first words ...
TITLE_CHARS = 120  # ... at most this many characters of them (a hostile 10,000-letter word)


@dataclass(frozen=True)
class SaveTarget:
    url: str  # what the import job reads
    as_post: bool  # True: the post itself, from the stored item (no fetch)

    @property
    def source(self) -> Source:
        return Source.WALL if self.as_post else Source.MANUAL


def save_target(item: ItemView) -> SaveTarget | None:
    """The article a save of this item stores; None when it has no web link at all."""
    permalink = http_url(item.url) or ""
    if item.provider in PAGES:
        return SaveTarget(permalink, as_post=False) if permalink else None
    if item.provider not in ITSELF:
        linked = linked_article(from_builtins(item.content), permalink)
        if linked:
            return SaveTarget(linked, as_post=False)
    return SaveTarget(permalink, as_post=True) if permalink else None


def linked_article(doc: Document, permalink: str) -> str:
    """The link card's target, else the first link that leaves the post's platform; ""."""
    own_host = urlsplit(permalink).hostname or ""
    card = next((href for block in doc.children if (href := _card_link(block))), "")
    links = (node.href for node in _walk(doc) if isinstance(node, Link))
    external = (u for u in (http_url(h) for h in links) if u and urlsplit(u).hostname != own_host)
    return http_url(card) or next(external, "")


def _card_link(block: object) -> str:
    """A link card is a quote whose first paragraph is one link (its title)."""
    if not isinstance(block, Quote) or not block.children:
        return ""
    head = block.children[0]
    if isinstance(head, Paragraph) and len(head.children) == 1:
        only = head.children[0]
        return only.href if isinstance(only, Link) else ""
    return ""


def _walk(node: object) -> Iterator[object]:
    """Every node under `node`, in reading order."""
    for child in children_of(node):
        yield child
        yield from _walk(child)


def first_words(text: str) -> str:
    """The opening of a text for a title, with "…" where it was cut."""
    words = text.split()
    opening = " ".join(words[:TITLE_WORDS])
    if len(opening) > TITLE_CHARS:
        return opening[: TITLE_CHARS - 1].rstrip() + "…"
    return opening + ("…" if len(words) > TITLE_WORDS else "")


def post_as_article(item: ItemView) -> ScrapedArticle:
    """The post itself as a library article: its stored tree, titled by author and words.
    A post of pictures alone says what they show: its media's alt texts and who posted them
    (an article without text is refused, and a picture's alt text is its words)."""
    platform = PLATFORMS.get(item.provider)
    site_name = platform.label if platform else item.provider
    content = from_builtins(item.content)
    words = item.plain_text
    if not to_text(content).strip():
        alts = alt_texts(item)
        lines = [*alts, media_credit(item, site_name)]
        content = Document(children=(*content.children, *_paragraphs(lines)))
        words = " ".join(alts)  # the credit would only repeat the author in the title
    opening = first_words(words)
    image = next((m.get("url", "") for m in item.media if m.get("kind") == "image"), "")
    return ScrapedArticle(
        url=item.url,
        content=content,
        source=Source.WALL,
        title=f"{item.author_handle}: {opening}" if opening else item.author_handle,
        byline=item.author_handle,
        site_name=site_name,
        published_at=item.created_at,
        lead_image=http_url(str(image)) or "",
        metadata={"provider": item.provider, "remote_id": item.remote_id},
    )


def alt_texts(item: ItemView) -> list[str]:
    """What the post's media show, as their authors described them (on one line each)."""
    alts = (" ".join(str(m.get("alt") or "").split()) for m in item.media)
    return [alt for alt in alts if alt]


def media_credit(item: ItemView, site_name: str) -> str:
    """Who posted what, where: the line that makes a post without words an article."""
    kinds = {m.get("kind") for m in item.media}
    names = {"author": item.author_handle, "platform": site_name}
    if "image" in kinds:
        return _("Photo by %(author)s on %(platform)s") % names
    if "video" in kinds:
        return _("Video by %(author)s on %(platform)s") % names
    return _("Post by %(author)s on %(platform)s") % names


def _paragraphs(lines: list[str]) -> tuple[Paragraph, ...]:
    return tuple(Paragraph(children=(Text(line),)) for line in lines)
