"""The import pages and the imports API: forms, the live counter, commands, permissions."""

from __future__ import annotations

import json
import re
from zoneinfo import ZoneInfo

import pytest

from app.accounts import services as accounts
from app.imports import queries, services
from app.imports.types import JobStatus
from tests.egress.servers import Reply
from tests.factories import csrf_of, post_form, sign_in, signed_in_speaking
from tests.imports.helpers import item_rows, run_worker

URLS = "https://news.example/a\nhttps://news.example/b\nhttps://NEWS.example/a\nftp://x.example/"


async def test_the_form_makes_a_job_and_leads_to_its_page(client, editor):
    response = await post_form(client, "/articles/import", {"urls": URLS})
    assert response.status_code == 303
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    assert [r["url"] for r in await item_rows(job_id)] == [
        "https://news.example/a",
        "https://news.example/b",
    ]
    page = await client.get(f"/articles/import/{job_id}")
    assert page.status_code == 200
    assert "0 / 2" in page.text
    assert 'id="import-item-' in page.text
    listing = await client.get("/articles/import")
    assert f'href="/articles/import/{job_id}"' in listing.text


async def test_a_list_without_urls_comes_back_as_typed_with_a_400(client, editor):
    response = await post_form(client, "/articles/import", {"urls": "ftp://x.example/ hello"})
    assert response.status_code == 400
    assert "ftp://x.example/ hello</textarea>" in response.text
    assert 'role="alert"' in response.text


async def test_the_live_counter_uses_parse_urls_on_the_server(client, editor):
    response = await client.post(
        "/articles/import/check",
        data={"urls": URLS, "_csrf_token": csrf_of(client)},
        headers={"datastar-request": "true"},
    )
    assert response.status_code == 200
    assert "event: datastar-patch-elements" in response.text
    assert "2 valid" in response.text
    assert "1 invalid" in response.text
    assert "1 duplicate" in response.text


async def test_the_live_counter_says_how_many_words_were_left_out(client, editor):
    """Prose around the links is not "invalid": it is counted apart, so a pasted mail
    shows its real mistakes (a scheme typo, a link without https://) among the invalid."""
    text = (
        "Hi desk, see https://news.example/a and https://news.example/b.\n"
        "Also htp://news.example/c and news.example/d - thanks, Tom"
    )
    response = await client.post(
        "/articles/import/check",
        data={"urls": text, "_csrf_token": csrf_of(client)},
        headers={"datastar-request": "true"},
    )
    assert "2 valid" in response.text
    assert "2 invalid" in response.text
    assert "htp://news.example/c" in response.text
    assert "news.example/d" in response.text
    assert "8 words that are not web addresses were left out." in response.text
    plain = await client.post(
        "/articles/import/check",
        data={"urls": "https://news.example/a", "_csrf_token": csrf_of(client)},
        headers={"datastar-request": "true"},
    )
    assert "left out" not in plain.text


async def test_the_quick_add_prefill_fills_the_textarea(client, editor):
    page = await client.get(
        "/articles/import", params={"urls": "https://a.example/1\nhttps://a.example/2"}
    )
    assert "https://a.example/1\nhttps://a.example/2</textarea>" in page.text
    assert "2 valid" in page.text


async def test_commands_pause_resume_cancel_and_delete(client, editor):
    job_id = await services.create_job(
        editor.workspace_id, ["https://news.example/a"], actor_user_id=editor.user_id
    )
    base = f"/articles/import/{job_id}"
    assert (await post_form(client, base + "/pause")).status_code == 303
    assert (await queries.job(editor.workspace_id, job_id)).status == JobStatus.PAUSED  # type: ignore[union-attr]
    await post_form(client, base + "/resume")
    assert (await queries.job(editor.workspace_id, job_id)).status == JobStatus.QUEUED  # type: ignore[union-attr]
    await post_form(client, base + "/cancel")
    assert (await queries.job(editor.workspace_id, job_id)).status == JobStatus.CANCELLED  # type: ignore[union-attr]
    response = await post_form(client, base + "/delete")
    assert response.headers["location"] == "/articles/import"
    assert (await client.get(base)).status_code == 404


