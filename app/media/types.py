"""What the media service hands the controller: a file to relay, or a refusal."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Media:
    """An upstream file that passed every check, its body not yet read past the first bytes."""

    status: int  # 200, or 304 when the browser's copy (If-None-Match/If-Modified-Since) is current
    media_type: str | None  # the allowlisted type its bytes show; None for a 304
    content_length: int | None  # bytes, when upstream said so and the body is not re-encoded
    validators: dict[str, str]  # upstream's ETag and Last-Modified, for revalidation
    # The whole body, first bytes included; closing it ends the upstream request.
    body: AsyncGenerator[bytes, None] | None = field(default=None, repr=False)
    # Ends the upstream request whether or not `body` was read; safe to call twice.
    close: Callable[[], Awaitable[None]] | None = field(default=None, repr=False)


class MediaRefused(Exception):
    """The file will not be served; `status` and `message` are what the browser gets."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
