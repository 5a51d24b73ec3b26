"""Sign-in throttling: per address, per account and address, and a slow per-account limit
that a browser the person signed in with before is exempt from."""

from __future__ import annotations

import logging

import httpx
import pytest
from arq.connections import ArqRedis

from app.accounts import services
from app.accounts.throttle import (
    DEVICE_COOKIE,
    SignInThrottle,
    device_cookie_value,
    device_user,
)
from app.accounts.types import AccountError
from app.core import redis as core_redis
from tests.factories import PASSWORD, sign_in
from tests.workers.processes import free_port


async def _fail(email: str, ip: str, times: int = 1) -> None:
    for _ in range(times):
        with pytest.raises(AccountError) as failed:
            await services.sign_in(email, "wrong guess!", ip=ip, user_agent="")
        assert failed.value.status == 400


async def _spread_guesses(email: str, count: int) -> None:
    """`count` wrong passwords from many addresses, none of them over its own limits."""
    for i in range(count):
        await _fail(email, f"198.51.100.{i // 2 + 1}")


async def test_guesses_from_one_address_do_not_block_the_account_elsewhere(people, settings):
    person = await people.member("editor")
    await _fail(person.email, "203.0.113.7", settings.login_attempts_per_15min)
    with pytest.raises(AccountError) as blocked:
        await services.sign_in(person.email, PASSWORD, ip="203.0.113.7", user_agent="")
    assert blocked.value.status == 429
    session = await services.sign_in(person.email, PASSWORD, ip="192.0.2.10", user_agent="")
    assert session.user_id == person.user_id


async def test_one_address_guessing_many_accounts_is_stopped(people, settings):
    person = await people.member("editor")
    for i in range(settings.login_attempts_per_15min * 5):
        await _fail(f"nobody{i}@example.org", "203.0.113.9")
    with pytest.raises(AccountError) as blocked:
        await services.sign_in(person.email, PASSWORD, ip="203.0.113.9", user_agent="")
    assert blocked.value.status == 429
    assert "Try again in 15 minutes" in blocked.value.message


async def test_guessing_spread_over_many_addresses_meets_the_slow_account_limit(people, settings):
    person = await people.member("editor")
    await _spread_guesses(person.email, settings.login_attempts_per_account_hour)
    with pytest.raises(AccountError) as blocked:
        await services.sign_in(person.email, PASSWORD, ip="192.0.2.44", user_agent="")
    assert blocked.value.status == 429
    assert "Try again in 60 minutes" in blocked.value.message


async def test_the_owner_on_a_known_browser_signs_in_while_the_account_is_attacked(
    client, new_client, people, settings
):
    owner = await people.member("owner")
    assert (await sign_in(client, owner.email)).status_code == 303
    assert device_user(client.cookies.get(DEVICE_COOKIE)) == owner.user_id
    await _spread_guesses(owner.email, settings.login_attempts_per_account_hour)

    known = await sign_in(client, owner.email)
    assert known.status_code == 303
    assert known.headers["location"] == "/"

    unknown = await sign_in(new_client(), owner.email)
    assert unknown.status_code == 429
    assert "Too many failed sign-ins. Try again in 60 minutes." in unknown.text


async def test_a_device_cookie_of_another_person_or_forged_does_not_exempt(
    new_client, people, settings
):
    owner = await people.member("owner")
    other = await people.member("editor", owner.workspace_id)
    await _spread_guesses(owner.email, settings.login_attempts_per_account_hour)
    for value in (
        device_cookie_value(other.user_id),
        f"{owner.user_id}.1700000000.{'0' * 64}",
        device_cookie_value(owner.user_id, now=0),  # older than a year
    ):
        browser = new_client()
        browser.cookies.set(DEVICE_COOKIE, value, path="/login")
        assert (await sign_in(browser, owner.email)).status_code == 429


async def test_sign_in_works_without_redis_and_says_so_in_the_log(web_app, people, caplog):
    person = await people.member("editor")
    down = ArqRedis(host="127.0.0.1", port=free_port())  # nothing listens there
    saved = core_redis._client
    core_redis.use_client(down)
    transport = httpx.ASGITransport(app=web_app, client=("127.0.0.1", 40000))
    try:
        async with httpx.AsyncClient(
            transport=transport, base_url="http://testserver.local"
        ) as browser:
            with caplog.at_level(logging.WARNING, logger="app.accounts.throttle"):
                wrong = await sign_in(browser, person.email, "not the password")
                right = await sign_in(browser, person.email)
    finally:
        core_redis._client = saved
        await down.aclose()
    assert wrong.status_code == 400
    assert right.status_code == 303
    lines = [r for r in caplog.records if r.name == "app.accounts.throttle"]
    assert lines
    assert all("Redis is unavailable" in r.getMessage() for r in lines)
    assert all(r.exc_info is None for r in lines)


async def test_the_wait_is_said_in_minutes_rounded_up_singular_for_one(people, settings, redis):
    person = await people.member("editor")
    await _fail(person.email, "203.0.113.8", settings.login_attempts_per_15min)
    key = SignInThrottle(person.email, "203.0.113.8").account_address.key
    await redis.expire(key, 45)
    with pytest.raises(AccountError) as blocked:
        await services.sign_in(person.email, PASSWORD, ip="203.0.113.8", user_agent="")
    assert blocked.value.message == "Too many failed sign-ins. Try again in 1 minute."
    await redis.expire(key, 61)
    with pytest.raises(AccountError) as blocked:
        await services.sign_in(person.email, PASSWORD, ip="203.0.113.8", user_agent="")
    assert blocked.value.message == "Too many failed sign-ins. Try again in 2 minutes."
