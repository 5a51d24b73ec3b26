"""Publishing notices: `publish_after_commit(tx, topic)` is how writers tell pages.

A notice may name what changed (`publish_after_commit(tx, "library", article_id=7)`);
streams do not rely on it: they read the state from PostgreSQL and send the difference.

`access_changed_after_commit(tx, user_id)` tells a person's open streams to re-check
who they are at once (a member removed or demoted, a session ended).
`top_bar_changed_after_commit(tx, user_ids)` does the same for what the top bar around every
live region shows (a workspace's new name), on the same channels: a stream that re-checks its
viewer also sends the top bar again (app.live.streams).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence

from redis.exceptions import RedisError

from app.core import db, redis
from app.core.config import active
from app.core.db import Tx

log = logging.getLogger(__name__)


def channel(workspace_id: int) -> str:
    return active().redis_key("ws", workspace_id)


def channel_pattern() -> str:
    return active().redis_key("ws", "*")


def user_channel(user_id: int) -> str:
    return active().redis_key("user", user_id)


def user_channel_pattern() -> str:
    return active().redis_key("user", "*")


def _message(topic: str, data: Mapping[str, object]) -> str:
    return json.dumps({"topic": topic, **data}, separators=(",", ":"))


async def publish(workspace_id: int, topic: str, **data: object) -> None:
    await redis.client().publish(channel(workspace_id), _message(topic, data))


async def _publish_all(workspace_id: int, messages: Sequence[str]) -> None:
    """Several notices of one workspace in one round trip."""
    name = channel(workspace_id)
    async with redis.client().pipeline(transaction=False) as pipe:
        for message in messages:
            pipe.publish(name, message)
        await pipe.execute()


async def publish_committed(
    workspace_id: int, notices: Sequence[tuple[str, Mapping[str, object]]]
) -> None:
    """Publish (topic, data) notices of a write that has committed - one statement run on its
    own - in one round trip. Inside an open transaction they wait for its commit instead.
    A notice Redis cannot take is logged, not raised: the row is the truth, and pages
    re-read it when they reconnect."""
    tx = db.current_tx()
    if tx is not None:
        for topic, data in notices:
            publish_after_commit(tx, topic, **data)
        return
    if not notices:
        return
    try:
        await _publish_all(workspace_id, [_message(topic, data) for topic, data in notices])
    except RedisError as error:
        log.warning("Redis unreachable; %d notices were not sent: %s", len(notices), error)


def publish_after_commit(tx: Tx, topic: str, **data: object) -> None:
    """Tell the workspace's open pages that `topic` changed, once `tx` commits.

    A transaction's notices go out in one round trip, each once: pages re-read
    the state a notice names, so saying it twice tells them nothing more. The
    writer does not wait for it: a page reads the state itself, whenever the
    notice arrives (an import's items waited a Redis round trip each, twice).
    """
    workspace_id = tx.workspace_id
    if workspace_id is None:
        raise RuntimeError("live notices belong to a workspace transaction")
    message = _message(topic, data)
    if message in tx.notices:
        return
    tx.notices.append(message)
    if len(tx.notices) > 1:
        return  # the first notice's callback sends them all

    async def send() -> None:
        await _publish_all(workspace_id, tx.notices)

    tx.after_commit(send, wait=False)


async def access_changed(user_id: int) -> None:
    """Tell `user_id`'s open streams (in every process) to re-check their access now.

    Without Redis the notice is lost, never the sign-out that sent it: every open
    stream re-checks its access anyway when the hub has Redis again.
    """
    try:
        await redis.client().publish(user_channel(user_id), "{}")
    except RedisError as error:
        log.warning("access notice for user %s lost: %s", user_id, error)


def access_changed_after_commit(tx: Tx, user_id: int) -> None:
    """`access_changed`, once `tx` commits (a removal or a role change)."""

    async def send() -> None:
        await access_changed(user_id)

    tx.after_commit(send)


def top_bar_changed_after_commit(tx: Tx, user_ids: Iterable[int]) -> None:
    """Once `tx` commits, tell these people's open streams - in whatever workspace each page
    is - to read their viewer and top bar again: a workspace's name is in every member's top
    bar and workspace switcher, outside the live regions of their workspace's channel. One
    round trip; not waited for, as workspace notices are not (pages read the state)."""
    channels = [user_channel(user_id) for user_id in user_ids]

    async def send() -> None:
        async with redis.client().pipeline(transaction=False) as pipe:
            for name in channels:
                pipe.publish(name, "{}")
            await pipe.execute()

    if channels:
        tx.after_commit(send, wait=False)
