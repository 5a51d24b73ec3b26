"""Every page in German on a 390x844 phone: nothing overflows, no label is cut off.

German words run long ("Arbeitsbereich anlegen"); a button or label that overflows its box
or pushes the page sideways is a layout bug only German shows. One browser context walks
every page, each with something on it (columns with posts, an article, an import, a topic).
"""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from playwright.async_api import Browser, Locator, Page, expect

from app.accounts import recovery, services
from app.articles.services import process_scraped_article
from app.articles.types import Source
from app.imports import services as import_services
from app.topics import services as topic_services
from app.topics.types import TopicForm
from app.wall.types import PAGE_SIZE
from e2e.conftest import Server, _watched_context, sign_in_page
from tests.articles.helpers import article_event
from tests.factories import PASSWORD
from tests.wall.helpers import add_item, keyword_column

WIDTH, HEIGHT = 390, 844
# Text a person reads in a box: if it is wider than its box, it is cut off or spills over;
# so is a placeholder wider than its field. A strip that scrolls sideways may hold items past
# its edge, but no item may straddle the edge: that is a cut-off label ("API-To"). Only the
# wall's swipe strips (its columns, their chips) show a sliver of the next one on purpose.
OVERFLOWING = """() => {
  const width = document.documentElement.clientWidth;
  const boxes = document.querySelectorAll(
    'button, label, a.button, nav a, .tabs a, h1, h2, th, select, summary, .badge'
  );
  const bad = [];
  const SWIPED = '.wall, .wall-chips';
  const scroller = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return p;
    }
    return null;
  };
  const straddles = (rect, left, right) =>
    (rect.left < left - 1 && rect.right > left + 1) || (rect.left < right - 1 && rect.right > right + 1);
  for (const el of boxes) {
    const rect = el.getBoundingClientRect();
    // Hidden, or visually hidden text (screen readers only) that is 1 px wide by design.
    if (rect.width <= 2 || rect.height <= 2 || getComputedStyle(el).visibility === 'hidden') continue;
    const spills = el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'auto';
    const strip = scroller(el);
    let cut;
    if (strip && strip.matches(SWIPED)) {
      cut = false;
    } else if (strip) {
      const s = strip.getBoundingClientRect();
      cut = straddles(rect, Math.max(s.left, 0), Math.min(s.right, width));
    } else {
      cut = rect.right > width + 1 || rect.left < -1;
    }
    if (cut || spills) bad.push(`${el.tagName.toLowerCase()} "${el.textContent.trim().slice(0, 40)}"`);
  }
  const canvas = document.createElement('canvas').getContext('2d');
  for (const field of document.querySelectorAll('input[placeholder], textarea[placeholder]')) {
    const style = getComputedStyle(field);
    if (field.value || field.offsetParent === null) continue;
    // A box of text lines: Chromium counts the placeholder's lines into its scroll height.
    if (field.tagName === 'TEXTAREA') {
      if (field.scrollHeight > field.clientHeight + 1) bad.push(`placeholder "${field.placeholder}"`);
      continue;
    }
    canvas.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (canvas.measureText(field.placeholder).width > room + 1) bad.push(`placeholder "${field.placeholder}"`);
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
    import os

    if os.environ.get("SHOTS"):
        await page.screenshot(path=f"/tmp/probe/shots/{path.replace('/', '_')}.png")
    result = await page.evaluate(OVERFLOWING)
    assert result["bad"] == [], (path, result["bad"])
    assert result["page"] <= WIDTH, (path, result)


async def _visit(page: Page, path: str, *, signed_in: bool = True) -> None:
    await page.goto(path)
    await expect(page.locator("html")).to_have_attribute("lang", "de")
    if signed_in:
        await expect(page.locator("nav.nav")).to_contain_text("Bibliothek")
    await _fits(page, path)


async def _newsroom(person) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Something on every page: columns with posts, an article, imports, a topic, a token."""
    ws, user = person.workspace_id, person.user_id
    floods = await keyword_column(ws, "Hochwasser an der Elbe", "#hochwasser")
    await keyword_column(ws, "Landtagswahl Sachsen-Anhalt", "#landtagswahl")
    for n in range(3):
        await add_item(ws, floods, n)
    article = await process_scraped_article(
        ws,
        article_event(
            title="Verkehrsausschuss beschließt Haushalt für Straßenbahnen und Nachtbusse",
            site_name="Mitteldeutsche Rundschau",
            byline="Kim Berichterstatterin",
        ),
    )
    job = await import_services.create_job(
        ws, ["https://news.example/a", "https://news.example/b"], actor_user_id=user
    )
    saved = await import_services.create_job(
        ws, ["https://news.example/c"], actor_user_id=user, source=Source.MANUAL
    )
    topic = await topic_services.create_topic(
        ws, TopicForm("Klimaanpassung in Kommunen"), actor_user_id=user
    )
    await services.issue_api_token(ws, user, "Redaktionsskript")
    await services.invite(ws, "editor", email="neu@example.org", actor_user_id=user)
    return {
        "reader": f"/articles/{article.article_id}",
        "job": f"/articles/import/{job}",
        "saved": f"/save/{saved}",
        "topic": f"/topics/{topic}",
    }


