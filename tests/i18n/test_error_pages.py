"""Error pages speak the viewer's language (the middleware that chose it has unwound by then)."""

import pytest

from tests.factories import post_form, sign_in

GERMAN = {"Accept-Language": "de-DE,de;q=0.9"}


@pytest.mark.parametrize(
    ("method", "path", "data", "status", "german"),
    [
        ("GET", "/articles/999999999", None, 404, "Nicht gefunden"),
        ("GET", "/no-such-page", None, 404, "Unter dieser Adresse gibt es nichts."),
        ("POST", "/settings/profile", {"display_name": "x"}, 403, "Nicht erlaubt"),  # no token
    ],
    ids=["a-missing-article", "an-unknown-address", "a-refused-form"],
)
async def test_error_pages_speak_the_members_language_not_the_browsers(
    client, people, method, path, data, status, german
):
    person = await people.member("editor")
    await sign_in(client, person.email)
    saved = await post_form(
        client, "/settings/profile", {"display_name": "Ada", "locale": "de", "time_zone": "UTC"}
    )
    assert saved.status_code in (302, 303)
    page = await client.request(method, path, data=data, headers={"Accept-Language": "en"})
    assert page.status_code == status
    assert '<html lang="de">' in page.text
    assert german in page.text


async def test_before_sign_in_error_pages_follow_accept_language(client):
    page = await client.get("/no-such-page", headers=GERMAN)
    assert page.status_code == 404
    assert '<html lang="de">' in page.text
    assert "Nicht gefunden" in page.text
