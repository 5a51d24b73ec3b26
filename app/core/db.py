"""The database: one engine per process, and the workspace transaction.

All workspace work runs inside `workspace_tx(workspace_id)`. It opens one
transaction, sets `app.workspace_id` for it - row-level security then shows
and accepts only that workspace's rows, whatever the query forgets - and runs
the after-commit callbacks - live notices, job wake-ups - only once the
transaction has committed. Nothing is published for work that rolled back.
Work outside a workspace transaction is unbound: system work (sign-in, the
workspace switcher, claims and reconcilers across workspaces) that sees every
workspace. The app connects as a role that does not own the tables;
migrations run as the owner (`migrate_database`). docs/decisions/database.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import io
import logging
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlsplit

import asyncpg
from piccolo.engine.postgres import PostgresEngine
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.core.config import Settings, redact_url
from app.core.tables import all_tables

if TYPE_CHECKING:
    from piccolo.apps.migrations.auto.migration_manager import MigrationManager

log = logging.getLogger(__name__)

AfterCommit = Callable[[], Awaitable[object]]
SETTLE_SECONDS = 2.0  # how long a closing pool waits for after-commit work still under way
MAX_ID = 2**63 - 1  # ids are bigints: asyncpg refuses a larger number outright


def is_id(value: int) -> bool:
    """Whether `value` can be a row's id (one from a URL or a form may be anything)."""
    return 0 < value <= MAX_ID


_engine: PostgresEngine | None = None
_current_tx: contextvars.ContextVar[Tx | None] = contextvars.ContextVar("nd_tx", default=None)
# The workspace a request works in: reads outside a transaction see only its rows.
_bound: contextvars.ContextVar[int | None] = contextvars.ContextVar("nd_bound", default=None)


def engine() -> PostgresEngine:
    """The process's engine; `connect` must have run."""
    if _engine is None:
        raise RuntimeError("the database is not connected (app.core.db.connect)")
    return _engine


# PostgreSQL cannot be reached just now - a connection refused, reset or closed under us, a
# server shutting down, starting up or full - rather than a statement's own error.
_UNREACHABLE: tuple[type[BaseException], ...] = (
    ConnectionError,
    socket.gaierror,
    asyncpg.PostgresConnectionError,  # also a connection closed mid-statement
    asyncpg.exceptions.CannotConnectNowError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.TooManyConnectionsError,
)


def unreachable(error: BaseException) -> bool:
    """Whether `error` says PostgreSQL is away (a restart, an outage), not that a statement
    failed: the work may run again once it is back (app.core.outage). A group (a TaskGroup's)
    is away only if all of it is."""
    if isinstance(error, BaseExceptionGroup):
        return all(unreachable(e) for e in error.exceptions)
    return isinstance(error, _UNREACHABLE)


def where() -> str:
    """host:port/db of this process's database, for log lines."""
    return redact_url(str(engine().config.get("dsn", "")))


def make_engine(settings: Settings, dsn: str | None = None) -> PostgresEngine:
    return PostgresEngine(config={"dsn": dsn or settings.database_url}, log_queries=False)


def bind(db: PostgresEngine) -> None:
    """Point every table at `db`, so transactions and queries share one engine."""
    global _engine
    _engine = db
    for table in all_tables():
        table._meta.db = db


async def connect(settings: Settings, *, pool_max: int | None = None) -> PostgresEngine:
    from app.core.outage import QuietPoolFloor

    pool_log = logging.getLogger("asyncpg.pool")
    if not any(isinstance(f, QuietPoolFloor) for f in pool_log.filters):
        pool_log.addFilter(QuietPoolFloor())
    db = make_engine(settings)
    bind(db)
    size = pool_max or settings.db_pool_max
    await db.start_connection_pool(min_size=1, max_size=size, reset=_reset)
    return db


# Set while a `fetch_stateless` statement gives its connection back (the pool's release
# runs in a task that copies this context).
_stateless = contextvars.ContextVar("nd_stateless", default=False)


