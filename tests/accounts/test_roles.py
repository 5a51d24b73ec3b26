"""Each role against the protected pages and API endpoints."""

import pytest

from app.accounts import queries, services
from app.accounts.roles import ROLE_PERMISSIONS, Permission, Role
from tests.factories import post_form, sign_in

# (method, path, permission it needs) for pages that exist today.
PAGES = [
    ("GET", "/wall", Permission.DRAFT_VIEW),
    ("GET", "/import", Permission.DRAFT_VIEW),
    ("GET", "/activity", Permission.DRAFT_VIEW),
    ("GET", "/settings/tokens", Permission.DRAFT_VIEW),
    ("GET", "/settings/members", Permission.MEMBERS_MANAGE),
    ("POST", "/settings/members/invite", Permission.MEMBERS_MANAGE),
    ("GET", "/settings/workspace", Permission.WORKSPACE_DELETE),
]


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(("method", "path", "permission"), PAGES)
async def test_pages_admit_exactly_the_roles_that_hold_the_permission(
    client, people, role, method, path, permission
):
    person = await people.member(role)
    await sign_in(client, person.email)
    if method == "GET":
        response = await client.get(path, follow_redirects=False)
    else:
        response = await post_form(client, path, {"role": "viewer"})
    allowed = permission in ROLE_PERMISSIONS[role]
    if allowed:
        assert response.status_code in (200, 303), response.text[:300]
    else:
        assert response.status_code == 403
        assert "Your role in this workspace does not allow this." in response.text


@pytest.mark.parametrize("role", list(Role))
async def test_api_answers_every_role_with_a_token_and_reports_its_permissions(
    client, people, role
):
    person = await people.member(role)
    token = await services.issue_api_token(person.workspace_id, person.user_id, "script")
    response = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    body = response.json()
    assert body["role"] == role.value
    assert set(body["permissions"]) == {p.value for p in ROLE_PERMISSIONS[role]}


async def test_the_api_refuses_requests_without_a_token(client):
    response = await client.get("/api/v1/me")
    assert response.status_code == 401
    assert "Bearer" in response.json()["detail"]


async def test_the_api_ignores_the_session_cookie(client, people):
    person = await people.member("owner")
    await sign_in(client, person.email)
    assert (await client.get("/api/v1/me")).status_code == 401


async def test_only_owners_make_owners(client, people):
    admin = await people.member("admin")
    other = await people.member("viewer", admin.workspace_id)
    await sign_in(client, admin.email)
    response = await post_form(client, f"/settings/members/{other.user_id}/role", {"role": "owner"})
    assert response.status_code == 403
    assert "Only an owner can make owners." in response.text


async def test_the_last_owner_cannot_step_down(client, people):
    owner = await people.member("owner")
    await sign_in(client, owner.email)
    response = await post_form(
        client, f"/settings/members/{owner.user_id}/role", {"role": "editor"}
    )
    assert response.status_code == 400
    assert "A workspace keeps at least one owner." in response.text


async def test_a_role_change_takes_effect_on_the_next_request(client, people):
    owner = await people.member("owner")
    editor = await people.member("editor", owner.workspace_id)
    await sign_in(client, editor.email)
    assert (await client.get("/settings/members")).status_code == 403
    await services.change_role(
        owner.workspace_id, editor.user_id, Role.ADMIN, actor_user_id=owner.user_id
    )
    assert (await client.get("/settings/members")).status_code == 200


async def test_an_admin_cannot_demote_or_remove_an_owner(client, people):
    """Only owners touch owners: an admin could otherwise take the workspace over."""
    owner = await people.member("owner")
    await people.member("owner", owner.workspace_id)  # a second owner: not the last-owner rule
    admin = await people.member("admin", owner.workspace_id)
    await sign_in(client, admin.email)
    members = (await client.get("/settings/members")).text
    assert f"/settings/members/{owner.user_id}/role" not in members
    assert f"/settings/members/{owner.user_id}/remove" not in members
    assert '<option value="owner"' not in members
    for action, form in (("role", {"role": "viewer"}), ("remove", {})):
        response = await post_form(client, f"/settings/members/{owner.user_id}/{action}", form)
        assert response.status_code == 403
        assert "Only an owner can change or remove an owner." in response.text
    roles = [m.role for m in await queries.members_of(owner.workspace_id)]
    assert roles.count(Role.OWNER) == 2


async def test_an_admin_who_steps_down_lands_on_a_page_they_may_see(client, people):
    owner = await people.member("owner")
    admin = await people.member("admin", owner.workspace_id)
    await sign_in(client, admin.email)
    response = await post_form(
        client, f"/settings/members/{admin.user_id}/role", {"role": "editor"}
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/settings"  # Members would say "not allowed"
    assert (await client.get("/settings")).status_code == 200
