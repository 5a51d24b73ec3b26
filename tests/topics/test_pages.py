"""Topic pages: CRUD through forms, sources, permissions, workspace isolation, the runs list."""

from __future__ import annotations

import re

import pytest

from app.accounts import services as accounts
from app.topics import queries, scraping, services
from app.topics.types import RunResult, RunStatus, SourceForm, TopicForm
from tests.factories import post_form, sign_in


async def new_topic(workspace_id: int, name: str = "Floods") -> int:
    return await services.create_topic(workspace_id, TopicForm(name), actor_user_id=None)


# Topics -------------------------------------------------------------------------------


async def test_an_editor_creates_a_topic_and_lands_on_its_page(client, editor):
    response = await post_form(
        client, "/topics", {"name": "  River   floods ", "description": "Valley"}
    )
    assert response.status_code == 303
    topic_id = int(response.headers["location"].rsplit("/", 1)[1])
    page = await client.get(f"/topics/{topic_id}")
    assert page.status_code == 200
    assert "<h1>River floods</h1>" in page.text
    listing = await client.get("/topics")
    assert f'href="/topics/{topic_id}"' in listing.text


@pytest.mark.parametrize(
    ("data", "status", "message"),
    [
        ({"name": "   "}, 400, "Give the topic a name."),
        ({"name": "x" * 101}, 400, "Keep the name under 100 characters."),
        ({}, 400, "Give the topic a name."),
    ],
)
async def test_a_bad_topic_form_is_shown_again_with_a_message(
    client, editor, data, status, message
):
    response = await post_form(client, "/topics", {**data, "description": "typed text"})
    assert response.status_code == status
    assert message in response.text
    assert 'value="typed text"' in response.text


async def test_control_characters_never_reach_the_database(client, editor):
    response = await post_form(
        client, "/topics", {"name": "Flo\x00ods\x07", "description": "a\x00b"}
    )
    assert response.status_code == 303
    topic_id = int(response.headers["location"].rsplit("/", 1)[1])
    topic = await queries.topic(editor.workspace_id, topic_id)
    assert topic is not None
    assert (topic.name, topic.description) == ("Floods", "ab")
    data = {"kind": "arxiv", "query": "all:\x00flood"}
    assert (await post_form(client, f"/topics/{topic_id}/sources", data)).status_code == 303
    assert [s.query for s in await queries.sources(editor.workspace_id, topic_id)] == ["all:flood"]


async def test_a_duplicate_topic_name_is_a_conflict_that_keeps_the_typed_values(client, editor):
    await new_topic(editor.workspace_id, "Floods")
    response = await post_form(client, "/topics", {"name": "FLOODS", "description": "again"})
    assert response.status_code == 409
    assert "There is already a topic with this name." in response.text
    assert 'value="FLOODS"' in response.text


async def test_a_topic_is_renamed_and_deleted(client, editor):
    topic_id = await new_topic(editor.workspace_id)
    response = await post_form(
        client, f"/topics/{topic_id}/edit", {"name": "Droughts", "description": "d"}
    )
    assert response.status_code == 303
    topic = await queries.topic(editor.workspace_id, topic_id)
    assert topic is not None
    assert (topic.name, topic.description) == ("Droughts", "d")
    assert (await post_form(client, f"/topics/{topic_id}/delete")).status_code == 303
    assert (await client.get(f"/topics/{topic_id}")).status_code == 404
    assert "Droughts" not in (await client.get("/topics")).text


async def test_a_deleted_topics_name_can_be_used_again(client, editor):
    topic_id = await new_topic(editor.workspace_id, "Floods")
    await services.delete_topic(editor.workspace_id, topic_id, actor_user_id=None)
    assert (await post_form(client, "/topics", {"name": "Floods"})).status_code == 303


# Sources ------------------------------------------------------------------------------


async def test_a_feed_and_an_arxiv_query_are_added(client, editor):
    topic_id = await new_topic(editor.workspace_id)
    feed = {"kind": "feed", "url": "https://courier.example/feed.xml", "interval_minutes": "30"}
    arxiv = {"kind": "arxiv", "query": " all:flood   AND cat:cs.LG ", "interval_minutes": "1440"}
    for data in (feed, arxiv):
        assert (await post_form(client, f"/topics/{topic_id}/sources", data)).status_code == 303
    sources = await queries.sources(editor.workspace_id, topic_id)
    assert [(s.kind.value, s.label, s.interval_seconds) for s in sources] == [
        ("feed", "https://courier.example/feed.xml", 1800),
        ("arxiv", "all:flood AND cat:cs.LG", 86400),
    ]
    page = await client.get(f"/topics/{topic_id}")
    assert "https://courier.example/feed.xml" in page.text
    assert "all:flood AND cat:cs.LG" in page.text