async def _reset(connection: asyncpg.Connection) -> None:
    """The pool's reset on release (asyncpg has already rolled back an open transaction):
    asyncpg's reset query - session settings, advisory locks, LISTENs, cursors - so no
    session state outlives a use; skipped after a `fetch_stateless` statement."""
    if _stateless.get():
        return
    query = connection.get_reset_query()
    if query:
        await connection.execute(query)


async def disconnect() -> None:
    global _engine
    await settle()
    if _engine is not None and _engine.pool is not None:
        await _engine.close_connection_pool()
    _engine = None


@dataclass
class Tx:
    """An open workspace transaction and what to do once it commits."""

    workspace_id: int | None
    connection: asyncpg.Connection
    after: list[AfterCommit] = field(default_factory=list)
    unawaited: list[AfterCommit] = field(default_factory=list)  # after_commit(wait=False)
    # Live notices to publish after commit, in one round trip (app.live.notices).
    notices: list[str] = field(default_factory=list)
    lock_timeout: str | None = None  # set for this transaction (`transaction`)
    savepoints: int = 0  # named so far (`savepoint`)

    def after_commit(self, callback: AfterCommit, *, wait: bool = True) -> None:
        """Run `callback` once the transaction commits; with `wait=False` the caller goes on
        meanwhile (a live notice: nothing the caller does next depends on its being sent)."""
        (self.after if wait else self.unawaited).append(callback)

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        return await self.connection.fetch(sql, *args)

    async def fetchrow(self, sql: str, *args: Any) -> asyncpg.Record | None:
        return await self.connection.fetchrow(sql, *args)

    async def fetchval(self, sql: str, *args: Any) -> Any:
        return await self.connection.fetchval(sql, *args)

    async def execute(self, sql: str, *args: Any) -> str:
        return await self.connection.execute(sql, *args)

    async def limit_lock_waits(self, lock_timeout: str) -> None:
        """From here on, a statement waits at most `lock_timeout` for a lock."""
        if self.lock_timeout != lock_timeout:
            await self.execute("SELECT set_config('lock_timeout', $1, true)", lock_timeout)
            self.lock_timeout = lock_timeout

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """A part that may fail alone: on an error only its own writes are undone."""
        self.savepoints += 1
        name = f"nd_savepoint_{self.savepoints}"
        await self.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            await self.execute(f"ROLLBACK TO SAVEPOINT {name}")
            raise
        await self.execute(f"RELEASE SAVEPOINT {name}")


@asynccontextmanager
async def transaction(
    workspace_id: int | None = None,
    *,
    lock_timeout: str | None = None,
    stateless: bool = False,
) -> AsyncIterator[Tx]:
    """One transaction; nested calls join the outer one (same workspace only).

    `lock_timeout` bounds every lock wait in it (set with the workspace, in one round
    trip). `stateless`: everything run in it is a fixed statement of our own that sets
    no session state (see `fetch_stateless`), so its connection goes back to the pool
    without the reset round trip - for the workers' hot paths. (The flag is seen by
    the whole block, as `fetch_stateless`'s is by its statement.)
    """
    outer = _current_tx.get()
    if outer is not None:
        if workspace_id is not None and outer.workspace_id not in (None, workspace_id):
            raise RuntimeError("a transaction cannot span two workspaces")
        if lock_timeout is not None:
            await outer.limit_lock_waits(lock_timeout)
        yield outer
        return
    skip_reset = _stateless.set(stateless)
    try:
        async with _connection() as connection, _begun(connection, workspace_id, lock_timeout):
            tx = Tx(workspace_id=workspace_id, connection=connection, lock_timeout=lock_timeout)
            token = _current_tx.set(tx)
            # Piccolo only reads `.connection` from what it takes for its transaction.
            piccolo_token = engine().current_transaction.set(cast(Any, _PiccoloJoin(connection)))
            try:
                yield tx
            finally:
                engine().current_transaction.reset(piccolo_token)
                _current_tx.reset(token)
    finally:
        _stateless.reset(skip_reset)
    if tx.unawaited:
        _in_background(_run_after_commit(tx.unawaited))
    await _run_after_commit(tx.after)


# A lock timeout as PostgreSQL reads one ("2s", "500ms"): it is written into the BEGIN.
_LOCK_TIMEOUT = re.compile(r"\d{1,7}(?:us|ms|s|min)?")


