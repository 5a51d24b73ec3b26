"""Egress instances on the test Redis, closed after each test."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable, Sequence
from ipaddress import ip_address

import pytest
from redis.asyncio import Redis

from app.egress import Egress
from app.egress.network import Resolver, system_resolver
from tests.fixtures import make_test_settings

MakeEgress = Callable[..., Egress]


def fixed_resolver(answers: dict[str, Sequence[str]]) -> Resolver:
    """A resolver that knows only `answers` and IP literals; names it was asked in `.calls`."""
    calls: list[str] = []

    async def resolve(host: str, port: int) -> Sequence[str]:
        with contextlib.suppress(ValueError):
            return [str(ip_address(host))]
        calls.append(host)
        if host not in answers:
            raise OSError(f"{host} is unknown to this test")
        return answers[host]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


@pytest.fixture
async def make_egress(redis: Redis) -> AsyncIterator[MakeEgress]:
    """make_egress(resolver=..., budget_wait=..., **settings overrides) -> Egress."""
    made: list[Egress] = []

    def make(
        *,
        resolver: Resolver = system_resolver,
        budget_wait: float = 2.0,
        ssl_context: ssl.SSLContext | None = None,
        **overrides: object,
    ) -> Egress:
        # Budgets stay out of the way unless a test sets them.
        overrides = {"egress_host_rate": 1000.0, "egress_host_burst": 1000, **overrides}
        instance = Egress(
            make_test_settings(**overrides),
            redis,
            resolver=resolver,
            ssl_context=ssl_context,
            budget_wait=budget_wait,
        )
        made.append(instance)
        return instance

    yield make
    for instance in made:
        await instance.aclose()
