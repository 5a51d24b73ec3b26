"""Short leases kept alive by a heartbeat while the work runs.

Work that PostgreSQL hands to one worker (a topic source's run, an analysis,
an import item) is claimed with a short lease, `lease_until = now() +
LEASE_SECONDS` (60 s), and held with `heartbeat()` for as long as it runs:

    claim = await claim_row(row_id)               # sets lease_until, as before
    async with leases.heartbeat(lambda: renew(row_id, claim)) as lease:
        for item in items:
            lease.check()                          # raises LeaseLost once it is gone
            await work_on(item)
    # leaving the block stops the heartbeat; the finishing write clears the lease

`renew()` is the caller's one query, e.g. `UPDATE ... SET lease_until = now()
+ make_interval(secs => 60) WHERE id = $1 AND <the claim is still ours>
RETURNING id`. It returns True while the row is still ours and False once it
is not (someone else took it, it was deleted). It runs every `RENEW_SECONDS`
(20 s), so a worker that dies (`kill -9`, a lost machine) leaves claims that
expire within about a minute, and the reconciler crons hand them out again.

A renewal that raises (the database is restarting) is logged and tried again
at the next beat; the lease counts as lost only once no renewal has succeeded
for a whole `LEASE_SECONDS`, because by then another worker may hold the row.

The API is `heartbeat()`, `Lease` (`.lost`, `.check()`, `.renewed`) and
`LeaseLost`; use `LEASE_SECONDS` in the claim's SQL so both sides agree.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress

log = logging.getLogger(__name__)

LEASE_SECONDS = 60.0
RENEW_SECONDS = 20.0

Renew = Callable[[], Awaitable[bool]]


class LeaseLost(Exception):
    """The work's lease ran out or was taken: stop, and write nothing as the holder."""


class Lease:
    """What the heartbeat knows about the lease; the work reads it between steps."""

    def __init__(self, name: str, lease_seconds: float) -> None:
        self.name = name
        self._lease_seconds = lease_seconds
        self._valid_until = time.monotonic() + lease_seconds
        self._lost = False
        self.renewed = 0  # successful renewals so far

    @property
    def lost(self) -> bool:
        """True once the row is no longer ours, or no renewal succeeded for a whole lease."""
        if not self._lost and time.monotonic() > self._valid_until:
            self._lose(f"no renewal succeeded for {self._lease_seconds:.0f} s")
        return self._lost

    def check(self) -> None:
        """Raise `LeaseLost` if the lease is gone; call it before each step of the work."""
        if self.lost:
            raise LeaseLost(self.name)

    def _renewed(self) -> None:
        self._valid_until = time.monotonic() + self._lease_seconds
        self.renewed += 1

    def _lose(self, why: str) -> None:
        if not self._lost:
            self._lost = True
            log.warning("lease %s lost: %s", self.name, why)


@asynccontextmanager
async def heartbeat(
    renew: Renew,
    *,
    name: str = "work",
    every: float = RENEW_SECONDS,
    lease_seconds: float = LEASE_SECONDS,
) -> AsyncIterator[Lease]:
    """Renew a lease every `every` seconds while the block runs; yields its `Lease`.

    Enter it right after the claim (the claim's lease counts as the first
    renewal). The heartbeat stops when the block is left, however it is left.
    """
    lease = Lease(name, lease_seconds)
    # Most work ends before its first beat (a stream poll takes milliseconds): a timer costs
    # a fraction of a task started and cancelled per claim, so the task starts when due.
    beat: asyncio.Task[None] | None = None

    def start() -> None:
        nonlocal beat
        beat = asyncio.create_task(_beat(lease, renew, every), name=f"lease:{name}")

    timer = asyncio.get_running_loop().call_later(every, start)
    try:
        yield lease
    finally:
        timer.cancel()
        if beat is not None:
            beat.cancel()
            with suppress(asyncio.CancelledError):
                await beat


async def _beat(lease: Lease, renew: Renew, every: float) -> None:
    """Renew now (the first beat is due), then every `every` s, until the lease is gone."""
    failing = False
    while not lease.lost:  # too late: renewing now could take back a row someone else holds
        try:
            held = await renew()
        except Exception as error:  # an outage; the next beat tries again
            if not failing:
                log.warning("lease %s: renewal failed, retrying: %r", lease.name, error)
            failing = True
        else:
            if failing:
                log.info("lease %s: renewed again", lease.name)
            failing = False
            if not held:
                lease._lose("the row is no longer ours")
                return
            lease._renewed()
        await asyncio.sleep(every)
