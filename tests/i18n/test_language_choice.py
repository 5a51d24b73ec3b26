"""German is offered in the profile and picked from the browser before sign-in."""

from app.accounts import services
from tests.factories import post_form, sign_in


async def test_pages_before_sign_in_follow_accept_language(client):
    german = await client.get("/login", headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.8"})
    assert '<html lang="de">' in german.text
    english = await client.get("/login", headers={"Accept-Language": "en-GB"})
    assert '<html lang="en">' in english.text


async def test_the_profile_offers_german_and_keeps_it(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    profile = await client.get("/settings/")
    assert '<option value="de"' in profile.text
    assert "Deutsch" in profile.text
    saved = await post_form(
        client,
        "/settings/profile",
        {"display_name": "Ada", "locale": "de", "time_zone": "Europe/Berlin"},
    )
    assert saved.status_code in (302, 303)
    page = await client.get("/settings/", headers={"Accept-Language": "en"})
    assert '<html lang="de">' in page.text


async def test_role_names_read_in_the_persons_language(client, people):
    """A German invitee learns they join as "Leser", not as the English word "viewer"."""
    owner = await people.member("owner")
    invitation = await services.invite(
        owner.workspace_id, "viewer", email="", actor_user_id=owner.user_id
    )
    german = {"Accept-Language": "de-DE,de;q=0.9"}
    invite = await client.get(f"/invite/{invitation}", headers=german)
    assert "Sie sind als Leser eingeladen." in invite.text
    await sign_in(client, owner.email)
    await post_form(
        client, "/settings/profile", {"display_name": "Ada", "locale": "de", "time_zone": "UTC"}
    )
    members = (await client.get("/settings/members")).text
    # One word for owners, as in every message about them ("Nur ein Eigentümer kann ...").
    for name in ("Eigentümer", "Admin", "Redakteur", "Leser"):
        assert f">{name}</option>" in members
