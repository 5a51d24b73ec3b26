""" "Fetch again" on an article saved behind a consent wall: the one-URL path once more,
over the same article (saving its URL again is a duplicate before any fetch)."""

from __future__ import annotations

from typing import Any

import pytest

from app.accounts import services as accounts
from app.articles import services as articles
from app.core import db
from tests.factories import csrf_of, post_form, sign_in
from tests.fakes.site import FakeSite
from tests.imports.helpers import item_rows, run_worker

WALLED = "/news/walled"


def _job_of(response: Any) -> int:
    assert response.status_code == 303, response.text
    return int(response.headers["location"].rsplit("/", 1)[1])


async def _saved(client: Any, site: FakeSite, path: str, page: str) -> int:
    """The article a save of `path` (serving `page`) stored."""
    site.routes[path] = site.page(page)
    job_id = _job_of(await post_form(client, "/save", {"url": site.base + path}))
    await run_worker()
    (row,) = await item_rows(job_id)
    assert row["article_id"] is not None
    return int(row["article_id"])


async def _article(article_id: int) -> dict[str, Any]:
    row = await db.fetchrow(
        "SELECT title, text, warnings, deleted_at FROM articles WHERE id = $1", article_id
    )
    assert row is not None
    return dict(row)


async def _analysis(article_id: int) -> str:
    return str(await db.fetchval("SELECT status FROM analyses WHERE article_id = $1", article_id))


@pytest.mark.parametrize("analysis", ["completed", "running", "skipped"])
async def test_fetch_again_replaces_a_consent_wall_with_the_article_keeping_its_id(
    client, editor, site, site_egress, analysis
):
    article_id = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    reader = await client.get(f"/articles/{article_id}")
    assert f'action="/save/again/{article_id}"' in reader.text
    # The wall's text was analysed (or is being analysed, a worker's lease on it): that
    # analysis is of the wrong text.
    await db.fetch(
        """UPDATE analyses SET status = $2, lease_until = CASE WHEN $2 = 'running'
             THEN now() + interval '5 minutes' END WHERE article_id = $1""",
        article_id,
        analysis,
    )

    site.routes[WALLED] = site.page("article.html")  # the site lets the article through now
    job_id = _job_of(await post_form(client, f"/save/again/{article_id}"))
    await run_worker()

    (row,) = await item_rows(job_id)
    assert (row["state"], row["article_id"], row["warning"]) == ("saved", article_id, "")
    article = await _article(article_id)
    assert "River towns vote" in article["title"]
    assert article["warnings"] == []
    assert await db.fetchval(
        "SELECT count(*) FROM articles WHERE workspace_id = $1", editor.workspace_id
    ) == 1  # fmt: skip
    assert await _analysis(article_id) == "pending"
    assert len(site.hits_of(WALLED)) == 2  # fetched again: no dedup before this fetch
    status = await client.get(f"/save/{job_id}")
    assert "Fetched again" in status.text
    assert "<h1>Fetch again</h1>" in status.text  # not "Save a link": nothing new was saved
    assert f"window.location.assign('/articles/{article_id}')" in status.text
    reader = await client.get(f"/articles/{article_id}")
    assert "/save/again/" not in reader.text  # no wall, nothing to fetch again


async def test_a_consent_wall_again_leaves_the_article_as_it_was(client, editor, site, site_egress):
    article_id = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    before = await _article(article_id)
    job_id = _job_of(await post_form(client, f"/save/again/{article_id}"))
    await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["article_id"]) == ("consent-wall", article_id)
    assert row["warning"] == "probable_consent_wall"
    assert await _article(article_id) == before
    assert len(site.hits_of(WALLED)) == 2
    status = await client.get(f"/save/{job_id}")
    assert "consent wall again; the article stays as it was" in status.text


