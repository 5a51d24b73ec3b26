"""The product on a 390 px phone: forms a desk lays out as a row stack on a phone, and the
wall's column editor, a bottom sheet there, keeps the focus until it is closed.

Found walking every page at 390 px in Chromium: side by side, a row form's fields kept their
desk width (12rem, ~2/3 of the card) and cut what was typed; buttons were 40 px targets; Tab
left the editor's sheet for the posts hidden behind it.
"""

from playwright.async_api import Browser, Page, expect

from app.accounts import services as accounts
from app.topics import services as topics
from app.topics.types import TopicForm
from e2e.conftest import PHONE, PageWatch, Server, _watched_context, sign_in_page
from tests.factories import PASSWORD
from tests.wall.helpers import add_item, keyword_column

DESK = {"viewport": {"width": 1280, "height": 900}}
LONG_TOPIC = "Klimaanpassung in den Kommunen"  # wider than 12rem, narrower than a phone

# Each visible row form of the page: its width, its fields' widths, its buttons' heights,
# and whether its last control sits beside its first one (a row) or under it (a stack).
ROW_FORMS = """() => {
  const shown = (e) => e.offsetParent !== null;
  return [...document.querySelectorAll('.main form.stack-inline')].filter(shown).map((form) => {
    const fields = [...form.querySelectorAll(
      'input:not([type=hidden]):not([type=checkbox]):not([type=radio]), select')].filter(shown);
    const controls = [...form.querySelectorAll('input:not([type=hidden]), select, button')].filter(shown);
    const first = controls[0].getBoundingClientRect(), last = controls.at(-1).getBoundingClientRect();
    return {
      action: form.getAttribute('action'),
      width: form.clientWidth,
      fields: fields.map((e) => e.getBoundingClientRect().width),
      buttons: [...form.querySelectorAll('button')].filter(shown).map((e) => e.getBoundingClientRect().height),
      row: last.left >= first.right && last.top < first.bottom,
    };
  });
}"""
# Every button of every form in the page's content (a list's Revoke, Change, Remove too).
FORM_BUTTONS = """() => [...document.querySelectorAll('.main form button:not(.link)')]
  .filter((e) => e.offsetParent !== null)
  .map((e) => [e.textContent.trim(), e.getBoundingClientRect().height])"""

# The pages with row forms, and how many each shows once its <details> are open.
PAGES = {
    "/topics": 1,
    "/topics/{topic}": 1,
    "/settings/tokens": 1,
    "/settings/members": 1,
    "/settings/workspace": 1,  # its name
    "/settings/platforms": 9,  # connect Bluesky, Mastodon; four keys; three budgets
}


async def _newsroom(people):  # type: ignore[no-untyped-def]
    """An owner with a long-named topic, a token and an open invitation."""
    person = await people.member("owner")
    ws, user = person.workspace_id, person.user_id
    topic = await topics.create_topic(ws, TopicForm(LONG_TOPIC), actor_user_id=user)
    await accounts.issue_api_token(ws, user, "Redaktionsskript")
    await accounts.invite(ws, "editor", email="neu@example.org", actor_user_id=user)
    return person, topic


async def _row_forms(page: Page, path: str, count: int) -> list[dict]:  # type: ignore[type-arg]
    await page.goto(path)
    await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    forms = await page.evaluate(ROW_FORMS)
    assert len(forms) == count, (path, forms)
    return forms  # type: ignore[no-any-return]


async def _signed_in_newsroom(browser: Browser, server: Server, watch: PageWatch, people, size):  # type: ignore[no-untyped-def]
    """A page signed in to `_newsroom` at `size` (PHONE or DESK), and the topic's id."""
    person, topic = await _newsroom(people)
    ctx = await _watched_context(browser, server.url, watch, **size)
    page = await ctx.new_page()
    await sign_in_page(page, person.email, PASSWORD)
    return ctx, page, topic