async def test_a_command_goes_back_to_the_page_of_items_it_came_from(client, editor):
    urls = [f"https://news.example/{n}" for n in range(130)]
    job_id = await services.create_job(editor.workspace_id, urls, actor_user_id=None)
    second = await client.get(f"/articles/import/{job_id}?page=2")
    assert f'action="/articles/import/{job_id}/pause?page=2"' in second.text
    response = await post_form(client, f"/articles/import/{job_id}/pause?page=2")
    assert response.headers["location"] == f"/articles/import/{job_id}?page=2"


async def test_a_viewer_follows_imports_but_cannot_start_one(client, people):
    viewer = await people.member("viewer")
    await sign_in(client, viewer.email)
    page = await client.get("/articles/import")
    assert page.status_code == 200
    assert 'id="import-form"' not in page.text
    assert (await post_form(client, "/articles/import", {"urls": URLS})).status_code == 403


async def test_another_workspaces_job_is_not_found(client, editor, people):
    other = await people.member("editor")
    job_id = await services.create_job(
        other.workspace_id, ["https://news.example/a"], actor_user_id=None
    )
    assert (await client.get(f"/articles/import/{job_id}")).status_code == 404
    assert (await post_form(client, f"/articles/import/{job_id}/cancel")).status_code == 404


async def test_items_are_paged_beyond_100(client, editor):
    urls = [f"https://news.example/{n}" for n in range(130)]
    job_id = await services.create_job(editor.workspace_id, urls, actor_user_id=None)
    first = await client.get(f"/articles/import/{job_id}")
    assert first.text.count('class="row import-item') == 100
    second = await client.get(f"/articles/import/{job_id}?page=2")
    assert second.text.count('class="row import-item') == 30
    assert "https://news.example/129" in second.text


def _badge_of(html: str, job_id: int, region: str) -> tuple[str, str]:
    """The job's outcome attribute and its badge's words in the list row or on its page."""
    start = html.index(f'id="import-job-{job_id}"' if region == "list" else 'id="import-summary"')
    outcome = html[start:].split('data-outcome="', 1)[1].split('"', 1)[0]
    label = html[start:].split('class="badge job-status">', 1)[1].split("<", 1)[0]
    return outcome, label


@pytest.mark.parametrize(
    ("paths", "outcome", "label"),
    [
        (["/gone/1", "/gone/2"], "failed", "Failed"),
        (["/news/fine", "/gone/1"], "done-with-errors", "Done with errors"),
        (["/news/fine"], "done", "Done"),
    ],
)
async def test_a_done_job_whose_addresses_failed_does_not_read_as_done(
    client, editor, site, site_egress, paths, outcome, label
):
    """Every address tried is "done" to the API's status; the pages say how it went."""
    site.routes["/news/fine"] = site.page("article.html")
    job_id = await services.create_job(
        editor.workspace_id, [site.base + p for p in paths], actor_user_id=editor.user_id
    )
    await run_worker()

    listing = (await client.get("/articles/import")).text
    page = (await client.get(f"/articles/import/{job_id}")).text
    assert _badge_of(listing, job_id, "list") == (outcome, label)
    assert _badge_of(page, job_id, "page") == (outcome, label)
    assert 'data-status="done"' in page
    job = await queries.job(editor.workspace_id, job_id)
    assert job is not None
    assert (job.status, job.outcome) == (JobStatus.DONE, outcome)


async def test_the_outcome_reads_in_german(client, people, site, site_egress):
    site.routes["/news/fine"] = site.page("article.html")
    person = await signed_in_speaking(client, people, "de")
    urls = [site.base + "/news/fine", site.base + "/gone/1"]
    job_id = await services.create_job(person.workspace_id, urls, actor_user_id=person.user_id)
    await run_worker()
    page = (await client.get(f"/articles/import/{job_id}")).text
    assert _badge_of(page, job_id, "page") == ("done-with-errors", "Fertig, mit Fehlern")


# The API ---------------------------------------------------------------------------------


async def token_for(people, role: str = "editor") -> tuple[dict[str, str], int]:  # type: ignore[no-untyped-def]
    person = await people.member(role)
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    return {"Authorization": f"Bearer {token}"}, person.workspace_id


