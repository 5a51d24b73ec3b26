"""The first bytes of real files of each kind, padded: enough for the proxy's sniffing."""

from __future__ import annotations

PAD = bytes(range(256)) * 4

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06" + PAD
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + PAD
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00" + PAD
WEBP = b"RIFF" + (4 + 8 + len(PAD)).to_bytes(4, "little") + b"WEBPVP8 " + PAD
AVIF = (32).to_bytes(4, "big") + b"ftypavif" + bytes(4) + b"avifmif1miafMA1B" + PAD
MP4 = (32).to_bytes(4, "big") + b"ftypisom" + b"\x00\x00\x02\x00" + b"isomiso2avc1mp41" + PAD
# EBML header: version fields, then DocType (0x4282) of size 4: "webm".
WEBM = (
    b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08"
    b"\x42\x82\x84webm\x42\x87\x81\x04\x42\x85\x81\x02" + PAD
)
MKV = WEBM.replace(b"\x42\x82\x84webm", b"\x42\x82\x88matroska")
HEIC = (24).to_bytes(4, "big") + b"ftypheic" + bytes(4) + b"mif1heic" + PAD
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
HTML = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"

ALLOWED = {
    "image/png": PNG,
    "image/jpeg": JPEG,
    "image/gif": GIF,
    "image/webp": WEBP,
    "image/avif": AVIF,
    "video/mp4": MP4,
    "video/webm": WEBM,
}
