"""Test data made through the real services, and a signed-in client helper."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from httpx import AsyncClient

from app.accounts import services
from app.accounts.roles import Role

PASSWORD = "correct horse battery"
_counter = itertools.count(1)


@dataclass(frozen=True)
class Person:
    user_id: int
    email: str
    workspace_id: int
    role: Role


class People:
    async def workspace(self, name: str = "Desk") -> tuple[int, Person]:
        owner = await self.user()
        workspace_id = await services.create_workspace(name, owner[0])
        return workspace_id, Person(owner[0], owner[1], workspace_id, Role.OWNER)

    async def user(self, name: str = "") -> tuple[int, str]:
        n = next(_counter)
        email = f"person{n}@example.org"
        user_id = await services.create_user(email, name or f"Person {n}", PASSWORD)
        return user_id, email

    async def member(self, role: str | Role, workspace_id: int | None = None) -> Person:
        role = Role(role)
        if workspace_id is None:
            workspace_id, owner = await self.workspace()
            if role == Role.OWNER:
                return owner
        user_id, email = await self.user()
        await services.add_member(workspace_id, user_id, role, actor_user_id=None)
        return Person(user_id, email, workspace_id, role)


def csrf_of(client: AsyncClient) -> str:
    return client.cookies.get("nd_csrf") or ""


async def sign_in(client: AsyncClient, email: str, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    await client.get("/login")
    return await client.post(
        "/login",
        data={"email": email, "password": password, "_csrf_token": csrf_of(client)},
        follow_redirects=False,
    )


async def signed_in_browser(new_client, email: str):  # type: ignore[no-untyped-def]
    """Another browser (a client of its own, `new_client` the fixture), signed in as `email`."""
    browser = new_client()
    await sign_in(browser, email)
    return browser


async def post_form(client: AsyncClient, url: str, data: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """POST a form the way the browser does, with the page's CSRF token."""
    if not csrf_of(client):
        await client.get("/login")
    return await client.post(
        url, data={**(data or {}), "_csrf_token": csrf_of(client)}, follow_redirects=False
    )


async def signed_in_speaking(
    client, people, locale: str, time_zone: str = "UTC", role: str = "editor"
):  # type: ignore[no-untyped-def]
    """A member signed in whose profile reads `locale` in `time_zone`."""
    person = await people.member(role)
    await sign_in(client, person.email)
    await post_form(
        client, "/settings/profile",
        {"display_name": "Ada", "locale": locale, "time_zone": time_zone},
    )  # fmt: skip
    return person
