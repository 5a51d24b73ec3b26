"""The one place that wires the domains into the web app."""

from __future__ import annotations

from typing import Any

from app.accounts import controllers as accounts
from app.core.config import Settings
from app.egress import close_egress, open_egress
from app.events import controllers as events
from app.web.shell import ShellController


def page_handlers() -> list[Any]:
    return [ShellController, *accounts.PAGE_HANDLERS, *events.PAGE_HANDLERS]


def api_handlers() -> list[Any]:
    return [*accounts.API_HANDLERS, *events.API_HANDLERS]


def template_filters(settings: Settings) -> dict[str, Any]:
    """Filters the domains add to Jinja (the safe_content renderer among them)."""
    return {}


async def start(settings: Settings) -> None:
    """Open what request handlers and jobs need beyond the database and Redis."""
    open_egress(settings)


async def stop() -> None:
    """Close what `start` opened."""
    await close_egress()
