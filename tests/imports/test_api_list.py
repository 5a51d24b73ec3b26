"""GET /api/v1/imports: the workspace's jobs as the Import page lists them (active ones and
those of the last 30 days, newest first, not deleted), each as GET /api/v1/imports/<id> gives
it, paged as a job's /items are; every member may list (app.imports.access.FOLLOW)."""

from __future__ import annotations

from typing import Any

from app.accounts import services as accounts
from app.articles.types import Source
from app.core import db
from app.imports import queries, services
from tests.factories import sign_in

URL = "https://news.example/a"


async def _auth(people, role: str = "editor", workspace_id: int | None = None):  # type: ignore[no-untyped-def]
    person = await people.member(role, workspace_id)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    return person, {"Authorization": f"Bearer {token}"}


async def _job(workspace_id: int, url: str = URL) -> int:
    return await services.create_job(workspace_id, [url], actor_user_id=None)


async def _list(client, auth: dict[str, str], query: str = "") -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = await client.get(f"/api/v1/imports{query}", headers=auth)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_lists_this_workspaces_jobs_newest_first_as_a_job_reads(client, people):
    person, auth = await _auth(people)
    first = await _job(person.workspace_id, "https://news.example/1")
    second = await _job(person.workspace_id, "https://news.example/2")
    other, _other_auth = await _auth(people)
    theirs = await _job(other.workspace_id)

    body = await _list(client, auth)

    assert [j["id"] for j in body["jobs"]] == [second, first]
    assert theirs not in [j["id"] for j in body["jobs"]]
    assert (body["page"], body["pages"], body["per_page"]) == (1, 1, queries.JOBS_PER_PAGE)
    one = (await client.get(f"/api/v1/imports/{second}", headers=auth)).json()
    assert body["jobs"][0] == one  # status, counters and all, as the job's own endpoint
    assert (one["status"], one["total_urls"]) == ("queued", 1)


async def test_deleted_jobs_and_old_finished_ones_are_not_listed(client, people):
    person, auth = await _auth(people)
    kept = await _job(person.workspace_id, "https://news.example/kept")
    deleted = await _job(person.workspace_id, "https://news.example/deleted")
    await services.delete(person.workspace_id, deleted)
    old_done = await _job(person.workspace_id, "https://news.example/old-done")
    recent_done = await _job(person.workspace_id, "https://news.example/recent-done")
    old_active = await _job(person.workspace_id, "https://news.example/old-active")
    await db.fetch(
        "UPDATE import_jobs SET status = 'done', finished_at = now() WHERE id = ANY($1)",
        [old_done, recent_done],
    )
    await db.fetch(
        "UPDATE import_jobs SET created_at = now() - interval '31 days' WHERE id = ANY($1)",
        [old_done, old_active],
    )

    listed = [j["id"] for j in (await _list(client, auth))["jobs"]]

    # Newest first: the old active job (created 31 days ago) comes last, and stays listed.
    assert listed == [recent_done, kept, old_active]
    await sign_in(client, person.email)
    page = await client.get("/articles/import")
    assert page.status_code == 200
    for job_id in listed:  # the Import page lists the same jobs
        assert f'href="/articles/import/{job_id}"' in page.text
    for job_id in (deleted, old_done):
        assert f'href="/articles/import/{job_id}"' not in page.text


async def test_pages_hold_per_page_jobs_each_and_a_page_past_the_last_is_the_last(client, people):
    person, auth = await _auth(people)
    async with db.workspace_tx(person.workspace_id) as tx:  # one transaction: one created_at
        made = [
            await services.add_job(
                tx, [f"https://news.example/{n}"], actor_user_id=None, source=Source.API
            )
            for n in range(queries.JOBS_PER_PAGE + 1)
        ]
    newest_first = sorted(made, reverse=True)

    first = await _list(client, auth)
    second = await _list(client, auth, "?page=2")
    beyond = await _list(client, auth, "?page=9")

    assert (first["page"], first["pages"]) == (1, 2)
    assert [j["id"] for j in first["jobs"]] == newest_first[: queries.JOBS_PER_PAGE]
    assert (second["page"], second["pages"]) == (2, 2)
    assert [j["id"] for j in second["jobs"]] == newest_first[queries.JOBS_PER_PAGE :]
    assert beyond == second
    assert (await _list(client, auth, "?page=abc"))["page"] == 1  # as /items reads it


async def test_a_viewer_lists_the_jobs(client, people):
    editor, _editor_auth = await _auth(people)
    job_id = await _job(editor.workspace_id)
    _viewer, auth = await _auth(people, "viewer", editor.workspace_id)

    assert [j["id"] for j in (await _list(client, auth))["jobs"]] == [job_id]


async def test_without_a_token_the_list_is_401(client, people):
    person, _auth_headers = await _auth(people)
    await _job(person.workspace_id)

    response = await client.get("/api/v1/imports")

    assert response.status_code == 401
    assert "jobs" not in response.text


async def test_the_schema_describes_the_list(client):
    schema = (await client.get("/api/v1/schema/openapi.json")).json()
    operation = schema["paths"]["/api/v1/imports"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["page"]
