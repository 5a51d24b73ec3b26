"""The library in a real browser: the reader's analysis panel fills in live, phones fit."""

import asyncio
import re

from playwright.async_api import Locator, Page, Route, expect

from app.analysis.services import reconcile
from app.articles.services import delete_article, process_scraped_article
from app.articles.types import LIBRARY_TOPIC
from app.core import db
from app.live.notices import publish
from e2e.conftest import sign_in_page
from e2e.test_live import _set_hidden
from tests.articles.helpers import ENGLISH, article_event
from tests.factories import PASSWORD, Person


async def _hold_analysis(article_id: int) -> None:
    """Make the analysis pending but not yet due, whatever the real worker did meanwhile."""
    await db.fetchval(
        """UPDATE analyses SET status = 'pending', summary = '', keywords = '[]',
             completed_at = NULL, lease_until = NULL, next_attempt_at = now() + interval '1 hour'
           WHERE article_id = $1 RETURNING id""",
        article_id,
    )


async def test_the_reader_panel_fills_in_when_the_worker_analyses(page: Page, people):
    person = await people.member("editor")
    outcome = await process_scraped_article(
        person.workspace_id,
        article_event(
            "https://news.example/transport-budget", text=ENGLISH, title="Transport budget"
        ),
    )
    await _hold_analysis(outcome.article_id)
    await sign_in_page(page, person.email, PASSWORD)
    await page.goto(f"/articles/{outcome.article_id}")
    panel = page.locator("#analysis-panel")
    await expect(panel).to_contain_text("Waiting for analysis")
    await expect(page.locator(".reader-body")).to_contain_text("night buses")
    marker = await page.evaluate("() => (window.__marker = Math.random())")

    # The analysis falls due; the reconciler wakes the real arq worker process.
    await db.fetchval(
        "UPDATE analyses SET next_attempt_at = now() WHERE article_id = $1 RETURNING id",
        outcome.article_id,
    )
    assert await reconcile() >= 1

    await expect(panel).to_contain_text("local-v1", timeout=15_000)
    await expect(panel.locator(".keywords li").first).to_be_visible()
    await expect(panel).not_to_contain_text("Waiting for analysis")
    assert await page.evaluate("() => window.__marker") == marker  # no reload


async def test_a_new_article_appears_in_the_library_without_reload(page: Page, people):
    person = await people.member("editor")
    await sign_in_page(page, person.email, PASSWORD)
    await page.goto("/articles")
    await expect(page.locator("#library-list")).to_contain_text("The library is empty.")

    await process_scraped_article(person.workspace_id, article_event(title="Night buses arrive"))

    await expect(page.locator("#library-list")).to_contain_text(
        "Night buses arrive", timeout=10_000
    )


async def test_the_library_and_the_reader_fit_a_phone(phone: Page, people):
    person = await people.member("editor")
    outcome = await process_scraped_article(
        person.workspace_id,
        article_event(
            title="A rather long headline about the council's transport budget and trams",
            site_name="A news site with a long name",
            byline="Kim Reporter and Sam Writer",
        ),
    )
    await sign_in_page(phone, person.email, PASSWORD)
    for path in ("/articles", f"/articles/{outcome.article_id}", "/articles?q=tram"):
        await phone.goto(path)
        await expect(phone.locator("main h1").first).to_be_visible()
        width = await phone.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 360, path


async def test_on_a_phone_the_filters_fold_so_the_articles_come_first(phone: Page, people):
    person = await people.member("editor")
    await process_scraped_article(person.workspace_id, article_event(title="Tram budget"))
    await sign_in_page(phone, person.email, PASSWORD)
    await phone.goto("/articles")
    topic, toggle = phone.locator("select[name=topic]"), phone.locator(".filters-toggle")
    await expect(topic).to_be_hidden()
    await expect(phone.locator("input[name=q]")).to_be_visible()  # searching stays at hand
    first = await phone.locator(".article-title").first.bounding_box()
    assert first is not None
    assert first["y"] < 600  # on the first screen of a 844 px phone
    await toggle.click()
    await expect(topic).to_be_visible()
    await expect(toggle).to_have_attribute("aria-expanded", "true")
    await phone.locator("select[name=sort]").select_option("oldest")
    await phone.locator(".library-filters button[type=submit]").click()
    await phone.wait_for_url(re.compile(r"sort=oldest"))
    await expect(topic).to_be_visible()  # a chosen order keeps them open


