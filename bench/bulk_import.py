"""Bulk import throughput: 1,000 URLs from a loopback article site, against a bare loop.

    .venv/bin/python bench/bulk_import.py [urls] [--long-articles]

With the test services running (scripts/services.sh start test); DATABASE_URL
and REDIS_URL as for the other benchmarks (it recreates `newsdesk_bench`).

A loopback article site (tests/fakes) serves `urls` realistic news pages of
50-150 KB each (`page_body`: an article of a few KB of text among inline
state, styles and link lists, as real news pages of that size hold it;
`--long-articles` fills each page with its article instead). For 1 and then
2 real worker processes (`python -m app worker`), it times `create_job` to
the job's `done`, and checks every URL was stored exactly once. In the same
run, a bare single-process loop fetches the same pages over a plain socket
and runs `trafilatura.extract` on each - no egress, no database. It prints
URLs/s and the ratio to the bare loop (target: >= 0.8x with one worker,
>= 1.5x with two).

The loopback site's per-host budget is raised for the run (EGRESS_HOST_BUDGETS
127.0.0.1=1000/1000/64): the default 2 requests/s per host is politeness
toward real sites, and measuring it would measure the budget, not the import.
IMPORT_IN_FLIGHT_PER_JOB stays at its default (3).

The analyses of the stored articles wait while a worker reads import items
(workers.tasks.analyse_article) and run once the import is done: they are
not in the timed span, and the bench drops the ones still pending before it
stops the workers, so a run never inherits the previous run's analyses.

Besides wall-clock time it prints CPU seconds per URL (the workers' own and
their page readers', from /proc, against the bare loop's thread): on a shared, loaded machine
the wall-clock ratio moves with the neighbours, the CPU cost does not. A line per run splits
the CPU by part - worker, readers, PostgreSQL, Redis and the site (its own process) - and the
machine's busy CPU says what everything else took.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import trafilatura
from redis.asyncio import Redis

from app.accounts import services as accounts
from app.core import db
from app.core.config import Settings
from app.imports import services as imports
from bench._setup import bench_settings, start_services, stop_services
from tests.egress.servers import Reply
from tests.fakes.site import HTML, FakeSite
from tests.workers.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
URLS = int(ARGS[0]) if ARGS else 1000
LONG_ARTICLES = "--long-articles" in sys.argv  # see page_body
BUDGET = "127.0.0.1=1000/1000/64"
PARTS = ("worker", "readers", "PostgreSQL", "Redis", "site")  # cpu_by_part
# Which runs: "1,2" by default; BENCH_WORKERS=1 for a quicker profile of one worker.
WORKERS = [int(n) for n in os.environ.get("BENCH_WORKERS", "1,2").split(",")]
_WORDS = [
    "the",
    "council",
    "said",
    "on",
    "tuesday",
    "that",
    "the",
    "flood",
    "warning",
    "system",
    "along",
    "the",
    "river",
    "would",
    "share",
    "sensors",
    "sirens",
    "and",
    "staff",
    "between",
    "six",
    "towns",
    "after",
    "last",
    "winter",
    "when",
    "water",
    "rose",
    "faster",
    "than",
    "anyone",
    "had",
    "measured",
    "residents",
    "asked",
    "for",
    "clearer",
    "alerts",
    "and",
    "engineers",
    "for",
    "better",
    "gauges",
]


def page_body(template: str, n: int, *, long_articles: bool = False) -> bytes:
    """A realistic news page of 50-150 KB: the fake site's page with an article of 250-2,500
    words (log-uniform: median ~800 words, ~5 KB of text) among what surrounds an article on
    a news site - inline state, styles and "most read" link lists (`_surroundings`).
    The trafilatura project's evaluation pages of that size (150 real news pages) hold a
    median of 3.6 KB of article text (90th percentile 11 KB, most 37 KB): 4 % of the page.
    `long_articles`: the article alone fills the page (~90 KB of text) - the worst case for
    what grows with the text (the sanitiser, the stored row, its search vector)."""
    rng = random.Random(n)
    target = rng.randint(50_000, 150_000)
    shortest, longest = math.log(250), math.log(2_500)
    words = 10**9 if long_articles else int(math.exp(rng.uniform(shortest, longest)))
    paragraphs: list[str] = []
    size = len(template)
    while words > 0 and size < target:
        count = rng.randint(12, 30)
        sentence = " ".join(rng.choice(_WORDS) for _ in range(count))
        paragraph = f"<p>{sentence.capitalize()}. {sentence}.</p>\n"
        paragraphs.append(paragraph)
        size += len(paragraph)
        words -= 2 * count
    page = template.replace("</article>", "".join(paragraphs) + "</article>", 1)
    return page.replace("</body>", _surroundings(rng, target - len(page)) + "</body>", 1).encode()


def _surroundings(rng: random.Random, size: int) -> str:
    """About `size` bytes of what a news page carries besides its article, in the shares
    such pages show: the framework's inline state (JSON), inline styles, link lists (no
    comments: trafilatura.extract keeps them and our reading drops them)."""
    parts: list[str] = []
    left = size
    while left > 0:
        kind = rng.choice(("state", "style", "links", "links"))
        if kind == "state":
            stories = [
                {"id": rng.randrange(10**6), "headline": _phrase(rng, 8), "url": f"/news/{rng.randrange(10**6)}",
                 "teaser": _phrase(rng, 25), "tags": [_phrase(rng, 1) for _ in range(4)]}
                for _ in range(rng.randint(10, 40))
            ]  # fmt: skip
            part = f'<script type="application/json">{json.dumps({"props": {"stories": stories}})}</script>\n'
        elif kind == "style":
            rules = "".join(
                f".c{rng.randrange(10**5)}{{margin:{rng.randint(0, 40)}px;color:#{rng.randrange(16**6):06x}}}"
                for _ in range(rng.randint(50, 200))
            )
            part = f"<style>{rules}</style>\n"
        else:
            items = "".join(
                f'<li><a href="/news/{rng.randrange(10**6)}">{_phrase(rng, 7)}</a></li>'
                for _ in range(rng.randint(20, 80))
            )
            part = f'<aside class="most-read"><h2>Most read</h2><ul>{items}</ul></aside>\n'
        parts.append(part)
        left -= len(part)
    return "".join(parts)


def _phrase(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize()


async def bare_fetch(port: int, path: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    )
    await writer.drain()
    raw = await reader.read()
    writer.close()
    return raw.partition(b"\r\n\r\n")[2]


async def bare_loop(port: int, paths: list[str]) -> tuple[float, float]:
    """Seconds, and CPU seconds of this thread (the site serves from its own process)."""
    started, cpu = time.perf_counter(), time.thread_time()
    for path in paths:
        html = (await bare_fetch(port, path)).decode("utf-8")
        assert trafilatura.extract(html)
    return time.perf_counter() - started, time.thread_time() - cpu


def cpu_by_part(workers: list[int], services: Services) -> dict[str, float]:
    """User + system CPU seconds so far of the parts of an import (Linux /proc): the worker
    processes, their page readers (live children, app.articles.reading), the run's
    PostgreSQL and Redis (their own processes: others on a shared machine are not counted)
    and the site's process."""
    parts = dict.fromkeys(PARTS, 0.0)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            tail = stat.read_text().rsplit(")", 1)[1]
        except OSError:
            continue  # gone meanwhile
        pid, fields = int(stat.parent.name), tail.split()
        parent = int(fields[1])
        part = (
            "worker" if pid in workers
            else "readers" if parent in workers
            else "PostgreSQL" if services.postmaster in (pid, parent)
            else "Redis" if pid == services.redis
            else "site" if pid == services.site
            else None
        )  # fmt: skip
        if part is not None:
            parts[part] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return parts


