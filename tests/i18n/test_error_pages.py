"""Error pages speak the viewer's language (the middleware that chose it has unwound by then)."""

from tests.factories import post_form, sign_in

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}


async def _german_member(client, people):  # type: ignore[no-untyped-def]
    person = await people.member("editor")
    await sign_in(client, person.email)
    saved = await post_form(
        client, "/settings/profile", {"display_name": "Ada", "locale": "de", "time_zone": "UTC"}
    )
    assert saved.status_code in (302, 303)


async def test_a_missing_article_is_not_found_in_german(client, people):
    await _german_member(client, people)
    page = await client.get("/articles/999999999", headers={"Accept-Language": "en"})
    assert page.status_code == 404
    assert '<html lang="de">' in page.text
    assert "Nicht gefunden" in page.text


async def test_an_unknown_address_is_not_found_in_german(client, people):
    await _german_member(client, people)
    page = await client.get("/no-such-page", headers={"Accept-Language": "en"})
    assert page.status_code == 404
    assert '<html lang="de">' in page.text
    assert "Unter dieser Adresse gibt es nichts." in page.text


async def test_a_refused_form_is_explained_in_german(client, people):
    await _german_member(client, people)
    refused = await client.post("/settings/profile", data={"display_name": "x"})
    assert refused.status_code == 403
    assert '<html lang="de">' in refused.text
    assert "Nicht erlaubt" in refused.text


async def test_before_sign_in_error_pages_follow_accept_language(client):
    page = await client.get("/no-such-page", headers=GERMAN)
    assert page.status_code == 404
    assert '<html lang="de">' in page.text
    assert "Nicht gefunden" in page.text
