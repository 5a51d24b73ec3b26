"""Live views: what a page renders once and fans out to every client showing it.

A `LiveView` is a page's live part for one *distinct view*: its `key` holds
everything the bytes depend on (workspace, page, filters, role, language, time
zone), so every client with the same key gets the same bytes, rendered once.

    load(changed)        read the state from PostgreSQL (once per notice per view)
    render_state(model)  the whole regions: sent on (re)connect, resync or fall-behind
    keyed(model)         the rows a region lists, for deltas (None: always whole state)
    render_row(model, row_id)   one row's (or part's) HTML, for an added or changed one

`delta(old, new)` turns two `Keyed` snapshots into patches: rows removed by id,
new rows inserted next to their neighbour, changed rows morphed by id. When the
rows move, the frame around them changes or too much changed, it returns None
and the whole region goes out instead.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from datastar_py.consts import ElementPatchMode
from datastar_py.sse import DatastarEvent
from datastar_py.sse import ServerSentEventGenerator as SSE

from app.accounts.roles import Permission, Role, permissions_of

# More changed rows than this in one notice: the whole region is as cheap.
MAX_DELTA_ROWS = 20


@dataclass(frozen=True)
class Audience:
    """The part of a viewer a shared render may depend on (part of the view key).

    Templates get it as `viewer`: `viewer.time_zone`, `viewer.can(...)`. Anything
    personal (a name, a CSRF token) must stay out of live regions.
    """

    role: Role
    language: str
    time_zone: str
    permissions: frozenset[Permission] = field(default=frozenset(), compare=False)

    @classmethod
    def of(cls, role: Role, language: str, time_zone: str) -> Audience:
        return cls(role, language, time_zone, permissions_of(role))

    def can(self, permission: Permission) -> bool:
        return permission in self.permissions


@dataclass(frozen=True)
class Keyed:
    """A list region as rendered: the rows in order, each with a fingerprint."""

    list_id: str  # the element rows live in (new first rows are prepended to it)
    rows: dict[str, object]  # row element id -> anything that compares unequal when it changes
    frame: Hashable = None  # what else the region shows (empty state): a change sends it whole
    parts: dict[str, Hashable] = field(default_factory=dict)  # other elements patched by id


class LiveView(ABC):
    """One distinct view of a live page. Subclasses set the three attributes."""

    key: Hashable
    workspace_id: int
    topics: frozenset[str]
    audience: Audience

    @abstractmethod
    async def load(self, changed: set[str]) -> Any: ...

    @abstractmethod
    def render_state(self, model: Any) -> list[str]: ...

    def keyed(self, model: Any) -> Keyed | None:
        return None

    def render_row(self, model: Any, row_id: str) -> str:
        raise NotImplementedError


def delta(view: LiveView, old: Keyed | None, model: Any) -> list[DatastarEvent] | None:
    """The patches from what clients hold (`old`) to `model`; None: send the whole state."""
    new = view.keyed(model)
    if old is None or new is None or old.frame != new.frame or old.list_id != new.list_id:
        return None
    kept_old = [row for row in old.rows if row in new.rows]
    kept_new = [row for row in new.rows if row in old.rows]
    if kept_old != kept_new:  # rows moved: not worth expressing as moves
        return None
    removed = [row for row in old.rows if row not in new.rows]
    added = [row for row in new.rows if row not in old.rows]
    if removed and not _added_after(kept_new, added, new) and len(new.rows) >= len(old.rows):
        # New rows pushed the last ones off the first page: they are still in the
        # list, so clients keep them (their "Load more" goes on after them).
        removed = [row for row in removed if not _after(row, kept_old, old)]
    changed = [row for row in kept_new if old.rows[row] != new.rows[row]]
    changed += [part for part, value in new.parts.items() if old.parts.get(part) != value]
    if len(removed) + len(added) + len(changed) > MAX_DELTA_ROWS:
        return None
    events: list[DatastarEvent] = []
    if removed:
        events.append(SSE.remove_elements(", ".join(f"#{row}" for row in removed)))
    order = list(new.rows)
    for row in added:
        html = view.render_row(model, row)
        at = order.index(row)
        if at == 0:
            events.append(SSE.patch_elements(html, f"#{new.list_id}", ElementPatchMode.PREPEND))
        else:
            events.append(SSE.patch_elements(html, f"#{order[at - 1]}", ElementPatchMode.AFTER))
    for row in changed:
        events.append(SSE.patch_elements(view.render_row(model, row)))
    return events


def _after(row: str, kept: list[str], keyed: Keyed) -> bool:
    """Whether `row` comes after every kept row in `keyed`."""
    order = list(keyed.rows)
    return not kept or order.index(row) > order.index(kept[-1])


def _added_after(kept: list[str], added: list[str], keyed: Keyed) -> bool:
    return any(_after(row, kept, keyed) for row in added)