@dataclass(frozen=True)
class Services:
    """The process ids of the run's PostgreSQL server (its postmaster: every backend is its
    child) and Redis server."""

    postmaster: int
    redis: int
    site: int

    @classmethod
    async def of(cls, redis: Redis, site: int) -> Services:
        backend = await db.fetchval("SELECT pg_backend_pid()")
        return cls(_parent(backend), int((await redis.info("server"))["process_id"]), site)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine has spent busy (Linux /proc/stat): with the
    workers' own, it says what PostgreSQL, Redis and the site took beside them."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(v) for v in Path("/proc/stat").read_text().split()[1:9]
    )
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


async def workers_ready(redis: Redis, settings: Settings) -> None:
    """Wait for arq's health record: the worker started and polls the queue."""
    key = settings.redis_key("worker-health")
    for _ in range(600):
        if await redis.exists(key):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the workers did not start within a minute")


def start_worker(settings: Settings, site_allow: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "REDIS_PREFIX": settings.redis_prefix,
        "SECRET_KEY": settings.secret_key.get_secret_value(),
        "EGRESS_ALLOW": site_allow,
        "EGRESS_HOST_BUDGETS": BUDGET,
        "LOG_LEVEL": "WARNING",
    }
    # A profiler to run the worker under, e.g. BENCH_WORKER_PREFIX="py-spy record -f raw -o w.txt --"
    prefix = os.environ.get("BENCH_WORKER_PREFIX", "").split()
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "app", "worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


