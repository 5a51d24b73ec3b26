"""Pages are read in reader processes (app.articles.reading): same article, same reasons,
and a reader that dies is replaced without losing the page."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.articles import reading
from app.articles.extraction import Extracted, ExtractionError, Failure, read_html
from app.core import config
from app.core.config import Settings
from app.core.i18n import _, speaking
from app.safe_content import to_text
from tests.fakes.site import FakeSite
from tests.fixtures import make_test_settings
from tests.workers.processes import ROOT, eventually, page_readers, running

URL = "https://news.example/story"
pytestmark = pytest.mark.usefixtures("settings")  # READING_PROCESSES


def page(site: FakeSite, paragraphs: int = 0) -> bytes:
    """The fake site's article, with `paragraphs` more paragraphs to make it slow to read."""
    html = site.text("pages", "article.html")
    more = "".join(
        f"<p>Paragraph {n} of the council's long report on the river.</p>"
        for n in range(paragraphs)
    )
    return html.replace("</article>", more + "</article>", 1).encode()


async def read(body: bytes) -> Extracted:
    return await reading.read_page(body, url=URL, final_url=URL, charset=None, content_language="")


async def test_a_page_read_by_a_reader_is_the_article_read_here(site: FakeSite) -> None:
    body = page(site)
    assert await read(body) == read_html(body, url=URL, final_url=URL)
    assert page_readers(os.getpid()), "the page was read in a reader process"


async def test_readers_started_with_the_worker_are_ready_before_the_first_page(
    site: FakeSite, settings: Settings
) -> None:
    reading.close()
    await eventually(lambda: not page_readers(os.getpid()), within=10)
    reading.start()  # what the worker's start-up calls: no page read yet
    started = await eventually(
        lambda: len(page_readers(os.getpid())) == settings.reading_processes, within=20
    )
    assert started
    before = set(page_readers(os.getpid()))
    await read(page(site))
    assert set(page_readers(os.getpid())) == before, "the page was read by the started readers"


async def test_a_readers_reason_comes_in_the_callers_language(site: FakeSite) -> None:
    empty = b"<html><head><title>x</title></head><body><nav>Home</nav></body></html>"
    with speaking("de"):
        expected = _("No readable text found on the page.")
        with pytest.raises(ExtractionError) as raised:
            await read(empty)
    assert expected != "No readable text found on the page."  # the catalogue has it
    assert raised.value.failure == Failure.NO_TEXT
    assert raised.value.reason == expected
    assert raised.value.url == URL


async def test_a_reader_killed_mid_page_is_replaced_and_the_page_read(
    site: FakeSite, caplog: pytest.LogCaptureFixture
) -> None:
    await read(page(site))  # readers running
    big = page(site, paragraphs=15_000)  # about a second to read
    reading_it = asyncio.create_task(read(big))
    before = await eventually(lambda: page_readers(os.getpid()), within=10)
    await asyncio.sleep(0.3)
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    found = await reading_it
    assert "a page reader stopped while reading" in caplog.text  # killed mid-page, read again
    assert found == read_html(big, url=URL, final_url=URL)
    assert "Paragraph 1000 of the council" in to_text(found.content)
    assert not any(running(pid) for pid in before)
    assert set(page_readers(os.getpid())).isdisjoint(before), "new readers took over"


async def test_a_page_that_reads_too_long_fails_and_its_reader_is_stopped(
    site: FakeSite, settings: Settings
) -> None:
    await read(page(site))  # readers running
    before = page_readers(os.getpid())
    config.activate(make_test_settings(reading_seconds=0.5))
    try:
        with pytest.raises(ExtractionError) as raised:
            await read(page(site, paragraphs=40_000))  # seconds to read
    finally:
        config.activate(settings)
    assert raised.value.failure == Failure.UNREADABLE
    assert raised.value.reason == "This page could not be read: reading it took too long."
    await eventually(lambda: not any(running(pid) for pid in before), within=5)
    assert await read(page(site)) == read_html(page(site), url=URL, final_url=URL)  # new readers


# A worker killed while its readers still start: they are spawned, and it dies at once.
KILLED_AT_START = """
import os, signal
from app.articles import reading
from app.core import config
from tests.fixtures import make_test_settings
from tests.workers.processes import page_readers
config.activate(make_test_settings())
reading.start()
print(*page_readers(os.getpid()), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


async def test_readers_of_a_worker_killed_while_they_start_do_not_outlive_it(
    settings: Settings, tmp_path: Path
) -> None:
    """A reader set its parent-death signal only after importing the reading code (seconds
    on a loaded machine): one whose worker died meanwhile was never signalled and waited for
    pages for ever."""
    output = tmp_path / "output"
    with output.open("wb") as out:  # not a pipe: a reader left behind would hold it open
        done = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-c", KILLED_AT_START], cwd=ROOT, stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, output.read_text()[-2000:]
    readers = [int(pid) for pid in output.read_text().split()]
    assert len(readers) == settings.reading_processes
    try:
        await eventually(lambda: not any(running(pid) for pid in readers), within=30)
    finally:
        for pid in readers:
            if running(pid):
                os.kill(pid, signal.SIGKILL)
