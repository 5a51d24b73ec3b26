"""The command line: `python -m app <command>`. Run without one for help.

It speaks the operator's language (LANG, LC_ALL, LANGUAGE: German or English), like
the pages speak the reader's: docs/decisions/i18n.md."""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import logging
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar
from urllib.parse import urlsplit

from app.core import config, db, i18n
from app.core.config import Settings, load_settings, redact_url
from app.core.i18n import N_, _

T = TypeVar("T")


def _say(message: str) -> None:
    print(f"newsdesk: {message}")


def _fail(message: str) -> None:
    print(f"newsdesk: {message}", file=sys.stderr)
    raise SystemExit(2)


async def check_services(settings: Settings) -> None:
    """Reach PostgreSQL and Redis once, or say which is unreachable and exit 2."""
    import asyncpg
    from redis.asyncio import Redis

    try:
        conn = await asyncpg.connect(settings.database_url, timeout=5)
        await conn.close()
    except Exception as error:
        _fail(
            _("cannot reach PostgreSQL at %(url)s (DATABASE_URL): %(reason)s")
            % {"url": redact_url(settings.database_url), "reason": _reason(error)}
        )
    client = Redis.from_url(settings.redis_url, socket_connect_timeout=5)
    try:
        await client.ping()
    except Exception as error:
        _fail(
            _("cannot reach Redis at %(url)s (REDIS_URL): %(reason)s")
            % {"url": redact_url(settings.redis_url), "reason": _reason(error)}
        )
    finally:
        await client.aclose()


def _reason(error: Exception) -> str:
    text = str(error).split("\n")[0] or type(error).__name__
    return text[:200]


async def _migrate(settings: Settings) -> None:
    import asyncpg

    try:
        await db.migrate_database(settings)
    except asyncpg.InsufficientPrivilegeError as error:  # the app's role, not the owner
        role = urlsplit(settings.migration_url).username or "?"
        variable = "DATABASE_OWNER_URL" if settings.database_owner_url else "DATABASE_URL"
        _fail(
            _(
                "cannot migrate as %(role)s (%(variable)s): %(reason)s. Set DATABASE_OWNER_URL"
                " to the role that owns the tables."
            )
            % {"role": role, "variable": variable, "reason": _reason(error)}
        )


async def _with_db(settings: Settings, work: Callable[[], Awaitable[T]]) -> T:
    from app.core import redis

    await db.connect(settings, pool_max=2)
    # Lazily: recovering an account (reset-password) must not need Redis up.
    redis.use_client(redis.lazy_client(settings))
    try:
        return await work()
    finally:
        await redis.disconnect_redis()
        await db.disconnect()


def cmd_serve(settings: Settings, args: argparse.Namespace) -> None:
    import uvicorn

    from app.web.factory import create_app

    asyncio.run(check_services(settings))
    app = create_app(settings)
    # What is loaded by now (modules, templates, catalogues) lives as long as the process:
    # out of the collector's sight, a full collection no longer walks it - it paused every
    # live stream for ~100 ms (docs/decisions/live.md).
    gc.freeze()
    uvicorn.run(
        app,
        host=args.host or settings.host,
        port=args.port or settings.port,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=3,
        proxy_headers=True,
    )


def cmd_worker(settings: Settings, args: argparse.Namespace) -> None:
    from workers.settings import create_worker, use_worker_event_loop, wait_for_redis_at

    use_worker_event_loop()
    asyncio.run(wait_for_redis_at(settings))  # a worker may start before Redis; it waits
    asyncio.run(check_services(settings))
    create_worker(settings, burst=args.burst).run()


async def _create_database(settings: Settings) -> bool:
    """Create the database DATABASE_URL names when the server lacks it."""
    from urllib.parse import urlsplit, urlunsplit

    import asyncpg

    # As the owner: the app's role need not be allowed to create databases.
    parts = urlsplit(settings.migration_url)
    name = parts.path.lstrip("/")
    conn = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")), timeout=5)
    try:
        if await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            return False
        await conn.execute(f'CREATE DATABASE "{name.replace(chr(34), "")}"')
        return True
    finally:
        await conn.close()


