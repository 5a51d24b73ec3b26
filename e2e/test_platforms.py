"""Settings → Platforms in Chromium on a phone-sized screen: connect a demo Mastodon account
through the page (the demo instance checks the token, through the server's egress), watch
it start working live, and find its timeline as a column on the wall."""

from __future__ import annotations

from playwright.async_api import Browser, expect

from app.demo.mastodon import DEMO_TOKEN, MastodonDemo
from app.demo.world import RunningWorld
from e2e.conftest import PHONE, PageWatch, Server, _watched_context, sign_in_page
from tests.factories import PASSWORD


async def test_connecting_a_mastodon_account_through_the_page_makes_a_working_column(
    browser: Browser, server: Server, services: None, people, demo_world: RunningWorld
) -> None:
    admin = await people.member("admin")
    instance = demo_world.servers["fosstodon.org"]
    assert isinstance(instance, MastodonDemo)
    watch = PageWatch()
    context = await _watched_context(browser, server.url, watch, **PHONE)
    page = await context.new_page()
    await sign_in_page(page, admin.email, PASSWORD)
    await page.goto("/settings/platforms")
    form = page.locator("#connect-mastodon")
    await form.locator("input[name=instance]").fill("fosstodon.org")
    await form.locator("input[name=secret]").fill("not-the-token")
    await form.get_by_role("button", name="Connect account").click()
    # Refused by the instance: said beside the field, the instance kept, the token not.
    await expect(page.locator("#mastodon-secret-error")).to_have_text(
        "fosstodon.org did not accept this token."
    )
    await expect(form.locator("input[name=instance]")).to_have_value("fosstodon.org")
    await expect(form.locator("input[name=secret]")).to_have_value("")

    await form.locator("input[name=secret]").fill(DEMO_TOKEN)
    await form.get_by_role("button", name="Connect account").click()
    row = page.locator("#connections .connection")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text(instance.me.handle)
    # The worker polls its new column; the page follows the state without a reload.
    await expect(row.locator(".status")).to_have_text("Working", timeout=8000)
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0

    await row.locator("a[href^='/wall#col-']").click()
    column_id = page.url.rpartition("#col-")[2]
    column = page.locator(f"#col-{column_id}")
    await expect(column.locator(".items > .item").first).to_be_visible()
    await expect(column.locator(".pf-mastodon").first).to_be_visible()
    await context.close()
    assert watch.csp_violations() == []
