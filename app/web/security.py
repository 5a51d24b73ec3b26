"""Security headers on every response, and the CSP violation report sink."""

from __future__ import annotations

import logging

from litestar import Request, post
from litestar.datastructures import MutableScopeHeaders
from litestar.types import Message, Scope

log = logging.getLogger("newsdesk.csp")

# Datastar compiles its expressions with Function(), so 'unsafe-eval' is the one
# loosening; there is no inline script anywhere and no 'unsafe-inline'.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-eval'",
        "style-src 'self'",
        "img-src 'self'",
        "media-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
        "report-uri /csp-report",
    ]
)

SECURITY_HEADERS: dict[str, str] = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
}


async def add_security_headers(message: Message, scope: Scope) -> None:
    """A `before_send` hook: every response, routed or not (404s too), gets the
    headers it did not set itself. The media proxy sets its own stricter CSP.

    What a signed-in person sees is never stored by the browser or a proxy
    (`no-store`): Back after signing out must not show the library again."""
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in SECURITY_HEADERS.items():
            if name not in headers:
                headers[name] = value
        if scope.get("user") is not None and "cache-control" not in headers:
            headers["cache-control"] = "no-store"


@post("/csp-report", exclude_from_csrf=True, include_in_schema=False, status_code=204)
async def csp_report(request: Request) -> None:
    """Browsers post policy violations here; they are logged as warnings."""
    body = await request.body()
    log.warning("CSP violation: %s", body[:2000].decode("utf-8", "replace"))
