"""Rendered posts kept for reuse: a whole wall renders only the posts that changed.

A full wall (10 columns x 40 posts) is rendered on every (re)connect of a distinct view
and whenever the columns change; nearly all of its cost was the posts (rich text, media
signing, localised times and counts). A post's HTML depends only on what is in the key:
the reader's language, time zone and whether they may save, the column it sits in (its
element id), the item and when it was last fetched (re-polls update its counts), and its
save state. Jinja renders it through the `row` macro and the very object it returns is
kept: no HTML is marked safe here.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, MutableMapping
from typing import Any

from app.core import i18n
from app.streams.types import ItemView
from app.wall.types import WallColumn
from app.web.templating import environment

ROW = "wall/_row.html"
MAX_ROWS = 5000  # ~2 KB each: a few walls' worth per process

_rows: OrderedDict[Hashable, Any] = OrderedDict()


def row_renderer(context: MutableMapping[str, Any]) -> Callable[[WallColumn | None, ItemView], Any]:
    """`{{ item_row(c, item) }}` for templates rendered with `context` (read when called,
    so a `saves` set after this still counts)."""
    module: Any = None

    def item_row(c: WallColumn | None, item: ItemView) -> Any:
        nonlocal module
        key = (
            i18n.active_language(),
            context["viewer"].time_zone,
            context["can_save"],
            c.column.id if c else None,
            item.id,
            item.fetched_at,
            context["saves"].get(item.id),
        )
        found = _rows.get(key)
        if found is not None:
            _rows.move_to_end(key)
            return found
        if module is None:
            module = environment().get_template(ROW).make_module(vars=dict(context))
        found = _rows[key] = module.row(c, item)
        if len(_rows) > MAX_ROWS:
            _rows.popitem(last=False)
        return found

    return item_row


def clear() -> None:
    """Forget every kept post (tests that change what a render depends on)."""
    _rows.clear()
