"""Who may follow and who may start or steer an import: one rule (app.imports.access) on
the pages and in the API alike (MCP: tests/web/test_mcp.py). Every member follows a job;
editors, admins and owners start and steer one; a viewer is told so, with a 403."""

from __future__ import annotations

import pytest

from app.accounts import services as accounts
from app.imports import services
from tests.factories import csrf_of, post_form, sign_in
from tests.live_client import LiveStream

URL = "https://news.example/a"
REFUSED = "Your role in this workspace lets you follow imports, not start or change them."
ROLES = ["owner", "admin", "editor", "viewer"]


async def _member_with_job(people, role: str):  # type: ignore[no-untyped-def]
    person = await people.member(role)
    job_id = await services.create_job(person.workspace_id, [URL], actor_user_id=None)
    return person, job_id


@pytest.mark.parametrize("role", ROLES)
async def test_every_member_follows_a_job_on_the_pages(client, people, web_app, role):
    person, job_id = await _member_with_job(people, role)
    await sign_in(client, person.email)

    listing = await client.get("/articles/import")
    assert listing.status_code == 200
    assert f'href="/articles/import/{job_id}"' in listing.text
    page = await client.get(f"/articles/import/{job_id}")
    assert page.status_code == 200
    assert URL in page.text
    assert (await client.get(f"/save/{job_id}")).status_code == 200
    async with LiveStream(web_app, client, f"/articles/import/{job_id}/stream") as stream:
        assert URL in await stream.until('id="import-summary"')


@pytest.mark.parametrize("role", ROLES)
async def test_every_member_follows_a_job_in_the_api(client, people, role):
    person, job_id = await _member_with_job(people, role)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    auth = {"Authorization": f"Bearer {token}"}

    job = await client.get(f"/api/v1/imports/{job_id}", headers=auth)
    assert job.status_code == 200
    assert (job.json()["id"], job.json()["total_urls"]) == (job_id, 1)
    items = await client.get(f"/api/v1/imports/{job_id}/items", headers=auth)
    assert items.status_code == 200
    assert [i["url"] for i in items.json()["items"]] == [URL]


@pytest.mark.parametrize("role", ["owner", "admin", "editor"])
async def test_editors_and_up_start_and_steer_imports_everywhere(client, people, role):
    person, job_id = await _member_with_job(people, role)
    await sign_in(client, person.email)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    auth = {"Authorization": f"Bearer {token}"}

    page = await client.get("/articles/import")
    assert 'id="import-form"' in page.text
    assert (
        f'action="/articles/import/{job_id}/pause"'
        in (await client.get(f"/articles/import/{job_id}")).text
    )
    assert (await post_form(client, "/articles/import", {"urls": URL})).status_code == 303
    assert (await post_form(client, f"/articles/import/{job_id}/pause")).status_code == 303
    made = await client.post("/api/v1/imports", json={"urls": [URL]}, headers=auth)
    assert made.status_code == 201
    resumed = await client.post(f"/api/v1/imports/{job_id}/resume", headers=auth)
    assert resumed.status_code == 200
    assert (await client.delete(f"/api/v1/imports/{job_id}", headers=auth)).status_code == 204


async def test_a_viewer_is_told_why_they_cannot_start_or_steer_on_the_pages(client, people):
    person, job_id = await _member_with_job(people, "viewer")
    await sign_in(client, person.email)

    page = await client.get(f"/articles/import/{job_id}")
    assert f'action="/articles/import/{job_id}/pause"' not in page.text  # no buttons offered
    for path, data in [
        ("/articles/import", {"urls": URL}),
        ("/articles/import/check", {"urls": URL}),
        (f"/articles/import/{job_id}/pause", {}),
        (f"/articles/import/{job_id}/resume", {}),
        (f"/articles/import/{job_id}/cancel", {}),
        (f"/articles/import/{job_id}/retry-failed", {}),
        (f"/articles/import/{job_id}/delete", {}),
        ("/save", {"url": URL}),
    ]:
        response = await post_form(client, path, data)
        assert response.status_code == 403, path
        assert REFUSED in response.text, path
    # Datastar's counter gets the notice too, in place.
    counter = await client.post(
        "/articles/import/check",
        data={"urls": URL, "_csrf_token": csrf_of(client)},
        headers={"datastar-request": "true"},
    )
    assert REFUSED in counter.text


async def test_a_viewer_is_told_why_they_cannot_start_or_steer_in_the_api(client, people):
    person, job_id = await _member_with_job(people, "viewer")
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    auth = {"Authorization": f"Bearer {token}"}

    calls = [
        ("POST", "/api/v1/imports"),
        *(("POST", f"/api/v1/imports/{job_id}/{c}") for c in ("pause", "resume", "cancel")),
        ("POST", f"/api/v1/imports/{job_id}/retry-failed"),
        ("DELETE", f"/api/v1/imports/{job_id}"),
        ("POST", "/api/v1/articles/1/fetch-again"),
    ]
    for method, path in calls:
        body = {"urls": [URL]} if path == "/api/v1/imports" else None
        response = await client.request(method, path, json=body, headers=auth)
        assert response.status_code == 403, path
        assert response.json()["detail"] == REFUSED, path
    job = (await client.get(f"/api/v1/imports/{job_id}", headers=auth)).json()
    assert job["status"] == "queued"  # nothing was changed


async def test_another_workspaces_job_stays_hidden_from_every_reader(client, people):
    person = await people.member("viewer")
    _other, theirs = await _member_with_job(people, "editor")
    await sign_in(client, person.email)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    auth = {"Authorization": f"Bearer {token}"}
    assert (await client.get(f"/articles/import/{theirs}")).status_code == 404
    assert (await client.get(f"/api/v1/imports/{theirs}", headers=auth)).status_code == 404
    assert (await client.get(f"/api/v1/imports/{theirs}/items", headers=auth)).status_code == 404
