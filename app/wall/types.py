"""Values the wall's page, live view and editor pass around."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from app.streams.types import ColumnView, ItemPage, ItemView


class Width(StrEnum):
    NARROW = "narrow"
    MEDIUM = "medium"
    WIDE = "wide"


@dataclass(frozen=True)
class SaveState:
    """Where saving one wall item to the library stands: its one-URL import job's item."""

    job_id: int
    state: str  # app.imports.types.ItemState value
    article_id: int | None
    error: str


@dataclass(frozen=True)
class SavedPost:
    """A post a wall save's import job stores as itself, and who saved it."""

    post: ItemView
    language: str  # the saver's profile language: the article's own words are theirs


@dataclass(frozen=True)
class WallColumn:
    column: ColumnView
    page: ItemPage


@dataclass(frozen=True)
class Wall:
    columns: tuple[WallColumn, ...]
    saves: dict[int, SaveState] = field(default_factory=dict)  # item id -> its save


# Every item a search or a column shows is at most this long a page.
PAGE_SIZE = 40
