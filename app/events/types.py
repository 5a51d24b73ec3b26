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
