"""A person deletes their own account: password confirmed, never a workspace's only owner;
they leave everything, their work stays with the workspaces."""

from __future__ import annotations

import asyncio

from app.accounts import services
from app.accounts.roles import Role
from app.core import db
from app.imports import services as imports
from app.streams import services as streams
from tests.accounts.locks import other_connection, until_waiting_for_a_lock
from tests.factories import PASSWORD, post_form, sign_in


def _error_of(html: str) -> str:
    return html.split('class="field-error"', 1)[-1].split(">", 1)[-1].split("<", 1)[0]


async def _delete(client, password: str = PASSWORD):  # type: ignore[no-untyped-def]
    return await post_form(client, "/settings/account/delete", {"delete_password": password})


async def _exists(user_id: int) -> bool:
    with db.system():
        return bool(await db.fetchval("SELECT count(*) FROM users WHERE id = $1", user_id))


async def test_a_wrong_password_deletes_nothing(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)

    response = await _delete(client, "not my password")

    assert response.status_code == 400
    assert _error_of(response.text) == "Your password is not right."
    assert await _exists(person.user_id)
    assert (await client.get("/settings")).status_code == 200  # still signed in


async def test_the_only_owner_is_told_what_to_do_first(client, people):
    owner = await people.member("owner")
    await people.member("admin", owner.workspace_id)  # another member, not an owner
    await sign_in(client, owner.email)

    refused = await _delete(client)

    assert refused.status_code == 400
    assert (
        "You are the only owner of Desk. Make another member owner there (Settings, Members),"
        " then delete your account."
    ) in refused.text
    assert await _exists(owner.user_id)

    other = await people.member("editor", owner.workspace_id)
    await services.change_role(
        owner.workspace_id, other.user_id, Role.OWNER, actor_user_id=owner.user_id
    )
    done = await _delete(client)
    assert (done.status_code, done.headers["location"]) == (303, "/login?deleted=1")
    assert not await _exists(owner.user_id)


async def test_a_deleted_account_is_gone_everywhere_and_its_work_stays(client, new_client, people):
    person = await people.member("editor")
    other_workspace, _owner = await people.workspace("Second desk")
    await services.add_member(other_workspace, person.user_id, Role.ADMIN, actor_user_id=None)
    await services.invite(other_workspace, "viewer", email="", actor_user_id=person.user_id)
    token = await services.issue_api_token(person.workspace_id, person.user_id, "script")
    column_id = await streams.create_column(
        person.workspace_id,
        {
            "type": "keyword",
            "title": "Floods",
            "spec": {"query": "flood", "platforms": ["bluesky"]},
        },
        actor_user_id=person.user_id,
    )
    job_id = await imports.create_job(
        person.workspace_id, ["https://example.org/a"], actor_user_id=person.user_id
    )
    elsewhere = new_client()  # a second browser, signed in too
    await sign_in(elsewhere, person.email)
    await sign_in(client, person.email)

    response = await _delete(client)

    assert (response.status_code, response.headers["location"]) == (303, "/login?deleted=1")
    assert "Your account is deleted." in (await client.get("/login?deleted=1")).text
    assert not await _exists(person.user_id)
    with db.system():
        left = {
            table: await db.fetchval(
                f"SELECT count(*) FROM {table} WHERE {column} = $1", person.user_id
            )
            for table, column in [
                ("sessions", "user_id"),
                ("api_tokens", "user_id"),
                ("memberships", "user_id"),
                ("invitations", "created_by"),
            ]
        }
        assert left == dict.fromkeys(left, 0)
        kept = await db.fetchrow(
            "SELECT (SELECT created_by FROM stream_columns WHERE id = $1) AS column_by,"
            " (SELECT count(*) FROM stream_columns WHERE id = $1) AS columns,"
            " (SELECT count(*) FROM import_jobs WHERE id = $2) AS jobs",
            column_id,
            job_id,
        )
    assert (kept["columns"], kept["jobs"], kept["column_by"]) == (1, 1, None)
    assert (await elsewhere.get("/settings", follow_redirects=False)).status_code == 303
    api = await client.get("/api/v1/me", headers={"authorization": f"Bearer {token}"})
    assert api.status_code == 401
    assert (await sign_in(new_client(), person.email)).status_code == 400


