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

# One token at every "<", modelled on the HTML tokenizer, for `re.split`: the
# captured groups say what it is (all None for markup that writes nothing).
# Every alternative starts with the "<", so the split finds them at C speed.
# Every branch can end at end of input, so a match always succeeds once it
# starts: no rescans. The attribute loops are possessive: no backtracking.
_WS = r"\t\n\f\r "
_ATTR = rf"""(?>[{_WS}/]+|[^{_WS}/>][^{_WS}/>=]*(?:[{_WS}]*=[{_WS}]*(?:"[^"]*"?|'[^']*'?|[^{_WS}>]*))?)"""
# Elements whose text the tokenizer must skip as one run (script data, RAWTEXT, RCDATA).
_RAW_TEXT = frozenset(
    {"script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title"}
)
_RAW_NAMES = "|".join(sorted(_RAW_TEXT))
_TOKEN = re.compile(
    rf"""<(?:
        !--(?:>|->|.*?(?:--!?>|\Z))                            # comment
      | [!?][^>]*(?:>|\Z)                                      # doctype, CDATA, PI: bogus comment
      | /(?:>|[^A-Za-z>][^>]*(?:>|\Z))                         # "</>" or a bogus end
      | /([A-Za-z][^{_WS}/>]*){_ATTR}*+(?:>|\Z)                # 1: an end tag's name
      | ((?i:{_RAW_NAMES}))(?![^{_WS}/>]){_ATTR}*+(?:>|\Z)      # 2: raw text: its content,
        (?i:(?:[^<]++|<(?!/\2(?:[{_WS}/>]|\Z)))*+)          #    never markup, up to its end tag
      | ([A-Za-z][^{_WS}/>]*)({_ATTR}*+)(?:>|\Z)               # 3, 4: a start tag, its attributes
      | ()                                                     # 5: "" for a "<" starting no markup
    )""",
    re.S | re.X,
)
_ATTR_ITEM = re.compile(
    rf"""(?P<name>[^{_WS}/>][^{_WS}/>=]*)(?:[{_WS}]*=[{_WS}]*(?:"(?P<dq>[^"]*)"?|'(?P<sq>[^']*)'?|(?P<uq>[^{_WS}>]*)))?"""
)

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
    for raw_name, dq, sq, uq in _ATTR_ITEM.findall(attrs):
        name = raw_name.lower()
        if name in wanted and name not in seen:  # HTML keeps the first duplicate
            value = dq or sq or uq
            # Character references are left for html5ever to decode, exactly
            # as it would have in the original; only the quote needs escaping.
            seen[name] = value.replace('"', "&quot;")
    return "".join(f' {name}="{value}"' for name, value in seen.items())


def defuse(html: str) -> str:
    """Re-write `html` into bounded, well-nested markup with the same prose.

    One `re.split` cuts the input at every "<" (in C) and one loop with its
    state in locals reads the pieces: it runs once per tag of every big input.
    """
    out: list[str] = []
    write = out.append
    open_tags: list[str] = []  # kept elements written and not yet closed, innermost last
    skipped: dict[str, int] = {}  # start tags not written (too deep), by name
    drop_name: str | None = None  # the element whose subtree is being dropped
    drop_depth = 0
    parts = _TOKEN.split(html)
    if parts[0]:
        write(parts[0].replace("\x00", ""))  # text before the first "<" holds none
    for end, _raw, start, attrs, lone, text in zip(
        parts[1::6], parts[2::6], parts[3::6], parts[4::6], parts[5::6], parts[6::6], strict=True
    ):
        if lone is not None:  # "<" not starting markup, e.g. "a < b"
            if drop_name is None:
                write("&lt;")
        elif end:
            tag = end.lower()
            if drop_name is not None:
                if tag == drop_name:
                    drop_depth -= 1
                    if drop_depth == 0:
                        drop_name = None
            elif skipped.get(tag):
                skipped[tag] -= 1
            elif tag in open_tags:  # close it and every element opened inside it
                while open_tags:
                    closed = open_tags.pop()
                    write(f"</{closed}>")
                    if closed == tag:
                        break
        elif start:  # (a raw-text element, `_raw`, is skipped whole)
            tag = start.lower()
            if tag == "plaintext":  # everything after it is text; the builder drops it
                break
            if drop_name is not None:
                drop_depth += tag == drop_name
            elif tag in _DROP:
                drop_name, drop_depth = tag, 1
            elif tag in KEEP_TAGS:
                if tag in _VOID:
                    write(f"<{tag}{_attributes(tag, attrs)}>")
                elif len(open_tags) >= GUARD_MAX_DEPTH:
                    skipped[tag] = skipped.get(tag, 0) + 1
                else:
                    open_tags.append(tag)
                    write(f"<{tag}{_attributes(tag, attrs)}>")
        if text and drop_name is None:  # text holds no "<": it ends at the next one
            write(text.replace("\x00", ""))
    out.extend(f"</{name}>" for name in reversed(open_tags))
    return "".join(out)
