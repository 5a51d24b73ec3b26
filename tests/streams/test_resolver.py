"""Handle resolution: cached 10 minutes when found, 1 minute when not, at most 4 per host at once."""

from __future__ import annotations

import asyncio
import json
import time

from app.core import config
from app.streams import resolver
from app.streams.providers import provider_for
from tests.egress.servers import Reply
from tests.streams.test_polling import RSS, rss


async def test_found_handles_are_cached_for_ten_minutes_missing_ones_for_one(
    site, site_egress, redis
):
    site.routes["/found.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1, title="Found"))
    rss_provider = provider_for("rss")
    assert rss_provider is not None
    found = site.base + "/found.rss"
    missing = site.base + "/missing.rss"

    actor = await resolver.resolve(rss_provider, None, found)
    again = await resolver.resolve(rss_provider, None, found)
    assert actor == again
    assert actor is not None
    assert actor.display_name == "Found"
    assert len(site.hits_of("/found.rss")) == 1

    assert await resolver.resolve(rss_provider, None, missing) is None
    assert await resolver.resolve(rss_provider, None, missing) is None
    assert len(site.hits_of("/missing.rss")) == 1

    prefix = config.active().redis_key("streams", "handle", "rss")
    ttls = {}
    for key in await redis.keys(prefix + ":*"):
        ttls[await redis.get(key) == b"-"] = await redis.ttl(key)
    assert 590 < ttls[False] <= 600
    assert 50 < ttls[True] <= 60


async def test_at_most_four_resolutions_run_at_once_per_host(site, site_egress):
    site_egress(egress_host_inflight=100)  # egress's own cap out of the way: this is ours
    for n in range(8):
        site.routes[f"/slow/{n}.rss"] = Reply(
            headers=[("Content-Type", RSS)], body=rss(1), delay=0.4
        )
    rss_provider = provider_for("rss")
    assert rss_provider is not None
    started = time.monotonic()
    actors = await asyncio.gather(
        *(resolver.resolve(rss_provider, None, f"{site.base}/slow/{n}.rss") for n in range(8))
    )
    elapsed = time.monotonic() - started
    assert all(actors)
    assert elapsed >= 0.8  # two rounds of four, not one round of eight


async def test_a_process_keeps_a_handle_it_read_until_redis_forgets_it(site, site_egress, redis):
    site.routes["/kept.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1, title="Kept"))
    rss_provider = provider_for("rss")
    assert rss_provider is not None
    handle = site.base + "/kept.rss"
    key = resolver._key("rss", handle)
    # Another process resolved it a while ago: its entry has 0.4 s left.
    answer = {"ref": handle, "handle": handle, "display_name": "Elsewhere"}
    await redis.set(key, json.dumps(answer), px=400)
    actor = await resolver.resolve(rss_provider, None, handle)
    assert actor is not None
    assert actor.display_name == "Elsewhere"
    # The next poll is answered from the process's copy: Redis is not asked again.
    await redis.delete(key)
    again = await resolver.resolve(rss_provider, None, handle)
    assert again is not None
    assert again.display_name == "Elsewhere"
    assert site.hits_of("/kept.rss") == []
    # Once Redis would have forgotten it, so has the process: it resolves again.
    await asyncio.sleep(0.5)
    fresh = await resolver.resolve(rss_provider, None, handle)
    assert fresh is not None
    assert fresh.display_name == "Kept"
    assert len(site.hits_of("/kept.rss")) == 1


async def test_a_claimed_batch_brings_its_cached_handles_into_the_process_at_once(
    site, site_egress, redis
):
    rss_provider = provider_for("rss")
    assert rss_provider is not None
    found, missing, unknown = (f"{site.base}/{name}.rss" for name in ("found", "gone", "new"))
    site.routes["/new.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1, title="New"))
    answer = {"ref": found, "handle": found, "display_name": "Elsewhere"}
    await redis.set(resolver._key("rss", found), json.dumps(answer), px=400)
    await redis.set(resolver._key("rss", missing), "-", px=400)

    await resolver.prefetch([("rss", found), ("rss", missing), ("rss", unknown)])
    # The polls that follow find the answers in the process: Redis is not asked again.
    await redis.delete(resolver._key("rss", found), resolver._key("rss", missing))
    actor = await resolver.resolve(rss_provider, None, found)
    assert actor is not None
    assert actor.display_name == "Elsewhere"
    assert await resolver.resolve(rss_provider, None, missing) is None
    assert site.hits_of("/found.rss") == []
    assert site.hits_of("/gone.rss") == []
    # An entry Redis did not hold is resolved by its poll, as before.
    new = await resolver.resolve(rss_provider, None, unknown)
    assert new is not None
    assert new.display_name == "New"
    # The copies last only as long as Redis's entries would have.
    await asyncio.sleep(0.5)
    site.routes["/found.rss"] = Reply(headers=[("Content-Type", RSS)], body=rss(1, title="Found"))
    again = await resolver.resolve(rss_provider, None, found)
    assert again is not None
    assert again.display_name == "Found"
