"""Fixtures for tests that reach the fake web: import them into a conftest.

`site` is a running FakeSite; `site_egress` makes the process's Egress one
that may reach it (and nothing else on loopback), with budgets out of the
way unless a test passes its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis

from app.egress import Egress, use_egress
from tests.fakes.site import FakeSite, serve_site
from tests.fixtures import make_test_settings

MakeSiteEgress = Callable[..., Egress]


@pytest.fixture
async def site() -> AsyncIterator[FakeSite]:
    async with serve_site() as running:
        yield running


@pytest.fixture
async def site_egress(site: FakeSite, redis: Redis) -> AsyncIterator[MakeSiteEgress]:
    """site_egress(**settings overrides) -> the process's Egress, able to reach `site`."""
    made: list[Egress] = []

    def make(*, budget_wait: float = 5.0, **overrides: object) -> Egress:
        values: dict[str, object] = {
            "egress_allow": [site.allow()],
            "egress_host_rate": 1000.0,
            "egress_host_burst": 1000,
            **overrides,
        }
        instance = Egress(make_test_settings(**values), redis, budget_wait=budget_wait)
        made.append(instance)
        use_egress(instance)
        return instance

    make()
    yield make
    use_egress(None)
    for instance in made:
        await instance.aclose()
