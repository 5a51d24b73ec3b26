"""A person changes their display name in Settings: the top bar of their other open pages
shows the new one without reloading, in whichever workspace each page is; nobody else's
pages are told."""

from __future__ import annotations

import asyncio
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

NEW_NAME = "Ada Lovelace"


def _who(name: str) -> str:
    return f'<span id="top-bar-who" class="who">{name}</span>'


async def _save_profile(client, display_name: str, time_zone: str = "UTC"):  # type: ignore[no-untyped-def]
    return await post_form(
        client,
        "/settings/profile",
        {"display_name": display_name, "locale": "en", "time_zone": time_zone},
    )


async def _name_of(user_id: int) -> str:
    with db.system():
        return str(await db.fetchval("SELECT display_name FROM users WHERE id = $1", user_id))


async def test_a_new_display_name_shows_in_the_persons_open_pages_without_reloading(
    web_app, client, new_client, people
):
    """The name is in the top bar of every page, outside the live regions: the person's open
    streams send it again, in each workspace they have a page in."""
    editor = await people.member("editor")
    other = await people.member("owner")
    await accounts.add_member(other.workspace_id, editor.user_id, Role.VIEWER, actor_user_id=None)
    colleague = await people.member("editor", editor.workspace_id)
    old_name = await _name_of(editor.user_id)
    await sign_in(client, editor.email)  # the tab the name is changed in
    elsewhere = await signed_in_browser(
        new_client, editor.email
    )  # another browser, other workspace
    await post_form(elsewhere, "/workspaces/switch", {"workspace_id": str(other.workspace_id)})
    colleague_browser = await signed_in_browser(new_client, colleague.email)

    async with (
        LiveStream(web_app, client, "/articles/stream") as library,
        LiveStream(web_app, client, "/activity/stream") as activity,
        LiveStream(web_app, elsewhere, "/wall/stream") as their_wall,
        LiveStream(web_app, colleague_browser, "/articles/stream") as colleagues,
    ):
        # Each stream opens with the name as it is (a tab that slept through the change).
        for stream in (library, activity, their_wall):
            await stream.until(_who(old_name))
        await colleagues.until('id="top-bar-who"')
        before = len(colleagues.received)

        response = await _save_profile(client, f"  {NEW_NAME} ")

        assert response.status_code == 303
        for stream in (library, activity, their_wall):
            told = await stream.until(_who(NEW_NAME))
            # In one patch with the workspace part, as it is.
            event = told.split(_who(NEW_NAME))[0].rsplit("event: ", 1)[-1]
            assert 'id="workspace-bar"' in event, event
            assert not stream.ended  # live, not cut
        # A colleague's pages show their own name and are told nothing.
        await asyncio.sleep(0.3)
        assert "".join(colleagues.received[before:]) == ""
        assert NEW_NAME not in "".join(colleagues.received)


async def test_saving_the_profile_with_the_same_name_tells_no_open_page(web_app, client, people):
    editor = await people.member("editor")
    old_name = await _name_of(editor.user_id)
    await sign_in(client, editor.email)
    async with LiveStream(web_app, client, "/articles/stream") as library:
        await library.until('id="top-bar-who"')
        opened = len(library.received)

        await _save_profile(client, f" {old_name} ", time_zone="Europe/Berlin")  # the name kept
        await _save_profile(client, "   ")  # refused
        await _save_profile(client, NEW_NAME)  # then a new name: the first thing it is told

        await library.until(_who(NEW_NAME))
        told = "".join(library.received[opened:])
        assert told.count('id="top-bar-who"') == 1, told


async def test_the_person_is_told_once_after_the_commit(services, people):
    """One notice on the person's own channel, sent once the new name committed: a page told
    earlier would read the old one. Nothing for the same name or a refused one."""
    editor = await people.member("editor")
    colleague = await people.member("editor", editor.workspace_id)
    old_name = await _name_of(editor.user_id)
    pubsub = core_redis.client().pubsub()
    channels = {user_channel(p.user_id): p.user_id for p in (editor, colleague)}
    await pubsub.subscribe(*channels)
    names_when_told: list[tuple[int, str]] = []
    read = partial(_name_of, editor.user_id)  # the name a page reads as it is told

    try:
        # the subscribe confirmations
        names_when_told += await told_within(pubsub, channels, 0.3, read)
        await accounts.update_profile(editor.user_id, old_name, "de", "Europe/Berlin")
        with pytest.raises(AccountError):
            await accounts.update_profile(editor.user_id, "  ", "en", "UTC")
        await db.settle()
        names_when_told += await told_within(pubsub, channels, 0.3, read)
        assert names_when_told == []

        await accounts.update_profile(editor.user_id, NEW_NAME, "en", "UTC")
        names_when_told += await told_within(pubsub, channels, 1.0, read)
    finally:
        await pubsub.aclose()
    assert names_when_told == [(editor.user_id, NEW_NAME)]
