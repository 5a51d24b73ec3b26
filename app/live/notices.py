"""Publishing notices: `publish_after_commit(tx, topic)` is how writers tell pages."""

from __future__ import annotations

import json

from app.core import redis
from app.core.config import active
from app.core.db import Tx


def channel(workspace_id: int) -> str:
    return active().redis_key("ws", workspace_id)


def channel_pattern() -> str:
    return active().redis_key("ws", "*")


async def publish(workspace_id: int, topic: str, **data: object) -> None:
    message = json.dumps({"topic": topic, **data}, separators=(",", ":"))
    await redis.client().publish(channel(workspace_id), message)


def publish_after_commit(tx: Tx, topic: str, **data: object) -> None:
    """Tell the workspace's open pages that `topic` changed, once `tx` commits."""
    workspace_id = tx.workspace_id
    if workspace_id is None:
        raise RuntimeError("live notices belong to a workspace transaction")

    async def send() -> None:
        await publish(workspace_id, topic, **data)

    tx.after_commit(send)
