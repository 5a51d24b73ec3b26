"""Activity people can use: a row per topic run, links, filters, older pages, plain words."""

from __future__ import annotations

import re

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.articles import services as articles
from app.core import db
from app.events.services import record
from app.topics import scraping
from app.topics import services as topics
from app.topics.types import SourceForm, TopicForm
from tests.articles.helpers import article_event
from tests.factories import PASSWORD, post_form, sign_in


def rows(html: str) -> list[str]:
    """The text of each Activity row, tags removed."""
    found = re.findall(r'<li class="row event"[^>]*>(.*?)</li>', html, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in found]


async def feed_topic(workspace_id: int, url: str) -> tuple[int, int]:
    topic_id = await topics.create_topic(workspace_id, TopicForm("Floods"), actor_user_id=None)
    source_id = await topics.add_source(
        workspace_id, topic_id, SourceForm("feed", url=url), actor_user_id=None
    )
    return topic_id, source_id


async def make_due(workspace_id: int, source_id: int) -> None:
    async with db.workspace_tx(workspace_id) as tx:
        await tx.execute(
            "UPDATE topic_sources SET next_run_at = now() WHERE workspace_id = $1 AND id = $2",
            workspace_id,
            source_id,
        )


async def test_a_topic_run_is_one_row_saying_how_many_are_new(client, people, site, site_egress):
    person = await people.member("editor")
    topic_id, source_id = await feed_topic(person.workspace_id, site.base + "/feeds/full.rss")
    await scraping.scrape_source(person.workspace_id, source_id)
    await sign_in(client, person.email)
    html = (await client.get("/activity")).text
    shown = rows(html)
    run_rows = [r for r in shown if "finished a run" in r]
    assert len(run_rows) == 1
    assert "3 new articles" in run_rows[0]
    assert "Floods" in run_rows[0]
    assert not any("queued an article" in r for r in shown)
    assert f'href="/topics/{topic_id}"' in html

    # A run that brings nothing new is not news.
    await make_due(person.workspace_id, source_id)
    await scraping.scrape_source(person.workspace_id, source_id)
    assert (
        len([r for r in rows((await client.get("/activity")).text) if "finished a run" in r]) == 1
    )


async def test_rows_link_to_their_subject(client, new_client, people, site, site_egress):
    admin = await people.member("admin")
    _topic_id, source_id = await feed_topic(admin.workspace_id, site.base + "/feeds/full.rss")
    await scraping.scrape_source(admin.workspace_id, source_id)
    article_id = await db.fetchval(
        "SELECT min(id) FROM articles WHERE workspace_id = $1", admin.workspace_id
    )
    await articles.delete_article(admin.workspace_id, article_id, actor_user_id=admin.user_id)
    await sign_in(client, admin.email)
    html = (await client.get("/activity")).text
    assert f'href="/articles/{article_id}"' in html
    assert 'href="/settings/members"' in html  # "added a member" links where members are managed

    viewer = await people.member("viewer", admin.workspace_id)
    other = new_client()
    await sign_in(other, viewer.email)
    html = (await other.get("/activity")).text
    assert f'href="/articles/{article_id}"' in html
    assert 'href="/settings/members"' not in html  # a viewer cannot manage members


async def test_an_article_deleted_for_good_is_named_but_not_linked(client, people):
    """Its page is gone: a link would open "nothing at this address"."""
    editor = await people.member("editor")
    ws = editor.workspace_id
    outcome = await articles.process_scraped_article(ws, article_event(title="Old floods"))
    article_id = outcome.article_id
    assert article_id is not None
    await articles.delete_article(ws, article_id, actor_user_id=editor.user_id)
    await articles.purge_article(ws, article_id, actor_user_id=editor.user_id)
    await sign_in(client, editor.email)
    html = (await client.get("/activity?kind=articles")).text
    purged = re.search(r'data-kind="article_purged">(.*?)</li>', html, re.S)
    assert purged is not None
    assert "Old floods" in purged[1]
    assert "href=" not in purged[1]
    # ... and so are its earlier events: their links would open "nothing at this address".
    trashed = re.search(r'data-kind="article_deleted">(.*?)</li>', html, re.S)
    assert trashed is not None
    assert "Old floods" in trashed[1]
    assert "href=" not in trashed[1]


async def test_a_deleted_topics_earlier_events_are_not_linked(client, people):
    owner = await people.member("owner")
    ws = owner.workspace_id
    kept = await topics.create_topic(ws, TopicForm("Rivers"), actor_user_id=owner.user_id)
    gone = await topics.create_topic(ws, TopicForm("Lakes"), actor_user_id=owner.user_id)
    await topics.delete_topic(ws, gone, actor_user_id=owner.user_id)
    await sign_in(client, owner.email)

    html = (await client.get("/activity?kind=topics")).text

    assert f'href="/topics/{kept}"' in html
    assert f'href="/topics/{gone}"' not in html
    assert "Lakes" in html