async def test_an_article_trashed_before_the_fetch_is_not_brought_back(
    client, editor, site, site_egress
):
    article_id = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    job_id = _job_of(await post_form(client, f"/save/again/{article_id}"))
    await articles.delete_article(editor.workspace_id, article_id, actor_user_id=None)
    site.routes[WALLED] = site.page("article.html")
    await run_worker()
    (row,) = await item_rows(job_id)
    assert (row["state"], row["error"]) == ("error", "The article is no longer in the library.")
    after = await _article(article_id)
    assert after["deleted_at"] is not None
    assert after["warnings"] == ["probable_consent_wall"]


async def test_only_consent_walls_are_fetched_again_and_only_by_importers(
    client, people, editor, site, site_egress
):
    plain = await _saved(client, site, "/news/plain", "article.html")
    assert "/save/again/" not in (await client.get(f"/articles/{plain}")).text
    refused = await post_form(client, f"/save/again/{plain}")
    assert refused.status_code == 400
    assert "consent wall" in refused.text
    assert (await post_form(client, "/save/again/987654321")).status_code == 404
    walled = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    jobs = await db.fetchval("SELECT count(*) FROM import_jobs")

    await client.post("/logout", data={"_csrf_token": csrf_of(client)})
    viewer = await people.member("viewer", editor.workspace_id)
    await sign_in(client, viewer.email)
    reader = await client.get(f"/articles/{walled}")
    assert reader.status_code == 200
    assert "/save/again/" not in reader.text
    assert (await post_form(client, f"/save/again/{walled}")).status_code == 403
    assert await db.fetchval("SELECT count(*) FROM import_jobs") == jobs


async def _bearer(workspace_id: int, user_id: int) -> dict[str, str]:
    token = await accounts.issue_api_token(workspace_id, user_id, "script")
    return {"Authorization": f"Bearer {token}"}


async def test_the_api_fetches_a_consent_wall_again_as_a_job_to_follow(
    client, editor, site, site_egress
):
    article_id = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    auth = await _bearer(editor.workspace_id, editor.user_id)
    site.routes[WALLED] = site.page("article.html")

    started = await client.post(f"/api/v1/articles/{article_id}/fetch-again", headers=auth)
    assert started.status_code == 201, started.text
    body = started.json()
    assert body["article_id"] == article_id
    job = (await client.get(f"/api/v1/imports/{body['job_id']}", headers=auth)).json()
    assert (job["source"], job["status"], job["total_urls"]) == ("fetch-again", "queued", 1)
    await run_worker()

    job = (await client.get(f"/api/v1/imports/{body['job_id']}", headers=auth)).json()
    assert (job["status"], job["saved"]) == ("done", 1)
    article = (await client.get(f"/api/v1/articles/{article_id}", headers=auth)).json()
    assert "River towns vote" in article["title"]
    assert article["warnings"] == []


async def test_the_api_refuses_what_is_no_consent_wall_and_people_who_may_not_import(
    client, people, editor, site, site_egress
):
    plain = await _saved(client, site, "/news/plain", "article.html")
    walled = await _saved(client, site, WALLED, "consent_onetrust_en.html")
    auth = await _bearer(editor.workspace_id, editor.user_id)
    viewer = await people.member("viewer", editor.workspace_id)
    viewer_auth = await _bearer(editor.workspace_id, viewer.user_id)
    jobs = await db.fetchval("SELECT count(*) FROM import_jobs")

    refused = await client.post(f"/api/v1/articles/{plain}/fetch-again", headers=auth)
    assert refused.status_code == 400
    assert "consent wall" in refused.json()["detail"]
    missing = await client.post("/api/v1/articles/987654321/fetch-again", headers=auth)
    assert missing.status_code == 404
    await articles.delete_article(editor.workspace_id, walled, actor_user_id=None)
    trashed = await client.post(f"/api/v1/articles/{walled}/fetch-again", headers=auth)
    assert trashed.status_code == 404
    await articles.restore_article(editor.workspace_id, walled, actor_user_id=None)
    forbidden = await client.post(f"/api/v1/articles/{walled}/fetch-again", headers=viewer_auth)
    assert forbidden.status_code == 403
    assert await db.fetchval("SELECT count(*) FROM import_jobs") == jobs