async def test_german_pages_fit_a_phone(german_phone: Page, people):
    page = german_phone
    person = await people.member("owner")
    await services.update_profile(
        person.user_id, "Renate Müller-Lüdenscheidt", "de", "Europe/Berlin"
    )
    paths = await _newsroom(person)
    reset = await recovery.issue_reset(person.user_id, valid=timedelta(hours=1))
    invitation = await services.invite(
        person.workspace_id, "viewer", email="", actor_user_id=person.user_id
    )

    # Before sign-in, pages follow the browser's language.
    await _visit(page, "/login", signed_in=False)
    await expect(page.locator("button[type=submit]")).to_have_text("Anmelden")
    for path in ("/forgot", f"/reset/{reset}", f"/invite/{invitation}", "/no-such-page"):
        await _visit(page, path, signed_in=False)

    await sign_in_page(page, person.email, PASSWORD)
    await expect(page.locator(".wall .column")).to_have_count(2)
    await _fits(page, "/wall")
    await page.click("#add-column")  # the column editor: a bottom sheet on phones
    await expect(page.locator("#editor")).to_be_visible()
    await _fits(page, "/wall, column editor")
    for path in (
        "/articles",
        "/articles?deleted=1",
        paths["reader"],
        "/articles/import",
        paths["job"],
        "/save?url=https://news.example/d",
        paths["saved"],
        "/topics",
        paths["topic"],
        "/activity",
        "/settings/",
        "/settings/members",
        "/settings/tokens",
        "/articles/999999999",
        "/no-such-page",
    ):
        await _visit(page, path)


async def test_german_rail_labels_fit_a_desk(page: Page, people):
    """On a desk the nav is a narrow rail: the current page's label is bold, and bold
    "Einstellungen" was wider than the rail, cut off at both sides."""
    person = await people.member("owner")
    await services.update_profile(person.user_id, "Renate Müller", "de", "Europe/Berlin")
    await sign_in_page(page, person.email, PASSWORD)
    for path in ("/settings/", "/activity", "/articles/import", "/articles"):
        await page.goto(path)
        await expect(page.locator('.nav a[aria-current="page"]')).to_be_visible()
        labels = await page.evaluate(
            """() => [...document.querySelectorAll('.nav a')]
                 .filter(a => a.scrollWidth > a.clientWidth)
                 .map(a => a.textContent.trim())"""
        )
        assert labels == [], (path, labels)


async def _german_newsroom(page: Page, people) -> dict[str, str]:  # type: ignore[no-untyped-def]
    person = await people.member("owner")
    await services.update_profile(person.user_id, "Renate Müller", "de", "Europe/Berlin")
    paths = await _newsroom(person)
    await sign_in_page(page, person.email, PASSWORD)
    return paths


async def test_german_column_menu_edit_is_a_menu_entry(german_phone: Page, people):
    """The column menu's "Bearbeiten" is a link among buttons: it looked like a bare
    underlined link at the top of its box."""
    page = german_phone
    await _german_newsroom(page, people)

    menu = page.locator(".column-menu").first
    await menu.locator("summary").click()
    edit, pause = menu.get_by_text("Bearbeiten"), menu.get_by_role("button", name="Pausieren")
    edit_box, pause_box = await edit.bounding_box(), await pause.bounding_box()
    assert edit_box
    assert pause_box
    assert edit_box["height"] == pause_box["height"]
    await expect(edit).to_have_css("text-decoration-line", "none")


