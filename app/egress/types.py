"""What egress hands back: a whole response (`Fetched`) or a streaming one (`Streamed`)."""

from __future__ import annotations

import codecs
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from email.message import Message

import httpx


def _content_type(headers: httpx.Headers) -> Message:
    message = Message()
    message["content-type"] = headers.get("content-type", "")
    return message


def media_type(headers: httpx.Headers) -> str | None:
    """`text/html` of `text/html; charset=utf-8`; None when the server did not say."""
    if "content-type" not in headers:
        return None
    return _content_type(headers).get_content_type()


def charset(headers: httpx.Headers) -> str | None:
    """The declared charset, if Python knows it."""
    value = _content_type(headers).get_param("charset")
    if not isinstance(value, str):
        return None
    try:
        return codecs.lookup(value.strip()).name
    except LookupError:
        return None


@dataclass(frozen=True)
class Fetched:
    url: str  # the final URL, after redirects
    status: int  # 2xx, or a status the caller listed in accept_statuses (e.g. 304)
    headers: httpx.Headers  # response headers of the final hop
    content: bytes  # the body, content-decoded (gzip/deflate/br undone), within the cap
    redirects: tuple[str, ...] = ()  # every URL redirected to, in order

    @property
    def media_type(self) -> str | None:
        return media_type(self.headers)

    @property
    def charset(self) -> str | None:
        return charset(self.headers)

    @property
    def text(self) -> str:
        """The body as text: the declared charset, else UTF-8; bad bytes become U+FFFD."""
        return self.content.decode(self.charset or "utf-8", errors="replace")

    def json(self) -> object:
        return json.loads(self.content)


@dataclass(frozen=True)
class Streamed:
    """A response whose body is read on demand, through the same caps as `fetch`."""

    url: str  # the final URL, after redirects
    status: int
    headers: httpx.Headers
    redirects: tuple[str, ...]
    body: AsyncIterator[bytes] = field(repr=False)  # decoded, capped, under the total deadline

    @property
    def media_type(self) -> str | None:
        return media_type(self.headers)

    @property
    def content_length(self) -> int | None:
        """The length of `body`, when known: the header, unless the body is content-encoded."""
        if self.headers.get("content-encoding", "identity").strip().lower() != "identity":
            return None
        value = self.headers.get("content-length", "")
        return int(value) if value.isdigit() else None
