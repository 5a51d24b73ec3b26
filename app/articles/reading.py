"""Pages are read in reading processes, beside the worker's event loop.

Reading a page - trafilatura, then the sanitiser (`extraction.read_html`) - is ~60 ms of
Python under the GIL for a news article. In a thread it took turns with the worker's event
loop (stream polls, lease renewals, the next pages' downloads), and a worker process never
used a second core. A few reading processes per worker (READING_PROCESSES) read pages in
parallel with the loop and with each other.

- The article comes back as msgpack, decoded into `Extracted` (its tree is tagged):
  pickling the tree cost ~5 ms a page, msgpack ~0.3 ms.
- Readers are started fresh (spawn, not fork): none inherits the worker's event loop,
  threads or connections. They start with the worker (`start`), each importing the
  extraction code once, so an import's first page does not wait the second that takes.
- Readers ignore SIGINT and SIGTERM: a stop signal sent to the worker's whole process group
  must let the worker finish its pages or hand them back, not fail the pages in flight.
  They die with their worker instead, however it ends (Linux's parent-death signal, set
  before anything heavy is imported, app.articles.reader_start): a killed worker leaves no
  reader behind, even one still starting.
- A reader that dies (a crash inside lxml, the kernel's OOM killer) breaks the pool: it is
  made anew and the page read once more; a page that stops its reader twice fails with a
  reason, and the worker lives on.
- A page that takes longer than READING_SECONDS to read (a hostile page can make the
  extractor run for minutes) fails with a reason, and its reader is killed: in a thread it
  would have held the item - and its lease, renewed by the heartbeat - for as long as it ran.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial

import msgspec

from app.articles.extraction import Extracted, ExtractionError, Failure, plain_elements, read_html
from app.articles.reader_start import reader_started
from app.core import config
from app.core.i18n import _, active_language, speaking

log = logging.getLogger(__name__)

_readers: ProcessPoolExecutor | None = None
plain_elements()  # in each reader (it imports this module for its first call) and its worker
_decoder = msgspec.msgpack.Decoder(Extracted)
_encoder = msgspec.msgpack.Encoder()


async def read_page(
    body: bytes, *, url: str, final_url: str, charset: str | None, content_language: str
) -> Extracted:
    """`extraction.read_html` in a reading process; its reasons in the caller's language."""
    call = partial(_read, body, url, final_url, charset, content_language, active_language())
    loop = asyncio.get_running_loop()
    deadline = config.active().reading_seconds
    for _attempt in range(2):
        readers = _pool()
        try:
            async with asyncio.timeout(deadline):
                return _decoder.decode(await loop.run_in_executor(readers, call))
        except BrokenProcessPool:
            log.warning("a page reader stopped while reading %s; starting new readers", url)
            _discard(readers)
        except TimeoutError:
            # The reader would go on reading: stop it (and the others - a pool cannot tell
            # which reader has which page; their pages are read again, see above).
            log.warning("reading %s took over %s s; stopping its readers", url, deadline)
            _stop(readers)
            reason = _("This page could not be read: reading it took too long.")
            raise ExtractionError(url, Failure.UNREADABLE, reason) from None
    reason = _("This page could not be read: reading it crashed twice.")
    raise ExtractionError(url, Failure.UNREADABLE, reason)


def start() -> None:
    """Start the readers now, in the background (the worker's start-up): each takes about a
    second to import what reading needs, which the first page would otherwise wait for."""
    readers = _pool()
    for _reader in range(config.active().reading_processes):
        readers.submit(_ready)


def close() -> None:
    """Stop the readers (the worker's shutdown); pages not yet read are not read."""
    if _readers is not None:
        _discard(_readers)


def _pool() -> ProcessPoolExecutor:
    global _readers
    if _readers is None:
        _readers = ProcessPoolExecutor(
            max_workers=config.active().reading_processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=reader_started,  # its own light module: the first thing a reader runs
            initargs=(os.getpid(),),
        )
    return _readers


def _stop(readers: ProcessPoolExecutor) -> None:
    """Kill the readers now, then let the pool go."""
    for process in list(readers._processes.values()):
        process.kill()
    _discard(readers)


def _discard(readers: ProcessPoolExecutor) -> None:
    global _readers
    if _readers is readers:
        _readers = None
    readers.shutdown(wait=False, cancel_futures=True)


def _ready() -> None:
    """In a reader: nothing to do - unpickling this call has imported the reading code."""


def _read(
    body: bytes,
    url: str,
    final_url: str,
    charset: str | None,
    content_language: str,
    language: str,
) -> bytes:
    """In a reader: the page read in the caller's language, as msgpack."""
    with speaking(language):
        extracted = read_html(
            body, url=url, final_url=final_url, charset=charset, content_language=content_language
        )
    return _encoder.encode(extracted)
