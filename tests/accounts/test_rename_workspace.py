"""An owner renames the workspace in Settings → Workspace or through the API: members see the
new name on their next page and in the pages they have open, Activity says who renamed it from
what, nobody else may, no other workspace moves."""

from __future__ import annotations

import html as html_text
from functools import partial

import pytest

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.accounts.types import AccountError
from app.core import db
from app.core import redis as core_redis
from app.live.notices import user_channel
from tests.factories import post_form, sign_in, signed_in_browser
from tests.live.helpers import told_within
from tests.live_client import LiveStream

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
    assert (
        f'<span id="workspace-bar" class="workspace-name">{NEW_NAME}</span>'
        in (await theirs.get("/wall")).text
    )
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


# Open pages ---------------------------------------------------------------------------


async def test_every_members_open_pages_show_the_new_name_without_reloading(
    web_app, client, new_client, people
):
    """The name is in every member's top bar (one workspace) or switcher (several), outside
    the live regions: their open streams send it again, in whichever workspace they work."""
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    elsewhere = await people.member("viewer", owner.workspace_id)  # works in another one now
    other = await people.member("owner")
    await accounts.add_member(
        other.workspace_id, elsewhere.user_id, Role.EDITOR, actor_user_id=None
    )
    stranger = await people.member("editor", other.workspace_id)  # not in the renamed one
    await sign_in(client, owner.email)
    editor_browser = await signed_in_browser(new_client, editor.email)
    elsewhere_browser = await signed_in_browser(new_client, elsewhere.email)
    await post_form(
        elsewhere_browser, "/workspaces/switch", {"workspace_id": str(other.workspace_id)}
    )
    stranger_browser = await signed_in_browser(new_client, stranger.email)

    async with (
        LiveStream(web_app, editor_browser, "/articles/stream") as library,
        LiveStream(web_app, editor_browser, "/activity/stream") as activity,
        LiveStream(web_app, elsewhere_browser, "/wall/stream") as their_wall,
        LiveStream(web_app, stranger_browser, "/articles/stream") as strangers,
    ):
        # Each stream opens with the bar as it is (a tab that slept through a rename).
        await library.until('<span id="workspace-bar" class="workspace-name">Desk</span>')
        await activity.until('id="workspace-bar"')
        await their_wall.until(f'<option value="{owner.workspace_id}" >Desk</option>')
        await strangers.until('id="workspace-bar"')
        before = len(strangers.received)

        await _rename(client, NEW_NAME)

        for stream in (library, activity):
            await stream.until(f'<span id="workspace-bar" class="workspace-name">{NEW_NAME}</span>')
        # The switcher of a member working in another workspace names it too, and keeps
        # the workspace they work in chosen.
        shown = await their_wall.until(f">{NEW_NAME}</option>")
        assert f'<option value="{other.workspace_id}" selected>Desk</option>' in shown
        assert not library.ended  # live, not cut
        assert not activity.ended
        assert not their_wall.ended
        # Someone who is not a member is told nothing.
        await _rename(client, "Another name")
        await library.until(">Another name</span>")
        assert NEW_NAME not in "".join(strangers.received[before:])
        assert "Another name" not in "".join(strangers.received)


async def test_the_same_name_again_tells_no_open_page(web_app, client, new_client, people):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    await sign_in(client, owner.email)
    editor_browser = await signed_in_browser(new_client, editor.email)
    async with LiveStream(web_app, editor_browser, "/articles/stream") as library:
        await library.until('id="workspace-bar"')
        opened = len(library.received)

        await _rename(client, " Desk ")  # the name it has, spaces aside
        await _rename(client, "x" * 121)  # refused
        await _rename(client, NEW_NAME)  # then a real rename: the first thing it is told

        await library.until(NEW_NAME)
        told = "".join(library.received[opened:])
        assert told.count('id="workspace-bar"') == 1, told


async def test_each_member_is_told_once_after_the_commit_and_a_refusal_tells_nobody(
    services, people
):
    """One notice per member on their own channel, sent once the rename committed: a page
    told earlier would read the old name. Nothing for the same name or a refused one."""
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    stranger = await people.member("editor")
    pubsub = core_redis.client().pubsub()
    channels = {user_channel(p.user_id): p.user_id for p in (owner, editor, stranger)}
    await pubsub.subscribe(*channels)
    names_when_told: list[tuple[int, str]] = []
    read = partial(_name_of, owner.workspace_id)  # the name a page reads as it is told

    try:
        # the subscribe confirmations
        names_when_told += await told_within(pubsub, channels, 0.3, read)
        await accounts.rename_workspace(owner.workspace_id, "Desk", actor_user_id=owner.user_id)
        with pytest.raises(AccountError):
            await accounts.rename_workspace(
                owner.workspace_id, NEW_NAME, actor_user_id=editor.user_id
            )
        with pytest.raises(AccountError):
            await accounts.rename_workspace(owner.workspace_id, "", actor_user_id=owner.user_id)
        await db.settle()
        names_when_told += await told_within(pubsub, channels, 0.3, read)
        assert names_when_told == []

        await accounts.rename_workspace(owner.workspace_id, NEW_NAME, actor_user_id=owner.user_id)
        names_when_told += await told_within(pubsub, channels, 1.0, read)
    finally:
        await pubsub.aclose()
    assert sorted(names_when_told) == sorted(
        [(owner.user_id, NEW_NAME), (editor.user_id, NEW_NAME)]
    )


