"""An owner deletes a workspace: its name typed as the confirmation, everything of it gone,
every other workspace untouched, its members' open pages cut."""

from __future__ import annotations

import html as html_text
import logging

import pytest

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.analysis import services as analysis
from app.articles.services import process_scraped_article
from app.core import db
from app.imports import services as imports
from app.imports import step as import_step
from app.streams import polling
from app.streams import services as streams
from app.topics import scraping
from app.topics import services as topics
from app.topics.types import SourceForm, TopicForm
from tests.articles.helpers import article_event
from tests.factories import PASSWORD, post_form, sign_in
from tests.live.helpers import ended, next_event
from tests.live.test_fanout import _library_stream


@pytest.fixture(autouse=True)
def _templates(web_app):  # type: ignore[no-untyped-def]
    """The app sets up the templates the live views render."""


def _error_of(page: str) -> str:
    after = page.split('class="field-error"', 1)[-1]
    return html_text.unescape(after.split(">", 1)[-1].split("<", 1)[0])


async def _delete(client, name: str = "Desk"):  # type: ignore[no-untyped-def]
    return await post_form(client, "/settings/workspace/delete", {"confirm_name": name})


async def _exists(workspace_id: int) -> bool:
    with db.system():
        return bool(
            await db.fetchval("SELECT count(*) FROM workspaces WHERE id = $1", workspace_id)
        )


async def _rows_per_table(workspace_id: int) -> dict[str, int]:
    """Every table with a workspace_id, and how many of its rows are this workspace's."""
    with db.system():
        tables = [
            r["table_name"]
            for r in await db.fetch(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public'"
                " AND column_name = 'workspace_id' ORDER BY table_name"
            )
        ]
        return {
            table: await db.fetchval(
                f"SELECT count(*) FROM {table} WHERE workspace_id = $1",
                workspace_id,
            )
            for table in tables
        }


async def _fill(person) -> None:  # type: ignore[no-untyped-def]
    """A bit of everything a workspace holds: library, imports, wall, topics, people."""
    workspace_id = person.workspace_id
    await process_scraped_article(workspace_id, article_event())
    await imports.create_job(
        workspace_id, ["https://example.org/a", "https://example.org/b"], actor_user_id=None
    )
    await streams.create_column(
        workspace_id,
        {
            "type": "keyword",
            "title": "Floods",
            "spec": {"query": "flood", "platforms": ["bluesky"]},
        },
        actor_user_id=person.user_id,
    )
    topic_id = await topics.create_topic(
        workspace_id, TopicForm(name="Climate"), actor_user_id=None
    )
    await topics.add_source(
        workspace_id, topic_id, SourceForm(url="https://example.org/feed"), actor_user_id=None
    )
    await accounts.invite(workspace_id, "viewer", email="", actor_user_id=person.user_id)
    await accounts.issue_api_token(workspace_id, person.user_id, "script")


async def test_everything_of_the_workspace_goes_and_another_workspace_keeps_its_own(
    client, new_client, people
):
    owner = await people.member("owner")
    other = await people.member("owner")
    await _fill(owner)
    await _fill(other)
    await sign_in(client, owner.email)
    await sign_in(new_client(), other.email)
    before = await _rows_per_table(owner.workspace_id)
    filled = ("articles", "import_items", "stream_sources", "topic_sources", "events", "sessions")
    assert all(before[table] for table in filled)
    kept = await _rows_per_table(other.workspace_id)

    response = await _delete(client)

    assert (response.status_code, response.headers["location"]) == (303, "/welcome")
    assert not await _exists(owner.workspace_id)
    assert await _rows_per_table(owner.workspace_id) == dict.fromkeys(before, 0)
    assert await _rows_per_table(other.workspace_id) == kept


