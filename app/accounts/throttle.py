"""Sign-in throttling that slows guessing without locking the real owner out.

Failed sign-ins are counted in Redis under three keys:

- per client address (IPv6 per /64): 5 x LOGIN_ATTEMPTS_PER_15MIN in 15 minutes,
  since one address (an office, a NAT) may hold several people;
- per account and address: LOGIN_ATTEMPTS_PER_15MIN in 15 minutes;
- per account from everywhere: LOGIN_ATTEMPTS_PER_ACCOUNT_HOUR in an hour, the slow
  limit against guessing spread over many addresses.

Someone guessing from elsewhere fills only the last key, and a browser the person
signed in with before carries a signed device cookie that skips it: the owner at
their own desk still gets in while the account is under attack.

Redis down: the counters are skipped with a log line (fail open), never a 500;
the password check and argon2's cost still stand.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import time
from dataclasses import dataclass

from redis.exceptions import RedisError

from app.core import redis
from app.core.config import active

log = logging.getLogger(__name__)

ADDRESS_WINDOW = 15 * 60
ACCOUNT_WINDOW = 60 * 60

DEVICE_COOKIE = "nd_device"
DEVICE_DAYS = 365
_DEVICE_LABEL = b"newsdesk device v1"  # change the version to forget every known device


def network_of(ip: str) -> str:
    """IPv6 clients are throttled per /64, since one host holds many addresses."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return "unknown"
    if address.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return ip


@dataclass(frozen=True)
class _Limit:
    key: str
    limit: int
    window: int


class SignInThrottle:
    """The three counters of one sign-in attempt (an email from an address)."""

    def __init__(self, email: str, ip: str) -> None:
        settings = active()
        # Hashed: the key holds no address a person typed, and its length is bounded.
        account = hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]
        network = network_of(ip)
        per_address = settings.login_attempts_per_15min
        self.address = _Limit(
            settings.redis_key("login-fail", "ip", network), per_address * 5, ADDRESS_WINDOW
        )
        self.account_address = _Limit(
            settings.redis_key("login-fail", "acct-ip", account, network),
            per_address,
            ADDRESS_WINDOW,
        )
        self.account = _Limit(
            settings.redis_key("login-fail", "acct", account),
            settings.login_attempts_per_account_hour,
            ACCOUNT_WINDOW,
        )

    def _limits(self, *, known_device: bool) -> list[_Limit]:
        if known_device:
            return [self.address, self.account_address]
        return [self.address, self.account_address, self.account]

    async def wait_seconds(self, *, known_device: bool) -> int:
        """Seconds until this attempt may be made; 0 when it may be made now."""
        limits = self._limits(known_device=known_device)
        try:
            async with redis.client().pipeline(transaction=False) as pipe:
                for limit in limits:
                    pipe.get(limit.key)
                    pipe.ttl(limit.key)
                answers = await pipe.execute()
        except RedisError as error:
            log.warning("sign-in throttle skipped, Redis is unavailable: %s", error)
            return 0
        wait = 0
        for i, limit in enumerate(limits):
            count, ttl = int(answers[2 * i] or 0), int(answers[2 * i + 1])
            if count >= limit.limit:
                wait = max(wait, ttl if ttl > 0 else limit.window)
        return wait

    async def failed(self) -> None:
        try:
            async with redis.client().pipeline(transaction=True) as pipe:
                for limit in (self.address, self.account_address, self.account):
                    pipe.incr(limit.key)
                    pipe.expire(limit.key, limit.window, nx=True)
                await pipe.execute()
        except RedisError as error:
            log.warning("failed sign-in not counted, Redis is unavailable: %s", error)

    async def succeeded(self) -> None:
        """The person knew the password: their own address's count starts again."""
        await self._forget(self.account_address.key)

    async def forget_account(self) -> None:
        """After a password reset: the slow per-account count starts again too."""
        await self._forget(self.account_address.key, self.account.key)

    async def _forget(self, *keys: str) -> None:
        try:
            await redis.client().delete(*keys)
        except RedisError as error:
            log.warning("sign-in counters not reset, Redis is unavailable: %s", error)


async def reset_requests_wait(ip: str) -> int:
    """Count a "Forgot password?" request from `ip`; seconds to wait when over the limit.

    Each account gets at most a few mails an hour anyway (app.accounts.recovery);
    this keeps one address from mailing every account of the instance.
    """
    settings = active()
    key = settings.redis_key("reset-ask", "ip", network_of(ip))
    try:
        async with redis.client().pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, ADDRESS_WINDOW, nx=True)
            pipe.ttl(key)
            count, _, ttl = await pipe.execute()
    except RedisError as error:
        log.warning("reset request not counted, Redis is unavailable: %s", error)
        return 0
    if int(count) > settings.login_attempts_per_15min:
        return int(ttl) if int(ttl) > 0 else ADDRESS_WINDOW
    return 0


def minutes_of(seconds: int) -> int:
    return max(1, (seconds + 59) // 60)


# Known devices -----------------------------------------------------------------
# A long-lived cookie set at a successful sign-in: `<user id>.<unix time>.<HMAC>`.
# It proves this browser signed in as that person before; it grants nothing else.


def _device_key() -> bytes:
    secret = active().secret_key.get_secret_value().encode()
    return hmac.new(secret, _DEVICE_LABEL, hashlib.sha256).digest()


def _device_signature(payload: str) -> str:
    return hmac.new(_device_key(), payload.encode(), hashlib.sha256).hexdigest()


def device_cookie_value(user_id: int, *, now: float | None = None) -> str:
    payload = f"{user_id}.{int(now if now is not None else time.time())}"
    return f"{payload}.{_device_signature(payload)}"


def device_user(value: str | None, *, now: float | None = None) -> int | None:
    """The person a device cookie was set for, or None if it is not one of ours or too old."""
    if not value or value.count(".") != 2:
        return None
    user, issued, signature = value.split(".")
    if not (user.isdigit() and issued.isdigit()):
        return None
    if not hmac.compare_digest(signature, _device_signature(f"{user}.{issued}")):
        return None
    age = (now if now is not None else time.time()) - int(issued)
    if age > DEVICE_DAYS * 86400:
        return None
    return int(user)
