"""The library's live view: rendered once per distinct view, fanned out (app.live.views).

The key is the workspace, the filter, the role (Delete buttons), the language
and the time zone: everybody with the same key sees the same bytes. A new or
removed article goes out as that one row; the whole list only when more changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.articles.types import LIBRARY_TOPIC, LibraryFilter
from app.live.streams import audience_of
from app.live.views import Keyed, LiveView
from app.web.templating import render_block

LIBRARY = "articles/library.html"
LIST_ID = "library-rows"


ListContext = Callable[[int, LibraryFilter], Awaitable[dict[str, Any]]]


class LibraryView(LiveView):
    def __init__(
        self, viewer: Viewer, workspace_id: int, f: LibraryFilter, list_context: ListContext
    ) -> None:
        self.audience = audience_of(viewer)
        self.workspace_id = workspace_id
        self.topics = frozenset({LIBRARY_TOPIC})
        self.filter = f
        self.key = ("library", workspace_id, f, self.audience)
        self._list_context = list_context  # the page's own context for its list region

    async def load(self, changed: set[str]) -> dict[str, Any]:
        return {
            **await self._list_context(self.workspace_id, self.filter),
            "viewer": self.audience,
            "can_manage": self.audience.can(Permission.ARTICLES_IMPORT),
        }

    def render_state(self, model: dict[str, Any]) -> list[str]:
        return [render_block(LIBRARY, "list", None, **model)]

    def keyed(self, model: dict[str, Any]) -> Keyed:
        library = model["library"]
        return Keyed(
            list_id=LIST_ID,
            rows={f"article-{a.id}": a for a in library.items},
            # "Load more" keeps each client's own cursor (after the last row it shows);
            # only its appearing or going re-sends the list.
            frame=(
                bool(library.items),
                library.library_is_empty,
                model["error"],
                bool(model["next_url"]),
            ),
        )

    def render_row(self, model: dict[str, Any], row_id: str) -> str:
        article_id = int(row_id.removeprefix("article-"))
        row = next(a for a in model["library"].items if a.id == article_id)
        return render_block(LIBRARY, "article_row", None, **model, a=row)