async def test_german_delete_topic_keeps_to_one_line(german_phone: Page, people):
    """ "Thema löschen" shared a line with its note and was squeezed onto two lines."""
    page = german_phone
    paths = await _german_newsroom(page, people)
    await page.goto(paths["topic"])
    delete = page.get_by_role("button", name="Thema löschen")
    save = page.get_by_role("button", name="Speichern", exact=True)
    delete_box, save_box = await delete.bounding_box(), await save.bounding_box()
    assert delete_box
    assert save_box
    assert delete_box["height"] == save_box["height"]


async def test_import_list_progress_spans_the_row_on_a_phone(german_phone: Page, people):
    """On a phone an import's bar wraps under its job; at the browser's 10em a full bar
    filled half the card and read as half done."""
    page = german_phone
    await _german_newsroom(page, people)
    await page.goto("/articles/import")
    job = page.locator(".import-job").first
    bar, row = await job.locator("progress").bounding_box(), await job.bounding_box()
    assert bar
    assert row
    assert bar["width"] == row["width"]


async def test_load_older_is_a_thumb_sized_target_on_a_phone(german_phone: Page, people):
    """ "Ältere laden" at a column's end was a line of text, 18 px tall, under a thumb."""
    page = german_phone
    person = await people.member("owner")
    await services.update_profile(person.user_id, "Renate Müller", "de", "Europe/Berlin")
    column = await keyword_column(person.workspace_id, "Hochwasser an der Elbe", "#hochwasser")
    for n in range(PAGE_SIZE + 1):  # more than a column's first page
        await add_item(person.workspace_id, column, n)
    await sign_in_page(page, person.email, PASSWORD)
    sign_out = await page.get_by_role("button", name="Abmelden").bounding_box()
    assert sign_out
    assert sign_out["height"] >= 44
    sources = await page.locator(".sources > summary").first.bounding_box()
    assert sources
    assert sources["height"] >= 24  # "1 Quelle · …" was 19 px; WCAG's minimum is 24
    older = page.get_by_role("link", name="Ältere laden")
    await older.scroll_into_view_if_needed()
    box = await older.bounding_box()
    assert box
    assert box["height"] >= 44


async def test_german_forms_are_explained_in_german_beside_the_field(german_phone: Page, people):
    """Chromium's own bubbles ("Please fill out this field.", "Please enter a URL.") spoke
    English on a German page and stopped the form before the server could explain: each form
    now reaches the server, which answers in German beside the field, the typed text kept."""
    page = german_phone
    paths = await _german_newsroom(page, people)

    await page.goto("/topics")
    new = page.locator("#new-topic")
    await new.locator('input[name="description"]').fill("Hitze und Starkregen")
    await new.get_by_role("button", name="Thema anlegen").click()
    await _explained(new, "name", "Geben Sie dem Thema einen Namen.")
    await expect(new.locator('input[name="description"]')).to_have_value("Hitze und Starkregen")

    await page.goto(paths["topic"])
    source = page.locator("#add-source")
    await source.locator('input[name="url"]').fill("example.org/feed.xml")
    await source.get_by_role("button", name="Quelle hinzufügen").click()
    await _explained(source, "url", "beginnend mit http:// oder https://")
    await expect(source.locator('input[name="url"]')).to_have_value("example.org/feed.xml")
    edit = page.locator("#edit-topic")
    await edit.locator('input[name="name"]').fill("")
    await edit.get_by_role("button", name="Speichern", exact=True).click()
    await _explained(edit, "name", "Geben Sie dem Thema einen Namen.")

    await page.goto("/save")
    await page.locator('#save-form input[name="url"]').fill("example.org/artikel")
    await page.get_by_role("button", name="In der Bibliothek speichern").click()
    await expect(page.locator("#save-error")).to_contain_text("Webadresse")
    await expect(page.locator('#save-form input[name="url"]')).to_have_value("example.org/artikel")

    await page.goto("/articles")  # the quick-add box, sent by Datastar
    await page.locator("#quick-add").get_by_role("button", name="Speichern").click()
    await expect(page.locator("#save-status")).to_contain_text("Webadresse")


async def _explained(form: Locator, field: str, words: str) -> None:
    """The field is marked and its German error is beside it, named as its description."""
    control = form.locator(f'[name="{field}"]')
    await expect(control).to_have_attribute("aria-invalid", "true")
    await expect(control).to_have_attribute("aria-describedby", f"error-{field}")
    await expect(form.locator(f"label:has([name='{field}']) #error-{field}")).to_contain_text(words)