async def test_row_forms_stack_full_width_on_a_phone_with_44px_buttons(
    browser: Browser, server: Server, services: None, people, watch: PageWatch
):
    ctx, page, topic = await _signed_in_newsroom(browser, server, watch, people, PHONE)
    for path, count in PAGES.items():
        for form in await _row_forms(page, path.format(topic=topic), count):
            assert not form["row"], (path, form)
            assert all(abs(w - form["width"]) <= 1 for w in form["fields"]), (path, form)
            assert all(h >= 44 for h in form["buttons"]), (path, form)
        small = [b for b in await page.evaluate(FORM_BUTTONS) if b[1] < 44]
        assert small == [], (path, small)
    # The long name, as the topic's edit form shows it, is whole in its field.
    await page.goto(f"/topics/{topic}")
    name = page.locator("#edit-topic input[name=name]")
    assert await name.evaluate("e => e.scrollWidth <= e.clientWidth"), LONG_TOPIC
    await ctx.close()


async def test_row_forms_stay_a_row_on_a_desk(
    browser: Browser, server: Server, services: None, people, watch: PageWatch
):
    ctx, page, topic = await _signed_in_newsroom(browser, server, watch, people, DESK)
    for path, count in PAGES.items():
        for form in await _row_forms(page, path.format(topic=topic), count):
            assert form["row"], (path, form)
            assert all(w < form["width"] - 1 for w in form["fields"]), (path, form)
    await ctx.close()


# Where the focus is: "in" the dialog, "out" on something else in the page, or "browser" when
# the page has none (Chromium's Tab passes through its own toolbar between a modal's last and
# first control: the page behind stays out of reach).
WHERE = """s => {
  const active = document.activeElement;
  if (document.querySelector(s).contains(active)) return 'in';
  return !active || active === document.body ? 'browser' : 'out: ' + active.outerHTML.slice(0, 120);
}"""


async def _tab_stays_in(page: Page, selector: str, presses: int = 25) -> None:
    """Tab and Shift+Tab round and round: the focus never reaches the page behind."""
    for key in ("Tab", "Shift+Tab"):
        seen = []
        for _ in range(presses):
            await page.keyboard.press(key)
            seen.append(await page.evaluate(WHERE, selector))
        assert all(where in ("in", "browser") for where in seen), (key, seen)
        assert seen.count("in") > seen.count("browser"), (key, seen)  # it comes back round


async def test_the_column_editors_sheet_keeps_the_focus_until_closed(
    browser: Browser, server: Server, services: None, people, watch: PageWatch
):
    person = await people.member("editor")
    column = await keyword_column(person.workspace_id)
    await add_item(person.workspace_id, column, 1)
    ctx = await _watched_context(browser, server.url, watch, **PHONE)
    page = await ctx.new_page()
    await sign_in_page(page, person.email, PASSWORD)
    await expect(page.locator("#live-status")).to_be_hidden()
    editor = page.locator("#editor")

    await page.click("#add-column")
    await expect(editor.locator("input[name=title]")).to_be_focused()
    await _tab_stays_in(page, "#editor")
    # A refused form comes back as a patch of the sheet: still the only thing Tab reaches.
    await editor.locator("button[type=submit]").click()
    await expect(editor.locator("input[name=title]")).to_have_attribute("aria-invalid", "true")
    await _tab_stays_in(page, "#editor")
    # Escape closes it, back to the control that opened it.
    await page.keyboard.press("Escape")
    await expect(editor).to_be_hidden()
    await expect(page.locator("#add-column")).to_be_focused()

    # Opened from a column's menu (which closes): back to that menu's "⋯"; the × closes too.
    menu = page.locator(f"#col-{column}-head .column-menu")
    await menu.locator("summary").click()
    await menu.get_by_text("Edit").click()
    await expect(editor.locator("input[name=title]")).to_be_focused()
    await _tab_stays_in(page, "#editor", presses=5)
    await editor.locator("a.close").click()
    await expect(editor).to_be_hidden()
    await expect(menu.locator("summary")).to_be_focused()
    # Saved, the sheet closes and the wall is Tab's again.
    await page.click("#add-column")
    await editor.locator("input[name=title]").fill("Floods")
    await editor.locator("input[name=query]").fill("#floods")
    await editor.locator("button[type=submit]").click()
    await expect(editor).to_be_hidden()
    await page.keyboard.press("Tab")
    assert not await page.evaluate(
        "document.getElementById('editor').contains(document.activeElement)"
    )
    await ctx.close()
