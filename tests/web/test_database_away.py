"""PostgreSQL away (a restart, an outage) under the web app: pages answer 503 and say so,
live pages pause and reconnect once it is back, the log says it once - and nothing needs a
restart afterwards. The app reaches the suite's PostgreSQL through a proxy the test cuts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from app.accounts import services as accounts
from app.articles.types import LIBRARY_TOPIC
from app.core import db, outage
from app.core.config import Settings
from app.live.notices import publish
from app.live.streams import LIVE_STREAM_HEADER
from tests.fakes.tcp_proxy import TcpProxy
from tests.live_client import LiveStream
from tests.workers.processes import eventually

LIVE = {LIVE_STREAM_HEADER: "1"}


@pytest.fixture
async def proxy(settings: Settings, services: None) -> AsyncIterator[TcpProxy]:
    """The process's database pool, through a proxy to the suite's PostgreSQL."""
    parts = urlsplit(settings.database_url)
    proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{proxy.port}"
    original = db.engine()
    await db.connect(
        settings.model_copy(update={"database_url": urlunsplit(parts._replace(netloc=netloc))}),
        pool_max=4,
    )
    try:
        yield proxy
    finally:
        await db.disconnect()
        db.bind(original)
        await proxy.close()


def _outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "app.core.outage"]


async def test_pages_answer_503_while_the_database_is_away_and_work_again_after(
    client, editor, proxy: TcpProxy, caplog: pytest.LogCaptureFixture
) -> None:
    token = await accounts.issue_api_token(editor.workspace_id, editor.user_id, "bot")
    assert (await client.get("/articles")).status_code == 200
    caplog.set_level(logging.INFO)

    await proxy.cut()
    page = await client.get("/articles")
    assert page.status_code == 503
    assert page.headers["retry-after"] == "5"
    assert "Newsdesk cannot reach its database" in page.text
    assert "Nothing is lost" in page.text
    assert '<meta http-equiv="refresh" content="5">' in page.text  # it tries again by itself
    api = await client.get("/api/v1/articles", headers={"Authorization": f"Bearer {token}"})
    assert api.status_code == 503
    assert api.json()["detail"].startswith("Nothing is lost")

    await proxy.start()
    await eventually(lambda: _back(client), within=20)
    assert await outage.database.back(timeout=10)  # its probe says so in the log
    lines = _outage_lines(caplog)
    assert len(lines) == 2, lines  # once when it went, once when it came back
    assert "is unreachable" in lines[0]
    assert "reachable again" in lines[1]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def _back(client) -> bool:  # type: ignore[no-untyped-def]
    return (await client.get("/articles")).status_code == 200


async def test_a_live_page_reconnecting_while_the_database_is_away_waits_paused_for_it(
    client, editor, web_app, proxy: TcpProxy
) -> None:
    await proxy.cut()
    async with LiveStream(web_app, client, "/articles/stream", headers=LIVE) as stream:
        sent = await stream.until('"_livePaused":true')
        assert "datastar-patch-signals" in sent
        await asyncio.sleep(1)
        assert not stream.ended  # held open, not a reconnect a second
        await proxy.start()
        # Back: the stream ends, and the browser reconnects for the page's whole state.
        await eventually(lambda: stream.ended, within=20)
    async with LiveStream(web_app, client, "/articles/stream", headers=LIVE) as stream:
        assert '"_livePaused":false' in await stream.until('"_livePaused":false')


async def test_an_open_live_page_pauses_while_the_database_is_away_and_resumes_after(
    client, editor, web_app, proxy: TcpProxy
) -> None:
    async with LiveStream(web_app, client, "/articles/stream", headers=LIVE) as stream:
        await stream.until('"_livePaused":false')
        await proxy.cut()
        await publish(editor.workspace_id, LIBRARY_TOPIC)  # a change to show: it cannot load
        await stream.until('"_livePaused":true')
        await proxy.start()

        def resumed() -> str:
            return "".join(stream.received).split('"_livePaused":true', 1)[1]

        await eventually(lambda: '"_livePaused":false' in resumed(), within=20)
        assert 'id="library' in resumed()  # the whole state again, then live
        assert not stream.ended
