"""Changes the wall page makes beyond the streams API: saving items, a member's widths."""

from __future__ import annotations

from app.core import db
from app.core.i18n import _
from app.imports import services as imports
from app.imports.types import IMPORTS_TOPIC, ImportRefused
from app.live.notices import publish_after_commit
from app.streams import queries as streams
from app.streams.types import NotFound, StreamsError
from app.wall import queries, saving
from app.wall.types import Width


async def save_item(workspace_id: int, item_id: int, *, actor_user_id: int) -> int:
    """Save the item to the library as a one-URL import job; the job's id.

    The job reads the article the post links, or the post itself when it links none
    (app.wall.saving). Saving an item twice follows the first job, unless that one failed.
    """
    item = await streams.item(workspace_id, item_id)
    if item is None:
        raise NotFound(_("There is no such item."))
    target = saving.save_target(item)
    if target is None:
        raise StreamsError(_("This item has no web link to save."), status=400)
    known = (await queries.saves(workspace_id, [item_id])).get(item_id)
    if known is not None and known.state not in ("error", "cancelled"):
        return known.job_id  # saving again would only say "already in the library"
    try:
        async with db.workspace_tx(workspace_id) as tx:
            job_id = await imports.add_job(
                tx, [target.url], actor_user_id=actor_user_id, source=target.source
            )
            # With the job, so the worker that claims it finds the post it stores.
            await tx.execute(
                "INSERT INTO feed_item_saves (workspace_id, item_id, job_id) VALUES ($1, $2, $3)"
                " ON CONFLICT (item_id) DO UPDATE SET job_id = EXCLUDED.job_id, created_at = now()",
                workspace_id, item_id, job_id,
            )  # fmt: skip
            # The wall follows imports: the item shows its job's state from now on.
            publish_after_commit(tx, IMPORTS_TOPIC)
    except ImportRefused as error:
        raise StreamsError(str(error), status=400) from None
    return job_id


async def set_width(workspace_id: int, user_id: int, column_id: int, width: str) -> None:
    """This member's width for the column (theirs alone: the shared wall carries none)."""
    try:
        chosen = Width(width)
    except ValueError:
        raise StreamsError(_("Choose narrow, medium or wide."), field="width") from None
    async with db.workspace_tx(workspace_id) as tx:
        done = await tx.fetchval(
            """
            INSERT INTO wall_column_widths (workspace_id, user_id, column_id, width)
            SELECT $1, $2, id, $4 FROM stream_columns
            WHERE workspace_id = $1 AND id = $3 AND deleted_at IS NULL
            ON CONFLICT (workspace_id, user_id, column_id) DO UPDATE SET width = EXCLUDED.width
            RETURNING column_id
            """,
            workspace_id, user_id, column_id, chosen.value,
        )  # fmt: skip
        if done is None:
            raise NotFound(_("There is no such column."))