async def test_load_more_adds_the_next_rows_below_the_first(page: Page, people):
    person = await people.member("editor")
    for i in range(30):
        await process_scraped_article(person.workspace_id, article_event(title=f"Story {i:02d}"))
    await sign_in_page(page, person.email, PASSWORD)
    await page.goto("/articles")
    rows = page.locator("#library-list li.article-row")
    await expect(rows).to_have_count(25)
    first = await rows.first.get_attribute("id")

    await page.get_by_role("link", name="Load more").click()

    await expect(rows).to_have_count(30)  # appended, not replaced
    assert await rows.first.get_attribute("id") == first
    await expect(rows.last).to_contain_text("Story 00")
    await expect(page.get_by_role("link", name="Load more")).to_have_count(0)
    assert page.url.endswith("/articles")  # the page itself stayed


async def _row_ids(page: Page) -> list[str]:
    return await page.locator("#library-list li.article-row").evaluate_all(
        "rows => rows.map(row => row.id)"
    )


async def _live_library(page: Page, people, stories: int) -> tuple[Person, Locator]:
    """An editor's library of `stories` articles, open with its live stream connected."""
    person = await people.member("editor")
    for i in range(stories):
        await process_scraped_article(person.workspace_id, article_event(title=f"Story {i:02d}"))
    await sign_in_page(page, person.email, PASSWORD)
    async with page.expect_response(lambda r: "/articles/stream" in r.url):
        await page.goto("/articles")
    return person, page.locator("#library-list li.article-row")


async def test_loaded_rows_survive_a_reconnect_and_load_more_adds_no_twin(page: Page, people):
    person, rows = await _live_library(page, people, 60)
    more = page.get_by_role("link", name="Load more")
    await expect(rows).to_have_count(25)

    # A new article arrives live: the first page's last row moves down, it does not go.
    await process_scraped_article(person.workspace_id, article_event(title="Breaking news"))
    await expect(rows.first).to_contain_text("Breaking news", timeout=10_000)
    await expect(rows).to_have_count(26)
    await more.click()
    await expect(rows).to_have_count(51)
    await page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    loaded = await _row_ids(page)
    assert len(set(loaded)) == 51  # no row twice

    # The stream reconnects (the tab went away and came back): the whole state again.
    async with page.expect_response(lambda r: "/articles/stream" in r.url):
        await _set_hidden(page, True)
        await _set_hidden(page, False)
    await process_scraped_article(person.workspace_id, article_event(title="After the return"))
    await expect(rows.first).to_contain_text("After the return", timeout=10_000)
    after = await _row_ids(page)
    assert after[1:] == loaded  # every loaded row kept, in order, once
    assert await page.evaluate("() => window.scrollY") > 0

    await more.click()  # goes on after the last loaded row
    await expect(rows).to_have_count(62)
    assert len(set(await _row_ids(page))) == 62
    await expect(more).to_be_hidden()


async def _library_ids(workspace_id: int) -> list[str]:
    """The library's rows in the list's order, as a reload would show them."""
    rows = await db.fetch(
        """SELECT id FROM articles WHERE workspace_id = $1 AND deleted_at IS NULL
           ORDER BY least(published_at, created_at) DESC, id DESC""",
        workspace_id,
    )
    return [f"article-{r['id']}" for r in rows]


async def test_articles_that_arrived_while_away_fill_the_gap_above_the_loaded_rows(
    page: Page, people
):
    person, rows = await _live_library(page, people, 40)
    await page.get_by_role("link", name="Load more").click()
    await expect(rows).to_have_count(40)

    # Away (the stream closes): three articles arrive and push three rows off the first page.
    await _set_hidden(page, True)
    for i in range(3):
        await process_scraped_article(person.workspace_id, article_event(title=f"Away {i}"))
    async with page.expect_response(lambda r: "/articles/stream" in r.url):
        await _set_hidden(page, False)

    await expect(rows.first).to_contain_text("Away 2", timeout=10_000)
    await expect(rows).to_have_count(43)  # the three pushed-off rows are back, between
    assert await _row_ids(page) == await _library_ids(person.workspace_id)


