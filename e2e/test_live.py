"""Live pages in a real browser: paused while the stream is down, cut on removal, hidden tabs."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from app.articles.services import process_scraped_article
from app.core import db
from e2e.conftest import PageWatch, Server, _watched_context, sign_in_page
from tests.articles.helpers import article_event
from tests.factories import PASSWORD

STREAM = "**/articles/stream*"


@pytest.fixture
async def second(
    browser: Browser, server: Server, services: None, watch: PageWatch
) -> AsyncIterator[BrowserContext]:
    """A second person's browser."""
    ctx = await _watched_context(browser, server.url, watch)
    yield ctx
    await ctx.close()


async def _owner_of(workspace_id: int) -> str:
    return await db.fetchval(
        """SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
           WHERE m.workspace_id = $1 AND m.role = 'owner'""",
        workspace_id,
    )


async def _library(page: Page, email: str) -> None:
    await sign_in_page(page, email, PASSWORD)
    async with page.expect_response(lambda r: "/articles/stream" in r.url):
        await page.goto("/articles")


async def test_a_page_shows_paused_while_its_stream_is_down_and_clears_when_it_resumes(
    page: Page, people
):
    person = await people.member("viewer")
    await _library(page, person.email)
    status = page.locator("#live-status")
    await expect(status).to_be_hidden()

    # The network goes away (a laptop wakes up without it): the stream's reconnect
    # fails and Datastar retries. An open socket survives emulated offline, so the
    # tab goes to the background and back to make the stream reconnect now.
    await page.context.set_offline(True)
    await _set_hidden(page, True)
    await _set_hidden(page, False)
    await expect(status).to_be_visible(timeout=10_000)
    await expect(status).to_contain_text("Live updates paused")

    await process_scraped_article(person.workspace_id, article_event(title="Missed while away"))
    await page.context.set_offline(False)
    await expect(status).to_be_hidden(timeout=20_000)  # back: the whole state again
    await expect(page.locator("#library-list")).to_contain_text("Missed while away")


async def test_a_removed_members_open_tabs_stop_receiving_updates_within_a_second(
    page: Page, second: BrowserContext, people
):
    editor = await people.member("editor")
    owner_page = await second.new_page()
    await _library(owner_page, await _owner_of(editor.workspace_id))
    await _library(page, editor.email)
    activity = await page.context.new_page()
    async with activity.expect_response(lambda r: "/activity/stream" in r.url):
        await activity.goto("/activity")

    await owner_page.goto("/settings/members")
    await owner_page.evaluate("window.confirm = () => true")  # "Remove ...? They lose access"
    started = time.monotonic()
    await owner_page.locator(
        f'form[action="/settings/members/{editor.user_id}/remove"] button'
    ).click()
    for tab in (page, activity):
        await expect(tab.locator("#session-ended")).to_contain_text(
            "no longer have access", timeout=1_500
        )
    assert time.monotonic() - started < 2.0  # the click's own round trip included

    await process_scraped_article(editor.workspace_id, article_event(title="For members only"))
    await owner_page.goto("/articles")
    await expect(owner_page.locator("#library-list")).to_contain_text("For members only")
    await page.wait_for_timeout(1_000)
    await expect(page.locator("#library-list")).not_to_contain_text("For members only")


async def test_a_demoted_editors_open_library_loses_its_delete_buttons_live(
    page: Page, second: BrowserContext, people
):
    editor = await people.member("editor")
    await process_scraped_article(editor.workspace_id, article_event(title="A story"))
    owner_page = await second.new_page()
    await sign_in_page(owner_page, await _owner_of(editor.workspace_id), PASSWORD)
    await _library(page, editor.email)
    delete = page.locator("#library-list button", has_text="Delete")
    await expect(delete).to_have_count(1)
    marker = await page.evaluate("() => (window.__marker = Math.random())")

    await owner_page.goto("/settings/members")
    form = owner_page.locator(f'form[action="/settings/members/{editor.user_id}/role"]')
    await form.locator("select").select_option("viewer")
    await form.locator("button").click()

    await expect(delete).to_have_count(0, timeout=1_500)
    await expect(page.locator("#library-list")).to_contain_text("A story")
    assert await page.evaluate("() => window.__marker") == marker  # live, not a reload


async def _set_hidden(page: Page, hidden: bool) -> None:
    """What the browser does when the tab goes to the background (or comes back)."""
    await page.evaluate(
        """(hidden) => {
            Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
            Object.defineProperty(document, 'visibilityState',
                {value: hidden ? 'hidden' : 'visible', configurable: true});
            document.dispatchEvent(new Event('visibilitychange'));
        }""",
        hidden,
    )


