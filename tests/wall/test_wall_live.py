"""The wall's live stream: one shared render per view, a new item is one prepend into its
column, states and saves patch what changed, a reconnect gets the whole wall again."""

from __future__ import annotations

import pytest

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.core import db
from app.live.fanout import fanout
from app.live.streams import live
from app.streams import queries as streams
from app.streams import services as streams_services
from app.wall import services as wall_services
from app.wall.live import CLOSED_EDITOR, WallView
from tests.factories import sign_in
from tests.live.helpers import (
    display_name,
    ended,
    next_event,
    own_name,
    stream_request,
    without_own_name,
)
from tests.wall.helpers import add_item, keyword_column


@pytest.fixture(autouse=True)
def _templates(web_app):  # type: ignore[no-untyped-def]
    """The app sets up the templates the views render."""


async def _wall_stream(user_id: int, workspace_id: int):  # type: ignore[no-untyped-def]
    request = await stream_request(user_id, "/wall/stream")
    return live(request, lambda viewer: WallView(viewer, workspace_id)).iterator


async def test_a_new_item_is_one_prepend_into_its_column_rendered_once(
    services, people, statuses, monkeypatch
):
    editor = await people.member("editor")
    other = await people.member("editor", editor.workspace_id)
    ws = editor.workspace_id
    floods = await keyword_column(ws, "Floods")
    fires = await keyword_column(ws, "Fires", "#fires")
    await add_item(ws, floods, 1)
    renders: list[str] = []
    real = WallView.render_row
    monkeypatch.setattr(
        WallView, "render_row", lambda self, m, r: renders.append(r) or real(self, m, r)
    )
    one = await _wall_stream(editor.user_id, ws)
    two = await _wall_stream(other.user_id, ws)
    state, theirs = await next_event(one), await next_event(two)
    # The same state; the top bar sent with it names each their own person.
    assert own_name(state) == await display_name(editor.user_id)
    assert own_name(theirs) == await display_name(other.user_id)
    assert without_own_name(state) == without_own_name(theirs)
    assert 'id="wall-columns"' in state
    assert "Post 1 about" in state
    assert len(fanout.groups) == 1

    item = await add_item(ws, fires, 2, html="<p>Smoke over the hills</p>")
    patch = await next_event(one)
    assert patch == await next_event(two)
    assert f"selector #col-{fires}-items" in patch
    assert "mode prepend" in patch
    assert f'id="i-{fires}-{item}"' in patch
    assert "Smoke over the hills" in patch
    assert 'id="wall-columns"' not in patch
    assert "Post 1 about" not in patch
    assert renders.count(f"i-{fires}-{item}") == 1  # once for both clients

    # A second item lands after the first one's neighbour... at the top of its column again.
    newer = await add_item(ws, floods, 3)
    patch = await next_event(one)
    assert f"selector #col-{floods}-items" in patch
    assert f'id="i-{floods}-{newer}"' in patch
    await one.aclose()
    await two.aclose()


async def test_a_new_item_re_reads_only_its_columns_header(services, people, statuses, monkeypatch):
    editor = await people.member("editor")
    ws = editor.workspace_id
    floods = await keyword_column(ws, "Floods")
    fires = await keyword_column(ws, "Fires", "#fires")
    await add_item(ws, floods, 1)
    stream = await _wall_stream(editor.user_id, ws)
    assert "Post 1 about" in await next_event(stream)
    read: list[object] = []
    every, one = streams.list_columns, streams.column_view
    monkeypatch.setattr(streams, "list_columns", lambda w: read.append("all") or every(w))
    monkeypatch.setattr(streams, "column_view", lambda w, c: read.append(c) or one(w, c))

    item = await add_item(ws, fires, 2, html="<p>Smoke over the hills</p>")
    patch = await next_event(stream)
    assert f'id="i-{fires}-{item}"' in patch
    assert read == [fires]  # not every column's header (issue 11: a notice per post)
    await stream.aclose()


async def test_state_changes_patch_the_header_and_saves_patch_the_item(services, people, statuses):
    editor = await people.member("editor")
    ws = editor.workspace_id
    column = await keyword_column(ws)
    item = await add_item(ws, column, 1)
    stream = await _wall_stream(editor.user_id, ws)
    await next_event(stream)

    async with db.workspace_tx(ws) as tx:
        await tx.execute(
            "UPDATE stream_sources SET state = 'error', last_error = 'gone away'"
            " WHERE id IN (SELECT source_id FROM stream_column_sources WHERE column_id = $1)",
            column,
        )
        from app.live.notices import publish_after_commit
        from app.streams.types import COLUMNS_TOPIC, column_topic

        publish_after_commit(tx, column_topic(column))
        publish_after_commit(tx, COLUMNS_TOPIC)
    patch = await next_event(stream)
    assert f'id="col-{column}-head"' in patch
    assert "gone away" in patch
    assert "Post 1 about" not in patch  # the items stay as they are

    await wall_services.save_item(ws, item, actor_user_id=editor.user_id)
    patch = await next_event(stream)
    assert f'id="i-{column}-{item}"' in patch
    assert "Saving…" in patch
    assert f'id="col-{column}-head"' not in patch
    await stream.aclose()


