"""Reset links: the command line, the reset page, and links admins issue from Members."""

from __future__ import annotations

import asyncio
import re

from app.accounts import recovery, services
from app.accounts.middleware import SESSION_COOKIE
from app.accounts.roles import Role
from app.core import db
from app.core import redis as core_redis
from app.live.notices import user_channel
from tests.cli import run_cli
from tests.factories import post_form, sign_in
from tests.workers.processes import free_port

NEW_PASSWORD = "a brand new password"


def _path_of(link: str) -> str:
    match = re.search(r"http://testserver\.local(/reset/[A-Za-z0-9_-]{43})\b", link)
    assert match, link
    return match.group(1)


async def _reset(client, path: str, password: str = NEW_PASSWORD):  # type: ignore[no-untyped-def]
    page = await client.get(path)
    assert page.status_code == 200, page.text
    return await post_form(client, path, {"password": password})


async def test_reset_password_prints_a_one_time_link_that_sets_a_new_password(
    client, new_client, people
):
    person = await people.member("editor")
    done = await asyncio.to_thread(run_cli, "reset-password", "--email", person.email.upper())
    assert done.returncode == 0, done.stderr
    path = _path_of(done.stdout)
    token = path.rsplit("/", 1)[1]
    stored = await db.fetchval("SELECT token_hash FROM password_resets")
    assert stored != token  # only its hash is kept
    assert len(stored) == 64

    response = await _reset(client, path)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?reset=done"
    assert (await sign_in(new_client(), person.email)).status_code == 400  # the old one
    assert (await sign_in(new_client(), person.email, NEW_PASSWORD)).status_code == 303

    again = await new_client().get(path)  # single use
    assert again.status_code == 404
    assert "expired or was used already" in again.text


async def test_reset_password_can_set_and_print_a_new_password(client, people):
    person = await people.member("editor")
    await sign_in(client, person.email)
    done = await asyncio.to_thread(
        run_cli, "reset-password", "--email", person.email, "--new-password"
    )
    assert done.returncode == 0, done.stderr
    password = re.search(r"new password for \S+: (\S+)", done.stdout)
    assert password, done.stdout
    assert await db.fetchval("SELECT count(*) FROM sessions") == 0  # signed out everywhere
    assert (await sign_in(client, person.email)).status_code == 400
    assert (await sign_in(client, person.email, password.group(1))).status_code == 303


async def test_reset_password_works_while_redis_is_down(client, people):
    person = await people.member("owner")
    await sign_in(client, person.email)
    done = await asyncio.to_thread(
        run_cli,
        "reset-password",
        "--email",
        person.email,
        "--new-password",
        redis_url=f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    password = re.search(r"new password for \S+: (\S+)", done.stdout)
    assert password, done.stdout
    assert await db.fetchval("SELECT count(*) FROM sessions") == 0
    assert (await sign_in(client, person.email, password.group(1))).status_code == 303


async def test_reset_password_for_an_unknown_email_says_so_in_one_line(services):
    done = await asyncio.to_thread(run_cli, "reset-password", "--email", "nobody@example.org")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "newsdesk: no user with the email nobody@example.org"
    ]  # nothing else: no traceback, no database library's "Running Postgres version"
    assert done.stdout == ""


async def test_arun_cli_prints_only_its_own_lines(people):
    """Piccolo's engine logs "Running Postgres version ..." when it starts: not our output."""
    person = await people.member("editor")
    done = await asyncio.to_thread(run_cli, "reset-password", "--email", person.email)
    assert done.returncode == 0, done.stderr
    said, link = done.stdout.strip().splitlines()
    assert said.startswith(f"newsdesk: reset link for {person.email} ")
    _path_of(link)
    assert "Running Postgres" not in done.stdout + done.stderr
    assert done.stderr == ""


async def _link_for(user_id: int) -> str:
    token = await recovery.issue_reset(user_id, valid=recovery.MAILED_LINK_VALID)
    return f"/reset/{token}"


async def test_a_reset_ends_every_session_and_cuts_open_live_pages(client, new_client, people):
    person = await people.member("editor")
    elsewhere = new_client()
    await sign_in(elsewhere, person.email)
    assert (await elsewhere.get("/activity")).status_code == 200
    path = await _link_for(person.user_id)

    pubsub = core_redis.client().pubsub()
    await pubsub.subscribe(user_channel(person.user_id))
    await pubsub.get_message(timeout=1)  # the subscription's confirmation
    try:
        assert (await _reset(client, path)).status_code == 303
        notice = await pubsub.get_message(ignore_subscribe_messages=True, timeout=2)
    finally:
        await pubsub.aclose()
    assert notice is not None, "open live pages are told to re-check their access"

    cut = await elsewhere.get("/activity", follow_redirects=False)
    assert cut.status_code == 303
    assert cut.headers["location"].startswith("/login")
    assert SESSION_COOKIE not in client.cookies


