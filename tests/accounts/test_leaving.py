"""Settings → Profile lists a person's workspaces: leave one, or start another."""

import asyncio

import pytest

from app.accounts import queries, services
from app.accounts.roles import Role
from app.accounts.types import AccountError
from tests.accounts.locks import other_connection, until_waiting_for_a_lock
from tests.factories import post_form, sign_in


async def test_a_member_leaves_a_workspace_and_its_activity_says_so(client, people):
    home = await people.member("editor")
    other = await people.member("owner")
    await services.add_member(other.workspace_id, home.user_id, Role.VIEWER, actor_user_id=None)
    await sign_in(client, home.email)
    settings = (await client.get("/settings")).text
    assert f'action="/workspaces/{other.workspace_id}/leave"' in settings
    assert 'href="/welcome"' in settings  # an editor somewhere may start another

    left = await post_form(client, f"/workspaces/{other.workspace_id}/leave")
    assert left.status_code == 303
    assert left.headers["location"] == "/settings"  # still working in their own workspace
    assert [w.id for w in await queries.workspaces_of(home.user_id)] == [home.workspace_id]

    await sign_in(client, other.email)
    activity = (await client.get("/activity?kind=people")).text
    assert " left" in activity
    assert "removed a member" not in activity


async def test_leaving_the_workspace_one_works_in_moves_on_to_another(client, people):
    home = await people.member("editor")
    other = await people.member("owner")
    await services.add_member(other.workspace_id, home.user_id, Role.VIEWER, actor_user_id=None)
    await sign_in(client, home.email)
    left = await post_form(client, f"/workspaces/{home.workspace_id}/leave")
    assert left.headers["location"] == "/welcome"
    assert (await client.get("/welcome", follow_redirects=False)).headers["location"] == "/"
    assert (await client.get("/activity")).status_code == 200  # now in the other one


async def test_the_last_owner_cannot_leave(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    response = await post_form(client, f"/workspaces/{owner.workspace_id}/leave")
    assert response.status_code == 400
    assert "You are its only owner: make another member owner first." in response.text
    assert [w.id for w in await queries.workspaces_of(owner.user_id)] == [owner.workspace_id]


async def test_nobody_leaves_a_workspace_for_someone_else(client, people):
    person = await people.member("editor")
    stranger = await people.member("owner")
    await sign_in(client, person.email)
    response = await post_form(client, f"/workspaces/{stranger.workspace_id}/leave")
    assert response.status_code == 404
    assert len(await queries.members_of(stranger.workspace_id)) == 1


async def test_two_owners_leaving_at_once_leave_the_workspace_one_owner(people):
    """The other owner's leaving is under way (its transaction not committed yet): this
    one waits for it, then finds itself the last owner. Counted without locks, each saw
    the other still there and both went."""
    first = await people.member("owner")
    second = await people.member("owner", first.workspace_id)
    async with other_connection() as other, other.transaction():
        await other.execute(
            "DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2",
            first.workspace_id,
            first.user_id,
        )
        leaving = asyncio.create_task(
            services.remove_member(first.workspace_id, second.user_id, actor_user_id=second.user_id)
        )
        await until_waiting_for_a_lock()
    with pytest.raises(AccountError, match="You are its only owner"):
        await asyncio.wait_for(leaving, 10)
    assert [(m.user_id, m.role) for m in await queries.members_of(first.workspace_id)] == [
        (second.user_id, Role.OWNER)
    ]