async def test_a_reconnect_gets_the_whole_current_wall(services, people, statuses):
    editor = await people.member("editor")
    ws = editor.workspace_id
    column = await keyword_column(ws)
    first = await _wall_stream(editor.user_id, ws)
    await next_event(first)
    await add_item(ws, column, 1)
    await next_event(first)
    await first.aclose()
    again = await _wall_stream(editor.user_id, ws)
    state = await next_event(again)
    assert 'id="wall-columns"' in state
    assert "Post 1 about" in state
    await again.aclose()


async def test_a_new_column_re_sends_the_wall(services, people, statuses):
    editor = await people.member("editor")
    ws = editor.workspace_id
    await keyword_column(ws, "Floods")
    stream = await _wall_stream(editor.user_id, ws)
    await next_event(stream)
    added = await keyword_column(ws, "Fires", "#fires")
    patch = await next_event(stream)
    assert 'id="wall-columns"' in patch
    assert f'id="col-{added}"' in patch
    await stream.aclose()


async def test_a_renamed_column_re_sends_the_wall_so_the_phones_chip_is_renamed(
    services, people, statuses
):
    """Its header was patched alone: the phone's chip bar kept the old name until a reload."""
    editor = await people.member("editor")
    ws = editor.workspace_id
    floods = await keyword_column(ws, "Floods")
    stream = await _wall_stream(editor.user_id, ws)
    await next_event(stream)
    await streams_services.update_column(ws, floods, {"title": "Floods and fires"})
    patch = await next_event(stream)
    assert 'id="wall-columns"' in patch
    assert f'data-chip="{floods}" data-preserve-attr="aria-current">Floods and fires</a>' in patch
    await stream.aclose()


async def _owner_of(workspace_id: int) -> int:
    return int(
        await db.fetchval(
            "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
            workspace_id,
        )
    )


async def test_a_demoted_editors_open_wall_loses_the_editor_and_column_tools_at_once(
    services, people, statuses, client
):
    editor = await people.member("editor")
    ws = editor.workspace_id
    column = await keyword_column(ws)
    stream = await _wall_stream(editor.user_id, ws)
    state = await next_event(stream)
    assert 'id="add-column"' in state
    assert f'href="/wall/columns/{column}/edit"' in state
    assert '<dialog id="editor"' not in state  # an editor's open drawer stays open on reconnect

    await accounts.change_role(ws, editor.user_id, Role.VIEWER, actor_user_id=await _owner_of(ws))
    state = await next_event(stream, timeout=1.0)
    assert 'id="wall-tools"' in state
    assert 'id="add-column"' not in state
    assert f'href="/wall/columns/{column}/edit"' not in state
    assert CLOSED_EDITOR in state  # the open drawer closes
    assert '<dialog id="editor" class="editor" hidden' in CLOSED_EDITOR
    await stream.aclose()
    # What the drawer asks as you type is refused too.
    await sign_in(client, editor.email)
    assert (await client.get("/wall/editor/hints?query=x")).status_code == 403


async def test_a_removed_members_open_wall_and_editor_stream_is_cut(services, people, statuses):
    editor = await people.member("editor")
    ws = editor.workspace_id
    await keyword_column(ws)
    stream = await _wall_stream(editor.user_id, ws)
    await next_event(stream)
    await accounts.remove_member(ws, editor.user_id, actor_user_id=await _owner_of(ws))
    last = await ended(stream, timeout=1.0)
    assert "no longer have access" in "".join(last)


def test_a_state_larger_than_the_outbox_limit_still_reaches_an_empty_outbox():
    from app.live.fanout import MAX_OUTBOX_BYTES, Client

    client = Client(session_id=1)
    big = b"x" * (MAX_OUTBOX_BYTES + 1)  # a wall of ten full columns can be this large
    client.send(big)
    assert not client.behind  # before: dropped and re-sent for ever, never delivered
    client.send(b"patch")
    assert client.behind  # behind it, a backlog beyond the limit still falls behind
