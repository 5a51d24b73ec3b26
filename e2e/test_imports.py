"""Bulk import in a real browser: paste five URLs, watch them arrive live in two browsers,
pause and resume - the real server and arq worker doing the work."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, Page, expect

from app.core import db
from app.imports import services
from app.imports.types import JobStatus
from e2e.conftest import PageWatch, Server, _watched_context, sign_in_page
from tests.egress.servers import Reply
from tests.factories import PASSWORD
from tests.fakes.site import FakeSite
from tests.imports.helpers import job_of

READER = re.compile(r"/articles/\d+$")  # the reader page of one article
SLOW = 2.0  # seconds each page takes: long enough to pause mid-job
OK_COLOUR = """() => { const s = document.createElement('span'); s.style.color = 'var(--ok)';
  document.body.append(s); const c = getComputedStyle(s).color; s.remove(); return c; }"""


@pytest.fixture
def slow_pages(fake_site: FakeSite) -> list[str]:
    page = fake_site.page("article.html")
    paths = [f"/e2e-import/{n}" for n in range(5)]
    for path in paths:
        fake_site.routes[path] = Reply(headers=page.headers, body=page.body, delay=SLOW)
    return [fake_site.base + p for p in paths]


@pytest.fixture
async def second_page(
    browser: Browser, server: Server, services: None, watch: PageWatch
) -> AsyncIterator[Page]:
    """Another browser (its own cookies): the same person on a second device."""
    context = await _watched_context(browser, server.url, watch)
    yield await context.new_page()
    await context.close()


async def test_paste_five_urls_and_watch_them_live_in_two_browsers(
    page: Page, second_page: Page, people, slow_pages: list[str]
):
    editor = await people.member("editor")
    await sign_in_page(page, editor.email, PASSWORD)
    await sign_in_page(second_page, editor.email, PASSWORD)

    await page.goto("/articles/import")
    pasted = [*slow_pages, slow_pages[0], "ftp://nope.example/", "Thanks!"]
    await page.fill("#import-urls", "\n".join(pasted))
    counter = page.locator("#import-counter")
    await expect(counter).to_contain_text("5 valid")  # the server's parse_urls, as typed
    await expect(counter).to_contain_text("1 invalid")
    await expect(counter).to_contain_text("1 duplicate")
    await expect(counter).to_contain_text("1 word that is not a web address was left out.")
    await page.click("#import-form button[type=submit]")
    await page.wait_for_url("**/articles/import/*")
    job_url = page.url
    # Pause before the first pages arrive: at most three are being read.
    await page.click("#import-summary button.pause")
    await page.wait_for_url(job_url)

    await second_page.goto(job_url)
    for p in (page, second_page):
        await expect(p.locator("#import-summary")).to_have_attribute("data-status", "paused")
    marker = await second_page.evaluate("() => (window.__marker = Math.random())")

    # What was in flight finishes; the rest waits while paused - in both browsers.
    for p in (page, second_page):
        await expect(p.locator("#import-items li.import-item")).to_have_count(5)
        await expect(p.locator("li.import-item[data-state=extracting]")).to_have_count(
            0, timeout=15_000
        )
        waiting = p.locator("li.import-item[data-state=pending]")
        await expect(waiting).not_to_have_count(0)
    await page.wait_for_timeout(1000)
    assert await second_page.locator("li.import-item[data-state=pending]").count() >= 2

    await page.click("#import-summary button.resume")
    for p in (page, second_page):
        await expect(p.locator("li.import-item[data-state=saved]")).to_have_count(5, timeout=30_000)
        await expect(p.locator("#import-summary")).to_have_attribute("data-status", "done")
        await expect(p.locator("#import-summary .job-counters")).to_contain_text("5 / 5")
    assert await second_page.evaluate("() => window.__marker") == marker  # live, no reload
    # Each state reads as a badge of its own, not as the first word of the title after it.
    state = second_page.locator("li.import-item .item-state").first
    await expect(state).to_have_css("border-top-style", "solid")
    ok = await second_page.evaluate(OK_COLOUR)
    await expect(state).to_have_css("color", ok)  # saved: the library's colour for "fine"
    # Saved items link to the reader.
    first_link = second_page.locator("li.import-item a").first
    await expect(first_link).to_contain_text("River towns vote")


async def _quick_add_as_an_editor(page: Page, people, text: str) -> None:
    """A new editor pastes `text` into the library's quick-add box and saves."""
    editor = await people.member("editor")
    await sign_in_page(page, editor.email, PASSWORD)
    await page.goto("/articles")
    await page.fill("#quick-add textarea", text)
    await page.click("#quick-add button[type=submit]")


async def test_quick_add_follows_the_job_and_opens_the_reader(
    page: Page, people, fake_site: FakeSite
):
    fake_site.routes["/e2e-quick/one"] = fake_site.page("article.html")
    await _quick_add_as_an_editor(page, people, fake_site.base + "/e2e-quick/one")
    await page.wait_for_url(READER, timeout=20_000)
    await expect(page.locator("h1")).to_contain_text("River towns vote")


async def test_quick_add_with_several_lines_offers_the_import(page: Page, people):
    lines = "\n".join(f"https://news.example/{n}" for n in range(4))
    await _quick_add_as_an_editor(page, people, lines)
    offer = page.locator("#save-status .save-offer")
    await expect(offer).to_contain_text("4 URLs found")
    # A link styled as the primary button (a.button), not a bare link running on after the text.
    save = await page.locator("#quick-add button.primary").evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    await expect(offer.locator("a.button.primary")).to_have_css("background-color", save)
    await offer.locator("a").click()
    await page.wait_for_url("**/articles/import?urls=*")
    await expect(page.locator("#import-urls")).to_have_value(lines)
    await expect(page.locator("#import-counter")).to_contain_text("4 valid")


