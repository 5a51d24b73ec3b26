"""An owner renames the workspace in Settings → Workspace: members see the new name on their
next page, Activity says who renamed it from what, nobody else may, no other workspace moves."""

from __future__ import annotations

import html as html_text

import pytest

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.accounts.types import AccountError
from app.core import db
from tests.factories import post_form, sign_in

NEW_NAME = "Redaktion Süd"


async def _name_of(workspace_id: int) -> str:
    with db.system():
        return str(await db.fetchval("SELECT name FROM workspaces WHERE id = $1", workspace_id))


async def _rename(client, name: str):  # type: ignore[no-untyped-def]
    return await post_form(client, "/settings/workspace/name", {"name": name})


def _field_error(page: str) -> str:
    after = page.split('class="field-error"', 1)[-1]
    return html_text.unescape(after.split(">", 1)[-1].split("<", 1)[0])


async def test_an_owner_renames_the_workspace_and_its_members_see_the_new_name(
    client, new_client, people
):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    other = await people.member("owner")
    await sign_in(client, owner.email)

    response = await _rename(client, f"  {NEW_NAME}  ")

    assert (response.status_code, response.headers["location"]) == (
        303,
        "/settings/workspace?saved=name",
    )
    assert await _name_of(owner.workspace_id) == NEW_NAME  # spaces trimmed
    settings = (await client.get(response.headers["location"])).text
    assert "Saved." in settings
    assert f'name="name" type="text" value="{NEW_NAME}"' in settings
    # Another member's next page names it (the top bar reads it with the session).
    theirs = new_client()
    await sign_in(theirs, editor.email)
    assert f'<span class="workspace-name">{NEW_NAME}</span>' in (await theirs.get("/wall")).text
    # Another workspace keeps its name.
    assert await _name_of(other.workspace_id) == "Desk"


async def test_the_rename_is_in_activity_with_the_old_name(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    await _rename(client, NEW_NAME)
    await _rename(client, NEW_NAME)  # the same name again: no second event

    with db.system():
        rows = await db.fetch(
            "SELECT actor_user_id, subject, data->>'old' AS old FROM events"
            " WHERE workspace_id = $1 AND kind = 'workspace_renamed'",
            owner.workspace_id,
        )
    assert [tuple(r) for r in rows] == [(owner.user_id, NEW_NAME, "Desk")]
    activity = (await client.get("/activity")).text
    assert "renamed the workspace to" in activity
    assert NEW_NAME in activity


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("   ", "Give the workspace a name."),
        ("x" * 121, "Keep it to 120 characters (this one has 121)."),
    ],
)
async def test_an_empty_or_too_long_name_is_refused_with_what_was_typed(
    client, people, typed, message
):
    owner = await people.member("owner")
    await sign_in(client, owner.email)

    response = await _rename(client, typed)

    assert response.status_code == 400
    assert _field_error(response.text) == message
    assert f'name="name" type="text" value="{typed}"' in response.text  # kept to mend
    assert await _name_of(owner.workspace_id) == "Desk"


@pytest.mark.parametrize("role", [Role.ADMIN, Role.EDITOR, Role.VIEWER])
async def test_only_owners_may_rename(client, people, role):
    owner = await people.member("owner")
    member = await people.member(role, owner.workspace_id)
    await sign_in(client, member.email)

    response = await _rename(client, NEW_NAME)

    assert response.status_code == 403
    assert "Your role in this workspace does not allow this." in response.text
    assert await _name_of(owner.workspace_id) == "Desk"
    # The service refuses them as well, whoever calls it.
    with pytest.raises(AccountError) as refused:
        await accounts.rename_workspace(owner.workspace_id, NEW_NAME, actor_user_id=member.user_id)
    assert refused.value.status == 403
    assert await _name_of(owner.workspace_id) == "Desk"


async def test_an_owner_of_one_workspace_cannot_rename_another(people):
    owner = await people.member("owner")
    other = await people.member("owner")
    with pytest.raises(AccountError) as refused:
        await accounts.rename_workspace(other.workspace_id, NEW_NAME, actor_user_id=owner.user_id)
    assert refused.value.status == 404
    assert await _name_of(other.workspace_id) == "Desk"
