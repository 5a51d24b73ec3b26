"""The browser suite: the real server and worker as processes, driven in Chromium.

Each xdist worker gets its own database, Redis database, key prefix and free
port. The test process shares the database with the server, so tests create
people through the real services, then act in the browser. Every page
records console messages: a Content-Security-Policy violation fails the test.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, async_playwright

from app.core import config
from app.core.config import Settings
from app.demo.world import SERVICES, RunningWorld, divert_entries, start_world_thread
from tests.fakes.site import FakeSite, SiteThread
from tests.fixtures import (
    BASE_DATABASE_URL,
    WORKER,
    WORKER_NUMBER,
    database_urls,
    make_test_settings,
)

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PORT = free_port()
# The fake web (tests/fakes) a test may start on this port; the server
# processes may reach it, and nothing else on loopback (EGRESS_ALLOW).
FAKE_SITE_PORT = free_port()
# The offline demo's servers (app/demo), on ports chosen now: the server processes
# send the real platforms' origins to them (EGRESS_DIVERT). Start them with `demo_world`.
DEMO_PORTS = {service.name: free_port() for service in SERVICES}


@pytest.fixture(scope="session")
def settings() -> Settings:
    """The e2e database and Redis namespace, shared with the server processes."""
    settings = make_test_settings(
        **database_urls(BASE_DATABASE_URL.replace("newsdesk_test", "newsdesk_e2e") + f"_{WORKER}"),
        redis_url=os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:63809")
        + f"/{20 + WORKER_NUMBER}",
        redis_prefix=f"nde2e{WORKER}",
        base_url=f"http://127.0.0.1:{PORT}",
        port=PORT,
        egress_allow=[f"127.0.0.1:{FAKE_SITE_PORT}"],
        egress_divert=divert_entries(DEMO_PORTS),
    )
    config.activate(settings)
    return settings


def _env(settings: Settings, **extra: str) -> dict[str, str]:
    values = {
        "DATABASE_URL": settings.database_url,
        "DATABASE_OWNER_URL": settings.database_owner_url,
        "REDIS_URL": settings.redis_url,
        "SECRET_KEY": settings.secret_key.get_secret_value(),
        "BASE_URL": settings.base_url,
        "PORT": str(settings.port),
        "EGRESS_ALLOW": ",".join(settings.egress_allow),
        "EGRESS_DIVERT": ",".join(settings.egress_divert),
        "REDIS_PREFIX": settings.redis_prefix,
        "PASSWORD_HASHING": settings.password_hashing,
        "LOGIN_ATTEMPTS_PER_15MIN": "50",
        "LOG_LEVEL": "WARNING",
        **extra,
    }
    return {**os.environ, **values}


@dataclass
class Server:
    url: str
    settings: Settings
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


@pytest.fixture(scope="session")
def server(settings: Settings, database: None) -> Iterator[Server]:
    """uvicorn and one arq worker, as `make run` starts them."""
    from app.core import db

    if db.engine().config["dsn"] != settings.database_url:
        raise RuntimeError(
            "run e2e/ in a pytest run of its own (make test does): tests/ holds the database"
        )
    logs = ROOT / ".data" / "test" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = _env(settings)
    live = Server(url=settings.base_url, settings=settings)
    live.processes.append(_start(["serve"], env, logs / f"server-{WORKER}.log"))
    live.processes.append(_start(["worker"], env, logs / f"worker-{WORKER}.log"))
    _wait_until_healthy(live, logs / f"server-{WORKER}.log")
    yield live
    for process in live.processes:
        os.killpg(process.pid, signal.SIGTERM)
    for process in live.processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _wait_until_healthy(live: Server, log: Path) -> None:
    for _ in range(150):
        if live.processes[0].poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{live.url}/readyz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        import time

        time.sleep(0.1)
    raise RuntimeError(f"the server did not become ready:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()


@dataclass
class PageWatch:
    """What a page said: console messages, failed requests and dialogs."""

    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def csp_violations(self) -> list[str]:
        return [
            m
            for m in self.console
            if "Content Security Policy" in m or "Content-Security-Policy" in m
        ]


# A 390x844 touch phone, for `_watched_context(..., **PHONE)`.
PHONE: dict[str, object] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}


async def _watched_context(
    browser: Browser, url: str, watch: PageWatch, **options
) -> BrowserContext:  # type: ignore[no-untyped-def]
    context = await browser.new_context(base_url=url, **options)

    def on_console(message: ConsoleMessage) -> None:
        watch.console.append(f"{message.type}: {message.text}")

    def on_page(page: Page) -> None:
        page.on("console", on_console)
        page.on(
            "dialog",
            lambda d: (watch.dialogs.append(d.message), asyncio.ensure_future(d.dismiss())),
        )

    context.on("page", on_page)
    return context


@pytest.fixture
async def watch() -> PageWatch:
    return PageWatch()


@pytest.fixture
async def context(
    browser: Browser, server: Server, services: None, watch: PageWatch
) -> AsyncIterator[BrowserContext]:
    ctx = await _watched_context(browser, server.url, watch)
    yield ctx
    await ctx.close()
    assert watch.csp_violations() == [], watch.csp_violations()


@pytest.fixture
async def page(context: BrowserContext) -> Page:
    return await context.new_page()


@pytest.fixture
async def phone(
    browser: Browser, server: Server, services: None, watch: PageWatch
) -> AsyncIterator[Page]:
    """A 360 px wide touch screen."""
    ctx = await _watched_context(
        browser,
        server.url,
        watch,
        viewport={"width": 360, "height": 740},
        is_mobile=True,
        has_touch=True,
    )
    yield await ctx.new_page()
    await ctx.close()
    assert watch.csp_violations() == [], watch.csp_violations()


@pytest.fixture(scope="session")
def fake_site() -> Iterator[FakeSite]:
    """The fake web on the port the server processes may reach (one per session)."""
    thread = SiteThread(FAKE_SITE_PORT)
    site = thread.start()
    yield site
    thread.stop()


@pytest.fixture(scope="session")
def demo_world() -> Iterator[RunningWorld]:
    """The demo servers (the world on the real clock) where the server processes reach them."""
    running, thread = start_world_thread(ports=DEMO_PORTS)
    yield running
    thread.stop()


SIGNED_IN = re.compile(r"/wall(#col-\d+)?$")


async def sign_in_page(page: Page, email: str, password: str) -> None:
    await page.goto("/login")
    await page.fill("input[name=email]", email)
    await page.fill("input[name=password]", password)
    await page.click("button[type=submit]")
    # On a phone the wall names the column it shows in the address at once (#col-<id>).
    await page.wait_for_url(SIGNED_IN)
