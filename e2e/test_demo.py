"""The offline demo's servers reached by the real server processes (EGRESS_DIVERT)."""

from __future__ import annotations

from playwright.async_api import Page, expect

from app.demo.content import ARTICLE_ORIGIN
from app.demo.sites import ArticleSite
from app.demo.world import RunningWorld
from app.topics import queries, services
from app.topics.types import RunStatus, SourceForm, TopicForm
from e2e.conftest import sign_in_page
from e2e.test_topics import finished_runs
from tests.factories import PASSWORD


async def test_the_demo_news_site_fills_the_library(
    page: Page, people, demo_world: RunningWorld
) -> None:
    editor = await people.member("editor")
    workspace_id = editor.workspace_id
    topic_id = await services.create_topic(
        workspace_id, TopicForm("Climate desk"), actor_user_id=None
    )
    await services.add_source(
        workspace_id,
        topic_id,
        SourceForm("feed", url=f"{ARTICLE_ORIGIN}/feeds/climate.rss"),
        actor_user_id=None,
    )
    await finished_runs(workspace_id, topic_id, 1)  # the worker process scraped it
    [run] = await queries.recent_runs(workspace_id, topic_id)
    assert run.status == RunStatus.OK, run.error
    assert run.new > 0

    courier = demo_world.servers["courier"]
    assert isinstance(courier, ArticleSite)
    assert courier.hits_of("/feeds/climate.rss")[0].headers["host"] == "courier.example"
    newest = next(w for w in courier.wire() if w.article.topic == "climate")
    await sign_in_page(page, editor.email, PASSWORD)
    await page.goto("/articles")
    await expect(page.get_by_text(newest.article.title).first).to_be_visible()
