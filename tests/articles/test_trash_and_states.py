"""Small things people trip over: the failed state, undo and the trash's end, right-to-left titles."""

from __future__ import annotations

import re

from app.accounts import services as accounts
from app.analysis.services import Run, run_analysis
from app.articles.services import TRASH_RETENTION_DAYS, delete_article, purge_expired_trash
from app.articles.types import Warning
from app.core import db
from tests.articles.test_pages import api_client, ids_in, save, signed_in
from tests.factories import post_form, sign_in
from tests.live_client import LiveStream
from workers.settings import WorkerSettings


async def fail_analysis_once(article_id: int) -> None:
    """What a failed attempt leaves while it waits for its retry: pending, with the reason."""
    await db.fetchval(
        """UPDATE analyses SET status = 'pending', error = 'The endpoint timed out.',
           attempts = 1, next_attempt_at = now() + interval '5 minutes'
           WHERE article_id = $1 RETURNING 1""",
        article_id,
    )


async def test_the_failed_filter_agrees_with_the_reader(client, people):
    person = await signed_in(client, people)
    failed = await save(person.workspace_id, title="Failed once")
    waiting = await save(person.workspace_id, title="Still waiting")
    await fail_analysis_once(failed)

    reader = await client.get(f"/articles/{failed}")
    assert "The last analysis attempt failed" in reader.text
    assert ids_in((await client.get("/articles", params={"state": "failed"})).text) == [failed]
    assert ids_in((await client.get("/articles", params={"state": "pending"})).text) == [waiting]
    listed = (await client.get("/articles")).text
    row = listed[listed.index(f'id="article-{failed}"') :]
    assert 'class="state state-failed">Analysis failed' in row[: row.index("</li>")]


async def test_a_consent_wall_reads_not_analysed_in_the_row_the_filter_the_reader_and_the_api(
    client, people, settings, web_app
):
    person = await signed_in(client, people)
    ws = person.workspace_id
    walled = await save(ws, title="Before you continue", warnings=(Warning.CONSENT_WALL,))
    waiting = await save(ws, title="Still waiting")
    assert await run_analysis(ws, walled, settings) == Run.NOT_ANALYSED

    listed = (await client.get("/articles")).text
    row = listed[listed.index(f'id="article-{walled}"') :]
    row = row[: row.index("</li>")]
    assert "Not analysed: the page showed a consent wall, not the article." in row
    assert "Open it and use Fetch again." in row
    assert "Analysed" not in row.replace("Not analysed", "")
    assert ids_in((await client.get("/articles", params={"state": "skipped"})).text) == [walled]
    assert ids_in((await client.get("/articles", params={"state": "pending"})).text) == [waiting]
    assert ids_in((await client.get("/articles", params={"state": "completed"})).text) == []
    assert '<option value="skipped"' in listed
    reader = (await client.get(f"/articles/{walled}")).text
    assert 'class="analysis-skipped">Not analysed: the page showed a cookie consent wall' in reader
    assert "Fetch again to read the article; it is analysed then." in reader
    assert "Waiting for analysis" not in reader
    async with LiveStream(web_app, client, f"/articles/{walled}/stream") as stream:
        await stream.until("Fetch again to read the article; it is analysed then.")

    token = await accounts.issue_api_token(ws, person.user_id, "bot")
    body = (
        await client.get(f"/api/v1/articles/{walled}", headers={"Authorization": f"Bearer {token}"})
    ).json()
    assert body["analysis"]["status"] == "skipped"
    assert (body["analysis"]["summary"], body["analysis"]["keywords"]) == ("", [])
    assert "consent wall" in body["analysis"]["error"]
    assert "Fetch again" not in body["analysis"]["error"]  # the API's caller may not, or may
    assert body["warnings"] == ["probable_consent_wall"]  # ... and reads what to do here


