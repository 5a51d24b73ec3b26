"""The foundation in a real browser: sign in, the layout, live activity."""

import re

from playwright.async_api import Page, expect

from app.accounts import services
from app.accounts.roles import Role
from e2e.conftest import sign_in_page
from tests.factories import PASSWORD


async def test_signing_in_shows_the_layout_with_navigation(page: Page, people):
    person = await people.member("editor")
    await sign_in_page(page, person.email, PASSWORD)
    nav = page.locator("nav.nav")
    for label in ["Wall", "Library", "Import", "Activity", "Settings"]:
        await expect(nav.get_by_text(label, exact=True)).to_be_visible()
    await expect(page.locator(".topbar")).to_contain_text("Desk")


async def test_a_new_event_appears_on_activity_without_reload(page: Page, people):
    owner = await people.member("owner")
    await sign_in_page(page, owner.email, PASSWORD)
    await page.goto("/activity")
    await expect(page.locator("#events")).to_contain_text("signed in")
    marker = await page.evaluate("() => (window.__marker = Math.random())")
    user_id, _email = await people.user("Robin Newcomer")
    await services.add_member(owner.workspace_id, user_id, Role.EDITOR, actor_user_id=owner.user_id)
    await expect(page.locator("#events")).to_contain_text("Robin Newcomer", timeout=10_000)
    assert await page.evaluate("() => window.__marker") == marker  # the same page: no reload


async def test_the_layout_fits_a_phone(phone: Page, people):
    person = await people.member("viewer")
    await sign_in_page(phone, person.email, PASSWORD)
    width = await phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 360
    await expect(phone.locator("nav.nav a[href='/activity']")).to_be_visible()
    box = await phone.locator("nav.nav").bounding_box()
    assert box is not None
    assert box["y"] > 600  # a bottom bar on phones


async def test_signing_out_ends_the_session(page: Page, people):
    person = await people.member("viewer")
    await sign_in_page(page, person.email, PASSWORD)
    await page.click("form.signout button")
    await page.wait_for_url("**/login")
    await page.goto("/activity")
    await page.wait_for_url("**/login?next=/activity")


async def test_a_person_deletes_their_account(page: Page, people):
    owner = await people.member("owner")
    person = await people.member("editor", owner.workspace_id)
    await sign_in_page(page, person.email, PASSWORD)
    await page.goto("/settings")
    form = page.locator("#delete-account form")
    await form.locator("input[name=delete_password]").fill("not my password")
    await form.get_by_role("button", name="Delete my account").click()
    await expect(page.locator("#delete-account .field-error")).to_have_text(
        "Your password is not right."
    )
    await page.goto(page.url)  # the form's address again: Settings, not "method not allowed"
    await expect(page).to_have_url(re.compile(r"/settings$"))

    await form.locator("input[name=delete_password]").fill(PASSWORD)
    await form.get_by_role("button", name="Delete my account").click()
    await page.wait_for_url("**/login?deleted=1")
    await expect(page.locator("main")).to_contain_text("Your account is deleted.")
    await page.fill("input[name=email]", person.email)
    await page.fill("input[name=password]", PASSWORD)
    await page.click("button[type=submit]")
    await expect(page.locator("main")).to_contain_text("The email or the password is not right.")