def cmd_create_database(settings: Settings, args: argparse.Namespace) -> None:
    try:
        created = asyncio.run(_create_database(settings))
    except Exception as error:
        _fail(
            _("cannot create the database at %(url)s: %(reason)s")
            % {"url": redact_url(settings.migration_url), "reason": _reason(error)}
        )
    if created:
        _say(_("created the database %(url)s") % {"url": redact_url(settings.migration_url)})


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> None:
    asyncio.run(check_services(settings))
    asyncio.run(_migrate(settings))
    _say(_("the database is up to date"))


def cmd_bootstrap(settings: Settings, args: argparse.Namespace) -> None:
    """Create the first owner and workspace when nobody exists; print the login once."""
    from app.accounts import services

    password = secrets.token_urlsafe(12)

    async def work() -> int | None:
        return await services.bootstrap(args.email, args.name, password, args.workspace)

    if asyncio.run(_with_db(settings, work)) is None:
        return
    print("=" * 64)
    print(_("Newsdesk created its first account. Sign in at %(url)s") % {"url": settings.base_url})
    print(_("  email:    %(email)s") % {"email": args.email})
    print(_("  password: %(password)s") % {"password": password})
    print(_("This is shown once. Change the password under Settings."))
    print("=" * 64)


def cmd_create_user(settings: Settings, args: argparse.Namespace) -> None:
    from app.accounts import services
    from app.accounts.roles import Role
    from app.accounts.types import AccountError

    if not args.password and not sys.stdin.isatty():
        # No terminal to ask on (a script, a pipe, CI): say what to pass instead of hanging.
        _fail(_("create-user needs --password when it is not run in a terminal"))
    password = args.password or getpass.getpass(_("Password for the new account: "))

    async def work() -> int:
        user_id = await services.create_user(args.email, args.name, password)
        if args.workspace_id:
            await services.add_member(
                args.workspace_id, user_id, Role(args.role), actor_user_id=None
            )
        return user_id

    try:
        user_id = asyncio.run(_with_db(settings, work))
    except AccountError as error:
        _fail(error.message)
    _say(_("created user %(id)s") % {"id": user_id})


