"""The README's wall and import screenshots, made again from the demo newsroom (app/demo):

    SCREENSHOTS=1 .venv/bin/python -m pytest e2e/test_screenshots.py    (or: make screenshots)

The demo's workspace, connections and columns (`app.demo.world.seed`) polled by the real
worker from the demo platforms, photographed on a desktop (1440x900) and a phone (390x844)
once every column has posts, with a post behind a content warning in view. Skipped in the
normal suite: it waits for real polls and rewrites docs/screenshots/.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

from app.demo.content import ARTICLE_ORIGIN
from app.demo.world import RunningWorld, seed
from app.egress import close_egress, open_egress
from e2e.conftest import PHONE, PageWatch, Server, _watched_context, sign_in_page

IMPORTED = 12  # links of the demo news site pasted into the import page
SHOTS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
PASSWORD = "screenshot password 123"  # a throw-away demo person's

pytestmark = pytest.mark.skipif(
    not os.environ.get("SCREENSHOTS"), reason="makes docs/screenshots/ (SCREENSHOTS=1)"
)


async def _ready_wall(page: Page, email: str, columns: int) -> None:
    """Signed in, every column with posts and its images loaded."""
    await sign_in_page(page, email, PASSWORD)
    await expect(page.locator(".wall .column")).to_have_count(columns)
    for n in range(columns):
        column = page.locator(".wall .column").nth(n)
        await expect(column.locator(".items > .item").nth(2)).to_be_attached(timeout=60_000)
    # The pictures in view (lazy ones elsewhere never load): a few seconds at most.
    with contextlib.suppress(PlaywrightTimeout):
        await page.wait_for_function(
            """[...document.images].filter(i => { const r = i.getBoundingClientRect();
              return r.top < innerHeight - 60 && r.bottom > 0 && r.left < innerWidth && r.right > 0 })
              .every(i => i.complete)""",
            timeout=15_000,
        )


async def _content_warning_in_view(page: Page) -> None:
    """Scroll the first column holding a post behind a content warning to that post."""
    warned = page.locator(".items > .item", has=page.locator(".item-content details")).first
    await expect(warned).to_be_attached(timeout=60_000)
    await warned.evaluate("el => el.scrollIntoView({block: 'center', inline: 'nearest'})")
    await page.locator("#wall-track").evaluate("el => el.scrollTo({left: 0})")


async def test_the_wall_screenshots_from_the_demo_newsroom(
    browser: Browser, server: Server, services: None, watch: PageWatch, demo_world: RunningWorld
) -> None:
    open_egress(server.settings)  # the seed resolves the account columns' handles now
    try:
        login = await seed(PASSWORD)
    finally:
        await close_egress()
    columns = len(login.columns)
    assert columns >= 4, login.left_out

    desktop = await _watched_context(
        browser, server.url, watch, viewport={"width": 1440, "height": 900}
    )
    page = await desktop.new_page()
    await _ready_wall(page, login.email, columns)
    await _content_warning_in_view(page)
    await page.screenshot(path=str(SHOTS / "wall-desktop.png"))
    await desktop.close()

    phone = await _watched_context(browser, server.url, watch, **PHONE)
    page = await phone.new_page()
    await _ready_wall(page, login.email, columns)
    # One column fills the screen and nothing in it runs off the edge.
    overflow = await page.locator(".wall .column").first.evaluate(
        "e => e.scrollWidth - e.clientWidth"
    )
    assert overflow <= 1
    box = await page.locator(".wall .column").first.bounding_box()
    assert box is not None
    assert box["width"] <= 390
    await page.screenshot(path=str(SHOTS / "wall-phone.png"))
    await phone.close()
    await _import_screenshot(browser, server, watch, demo_world, login.email)
    assert watch.csp_violations() == []


def _demo_article_links(world: RunningWorld, count: int) -> list[str]:
    """The newest `count` article links of the demo news site, as its readers know them."""
    site = world.servers["courier"].base
    feed = httpx.get(f"{site}/feeds/news.rss", timeout=10).text
    paths = re.findall(rf"<link>{re.escape(site)}(/news/[^<]+)</link>", feed)
    return [ARTICLE_ORIGIN + path for path in paths[:count]] + [ARTICLE_ORIGIN + "/news/gone"]


async def _import_screenshot(
    browser: Browser, server: Server, watch: PageWatch, world: RunningWorld, email: str
) -> None:
    """An import of the demo news site's links, done, on a desktop: counts, states, titles,
    one link that fails with its reason."""
    desktop = await _watched_context(
        browser, server.url, watch, viewport={"width": 1280, "height": 900}
    )
    page = await desktop.new_page()
    await sign_in_page(page, email, PASSWORD)
    await page.goto("/articles/import")
    await page.fill("textarea[name=urls]", "\n".join(_demo_article_links(world, IMPORTED)))
    await page.locator("main button[type=submit]").first.click()
    await page.wait_for_url(re.compile(r".*/articles/import/\d+$"))
    await expect(page.locator(".import-summary")).to_have_attribute(
        "data-status", "done", timeout=60_000
    )
    await page.screenshot(path=str(SHOTS / "import.png"))
    await desktop.close()
