"""Why an outbound request failed, as types callers can branch on.

Every error carries the url it concerns and a message a person can read in
an import item's error column or a column's status line.
"""

from __future__ import annotations


class EgressError(Exception):
    """An outbound request did not produce a usable response."""

    def __init__(self, url: str, message: str) -> None:
        super().__init__(f"{message} ({url})")
        self.url = url
        self.message = message


class EgressBlocked(EgressError):
    """Refused by policy before or while connecting: scheme, port, address or redirects."""


class EgressTimeout(EgressError):
    """Connecting, reading, or the whole request took too long."""


class EgressTooLarge(EgressError):
    """The body (after decoding) is larger than the cap."""


class EgressConnectError(EgressError):
    """The server could not be reached or dropped the connection (DNS, refused, reset)."""


class EgressProtocolError(EgressError):
    """The server answered with a broken response (bad HTTP, undecodable body)."""


class RateLimited(EgressError):
    """The host asked us to wait (429, 503 + Retry-After) or its budget is spent.

    `retry_after` is in seconds from now, or None when nobody said.
    """

    def __init__(
        self, url: str, message: str, retry_after: float | None, *, own_limit_of: str = ""
    ) -> None:
        super().__init__(url, message)
        self.retry_after = retry_after
        # The host whose budget of ours (EGRESS_HOST_*) is spent; "" when the site asked.
        self.own_limit_of = own_limit_of


class HttpStatusError(EgressError):
    """The server answered with a status the caller did not accept."""

    def __init__(self, url: str, status: int) -> None:
        super().__init__(url, f"the server answered HTTP {status}")
        self.status = status