async def test_loaded_rows_follow_an_analysis_and_a_move_to_trash_made_elsewhere(
    page: Page, people
):
    person, rows = await _live_library(page, people, 30)
    *_, leaving, analysed = await _library_ids(person.workspace_id)  # the two oldest: loaded
    await _hold_analysis(int(analysed.removeprefix("article-")))
    await page.get_by_role("link", name="Load more").click()
    await expect(rows).to_have_count(30)
    state = page.locator(f"#library-loaded #{analysed} .state")
    await expect(state).to_have_class(re.compile("state-pending"))
    marker = await page.evaluate("() => (window.__marker = Math.random())")

    await db.fetchval(
        "UPDATE analyses SET next_attempt_at = now() WHERE article_id = $1 RETURNING id",
        int(analysed.removeprefix("article-")),
    )
    assert await reconcile() >= 1
    await expect(state).to_have_class(re.compile("state-completed"), timeout=15_000)
    # Another device moves a loaded article to the trash: its row goes here too.
    await delete_article(
        person.workspace_id, int(leaving.removeprefix("article-")), actor_user_id=None
    )
    await expect(page.locator(f"#{leaving}")).to_have_count(0, timeout=10_000)
    await expect(rows).to_have_count(29)
    assert await page.evaluate("() => window.__marker") == marker  # no reload


async def _analysed(page: Page, workspace_id: int) -> None:
    """Every article's analysis is done and shown: no notice is left to come in between."""
    for _ in range(300):
        if not await db.fetchval(
            """SELECT count(*) FROM analyses
               WHERE workspace_id = $1 AND status IN ('pending', 'running')""",
            workspace_id,
        ):
            break
        await asyncio.sleep(0.1)
    await expect(page.locator("#library-rows .state-pending")).to_have_count(0, timeout=10_000)


async def test_a_whole_state_with_a_new_article_moves_the_row_it_pushes_off_below(
    page: Page, people
):
    person, rows = await _live_library(page, people, 30)
    await process_scraped_article(person.workspace_id, article_event(title="Breaking news"))
    await expect(rows).to_have_count(26)  # the row it pushed off stays, below the first page
    await _analysed(page, person.workspace_id)

    # A burst: more first-page rows changed than a patch carries, and a new article, in one
    # render - the whole state goes out, and it holds the first page only.
    changed = [int(r.removeprefix("article-")) for r in (await _library_ids(person.workspace_id))]
    await db.fetchval(
        """UPDATE articles SET title = title || ' (updated)'
           WHERE workspace_id = $1 AND id = ANY($2::bigint[]) RETURNING id""",
        person.workspace_id,
        changed[:22],
    )
    await process_scraped_article(person.workspace_id, article_event(title="In a burst"))

    await expect(rows.first).to_contain_text("In a burst", timeout=10_000)
    await expect(rows.nth(2)).to_contain_text("(updated)")
    assert await _row_ids(page) == (await _library_ids(person.workspace_id))[:27]


async def _change_the_first_row(page: Page, workspace_id: int) -> None:
    """The live view renders again, and this client shows that render as a patch."""
    first = (await _library_ids(workspace_id))[0]
    await db.fetchval(
        """UPDATE articles SET title = title || ' (updated)'
           WHERE workspace_id = $1 AND id = $2 RETURNING id""",
        workspace_id,
        int(first.removeprefix("article-")),
    )
    await publish(workspace_id, LIBRARY_TOPIC)
    await expect(page.locator(f"#library-rows #{first}")).to_contain_text(
        "(updated)", timeout=10_000
    )


