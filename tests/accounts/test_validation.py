"""What people type is checked, kept when wrong, and explained beside the field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.accounts import services
from app.accounts.roles import Role
from app.accounts.types import AccountError
from app.accounts.validation import checked_email
from app.core import config, db, i18n
from tests.factories import PASSWORD, post_form, sign_in
from tests.fixtures import make_test_settings


def field_error(html: str, name: str) -> str:
    """The message shown beside the field `name`, or ""."""
    match = re.search(
        rf'<input name="{name}"[^>]*aria-invalid="true"[^>]*>\s*<small class="field-error"[^>]*>([^<]*)<',
        html,
    )
    return match.group(1) if match else ""


def typed(html: str, name: str) -> str:
    match = re.search(rf'<input name="{name}"[^>]*value="([^"]*)"', html)
    return match.group(1) if match else ""


async def services_create(email: str, name: str = "Ana") -> int:
    return await services.create_user(email, name, PASSWORD)


@pytest.mark.parametrize(
    "email",
    ["not-an-email", "two@@example.org", "spaces in@example.org", "x@localhost", "a@b"],
)
async def test_create_user_refuses_unusable_addresses(services, email):
    with pytest.raises(AccountError) as refused:
        await services_create(email)
    assert refused.value.field == "email"


@pytest.mark.parametrize(
    ("email", "german"),
    [
        ("not-an-email", "ein @"),
        ("@example.org", "vor das @"),
        ("ana@", "hinter das @"),
        ("ana@localhost", "localhost"),
        ("ana@example", "Punkt"),
        ("an a@example.org", "Leerzeichen"),
    ],
)
def test_an_unusable_address_is_explained_in_the_readers_language(email, german):
    with i18n.speaking("de"), pytest.raises(AccountError) as refused:
        checked_email(email)
    assert refused.value.message.startswith("Diese E-Mail-Adresse ist nicht verwendbar: ")
    assert german in refused.value.message
    assert "sign" not in refused.value.message  # email-validator's English ("@-sign")


async def test_addresses_are_capped_at_254_characters_and_normalised(services):
    local = "a" * 64
    domain = ".".join(["b" * 60] * 3) + ".org"  # 187 characters: 252 in all
    assert await services_create(f"{local}@{domain}")
    too_long = f"{local}@{'c' * 60}.{domain}"
    with pytest.raises(AccountError, match="at most 254"):
        await services_create(too_long)
    user_id = await services_create("Mira@Example.ORG", "Mira")
    assert await db.fetchval("SELECT email FROM users WHERE id = $1", user_id) == "Mira@example.org"


async def test_a_long_name_is_refused_with_a_message_not_cut(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    long_name = "N" * 121
    response = await post_form(
        client,
        "/settings/profile",
        {"display_name": long_name, "locale": "en", "time_zone": "UTC"},
    )
    assert response.status_code == 400
    assert "Keep it to 120 characters" in field_error(response.text, "display_name")
    assert typed(response.text, "display_name") == long_name
    stored = await db.fetchval("SELECT display_name FROM users WHERE id = $1", person.user_id)
    assert stored != long_name[:120]


async def test_workspace_and_token_names_are_capped_with_a_message(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    workspace = await post_form(client, "/workspaces", {"name": "W" * 121})
    assert workspace.status_code == 400
    assert "Keep it to 120 characters" in field_error(workspace.text, "name")
    assert typed(workspace.text, "name") == "W" * 121
    token = await post_form(client, "/settings/tokens", {"name": "T" * 81})
    assert token.status_code == 400
    assert "Keep it to 80 characters" in field_error(token.text, "name")
    assert typed(token.text, "name") == "T" * 81


async def test_an_invitation_email_is_checked_and_the_form_keeps_it(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    bad = await post_form(
        client, "/settings/members/invite", {"role": "viewer", "email": "not an email"}
    )
    assert bad.status_code == 400
    assert "not a usable email address" in field_error(bad.text, "email")
    assert typed(bad.text, "email") == "not an email"
    assert 'value="viewer" selected' in bad.text
    assert await db.fetchval("SELECT count(*) FROM invitations") == 0
    wrong_role = await post_form(client, "/settings/members/invite", {"role": "owner"})
    assert wrong_role.status_code == 400
    assert "Choose admin, editor or viewer." in wrong_role.text


async def test_the_invitation_sign_up_starts_with_the_invited_address(client, new_client, people):
    owner = await people.member("owner")
    token = await services.invite(
        owner.workspace_id, Role.EDITOR, email="Kim@Example.org", actor_user_id=owner.user_id
    )
    page = await new_client().get(f"/invite/{token}")
    assert typed(page.text, "email") == "Kim@example.org"


async def test_a_bad_sign_up_address_is_explained_beside_the_field(client, new_client, people):
    owner = await people.member("owner")
    token = await services.invite(
        owner.workspace_id, Role.EDITOR, email="", actor_user_id=owner.user_id
    )
    guest = new_client()
    await guest.get(f"/invite/{token}")
    response = await post_form(
        guest,
        f"/invite/{token}/signup",
        {"email": "kim@", "display_name": "Kim", "password": PASSWORD},
    )
    assert response.status_code == 400
    assert field_error(response.text, "email")
    assert typed(response.text, "display_name") == "Kim"


async def test_a_viewer_cannot_start_workspaces_unless_the_instance_allows_it(client, people):
    viewer = await people.member("viewer")
    await sign_in(client, viewer.email)
    welcome = await client.get("/welcome")
    assert "Viewers cannot start workspaces here" in welcome.text
    assert 'action="/workspaces"' not in welcome.text
    refused = await post_form(client, "/workspaces", {"name": "Mine"})
    assert refused.status_code == 403
    assert "Viewers cannot start workspaces here" in refused.text
    assert await db.fetchval("SELECT count(*) FROM workspaces WHERE name = 'Mine'") == 0

    default = config.active()
    config.activate(make_test_settings(viewers_create_workspaces=True))
    try:
        allowed = await post_form(client, "/workspaces", {"name": "Mine"})
    finally:
        config.activate(default)
    assert allowed.status_code == 303
    assert await db.fetchval("SELECT count(*) FROM workspaces WHERE name = 'Mine'") == 1


async def test_welcome_takes_a_member_to_their_workspace(client, people):
    a = await people.member("editor")
    b = await people.member("editor")
    await services.add_member(b.workspace_id, a.user_id, Role.VIEWER, actor_user_id=None)
    await sign_in(client, a.email)
    # Removed from the workspace the session works in: the session has none now.
    await services.remove_member(a.workspace_id, a.user_id, actor_user_id=b.user_id)
    response = await client.get("/welcome", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    page = await client.get("/activity")
    assert page.status_code == 200
    assert "You are not a member of any workspace" not in page.text


# What makes the browser check a field itself before sending its form.
_BROWSER_CHECKED = re.compile(
    r'\b(required|minlength|pattern)\b|type="(url|email|number)"|\bm(in|ax)="'
)


def test_forms_the_browser_would_check_leave_the_words_to_the_server():
    """The browser's own bubbles ("Please fill out this field", "Please enter a URL",
    "Please lengthen this text") speak the browser's language, not the person's, and a
    German page showed them in English: every form whose fields the browser would check is
    `novalidate`, and the server explains beside the field, the typed text kept."""
    templates = Path(__file__).resolve().parents[2] / "templates"
    checked = []
    for path in templates.rglob("*.html"):
        for form in re.findall(r"<form\b.*?</form>", path.read_text(), re.S):
            if _BROWSER_CHECKED.search(form):
                checked.append((path.name, "novalidate" in form.split(">", 1)[0]))
    assert len(checked) >= 12  # sign-in, sign-up, reset, passwords, topics, saving, the wall
    assert [name for name, novalidate in checked if not novalidate] == []