@asynccontextmanager
async def _begun(
    connection: asyncpg.Connection, workspace_id: int | None, lock_timeout: str | None = None
) -> AsyncIterator[None]:
    """BEGIN ... COMMIT on `connection`, or ROLLBACK on any error; a connection that cannot
    roll back (cancelled, broken) is closed, never pooled mid-transaction. BEGIN and COMMIT
    are inside: a task cancelled while awaiting either holds a connection in (or maybe in)
    a transaction."""
    try:
        await connection.execute(_begin_sql(workspace_id, lock_timeout))
        yield
        await connection.execute("COMMIT")
    except BaseException:
        try:
            await connection.execute("ROLLBACK")
        except BaseException:
            connection.terminate()
            raise
        raise


def _begin_sql(workspace_id: int | None, lock_timeout: str | None) -> str:
    """BEGIN, with the transaction's workspace and lock timeout, in one round trip: a
    simple query may hold several statements, a parametrised one only one (BEGIN was a
    round trip of its own, in every transaction)."""
    settings = []
    if workspace_id is not None:
        settings.append(f"set_config('app.workspace_id', '{int(workspace_id)}', true)")
    if lock_timeout is not None:
        if not _LOCK_TIMEOUT.fullmatch(lock_timeout):
            raise ValueError(f"not a lock timeout: {lock_timeout!r}")
        settings.append(f"set_config('lock_timeout', '{lock_timeout}', true)")
    return "BEGIN; SELECT " + ", ".join(settings) if settings else "BEGIN"


@dataclass(frozen=True)
class _PiccoloJoin:
    """What Piccolo looks for to run its queries on our transaction's connection."""

    connection: asyncpg.Connection


@asynccontextmanager
async def _connection() -> AsyncIterator[asyncpg.Connection]:
    # asyncpg's own context managers, not Piccolo's transaction: a task cancelled
    # between acquiring and BEGIN would leave Piccolo's connection out of the pool.
    pool = engine().pool
    if pool is None:  # a one-off command without a pool
        connection = await engine().get_new_connection()
        try:
            yield connection
        finally:
            await connection.close()
        return
    async with pool.acquire() as connection:
        yield connection


@asynccontextmanager
async def workspace_part(tx: Tx, workspace_id: int) -> AsyncIterator[Tx]:
    """The part of an unbound (system) transaction that works in one workspace.

    System work that must be one transaction across a person's workspaces (deleting an
    account) binds each part to its workspace as `workspace_tx` would: row-level security
    holds again inside it, and code written for a workspace transaction (events, live
    notices, a nested `workspace_tx`) runs in the part. Its after-commit work waits for the
    whole transaction. An error ends the part without unbinding: the transaction is over.
    """
    if tx.workspace_id is not None:
        raise RuntimeError("a workspace transaction has no part in another workspace")
    await tx.execute("SELECT set_config('app.workspace_id', $1, true)", str(int(workspace_id)))
    part = Tx(
        workspace_id,
        tx.connection,
        after=tx.after,
        lock_timeout=tx.lock_timeout,
        savepoints=tx.savepoints,
    )
    token = _current_tx.set(part)
    try:
        yield part
    finally:
        _current_tx.reset(token)
    await tx.execute("SELECT set_config('app.workspace_id', '', true)")
    tx.savepoints = max(tx.savepoints, part.savepoints)


def current_tx() -> Tx | None:
    """The transaction this task is in, if any."""
    return _current_tx.get()


def workspace_tx(
    workspace_id: int, *, lock_timeout: str | None = None, stateless: bool = False
) -> Any:
    """The transaction every workspace read-modify-write runs in (`transaction`'s options)."""
    return transaction(workspace_id, lock_timeout=lock_timeout, stateless=stateless)


# After-commit work no caller waits for; held here until done (the loop keeps weak references).
_background: set[asyncio.Task[None]] = set()


