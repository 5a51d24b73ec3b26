"""What a proxied file really is, decided from its declared type and its first bytes.

Both must agree that it is allowlisted media: a server's Content-Type alone
is not trusted (an HTML or SVG page labelled image/png is refused), and the
bytes alone are not either (a text/html answer is refused whatever it
starts with). The file is served with the type its bytes show, so the
browser, told `nosniff`, treats it as exactly that.
"""

from __future__ import annotations

SNIFF_BYTES = 64  # enough for every signature below, the ftyp brands and the EBML DocType

# What we serve. Never SVG or HTML: both can carry script.
ALLOWED_TYPES = frozenset(
    {
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/webp",
        "image/avif",
        "video/mp4",
        "video/webm",
    }
)
# Declared types we accept: the allowlist plus old spellings of JPEG still seen on the web.
DECLARED_TYPES = ALLOWED_TYPES | {"image/jpg", "image/pjpeg"}

_AVIF_BRANDS = frozenset({b"avif", b"avis"})
# ISO-BMFF images that are not AVIF (HEIC and friends): browsers do not show them.
_HEIF_BRANDS = frozenset(
    {b"mif1", b"msf1", b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs"}
)


def _iso_bmff(head: bytes) -> str | None:
    """AVIF or MP4 from an `ftyp` box: size, 'ftyp', major brand, minor version, brands."""
    size = int.from_bytes(head[:4], "big")
    major = head[8:12]
    end = min(size, len(head)) if size >= 16 else 16
    compatible = {head[i : i + 4] for i in range(16, end - 3, 4)}
    if major in _AVIF_BRANDS or (major in _HEIF_BRANDS and compatible & _AVIF_BRANDS):
        return "image/avif"
    if major in _HEIF_BRANDS or len(major) < 4:
        return None
    return "video/mp4"


def _webm_doctype(head: bytes) -> bool:
    """EBML's DocType element (id 0x4282, a size of 1-8 bytes) says "webm", not "matroska"."""
    at = head.find(b"\x42\x82", 4)
    return at != -1 and b"webm" in head[at + 2 : at + 14]


def sniff(head: bytes) -> str | None:
    """The allowlisted type `head` (a file's first bytes) starts, or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:8] == b"ftyp":
        return _iso_bmff(head)
    if head.startswith(b"\x1a\x45\xdf\xa3") and _webm_doctype(head):
        return "video/webm"
    return None


def served_type(declared: str | None, head: bytes) -> str | None:
    """The type to serve a file as, or None to refuse it."""
    if declared is None or declared.lower() not in DECLARED_TYPES:
        return None
    return sniff(head)