async def test_the_reset_page_keeps_the_sign_up_rules_and_the_link(client, people):
    person = await people.member("viewer")
    path = await _link_for(person.user_id)
    short = await _reset(client, path, "short")
    assert short.status_code == 400
    assert "at least 10 characters" in short.text
    assert (await _reset(client, path)).status_code == 303  # the link still works


async def test_an_expired_link_is_refused(client, people):
    person = await people.member("viewer")
    path = await _link_for(person.user_id)
    await db.fetch("UPDATE password_resets SET expires_at = now() - interval '1 second'")
    page = await client.get(path)
    assert page.status_code == 404
    refused = await post_form(client, path, {"password": NEW_PASSWORD})
    assert refused.status_code == 404
    assert (await sign_in(client, person.email)).status_code == 303  # password unchanged


async def test_the_sign_in_page_links_to_forgot_password_and_confirms_a_reset(client):
    page = await client.get("/login")
    assert 'href="/forgot"' in page.text
    done = await client.get("/login?reset=done")
    assert "Your password is changed. Sign in with it." in done.text


# Members ----------------------------------------------------------------------


async def test_an_admin_issues_a_reset_link_for_a_member_shown_once_with_an_event(
    client, new_client, people
):
    admin = await people.member("admin")
    editor = await people.member("editor", admin.workspace_id)
    await sign_in(client, admin.email)
    members = await client.get("/settings/members")
    assert f'action="/settings/members/{editor.user_id}/reset-link"' in members.text
    assert f'action="/settings/members/{admin.user_id}/reset-link"' not in members.text

    shown = await post_form(client, f"/settings/members/{editor.user_id}/reset-link")
    assert shown.status_code == 200
    link = re.search(r'value="(http://testserver\.local/reset/[^"]+)"', shown.text)
    assert link, shown.text
    assert link.group(1) not in (await client.get("/settings/members")).text  # shown once

    event = await db.fetchrow(
        "SELECT kind, actor_user_id, data FROM events WHERE kind = 'password_reset_issued'"
    )
    assert event["actor_user_id"] == admin.user_id
    activity = await client.get("/activity")
    assert "issued a password reset link for" in activity.text

    browser = new_client()
    assert (await _reset(browser, _path_of(link.group(1)))).status_code == 303
    assert (await sign_in(browser, editor.email, NEW_PASSWORD)).status_code == 303


async def test_an_admin_cannot_take_over_an_owner_or_someone_of_another_workspace(client, people):
    admin = await people.member("admin")
    owner_id = await db.fetchval(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
        admin.workspace_id,
    )
    assert (await sign_in(client, admin.email)).status_code == 303
    owner = await post_form(client, f"/settings/members/{owner_id}/reset-link")
    assert owner.status_code == 403
    assert "Only an owner can reset an owner" in owner.text

    editor = await people.member("editor", admin.workspace_id)
    await people.member("owner")  # a second workspace ...
    other_ws = await db.fetchval("SELECT max(id) FROM workspaces")
    await services.add_member(other_ws, editor.user_id, Role.VIEWER, actor_user_id=None)
    shared = await post_form(client, f"/settings/members/{editor.user_id}/reset-link")
    assert shared.status_code == 403
    assert "belongs to other workspaces too" in shared.text

    stranger = await people.member("editor")
    missing = await post_form(client, f"/settings/members/{stranger.user_id}/reset-link")
    assert missing.status_code == 404
    assert await db.fetchval("SELECT count(*) FROM password_resets") == 0


async def test_an_editor_cannot_issue_reset_links(client, people):
    editor = await people.member("editor")
    viewer = await people.member("viewer", editor.workspace_id)
    await sign_in(client, editor.email)
    response = await post_form(client, f"/settings/members/{viewer.user_id}/reset-link")
    assert response.status_code in (403, 404)
    assert await db.fetchval("SELECT count(*) FROM password_resets") == 0


async def test_housekeeping_forgets_reset_links_a_day_after_they_expired(people):
    from app.accounts.housekeeping import forget_expired

    person = await people.member("viewer")
    await _link_for(person.user_id)
    await _link_for(person.user_id)
    await db.fetch("UPDATE password_resets SET expires_at = now() - interval '2 days' WHERE id = 1")
    assert (await forget_expired())["resets"] == 1
    assert await db.fetchval("SELECT count(*) FROM password_resets") == 1
