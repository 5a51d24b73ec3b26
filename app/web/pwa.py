"""Installing Newsdesk as an app: the Web App Manifest (with a share target) and the
service worker, which caches static assets only - never a page of a signed-in person."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Response, get

from app.core.i18n import _
from app.web.templating import STATIC_DIR, static_url


class PwaController(Controller):
    @get("/manifest.webmanifest", media_type="application/manifest+json")
    async def manifest(self) -> dict[str, Any]:
        return {
            "name": "Newsdesk",
            "short_name": "Newsdesk",
            "description": _("A real-time newsroom for small teams"),
            "start_url": "/articles",
            "scope": "/",
            "display": "standalone",
            "background_color": "#ffffff",
            "theme_color": "#1d4ed8",
            "icons": [
                {"src": static_url("img/icon.svg"), "sizes": "any", "type": "image/svg+xml"},
                {"src": static_url("img/icon-192.png"), "sizes": "192x192", "type": "image/png"},
                {"src": static_url("img/icon-512.png"), "sizes": "512x512", "type": "image/png"},
            ],
            # "Share -> Newsdesk" on a phone opens /save with the shared link.
            "share_target": {
                "action": "/save",
                "method": "GET",
                "params": {"title": "title", "text": "text", "url": "url"},
            },
        }

    @get("/sw.js", media_type="text/javascript")
    async def service_worker(self) -> Response[bytes]:
        # Served from the root so its scope covers the app; never cached long, so a
        # new version reaches browsers at their next visit.
        return Response(
            (STATIC_DIR / "sw.js").read_bytes(),
            media_type="text/javascript",
            headers={"Cache-Control": "no-cache"},
        )