async def test_wake_ups_queued_before_the_deletion_find_nothing_to_do(people, settings):
    owner = await people.member("owner")
    workspace_id = owner.workspace_id
    await _fill(owner)
    with db.system():
        ids = await db.fetchrow(
            "SELECT (SELECT id FROM articles WHERE workspace_id = $1) AS article,"
            " (SELECT id FROM stream_sources WHERE workspace_id = $1) AS stream_source,"
            " (SELECT id FROM topic_sources WHERE workspace_id = $1) AS topic_source",
            workspace_id,
        )
    await _delete_as(owner)

    # What arq would run for the jobs already queued: each finds its row gone.
    assert (
        await analysis.run_analysis(workspace_id, ids["article"], settings) == analysis.Run.SKIPPED
    )
    assert await polling.poll_source(workspace_id, ids["stream_source"]) is False
    assert await scraping.scrape_source(workspace_id, ids["topic_source"]) is None
    assert await import_step.run_loop() == 0
    left = await _rows_per_table(workspace_id)
    assert left == dict.fromkeys(left, 0)


async def test_a_wrong_name_deletes_nothing_and_keeps_what_was_typed(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    assert 'href="/settings/workspace"' in (await client.get("/settings")).text

    response = await _delete(client, "Dsk")

    assert response.status_code == 400
    assert _error_of(response.text) == "Type the workspace's name exactly as it is shown."
    assert 'value="Dsk"' in response.text
    assert await _exists(owner.workspace_id)


@pytest.mark.parametrize("role", [Role.ADMIN, Role.EDITOR, Role.VIEWER])
async def test_only_an_owner_may_delete_the_workspace(client, people, role):
    owner = await people.member("owner")
    person = await people.member(role, owner.workspace_id)
    await sign_in(client, person.email)
    assert 'href="/settings/workspace"' not in (await client.get("/settings")).text

    for response in (await client.get("/settings/workspace"), await _delete(client)):
        assert response.status_code == 403
        assert "Your role in this workspace does not allow this." in response.text
    assert await _exists(owner.workspace_id)


async def test_members_land_in_another_workspace_of_theirs_or_on_the_welcome_page(
    client, new_client, people
):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    elsewhere, _second_owner = await people.workspace("Second desk")
    await accounts.add_member(elsewhere, editor.user_id, Role.VIEWER, actor_user_id=None)
    editors_browser = new_client()
    await sign_in(editors_browser, editor.email)
    await sign_in(client, owner.email)
    assert (await editors_browser.get("/wall")).status_code == 200  # working in "Desk"

    assert (await _delete(client)).status_code == 303

    welcome = await client.get("/welcome")  # the owner had no other workspace
    assert welcome.status_code == 200
    assert 'action="/workspaces"' in welcome.text
    landed = await editors_browser.get("/wall")  # the editor lands in the one they have
    assert (landed.status_code, landed.headers["location"]) == (303, "/welcome")
    onward = await editors_browser.get("/welcome")
    assert (onward.status_code, onward.headers["location"]) == (303, "/")
    assert "Second desk" in (await editors_browser.get("/settings")).text


async def test_a_members_open_stream_is_cut_at_once(services, people):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    _, stream = await _library_stream(editor.user_id, editor.workspace_id)
    await next_event(stream)

    await _delete_as(owner)

    last = await ended(stream, timeout=1.0)  # ends, not just goes quiet
    assert "no longer have access" in "".join(last)


async def _delete_as(owner) -> None:  # type: ignore[no-untyped-def]
    await accounts.delete_workspace(owner.workspace_id, "Desk", actor_user_id=owner.user_id)


async def test_the_deletion_is_logged_with_the_workspace_and_who(people, caplog):
    owner = await people.member("owner")
    with caplog.at_level(logging.INFO, logger="app.accounts.services"):
        await _delete_as(owner)
    assert f"workspace {owner.workspace_id} deleted by user {owner.user_id}" in caplog.text


async def test_the_only_person_in_a_workspace_is_told_to_delete_it_before_their_account(
    client, people
):
    owner = await people.member("owner")
    await sign_in(client, owner.email)

    refused = await post_form(client, "/settings/account/delete", {"delete_password": PASSWORD})
    assert refused.status_code == 400
    assert (
        "No one else is in Desk: delete the workspace first (switch to it, then Settings,"
        " Workspace), then delete your account."
    ) in refused.text

    assert (await _delete(client)).status_code == 303
    done = await post_form(client, "/settings/account/delete", {"delete_password": PASSWORD})
    assert (done.status_code, done.headers["location"]) == (303, "/login?deleted=1")