async def test_a_row_pushed_off_while_the_held_rows_are_read_is_kept(page: Page, people):
    person, rows = await _live_library(page, people, 40)
    await page.get_by_role("link", name="Load more").click()
    await expect(rows).to_have_count(40)
    await _analysed(page, person.workspace_id)
    # The held rows are read for a whole state of a render this client has not shown. A
    # reconnect may join the view its old stream is still in on the server: with no render
    # since, it gets the very bytes it shows, and rightly reads nothing (docs/decisions/live.md).
    await _change_the_first_row(page, person.workspace_id)

    async def answer_after_a_new_article(route: Route) -> None:
        response = await route.fetch()  # the server reads the held rows now ...
        try:
            await process_scraped_article(person.workspace_id, article_event(title="Meanwhile"))
            await expect(rows.first).to_contain_text("Meanwhile", timeout=10_000)
        finally:  # an answer held back for good would only time the test out, saying nothing
            await route.fulfill(response=response)  # ... and they arrive after the new article

    await page.route("**/articles/held?*", answer_after_a_new_article, times=1)
    async with page.expect_response(lambda r: "/articles/held" in r.url):
        await _set_hidden(page, True)  # the reconnect's whole state asks for them
        await _set_hidden(page, False)

    await expect(rows).to_have_count(41)
    assert await _row_ids(page) == await _library_ids(person.workspace_id)


# Every row id the list shows after each change (library.js has tidied it by then: its observer
# came first), and whether a read of the held rows has finished.
_WATCH_THE_LIST = """() => {
  const list = document.getElementById("library-list");
  window.__shown = [];
  window.__heldRead = false;
  new MutationObserver(() => window.__shown.push(
    [...list.querySelectorAll("li.article-row")].map((row) => row.id)
  )).observe(list, {childList: true, subtree: true});
  document.addEventListener("datastar-fetch", (event) => {
    if (event.detail.type === "finished" && event.detail.el?.id === "library-held") {
      window.__heldRead = true;
    }
  });
}"""

# A slow network: the held rows' answer comes in pieces, one event each, half a second apart.
_SLOW_HELD_ANSWERS = """() => {
  const fetch = window.fetch;
  window.fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!String(input).includes("/articles/held")) return response;
    const events = (await response.text()).split(/(?<=\\n\\n)/);
    const body = new ReadableStream({
      async start(controller) {
        for (const event of events) {
          controller.enqueue(new TextEncoder().encode(event));
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        controller.close();
      },
    });
    return new Response(body, {status: response.status, headers: response.headers});
  };
}"""


async def test_loaded_rows_stay_shown_while_a_slow_network_brings_the_held_rows(page: Page, people):
    person, rows = await _live_library(page, people, 40)
    await page.get_by_role("link", name="Load more").click()
    await expect(rows).to_have_count(40)
    await _analysed(page, person.workspace_id)
    await _change_the_first_row(page, person.workspace_id)  # a render the reconnect reads for
    shown = await _row_ids(page)
    await page.evaluate(_SLOW_HELD_ANSWERS)
    await page.evaluate(_WATCH_THE_LIST)

    await _set_hidden(page, True)
    await _set_hidden(page, False)  # the reconnect's whole state asks for the held rows

    await page.wait_for_function("() => window.__heldRead", timeout=10_000)
    seen = await page.evaluate("() => window.__shown")
    assert seen  # the answer replaced the loaded rows ...
    assert [len(ids) for ids in seen if ids != shown] == []  # ... not one moment showed fewer
    assert await _row_ids(page) == await _library_ids(person.workspace_id)


async def test_rows_load_more_added_while_the_held_rows_were_read_stay(page: Page, people):
    person, rows = await _live_library(page, people, 60)
    more = page.get_by_role("link", name="Load more")
    await more.click()
    await expect(rows).to_have_count(50)
    await _analysed(page, person.workspace_id)
    await _change_the_first_row(page, person.workspace_id)  # a render the reconnect reads for
    await page.evaluate(_WATCH_THE_LIST)
    clicked = asyncio.Event()

    async def answer_after_load_more(route: Route) -> None:
        response = await route.fetch()  # the server reads the held rows now ...
        try:
            await asyncio.wait_for(clicked.wait(), 10)
        finally:  # ... and they arrive after "Load more" added the last ten
            await route.fulfill(response=response)

    await page.route("**/articles/held?*", answer_after_load_more, times=1)
    async with page.expect_request(lambda r: "/articles/held" in r.url):
        await _set_hidden(page, True)
        await _set_hidden(page, False)
    await more.click()
    await expect(rows).to_have_count(60)
    await expect(more).to_be_hidden()
    clicked.set()

    await page.wait_for_function("() => window.__heldRead", timeout=10_000)
    assert await _row_ids(page) == await _library_ids(person.workspace_id)
    await expect(more).to_be_hidden()  # "Load more" stays where it reached: the end
