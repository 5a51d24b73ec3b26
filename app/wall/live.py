"""The wall's live view: rendered once per distinct view, fanned out (app.live.views).

Every column's first page is a list of its own (`col-<id>-items`): a stored item
goes out as one prepend into its column, a changed header (state, sources) as
that header, a saved item's state as that item. The whole wall goes out only
on (re)connect, or when the columns themselves change (added, removed, moved,
or a column's list appears or goes). Widths are each member's own: app.wall.widths.

Between notices the view keeps the wall: a notice that names only columns
(a poll's new items) re-reads those columns' headers, pages and saves, not the
whole wall; anything else (the columns, imports) re-reads every header.
"""

from __future__ import annotations

from typing import Any

from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.imports.types import IMPORTS_TOPIC
from app.live.hub import EVERYTHING
from app.live.streams import audience_of
from app.live.views import Keyed, LiveView
from app.streams import queries as streams
from app.streams.types import COLUMNS_TOPIC, ItemPage, ItemView
from app.wall import queries
from app.wall.labels import TEMPLATE_HELPERS
from app.wall.rows import row_renderer
from app.wall.types import PAGE_SIZE, Wall, WallColumn
from app.web.templating import render_block

WALL = "wall/index.html"
COLUMN_PREFIX = "streams.column:"
ALL_COLUMNS = COLUMN_PREFIX + "*"  # app.live.hub: every column's topic


def closed_editor(created: int | None = None) -> str:
    """The drawer closed; after adding a column it names it, for the page to go to. The morph
    keeps the dialog's `open`: static/js/wall.js closes it, so the focus goes back."""
    named = f' data-created="{int(created)}"' if created else ""
    return f'<dialog id="editor" class="editor" hidden data-preserve-attr="open"{named}></dialog>'


CLOSED_EDITOR = closed_editor()


def render_item(context: dict[str, Any], c: WallColumn | None, item: ItemView) -> str:
    """One post (templates/wall/_item.html through app.wall.rows): a column's row."""
    return str(context["item_row"](c, item))


def row_id(column_id: int, item_id: int) -> str:
    return f"i-{column_id}-{item_id}"


def list_id(column_id: int) -> str:
    return f"col-{column_id}-items"


def older_id(column_id: int) -> str:
    """The list of a column's older pages: each reader's own (wall/index.html)."""
    return f"col-{column_id}-older-items"


def head_id(column_id: int) -> str:
    return f"col-{column_id}-head"


async def load_wall(workspace_id: int, pages: dict[int, ItemPage] | None = None) -> Wall:
    """The wall from PostgreSQL; columns whose page is in `pages` are not read again."""
    pages = pages or {}
    views = await streams.list_columns(workspace_id)
    columns = []
    for view in views:
        page = pages.get(view.id)
        if page is None:
            page = await streams.column_items(workspace_id, view.id, None, PAGE_SIZE)
        columns.append(WallColumn(view, page))
    items = {item.id for c in columns for item in c.page.items}
    return Wall(tuple(columns), await queries.saves(workspace_id, items))


async def reload_columns(workspace_id: int, wall: Wall, column_ids: set[int]) -> Wall | None:
    """`wall` with these columns' headers, pages and saves read again.

    None when one of them is new or gone: the wall changed, read it whole.
    """
    known = {c.column.id: c for c in wall.columns}
    fresh: dict[int, WallColumn] = {}
    for column_id in column_ids:
        view = await streams.column_view(workspace_id, column_id)
        if view is None or column_id not in known:
            return None
        page = await streams.column_items(workspace_id, column_id, None, PAGE_SIZE)
        fresh[column_id] = WallColumn(view, page)
    columns = tuple(fresh.get(c.column.id, c) for c in wall.columns)
    kept = {item.id for c in columns if c.column.id not in fresh for item in c.page.items}
    saves = {item: save for item, save in wall.saves.items() if item in kept}
    saves |= await queries.saves(workspace_id, (i.id for c in fresh.values() for i in c.page.items))
    return Wall(columns, saves)


def _only_columns(changed: set[str]) -> set[int] | None:
    """The column ids when every changed topic is one column's; None otherwise."""
    ids = set()
    for topic in changed:
        column = topic[len(COLUMN_PREFIX) :] if topic.startswith(COLUMN_PREFIX) else ""
        if not column.isdigit():
            return None
        ids.add(int(column))
    return ids


