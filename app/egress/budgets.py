"""Per-host budgets in Redis, shared by every process on every machine.

One Lua script decides a request atomically, on Redis's clock:

1. a hold-off (`egress:hold:<host>`, set from a Retry-After) refuses until it ends;
2. the in-flight cap: a sorted set (`egress:inflight:<host>`) of holder ids
   scored by lease expiry; expired holders (a crashed process) are dropped
   before counting, so a slot can leak for at most one lease;
3. a token bucket (`egress:bucket:<host>`: tokens and the time they were
   counted) refilled at `rate` per second up to `burst`.

Only when all three agree is a token spent and a slot taken, so a request
that waits holds nothing. The caller waits as long as the script says (or
polls, for a slot) up to a bounded time, then gives up with RateLimited.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.core.config import Settings
from app.egress.errors import RateLimited
from app.egress.policy import HostBudget, default_budget, parse_budgets

log = logging.getLogger(__name__)

# KEYS: hold, inflight, bucket. ARGV: rate (per s), burst, inflight cap, lease ms, holder.
# Returns {granted, wait ms, why}.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hold = tonumber(redis.call('GET', KEYS[1]) or '0')
if hold > now then return {0, hold - now, 'hold'} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return {0, 0, 'inflight'} end
local rate = tonumber(ARGV[1]) / 1000
local burst = tonumber(ARGV[2])
local bucket = redis.call('HMGET', KEYS[3], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local ttl = math.ceil(burst / rate) + 1000
if tokens < 1 then
  redis.call('HSET', KEYS[3], 'tokens', tokens, 'at', now)
  redis.call('PEXPIRE', KEYS[3], ttl)
  return {0, math.ceil((1 - tokens) / rate), 'rate'}
end
redis.call('HSET', KEYS[3], 'tokens', tokens - 1, 'at', now)
redis.call('PEXPIRE', KEYS[3], ttl)
local lease = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now + lease, ARGV[5])
if redis.call('PTTL', KEYS[2]) < lease then redis.call('PEXPIRE', KEYS[2], lease) end
return {1, 0, 'ok'}
"""

# KEYS: hold. ARGV: ms from now. Only ever moves the hold-off later.
_HOLD = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ms = tonumber(ARGV[1])
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if now + ms > current then redis.call('SET', KEYS[1], now + ms, 'PX', ms) end
return 1
"""

# How often a request waiting for an in-flight slot looks again.
_SLOT_POLL = (0.02, 0.25)


@dataclass(frozen=True)
class Lease:
    """An in-flight slot; release it when the response is closed."""

    redis: Redis
    key: str
    holder: str

    async def release(self) -> None:
        try:
            await self.redis.zrem(self.key, self.holder)
        except RedisError:
            # The lease expires on its own; a lost release costs one slot for a while.
            log.warning("egress: could not release an in-flight slot of %s", self.key)


class Budgets:
    def __init__(self, redis: Redis, settings: Settings) -> None:
        self._redis = redis
        self._settings = settings
        self._default = default_budget(settings)
        self._per_host = parse_budgets(settings)
        self._acquire = redis.register_script(_ACQUIRE)
        self._hold = redis.register_script(_HOLD)

    def budget(self, host: str, fallback: HostBudget | None = None) -> HostBudget:
        """EGRESS_HOST_BUDGETS' entry for `host`, else the caller's `fallback` (a platform's
        documented limit), else the default."""
        return self._per_host.get(host) or fallback or self._default

    def _key(self, kind: str, host: str) -> str:
        return self._settings.redis_key("egress", kind, host)

    async def acquire(
        self,
        host: str,
        url: str,
        *,
        lease: float,
        wait: float,
        fallback: HostBudget | None = None,
    ) -> tuple[Lease, float]:
        """Take a token and a slot for `host`, waiting up to `wait` s; returns seconds waited."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        poll = _SLOT_POLL[0]
        while True:
            lease_obj, wait_ms, why = await self._try(host, lease, fallback)
            if lease_obj is not None:
                return lease_obj, loop.time() - started
            left = wait - (loop.time() - started)
            if why == "inflight":
                if left <= 0:
                    raise RateLimited(
                        url,
                        f"{self.budget(host, fallback).inflight} requests to {host} are already open",
                        None,
                        own_limit_of=host,
                    )
                await asyncio.sleep(min(poll, left))
                poll = min(poll * 2, _SLOT_POLL[1])
                continue
            if wait_ms / 1000 > left:
                raise RateLimited(
                    url,
                    _why(why, host),
                    wait_ms / 1000,
                    own_limit_of="" if why == "hold" else host,  # "hold": the site's Retry-After
                )
            await asyncio.sleep(wait_ms / 1000)

    async def _try(
        self, host: str, lease: float, fallback: HostBudget | None
    ) -> tuple[Lease | None, int, str]:
        budget = self.budget(host, fallback)
        holder = uuid.uuid4().hex
        keys = [self._key("hold", host), self._key("inflight", host), self._key("bucket", host)]
        args: list[str | int | float] = [
            budget.rate,
            budget.burst,
            budget.inflight,
            int(lease * 1000),
            holder,
        ]
        granted, wait_ms, why = await self._acquire(keys=keys, args=args)
        reason = why.decode() if isinstance(why, bytes) else str(why)
        if granted:
            return Lease(self._redis, keys[1], holder), 0, reason
        return None, int(wait_ms), reason

    async def hold(self, host: str, seconds: float) -> None:
        """Keep every process away from `host` for `seconds` (from a Retry-After)."""
        if seconds > 0:
            await self._hold(keys=[self._key("hold", host)], args=[max(int(seconds * 1000), 1)])


def _why(why: str, host: str) -> str:
    if why == "hold":
        return f"{host} asked us to wait (Retry-After)"
    return f"the request budget for {host} is spent"
