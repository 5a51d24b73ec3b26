"""A member of workspace A sees nothing of workspace B: 404, never 403."""

import re

from app.accounts import services
from app.accounts.roles import Role
from app.core import db
from app.topics import services as topics
from app.topics.types import TopicForm
from tests.factories import post_form, sign_in


async def _two_workspaces(people):
    a = await people.member("owner")
    b = await people.member("owner")
    assert a.workspace_id != b.workspace_id
    return a, b


async def test_another_workspaces_api_token_cannot_be_revoked(client, people):
    a, b = await _two_workspaces(people)
    await services.issue_api_token(b.workspace_id, b.user_id, "b's script")
    token_id = await db.fetchval(
        "SELECT id FROM api_tokens WHERE workspace_id = $1", b.workspace_id
    )
    await sign_in(client, a.email)
    response = await post_form(client, f"/settings/tokens/{token_id}/revoke")
    assert response.status_code == 404
    assert await db.fetchval("SELECT revoked_at FROM api_tokens WHERE id = $1", token_id) is None


async def test_another_workspaces_invitation_cannot_be_revoked(client, people):
    a, b = await _two_workspaces(people)
    await services.invite(b.workspace_id, Role.EDITOR, email="", actor_user_id=b.user_id)
    invitation_id = await db.fetchval("SELECT id FROM invitations")
    await sign_in(client, a.email)
    response = await post_form(client, f"/settings/members/invitations/{invitation_id}/revoke")
    assert response.status_code == 404
    assert await db.fetchval("SELECT count(*) FROM invitations") == 1


async def test_another_workspaces_member_cannot_be_changed_or_removed(client, people):
    a, b = await _two_workspaces(people)
    await sign_in(client, a.email)
    role = await post_form(client, f"/settings/members/{b.user_id}/role", {"role": "viewer"})
    assert role.status_code == 404
    removed = await post_form(client, f"/settings/members/{b.user_id}/remove")
    assert removed.status_code == 404
    assert (
        await db.fetchval(
            "SELECT role FROM memberships WHERE user_id = $1 AND workspace_id = $2",
            b.user_id,
            b.workspace_id,
        )
        == "owner"
    )


async def test_another_workspaces_event_is_not_found_through_the_api(client, people):
    a, b = await _two_workspaces(people)
    event_of_b = await db.fetchval("SELECT id FROM events WHERE workspace_id = $1", b.workspace_id)
    token = await services.issue_api_token(a.workspace_id, a.user_id, "a's script")
    headers = {"Authorization": f"Bearer {token}"}
    assert (await client.get(f"/api/v1/events/{event_of_b}", headers=headers)).status_code == 404
    listed = (await client.get("/api/v1/events", headers=headers)).json()
    assert event_of_b not in {e["id"] for e in listed["items"]}
    own = await db.fetchval("SELECT id FROM events WHERE workspace_id = $1", a.workspace_id)
    assert (await client.get(f"/api/v1/events/{own}", headers=headers)).status_code == 200


async def test_switching_to_a_workspace_one_is_not_a_member_of_is_refused(client, people):
    a, b = await _two_workspaces(people)
    await sign_in(client, a.email)
    response = await post_form(client, "/workspaces/switch", {"workspace_id": str(b.workspace_id)})
    assert response.status_code == 404
    page = await client.get("/activity")
    assert "Desk" in page.text  # still in A


async def test_switching_between_own_workspaces_changes_what_pages_show(client, people):
    a = await people.member("owner")
    second = await services.create_workspace("Second desk", a.user_id)
    await sign_in(client, a.email)
    response = await post_form(
        client, "/workspaces/switch", {"workspace_id": str(second), "next": "/activity"}
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/activity"
    page = await client.get("/activity")
    assert "selected>Second desk</option>" in page.text
    assert "created the workspace" in page.text


async def _switch_from(client, path: str, workspace_id: int):  # type: ignore[no-untyped-def]
    """Choose another workspace in the switcher of the page at `path`, as the browser does."""
    page = await client.get(path)
    assert page.status_code == 200
    next_path = re.search(r'name="next" value="([^"]*)"', page.text)
    assert next_path is not None
    response = await post_form(
        client, "/workspaces/switch", {"workspace_id": str(workspace_id), "next": next_path[1]}
    )
    assert response.status_code == 303
    return await client.get(response.headers["location"])


async def test_switching_from_a_page_of_the_old_workspace_lands_on_its_section_in_the_new(
    client, people
):
    """An article, a topic or Members of workspace A is not in B: the switch opens the
    section's first page there, not a 404 or a 403."""
    admin = await people.member("admin")
    other = await people.member("owner")
    await services.add_member(other.workspace_id, admin.user_id, Role.VIEWER, actor_user_id=None)
    topic_id = await topics.create_topic(
        admin.workspace_id, TopicForm("Floods"), actor_user_id=None
    )
    await sign_in(client, admin.email)
    for path, lands_on in [
        (f"/topics/{topic_id}", "<h1>Library</h1>"),
        ("/settings/members", "<h1>Settings</h1>"),
    ]:
        landed = await _switch_from(client, path, other.workspace_id)
        assert landed.status_code == 200, (path, landed.text[:300])
        assert lands_on in landed.text
        await _switch_from(client, "/wall", admin.workspace_id)


async def test_switching_keeps_the_page_when_it_is_a_sections_first_page(client, people):
    a = await people.member("owner")
    second = await services.create_workspace("Second desk", a.user_id)
    await sign_in(client, a.email)
    landed = await _switch_from(client, "/articles/import", second)
    assert str(landed.url).endswith("/articles/import")
