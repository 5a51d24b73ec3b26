"""Transactions (app.core.db.transaction) give their connection back whatever happens to them.

A live page's stream is cancelled the moment its browser goes away, and a
worker's job the moment its lease is lost: a cancellation can land while a
transaction is still being opened. The connection must go back to the pool
rolled back, or the pool drains and every page waits.
"""

from __future__ import annotations

import asyncio
import logging
import random

import asyncpg
import pytest

from app.core import db

# Which connection answered, the session setting it had, and one it leaves behind: the
# pool's reset would clear it before the next use.
PROBE = (
    "SELECT pg_backend_pid() AS pid, current_setting('newsdesk.probe', true) AS probe,"
    " set_config('newsdesk.probe', 'left behind', false)"
)


SETTINGS = "SELECT current_setting('app.workspace_id', true), current_setting('lock_timeout')"


def _reset_only_after_the_second(*probes: asyncpg.Record | None) -> None:
    """Three PROBE answers from one pooled connection: the first use left its setting to
    the second (no reset), the second left nothing to the third (reset)."""
    first, second, third = probes
    assert first is not None
    assert second is not None
    assert third is not None
    assert first["pid"] == second["pid"] == third["pid"]
    assert second["probe"] == "left behind"
    assert third["probe"] in ("", None)


async def _idle_in_transaction() -> int:
    return int(
        await db.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND state LIKE 'idle in transaction%'"
        )
    )


async def test_cancelled_while_opening_a_transaction_leaks_no_connection(
    clean_db: None, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(7)

    async def briefly(n: int) -> None:
        if n % 3 == 2:  # a live page's bound read: its own BEGIN ... COMMIT
            with db.bound_to(1):
                await db.fetch("SELECT 1")
            return
        async with db.transaction(n % 3 or None, lock_timeout="2s") as tx:
            await tx.execute("SELECT 1")

    caplog.set_level(logging.ERROR, logger="asyncio")
    for _ in range(40):  # cancellations land at every stage: acquire, BEGIN, the statement, COMMIT
        tasks = [asyncio.create_task(briefly(n)) for n in range(10)]
        await asyncio.sleep(rng.uniform(0, 0.004))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # Every connection came back: the pool still serves as many transactions as it holds.
    size = db.engine().pool.get_max_size()  # type: ignore[union-attr]

    async def hold(ready: asyncio.Event, release: asyncio.Event) -> None:
        async with db.transaction() as tx:
            await tx.execute("SELECT 1")
            ready.set()
            await release.wait()

    release = asyncio.Event()
    readies = [asyncio.Event() for _ in range(size)]
    holders = [asyncio.create_task(hold(r, release)) for r in readies]
    try:
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout=5)
    finally:
        release.set()
        await asyncio.gather(*holders, return_exceptions=True)
    assert await _idle_in_transaction() == 0
    # None went back to the pool mid-transaction (asyncpg would roll it back and log it).
    assert not [r for r in caplog.records if "active transaction" in r.getMessage()]


async def test_piccolo_queries_inside_a_transaction_join_it(clean_db: None) -> None:
    from app.accounts.tables import User

    class Undo(Exception):
        pass

    try:
        async with db.transaction() as tx:
            await tx.execute(
                "INSERT INTO users (email, display_name, password_hash)"
                " VALUES ('join@example.org', 'J', 'x')"
            )
            # The same connection: Piccolo sees the row this transaction has not committed.
            seen = await User.select(User.email).where(User.email == "join@example.org").run()
            assert seen == [{"email": "join@example.org"}]
            raise Undo
    except Undo:
        pass
    assert await User.count().where(User.email == "join@example.org").run() == 0


async def test_fixed_statements_skip_the_pool_reset_and_every_other_use_is_reset(
    clean_db: None,
) -> None:
    """`fetch_stateless` (the stream scheduler's claim and writes) gives its connection back
    without asyncpg's reset round trip; `fetch` and transactions keep it, so session state
    (here a session-level setting, which no fixed statement may set) never outlives them."""
    # The pool hands back the connection released last: each step reuses the same one.
    first = (await db.fetch_stateless(PROBE))[0]
    second = await db.fetchrow(PROBE)
    third = await db.fetchrow(PROBE)
    _reset_only_after_the_second(first, second, third)


