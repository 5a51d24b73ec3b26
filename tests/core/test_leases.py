"""The lease heartbeat (app.core.leases): renews while the work runs, says when the lease is gone."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from app.core import leases


async def _until(check: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)


async def test_renews_every_beat_while_the_work_runs() -> None:
    calls = 0

    async def renew() -> bool:
        nonlocal calls
        calls += 1
        return True

    async with leases.heartbeat(renew, every=0.05, lease_seconds=0.5) as lease:
        await asyncio.sleep(1.0)  # twice a lease: only the renewals keep it
        assert not lease.lost
        lease.check()
    assert calls >= 5
    assert lease.renewed == calls
    await asyncio.sleep(0.2)
    assert lease.renewed == calls  # the heartbeat stopped with the block


async def test_a_row_that_is_no_longer_ours_loses_the_lease() -> None:
    async def renew() -> bool:
        return False

    async with leases.heartbeat(renew, every=0.02, lease_seconds=10) as lease:
        await _until(lambda: lease.lost)
        with pytest.raises(leases.LeaseLost):
            lease.check()


async def test_a_failing_renewal_is_retried_and_lost_only_after_a_whole_lease() -> None:
    calls = 0
    succeeded_at = 0.0

    async def renew() -> bool:
        nonlocal calls, succeeded_at
        calls += 1
        if calls == 3:
            succeeded_at = time.monotonic()
            return True
        raise ConnectionError("database restarting")

    async with leases.heartbeat(renew, every=0.05, lease_seconds=1.0) as lease:
        await _until(lambda: calls >= 2)  # two failures, well within the lease
        assert not lease.lost
        await _until(lambda: calls >= 3)  # the third beat succeeds
        assert lease.renewed == 1
        assert not lease.lost
        await _until(lambda: lease.lost)  # failures only, for longer than a lease
        assert time.monotonic() - succeeded_at >= 1.0


async def test_without_renewals_the_lease_ends_after_its_time() -> None:
    async def renew() -> bool:  # pragma: no cover - the beat never comes
        return True

    async with leases.heartbeat(renew, every=10, lease_seconds=0.05) as lease:
        assert not lease.lost
        await asyncio.sleep(0.08)
        assert lease.lost