# The API ------------------------------------------------------------------------------


async def _token(person) -> dict[str, str]:  # type: ignore[no-untyped-def]
    token = await accounts.issue_api_token(person.workspace_id, person.user_id, "cli")
    return {"authorization": f"Bearer {token}"}


async def test_every_member_reads_the_workspace_through_the_api(client, people):
    owner = await people.member("owner")
    viewer = await people.member("viewer", owner.workspace_id)

    response = await client.get("/api/v1/workspace", headers=await _token(viewer))

    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("id", "name", "members")} == {
        "id": owner.workspace_id,
        "name": "Desk",
        "members": 2,
    }
    assert body["created_at"].startswith("20")


async def test_an_owner_renames_the_workspace_through_the_api(client, people):
    owner = await people.member("owner")
    headers = await _token(owner)

    response = await client.patch(
        "/api/v1/workspace", json={"name": f"  {NEW_NAME}  "}, headers=headers
    )

    assert response.status_code == 200
    assert (response.json()["name"], response.json()["renamed"]) == (NEW_NAME, True)
    assert await _name_of(owner.workspace_id) == NEW_NAME
    assert (await client.get("/api/v1/me", headers=headers)).json()["workspace"]["name"] == (
        NEW_NAME
    )
    # The same name again is no error (a retried request must not fail), and changes nothing.
    again = await client.patch("/api/v1/workspace", json={"name": NEW_NAME}, headers=headers)
    assert again.status_code == 200
    assert (again.json()["name"], again.json()["renamed"]) == (NEW_NAME, False)
    with db.system():
        renamed = await db.fetchval(
            "SELECT count(*) FROM events WHERE workspace_id = $1 AND kind = 'workspace_renamed'",
            owner.workspace_id,
        )
    assert renamed == 1


@pytest.mark.parametrize("role", [Role.ADMIN, Role.EDITOR, Role.VIEWER])
async def test_only_owners_may_rename_through_the_api(client, people, role):
    owner = await people.member("owner")
    member = await people.member(role, owner.workspace_id)

    response = await client.patch(
        "/api/v1/workspace", json={"name": NEW_NAME}, headers=await _token(member)
    )

    assert response.status_code == 403
    assert response.json()["detail"] == "Only an owner can rename the workspace."
    assert await _name_of(owner.workspace_id) == "Desk"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "   "}, "Give the workspace a name."),
        ({}, "Give the workspace a name."),
        ({"name": "x" * 121}, "Keep it to 120 characters (this one has 121)."),
        ({"name": 7}, "Some fields are missing or malformed: name"),
        ("Desk", "The request body is not valid JSON."),
    ],
)
async def test_a_bad_name_is_refused_through_the_api_with_what_is_wrong(
    client, people, body, message
):
    owner = await people.member("owner")
    headers = await _token(owner)

    if isinstance(body, str):
        response = await client.patch(
            "/api/v1/workspace",
            content=body,
            headers={**headers, "content-type": "application/json"},
        )
    else:
        response = await client.patch("/api/v1/workspace", json=body, headers=headers)

    assert response.status_code == 400
    assert response.json()["detail"] == message
    assert await _name_of(owner.workspace_id) == "Desk"


async def test_the_api_answers_in_the_tokens_language(client, people):
    owner = await people.member("owner")
    member = await people.member("editor", owner.workspace_id)
    headers = {**await _token(member), "accept-language": "de"}

    response = await client.patch("/api/v1/workspace", json={"name": NEW_NAME}, headers=headers)

    assert response.status_code == 403
    assert response.json()["detail"] == "Nur ein Eigentümer kann den Arbeitsbereich umbenennen."


async def test_the_api_documents_reading_and_renaming_the_workspace(client):
    schema = (await client.get("/api/v1/schema/openapi.json")).json()
    operations = schema["paths"]["/api/v1/workspace"]
    assert {"get", "patch"} <= set(operations)
    body = operations["patch"]["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in body:
        body = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    assert "name" in body["properties"]
    assert "owners only" in operations["patch"]["description"]