async def test_a_stateless_transaction_skips_the_pool_reset_and_an_ordinary_one_does_not(
    clean_db: None,
) -> None:
    """The import worker's transactions (fixed statements of ours) give their connection
    back without the reset round trip; any other transaction keeps it."""
    async with db.transaction(stateless=True) as tx:
        first = await tx.fetchrow(PROBE)
    async with db.transaction() as tx:
        second = await tx.fetchrow(PROBE)
    third = await db.fetchrow(PROBE)
    _reset_only_after_the_second(first, second, third)


async def test_a_lock_timeout_holds_for_the_transaction_and_for_one_it_joins(
    clean_db: None,
) -> None:
    """Set with the workspace in one statement, or by a nested call joining an outer
    transaction; transaction-local either way."""
    setting = SETTINGS
    async with db.transaction(7, lock_timeout="250ms") as tx:
        assert tuple(await tx.fetchrow(setting)) == ("7", "250ms")
    async with db.transaction(7) as outer:
        assert (await outer.fetchrow(setting))[1] == "0"
        async with db.transaction(7, lock_timeout="2s") as inner:
            assert inner is outer
        assert (await outer.fetchrow(setting))[1] == "2s"
    assert await db.fetchval("SELECT current_setting('lock_timeout')") == "0"


async def test_a_workspace_transaction_opens_with_its_settings_in_one_round_trip(
    clean_db: None,
) -> None:
    """BEGIN, the workspace and the lock timeout go to PostgreSQL together: a transaction of
    one statement is three round trips (every workspace write is such a transaction, and
    the import worker runs two per URL)."""
    pool = db.engine().pool
    assert pool is not None
    sent: list[str] = []
    # The pool hands back the connection released last: the transaction below gets this one.
    async with pool.acquire() as connection:
        connection.add_query_logger(lambda logged: sent.append(logged.query))
    sent.clear()  # the pool's reset on release
    async with db.transaction(7, lock_timeout="250ms", stateless=True) as tx:
        assert tuple(await tx.fetchrow(SETTINGS)) == ("7", "250ms")
    assert len(sent) == 3, sent
    assert sent[-1] == "COMMIT"
    workspace, lock_timeout = tuple(await db.fetchrow(SETTINGS))  # type: ignore[arg-type]
    assert (workspace or None, lock_timeout) == (None, "0")  # both were the transaction's


async def test_a_failed_transaction_rolls_back_and_its_savepoint_undoes_only_its_part(
    clean_db: None,
) -> None:
    class Undo(Exception):
        pass

    async with db.transaction() as tx:
        await tx.execute("CREATE TEMP TABLE kept (n int) ON COMMIT DROP")
        await tx.execute("INSERT INTO kept VALUES (1)")
        try:
            async with tx.savepoint():
                await tx.execute("INSERT INTO kept VALUES (2)")
                await tx.execute("SELECT 1 / 0")
        except asyncpg.DivisionByZeroError:
            pass
        async with tx.savepoint():
            await tx.execute("INSERT INTO kept VALUES (3)")
        assert [r["n"] for r in await tx.fetch("SELECT n FROM kept ORDER BY n")] == [1, 3]
    try:
        async with db.transaction() as tx:
            await tx.execute(
                "INSERT INTO users (email, display_name, password_hash)"
                " VALUES ('undone@example.org', 'U', 'x')"
            )
            raise Undo
    except Undo:
        pass
    assert await db.fetchval("SELECT count(*) FROM users WHERE email = 'undone@example.org'") == 0
    assert await _idle_in_transaction() == 0


async def test_a_workspace_part_of_a_system_transaction_is_bound_to_its_workspace_alone(
    clean_db: None,
) -> None:
    """Deleting an account is one unbound transaction across the person's workspaces; each
    workspace's part is bound to it as a workspace transaction is, and unbound again after."""
    async with db.transaction() as tx:
        assert (await tx.fetchrow(SETTINGS))[0] in ("", None)
        async with db.workspace_part(tx, 7) as part:
            assert part.workspace_id == 7
            assert db.current_tx() is part
            assert (await part.fetchrow(SETTINGS))[0] == "7"
            async with db.workspace_tx(7) as nested:
                assert nested is part  # code written for a workspace transaction joins it
        assert db.current_tx() is tx
        assert (await tx.fetchrow(SETTINGS))[0] in ("", None)
        async with db.workspace_tx(7) as tx_nested:
            assert tx_nested.workspace_id is None  # the unbound transaction again
        try:
            async with db.workspace_part(tx, 8) as part, db.workspace_part(part, 9):
                pass
        except RuntimeError:
            pass
        else:
            raise AssertionError("a bound part took a part in another workspace")
