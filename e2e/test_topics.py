"""Topics in a real browser: "Run now", and the run's counters arriving live on the page."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from playwright.async_api import Page, expect

from app.topics import queries, services
from app.topics.types import RunStatus, SourceForm, TopicForm
from e2e.conftest import sign_in_page
from tests.egress.servers import Reply, Seen
from tests.factories import PASSWORD
from tests.fakes.site import FakeSite

FEED = "/feeds/e2e.rss"


@pytest.fixture
def slow_feed(fake_site: FakeSite) -> str:
    """An RSS feed without validators that answers after a second: a run takes a while."""

    def answer(_seen: Seen) -> Reply:
        body = fake_site.text("feeds", "full.rss").encode()
        return Reply(headers=[("Content-Type", "application/rss+xml")], body=body, delay=1.0)

    fake_site.routes[FEED] = answer
    return fake_site.base + FEED


async def finished_runs(workspace_id: int, topic_id: int, count: int) -> None:
    for _ in range(150):
        runs = await queries.recent_runs(workspace_id, topic_id)
        if len([r for r in runs if r.status != RunStatus.RUNNING]) >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the worker did not finish {count} run(s): {runs}")


async def test_run_now_shows_the_runs_counters_live(page: Page, people, slow_feed: str):
    editor = await people.member("editor")
    workspace_id = editor.workspace_id
    topic_id = await services.create_topic(workspace_id, TopicForm("Climate"), actor_user_id=None)
    source_id = await services.add_source(
        workspace_id, topic_id, SourceForm("feed", url=slow_feed), actor_user_id=None
    )
    await finished_runs(workspace_id, topic_id, 1)  # adding a source runs it once

    await sign_in_page(page, editor.email, PASSWORD)
    await page.goto(f"/topics/{topic_id}")
    runs = page.locator("#runs tbody tr.run")
    await expect(runs).to_have_count(1)
    await expect(runs.first.locator("td.new")).to_contain_text("3")

    await page.click(f"#source-{source_id} button.run-now")
    await page.wait_for_url(f"**/topics/{topic_id}#source-{source_id}")
    marker = await page.evaluate("() => (window.__marker = Math.random())")
    # The feed answers after a second: the run finishes after the page has loaded.
    newest = runs.first
    await expect(runs).to_have_count(2, timeout=15_000)
    await expect(newest).to_have_attribute("data-status", "ok", timeout=15_000)
    await expect(newest.locator("td.found")).to_contain_text("3")
    await expect(newest.locator("td.new")).to_contain_text("0")
    await expect(newest.locator("td.duplicates")).to_contain_text("3")
    assert await page.evaluate("() => window.__marker") == marker  # patched live, no reload


async def test_a_topic_page_fits_a_phone(phone: Page, people, fake_site: FakeSite):
    editor = await people.member("editor")
    topic_id = await services.create_topic(
        editor.workspace_id, TopicForm("A rather long topic name about rivers"), actor_user_id=None
    )
    fake_site.routes["/feeds/phone.rss"] = dataclasses.replace(
        Reply(status=503, body=b"down"), headers=[("Content-Type", "text/plain")]
    )
    await services.add_source(
        editor.workspace_id, topic_id,
        SourceForm("feed", url=fake_site.base + "/feeds/phone.rss?with=a-very-long-query-string-that-would-overflow"),
        actor_user_id=None,
    )  # fmt: skip
    await finished_runs(editor.workspace_id, topic_id, 1)
    await sign_in_page(phone, editor.email, PASSWORD)
    await phone.goto(f"/topics/{topic_id}")
    await expect(phone.locator("#runs tr.run")).to_have_count(1)
    width = await phone.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 360
    await expect(phone.locator("#add-source button[type=submit]")).to_be_visible()
