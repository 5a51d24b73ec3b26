"""What PostgreSQL plans for a statement our code really sends (EXPLAIN of the query itself)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from asyncpg.connection import LoggedQuery

from app.core import db
from tests.fixtures import owner_connection

_TRANSACTION_CONTROL = re.compile(r"\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b", re.I)

# Where a plan node evaluates an expression once per row it looks at.
_PER_ROW = ("Filter", "Join Filter", "Recheck Cond")


async def plan_of(
    workspace_id: int,
    call: Callable[[], Awaitable[object]],
    marker: str,
    *,
    analyze: bool = False,
    generic: bool = False,
) -> Any:
    """The plan of the statement `call` sends that contains `marker`, run in one transaction;
    `analyze` runs the statement again, and the plan says what it read. `generic` takes the
    plan a prepared statement gets once PostgreSQL stops planning it for each call's values
    (asyncpg prepares every statement): made without them."""
    async with db.workspace_tx(workspace_id) as tx:
        [query] = [q for q in await _sent(tx, call) if marker in q.query]
        explain = "EXPLAIN (ANALYZE, FORMAT JSON) " if analyze else "EXPLAIN (FORMAT JSON) "
        if generic:
            plan = await _generic_plan(tx.connection, explain, query)
        else:
            plan = await tx.fetchval(explain + query.query, *query.args)
    return json.loads(plan)[0]["Plan"]


async def _sent(tx: db.Tx, call: Callable[[], Awaitable[object]]) -> list[LoggedQuery]:
    """The statements `call` sends on the transaction's connection."""
    sent: list[LoggedQuery] = []
    tx.connection.add_query_logger(sent.append)
    try:
        await call()
        await asyncio.sleep(0)  # asyncpg hands each query to its loggers on the next turn
    finally:
        tx.connection.remove_query_logger(sent.append)
    return sent


async def _generic_plan(connection: Any, explain: str, query: LoggedQuery) -> Any:
    """EXPLAIN of the query as a prepared statement's generic plan (EXPLAIN of the query with
    its values plans for those values)."""
    types = [t.name for t in (await connection.prepare(query.query)).get_parameters()]
    # EXECUTE takes no parameters of its own: the values go in as literals.
    values = [
        await connection.fetchval(f"SELECT quote_nullable($1::{t}::text) || '::{t}'", value)
        for t, value in zip(types, query.args, strict=True)
    ]
    await connection.execute(f"PREPARE generic_plan ({', '.join(types)}) AS {query.query}")
    try:
        await connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        return await connection.fetchval(f"{explain}EXECUTE generic_plan ({', '.join(values)})")
    finally:
        await connection.execute("DEALLOCATE generic_plan")


def per_row_conditions(plan: Any) -> list[str]:
    """Every expression the plan's nodes evaluate per row, init plans and sub plans included."""
    found = [plan[key] for key in _PER_ROW if key in plan]
    for child in plan.get("Plans", []):
        found += per_row_conditions(child)
    return found


def sort_keys(plan: Any) -> list[str]:
    """Every sort key in the plan: computed for each row the sort takes in."""
    found = list(plan.get("Sort Key", []))
    for child in plan.get("Plans", []):
        found += sort_keys(child)
    return found


def rows_read(plan: Any, table: str) -> int:
    """How many rows of `table` the (analyzed) plan's scans looked at: kept or filtered out."""
    found = 0
    if plan.get("Relation Name") == table and "Actual Rows" in plan:
        loops = plan.get("Actual Loops", 1)
        found = (plan["Actual Rows"] + plan.get("Rows Removed by Filter", 0)) * loops
    return found + sum(rows_read(child, table) for child in plan.get("Plans", []))


async def rows_read_by_index(
    workspace_id: int,
    call: Callable[[], Awaitable[object]],
    marker: str,
    table: str,
    *,
    generic: bool = False,
    allow: tuple[str, ...] = (),
) -> int:
    """`rows_read` of the statement `call` sends that contains `marker`, planned as for a
    large table: on the tests' few rows, scanning, hashing or sorting a whole table looks as
    cheap as any index, and would say nothing of what the statement reads at scale. `allow`
    leaves plan kinds on that the statement may rightly choose (a GIN index is read only by
    bitmap scans, whose rows a sort then orders)."""
    async with db.workspace_tx(workspace_id) as tx:
        for plan_kind in ("seqscan", "bitmapscan", "hashjoin", "mergejoin", "sort"):
            if plan_kind not in allow:
                await tx.execute(f"SET LOCAL enable_{plan_kind} = off")
        plan = await plan_of(workspace_id, call, marker, analyze=True, generic=generic)
    return rows_read(plan, table)


async def function_calls(
    workspace_id: int, call: Callable[[], Awaitable[object]], name: str
) -> int:
    """How often the statements `call` sends call the SQL function `name`, directly or from
    inside other functions: they are sent again, in order and bound to the workspace, on the
    owner's connection with PostgreSQL's function statistics on (a superuser's setting)."""
    async with db.workspace_tx(workspace_id) as tx:
        sent = await _sent(tx, call)
    statements = [q for q in sent if not _TRANSACTION_CONTROL.match(q.query)]
    owner = owner_connection()
    replay = owner.transaction()
    await replay.start()
    try:  # rolled back: nothing the statements wrote stays
        await owner.execute("SET LOCAL track_functions = 'all'")
        await owner.execute("SELECT set_config('app.workspace_id', $1, true)", str(workspace_id))
        for query in statements:
            await owner.execute(query.query, *query.args)
        calls = await owner.fetchval(
            "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions WHERE funcname = $1",
            name,
        )
    finally:
        await replay.rollback()
    return int(calls)


async def rows_written(
    workspace_id: int, table: str, call: Callable[[], Awaitable[object]]
) -> set[str]:
    """How `call` wrote the table's rows: 'in place' (HOT updates: no index touched, no
    version left for a vacuum) or 'with index entries'."""
    counts = (
        f"SELECT pg_stat_get_xact_tuples_updated('{table}'::regclass),"
        f" pg_stat_get_xact_tuples_hot_updated('{table}'::regclass)"
    )
    async with db.workspace_tx(workspace_id) as tx:
        # The backend's counts since it last reported them, this transaction's included.
        updated_before, in_place_before = await tx.fetchrow(counts)
        await call()
        updated, in_place = await tx.fetchrow(counts)
    updated, in_place = updated - updated_before, in_place - in_place_before
    assert updated > 0
    return {"in place"} if updated == in_place else {"with index entries"}
