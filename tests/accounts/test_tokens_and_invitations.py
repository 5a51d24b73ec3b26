"""API tokens (shown once, stored hashed, revocable) and invitation links."""

import re

from app.core import config, db
from tests.factories import PASSWORD, post_form, sign_in


async def invitation_link(client, form: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    """The path of the invitation link the signed-in admin's form makes (shown once)."""
    invited = await post_form(client, "/settings/members/invite", form)
    found = re.search(r'value="http://testserver\.local(/invite/[^"]+)"', invited.text)
    assert found is not None, invited.text
    return found.group(1)


async def test_a_new_token_is_shown_once_and_works_as_bearer(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    created = await post_form(client, "/settings/tokens", {"name": "newsbot"})
    assert created.status_code == 200
    token = re.search(r'id="new-token" readonly value="(nd_[^"]+)"', created.text).group(1)
    assert ">Copy</button>" in created.text  # shown once: one click takes it
    stored = await db.fetchrow("SELECT token_hash, prefix FROM api_tokens")
    assert stored["token_hash"] != token
    assert token.startswith(stored["prefix"])
    listing = await client.get("/settings/tokens")
    assert token not in listing.text
    assert "newsbot" in listing.text
    me = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200
    assert me.json()["user"]["email"] == person.email
    # Where an assistant plugs the token in (README: Connecting an AI assistant).
    assert f"{config.active().base_url}/mcp" in listing.text


async def test_a_revoked_token_stops_working(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    created = await post_form(client, "/settings/tokens", {"name": "old"})
    token = re.search(r'value="(nd_[^"]+)"', created.text).group(1)
    token_id = await db.fetchval("SELECT id FROM api_tokens")
    assert (await post_form(client, f"/settings/tokens/{token_id}/revoke")).status_code == 303
    me = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 401


async def test_a_token_without_a_name_keeps_the_form_and_says_why(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    response = await post_form(client, "/settings/tokens", {"name": "  "})
    assert response.status_code == 400
    assert "Name the token" in response.text


async def test_an_invitation_link_makes_a_new_person_a_member(client, new_client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    link = await invitation_link(client, {"role": "viewer", "email": ""})
    guest = new_client()
    page = await guest.get(link)
    assert page.status_code == 200
    assert "Join Desk" in page.text
    joined = await post_form(
        guest,
        f"{link}/signup",
        {"email": "new@example.org", "display_name": "New", "password": PASSWORD},
    )
    assert joined.status_code == 303
    role = await db.fetchval(
        "SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE u.email = 'new@example.org'"
    )
    assert role == "viewer"
    assert (await guest.get("/activity")).status_code == 200
    again = await new_client().get(link)
    assert again.status_code == 404


async def test_a_person_who_signs_up_in_german_keeps_german(client, new_client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    link = await invitation_link(client, {"role": "viewer", "email": ""})
    guest = new_client()
    guest.headers["Accept-Language"] = "de-DE,de;q=0.9,en;q=0.5"
    assert 'lang="de"' in (await guest.get(link)).text  # the sign-up page follows the browser
    await post_form(
        guest,
        f"{link}/signup",
        {"email": "neu@example.org", "display_name": "Neu", "password": PASSWORD},
    )
    # Signed in, the profile's language decides: the one they signed up in, not English.
    assert await db.fetchval("SELECT locale FROM users WHERE email = 'neu@example.org'") == "de"
    assert 'lang="de"' in (await guest.get("/activity")).text


async def test_sign_up_with_a_short_password_keeps_what_was_typed(client, new_client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    link = await invitation_link(client, {"role": "editor"})
    guest = new_client()
    await guest.get(link)
    response = await post_form(
        guest,
        f"{link}/signup",
        {"email": "typed@example.org", "display_name": "Typed Name", "password": "short"},
    )
    assert response.status_code == 400
    assert "at least 10 characters" in response.text
    assert 'value="typed@example.org"' in response.text
    assert 'value="Typed Name"' in response.text


async def test_an_admin_opening_their_own_link_does_not_spend_it(client, new_client, people):
    """Admins try the link they made: joining a workspace one is in would use it up."""
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    invited = await post_form(client, "/settings/members/invite", {"role": "editor"})
    link = re.search(r'value="http://testserver\.local(/invite/[^"]+)"', invited.text).group(1)
    assert ">Copy</button>" in invited.text
    page = (await client.get(link)).text
    assert "You are a member of this workspace already." in page
    assert f'action="{link}/accept"' not in page
    refused = await post_form(client, f"{link}/accept")
    assert refused.status_code == 409
    assert await db.fetchval("SELECT count(*) FROM invitations WHERE accepted_at IS NULL") == 1
    guest = new_client()
    signup = await guest.get(link)
    assert "Create account and join" in signup.text  # still there for the person it is for


async def test_an_existing_person_accepts_an_invitation_and_gets_the_switcher(
    client, new_client, people
):
    owner = await people.member("owner")
    other = await people.member("owner")
    await sign_in(client, owner.email)
    link = await invitation_link(client, {"role": "editor"})
    guest = new_client()
    await sign_in(guest, other.email)
    accepted = await post_form(guest, f"{link}/accept")
    assert accepted.status_code == 303
    page = await guest.get("/activity")
    assert 'id="workspace-switch"' in page.text
    assert (
        await db.fetchval("SELECT count(*) FROM memberships WHERE user_id = $1", other.user_id) == 2
    )


async def test_a_person_without_workspace_is_sent_to_start_one(client, people):
    _user_id, email = await people.user()
    await sign_in(client, email)
    response = await client.get("/wall", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/welcome"
    created = await post_form(client, "/workspaces", {"name": "My desk"})
    assert created.status_code == 303
    assert (await client.get("/wall")).status_code == 200


async def test_token_use_is_noted_at_most_once_a_minute(client, people):
    from app.accounts import services

    person = await people.member("editor")
    token = await services.issue_api_token(person.workspace_id, person.user_id, "bot")
    headers = {"Authorization": f"Bearer {token}"}
    await client.get("/api/v1/me", headers=headers)
    first = await db.fetchval("SELECT last_used_at FROM api_tokens")
    assert first is not None
    await client.get("/api/v1/me", headers=headers)
    assert await db.fetchval("SELECT last_used_at FROM api_tokens") == first
    await db.fetch("UPDATE api_tokens SET last_used_at = now() - interval '2 minutes'")
    await client.get("/api/v1/me", headers=headers)
    assert await db.fetchval("SELECT last_used_at FROM api_tokens") > first


async def test_a_session_in_use_slides_its_expiry_once_it_is_a_minute_old(client, people):
    person = await people.member("viewer")
    await sign_in(client, person.email)
    await db.fetch(
        "UPDATE sessions SET last_seen_at = now() - interval '2 minutes', expires_at = now() + interval '1 hour'"
    )
    await client.get("/activity")
    expires = await db.fetchval("SELECT expires_at - now() FROM sessions")
    assert expires.days >= 29