async def test_a_hidden_tab_closes_its_stream_and_reopens_it_on_return(page: Page, people):
    person = await people.member("viewer")
    await _library(page, person.email)
    opened: list[str] = []
    page.on("request", lambda r: opened.append(r.url) if "/articles/stream" in r.url else None)
    failed: list[str] = []
    page.on(
        "requestfailed", lambda r: failed.append(r.url) if "/articles/stream" in r.url else None
    )

    await _set_hidden(page, True)
    await page.wait_for_timeout(500)
    assert len(failed) == 1  # the hidden tab let go of its connection
    await process_scraped_article(person.workspace_id, article_event(title="While hidden"))
    await page.wait_for_timeout(1_000)
    await expect(page.locator("#library-list")).not_to_contain_text("While hidden")
    assert opened == []  # and did not reconnect while hidden

    await _set_hidden(page, False)
    await expect(page.locator("#library-list")).to_contain_text("While hidden", timeout=5_000)
    assert len(opened) == 1  # one new stream on return, with the whole state


async def test_an_owner_deletes_the_workspace_and_its_members_pages_are_cut(
    page: Page, second: BrowserContext, people
):
    editor = await people.member("editor")
    await _library(page, editor.email)
    owner_page = await second.new_page()
    await sign_in_page(owner_page, await _owner_of(editor.workspace_id), PASSWORD)
    await owner_page.goto("/settings")
    await owner_page.get_by_role("link", name="Workspace", exact=True).click()
    form = owner_page.locator("#delete-workspace form")
    await form.locator("input[name=confirm_name]").fill("Dsk")
    await form.get_by_role("button", name="Delete workspace").click()
    await expect(owner_page.locator("#delete-workspace .field-error")).to_have_text(
        "Type the workspace's name exactly as it is shown."
    )
    await expect(form.locator("input[name=confirm_name]")).to_have_value("Dsk")  # kept

    await form.locator("input[name=confirm_name]").fill("Desk")
    await form.get_by_role("button", name="Delete workspace").click()
    await owner_page.wait_for_url("**/welcome")
    await expect(owner_page.locator("form[action='/workspaces']")).to_be_visible()
    await expect(page.locator("#session-ended")).to_contain_text(
        "no longer have access", timeout=1_500
    )
    await page.goto("/articles")  # nowhere else to go: the page to start a workspace
    await page.wait_for_url("**/welcome")


async def test_an_owner_renames_the_workspace_and_its_members_open_pages_show_it(
    page: Page, second: BrowserContext, people
):
    """The name is in the top bar of every page (the switcher for people in several
    workspaces), outside the live regions: the members' open pages show the new one at once."""
    editor = await people.member("editor")
    await _library(page, editor.email)
    bar = page.locator("#workspace-bar")
    await expect(bar).to_have_text("Desk")
    wall = await page.context.new_page()
    async with wall.expect_response(lambda r: "/wall/stream" in r.url):
        await wall.goto("/wall")
    away = await page.context.new_page()  # a tab in the background during the rename
    async with away.expect_response(lambda r: "/activity/stream" in r.url):
        await away.goto("/activity")
    await _set_hidden(away, True)
    marker = await page.evaluate("() => (window.__marker = Math.random())")
    owner_page = await second.new_page()
    await sign_in_page(owner_page, await _owner_of(editor.workspace_id), PASSWORD)
    await owner_page.goto("/settings/workspace")

    form = owner_page.locator("#workspace-name form")
    await form.locator("input[name=name]").fill("  Redaktion   Süd ")
    await form.get_by_role("button", name="Rename workspace").click()

    await expect(owner_page.locator("#workspace-bar")).to_have_text("Redaktion Süd")
    for tab in (page, wall):
        await expect(tab.locator("#workspace-bar")).to_have_text("Redaktion Süd", timeout=1_500)
    assert await page.evaluate("() => window.__marker") == marker  # live, not a reload
    await expect(page.locator("#live-status")).to_be_hidden()  # the stream goes on
    await expect(away.locator("#workspace-bar")).to_have_text("Desk")  # no stream while hidden
    await _set_hidden(away, False)
    await expect(away.locator("#workspace-bar")).to_have_text("Redaktion Süd", timeout=5_000)


async def test_a_new_display_name_shows_in_the_persons_other_open_tabs(page: Page, people):
    """The person's name is in the top bar of every page, outside the live regions: their
    other open tabs show the new one at once, without reloading."""
    editor = await people.member("editor")
    await _library(page, editor.email)
    who = page.locator("#top-bar-who")
    old_name = (await who.text_content() or "").strip()
    assert old_name.startswith("Person")
    marker = await page.evaluate("() => (window.__marker = Math.random())")
    settings = await page.context.new_page()
    await settings.goto("/settings")

    await settings.get_by_label("Name").fill("Ada Lovelace")
    await settings.get_by_role("button", name="Save profile").click()

    await expect(settings.locator("#top-bar-who")).to_have_text("Ada Lovelace")
    await expect(who).to_have_text("Ada Lovelace", timeout=1_500)
    assert await page.evaluate("() => window.__marker") == marker  # live, not a reload
    await expect(page.locator("#live-status")).to_be_hidden()  # the stream goes on
