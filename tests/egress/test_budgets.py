"""Per-host budgets in Redis: token bucket, in-flight cap, and Retry-After hold-offs."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

import pytest
from redis.asyncio import Redis

from app.egress import EgressBlocked, HttpStatusError, RateLimited
from app.egress.budgets import Budgets
from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, Seen, serve
from tests.fixtures import make_test_settings

HOST = "127.0.0.1"


def _settings(port: int, budget: str | None = None) -> dict[str, object]:
    values: dict[str, object] = {"egress_allow": [f"{HOST}:{port}"]}
    if budget is not None:
        values["egress_host_budgets"] = [f"{HOST}={budget}"]
    return values


def _inflight_key() -> str:
    return make_test_settings().redis_key("egress", "inflight", HOST)


async def test_a_burst_beyond_the_budget_is_rate_limited(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=0, **_settings(server.port, "1/2/4"))
        await client.fetch(server.url())
        await client.fetch(server.url())
        with pytest.raises(RateLimited) as caught:
            await client.fetch(server.url())
    assert caught.value.retry_after is not None
    assert 0 < caught.value.retry_after <= 1
    assert len(server.requests) == 2


async def test_a_short_wait_for_a_token_is_waited_out(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=1, **_settings(server.port, "10/1/4"))
        started = time.monotonic()
        for _ in range(3):
            await client.fetch(server.url())
    assert time.monotonic() - started >= 0.18  # two refills of 0.1 s
    assert len(server.requests) == 3


async def test_two_egress_instances_share_one_budget(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        first = make_egress(budget_wait=0, **_settings(server.port, "0.1/1/4"))
        second = make_egress(budget_wait=0, **_settings(server.port, "0.1/1/4"))
        await first.fetch(server.url())
        with pytest.raises(RateLimited):
            await second.fetch(server.url())
    assert len(server.requests) == 1


async def test_spellings_of_one_host_share_its_budget(make_egress: MakeEgress) -> None:
    """Case, IDNA and the root dot do not make a second host: `example.org.` is `example.org`."""
    async with serve(Reply()) as server:
        names = ["news.test", "NEWS.Test.", "news.test."]
        resolver = fixed_resolver({name.lower(): [HOST] for name in names})
        client = make_egress(
            resolver=resolver,
            budget_wait=0,
            egress_allow=[f"{HOST}:{server.port}"],
            egress_host_budgets=["News.Test.=0.1/1/4"],
        )
        await client.fetch(f"http://{names[0]}:{server.port}/")
        for name in names[1:]:
            with pytest.raises(RateLimited, match=r"news\.test is spent"):
                await client.fetch(f"http://{name}:{server.port}/")
    assert len(server.requests) == 1


async def test_budget_false_skips_the_budget(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=0, **_settings(server.port, "0.1/1/1"))
        for _ in range(3):
            await client.fetch(server.url(), budget=False)
    assert len(server.requests) == 3


async def test_the_in_flight_cap_holds_across_instances(make_egress: MakeEgress) -> None:
    def handler(seen: Seen) -> Reply:
        return Reply(delay=0.3 if seen.target == "/slow" else 0)

    async with serve(handler) as server:
        first = make_egress(**_settings(server.port, "100/100/1"))
        second = make_egress(budget_wait=0.1, **_settings(server.port, "100/100/1"))
        slow = asyncio.create_task(first.fetch(server.url("/slow")))
        await asyncio.wait_for(server.connected.wait(), 2)
        with pytest.raises(RateLimited, match="already open") as caught:
            await second.fetch(server.url())
        await slow
        # The slot is free again once the first response is read.
        await second.fetch(server.url())
    assert caught.value.retry_after is None
    assert len(server.requests) == 2


async def test_a_request_waits_for_a_slot_within_its_budget_wait(make_egress: MakeEgress) -> None:
    async with serve(Reply(delay=0.2)) as server:
        client = make_egress(budget_wait=2, **_settings(server.port, "100/100/1"))
        started = time.monotonic()
        await asyncio.gather(client.fetch(server.url()), client.fetch(server.url()))
    assert time.monotonic() - started >= 0.38  # one after the other
    assert len(server.requests) == 2


async def test_slots_are_released_after_success_and_failure(
    make_egress: MakeEgress, redis: Redis
) -> None:
    def handler(seen: Seen) -> Reply:
        return Reply(500) if seen.target == "/fail" else Reply()

    async with serve(handler) as server:
        client = make_egress(**_settings(server.port, "100/100/1"))
        await client.fetch(server.url())
        with pytest.raises(HttpStatusError):
            await client.fetch(server.url("/fail"))
        assert await redis.zcard(_inflight_key()) == 0


async def test_an_expired_lease_of_a_crashed_process_frees_its_slot(
    make_egress: MakeEgress, redis: Redis
) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=0, **_settings(server.port, "100/100/1"))
        # A live holder keeps the only slot...
        await redis.zadd(_inflight_key(), {"alive": time.time() * 1000 + 60_000})
        with pytest.raises(RateLimited):
            await client.fetch(server.url())
        # ...a holder whose lease ran out (it crashed) does not.
        await redis.zadd(_inflight_key(), {"alive": time.time() * 1000 - 1})
        await client.fetch(server.url())
    assert len(server.requests) == 1


async def test_retry_after_seconds_holds_the_host_for_every_process(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply(429, [("Retry-After", "120")])) as server:
        first = make_egress(**_settings(server.port))
        second = make_egress(**_settings(server.port))
        with pytest.raises(RateLimited) as answered:
            await first.fetch(server.url())
        with pytest.raises(RateLimited, match="asked us to wait") as held:
            await second.fetch(server.url())
    assert answered.value.retry_after == 120
    assert held.value.retry_after is not None
    assert 118 < held.value.retry_after <= 120
    assert len(server.requests) == 1  # the second never went out


async def test_retry_after_as_a_date_on_503(make_egress: MakeEgress) -> None:
    when = formatdate(time.time() + 90, usegmt=True)
    async with serve(Reply(503, [("Retry-After", when)])) as server:
        with pytest.raises(RateLimited) as caught:
            await make_egress(**_settings(server.port)).fetch(server.url())
    assert caught.value.retry_after is not None
    assert 87 < caught.value.retry_after <= 90


async def test_429_without_retry_after_is_rate_limited_but_does_not_hold(
    make_egress: MakeEgress,
) -> None:
    async with serve(Reply(429)) as server:
        client = make_egress(**_settings(server.port))
        for _ in range(2):
            with pytest.raises(RateLimited) as caught:
                await client.fetch(server.url())
            assert caught.value.retry_after is None
    assert len(server.requests) == 2


async def test_503_without_retry_after_is_a_status_error(make_egress: MakeEgress) -> None:
    async with serve(Reply(503)) as server:
        with pytest.raises(HttpStatusError) as caught:
            await make_egress(**_settings(server.port)).fetch(server.url())
    assert caught.value.status == 503


async def test_a_short_hold_is_waited_out(make_egress: MakeEgress, redis: Redis) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=1, **_settings(server.port))
        await Budgets(redis, make_test_settings()).hold(HOST, 0.2)
        started = time.monotonic()
        await client.fetch(server.url())
    assert time.monotonic() - started >= 0.15


async def test_refused_urls_spend_no_budget(make_egress: MakeEgress) -> None:
    async with serve(Reply()) as server:
        client = make_egress(budget_wait=0, **_settings(server.port, "0.1/1/1"))
        with pytest.raises(EgressBlocked):
            await client.fetch("http://127.0.0.1:1/")
        await client.fetch(server.url())