@pytest.mark.parametrize(
    ("data", "status", "message", "kept"),
    [
        (
            {"kind": "feed", "url": "courier.example/feed"},
            400,
            "Enter the feed&#39;s address, starting with http:// or https://.",
            'value="courier.example/feed"',
        ),
        (
            {"kind": "feed", "url": "javascript:alert(1)"},
            400,
            "starting with http:// or https://",
            'value="javascript:alert(1)"',
        ),
        (
            {"kind": "feed", "url": "ftp://courier.example/feed"},
            400,
            "starting with http:// or https://",
            'value="ftp://courier.example/feed"',
        ),
        (
            {"kind": "arxiv", "query": "   "},
            400,
            "Enter an arXiv search query",
            'value="arxiv" checked',
        ),
        (
            {"kind": "feed", "url": "https://c.example/f", "interval_minutes": "often"},
            400,
            "Check every 5 to 10,080 minutes.",
            'value="often"',
        ),
        (
            {"kind": "feed", "url": "https://c.example/f", "interval_minutes": "1"},
            400,
            "Check every 5 to 10,080 minutes.",
            'value="https://c.example/f"',
        ),
        ({"kind": "rss"}, 400, "Choose a feed or an arXiv query.", ""),
    ],
)
async def test_a_bad_source_is_refused_with_a_clear_message(
    client, editor, data, status, message, kept
):
    topic_id = await new_topic(editor.workspace_id)
    response = await post_form(client, f"/topics/{topic_id}/sources", data)
    assert response.status_code == status
    assert message in response.text
    assert kept in response.text
    assert await queries.sources(editor.workspace_id, topic_id) == []


async def test_the_same_source_twice_is_a_conflict(client, editor):
    topic_id = await new_topic(editor.workspace_id)
    data = {"kind": "feed", "url": "https://courier.example/feed.xml"}
    await post_form(client, f"/topics/{topic_id}/sources", data)
    response = await post_form(client, f"/topics/{topic_id}/sources", data)
    assert response.status_code == 409
    assert "This topic already has that source." in response.text


async def test_sources_are_paused_resumed_run_and_removed(client, editor):
    topic_id = await new_topic(editor.workspace_id)
    source_id = await services.add_source(
        editor.workspace_id,
        topic_id,
        SourceForm("feed", url="https://c.example/f"),
        actor_user_id=None,
    )
    base = f"/topics/{topic_id}/sources/{source_id}"
    assert (await post_form(client, f"{base}/pause")).status_code == 303
    assert not (await queries.source(editor.workspace_id, source_id)).enabled  # type: ignore[union-attr]
    paused_run = await post_form(client, f"{base}/run")
    assert paused_run.status_code == 409
    assert "This source is paused; resume it to run it." in paused_run.text
    assert (await post_form(client, f"{base}/resume")).status_code == 303
    assert (await queries.source(editor.workspace_id, source_id)).enabled  # type: ignore[union-attr]
    assert (await post_form(client, f"{base}/run")).status_code == 303
    assert (await post_form(client, f"{base}/remove")).status_code == 303
    assert await queries.sources(editor.workspace_id, topic_id) == []


# Runs -----------------------------------------------------------------------------------


async def test_the_topic_page_lists_its_last_runs_with_their_counters(
    client, editor, site, site_egress
):
    topic_id = await new_topic(editor.workspace_id)
    source_id = await services.add_source(
        editor.workspace_id, topic_id, SourceForm("feed", url=site.base + "/feeds/full.rss"),
        actor_user_id=None,
    )  # fmt: skip
    run_id = await scraping.scrape_source(editor.workspace_id, source_id)
    page = await client.get(f"/topics/{topic_id}")
    assert f'id="run-{run_id}"' in page.text
    row = page.text.split(f'id="run-{run_id}"', 1)[1].split("</tr>", 1)[0]
    assert 'data-status="ok"' in page.text
    for cell, value in (("found", 3), ("new", 3), ("duplicates", 0), ("failures", 0)):
        assert f'<td class="num {cell}">' in row
        assert (
            row.split(f'<td class="num {cell}">', 1)[1].split("</td>", 1)[0].endswith(f" {value}")
        )
    listing = await client.get("/topics")
    assert "3 articles added" in listing.text


async def test_a_failed_run_shows_its_error_on_the_page(client, editor, site, site_egress):
    topic_id = await new_topic(editor.workspace_id)
    source_id = await services.add_source(
        editor.workspace_id, topic_id, SourceForm("feed", url=site.base + "/feeds/failing"),
        actor_user_id=None,
    )  # fmt: skip
    run_id = await scraping.scrape_source(editor.workspace_id, source_id)
    page = await client.get(f"/topics/{topic_id}")
    row = page.text.split(f'id="run-{run_id}"', 1)[1].split("</tr>", 1)[0]
    assert 'data-status="failed"' in row
    assert "The site had an error (HTTP 503); try again later." in row
    assert "1 failed run in a row" in page.text


