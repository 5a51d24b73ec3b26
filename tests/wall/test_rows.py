"""A whole wall re-renders only the posts that changed (app.wall.rows)."""

from __future__ import annotations

import pytest

from app.accounts.roles import Role
from app.core import db
from app.live.views import Audience
from app.wall import rows
from app.wall.live import WALL, load_wall, wall_context
from app.web.templating import environment, render_block
from tests.wall.helpers import add_item, keyword_column


@pytest.fixture(autouse=True)
def _templates(web_app):  # type: ignore[no-untyped-def]
    """The app sets up the templates the views render."""
    rows.clear()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every post Jinja renders (the macro behind the cache)."""
    rendered: list[str] = []
    template = environment().get_template(rows.ROW)
    real = template.make_module

    def make_module(*args, **kwargs):  # type: ignore[no-untyped-def]
        module = real(*args, **kwargs)
        row = module.row

        def counted(c, item):  # type: ignore[no-untyped-def]
            rendered.append(f"{c.column.id}-{item.id}")
            return row(c, item)

        module.row = counted
        return module

    monkeypatch.setattr(template, "make_module", make_module)
    return rendered


async def _state(ws: int, audience: Audience) -> str:
    return render_block(WALL, "columns", None, **wall_context(await load_wall(ws), audience))


async def test_a_whole_wall_renders_only_the_posts_that_changed(services, people, monkeypatch):
    editor = await people.member("editor")
    ws = editor.workspace_id
    floods = await keyword_column(ws, "Floods")
    fires = await keyword_column(ws, "Fires", "#fires")
    items = [await add_item(ws, floods, n) for n in range(3)]
    await add_item(ws, fires, 10, html="<p>Smoke over the hills</p>")
    rendered = _counting(monkeypatch)
    berlin = Audience.of(Role.EDITOR, "en", "Europe/Berlin")

    first = await _state(ws, berlin)
    assert len(rendered) == 4
    assert await _state(ws, berlin) == first  # the same bytes ...
    assert len(rendered) == 4  # ... without rendering a post again

    # A re-poll updates a post's counts (and when it was fetched): only that one again.
    await db.fetch(
        "UPDATE feed_items SET metrics = '{\"likes\": 99}', fetched_at = now() WHERE id = $1",
        items[0],
    )
    again = await _state(ws, berlin)
    assert rendered[4:] == [f"{floods}-{items[0]}"]
    assert "♥ 99" in again

    # Another time zone or language is another rendering.
    tokyo = await _state(ws, Audience.of(Role.EDITOR, "en", "Asia/Tokyo"))
    assert len(rendered) == 9
    assert tokyo != again
