"""Render once, fan out: the library's shared view, its deltas, and access re-checks."""

from __future__ import annotations

import asyncio
import time

from app.accounts import services as accounts
from app.accounts.roles import Role
from app.articles.controllers import _list_context
from app.articles.live import LibraryView
from app.articles.services import delete_article, process_scraped_article
from app.articles.types import LibraryFilter
from app.core import db
from app.live import views
from app.live.fanout import fanout
from app.live.streams import live
from tests.articles.helpers import article_event
from tests.live.helpers import (
    display_name,
    ended,
    next_event,
    own_name,
    stream_request,
    without_own_name,
)


async def _library_stream(user_id: int, workspace_id: int, f: LibraryFilter | None = None):
    request = await stream_request(user_id, "/articles/stream")
    factory = lambda viewer: LibraryView(viewer, workspace_id, f or LibraryFilter(), _list_context)  # noqa: E731
    return request, live(request, factory).iterator


async def _save(workspace_id: int, title: str) -> int:
    outcome = await process_scraped_article(workspace_id, article_event(title=title))
    assert outcome.article_id is not None
    return outcome.article_id


async def test_clients_of_one_view_share_one_render_and_get_the_same_bytes(
    services, people, monkeypatch
):
    editor = await people.member("editor")
    other = await people.member("editor", editor.workspace_id)
    await _save(editor.workspace_id, "First story")
    renders = []
    real = LibraryView.render_row
    monkeypatch.setattr(
        LibraryView, "render_row", lambda self, m, r: renders.append(r) or real(self, m, r)
    )
    _, one = await _library_stream(editor.user_id, editor.workspace_id)
    _, two = await _library_stream(other.user_id, editor.workspace_id)
    opened_one, opened_two = await next_event(one), await next_event(two)
    # The same state; the top bar sent with it names each their own person.
    assert own_name(opened_one) == await display_name(editor.user_id)
    assert own_name(opened_two) == await display_name(other.user_id)
    assert without_own_name(opened_one) == without_own_name(opened_two)
    assert len(fanout.groups) == 1  # one view, one group

    article_id = await _save(editor.workspace_id, "Second story")
    patch_one, patch_two = await next_event(one), await next_event(two)
    assert patch_one == patch_two
    assert f'id="article-{article_id}"' in patch_one
    assert "mode prepend" in patch_one  # the new row, not the whole region
    assert 'id="library-list"' not in patch_one
    assert "Second story" in patch_one
    assert "First story" not in patch_one
    assert renders.count(f"article-{article_id}") == 1  # rendered once for both
    await one.aclose()
    await two.aclose()
    assert fanout.groups == {}


async def test_a_trashed_article_is_removed_by_id(services, people):
    editor = await people.member("editor")
    first = await _save(editor.workspace_id, "Stays")
    gone = await _save(editor.workspace_id, "Goes")
    _, stream = await _library_stream(editor.user_id, editor.workspace_id)
    await next_event(stream)
    await delete_article(editor.workspace_id, gone, actor_user_id=editor.user_id)
    patch = await next_event(stream)
    assert "mode remove" in patch
    assert f"#article-{gone}" in patch
    assert f"article-{first}" not in patch
    await stream.aclose()


def test_a_delta_inserts_rows_beside_their_neighbours_and_gives_up_on_moves():
    class Rows(views.LiveView):
        key = "rows"

        def keyed(self, model):
            return views.Keyed(list_id="list", rows={r: model[r] for r in model})

        def render_row(self, model, row_id):
            return f'<li id="{row_id}">{model[row_id]}</li>'

        async def load(self, changed):
            raise NotImplementedError

        def render_state(self, model):
            raise NotImplementedError

    view = Rows()
    old = view.keyed({"a": 1, "c": 1})
    events = views.delta(view, old, {"a": 1, "b": 1, "c": 2})
    assert events is not None
    text = "".join(events)
    assert 'mode after\ndata: selector #a\ndata: elements <li id="b">1</li>' in text
    assert '<li id="c">2</li>' in text  # changed: morphed by id
    assert views.delta(view, old, {"c": 1, "a": 1}) is None  # a move: the whole region
    assert views.delta(view, old, {f"n{i}": 1 for i in range(30)}) is None  # too much


