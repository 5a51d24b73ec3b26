"""What a signed-in person sees is never kept by the browser's cache."""

import pytest

from tests.factories import post_form, sign_in

SIGNED_IN_PAGES = ["/", "/articles", "/activity", "/settings", "/settings/tokens", "/topics"]


@pytest.mark.parametrize("path", SIGNED_IN_PAGES)
async def test_signed_in_pages_are_not_stored(client, people, path):
    person = await people.member("editor")
    await sign_in(client, person.email)
    response = await client.get(path, follow_redirects=True)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"


async def test_after_sign_out_the_library_is_not_served_from_cache(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    library = await client.get("/articles")
    assert library.headers["cache-control"] == "no-store"
    await post_form(client, "/logout")
    again = await client.get("/articles", follow_redirects=False)
    assert again.status_code in (302, 303)


async def test_api_answers_are_not_stored(client, people):
    from app.accounts import services

    person = await people.member("viewer")
    token = await services.issue_api_token(person.workspace_id, person.user_id, "cli")
    response = await client.get("/api/v1/me", headers={"authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"


async def test_static_files_stay_cacheable_for_signed_in_people(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    response = await client.get("/static/css/app.css")
    assert response.headers.get("cache-control") != "no-store"