async def test_a_viewer_reads_why_a_walled_article_was_not_analysed_but_no_fetch_again(
    client, people, settings, web_app
):
    """A viewer may not fetch again: the reason alone, in the row, the reader and its live
    panel (the stored reason said "Fetch again to read the article" to everyone)."""
    viewer = await signed_in(client, people, role="viewer")
    walled = await save(
        viewer.workspace_id, title="Before you continue", warnings=(Warning.CONSENT_WALL,)
    )
    assert await run_analysis(viewer.workspace_id, walled, settings) == Run.NOT_ANALYSED

    listed = (await client.get("/articles")).text
    row = listed[listed.index(f'id="article-{walled}"') :]
    row = row[: row.index("</li>")]
    reader = (await client.get(f"/articles/{walled}")).text
    async with LiveStream(web_app, client, f"/articles/{walled}/stream") as stream:
        panel = await stream.until("analysis-skipped")

    assert "Not analysed: the page showed a consent wall, not the article." in row
    for shown in (reader, panel):
        assert "Not analysed: the page showed a cookie consent wall, not the article." in shown
    for shown in (row, reader, panel):
        assert "Fetch again" not in shown


async def test_moving_to_the_trash_offers_undo(client, people):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id, title="Keep me after all")

    moved = await post_form(client, f"/articles/{article_id}/delete", {"next": "/articles?q=keep"})
    assert moved.headers["location"] == f"/articles?q=keep&undo={article_id}"
    page = await client.get(moved.headers["location"])
    assert "Moved to trash:" in page.text
    assert "Keep me after all" in page.text
    assert f'action="/articles/{article_id}/restore"' in page.text
    assert ">Undo</button>" in page.text

    await post_form(client, f"/articles/{article_id}/restore", {"next": "/articles?q=keep"})
    assert ids_in((await client.get("/articles")).text) == [article_id]
    # Once restored, the same address no longer offers Undo.
    assert "Moved to trash:" not in (await client.get(moved.headers["location"])).text


async def test_restoring_in_the_trash_says_where_the_article_went(client, people):
    """Restored from the trash, the row just vanished from it: the trash says so, with the
    way to the article, also when the trash was searched."""
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id, title="Back from the trash")

    for trash in ("/articles?deleted=1", "/articles?q=back&deleted=1"):
        await delete_article(person.workspace_id, article_id, actor_user_id=None)
        back = await post_form(client, f"/articles/{article_id}/restore", {"next": trash})
        assert back.headers["location"] == f"{trash}&restored={article_id}"
        page = (await client.get(back.headers["location"])).text
        assert "Restored:" in page
        assert "Back from the trash" in page
        assert f'<a href="/articles/{article_id}">Open</a>' in page

    # In the trash again, the same address no longer says it was restored.
    await delete_article(person.workspace_id, article_id, actor_user_id=None)
    assert "Restored:" not in (await client.get(back.headers["location"])).text
    # Restored from the reader, the person lands on the article itself.
    reader = await post_form(client, f"/articles/{article_id}/restore", {})
    assert reader.headers["location"] == f"/articles/{article_id}"


async def test_the_reader_delete_comes_back_to_the_library_with_undo(client, people):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id)
    moved = await post_form(client, f"/articles/{article_id}/delete", {"next": "/articles"})
    assert "Moved to trash:" in (await client.get(moved.headers["location"])).text


async def test_the_trash_states_its_retention_and_deletes_forever_after_asking(client, people):
    person = await signed_in(client, people)
    article_id = await save(person.workspace_id, title="Gone soon")
    await delete_article(person.workspace_id, article_id, actor_user_id=None)

    trash = await client.get("/articles", params={"deleted": "1"})
    assert f"for {TRASH_RETENTION_DAYS} days, then they are deleted for good" in trash.text
    button = re.search(rf'<button[^>]*formaction="/articles/{article_id}/purge"[^>]*>', trash.text)
    assert button is not None
    assert "confirm(" in button.group(0)
    assert ">Delete forever</button>" in trash.text

    gone = await post_form(client, f"/articles/{article_id}/purge", {"next": "/articles?deleted=1"})
    assert gone.status_code == 303
    assert await db.fetchval("SELECT count(*) FROM articles WHERE id = $1", article_id) == 0
    assert await db.fetchval("SELECT count(*) FROM analyses WHERE article_id = $1", article_id) == 0
    kinds = [r["kind"] for r in await db.fetch("SELECT kind FROM events ORDER BY id")]
    assert kinds[-1] == "article_purged"


