"""`python -m app demo`: a fresh demo database, the demo servers, web and worker.

The demo owns its database: it is dropped and created again on every start
(the world's post ids restart with its clock), so the command refuses a
DATABASE_URL whose database name does not end in `_demo` - it will never
empty a real newsroom. `make demo` (scripts/demo.sh) points it at
`newsdesk_demo` on the private services of `make run`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from app.core.config import Settings
from app.core.i18n import _
from app.demo.content import DemoWorld
from app.demo.world import (
    PORT_BASE,
    SERVICES,
    DemoLogin,
    RunningWorld,
    seed,
    start_world_thread,
)

ROOT = Path(__file__).resolve().parents[2]


class DemoRefused(Exception):
    pass


def database_name(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def check_demo_database(settings: Settings) -> None:
    name = database_name(settings.database_url)
    if not name.endswith("_demo"):
        raise DemoRefused(
            _(
                "the demo empties its database on every start, and %(name)r does not end in"
                " _demo; run `make demo`, or point DATABASE_URL at a database named like"
                " newsdesk_demo"
            )
            % {"name": name}
        )


def server_settings(settings: Settings) -> Settings:
    """The settings, pointed at the PostgreSQL server's `postgres` database (always there)."""
    parts = urlsplit(settings.migration_url)
    return settings.model_copy(
        update={"database_url": urlunsplit(parts._replace(path="/postgres"))}
    )


async def reset_database(settings: Settings) -> None:
    """Drop and create the demo database, migrate it, and forget the demo's Redis keys."""
    import asyncpg
    from redis.asyncio import Redis

    from app.core import db

    parts = urlsplit(settings.migration_url)
    name = database_name(settings.database_url).replace('"', "")
    conn = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")), timeout=5)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    await db.migrate_database(settings)
    redis = Redis.from_url(settings.redis_url)
    try:
        async for key in redis.scan_iter(match=f"{settings.redis_prefix}:*", count=1000):
            await redis.delete(key)
    finally:
        await redis.aclose()


async def seed_workspace(settings: Settings) -> DemoLogin:
    """Seed with the process's egress diverted too: account columns resolve handles now."""
    from app.core import db, redis
    from app.egress import close_egress, open_egress

    await db.connect(settings, pool_max=2)
    await redis.connect_redis(settings)
    open_egress(settings)
    try:
        return await seed()
    finally:
        await close_egress()
        await redis.disconnect_redis()
        await db.disconnect()


def banner(settings: Settings, login: DemoLogin, running: RunningWorld) -> str:
    lines = [
        "=" * 68,
        _("Newsdesk demo: a newsroom fed by made-up platforms on this machine."),
        _("  Open      %(url)s") % {"url": settings.base_url},
        _("  Email     %(email)s") % {"email": login.email},
        _("  Password  %(password)s") % {"password": login.password},
        # " · ", not a comma: a title may hold one ("Climate, everywhere")
        _("  Columns   %(titles)s") % {"titles": " · ".join(login.columns) or _("(none)")},
    ]
    if login.left_out:
        lines.append(
            _("  Not yet   %(titles)s (no provider for them yet)")
            % {"titles": " · ".join(login.left_out)}
        )
    lines.append(_("  Demo servers:"))
    lines += [f"    {entry.replace('=', '  ->  ')}" for entry in running.divert]
    lines += [
        _("New posts arrive every few seconds; columns poll every minute or two."),
        _("Ctrl-C stops everything."),
        "=" * 68,
    ]
    return "\n".join(lines)


def _port_taken(host: str, port: int) -> bool:
    with socket.socket() as probe:
        # As uvicorn binds: a port a stopped server left in TIME_WAIT is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def check_demo_ports(settings: Settings, port_base: int) -> None:
    """Refuse, saying what to do, when `make run` or another demo holds a port: else the
    banner would send people to the other server, where the demo's login does not work."""
    if _port_taken(settings.host, settings.port):
        raise DemoRefused(
            _(
                "port %(port)s is taken - is `make run` or another demo running? Stop it, or"
                " give the demo another port: PORT=%(other)s make demo"
            )
            % {"port": settings.port, "other": settings.port + 1}
        )
    last = port_base + max(service.offset for service in SERVICES)
    if any(_port_taken("127.0.0.1", port) for port in range(port_base, last + 1)):
        raise DemoRefused(
            _(
                "the demo servers' ports %(first)s to %(last)s are taken - is another demo"
                " running? Stop it, or use others: scripts/demo.sh --port-base %(other)s"
            )
            % {"first": port_base, "last": last, "other": last + 1}
        )


def run_demo(settings: Settings, *, port_base: int = PORT_BASE, seed_value: int = 7) -> None:
    check_demo_database(settings)
    check_demo_ports(settings, port_base)
    running, thread = start_world_thread(DemoWorld(seed=seed_value), port_base=port_base)
    try:
        diverted = settings.model_copy(update={"egress_divert": running.divert})
        asyncio.run(reset_database(diverted))
        login = asyncio.run(seed_workspace(diverted))
        print(banner(settings, login, running), flush=True)
        python = sys.executable
        commands = {"web": f"{python} -m app serve", "worker": f"{python} -m app worker"}
        supervise(commands, {"EGRESS_DIVERT": ",".join(running.divert)})
    finally:
        thread.stop()


def supervise(commands: dict[str, str], extra_env: dict[str, str]) -> None:
    """`commands` under scripts/supervise.sh until Ctrl-C or SIGTERM, which stop them too: a
    TERM (a process manager, `kill`) would otherwise end only us, and leave them running."""
    child = subprocess.Popen(  # noqa: S603 - our own script, our own commands
        [str(ROOT / "scripts" / "supervise.sh"), *(f"{n}={c}" for n, c in commands.items())],
        cwd=ROOT,
        env={**os.environ, **extra_env},
    )
    previous = signal.signal(signal.SIGTERM, lambda _signal, _frame: child.terminate())
    try:
        child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)  # it may not share our terminal's process group
        child.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
