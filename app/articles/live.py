"""The library's live view: rendered once per distinct view, fanned out (app.live.views).

The key is the workspace, the filter, the role (Delete buttons), the language
and the time zone: everybody with the same key sees the same bytes. A new or
removed article goes out as that one row; the whole list only when more changed.

Rows below the first page are each client's own ("Load more"); the view does not know
which a client holds. After each notice it reads which articles were written since its
last read and sends those below the first page as they are now - the row, or its id if
it left the filter - into `#library-changes`, once per write; static/js/library.js takes
those the client holds. Too many at once: every client that loaded more reads its
rows again (`#library-held`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from app.accounts.roles import Permission
from app.accounts.types import Viewer
from app.articles import queries
from app.articles.types import LIBRARY_TOPIC, ArticleRow, LibraryFilter, LibraryPage
from app.live.streams import audience_of
from app.live.views import Keyed, LiveView
from app.web.templating import render_block

LIBRARY = "articles/library.html"
LIST_ID = "library-rows"
CHANGES_ID = "library-changes"
HELD_ID = "library-held"
# Rows below the first page written since the last read, sent at most this many at once
# (else clients read their loaded rows again) ...
MAX_CHANGED_ROWS = 20
# ... and rows that left the view, by id (a few bytes each).
MAX_GONE_ROWS = 200
# A write whose transaction began before a read and committed after it carries a time before
# that read: each read looks back this far (a write seen twice is sent once).
WRITES_OVERLAP = timedelta(seconds=10)


@dataclass(frozen=True)
class Changes:
    """Rows below the first page to send as they are now: fresh rows, and ids that left."""

    rows: tuple[ArticleRow, ...] = ()
    gone: tuple[int, ...] = ()


ListContext = Callable[[int, LibraryFilter], Awaitable[dict[str, Any]]]


class LibraryView(LiveView):
    # An import stores dozens of articles a second: ten renders a second at most then, while
    # articles that come a few a second (topic runs, saves) still show at once.
    min_interval = 0.1

    def __init__(
        self, viewer: Viewer, workspace_id: int, f: LibraryFilter, list_context: ListContext
    ) -> None:
        self.audience = audience_of(viewer)
        self.workspace_id = workspace_id
        self.topics = frozenset({LIBRARY_TOPIC})
        self.filter = f
        self.key = ("library", workspace_id, f, self.audience)
        self._list_context = list_context  # the page's own context for its list region
        self._since: datetime | None = None  # the last read, less WRITES_OVERLAP
        self._seen: dict[int, datetime] = {}  # the last read's writes: article -> when
        self._rereads = 0  # times more changed below than patches carry

    async def load(self, changed: set[str]) -> dict[str, Any]:
        context = await self._list_context(self.workspace_id, self.filter)
        return {
            **context,
            "changes": await self._changes_below(context["library"]),
            "rereads": self._rereads,
            "viewer": self.audience,
            "can_manage": self.audience.can(Permission.ARTICLES_IMPORT),
        }

    async def _changes_below(self, page: LibraryPage) -> Changes:
        """The rows below `page` written since the last read (and not seen written then)."""
        first = self._since is None  # its whole state goes out: nothing to patch yet
        now, written = await queries.written_since(self.workspace_id, self._since, WRITES_OVERLAP)
        self._since = now - WRITES_OVERLAP
        shown = {a.id for a in page.items}
        ids = [i for i, at in written.items() if i not in shown and self._seen.get(i) != at]
        self._seen = written  # older writes are outside the next read's look-back
        if first or not ids:
            return Changes()
        found = await queries.library(
            self.workspace_id, replace(self.filter, cursor="", limit=len(ids)), only=ids
        )
        gone = tuple(sorted(set(ids) - {a.id for a in found.items}))
        if len(found.items) > MAX_CHANGED_ROWS or len(gone) > MAX_GONE_ROWS:
            # More than patches carry: every client that loaded more reads its rows again.
            self._rereads += 1
            return Changes()
        return Changes(tuple(found.items), gone)

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
                library.ranked_newest,
                model["error"],
                bool(model["next_url"]),
            ),
            # A changed #library-held (its URL is new with every render) makes the clients
            # that loaded more read their rows again; the whole state carries it too.
            parts={CHANGES_ID: model["changes"], HELD_ID: model["rereads"]},
        )

    def render_row(self, model: dict[str, Any], row_id: str) -> str:
        if row_id in (CHANGES_ID, HELD_ID):
            return render_block(LIBRARY, row_id.removeprefix("library-"), None, **model)
        article_id = int(row_id.removeprefix("article-"))
        row = next(a for a in model["library"].items if a.id == article_id)
        return render_block(LIBRARY, "article_row", None, **model, a=row)
