"""A service this process cannot reach: Redis or PostgreSQL, during a restart or an outage.

`Outage` is the bookkeeping: a back-off for retries, one log line when the outage starts
and one when it ends (not a traceback per request or job). `database` is this process's
view of PostgreSQL: whoever meets it unreachable reports it (`failed`), one probe with
back-off watches for its return, and live streams wait for that (`back`) instead of each
knocking on their own. docs/decisions/database.md "When PostgreSQL is away".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import random
import time

from app.core import db

log = logging.getLogger(__name__)

BACKOFF_FIRST = 0.5
BACKOFF_MAX = 5.0


class Outage:
    """How long a service has been unreachable, the next back-off, and logging it once."""

    def __init__(self, service: str, where: str, meanwhile: str = "") -> None:
        self.service = service
        self.where = where
        self.meanwhile = meanwhile  # what goes on during the outage, for the log line
        self.since: float | None = None
        self._delay = BACKOFF_FIRST

    def failed(self, error: BaseException) -> float:
        """Note a failure; the seconds to wait before trying again."""
        if self.since is None:
            self.since = time.monotonic()
            self._delay = BACKOFF_FIRST
            log.warning(
                "%s at %s is unreachable (%s); waiting for it, retrying with back-off.%s",
                self.service,
                self.where,
                str(error) or type(error).__name__,
                f" {self.meanwhile}" if self.meanwhile else "",
            )
        delay = self._delay * random.uniform(0.8, 1.2)
        self._delay = min(self._delay * 2, BACKOFF_MAX)
        return delay

    def ended(self) -> bool:
        """Note a success; True if it ended an outage."""
        if self.since is None:
            return False
        log.warning(
            "%s at %s is reachable again after %.0f s; resuming.",
            self.service,
            self.where,
            time.monotonic() - self.since,
        )
        self.since = None
        return True


class DatabaseOutage:
    """PostgreSQL as this process sees it: reachable, or away until one probe reaches it."""

    def __init__(self) -> None:
        self.outage: Outage | None = None
        self._probe: asyncio.Task[None] | None = None

    @property
    def away(self) -> bool:
        probe = self._probe
        return probe is not None and not probe.done() and not probe.get_loop().is_closed()

    def failed(self, error: BaseException) -> None:
        """PostgreSQL could not be reached: log it (once) and watch for its return."""
        if self.away:
            return
        self.outage = Outage(
            "PostgreSQL",
            db.where(),
            "Pages answer 503, live pages wait, jobs end and their work is picked up again"
            " from PostgreSQL once it is back.",
        )
        while isinstance(error, BaseExceptionGroup):  # a TaskGroup's: name what it holds
            error = error.exceptions[0]
        self.outage.failed(error)
        # A context of its own: not the request's workspace binding or transaction.
        self._probe = asyncio.get_running_loop().create_task(
            self._watch(), context=contextvars.Context()
        )

    async def back(self, timeout: float | None = None) -> bool:
        """Wait until PostgreSQL answers again (True), or `timeout` seconds (False)."""
        if not self.away:
            return True
        assert self._probe is not None
        done, _ = await asyncio.wait({self._probe}, timeout=timeout)
        return bool(done)

    async def _watch(self) -> None:
        assert self.outage is not None
        while True:
            await asyncio.sleep(self.outage.failed(ConnectionError("still unreachable")))
            with contextlib.suppress(Exception):  # whatever it is, it cannot be used yet
                await db.fetchval("SELECT 1")
                self.outage.ended()
                return


database = DatabaseOutage()


class QuietPoolFloor(logging.Filter):
    """asyncpg's pool logs a traceback each time it cannot reopen its idle connection
    (every few seconds of an outage): while the outage is known and logged, drop those."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Failed to restore the pool connection floor"):
            return True
        if database.away:
            return False
        record.exc_info, record.exc_text = None, None  # one line: the outage is ours to say
        return True
