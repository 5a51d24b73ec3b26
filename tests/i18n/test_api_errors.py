"""API errors speak the caller's language: the `detail` a person reads is German when asked
(Accept-Language, else the token owner's profile); status codes, field names and other
machine-readable keys stay as they are."""

import pytest

from app.accounts import services

GERMAN = {"Accept-Language": "de-DE, de;q=0.9"}
ENGLISH = {"Accept-Language": "en"}
# Wrong calls, each answered 4xx with a message (by our code or by Litestar itself).
WRONG_CALLS = [
    ("GET", "/api/v1/articles/99999", None, 404),
    ("GET", "/api/v1/articles/?state=bogus", None, 400),
    ("GET", "/api/v1/articles/?limit=1000", None, 400),
    ("GET", "/api/v1/events/?kind=nope", None, 400),
    ("POST", "/api/v1/imports/", {"urls": "https://a.example/"}, 400),
    ("POST", "/api/v1/imports/", {"urls": []}, 400),
    ("POST", "/api/v1/imports/", "{not json", 400),
    ("DELETE", "/api/v1/me", None, 405),
    ("GET", "/api/v1/feeds/columns/99999/items", None, 404),
    ("POST", "/api/v1/feeds/columns", {"type": "nope"}, 422),
    ("PUT", "/api/v1/feeds/budgets/x", {"cap": "many"}, 422),
]


async def _call(client, token: str, call, headers):  # type: ignore[no-untyped-def]
    method, url, body, _status = call
    content = {"content": body} if isinstance(body, str) else {"json": body} if body else {}
    return await client.request(
        method, url, headers={"Authorization": f"Bearer {token}", **headers}, **content
    )


@pytest.mark.parametrize("call", WRONG_CALLS, ids=lambda c: f"{c[0]} {c[1]}")
async def test_api_errors_are_in_the_language_asked_for(client, people, call):
    person = await people.member("owner")  # an English profile
    token = await services.issue_api_token(person.workspace_id, person.user_id, "cli")
    english = await _call(client, token, call, ENGLISH)
    german = await _call(client, token, call, GERMAN)

    assert english.status_code == german.status_code == call[3]
    en, de = english.json(), german.json()
    assert de["detail"] != en["detail"], de  # no English left for a German caller
    assert de["status_code"] == en["status_code"]
    assert de.keys() == en.keys()  # the same machine-readable shape
    if "errors" in en:
        assert de["errors"].keys() == en["errors"].keys()  # field names are not translated


async def test_without_the_header_the_profile_language_answers(client, people):
    person = await people.member("owner")
    await services.update_profile(person.user_id, "Renate", "de", "UTC")
    token = await services.issue_api_token(person.workspace_id, person.user_id, "cli")
    answer = await client.delete("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 405
    assert answer.json()["detail"] == "Diese Adresse nimmt diese Art von Anfrage nicht an."
    english = await client.delete(
        "/api/v1/me", headers={"Authorization": f"Bearer {token}", **ENGLISH}
    )
    assert english.json()["detail"] == "This address does not accept this kind of request."


async def test_a_missing_token_is_explained_in_german(client):
    answer = await client.get("/api/v1/me", headers=GERMAN)
    assert answer.status_code == 401
    assert answer.json()["detail"].startswith("Senden Sie ein gültiges API-Token")


async def test_a_page_that_refuses_a_method_says_so_in_german(client):
    page = await client.delete("/login", headers=GERMAN)
    assert page.status_code == 405
    assert "Diese Adresse nimmt diese Art von Anfrage nicht an." in page.text