async def run_import(
    settings: Settings, redis: Redis, urls: list[str], workers: int, site: ServedSite
) -> Run:
    """Seconds from create_job to done, and the workers' CPU seconds meanwhile."""
    user_id = await accounts.create_user(f"w{workers}@bench.example", "Bench", "bench password 1")
    workspace_id = await accounts.create_workspace(f"bench {workers}", user_id)
    await redis.delete(settings.redis_key("worker-health"))
    processes = [start_worker(settings, site.allow) for _ in range(workers)]
    try:
        await workers_ready(redis, settings)
        await asyncio.sleep(2.0)  # every worker connects before the clock starts
        pids = [p.pid for p in processes]
        services = await Services.of(redis, site.pid)
        cpu = cpu_by_part(pids, services)
        busy = machine_busy_seconds()
        started = time.perf_counter()
        job_id = await imports.create_job(workspace_id, urls, actor_user_id=user_id)
        while (  # noqa: ASYNC110 - the database is what says "done"
            await db.fetchval("SELECT status FROM import_jobs WHERE id = $1", job_id)
        ) != "done":
            await asyncio.sleep(0.1)
        seconds = time.perf_counter() - started
        busy = machine_busy_seconds() - busy
        cpu = {part: seconds - cpu[part] for part, seconds in cpu_by_part(pids, services).items()}
        # Who read what, and whether analyses ran meanwhile (they should wait: not timed).
        split = await db.fetch(
            "SELECT leased_by, count(*) AS n FROM import_items WHERE job_id = $1"
            " GROUP BY leased_by ORDER BY n DESC",
            job_id,
        )
        analysed = await db.fetchval(
            "SELECT count(*) FROM analyses WHERE workspace_id = $1 AND status <> 'pending'",
            workspace_id,
        )
        # The analyses that waited for the import are not what is measured here.
        await db.fetch("DELETE FROM analyses WHERE status = 'pending'")
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                print(f"worker {process.pid} ignored SIGTERM for 20 s; killed", file=sys.stderr)
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    saved = await db.fetchval(
        "SELECT count(*) FROM import_items WHERE job_id = $1 AND state = 'saved'", job_id
    )
    stored = await db.fetchval(
        "SELECT count(*) FROM articles WHERE workspace_id = $1", workspace_id
    )
    assert saved == stored == len(urls), (saved, stored, len(urls))
    return Run(seconds, cpu, busy, [r["n"] for r in split], analysed)


