"""Values of the event log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class EventView:
    id: int
    kind: str
    actor: str  # the acting person's display name; "" for the system
    subject: str  # third-party text: render with the `third_party` filter
    data: dict[str, Any]
    created_at: datetime
    actor_user_id: int | None = None  # None for the system
    gone: bool = False  # what it names (article, topic, import) no longer exists


@dataclass(frozen=True)
class EventPage:
    """One page of the log, newest first."""

    items: list[EventView]
    next_cursor: str | None  # pass back as `cursor` for the older page; None at the end
