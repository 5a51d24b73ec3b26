"""Getting a page's bytes right: what kind of document it is and how its text is encoded.

Pure functions, no I/O. `decode_html` follows what browsers do (the WHATWG
encoding sniffing order), because a page's author tested it in a browser:
a byte order mark wins, then the HTTP header, then a `<meta>` declaration
near the top, then detection. Labels are mapped the way browsers map them:
a page that says ISO-8859-1 is decoded as windows-1252 (curly quotes and
the euro sign live in 0x80-0x9F, and real pages use them), Shift_JIS as
Windows-31J.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import unquote, urlsplit

import charset_normalizer

# How far into the body a <meta> charset declaration is looked for. The
# standard says 1024 bytes; real pages put long <script> blocks first.
META_PRESCAN_BYTES = 8192
# Detection reads at most this much: enough for a confident guess, bounded cost.
DETECT_BYTES = 256 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Inside a <meta ...> tag: charset="x" or content="text/html; charset=x".
_META_TAG = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_CHARSET_IN_META = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_:.+\-]+)""", re.IGNORECASE)

# Python codec names (after codecs.lookup) a browser would decode differently.
_BROWSER_CODEC = {
    "ascii": "cp1252",
    "latin-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
    "big5": "big5hkscs",
}


def codec_for(label: str | None) -> str | None:
    """The Python codec a browser would use for a charset label; None if unknown."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except LookupError:
        return None
    return _BROWSER_CODEC.get(name, name)


def meta_charset(content: bytes) -> str | None:
    """The charset a `<meta>` tag near the top declares, as a Python codec."""
    head = content[:META_PRESCAN_BYTES]
    for tag in _META_TAG.finditer(head):
        found = _CHARSET_IN_META.search(tag.group(0))
        if found:
            codec = codec_for(found.group(1).decode("ascii", "replace"))
            if codec is None:
                continue
            # A <meta> can only be read if the bytes are ASCII-compatible, so a
            # UTF-16 declaration there is a mistake; browsers read UTF-8.
            return "utf-8" if codec.startswith("utf-16") else codec
    return None


def detect_charset(content: bytes) -> str:
    """The encoding of undeclared bytes: UTF-8 when they decode as such, else a guess."""
    sample = content[:DETECT_BYTES]
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as error:
        # A multi-byte character cut by the sample's end is still UTF-8.
        if error.start < len(sample) - 4:
            best = charset_normalizer.from_bytes(sample).best()
            return codec_for(best.encoding if best else None) or "cp1252"
    return "utf-8"


@dataclass(frozen=True)
class Decoded:
    text: str
    charset: str  # the Python codec used
    declared_by: str  # "bom" | "header" | "meta" | "detected"


def decode_html(content: bytes, header_charset: str | None) -> Decoded:
    """An HTML body as text, in the order browsers decide its encoding."""
    for bom, codec in _BOMS:
        if content.startswith(bom):
            return Decoded(content[len(bom) :].decode(codec, "replace"), codec, "bom")
    for declared, source in (
        (codec_for(header_charset), "header"),
        (meta_charset(content), "meta"),
    ):
        if declared is not None:
            return Decoded(content.decode(declared, "replace"), declared, source)
    codec = detect_charset(content)
    return Decoded(content.decode(codec, "replace"), codec, "detected")


class Kind(StrEnum):
    """What a response is, for extraction."""

    HTML = "html"
    PDF = "pdf"
    OTHER = "other"


_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Types servers send when they do not know; the body decides then.
_UNSURE_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream", "text/plain"})
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)


def kind_of(media_type: str | None, head: bytes) -> Kind:
    """HTML, PDF or something else, from the Content-Type and the first bytes."""
    media = (media_type or "").lower()
    if media in _HTML_TYPES:
        return Kind.HTML
    if media == "application/pdf" or media == "application/x-pdf":
        return Kind.PDF
    if media in _UNSURE_TYPES:
        if head.lstrip()[:5] == b"%PDF-":
            return Kind.PDF
        if _HTML_START.match(head[:1024].lstrip(codecs.BOM_UTF8)):
            return Kind.HTML
    return Kind.OTHER


_FILENAME_STAR = re.compile(r"filename\*\s*=\s*(?:[\w-]+)?'[^']*'([^;]+)", re.I)
_FILENAME = re.compile(r"""filename\s*=\s*(?:"([^"]*)"|([^;]+))""", re.I)


def filename_of(content_disposition: str | None, url: str) -> str:
    """The file name a download announces, else the last segment of its URL."""
    value = content_disposition or ""
    star = _FILENAME_STAR.search(value)
    if star:
        name = unquote(star.group(1).strip(), errors="replace")
    else:
        plain = _FILENAME.search(value)
        name = (plain.group(1) or plain.group(2) or "").strip() if plain else ""
    if not name:
        name = unquote(urlsplit(url).path.rstrip("/").rpartition("/")[2], errors="replace")
    # Only the name: never a path someone smuggled into the header.
    return name.replace("\\", "/").rpartition("/")[2].strip()


def title_from_filename(name: str) -> str:
    """`Annual_report-2024.pdf` -> `Annual report 2024`."""
    stem = re.sub(r"\.pdf$", "", name, flags=re.I)
    return " ".join(re.sub(r"[_\-+]+", " ", stem).split())