@dataclass(frozen=True)
class Run:
    seconds: float
    parts: dict[str, float]  # CPU seconds of the workers, their readers, PostgreSQL, Redis, site
    busy: float  # the whole machine's busy CPU seconds
    per_worker: list[int]  # items each worker process read
    analysed: int  # analyses started while the import ran

    @property
    def cpu(self) -> float:
        """The workers' CPU seconds, their readers' included."""
        return self.parts["worker"] + self.parts["readers"]


@dataclass(frozen=True)
class ServedSite:
    base: str
    allow: str
    port: int
    pid: int


def serve(site: FakeSite) -> tuple[ServedSite, multiprocessing.Process]:
    """`site` with its pages, served from a process of its own (forked with them). Served
    from a thread of this process, it shared the interpreter's lock with the bare loop:
    the loop ran ~4 % slower (alternated runs, quiet machine), which flattered the ratio."""
    ready = multiprocessing.get_context("fork").Event()
    process = multiprocessing.get_context("fork").Process(
        target=_serve, args=(site, ready), daemon=True
    )
    process.start()
    if not ready.wait(30):
        raise RuntimeError("the loopback site did not start")
    assert process.pid is not None
    return ServedSite(site.base, site.allow(), site.port, process.pid), process


def _serve(site: FakeSite, ready: Any) -> None:
    async def forever() -> None:
        await site.start()
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(forever())


async def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    settings = bench_settings(egress_host_budgets=[BUDGET])
    redis = await start_services(settings)
    pages = FakeSite(free_port())  # its address known before it listens: the pages link to it
    template = pages.text("pages", "article.html")
    paths = [f"/bench/{n}" for n in range(URLS)]
    bodies = [page_body(template, n, long_articles=LONG_ARTICLES) for n in range(URLS)]
    for path, body in zip(paths, bodies, strict=True):
        pages.routes[path] = Reply(headers=[("Content-Type", HTML)], body=body)
    megabytes = sum(len(b) for b in bodies) / 1e6
    site, server = serve(pages)
    try:
        bare, bare_cpu = await bare_loop(site.port, paths)
        results = {}
        for workers in WORKERS:
            await redis.flushdb()
            urls = [f"{site.base}{p}?run={workers}" for p in paths]
            results[workers] = await run_import(settings, redis, urls, workers, site)

        kind = "long articles filling the page" if LONG_ARTICLES else "news pages"
        print(f"pages                   {URLS:,} {kind} ({megabytes:.0f} MB, 50-150 KB each)")
        print(f"loopback host budget    raised for the run: {BUDGET}")
        print("analyses                wait for the import's reading; not timed")
        print(
            f"bare fetch+trafilatura  {bare:.1f} s  {URLS / bare:.1f} URLs/s (one process)"
            f"  CPU {bare_cpu / URLS * 1000:.0f} ms/URL"
        )
        for workers, run in results.items():
            print(
                f"import, {workers} worker(s)      {run.seconds:.1f} s  {URLS / run.seconds:.1f} URLs/s"
                f"  ratio {bare / run.seconds:.2f}x the bare loop"
                f"  CPU {run.cpu / URLS * 1000:.0f} ms/URL ({bare_cpu / run.cpu:.2f}x the bare loop's)"
                f"  machine CPU {run.busy / URLS * 1000:.0f} ms/URL"
                f" ({run.busy / run.seconds:.2f} of {os.cpu_count()} cores busy)"
                f"  items per worker {'/'.join(map(str, run.per_worker))}"
                f"  analyses run meanwhile {run.analysed}"
            )
            shares = "  ".join(f"{part} {run.parts[part] / URLS * 1000:.1f}" for part in PARTS)
            print(f"  CPU ms/URL by part     {shares}")
    finally:
        server.terminate()
        await stop_services(redis)


if __name__ == "__main__":
    asyncio.run(main())
