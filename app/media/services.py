"""Fetching a proxied file: one request through egress, checked before a byte is relayed.

The request carries only what we choose (Accept, and the browser's
revalidation headers): never the browser's cookies, referrer or
credentials. The first bytes are read and checked against the declared
type (app/media/sniff.py) before the response starts; the rest is relayed
as it arrives, so a video is never held in memory whole.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AsyncExitStack

import anyio

from app.core.i18n import _
from app.egress import (
    EgressBlocked,
    EgressError,
    EgressTimeout,
    EgressTooLarge,
    HttpStatusError,
    RateLimited,
    egress,
)
from app.media.sniff import SNIFF_BYTES, served_type
from app.media.types import Media, MediaRefused

log = logging.getLogger(__name__)

ACCEPT = "image/avif,image/webp,image/*,video/*;q=0.8"
CONDITIONAL_HEADERS = ("if-none-match", "if-modified-since")  # forwarded so a 304 can pass
VALIDATOR_HEADERS = ("etag", "last-modified")  # passed back so browsers can revalidate
MAX_VALIDATOR_CHARS = 200
# Seconds for the whole file: egress's default total is sized for pages, not a 15 MB video.
TOTAL_TIMEOUT = 120.0
# Seconds to queue for the host's budget: a page of thumbnails from one CDN waits its turn.
BUDGET_WAIT = 10.0


async def open_media(url: str, *, max_bytes: int, conditional: Mapping[str, str]) -> Media:
    """Start fetching `url` and check what comes back; raise MediaRefused if it is unfit.

    On success the upstream request stays open inside `Media.body`: the
    caller relays it and calls `Media.close` when done (closing twice is fine).
    """
    revalidate = _revalidation(conditional)
    stack = AsyncExitStack()
    try:
        upstream = await stack.enter_async_context(
            egress().stream(
                url,
                headers={"Accept": ACCEPT, **revalidate},
                max_bytes=max_bytes,
                # A 304 to a browser that holds no copy would leave it with nothing.
                accept_statuses=frozenset({304}) if revalidate else frozenset(),
                budget_wait=BUDGET_WAIT,
                total_timeout=TOTAL_TIMEOUT,
            )
        )
        validators = _validators(upstream.headers)
        if upstream.status == 304:
            await stack.aclose()
            return Media(304, None, None, validators)
        head = await _read_head(upstream.body)
        media_type = served_type(upstream.media_type, head)
        if media_type is None:
            log.info("media refused: %s declared %r", url, upstream.media_type)
            raise MediaRefused(502, _("This address did not answer with an image or a video."))
    except BaseException as exc:
        await stack.aclose()
        if isinstance(exc, EgressError):
            raise _refusal(exc, max_bytes) from exc
        raise
    return Media(
        200,
        media_type,
        upstream.content_length,
        validators,
        body=_relay(head, upstream.body, stack),
        close=stack.aclose,
    )


def _revalidation(conditional: Mapping[str, str]) -> dict[str, str]:
    """The browser's revalidation headers: with Accept, all that leaves of its request."""
    headers = {}
    for name in CONDITIONAL_HEADERS:
        value = conditional.get(name)
        if value and _plain(value):
            headers[name] = value
    return headers


def _validators(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name in VALIDATOR_HEADERS
        if (value := headers.get(name)) is not None and _plain(value)
    }


def _plain(value: str) -> bool:
    return len(value) <= MAX_VALIDATOR_CHARS and value.isascii() and value.isprintable()


async def _read_head(body: AsyncIterator[bytes]) -> bytes:
    """At least SNIFF_BYTES of the body (less only if the body is shorter)."""
    head = b""
    while len(head) < SNIFF_BYTES:
        piece = await anext(body, None)
        if piece is None:
            break
        head += piece
    return head


async def _relay(
    head: bytes, rest: AsyncIterator[bytes], stack: AsyncExitStack
) -> AsyncGenerator[bytes, None]:
    """The bytes read so far, then the rest as it arrives; the upstream request ends with it.

    An egress error here (a body that did not announce its size reaching the
    cap, the deadline) is not caught: the response then ends without its
    last chunk, so the browser sees a broken download, never a short file
    that looks complete.
    """
    try:
        if head:
            yield head
        async for piece in rest:
            yield piece
    except EgressError as exc:
        log.warning("media cut off mid-stream: %s", exc)
        raise
    finally:
        # On a browser disconnect this runs in a cancelled scope; shielded so the
        # connection and the host's in-flight slot are released now, not at lease expiry.
        with anyio.CancelScope(shield=True):
            await stack.aclose()


def _refusal(error: EgressError, max_bytes: int) -> MediaRefused:
    log.info("media not fetched: %s", error)
    if isinstance(error, HttpStatusError) and error.status in (404, 410):
        return MediaRefused(404, _("The file is no longer at its source."))
    if isinstance(error, EgressTooLarge):
        megabytes = f"{max_bytes / 1_000_000:g}"
        message = _("The file is larger than the %(megabytes)s MB allowed.")
        return MediaRefused(502, message % {"megabytes": megabytes})
    if isinstance(error, EgressBlocked):
        return MediaRefused(502, _("This address may not be fetched."))
    if isinstance(error, EgressTimeout):
        return MediaRefused(504, _("The source did not answer in time."))
    if isinstance(error, RateLimited):
        return MediaRefused(503, _("The source is busy. Try again later."))
    return MediaRefused(502, _("The file could not be fetched from its source."))
