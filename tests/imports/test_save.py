"""Saving one link as a one-item job: the quick-add box, /save (bookmarklet, share target), the PWA."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.factories import csrf_of, post_form, sign_in
from tests.imports.helpers import item_rows, run_worker


async def test_the_library_offers_the_quick_add_box_to_editors_only(client, people):
    editor = await people.member("editor")
    await sign_in(client, editor.email)
    assert 'id="quick-add"' in (await client.get("/articles")).text
    viewer = await people.member("viewer")
    await client.post("/logout", data={"_csrf_token": csrf_of(client)})
    await sign_in(client, viewer.email)
    assert 'id="quick-add"' not in (await client.get("/articles")).text


@pytest.mark.parametrize(
    "params",
    [
        {"url": "https://news.example/a"},
        {"text": "Look at this https://news.example/a"},  # a phone's share sheet
        {"title": "A story", "text": "A story", "url": "https://news.example/a"},
    ],
)
async def test_save_page_is_prefilled_from_the_bookmarklet_or_the_share_sheet(
    client, editor, params
):
    page = await client.get("/save", params=params)
    assert page.status_code == 200
    assert 'value="https://news.example/a"' in page.text


async def test_one_link_becomes_a_one_item_job_that_opens_the_reader(
    client, editor, site, site_egress
):
    site.routes["/news/one"] = site.page("article.html")
    response = await post_form(client, "/save", {"url": site.base + "/news/one"})
    assert response.status_code == 303
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    (row,) = await item_rows(job_id)
    assert row["state"] == "pending"
    assert 'data-state="pending"' in (await client.get(f"/save/{job_id}")).text
    await run_worker()
    page = await client.get(f"/save/{job_id}")
    (row,) = await item_rows(job_id)
    assert 'data-state="saved"' in page.text
    assert f"window.location.assign('/articles/{row['article_id']}')" in page.text


async def test_a_failed_link_says_why(client, editor, site, site_egress):
    response = await post_form(client, "/save", {"url": site.base + "/gone"})
    job_id = int(response.headers["location"].rsplit("/", 1)[1])
    await run_worker()
    page = await client.get(f"/save/{job_id}")
    assert 'data-state="error"' in page.text
    assert "not found" in page.text


async def test_a_consent_wall_does_not_advise_saving_it_again(client, editor, site, site_egress):
    url = site.base + "/consent/onetrust-en"
    first = await post_form(client, "/save", {"url": url})
    await run_worker()
    page = await client.get(first.headers["location"])
    assert 'data-state="consent-wall"' in page.text
    assert "saving the link again brings back the same wall" in page.text
    assert "bookmarklet" not in page.text
    # As it says: saving again finds the stored wall and fetches nothing.
    again = await post_form(client, "/save", {"url": url})
    await run_worker()
    (row,) = await item_rows(int(again.headers["location"].rsplit("/", 1)[1]))
    assert row["state"] == "duplicate"
    assert len(site.hits_of("/consent/onetrust-en")) == 1
    job = await client.get("/articles/import/" + first.headers["location"].rsplit("/", 1)[1])
    assert "saving the link again brings back the same wall" in job.text


async def test_several_lines_lead_to_the_import_page_prefilled(client, editor):
    text = "https://a.example/1\nhttps://a.example/2\nhttps://a.example/3\nhttps://a.example/4"
    response = await post_form(client, "/save", {"url": text})
    assert response.status_code == 303
    target = urlsplit(response.headers["location"])
    assert target.path == "/articles/import"
    assert parse_qs(target.query)["urls"] == [text]


async def test_the_quick_add_box_offers_the_import_for_several_lines(client, editor):
    text = "https://a.example/1\nhttps://a.example/2\nhttps://a.example/3\nhttps://a.example/4"
    response = await client.post(
        "/save",
        data={"url": text, "_csrf_token": csrf_of(client)},
        headers={"datastar-request": "true"},
    )
    assert response.status_code == 200
    assert "4 URLs found — import them all?" in response.text
    assert "/articles/import?urls=" in response.text


async def test_nothing_to_save_comes_back_with_a_400(client, editor):
    response = await post_form(client, "/save", {"url": "not a link"})
    assert response.status_code == 400
    assert 'role="alert"' in response.text


async def test_a_viewer_cannot_save(client, people):
    viewer = await people.member("viewer")
    await sign_in(client, viewer.email)
    assert (await post_form(client, "/save", {"url": "https://a.example/"})).status_code == 403


async def test_the_import_page_says_how_to_save_from_a_phone(client, editor):
    page = await client.get("/articles/import")
    # "Drag this link to your bookmarks bar" is no way on a phone; sharing to the app is.
    assert 'id="share-hint"' in page.text
    assert "add Newsdesk to the home screen" in page.text


async def test_the_manifest_installs_the_app_with_a_share_target(client):
    response = await client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/manifest+json")
    manifest = response.json()
    assert manifest["share_target"]["action"] == "/save"
    assert manifest["share_target"]["params"]["url"] == "url"
    assert {i["sizes"] for i in manifest["icons"]} >= {"192x192", "512x512"}
    for icon in manifest["icons"]:
        assert (await client.get(icon["src"])).status_code == 200


async def test_the_service_worker_caches_static_assets_only(client):
    response = await client.get("/sw.js")
    assert response.status_code == 200
    assert "javascript" in response.headers["content-type"]
    assert 'url.pathname.startsWith("/static/")' in response.text