async def test_api_creates_a_job_and_reports_what_was_left_out(client, people):
    auth, _workspace = await token_for(people)
    response = await client.post("/api/v1/imports", json={"urls": URLS.split("\n")}, headers=auth)
    assert response.status_code == 201
    body = response.json()
    assert body["total_urls"] == 2
    assert body["duplicates"] == ["https://NEWS.example/a"]
    assert [i["url"] for i in body["invalid"]] == ["ftp://x.example/"]
    job = (await client.get(f"/api/v1/imports/{body['job_id']}", headers=auth)).json()
    assert (job["status"], job["total_urls"], job["finished"]) == ("queued", 2, 0)
    items = (await client.get(f"/api/v1/imports/{body['job_id']}/items", headers=auth)).json()
    assert [i["state"] for i in items["items"]] == ["pending", "pending"]


async def test_api_commands(client, people, site, site_egress):
    auth, _workspace = await token_for(people)
    site.routes["/news/api"] = site.page("article.html")
    created = await client.post(
        "/api/v1/imports",
        json={"urls": [site.base + "/news/api", site.base + "/gone"]},
        headers=auth,
    )
    job_id = created.json()["job_id"]
    paused = await client.post(f"/api/v1/imports/{job_id}/pause", headers=auth)
    assert paused.json()["status"] == "paused"
    resumed = await client.post(f"/api/v1/imports/{job_id}/resume", headers=auth)
    assert resumed.json()["status"] == "queued"
    await run_worker()
    job = (await client.get(f"/api/v1/imports/{job_id}", headers=auth)).json()
    assert (job["status"], job["saved"], job["errors"]) == ("done", 1, 1)
    assert job["outcome"] == "done-with-errors"
    retried = await client.post(f"/api/v1/imports/{job_id}/retry-failed", headers=auth)
    assert (retried.json()["status"], retried.json()["errors"]) == ("running", 0)
    cancelled = await client.post(f"/api/v1/imports/{job_id}/cancel", headers=auth)
    assert cancelled.json()["status"] == "cancelled"
    assert (await client.delete(f"/api/v1/imports/{job_id}", headers=auth)).status_code == 204
    assert (await client.get(f"/api/v1/imports/{job_id}", headers=auth)).status_code == 404


@pytest.mark.parametrize(
    "body",
    [{}, {"urls": "https://a.example"}, {"urls": [1, 2]}, {"urls": []}, {"urls": ["ftp://x"]}],
)
async def test_api_refuses_bad_bodies_with_a_message(client, people, body):
    auth, _workspace = await token_for(people)
    response = await client.post("/api/v1/imports", json=body, headers=auth)
    assert response.status_code == 400
    assert response.json()["detail"]


async def test_api_lists_an_entry_that_is_no_web_address_as_invalid(client, people):
    """A program's list has no prose around its links: "hello" is reported, not dropped."""
    auth, _workspace = await token_for(people)
    urls = ["https://news.example/a", "hello", "news.example/b"]
    response = await client.post("/api/v1/imports", json={"urls": urls}, headers=auth)
    assert response.status_code == 201
    assert response.json()["invalid"] == [
        {"url": "hello", "reason": "This is not a web address (http or https)."},
        {
            "url": "news.example/b",
            "reason": "Add https:// in front: only web addresses can be imported.",
        },
    ]


async def test_api_needs_articles_import(client, people):
    auth, _workspace = await token_for(people, "viewer")
    response = await client.post(
        "/api/v1/imports", json={"urls": ["https://a.example/"]}, headers=auth
    )
    assert response.status_code == 403


async def test_activity_shows_a_finished_import_with_its_counts_and_link(
    client, editor, site, site_egress
):
    site.routes["/news/act"] = site.page("article.html")
    job_id = await services.create_job(
        editor.workspace_id, [site.base + "/news/act"], actor_user_id=editor.user_id
    )
    await run_worker()
    page = await client.get("/activity", params={"kind": "articles"})
    assert "finished an import of" in page.text
    assert "1 saved" in page.text
    assert f'href="/articles/import/{job_id}"' in page.text