def cmd_reset_password(settings: Settings, args: argparse.Namespace) -> None:
    """Print a one-time reset link for a person, or set and print a new password."""
    from app.accounts import recovery
    from app.accounts.types import AccountError

    async def link() -> str:
        user_id = await recovery.user_id_by_email(args.email)
        if user_id is None:
            raise AccountError(
                _("no user with the email %(email)s") % {"email": args.email.strip()}
            )
        token = await recovery.issue_reset(user_id, valid=recovery.HANDED_LINK_VALID)
        return recovery.reset_link(token)

    async def password() -> str:
        return await recovery.set_new_password(args.email)

    try:
        shown = asyncio.run(_with_db(settings, password if args.new_password else link))
    except AccountError as error:
        _fail(error.message)
    if args.new_password:
        _say(
            _("new password for %(email)s: %(password)s")
            % {"email": args.email.strip(), "password": shown}
        )
        _say(_("every session of this account has ended; change it under Settings."))
    else:
        hours = int(recovery.HANDED_LINK_VALID.total_seconds() // 3600)
        _say(
            i18n.ngettext(
                "reset link for %(email)s (works once, for %(num)s hour):",
                "reset link for %(email)s (works once, for %(num)s hours):",
                hours,
            )
            % {"email": args.email.strip(), "num": i18n.format_number(hours)}
        )
        print(shown)


def cmd_create_workspace(settings: Settings, args: argparse.Namespace) -> None:
    from app.accounts import services
    from app.accounts.types import AccountError

    async def work() -> int:
        owner = await db.fetchval("SELECT id FROM users WHERE lower(email) = lower($1)", args.owner)
        if owner is None:
            raise AccountError(_("no user with the email %(email)s") % {"email": args.owner})
        return await services.create_workspace(args.name, owner)

    try:
        workspace_id = asyncio.run(_with_db(settings, work))
    except AccountError as error:
        _fail(error.message)
    _say(_("created workspace %(id)s") % {"id": workspace_id})


def cmd_demo(settings: Settings, args: argparse.Namespace) -> None:
    from app.demo.runner import DemoRefused, run_demo, server_settings

    asyncio.run(check_services(server_settings(settings)))  # its database comes later
    try:
        run_demo(settings, port_base=args.port_base, seed_value=args.seed)
    except DemoRefused as refused:
        _fail(str(refused))


def cmd_check(settings: Settings, args: argparse.Namespace) -> None:
    asyncio.run(check_services(settings))
    _say(_("settings are valid; PostgreSQL and Redis answer"))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m app", description="Newsdesk")
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help=_("run the web server"))
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.set_defaults(run=cmd_serve)
    worker = sub.add_parser("worker", help=_("run a background worker"))
    worker.add_argument("--burst", action="store_true", help=_("drain the queue and exit"))
    worker.set_defaults(run=cmd_worker)
    sub.add_parser("create-database", help=_("create the database when missing")).set_defaults(
        run=cmd_create_database
    )
    sub.add_parser("migrate", help=_("apply database migrations")).set_defaults(run=cmd_migrate)
    sub.add_parser("check", help=_("validate settings and reach the services")).set_defaults(
        run=cmd_check
    )
    boot = sub.add_parser("bootstrap", help=_("create the first owner when there is none"))
    boot.add_argument("--email", default="owner@example.org")
    boot.add_argument("--name", default="Owner")
    boot.add_argument("--workspace", default="Newsroom")
    boot.set_defaults(run=cmd_bootstrap)
    user = sub.add_parser("create-user", help=_("create a person (optionally a member)"))
    user.add_argument("--email", required=True)
    user.add_argument("--name", required=True)
    user.add_argument("--password", help=_("asked for when left out"))
    user.add_argument("--workspace-id", type=int)
    user.add_argument("--role", default="editor", choices=["owner", "admin", "editor", "viewer"])
    user.set_defaults(run=cmd_create_user)
    reset = sub.add_parser(
        "reset-password", help=_("print a one-time password reset link for a person")
    )
    reset.add_argument("--email", required=True)
    reset.add_argument(
        "--new-password",
        action="store_true",
        help=_("set a random new password and print it instead (ends every session)"),
    )
    reset.set_defaults(run=cmd_reset_password)
    ws = sub.add_parser("create-workspace", help=_("create a workspace owned by a person"))
    ws.add_argument("--name", required=True)
    ws.add_argument("--owner", required=True, help=_("the owner's email"))
    ws.set_defaults(run=cmd_create_workspace)
    demo = sub.add_parser(
        "demo", help=_("run the offline demo (make demo): a fresh demo workspace, web and worker")
    )
    demo.add_argument(
        "--port-base", type=int, default=8700, help=_("demo servers listen on this port and up")
    )
    demo.add_argument("--seed", type=int, default=7, help=_("another seed, another made-up world"))
    demo.set_defaults(run=cmd_demo)
    return p


# argparse's own texts, which it looks up through the standard library's gettext
# (i18n.speak_on_the_command_line); listed here so extraction keeps them in the catalogues.
ARGPARSE_TEXTS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("expected one argument"),
    N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
)


def main(argv: list[str] | None = None) -> None:
    i18n.speak_on_the_command_line()
    args = parser().parse_args(argv)
    settings = load_settings()
    config.activate(settings)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Piccolo's engine logs "Running Postgres version ..." at INFO each time one is made
    # (every command makes one or two): noise on a command's output. Its warnings still show.
    logging.getLogger("piccolo.engine").setLevel(max(logging.WARNING, logging.root.level))
    args.run(settings, args)


if __name__ == "__main__":
    main()