async def test_the_workspaces_activity_says_who_deleted_their_account(client, people):
    owner = await people.member("owner")
    user_id, email = await people.user("Robin Gone")
    await services.add_member(owner.workspace_id, user_id, Role.EDITOR, actor_user_id=None)
    await sign_in(client, email)
    assert (await _delete(client)).status_code == 303

    client.cookies.clear()
    await sign_in(client, owner.email)
    activity = await client.get("/activity?kind=people")

    assert "<strong>Robin Gone</strong> deleted their account" in activity.text


async def _account_state(user_id: int) -> dict[str, object]:
    """Everything a deletion changes, as one value to compare before and after."""
    with db.system():
        row = await db.fetchrow(
            """SELECT (SELECT count(*) FROM users WHERE id = $1) AS users,
                 (SELECT array_agg(workspace_id ORDER BY workspace_id) FROM memberships
                   WHERE user_id = $1) AS memberships,
                 (SELECT count(*) FROM sessions WHERE user_id = $1) AS sessions,
                 (SELECT count(*) FROM api_tokens WHERE user_id = $1 AND revoked_at IS NULL)
                   AS live_tokens,
                 (SELECT count(*) FROM import_jobs WHERE created_by = $1) AS jobs,
                 (SELECT count(*) FROM events WHERE kind = 'account_deleted') AS deletions""",
            user_id,
        )
    assert row is not None
    return dict(row)


async def _in_two_workspaces(people):  # type: ignore[no-untyped-def]
    """An editor of one workspace and admin of a second, with a token and an import."""
    person = await people.member("editor")
    other_workspace, _owner = await people.workspace("Second desk")
    await services.add_member(other_workspace, person.user_id, Role.ADMIN, actor_user_id=None)
    await services.issue_api_token(person.workspace_id, person.user_id, "script")
    job_id = await imports.create_job(
        person.workspace_id, ["https://example.org/a"], actor_user_id=person.user_id
    )
    return person, job_id


async def test_a_lock_held_past_the_timeout_deletes_nothing_and_says_so(
    client, people, monkeypatch
):
    """The last step (the user row) is refused its lock: every step before it - leaving both
    workspaces, the tokens, the Activity rows, the import's author - is undone with it."""
    monkeypatch.setattr(services, "ACCOUNT_LOCK_TIMEOUT", "300ms")
    person, _job_id = await _in_two_workspaces(people)
    await sign_in(client, person.email)
    before = await _account_state(person.user_id)
    assert before["memberships"] == [person.workspace_id, before["memberships"][1]]

    async with other_connection() as other, other.transaction():
        # Another session holds the user row (as anything naming the person in a write does).
        await other.execute("SELECT FROM users WHERE id = $1 FOR KEY SHARE", person.user_id)
        response = await _delete(client)

    assert response.status_code == 409
    assert (
        "Your account could not be deleted just now: other work in your workspaces held on to"
        " it. Nothing was changed. Try again in a minute."
    ) in response.text
    assert await _account_state(person.user_id) == before
    assert (await client.get("/settings")).status_code == 200  # still signed in

    done = await _delete(client)  # the lock is gone: it works
    assert (done.status_code, done.headers["location"]) == (303, "/login?deleted=1")
    assert not await _exists(person.user_id)


async def test_a_worker_recording_the_persons_import_finishes_before_the_deletion(client, people):
    """In the workers' lock order: a worker holding the import job's row, about to record
    an event naming its author, is waited for - no deadlock, no failed worker write."""
    person, job_id = await _in_two_workspaces(people)
    await sign_in(client, person.email)

    async with other_connection() as worker:
        transaction = worker.transaction()
        await transaction.start()
        await worker.execute("SELECT FROM import_jobs WHERE id = $1 FOR UPDATE", job_id)
        deleting = asyncio.create_task(_delete(client))
        await until_waiting_for_a_lock()
        # The worker's event names the job's author: a KEY SHARE on the user row.
        await worker.execute(
            "INSERT INTO events (workspace_id, kind, actor_user_id) VALUES ($1, $2, $3)",
            person.workspace_id,
            "article_import_finished",
            person.user_id,
        )
        await transaction.commit()
        response = await asyncio.wait_for(deleting, 10)

    assert (response.status_code, response.headers["location"]) == (303, "/login?deleted=1")
    assert not await _exists(person.user_id)
    with db.system():
        actors = await db.fetch(
            "SELECT actor_user_id FROM events WHERE kind = 'article_import_finished'"
        )
    assert [r["actor_user_id"] for r in actors] == [None]  # kept, its author unknown