async def test_the_bookmarklets_save_page_works_under_our_csp(
    page: Page, people, fake_site: FakeSite
):
    fake_site.routes["/e2e-quick/two"] = fake_site.page("article.html")
    editor = await people.member("editor")
    await sign_in_page(page, editor.email, PASSWORD)
    await page.goto("/articles/import")
    assert (await page.get_attribute("#bookmarklet", "href") or "").startswith("javascript:")
    await page.goto("/save?url=" + fake_site.base + "/e2e-quick/two")
    await page.click("#save-form button[type=submit]")
    await page.wait_for_url(READER, timeout=20_000)
    await expect(page.locator("h1")).to_contain_text("River towns vote")


async def test_cancel_asks_first_on_a_phone(
    phone: Page, watch: PageWatch, people, slow_pages: list[str]
):
    """Cancel ended an import on one tap; now it asks, saying how many addresses are lost,
    and only OK cancels (the app's confirm: nothing our CSP refuses, on a touch screen too)."""
    editor = await people.member("editor")
    await sign_in_page(phone, editor.email, PASSWORD)
    job_id = await services.create_job(
        editor.workspace_id, slow_pages, actor_user_id=editor.user_id
    )
    await phone.goto(f"/articles/import/{job_id}")
    summary = phone.locator("#import-summary")
    cancel = summary.locator("button.cancel")
    await expect(cancel).to_have_text("Cancel import")
    await expect(cancel).to_be_in_viewport()

    async with phone.expect_event("dialog"):  # the watch answers it "Cancel" (dismiss)
        await cancel.tap()
    assert re.fullmatch(
        r"\d addresse?s? will not be imported\. OK cancels the import for good\.",
        watch.dialogs[0],
    ), watch.dialogs
    await phone.wait_for_timeout(500)  # no form post follows
    await expect(summary).not_to_have_attribute("data-status", "cancelled")
    assert (await job_of(editor.workspace_id, job_id)).status != JobStatus.CANCELLED

    await phone.evaluate("window.confirm = () => true")  # OK
    await cancel.tap()
    await expect(summary).to_have_attribute("data-status", "cancelled")
    assert (await job_of(editor.workspace_id, job_id)).status == JobStatus.CANCELLED


async def test_fetch_again_turns_a_consent_wall_into_the_article(
    page: Page, people, fake_site: FakeSite
):
    """Saved behind a consent wall; the site lets the article through later: "Fetch again" in
    the reader follows the fetch and opens the same article with the page's text."""
    fake_site.routes["/e2e-walled"] = fake_site.page("consent_onetrust_en.html")
    await _quick_add_as_an_editor(page, people, fake_site.base + "/e2e-walled")
    status = page.locator("#save-status")
    await expect(status).to_have_attribute("data-state", "consent-wall", timeout=20_000)
    await status.get_by_role("link").click()
    await page.wait_for_url(READER)
    walled_url = page.url
    await expect(page.locator(".reader-warnings")).to_be_visible()

    fake_site.routes["/e2e-walled"] = fake_site.page("article.html")
    await page.get_by_role("button", name="Fetch again").click()
    await page.wait_for_url("**/save/*")  # followed like a saved link
    await page.wait_for_url(walled_url, timeout=20_000)  # then the same article opens
    await expect(page.locator("h1")).to_contain_text("River towns vote")
    await expect(page.locator(".reader-warnings")).to_have_count(0)
    await expect(page.get_by_role("button", name="Fetch again")).to_have_count(0)


COLOUR_OF = """(name) => { const s = document.createElement('span');
  s.style.color = `var(${name})`; document.body.append(s);
  const c = getComputedStyle(s).color; s.remove(); return c; }"""


async def test_the_job_lists_bars_wear_their_badges_colour(page: Page, people):
    """A failed job's bar was the browser's full blue in the list, unlike the job page's."""
    person = await people.member("owner")
    failed = await services.create_job(
        person.workspace_id, ["https://news.example/gone"], actor_user_id=person.user_id
    )
    await db.fetchval(
        "UPDATE import_jobs SET status = 'done', error_count = 1 WHERE id = $1 RETURNING id",
        failed,
    )
    await sign_in_page(page, person.email, PASSWORD)
    await page.goto("/articles/import")
    await expect(page.locator("#bookmarklet")).to_be_visible()  # a computer drags it
    bar = page.locator(f"#import-job-{failed} progress")
    await expect(bar).to_have_class("job-progress")
    danger = await page.evaluate(COLOUR_OF, "--danger")
    assert await bar.evaluate("b => getComputedStyle(b).accentColor") == danger
    await page.goto(f"/articles/import/{failed}")
    assert await page.locator(".job-progress").evaluate(
        "b => getComputedStyle(b).accentColor"
    ) == danger  # fmt: skip


async def test_on_a_phone_the_import_page_shows_sharing_first_not_dragging(phone: Page, people):
    """A phone has no bookmarks bar: "Drag this link to your bookmarks bar" led nowhere."""
    person = await people.member("owner")
    await sign_in_page(phone, person.email, PASSWORD)
    await phone.goto("/articles/import")
    share = phone.locator("#share-hint")
    await expect(share).to_be_visible()
    await expect(phone.get_by_text("Drag this link to your bookmarks bar")).to_be_hidden()
    await expect(phone.locator("#bookmarklet")).to_be_hidden()
    heading = await phone.get_by_role("heading", name="Save from any page").bounding_box()
    hint, computer = (
        await share.bounding_box(),
        await phone.locator(".computer-hint").bounding_box(),
    )
    assert heading
    assert hint
    assert computer
    assert heading["y"] < hint["y"] < computer["y"]