def wall_context(wall: Wall, viewer: Any) -> dict[str, Any]:
    """What the wall's regions need (shared: `viewer` is an Audience there)."""
    context = {
        "wall": wall,
        "saves": wall.saves,
        "viewer": viewer,
        "can_manage": viewer.can(Permission.COLUMNS_MANAGE),
        "can_save": viewer.can(Permission.ARTICLES_IMPORT),
        "row_id": row_id,
        "list_id": list_id,
        "older_id": older_id,
        "head_id": head_id,
        "page_size": PAGE_SIZE,
        **TEMPLATE_HELPERS,
    }
    context["item_row"] = row_renderer(context)
    return context


class WallView(LiveView):
    def __init__(self, viewer: Viewer, workspace_id: int) -> None:
        self.audience = audience_of(viewer)
        self.workspace_id = workspace_id
        self.topics = frozenset({COLUMNS_TOPIC, ALL_COLUMNS, IMPORTS_TOPIC})
        self.key = ("wall", workspace_id, self.audience)
        self._pages: dict[int, ItemPage] = {}
        self._wall: Wall | None = None

    async def load(self, changed: set[str]) -> dict[str, Any]:
        column_ids = _only_columns(changed)
        if self._wall is not None and column_ids:
            wall = await reload_columns(self.workspace_id, self._wall, column_ids)
            if wall is not None:
                self._wall = wall
                self._pages = {c.column.id: c.page for c in wall.columns}
                return wall_context(wall, self.audience)
        if EVERYTHING in changed or ALL_COLUMNS in changed:
            self._pages.clear()
        for topic in changed:
            if topic.startswith(COLUMN_PREFIX) and topic[len(COLUMN_PREFIX) :].isdigit():
                self._pages.pop(int(topic[len(COLUMN_PREFIX) :]), None)
        wall = await load_wall(self.workspace_id, self._pages)
        self._pages = {c.column.id: c.page for c in wall.columns}
        self._wall = wall
        return wall_context(wall, self.audience)

    def render_state(self, model: dict[str, Any]) -> list[str]:
        regions = [
            render_block(WALL, "columns", None, **model),
            render_block(WALL, "tools", None, **model),
        ]
        if not model["can_manage"]:
            # A member demoted while the editor is open: it closes (saving it would be refused).
            regions.append(CLOSED_EDITOR)
        return regions

    def keyed(self, model: dict[str, Any]) -> Keyed:
        wall: Wall = model["wall"]
        rows: dict[str, object] = {}
        list_of: dict[str, str] = {}
        parts: dict[str, Any] = {}
        for c in wall.columns:
            for item in c.page.items:
                rid = row_id(c.column.id, item.id)
                rows[rid] = (item.metrics, wall.saves.get(item.id))
                list_of[rid] = list_id(c.column.id)
            parts[head_id(c.column.id)] = _head_fingerprint(c)
        # A column's empty state is its header's: only "Load older" appearing or going
        # (it carries the first page's cursor) and the columns themselves re-send the wall.
        # Widths are each member's own (app.wall.widths): not in the shared bytes. Titles are
        # in the frame: the phone's chip bar names every column, outside their headers.
        frame = tuple((c.column.id, c.column.title, bool(c.page.next_cursor)) for c in wall.columns)
        return Keyed(list_id="wall-columns", rows=rows, frame=frame, parts=parts, list_of=list_of)

    def render_row(self, model: dict[str, Any], row: str) -> str:
        wall: Wall = model["wall"]
        if row.startswith("col-"):
            column_id = int(row.split("-")[1])
            c = next(c for c in wall.columns if c.column.id == column_id)
            return render_block(WALL, "column_head", None, **model, c=c)
        _i, column_id_text, item_id_text = row.split("-")
        c = next(c for c in wall.columns if c.column.id == int(column_id_text))
        item = next(i for i in c.page.items if i.id == int(item_id_text))
        return render_item(model, c, item)


def _head_fingerprint(c: WallColumn) -> object:
    v = c.column
    return (
        v.title,
        v.aggregate_state,
        v.sources,
        v.effective_interval_ms,
        bool(v.refresh_policy.get("paused")),
        v.position,
        repr(v.spec),
    )
