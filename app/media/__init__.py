"""Media: the signed proxy through which every remote image and video reaches a browser.

Pages never point at a third-party host: an image in a post or article is
shown as `/media/<signature>/<payload>` (`media_url`), which only this
server can mint. The proxy fetches through egress with nothing of the
viewer's attached, passes only allowlisted raster images and videos whose
bytes match their declared type, caps the size, and boxes the answer in a
sandbox policy. See docs/decisions/media-proxy.md.
"""

from app.media.signing import (
    derive_key,
    key_of,
    media_url,
    sign,
    signer,
    template_filter,
    verify,
)

__all__ = ["derive_key", "key_of", "media_url", "sign", "signer", "template_filter", "verify"]