async def test_only_what_is_in_the_trash_can_be_deleted_forever(client, people):
    person, auth = await api_client(client, people)
    article_id = await save(person.workspace_id)

    answer = await client.post(f"/api/v1/articles/{article_id}/purge", headers=auth)
    assert answer.json() == {"id": article_id, "purged": False}
    assert await db.fetchval("SELECT count(*) FROM articles WHERE id = $1", article_id) == 1


async def test_a_viewer_cannot_delete_forever(client, people):
    owner = await people.member("editor")
    article_id = await save(owner.workspace_id)
    await delete_article(owner.workspace_id, article_id, actor_user_id=None)
    viewer = await people.member("viewer", workspace_id=owner.workspace_id)
    await sign_in(client, viewer.email)
    answer = await post_form(client, f"/articles/{article_id}/purge")
    assert answer.status_code == 403
    assert await db.fetchval("SELECT count(*) FROM articles WHERE id = $1", article_id) == 1


async def test_the_trash_is_purged_after_its_retention_in_every_workspace(people):
    first = await people.member("editor")
    second = await people.member("editor")
    old = await save(first.workspace_id, title="Old")
    recent = await save(first.workspace_id, title="Recent")
    other_old = await save(second.workspace_id, title="Other old")
    live = await save(second.workspace_id, title="In the library")
    for ws, article_id, days in (
        (first.workspace_id, old, TRASH_RETENTION_DAYS + 1),
        (first.workspace_id, recent, TRASH_RETENTION_DAYS - 1),
        (second.workspace_id, other_old, TRASH_RETENTION_DAYS + 5),
    ):
        await delete_article(ws, article_id, actor_user_id=None)
        await db.fetchval(
            "UPDATE articles SET deleted_at = now() - make_interval(days => $2)"
            " WHERE id = $1 RETURNING 1",
            article_id,
            days,
        )

    assert await purge_expired_trash() == 2
    left = {r["id"] for r in await db.fetch("SELECT id FROM articles")}
    assert left == {recent, live}
    assert any(job.coroutine.__name__ == "purge_trash" for job in WorkerSettings.cron_jobs)


ARABIC = "الأمطار الغزيرة تغلق الطرق في المدينة"
HEBREW = "גשמים כבדים סוגרים כבישים בעיר"


async def test_right_to_left_titles_get_dir_auto_wherever_they_are_shown(client, people):
    person = await signed_in(client, people)
    arabic = await save(person.workspace_id, title=ARABIC)
    await save(person.workspace_id, title=HEBREW)
    await post_form(client, f"/articles/{arabic}/delete", {"next": "/articles"})

    library = (await client.get("/articles", params={"undo": str(arabic)})).text
    trash = (await client.get("/articles", params={"deleted": "1"})).text
    reader = (await client.get(f"/articles/{arabic}")).text
    activity = (await client.get("/activity")).text

    inside = "[^>]*>(?:<[^>]+>)*"  # the element with dir="auto", then the rendered text
    assert re.search(r'<a class="article-title" dir="auto"' + inside + HEBREW, library)
    assert re.search(r'<span dir="auto"' + inside + ARABIC, library)  # the undo notice
    assert re.search(r'<a class="article-title" dir="auto"' + inside + ARABIC, trash)
    assert re.search(r'<h1 class="reader-title" dir="auto"' + inside + ARABIC, reader)
    assert re.search(r'class="subject" dir="auto"' + inside + ARABIC, activity)
