"""The wall on the demo's platforms (app/demo): every column type made in the browser's
editor, and posts arriving from real polls of the demo servers through the worker process.

One test on purpose: the columns share one person, one wall and one demo world, and each
column's first poll runs while the next one is being made.
"""

from __future__ import annotations

import asyncio
import re

from playwright.async_api import Page, expect

from app.accounts import services as accounts
from app.core import db
from app.demo.mastodon import DEMO_TOKEN
from app.demo.world import RunningWorld
from e2e.test_wall import _wall

POLLED = 30_000  # ms: a new column's sources are polled as soon as they are made
SAVED = 15_000  # ms: a column saved and brought by the live stream, on a busy machine


async def _connect_mastodon(page: Page, workspace_id: int, user_id: int) -> None:
    """Connect the demo's Mastodon account as a person does: an API token and one call."""
    token = await accounts.issue_api_token(workspace_id, user_id, "e2e")
    answer = await page.request.post(
        "/api/v1/feeds/connections",
        data={"provider": "mastodon", "instance": "mastodon.social", "secret": DEMO_TOKEN},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert answer.status == 201, await answer.text()


def _title(page: Page, title: str):  # type: ignore[no-untyped-def]
    return page.locator("h2", has_text=re.compile(f"^{re.escape(title)}$"))


async def _save_editor(page: Page, title: str) -> str:
    """Submit the open editor; the new column's id once the live stream brings it."""
    editor = page.locator("#editor")
    await editor.locator("button[type=submit]").click()
    # A real save on a shared machine: the column, its sources and their first polls queued.
    await expect(editor).to_be_hidden(timeout=SAVED)
    column = page.locator(".wall .column", has=_title(page, title))
    await expect(column).to_have_count(1, timeout=SAVED)
    return str(await column.get_attribute("data-column"))


async def _posts_arrive(page: Page, column: str) -> None:
    await expect(page.locator(f"#col-{column}-items > .item").first).to_be_visible(timeout=POLLED)


async def test_every_column_type_made_in_the_editor_fills_from_the_demo_platforms(
    page: Page, people, demo_world: RunningWorld
) -> None:
    owner = await people.member("owner")
    await _wall(page, owner.email)
    await _connect_mastodon(page, owner.workspace_id, owner.user_id)
    editor = page.locator("#editor")

    # Keyword: the hints say what each platform makes of the query as it is typed.
    await page.click("#add-column")
    await editor.locator("input[name=title]").fill("Climate")
    await editor.locator("input[name=query]").fill("#climate")
    hints = editor.locator("#query-hints")
    await expect(hints).to_contain_text("Bluesky ✓")
    await expect(hints).to_contain_text("#climate only")
    await editor.locator("input[name=platforms][value=youtube]").uncheck()
    await editor.locator("input[name=instances]").fill("mastodon.social")
    keyword = await _save_editor(page, "Climate")

    # Platform feed: the connected account's home timeline.
    await page.click("#add-column")
    await editor.get_by_role("link", name="Platform feed").click()
    await expect(editor.locator("select[name=connection_id]")).to_contain_text("Mastodon · maya")
    await editor.locator("input[name=title]").fill("My Mastodon")
    feed = await _save_editor(page, "My Mastodon")

    # Account list: pasted handles resolve row by row against the platforms.
    await page.click("#add-column")
    await editor.get_by_role("link", name="Accounts").click()
    await editor.locator("input[name=title]").fill("Reporters")
    accounts_box = editor.locator("textarea[name=accounts]")
    await accounts_box.fill("maya.okafor.bsky.social\njonas@chaos.social\nnobody.example.org")
    rows = editor.locator("#account-rows li")
    await expect(rows).to_have_count(3)
    await expect(rows.nth(0)).to_have_class("acct-ok")
    await expect(rows.nth(1)).to_have_class("acct-ok")
    await expect(rows.nth(2)).to_have_class("acct-missing")
    await expect(rows.nth(2)).to_contain_text("not found on Bluesky")
    await accounts_box.fill("maya.okafor.bsky.social\njonas@chaos.social")
    await expect(rows).to_have_count(2)
    reporters = await _save_editor(page, "Reporters")

    for column in (keyword, feed, reporters):
        await _posts_arrive(page, column)

    # Save to library: a post that links an article of the demo's news site saves that
    # article, fetched by the worker from the demo site (offline like everything here).
    linking = page.locator(f"#col-{keyword}-items > .item").filter(
        has=page.locator('.item-content a[href^="https://courier.example/"]')
    )
    await expect(linking.first).to_be_visible(timeout=POLLED)
    post = page.locator(f"#{await linking.first.get_attribute('id')}")  # new posts go above it
    await post.locator("button.save").click()
    await expect(post.locator(".state-saved")).to_be_visible(timeout=POLLED)
    saved = await db.fetchval(
        "SELECT a.url FROM articles a WHERE a.workspace_id = $1", owner.workspace_id
    )
    assert saved.startswith("https://courier.example/")

    # Saved search: the search box over stored posts, saved as a column.
    await page.fill("#wall-search", "climate")
    await page.press("#wall-search", "Enter")
    await page.wait_for_url("**/wall/search?q=climate")
    await expect(page.locator(".search-results > .item").first).to_be_visible()
    await page.get_by_role("button", name="Save as a column").click()
    await page.wait_for_url("**/wall#col-*")  # taken to it
    saved = page.locator(".wall .column", has=_title(page, "climate"))
    await expect(saved).to_have_count(1)
    await _posts_arrive(page, str(await saved.get_attribute("data-column")))

    # Widths are this person's own: the menu's "Wide" widens the column and says so.
    before = await page.locator(f"#col-{keyword}").bounding_box()
    await page.locator(f"#col-{keyword}-head .column-menu summary").click()
    await page.locator(f"#col-{keyword}-head [data-width=wide]").click()
    await page.wait_for_function(
        "id => getComputedStyle(document.getElementById(`col-${id}`))"
        ".getPropertyValue('--width').trim() === 'wide'",
        arg=keyword,
    )
    after = await page.locator(f"#col-{keyword}").bounding_box()
    assert before is not None
    assert after is not None
    assert after["width"] > before["width"] + 100
    await page.locator(f"#col-{keyword}-head .column-menu summary").click()  # closed
    await page.locator(f"#col-{keyword}-head .column-menu summary").click()  # opened again
    await expect(page.locator(f"#col-{keyword}-head [data-width=wide]")).to_have_attribute(
        "aria-pressed", "true"
    )


async def _polled(workspace_id: int, sources: int) -> None:
    """The worker has polled each of the workspace's `sources` at least once (a not-found
    poll leaves no `last_polled_at`: its failure count says it ran)."""
    for _ in range(int(POLLED / 100)):
        done = await db.fetchval(
            "SELECT count(*) FROM stream_sources WHERE workspace_id = $1"
            " AND consecutive_failures > 0",
            workspace_id,
        )
        if done >= sources:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{sources} sources were not polled within {POLLED} ms")


async def test_a_column_of_accounts_no_platform_knows_says_so_at_once_and_after_its_first_poll(
    page: Page, people, demo_world: RunningWorld
) -> None:
    owner = await people.member("owner")
    await _wall(page, owner.email)
    editor = page.locator("#editor")
    await page.click("#add-column")
    await editor.get_by_role("link", name="Accounts").click()
    await editor.locator("input[name=title]").fill("Nobody")
    # The demo's Bluesky answers resolveHandle with a 400, its mastodon.social a 404.
    await editor.locator("textarea[name=accounts]").fill(
        "@nobody.bsky.social\nnobody@mastodon.social"
    )
    column = await _save_editor(page, "Nobody")

    # The person who saved it is told at once, in the wall's notice line.
    await expect(page.locator("#wall-notice")).to_have_text(
        "Nobody: no account was found (@nobody.bsky.social on Bluesky,"
        " nobody@mastodon.social on Mastodon); it cannot show posts."
    )
    head = page.locator(f"#col-{column}-head")

    async def honest() -> None:
        await expect(head.locator("p.status")).to_have_text("No posts can be fetched")
        await expect(head.locator("p.status")).to_have_class(re.compile(r"\btone-error\b"))
        lines = head.locator(".status-line")
        await expect(lines).to_have_count(2)
        await expect(lines.nth(0)).to_contain_text("nobody.bsky.social was not found on Bluesky.")
        await expect(lines.nth(1)).to_contain_text(
            "nobody@mastodon.social was not found on Mastodon."
        )
        await expect(head).not_to_contain_text("Fetching the first posts")

    await honest()
    # The worker's first polls ask again and hear the same: the column stays honest (it
    # said "Fetching the first posts…" until the third).
    await _polled(owner.workspace_id, 2)
    await page.reload()
    await expect(page.locator("#live-status")).to_be_hidden()
    await honest()
