"""GET /media/<signature>/<payload>: a remote image or video, through egress, boxed in.

Every answer, success or refusal, carries a policy that lets the file do
nothing (`default-src 'none'; sandbox`), `nosniff`, and no cookie: opened on
its own, a proxied file cannot run script or read anything of ours. No
session is needed (the auth middleware skips /media/): the signature is the
capability.
"""

from __future__ import annotations

from typing import Any

from litestar import Controller, MediaType, Request, Response, get
from litestar.background_tasks import BackgroundTask
from litestar.di import NamedDependency
from litestar.params import FromPath
from litestar.response import Stream

from app.core.config import Settings
from app.core.i18n import _
from app.media.services import open_media
from app.media.signing import key_of, verify
from app.media.types import Media, MediaRefused

# Set here so app/web/security.py's site policy (which fills only missing headers) stays out.
STRICT_HEADERS = {
    "content-security-policy": "default-src 'none'; sandbox",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-origin",
    "referrer-policy": "no-referrer",
}
# A signed URL names one remote file, so a good answer may be kept; a refusal may not.
CACHE_SERVED = "public, max-age=86400, immutable"
CACHE_REFUSED = "no-store"


class MediaController(Controller):
    path = "/media"
    include_in_schema = False
    # No CSRF cookie: the response is public and cacheable, and GET changes nothing.
    opt = {"exclude_from_csrf": True}

    @get("/{signature:str}/{payload:str}")
    async def media(
        self,
        request: Request,
        settings: NamedDependency[Settings],
        signature: FromPath[str],
        payload: FromPath[str],
    ) -> Response[Any]:
        url = verify(signature, payload, key_of(settings))
        if url is None:
            return refused(403, _("This media link is not valid."))
        try:
            media = await open_media(
                url, max_bytes=settings.media_max_bytes, conditional=request.headers
            )
        except MediaRefused as exc:
            return refused(exc.status, exc.message)
        return served(media)


def refused(status: int, message: str) -> Response[Any]:
    headers = {**STRICT_HEADERS, "cache-control": CACHE_REFUSED}
    return Response(message, status_code=status, media_type=MediaType.TEXT, headers=headers)


def served(media: Media) -> Response[Any]:
    headers = {**STRICT_HEADERS, "cache-control": CACHE_SERVED, **media.validators}
    if media.body is None:
        return Response(b"", status_code=media.status, headers=headers)
    if media.content_length is not None:
        headers["content-length"] = str(media.content_length)
    # The body's own `finally` closes the upstream request; the background task
    # covers a body that was never started (e.g. the browser left first).
    background = BackgroundTask(media.close) if media.close else None
    return Stream(media.body, media_type=media.media_type, headers=headers, background=background)


PAGE_HANDLERS = [MediaController]
