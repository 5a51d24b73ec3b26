"""Forgot password? in a real browser: the server mails a real SMTP server, the link resets."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Iterator

import pytest
from playwright.async_api import Browser, Page, expect

from app.core.config import Settings
from e2e.conftest import (
    ROOT,
    WORKER,
    PageWatch,
    Server,
    _env,
    _start,
    _wait_until_healthy,
    _watched_context,
    free_port,
    sign_in_page,
)
from tests.fakes.mail import SMTP_PASSWORD, Mailbox

NEW_PASSWORD = "my new long password"


@pytest.fixture(scope="module")
def mail() -> Iterator[Mailbox]:
    box = Mailbox()
    controller = box.serve()
    yield box
    controller.stop()


@pytest.fixture(scope="module")
def mail_server(settings: Settings, database: None, mail: Mailbox) -> Iterator[Server]:
    """A second web server whose SMTP_* settings point at the loopback mailbox."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = _env(
        settings,
        PORT=str(port),
        BASE_URL=url,
        SMTP_HOST="127.0.0.1",
        SMTP_PORT=str(mail.port),
        SMTP_TLS="none",
        SMTP_USER="newsdesk",
        SMTP_PASSWORD=SMTP_PASSWORD,
        SMTP_FROM="Newsdesk <newsdesk@example.org>",
    )
    log = ROOT / ".data" / "test" / "logs" / f"server-mail-{WORKER}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    live = Server(url=url, settings=settings)
    live.processes.append(_start(["serve"], env, log))
    _wait_until_healthy(live, log)
    yield live
    os.killpg(live.processes[0].pid, signal.SIGTERM)
    live.processes[0].wait(timeout=10)


@pytest.fixture
async def mail_page(
    browser: Browser, mail_server: Server, services: None, watch: PageWatch
) -> AsyncIterator[Page]:
    ctx = await _watched_context(browser, mail_server.url, watch)
    yield await ctx.new_page()
    await ctx.close()
    assert watch.csp_violations() == [], watch.csp_violations()


async def _mail_count(mail: Mailbox, count: int) -> None:
    for _ in range(100):
        if len(mail.mails) >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{count} mail(s) expected, {len(mail.mails)} arrived")


async def test_forgot_password_mails_a_link_that_sets_a_new_password(
    mail_page: Page, mail: Mailbox, mail_server: Server, people
):
    person = await people.member("editor")
    before = len(mail.mails)
    page = mail_page
    await page.goto("/login")
    await page.get_by_role("link", name="Forgot password?").click()
    await page.wait_for_url("**/forgot")
    await page.fill("input[name=email]", person.email)
    await page.get_by_role("button", name="Send me a link").click()
    await expect(page.get_by_role("status")).to_contain_text("we have sent it a link")

    await _mail_count(mail, before + 1)
    await page.goto(mail.link(base=mail_server.url))
    await expect(page.locator("h1")).to_have_text("Choose a new password")
    await page.fill("input[name=password]", NEW_PASSWORD)
    await page.get_by_role("button", name="Set the new password").click()
    await page.wait_for_url("**/login?reset=done")
    await expect(page.get_by_role("status")).to_contain_text("Your password is changed")

    await sign_in_page(page, person.email, NEW_PASSWORD)
    await expect(page.locator("nav.nav")).to_be_visible()
