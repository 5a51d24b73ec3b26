"""The one place that wires the domains into the web app."""

from __future__ import annotations

from typing import Any

import jinja2

from app.accounts import controllers as accounts
from app.articles import controllers as articles
from app.core.config import Settings
from app.egress import close_egress, open_egress
from app.events import controllers as events
from app.imports import controllers as imports
from app.media import controllers as media
from app.media import signer, template_filter
from app.safe_content import register_filters
from app.streams import controllers as streams
from app.topics import controllers as topics
from app.topics.schedule import with_arxiv_budgets
from app.wall import controllers as wall
from app.web.pwa import PwaController
from app.web.shell import ShellController


def page_handlers() -> list[Any]:
    return [
        ShellController,
        PwaController,
        *accounts.PAGE_HANDLERS,
        *events.PAGE_HANDLERS,
        *media.PAGE_HANDLERS,
        *articles.PAGE_HANDLERS,
        *topics.PAGE_HANDLERS,
        *imports.PAGE_HANDLERS,
        *wall.PAGE_HANDLERS,
    ]


def api_handlers() -> list[Any]:
    return [
        *accounts.API_HANDLERS,
        *events.API_HANDLERS,
        *articles.API_HANDLERS,
        *streams.API_HANDLERS,
        *imports.API_HANDLERS,
    ]


def configure_templates(env: jinja2.Environment, settings: Settings) -> None:
    """Filters the domains add to Jinja: the safe_content renderer, with media
    proxied through signed URLs, is the only way templates show third-party text."""
    register_filters(env, media_url=signer(settings))
    env.filters["media_url"] = template_filter(settings)


async def start(settings: Settings) -> None:
    """Open what request handlers and jobs need beyond the database and Redis."""
    # arXiv's one-request-every-3-s limit holds unless the operator set its hosts.
    open_egress(with_arxiv_budgets(settings))


async def stop() -> None:
    """Close what `start` opened."""
    await close_egress()
