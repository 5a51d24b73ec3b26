"""Every main page in German on a 390x844 phone: nothing overflows, no label is cut off.

German words run long ("Arbeitsbereich anlegen"); a button or label that overflows its box
or pushes the page sideways is a layout bug only German shows.
"""

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, expect

from app.accounts import services
from e2e.conftest import Server, _watched_context, sign_in_page
from tests.factories import PASSWORD

WIDTH, HEIGHT = 390, 844
PAGES = [
    "/wall",
    "/articles",
    "/articles/import",
    "/topics",
    "/activity",
    "/settings/",
    "/settings/members",
    "/settings/tokens",
]
# Text a person reads in a box: if it is wider than its box, it is cut off or spills over.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const boxes = document.querySelectorAll(
    'button, label, a.button, nav a, .tabs a, h1, h2, th, select, summary'
  );
  const bad = [];
  // Inside a strip that scrolls sideways (tab bars), items past the edge are reachable.
  const inScroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  for (const el of boxes) {
    const rect = el.getBoundingClientRect();
    // Visually hidden text (screen readers only) is 1 px wide by design.
    if (rect.width <= 2 || rect.height <= 2 || getComputedStyle(el).visibility === 'hidden') continue;
    const spills = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'auto';
    if ((rect.right > width + 1 || rect.left < -1) && !inScroller(el) || spills) {
      bad.push(`${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`);
    }
  }
  return {page: document.documentElement.scrollWidth, width, bad};
}"""


@pytest.fixture
async def german_phone(
    browser: Browser, server: Server, services: None, watch
) -> AsyncIterator[Page]:  # type: ignore[no-untyped-def]
    ctx = await _watched_context(
        browser,
        server.url,
        watch,
        viewport={"width": WIDTH, "height": HEIGHT},
        is_mobile=True,
        has_touch=True,
        locale="de-DE",
    )
    yield await ctx.new_page()
    await ctx.close()
    assert watch.csp_violations() == [], watch.csp_violations()


async def _fits(page: Page, path: str) -> None:
    result = await page.evaluate(OVERFLOWING)
    assert result["bad"] == [], (path, result["bad"])
    assert result["page"] <= WIDTH, (path, result)


async def test_german_pages_fit_a_phone(german_phone: Page, people):
    page = german_phone
    await page.goto("/login")
    await expect(page.locator("html")).to_have_attribute("lang", "de")
    await expect(page.locator("button[type=submit]")).to_have_text("Anmelden")
    await _fits(page, "/login")
    await page.goto("/forgot")
    await _fits(page, "/forgot")

    person = await people.member("owner")
    await services.update_profile(person.user_id, "Renate Müller", "de", "Europe/Berlin")
    await sign_in_page(page, person.email, PASSWORD)
    for path in PAGES:
        await page.goto(path)
        await expect(page.locator("html")).to_have_attribute("lang", "de")
        await expect(page.locator("nav.nav")).to_contain_text("Bibliothek")
        await _fits(page, path)