async def test_filters_show_one_kind_of_event(client, people):
    owner = await people.member("owner")
    await topics.create_topic(owner.workspace_id, TopicForm("Rivers"), actor_user_id=owner.user_id)
    await accounts.issue_api_token(owner.workspace_id, owner.user_id, "laptop")
    await sign_in(client, owner.email)
    topics_only = rows((await client.get("/activity?kind=topics")).text)
    assert topics_only
    assert all("topic" in r for r in topics_only)
    tokens_only = rows((await client.get("/activity?kind=tokens")).text)
    assert len(tokens_only) == 1
    assert "laptop" in tokens_only[0]
    everything = rows((await client.get("/activity")).text)
    assert len(everything) > len(topics_only) + len(tokens_only)

    bad = await client.get("/activity?kind=nonsense")
    assert bad.status_code == 400
    assert "Choose one of the offered filters." in bad.text


async def test_older_events_are_a_page_away(client, people):
    owner = await people.member("owner")
    async with db.workspace_tx(owner.workspace_id) as tx:
        for n in range(60):
            await record(tx, "topic_created", actor_user_id=owner.user_id, subject=f"Topic {n:02}")
    await sign_in(client, owner.email)
    first = await client.get("/activity")
    assert len(rows(first.text)) == 50
    assert "Topic 59" in first.text
    older = re.search(r'<a href="(/activity\?cursor=\d+)" rel="next">', first.text)
    assert older is not None
    second = await client.get(older.group(1))
    second_rows = rows(second.text)
    assert "Topic 09" in " ".join(second_rows)
    assert "Topic 59" not in second.text
    assert len(second_rows) == 60 + 2 - 50  # workspace_created and the owner's own row too
    assert 'rel="next"' not in second.text
    assert "/activity/stream" not in second.text  # an older page does not follow the newest


async def test_accepting_an_invitation_reads_joined(client, new_client, people):
    owner = await people.member("owner")
    token = await accounts.invite(
        owner.workspace_id, Role.EDITOR, email="", actor_user_id=owner.user_id
    )
    guest = new_client()
    await guest.get(f"/invite/{token}")
    await post_form(
        guest,
        f"/invite/{token}/signup",
        {"email": "mira@example.org", "display_name": "Mira", "password": PASSWORD},
    )
    await sign_in(client, owner.email)
    shown = rows((await client.get("/activity?kind=people")).text)
    assert any(r.endswith("Mira joined") for r in shown), shown
    assert not any("added a member: Mira" in r for r in shown)


async def test_the_api_filters_by_kind_and_pages_with_a_cursor(client, people):
    owner = await people.member("owner")
    token = await accounts.issue_api_token(owner.workspace_id, owner.user_id, "cli")
    async with db.workspace_tx(owner.workspace_id) as tx:
        for n in range(5):
            await record(tx, "topic_created", actor_user_id=owner.user_id, subject=f"T{n}")
    headers = {"authorization": f"Bearer {token}"}
    first = (await client.get("/api/v1/events?kind=topics&limit=3", headers=headers)).json()
    assert [e["subject"] for e in first["items"]] == ["T4", "T3", "T2"]
    second = (
        await client.get(
            f"/api/v1/events?kind=topics&limit=3&cursor={first['next_cursor']}", headers=headers
        )
    ).json()
    assert [e["subject"] for e in second["items"]] == ["T1", "T0"]
    assert second["next_cursor"] is None
    bad = await client.get("/api/v1/events?kind=nonsense", headers=headers)
    assert bad.status_code == 400


async def test_an_imports_size_reads_singular_or_plural_in_the_readers_language(client, people):
    owner = await people.member("owner")
    async with db.workspace_tx(owner.workspace_id) as tx:  # as recorded before: "1 URLs"
        await record(tx, "article_import_started", subject="1 URLs", job_id=1, total_urls=1)
        await record(tx, "article_import_started", subject="1234 URLs", job_id=2, total_urls=1234)
    await sign_in(client, owner.email)

    english = (await client.get("/activity?kind=articles")).text
    await accounts.update_profile(owner.user_id, "Owner", "de", "Europe/Berlin")
    german = (await client.get("/activity?kind=articles")).text

    assert "1 URL<" in english
    assert "1 URLs" not in english
    assert "1,234 URLs" in english
    assert "1.234 URLs" in german


async def test_role_events_say_which_role_in_the_readers_language(client, people):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    await accounts.change_role(
        owner.workspace_id, editor.user_id, Role.VIEWER, actor_user_id=owner.user_id
    )
    await accounts.invite(owner.workspace_id, Role.ADMIN, email="", actor_user_id=owner.user_id)
    await sign_in(client, owner.email)
    shown = rows((await client.get("/activity?kind=people")).text)
    assert any("changed a member" in r and r.endswith(" · viewer") for r in shown), shown
    assert any(r.endswith("created an invitation open · admin") for r in shown), shown
    await post_form(
        client, "/settings/profile", {"display_name": "Ada", "locale": "de", "time_zone": "UTC"}
    )
    german = rows((await client.get("/activity?kind=people")).text)
    assert any("Rolle" in r and r.endswith(" · Leser") for r in german), german