async def test_a_job_page_counts_in_the_readers_language(client, people, site, site_egress):
    """The counts line is German on a German page: "1 Fehler", not "1 error"."""
    person = await people.member("editor")
    await accounts.update_profile(person.user_id, display_name="Ed", locale="de", time_zone="UTC")
    await sign_in(client, person.email)
    site.routes["/news/ok"] = site.page("article.html")
    made = await post_form(
        client, "/articles/import", {"urls": f"{site.base}/news/ok\n{site.base}/gone"}
    )
    job_id = int(made.headers["location"].rsplit("/", 1)[1])
    await run_worker()
    page = await client.get(f"/articles/import/{job_id}")
    assert "2 / 2 — 1 Fehler" in page.text
    assert f"<h1>Import #{job_id}</h1>" in page.text


@pytest.mark.parametrize(
    ("locale", "zone", "clock", "says", "item_says"),
    [
        (
            "en",
            "Asia/Kolkata",
            "%-I:%M\u202f%p",
            "1 address waits to be tried again (next at {})",
            "Will try again at {} (attempt 2 of 3):",
        ),
        (
            "de",
            "Europe/Berlin",
            "%H:%M",
            "1 Adresse wartet auf einen neuen Versuch (der nächste um {})",
            "Wird um {} erneut versucht (Versuch 2 von 3):",
        ),
    ],
)
async def test_a_job_whose_open_items_wait_for_a_retry_says_so_and_when(
    client, people, site, site_egress, locale, zone, clock, says, item_says
):
    """One page saved, one answered 429 "Retry-After: 120": the saved page's pace made it
    "less than a minute left"; the page says what happens, at the reader's clock."""
    person = await signed_in_speaking(client, people, locale, zone)
    site.routes["/news/ok"] = site.page("article.html")
    site.routes["/busy"] = Reply(status=429, headers=[("Retry-After", "120")])
    job_id = await services.create_job(
        person.workspace_id, [f"{site.base}/news/ok", f"{site.base}/busy"], actor_user_id=None
    )
    await run_worker()
    waiting = [r for r in await item_rows(job_id) if r["state"] == "pending"]
    assert len(waiting) == 1
    at = waiting[0]["next_attempt_at"].astimezone(ZoneInfo(zone)).strftime(clock)
    page = await client.get(f"/articles/import/{job_id}")
    assert says.format(at) in page.text
    assert item_says.format(at) in page.text  # and the item itself
    assert "inute" not in page.text  # no "less than a minute left" / "Weniger als eine Minute"
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "script")
    api = await client.get(
        f"/api/v1/imports/{job_id}", headers={"Authorization": f"Bearer {token}"}
    )
    assert api.json()["eta_seconds"] is None
    assert api.json()["retry_at"] == waiting[0]["next_attempt_at"].isoformat()


CANCEL_BUTTON = re.compile(r"<button[^>]*class=\"cancel danger\"[^>]*>([^<]*)</button>", re.S)


@pytest.mark.parametrize(
    ("locale", "label", "question"),
    [
        (
            "en",
            "Cancel import",
            "3 addresses will not be imported. OK cancels the import for good.",
        ),
        (
            "de",
            "Import abbrechen",
            "3 Adressen werden nicht mehr importiert. Mit OK wird der Import endgültig beendet.",
        ),
    ],
)
async def test_cancel_asks_first_and_says_how_many_addresses_are_lost(
    client, people, locale, label, question
):
    """One click cancelled an import, and German "Abbrechen" reads as "close this": the
    button says what it ends, and asks first (the app's confirm, no inline script)."""
    person = await signed_in_speaking(client, people, locale)
    urls = [f"https://news.example/{n}" for n in range(3)]
    job_id = await services.create_job(person.workspace_id, urls, actor_user_id=None)
    page = await client.get(f"/articles/import/{job_id}")
    match = CANCEL_BUTTON.search(page.text)
    assert match is not None
    assert match.group(1) == label
    asks = re.search(
        r"data-on:click='confirm\((\"[^']*\")\) \|\| evt.preventDefault\(\)'", match[0]
    )
    assert asks is not None
    assert json.loads(asks.group(1)) == question
