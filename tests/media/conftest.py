"""A loopback "remote site" for the proxy, and the process egress that may reach it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from redis.asyncio import Redis

from app.core.config import Settings
from app.egress import Egress, egress, open_egress, use_egress
from app.media.signing import key_of, sign
from tests.egress.servers import Reply, Seen, Server, serve
from tests.fixtures import make_test_settings


@dataclass
class Upstream:
    """A server answering `replies[path]` (404 for anything else), reachable through egress."""

    server: Server
    replies: dict[str, Reply] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return self.server.url(path)

    @property
    def requests(self) -> list[Seen]:
        return self.server.requests


def _current_egress() -> Egress | None:
    try:
        return egress()
    except RuntimeError:
        return None


@pytest.fixture
async def upstream(redis: Redis) -> AsyncIterator[Upstream]:
    replies: dict[str, Reply] = {}
    async with serve(lambda seen: replies.get(seen.target, Reply(404, body=b"gone"))) as server:
        previous = _current_egress()
        instance = open_egress(
            make_test_settings(
                egress_allow=[f"127.0.0.1:{server.port}"],
                egress_host_rate=1000.0,
                egress_host_burst=1000,
            ),
            redis=redis,
        )
        try:
            yield Upstream(server, replies)
        finally:
            await instance.aclose()
            use_egress(previous)


@pytest.fixture
def proxied(settings: Settings):  # type: ignore[no-untyped-def]
    """proxied(url) -> the app's /media/... path for `url`."""

    def make(url: str) -> str:
        path = sign(url, key_of(settings))
        assert path is not None
        return path

    return make
