"""Signing in and out: cookies, rotation, CSRF, throttling."""

from app.accounts import services
from app.accounts.credentials import token_hash
from app.accounts.middleware import SESSION_COOKIE
from app.accounts.roles import Role
from app.core import db
from tests.factories import PASSWORD, csrf_of, post_form, sign_in


async def test_sign_in_sets_an_httponly_lax_session_cookie_and_redirects(client, people):
    person = await people.member("editor")
    response = await sign_in(client, person.email)
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    cookie = next(
        c for c in response.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE)
    )
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    assert "Secure" not in cookie  # base_url is http in tests
    page = await client.get("/activity")
    assert page.status_code == 200
    assert person.email.split("@")[0].replace("person", "Person ") in page.text


async def test_the_session_token_is_stored_only_as_a_hash(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    token = client.cookies[SESSION_COOKIE]
    stored = await db.fetch("SELECT token_hash FROM sessions")
    assert len(stored) == 1
    assert stored[0]["token_hash"] != token
    assert len(stored[0]["token_hash"]) == 64


async def test_a_wrong_password_keeps_the_email_and_explains(client, people):
    person = await people.member("viewer")
    response = await sign_in(client, person.email, "wrong password")
    assert response.status_code == 400
    assert "The email or the password is not right." in response.text
    assert f'value="{person.email}"' in response.text
    assert SESSION_COOKIE not in client.cookies


async def test_sign_in_rotates_the_session(client, new_client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    first = client.cookies[SESSION_COOKIE]
    await sign_in(client, person.email)
    second = client.cookies[SESSION_COOKIE]
    assert first != second
    # the earlier session no longer works
    assert await db.fetchval("SELECT count(*) FROM sessions") == 1
    old_device = new_client()
    old_device.cookies.set(SESSION_COOKIE, first)
    response = await old_device.get("/activity", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login")


async def test_someone_else_signs_in_on_a_browser_signed_in_to_another_workspace(client, people):
    """A shared computer, or a sign-in form left open in a tab: the new session is system
    work, not bound to the workspace of the session the browser still had."""
    first = await people.member("editor")
    second = await people.member("editor")
    await sign_in(client, first.email)
    old = client.cookies[SESSION_COOKIE]
    response = await client.post(
        "/login",
        data={"email": second.email, "password": PASSWORD, "_csrf_token": csrf_of(client)},
        follow_redirects=False,
    )
    assert response.status_code == 303
    me = await db.fetchrow(
        "SELECT user_id, workspace_id FROM sessions WHERE token_hash <> $1", token_hash(old)
    )
    assert me is not None
    assert (me["user_id"], me["workspace_id"]) == (second.user_id, second.workspace_id)
    assert await db.fetchval("SELECT count(*) FROM sessions") == 1  # the old one ended


async def test_changing_the_password_signs_out_every_other_browser(client, new_client, people):
    person = await people.member("editor")
    elsewhere = await people.member("viewer")  # signed in there on another device
    await services.add_member(
        elsewhere.workspace_id, person.user_id, Role.VIEWER, actor_user_id=None
    )
    lost = new_client()
    await sign_in(lost, person.email)
    await post_form(lost, "/workspaces/switch", {"workspace_id": str(elsewhere.workspace_id)})
    await sign_in(client, person.email)
    response = await post_form(
        client,
        "/settings/password",
        {"current_password": PASSWORD, "new_password": "a much newer password"},
    )
    assert response.status_code == 303
    assert (await client.get("/activity", follow_redirects=False)).status_code == 200
    assert (await lost.get("/activity", follow_redirects=False)).status_code == 303
    assert await db.fetchval("SELECT count(*) FROM sessions") == 1


async def test_sign_out_ends_the_session(client, new_client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    token = client.cookies[SESSION_COOKIE]
    response = await post_form(client, "/logout")
    assert response.status_code == 303
    assert await db.fetchval("SELECT count(*) FROM sessions") == 0
    old_device = new_client()
    old_device.cookies.set(SESSION_COOKIE, token)
    assert (await old_device.get("/activity", follow_redirects=False)).status_code == 303


async def test_a_post_without_csrf_token_is_rejected(client, people):
    person = await people.member("editor")
    await client.get("/login")
    response = await client.post(
        "/login", data={"email": person.email, "password": PASSWORD}, follow_redirects=False
    )
    assert response.status_code == 403
    assert "This form has expired" in response.text
    assert SESSION_COOKIE not in client.cookies


async def test_a_post_with_a_forged_csrf_token_is_rejected(client, people):
    person = await people.member("owner")
    await sign_in(client, person.email)
    response = await client.post(
        "/settings/tokens", data={"name": "x", "_csrf_token": "forged" * 20}, follow_redirects=False
    )
    assert response.status_code == 403
    assert await db.fetchval("SELECT count(*) FROM api_tokens") == 0


async def test_repeated_failures_are_throttled_even_with_the_right_password(
    client, people, settings
):
    person = await people.member("editor")
    for _ in range(settings.login_attempts_per_15min):
        assert (await sign_in(client, person.email, "nope nope nope")).status_code == 400
    response = await sign_in(client, person.email, PASSWORD)
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.text


async def test_next_only_leads_to_this_site(client, people):
    person = await people.member("editor")
    await client.get("/login")
    response = await client.post(
        "/login",
        data={
            "email": person.email,
            "password": PASSWORD,
            "next": "//evil.example/x",
            "_csrf_token": client.cookies["nd_csrf"],
        },
        follow_redirects=False,
    )
    assert response.headers["location"] == "/"


async def test_pages_send_anonymous_visitors_to_sign_in(client):
    response = await client.get("/activity", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/activity"


async def test_an_open_page_of_a_removed_member_says_they_lost_access(client, people):
    """Their only workspace gone, the page's next request is not "not a member yet"."""
    person = await people.member("editor")
    owner = await db.fetchval(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
        person.workspace_id,
    )
    await sign_in(client, person.email)
    await services.remove_member(person.workspace_id, person.user_id, actor_user_id=owner)
    response = await client.get("/activity/stream", headers={"datastar-request": "true"})
    assert "You no longer have access to this page." in response.text
    assert "not a member of any workspace yet" not in response.text


async def test_a_datastar_stream_without_session_asks_to_sign_in_again(client):
    response = await client.get("/activity/stream", headers={"datastar-request": "true"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert 'id="session-ended"' in response.text
