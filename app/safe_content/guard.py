"""Defuse markup that would make the HTML5 tree builder slow.

html5ever (inside nh3) does quadratic work on some shapes: thousands of
nested blocks (every block start tag walks the stack of open elements) and
thousands of formatting elements with distinct attributes (the "Noah's Ark"
check and the reconstruction of active formatting elements). A 30 KB input
can cost half a second and a 5 MB output. Input with many tags is therefore
first re-written by this linear tokenizer into markup html5ever handles in
linear time: only the tags and attributes the builder reads, well nested,
at most GUARD_MAX_DEPTH deep, formatting elements without attributes, every
other "<" escaped. This pass is not the sanitiser: nh3 and then the
renderer still decide what is safe; it only bounds the work.
"""

from __future__ import annotations

import re

GUARD_MAX_DEPTH = 64
# Tag-like starts ("<" + letter, "/", "!" or "?") above which input is defused.
# Below it html5ever's worst case stays around ten milliseconds.
GUARD_TAG_THRESHOLD = 400

_MARKUP_START = re.compile(r"<[A-Za-z/!?]")

# One token at a "<", modelled on the HTML tokenizer. Every branch can end at
# end of input, so a match always succeeds once it starts: no rescans. The
# attribute loop is possessive: no backtracking.
_WS = r"\t\n\f\r "
_ATTR = rf"""(?>[{_WS}/]+|[^{_WS}/>][^{_WS}/>=]*(?:[{_WS}]*=[{_WS}]*(?:"[^"]*"?|'[^']*'?|[^{_WS}>]*))?)"""
_TOKEN = re.compile(
    rf"""<(?:
        !--(?:>|->|.*?(?:--!?>|\Z))                            # comment
      | [!?][^>]*(?:>|\Z)                                      # doctype, CDATA, PI: bogus comment
      | /(?:>|[^A-Za-z>][^>]*(?:>|\Z))                         # "</>" or a bogus end
      | (?P<end>/)?(?P<name>[A-Za-z][^{_WS}/>]*)(?P<attrs>{_ATTR}*+)(?:>|\Z)
    )""",
    re.S | re.X,
)
_ATTR_ITEM = re.compile(
    rf"""(?P<name>[^{_WS}/>][^{_WS}/>=]*)(?:[{_WS}]*=[{_WS}]*(?:"(?P<dq>[^"]*)"?|'(?P<sq>[^']*)'?|(?P<uq>[^{_WS}>]*)))?"""
)

# Elements whose text the tokenizer must skip as one run (script data, RAWTEXT, RCDATA).
_RAW_TEXT = frozenset(
    {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title"}
)
_RAW_END = {name: re.compile(rf"</{name}(?=[{_WS}/>]|\Z)", re.I) for name in _RAW_TEXT}
# Elements whose whole subtree is dropped (their content is not prose).
_DROP = frozenset({"template", "svg", "math", "object", "select", "head", "audio", "video"})
_VOID = frozenset({"br", "img", "hr", "wbr"})
# The attributes the builder reads; formatting elements get none (see above).
_KEEP_ATTRS = {"a": ("href", "class"), "img": ("src", "alt"), "span": ("class",)}
KEEP_TAGS = frozenset(
    {
        "a", "b", "strong", "em", "i", "code", "pre", "p", "br", "hr", "span", "img",
        "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
        "figure", "figcaption", "table", "thead", "tbody", "tfoot", "tr", "td", "th",
        "caption", "div", "section", "article", "main", "header", "footer", "aside",
        "nav", "dl", "dt", "dd", "address", "details", "summary",
    }
)  # fmt: skip


def needs_guard(html: str) -> bool:
    """True when `html` has enough markup that html5ever's worst case matters."""
    if html.count("<") <= GUARD_TAG_THRESHOLD:
        return False  # counted fast: there are no more tag starts than "<"
    for count, _ in enumerate(_MARKUP_START.finditer(html), start=1):
        if count > GUARD_TAG_THRESHOLD:
            return True
    return False


def _attributes(tag: str, attrs: str) -> str:
    wanted = _KEEP_ATTRS.get(tag)
    if not wanted:
        return ""
    seen: dict[str, str] = {}
    for item in _ATTR_ITEM.finditer(attrs):
        name = item.group("name").lower()
        if name in wanted and name not in seen:  # HTML keeps the first duplicate
            value = item.group("dq") or item.group("sq") or item.group("uq") or ""
            # Character references are left for html5ever to decode, exactly
            # as it would have in the original; only the quote needs escaping.
            seen[name] = value.replace('"', "&quot;")
    return "".join(f' {name}="{value}"' for name, value in seen.items())


class _Writer:
    """Re-emits kept tags well nested and depth-capped."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.open: list[str] = []
        self.skipped: dict[str, int] = {}  # start tags not emitted (too deep), by name

    def text(self, text: str) -> None:
        self.out.append(text.replace("\x00", "").replace("<", "&lt;"))

    def start(self, tag: str, attrs: str) -> None:
        if tag in _VOID:
            self.out.append(f"<{tag}{_attributes(tag, attrs)}>")
        elif len(self.open) >= GUARD_MAX_DEPTH:
            self.skipped[tag] = self.skipped.get(tag, 0) + 1
        else:
            self.open.append(tag)
            self.out.append(f"<{tag}{_attributes(tag, attrs)}>")

    def end(self, tag: str) -> None:
        if self.skipped.get(tag):
            self.skipped[tag] -= 1
        elif tag in self.open:
            while self.open:
                name = self.open.pop()
                self.out.append(f"</{name}>")
                if name == tag:
                    break

    def result(self) -> str:
        self.out.extend(f"</{name}>" for name in reversed(self.open))
        return "".join(self.out)


def defuse(html: str) -> str:
    """Re-write `html` into bounded, well-nested markup with the same prose."""
    writer = _Writer()
    drop_name: str | None = None  # the element whose subtree is being dropped
    drop_depth = 0
    pos, length = 0, len(html)
    while pos < length:
        lt = html.find("<", pos)
        if lt < 0:
            lt = length
        if lt > pos and drop_name is None:
            writer.text(html[pos:lt])
        if lt >= length:
            break
        token = _TOKEN.match(html, lt)
        if token is None:  # "<" not starting markup, e.g. "a < b"
            if drop_name is None:
                writer.text("<")
            pos = lt + 1
            continue
        pos = token.end()
        name = token.group("name")
        if name is None:
            continue  # comment, doctype or bogus comment
        tag = name.lower()
        if token.group("end"):
            if drop_name is None:
                writer.end(tag)
            elif tag == drop_name:
                drop_depth -= 1
                if drop_depth == 0:
                    drop_name = None
            continue
        if tag == "plaintext":  # everything after it is text; the builder drops it
            break
        if tag in _RAW_TEXT:  # its content is never markup; skip it whole
            close = _RAW_END[tag].search(html, pos)
            pos = close.start() if close else length
        elif drop_name is not None:
            drop_depth += tag == drop_name
        elif tag in _DROP:
            drop_name, drop_depth = tag, 1
        elif tag in KEEP_TAGS:
            writer.start(tag, token.group("attrs"))
    return writer.result()
