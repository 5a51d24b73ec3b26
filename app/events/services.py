"""Recording domain events: a row in the workspace's log, then a live notice."""

from __future__ import annotations

import json
from typing import Any

from app.core.db import Tx
from app.live.notices import publish_after_commit

ACTIVITY_TOPIC = "activity"


async def record(
    tx: Tx, kind: str, *, actor_user_id: int | None = None, subject: str = "", **data: Any
) -> int:
    """Add an event to `tx`'s workspace log; pages on Activity update after commit."""
    if tx.workspace_id is None:
        raise RuntimeError("events belong to a workspace transaction")
    event_id = await tx.fetchval(
        """
        INSERT INTO events (workspace_id, kind, actor_user_id, subject, data)
        VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING id
        """,
        tx.workspace_id,
        kind,
        actor_user_id,
        subject[:500],
        json.dumps(data, default=str),
    )
    publish_after_commit(tx, ACTIVITY_TOPIC)
    return int(event_id)
