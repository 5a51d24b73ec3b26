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
    # Rows of a region with several lists (the wall's columns): row id -> its list's id.
    # Rows not named here live in `list_id`.
    list_of: dict[str, str] = field(default_factory=dict)

    def lists(self) -> dict[str, dict[str, object]]:
        """The rows of each list, in order."""
        out: dict[str, dict[str, object]] = {}
        for row, fingerprint in self.rows.items():
            out.setdefault(self.list_of.get(row, self.list_id), {})[row] = fingerprint
        return out


class LiveView(ABC):
    """One distinct view of a live page. Subclasses set the three attributes."""

    key: Hashable
    workspace_id: int
    topics: frozenset[str]
    audience: Audience
    # A view whose topics can change many times a second (an import's progress) renders at
    # most this often: the changes meanwhile land together in the next render.
    min_interval: float = 0.0

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
    old_lists, new_lists = old.lists(), new.lists()
    removed: list[str] = []
    added: list[tuple[str, str, dict[str, object]]] = []  # (row, its list, the list's rows)
    changed: list[str] = []
    for list_id in old_lists.keys() | new_lists.keys():
        found = _list_delta(old_lists.get(list_id, {}), new_lists.get(list_id, {}))
        if found is None:
            return None
        gone, new_rows, moved = found
        removed += gone
        added += [(row, list_id, new_lists[list_id]) for row in new_rows]
        changed += moved
    changed += [part for part, value in new.parts.items() if old.parts.get(part) != value]
    if len(removed) + len(added) + len(changed) > MAX_DELTA_ROWS:
        return None
    events: list[DatastarEvent] = []
    if removed:
        events.append(SSE.remove_elements(", ".join(f"#{row}" for row in removed)))
    for row, list_id, rows in added:
        html = view.render_row(model, row)
        order = list(rows)
        at = order.index(row)
        if at == 0:
            events.append(SSE.patch_elements(html, f"#{list_id}", ElementPatchMode.PREPEND))
        else:
            events.append(SSE.patch_elements(html, f"#{order[at - 1]}", ElementPatchMode.AFTER))
    for row in changed:
        events.append(SSE.patch_elements(view.render_row(model, row)))
    return events


def _list_delta(
    old: dict[str, object], new: dict[str, object]
) -> tuple[list[str], list[str], list[str]] | None:
    """One list's (removed, added, changed) rows; None when rows moved."""
    kept_old = [row for row in old if row in new]
    kept_new = [row for row in new if row in old]
    if kept_old != kept_new:  # rows moved: not worth expressing as moves
        return None
    removed = [row for row in old if row not in new]
    added = [row for row in new if row not in old]
    if removed and not _added_after(kept_new, added, new) and len(new) >= len(old):
        # New rows pushed the last ones off the first page: they are still in the
        # list, so clients keep them (their "Load more" goes on after them).
        removed = [row for row in removed if not _after(row, kept_old, old)]
    changed = [row for row in kept_new if old[row] != new[row]]
    return removed, added, changed


def _after(row: str, kept: list[str], rows: dict[str, object]) -> bool:
    """Whether `row` comes after every kept row in `rows`."""
    order = list(rows)
    return not kept or order.index(row) > order.index(kept[-1])


def _added_after(kept: list[str], added: list[str], rows: dict[str, object]) -> bool:
    return any(_after(row, kept, rows) for row in added)