async def test_a_removed_members_open_stream_is_cut_within_a_second(services, people):
    editor = await people.member("editor")
    owner = await db.fetchval(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
        editor.workspace_id,
    )
    _, stream = await _library_stream(editor.user_id, editor.workspace_id)
    _, owners = await _library_stream(owner, editor.workspace_id)
    await next_event(stream)
    await next_event(owners)

    started = time.monotonic()
    await accounts.remove_member(editor.workspace_id, editor.user_id, actor_user_id=owner)
    last = await ended(stream, timeout=1.0)  # the stream ends, not just goes quiet
    assert time.monotonic() - started < 1.0
    assert "no longer have access" in "".join(last)

    article_id = await _save(editor.workspace_id, "After the removal")
    assert f"article-{article_id}" in await next_event(owners)  # the others go on
    await owners.aclose()


async def test_a_demoted_editors_open_library_loses_its_delete_buttons_live(services, people):
    editor = await people.member("editor")
    await _save(editor.workspace_id, "Story")
    owner = await db.fetchval(
        "SELECT user_id FROM memberships WHERE workspace_id = $1 AND role = 'owner'",
        editor.workspace_id,
    )
    _, stream = await _library_stream(editor.user_id, editor.workspace_id)
    assert ">Delete</button>" in await next_event(stream)

    await accounts.change_role(
        editor.workspace_id, editor.user_id, Role.VIEWER, actor_user_id=owner
    )
    state = await next_event(stream, timeout=1.0)
    assert 'id="library-list"' in state
    assert "Story" in state
    assert "Delete</button>" not in state
    await stream.aclose()


async def test_signing_out_cuts_the_sessions_open_streams(services, people):
    viewer = await people.member("viewer")
    request, stream = await _library_stream(viewer.user_id, viewer.workspace_id)
    await next_event(stream)
    await accounts.end_session(request.scope["session_token"])  # type: ignore[typeddict-item]
    last = await ended(stream, timeout=1.0)
    assert "Your session has ended" in "".join(last)


async def test_a_stream_rechecks_the_role_before_each_patch_even_without_a_notice(services, people):
    """A lost access notice (Redis was away) must not leave a demoted editor their buttons."""
    editor = await people.member("editor")
    _, stream = await _library_stream(editor.user_id, editor.workspace_id)
    await next_event(stream)
    await db.fetch(  # demoted behind the services' back: no notice at all
        "UPDATE memberships SET role = 'viewer' WHERE user_id = $1", editor.user_id
    )
    await _save(editor.workspace_id, "Next story")
    patch = await next_event(stream)
    assert "Next story" in patch
    assert 'id="library-list"' in patch
    assert "Delete</button>" not in patch
    await asyncio.sleep(0)
    await stream.aclose()


def test_rows_pushed_off_the_first_page_stay_and_real_removals_go():
    class Rows(views.LiveView):
        key = "rows"

        def keyed(self, model):
            return views.Keyed(list_id="list", rows=dict.fromkeys(model, 1))

        def render_row(self, model, row_id):
            return f'<li id="{row_id}"></li>'

        async def load(self, changed):
            raise NotImplementedError

        def render_state(self, model):
            raise NotImplementedError

    view = Rows()
    old = view.keyed(["a", "b", "c", "d"])
    pushed = "".join(views.delta(view, old, ["x", "a", "b", "c"]) or [])
    assert "mode prepend" in pushed
    assert "mode remove" not in pushed  # d is still in the list, below: it stays
    deleted = "".join(views.delta(view, old, ["a", "b", "c", "e"]) or [])
    assert "selector #d" in deleted  # d is gone: e took its place
    shrunk = "".join(views.delta(view, old, ["a", "b", "c"]) or [])
    assert "selector #d" in shrunk


async def test_a_view_reopened_right_after_its_last_client_left_still_gets_patches(
    services, people
):
    # A page reload: the only client leaves, and a new one opens the same view at once.
    editor = await people.member("editor")
    _, first = await _library_stream(editor.user_id, editor.workspace_id)
    await next_event(first)
    await first.aclose()
    _, again = await _library_stream(editor.user_id, editor.workspace_id)
    await next_event(again)

    article_id = await _save(editor.workspace_id, "After the reload")
    assert f'id="article-{article_id}"' in await next_event(again)
    await again.aclose()
    assert fanout.groups == {}