async def test_the_runs_columns_have_different_names_in_german(client, editor, site, site_egress):
    await accounts.update_profile(editor.user_id, "Kim", "de", "UTC")
    topic_id = await new_topic(editor.workspace_id)
    source_id = await services.add_source(
        editor.workspace_id, topic_id, SourceForm("feed", url=site.base + "/feeds/failing"),
        actor_user_id=None,
    )  # fmt: skip
    await scraping.scrape_source(editor.workspace_id, source_id)
    page = await client.get(f"/topics/{topic_id}")
    heads = re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', page.text)
    assert "Fehlschläge" in heads  # the count; "Fehler" is the message beside it
    assert len(heads) == len(set(heads)), heads


async def test_third_party_text_in_errors_is_shown_as_text(client, editor):
    topic_id = await new_topic(editor.workspace_id)
    source_id = await services.add_source(
        editor.workspace_id,
        topic_id,
        SourceForm("feed", url="https://c.example/f"),
        actor_user_id=None,
    )
    leased = await services.claim_source(editor.workspace_id, source_id)
    assert leased is not None
    run_id = await services.start_run(leased)
    hostile = '<img src=x onerror="alert(1)"> data-on:load="alert(2)"'
    await services.finish_run(leased, run_id, RunResult(RunStatus.FAILED, error=hostile))
    page = await client.get(f"/topics/{topic_id}")
    assert "<img src=x" not in page.text
    assert "&lt;img src=x" in page.text
    row = page.text.split(f'id="run-{run_id}"', 1)[1].split("</tr>", 1)[0]
    assert "data-ignore" in row  # Datastar never evaluates what is inside


# Permissions and isolation ----------------------------------------------------------------


async def test_a_viewer_reads_topics_but_sees_no_forms_and_cannot_change_anything(client, people):
    viewer = await people.member("viewer")
    topic_id = await new_topic(viewer.workspace_id)
    await sign_in(client, viewer.email)
    page = await client.get(f"/topics/{topic_id}")
    assert page.status_code == 200
    assert f'action="/topics/{topic_id}/sources"' not in page.text
    assert 'id="new-topic"' not in (await client.get("/topics")).text
    for url, data in [
        ("/topics", {"name": "Mine"}),
        (f"/topics/{topic_id}/edit", {"name": "Renamed"}),
        (f"/topics/{topic_id}/delete", {}),
        (f"/topics/{topic_id}/sources", {"kind": "feed", "url": "https://c.example/f"}),
    ]:
        assert (await post_form(client, url, data)).status_code == 403, url
    assert [t.name for t in await queries.topics(viewer.workspace_id)] == ["Floods"]


async def test_signed_out_visitors_are_sent_to_sign_in(client):
    response = await client.get("/topics", follow_redirects=False)
    assert response.status_code in (302, 303, 401)


async def test_another_workspaces_topic_is_not_found(client, editor, people):
    other = await people.member("owner")
    topic_id = await new_topic(other.workspace_id, "Secret")
    source_id = await services.add_source(
        other.workspace_id,
        topic_id,
        SourceForm("feed", url="https://c.example/f"),
        actor_user_id=None,
    )
    assert (await client.get(f"/topics/{topic_id}")).status_code == 404
    assert (await client.get(f"/topics/{topic_id}/stream")).status_code == 404
    for url in [
        f"/topics/{topic_id}/edit",
        f"/topics/{topic_id}/delete",
        f"/topics/{topic_id}/sources",
        f"/topics/{topic_id}/sources/{source_id}/run",
        f"/topics/{topic_id}/sources/{source_id}/pause",
        f"/topics/{topic_id}/sources/{source_id}/remove",
    ]:
        response = await post_form(
            client, url, {"name": "Mine", "kind": "feed", "url": "https://x.example/f"}
        )
        assert response.status_code == 404, url
    assert "Secret" not in (await client.get("/topics")).text
    assert len(await queries.sources(other.workspace_id, topic_id)) == 1
    topic = await queries.topic(other.workspace_id, topic_id)
    assert topic is not None
    assert topic.name == "Secret"


async def test_a_source_of_another_topic_is_not_found_under_this_one(client, editor):
    first = await new_topic(editor.workspace_id, "First")
    second = await new_topic(editor.workspace_id, "Second")
    source_id = await services.add_source(
        editor.workspace_id,
        first,
        SourceForm("feed", url="https://c.example/f"),
        actor_user_id=None,
    )
    assert (
        await post_form(client, f"/topics/{second}/sources/{source_id}/remove")
    ).status_code == 404
    assert len(await queries.sources(editor.workspace_id, first)) == 1


async def test_topic_changes_are_in_the_activity_log(client, editor):
    await post_form(client, "/topics", {"name": "Floods"})
    activity = await client.get("/activity")
    assert "created the topic" in activity.text
