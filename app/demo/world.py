"""The demo world running: its servers, the EGRESS_DIVERT that points the real
origins at them, and a demo workspace whose columns poll them.

`SERVICES` lists every demo server, one line each, with the real origins it
answers for and its port (`port_base` + offset). `serve_world` runs them
in-process (tests), `start_world_thread` in a thread (e2e, `make demo`),
and `seed` creates the demo person, workspace, connections, keys, topic and
columns - only the parts whose provider this server has, so the demo grows as
providers land. `python -m app demo` (`make demo`) puts it all together.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.demo import bluesky
from app.demo.content import ARTICLE_ORIGIN, DemoWorld
from app.demo.http import DemoServer, DemoThread
from app.demo.mastodon import DEMO_TOKEN as MASTODON_TOKEN
from app.demo.mastodon import MastodonDemo
from app.demo.sites import ArticleSite
from app.demo.youtube import YouTubeDemo

PORT_BASE = 8700  # make demo's servers listen on 8700, 8701, ...


@dataclass(frozen=True)
class DemoService:
    name: str
    origins: tuple[str, ...]  # the real origins it answers for (diverted to it)
    offset: int  # its port is port_base + offset
    make: Callable[[DemoWorld], DemoServer]


def _mastodon(host: str) -> Callable[[DemoWorld], DemoServer]:
    return lambda world: MastodonDemo(world, host)


# Every demo server, one line each; `make` takes the world. Offsets taken: 0 courier,
# 1 bluesky, 2-4 the Mastodon instances, 5 youtube (www.youtube.com, www.googleapis.com and
# i.ytimg.com, its thumbnails).
SERVICES: tuple[DemoService, ...] = (
    DemoService("courier", (ARTICLE_ORIGIN,), 0, ArticleSite),
    DemoService("bluesky", bluesky.ORIGINS, 1, bluesky.BlueskyDemo),
    DemoService("mastodon.social", ("https://mastodon.social",), 2, _mastodon("mastodon.social")),
    DemoService("chaos.social", ("https://chaos.social",), 3, _mastodon("chaos.social")),
    DemoService("fosstodon.org", ("https://fosstodon.org",), 4, _mastodon("fosstodon.org")),
    DemoService(
        "youtube",
        ("https://www.youtube.com", "https://www.googleapis.com", "https://i.ytimg.com"),
        5,
        YouTubeDemo,
    ),
)


@dataclass
class RunningWorld:
    world: DemoWorld
    servers: dict[str, DemoServer] = field(default_factory=dict)
    divert: list[str] = field(default_factory=list)  # EGRESS_DIVERT entries

    def add(self, service: DemoService, server: DemoServer) -> None:
        self.servers[service.name] = server
        self.divert.extend(f"{origin}={server.base}" for origin in service.origins)


def _port(service: DemoService, port_base: int, ports: Mapping[str, int] | None = None) -> int:
    if ports is not None:
        return ports[service.name]
    return port_base + service.offset if port_base else 0  # 0: any free port


def divert_entries(
    ports: Mapping[str, int], services: tuple[DemoService, ...] = SERVICES
) -> list[str]:
    """EGRESS_DIVERT for servers that will listen on `ports` (name -> port)."""
    return [
        f"{origin}=http://127.0.0.1:{ports[service.name]}"
        for service in services
        for origin in service.origins
    ]


@contextlib.asynccontextmanager
async def serve_world(
    world: DemoWorld | None = None,
    *,
    port_base: int = 0,
    services: tuple[DemoService, ...] = SERVICES,
) -> AsyncIterator[RunningWorld]:
    """Every demo server on this event loop (port_base 0: free ports), stopped on exit."""
    running = RunningWorld(world or DemoWorld())
    try:
        for service in services:
            server = service.make(running.world)
            await server.start(_port(service, port_base))
            running.add(service, server)
        yield running
    finally:
        for server in running.servers.values():
            await server.stop()


def start_world_thread(
    world: DemoWorld | None = None,
    *,
    port_base: int = PORT_BASE,
    ports: Mapping[str, int] | None = None,
    services: tuple[DemoService, ...] = SERVICES,
) -> tuple[RunningWorld, DemoThread]:
    """Every demo server in a thread of its own; `thread.stop()` ends them.

    `ports` (service name -> port) overrides `port_base`: the e2e suite picks
    free ports before its server processes start.
    """
    running, thread = RunningWorld(world or DemoWorld()), DemoThread()
    try:
        for service in services:
            port = _port(service, port_base, ports)
            running.add(service, thread.start(service.make(running.world), port))
    except BaseException:
        thread.stop()
        raise
    return running, thread


# The demo workspace -------------------------------------------------------------------

DEMO_EMAIL = "demo@newsdesk.example"
DEMO_NAME = "Demo Editor"
DEMO_WORKSPACE = "Demo newsroom"


@dataclass(frozen=True)
class DemoConnection:
    """A connected account of the demo person (the platform's sign-in is faked by its server)."""

    provider: str
    handle: str
    instance: str = ""
    secret: str = ""


# The demo person's own accounts; `platform_feed` columns name them by provider. The
# secrets are made up: the demo servers accept them, no real platform would.
CONNECTIONS = (
    DemoConnection("bluesky", "maya.okafor.bsky.social", secret="demo-app-password"),  # noqa: S106
    DemoConnection("mastodon", "maya@mastodon.social", "mastodon.social", MASTODON_TOKEN),
)
# Workspace keys (sealed in the vault like real ones).
CREDENTIALS = (("youtube", "demo-youtube-api-key"),)
# The columns, in order. Parts whose provider is missing are left out (see `plan_column`).
COLUMNS: tuple[dict[str, Any], ...] = (
    {
        "type": "keyword",
        "title": "Climate, everywhere",
        "spec": {
            "query": "#climate",
            "platforms": ["bluesky", "mastodon", "youtube"],
            "instances": ["mastodon.social", "chaos.social"],
        },
    },
    {
        "type": "account_list",
        "title": "Reporters",
        "spec": {
            "accounts": [
                {"provider": "bluesky", "handle": "maya.okafor.bsky.social"},
                {"provider": "mastodon", "handle": "jonas@chaos.social"},
                {"provider": "youtube", "handle": "@ClimateDeskTV"},
                {"provider": "rss", "handle": f"{ARTICLE_ORIGIN}/feeds/climate.rss"},
            ]
        },
    },
    {
        "type": "platform_feed",
        "title": "My Bluesky",
        "spec": {"connection": "bluesky", "kinds": ["home", "mentions"]},
    },
    {
        "type": "platform_feed",
        "title": "My Mastodon",
        "spec": {"connection": "mastodon", "kinds": ["home", "mentions"]},
    },
    {
        "type": "account_list",
        "title": "The Riverside Courier",
        "spec": {"accounts": [{"provider": "rss", "handle": f"{ARTICLE_ORIGIN}/feeds/news.rss"}]},
    },
)
# A library topic reading the demo site's feed, so topics and imports have something to do.
TOPIC = ("Climate desk", f"{ARTICLE_ORIGIN}/feeds/climate.rss")


@dataclass
class DemoLogin:
    email: str
    password: str
    workspace_id: int
    columns: dict[str, int] = field(default_factory=dict)  # title -> column id
    left_out: list[str] = field(default_factory=list)  # what this server cannot show yet


def plan_column(column: dict[str, Any], connections: dict[str, int]) -> dict[str, Any] | None:
    """The column with only what this server's providers can do, or None if nothing is left."""
    from app.streams.providers import provider_for
    from app.streams.types import SourceKind

    def can(provider: str, kind: SourceKind) -> bool:
        found = provider_for(provider)
        return found is not None and kind in found.kinds

    spec = dict(column["spec"])
    if column["type"] == "keyword":
        spec["platforms"] = [p for p in spec["platforms"] if can(p, SourceKind.SEARCH)]
        if not spec["platforms"]:
            return None
    elif column["type"] == "account_list":
        spec["accounts"] = [a for a in spec["accounts"] if can(a["provider"], SourceKind.AUTHOR)]
        if not spec["accounts"]:
            return None
    elif column["type"] == "platform_feed":
        provider = spec.pop("connection")
        if provider not in connections or not can(provider, SourceKind.HOME):
            return None
        spec["connection_id"] = connections[provider]
    return {**column, "spec": spec}


async def seed(password: str = "") -> DemoLogin:
    """The demo person, workspace, connections, keys, topic and columns (an empty database).

    The password is a fresh random one unless given (it is printed, like `bootstrap`'s).
    """

    from app.accounts import services as accounts
    from app.streams import services as streams
    from app.topics import services as topics
    from app.topics.types import SourceForm, TopicForm

    password = password or secrets.token_urlsafe(12)
    user_id = await accounts.create_user(DEMO_EMAIL, DEMO_NAME, password)
    workspace_id = await accounts.create_workspace(DEMO_WORKSPACE, user_id)
    login = DemoLogin(DEMO_EMAIL, password, workspace_id)
    connections = {
        c.provider: await streams.add_connection(
            workspace_id,
            c.provider,
            c.handle,
            instance=c.instance,
            secret=c.secret,
            actor_user_id=user_id,
        )
        for c in CONNECTIONS
    }
    for provider, secret in CREDENTIALS:
        await streams.set_credential(workspace_id, provider, secret, label="demo")
    name, feed = TOPIC
    topic_id = await topics.create_topic(workspace_id, TopicForm(name), actor_user_id=user_id)
    await topics.add_source(
        workspace_id, topic_id, SourceForm("feed", url=feed, interval_minutes="15"),
        actor_user_id=user_id,
    )  # fmt: skip
    for column in COLUMNS:
        planned = plan_column(column, connections)
        if planned is None:
            login.left_out.append(column["title"])
            continue
        login.columns[column["title"]] = await streams.create_column(
            workspace_id, planned, actor_user_id=user_id
        )
    return login
