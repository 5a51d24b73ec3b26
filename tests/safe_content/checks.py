"""Structural checks on renderer output, by parsing it rather than by substring."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

# Every element and attribute the renderer may write. Anything else is a leak.
ALLOWED_ATTRS: dict[str, frozenset[str]] = {
    "div": frozenset({"class", "data-ignore"}),
    "span": frozenset({"data-ignore"}),
    "p": frozenset(),
    "h2": frozenset(),
    "h3": frozenset(),
    "h4": frozenset(),
    "strong": frozenset(),
    "em": frozenset(),
    "code": frozenset(),
    "pre": frozenset(),
    "blockquote": frozenset(),
    "ul": frozenset(),
    "ol": frozenset(),
    "li": frozenset(),
    "br": frozenset(),
    "a": frozenset({"href", "rel", "referrerpolicy"}),
    "img": frozenset({"src", "alt", "loading", "decoding", "referrerpolicy"}),
}
VOID = frozenset({"br", "img"})
LINK_REL = "nofollow noopener noreferrer ugc"
_TAG_AT_LT = re.compile(r"<(/?)([a-z0-9]+)[ >]")


def fake_media_url(url: str) -> str:
    """Stands in for app/media's signer: a same-origin /media/ path."""
    return "/media/sig/" + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.problems: list[str] = []
        self.depth = 0
        self.roots = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, attrs))
        if self.depth == 0:
            self.roots += 1
        if tag not in VOID:
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing <{tag}/>")
        self.elements.append((tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth == 0 and data:
            self.problems.append(f"text outside the wrapper: {data!r}")

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("declaration")

    def handle_pi(self, data: str) -> None:
        self.problems.append("processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.problems.append("unknown declaration")


def _attribute_problems(tag: str, name: str, value: str | None) -> list[str]:
    problems = []
    if name not in ALLOWED_ATTRS.get(tag, frozenset()):
        problems.append(f"attribute {name!r} on <{tag}>")
    if name.startswith("on") or name == "style":
        problems.append(f"dangerous attribute {name!r}")
    if name.startswith("data-") and (name != "data-ignore" or value is not None):
        problems.append(f"data attribute {name}={value!r}")
    if name == "class" and (tag, value) != ("div", "rich"):
        problems.append(f"class {value!r} on <{tag}>")
    if name == "href":
        parts = urlsplit(value or "")
        if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
            problems.append(f"href {value!r}")
    if name == "src" and not (value or "").startswith("/media/"):
        problems.append(f"img src {value!r} is not a proxied /media/ path")
    if name == "rel" and value != LINK_REL:
        problems.append(f"rel {value!r}")
    if name == "referrerpolicy" and value != "no-referrer":
        problems.append(f"referrerpolicy {value!r}")
    return problems


def problems_in(markup: str) -> list[str]:
    """Everything wrong with `markup` as renderer output; empty when it is safe."""
    problems: list[str] = []
    text = str(markup)
    if not (
        (text.startswith('<div class="rich" data-ignore>') and text.endswith("</div>"))
        or (text.startswith("<span data-ignore>") and text.endswith("</span>"))
    ):
        problems.append("output is not wrapped in a data-ignore element")
    if "<script" in text.lower():
        problems.append("<script")
    # Lexically, every "<" must open or close one of our own tags.
    lt_count = text.count("<")
    known = [m for m in _TAG_AT_LT.finditer(text) if m.group(2) in ALLOWED_ATTRS]
    if lt_count != len(known):
        problems.append(f"{lt_count - len(known)} '<' that do not start an allowed tag")
    collector = _Collector()
    collector.feed(text)
    collector.close()
    problems.extend(collector.problems)
    if collector.roots != 1 or collector.depth != 0:
        problems.append("output is not exactly one balanced wrapper element")
    for tag, attrs in collector.elements:
        if tag not in ALLOWED_ATTRS:
            problems.append(f"element <{tag}>")
        names = [name for name, _ in attrs]
        if len(names) != len(set(names)):
            problems.append(f"duplicate attributes on <{tag}>")
        for name, value in attrs:
            problems.extend(_attribute_problems(tag, name, value))
        if tag == "a" and dict(attrs).get("rel") != LINK_REL:
            problems.append("link without our rel")
    return problems


def elements_in(markup: str) -> list[tuple[str, dict[str, str | None]]]:
    collector = _Collector()
    collector.feed(str(markup))
    collector.close()
    return [(tag, dict(attrs)) for tag, attrs in collector.elements]