def _in_background(work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.get_running_loop().create_task(work)
    _background.add(task)
    task.add_done_callback(_background.discard)


async def settle() -> None:
    """Let after-commit work still under way finish (a stopping process's last notices)."""
    if _background:
        await asyncio.wait(set(_background), timeout=SETTLE_SECONDS)


async def _run_after_commit(callbacks: Sequence[AfterCommit]) -> None:
    if not callbacks:
        return
    # Notices and wake-ups are independent of each other: send them at once.
    results = await asyncio.gather(*(callback() for callback in callbacks), return_exceptions=True)
    for result in results:
        if isinstance(result, RedisConnectionError | RedisTimeoutError):
            # Redis is down: the row is the truth, and the reconcilers and the
            # pages' reconnects repair a lost wake-up or notice. One line, no traceback.
            log.warning("Redis unreachable; a wake-up or notice was not sent: %s", result)
        elif isinstance(result, BaseException):
            # The data is committed; a lost notice is repaired by the next
            # reconnect or reconciler pass, so log and go on.
            log.error("after-commit callback failed", exc_info=result)


@contextlib.contextmanager
def bound_to(workspace_id: int | None) -> Iterator[None]:
    """Within this block, `fetch` outside a transaction runs bound to `workspace_id`:
    row-level security shows it that workspace only. The web binds each request to
    the viewer's workspace (app.accounts.middleware)."""
    token = _bound.set(workspace_id)
    try:
        yield
    finally:
        _bound.reset(token)


def system() -> contextlib.AbstractContextManager[None]:
    """Declare system work inside a request: reads see every workspace again
    (a person's memberships for the switcher, an invitation of another workspace)."""
    return bound_to(None)


async def fetch(sql: str, *args: Any) -> list[asyncpg.Record]:
    """A read outside any explicit transaction (joins one when open); bound to the
    request's workspace when there is one."""
    tx = _current_tx.get()
    if tx is not None:
        return await tx.fetch(sql, *args)
    workspace_id = _bound.get()
    pool = engine().pool
    assert pool is not None
    # asyncpg's own context managers, not Piccolo's transaction: a read cancelled
    # mid-way (a closed live stream) must give its connection back, rolled back.
    async with pool.acquire() as conn:
        if workspace_id is None:
            return await conn.fetch(sql, *args)
        async with _begun(conn, workspace_id):
            return await conn.fetch(sql, *args)


async def fetch_stateless(sql: str, *args: Any) -> list[asyncpg.Record]:
    """`fetch` for a fixed statement of our own that sets no session state (no SET,
    set_config(..., false), session advisory lock, LISTEN or cursor): its connection goes
    back to the pool without the reset round trip. For hot paths (the stream scheduler's
    claim and writes); anything else uses `fetch`."""
    if _current_tx.get() is not None or _bound.get() is not None:
        return await fetch(sql, *args)
    pool = engine().pool
    assert pool is not None
    token = _stateless.set(True)
    try:
        async with pool.acquire() as conn:
            return await conn.fetch(sql, *args)
    finally:
        _stateless.reset(token)


async def fetchrow(sql: str, *args: Any) -> asyncpg.Record | None:
    rows = await fetch(sql, *args)
    return rows[0] if rows else None


async def fetchval(sql: str, *args: Any) -> Any:
    row = await fetchrow(sql, *args)
    return None if row is None else row[0]


async def execute_ddl(sql: str) -> None:
    """Run DDL inside the migration's transaction (for raw-SQL migrations)."""
    from piccolo.engine import engine_finder

    db = engine_finder()
    assert isinstance(db, PostgresEngine)
    current = db.current_transaction.get()
    if current is None:
        raise RuntimeError("migrations run inside Piccolo's migration transaction")
    await current.connection.execute(sql)


def sql_migration(
    migration_id: str, description: str, sql: str
) -> Callable[[], Awaitable[MigrationManager]]:
    """A raw-SQL migration's `forwards`, which Piccolo calls: `sql` in its migration's
    transaction. Every migration here is one (`forwards = sql_migration(ID, DESCRIPTION, SQL)`)."""
    # Piccolo's migration machinery is imported only where migrations are read.
    from piccolo.apps.migrations.auto.migration_manager import MigrationManager

    async def forwards() -> MigrationManager:
        manager = MigrationManager(
            migration_id=migration_id, app_name="newsdesk", description=description
        )

        async def run() -> None:
            await execute_ddl(sql)

        manager.add_raw(run)
        return manager

    return forwards


async def migrate_database(settings: Settings) -> None:
    """Migrate as the tables' owner, then grant the app's role what it needs."""
    owner = make_engine(settings, settings.migration_url)
    await owner.start_connection_pool(min_size=1, max_size=2)
    try:
        await migrate(owner)
        await grant_app_role(owner, settings)
        for table in await unprotected_tables(owner):
            log.error(
                "table %s has a workspace_id but no row-level security: "
                "SELECT newsdesk_isolate_workspace('%s');",
                table,
                table,
            )
    finally:
        await owner.close_connection_pool()


# Tables the app's role is granted nothing on: Piccolo's ledger, and the search indexes that
# only SECURITY DEFINER functions read (m0024, m0025: no row security, so they filter
# themselves).
PRIVATE_TABLES = ("migration", "article_search", "feed_item_search")


async def unprotected_tables(db: PostgresEngine) -> list[str]:
    """Tables with a workspace_id column that lack the workspace_isolation policy (but for
    the private tables, which the app cannot read at all)."""
    assert db.pool is not None
    async with db.pool.acquire() as conn:
        rows = await conn.fetch(
            """
            SELECT c.relname FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a
              ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
            WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
              AND c.relname <> ALL($1::text[])
              AND NOT (c.relrowsecurity AND c.relforcerowsecurity AND EXISTS (
                SELECT 1 FROM pg_policy p
                WHERE p.polrelid = c.oid AND p.polname = 'workspace_isolation'))
            ORDER BY c.relname
            """,
            list(PRIVATE_TABLES),
        )
    return [row["relname"] for row in rows]


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


async def grant_app_role(owner: PostgresEngine, settings: Settings) -> None:
    """Give DATABASE_URL's role the rows of every table, now and later (default privileges).

    Nothing to do when the app connects as the owner (one role: the forced
    policies still hold it, unless it is a superuser, which bypasses them).
    """
    role = unquote(urlsplit(settings.database_url).username or "")
    assert owner.pool is not None
    async with owner.pool.acquire() as conn:
        me = await conn.fetchval("SELECT current_user")
        if not role or role == me:
            log.warning("the app connects as the tables' owner %s: use a role of its own", me)
            return
        found = await conn.fetchrow(
            "SELECT rolsuper OR rolbypassrls AS bypasses FROM pg_roles WHERE rolname = $1", role
        )
        if found is None:
            raise RuntimeError(
                f"the role {role} of DATABASE_URL does not exist; create it "
                "(CREATE ROLE ... LOGIN; see docs/configuration.md)"
            )
        if found["bypasses"]:
            log.warning("the app's role %s bypasses row-level security", role)
        app, schema = _quoted(role), _quoted(await conn.fetchval("SELECT current_schema()"))
        rows = "SELECT, INSERT, UPDATE, DELETE"
        async with conn.transaction():
            await conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {app}")
            await conn.execute(f"GRANT {rows} ON ALL TABLES IN SCHEMA {schema} TO {app}")
            await conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {app}")
            for private in PRIVATE_TABLES:
                await conn.execute(f"REVOKE ALL ON TABLE {schema}.{_quoted(private)} FROM {app}")
            await conn.execute(
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT {rows} ON TABLES TO {app}"
            )
            await conn.execute(
                f"ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} "
                f"GRANT USAGE, SELECT ON SEQUENCES TO {app}"
            )


async def migrate(db: PostgresEngine) -> None:
    """Apply every migration in migrations/ that has not run yet."""
    from piccolo.apps.migrations.commands.forwards import run_forwards
    from piccolo.apps.migrations.tables import Migration

    import piccolo_conf

    piccolo_conf.DB = db
    Migration._meta.db = db
    chatter = io.StringIO()  # Piccolo prints its progress; keep it for the log
    with contextlib.redirect_stdout(chatter):
        result = await run_forwards(app_name="newsdesk")
    log.info("migrations: %s", " ".join(chatter.getvalue().split()))
    if not result.success:
        raise RuntimeError(f"migration failed: {result.message}")
