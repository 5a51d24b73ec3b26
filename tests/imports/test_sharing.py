"""Worker processes share a job: a wake-up that reaches a process already reading is passed on.

arq hands every queued wake-up to whichever process polls first, so a job's
wake-ups all went to one process while another stayed idle (issue 8's
benchmark: two workers read 200 items and 0). One process reads on one core
however many loops it runs; a passed wake-up lets an idle process take it.
"""

from __future__ import annotations

import asyncio
import dataclasses

from app.imports import services, step
from tests.articles.helpers import queued_jobs
from workers import tasks


async def _wakeups() -> list[tuple[object, ...]]:
    return [j.args for j in await queued_jobs() if j.function == services.STEP_TASK]


async def _reading_started(site) -> asyncio.Task[int]:
    loop = asyncio.create_task(tasks.import_items({}))
    for _ in range(200):
        if step.reading() and site.hits:
            break
        await asyncio.sleep(0.01)
    assert step.reading()
    return loop


async def _reading_a_slow_job(people, site) -> tuple[int, asyncio.Task[int]]:  # type: ignore[no-untyped-def]
    """A job of two slow pages, and this process's loop reading it."""
    workspace = (await people.member("editor")).workspace_id
    slow = dataclasses.replace(site.page("article.html"), delay=1.0)
    site.routes["/news/slow-1"] = site.routes["/news/slow-2"] = slow
    urls = [site.base + "/news/slow-1", site.base + "/news/slow-2"]
    await services.create_job(workspace, urls, actor_user_id=None)
    return workspace, await _reading_started(site)


async def test_a_wakeup_reaching_a_process_reading_its_job_is_passed_on(
    people, site, site_egress, redis
):
    _workspace, loop = await _reading_a_slow_job(people, site)
    await redis.flushdb()

    assert await tasks.import_items({}) == 0
    assert await _wakeups() == [(1,)]  # back in the queue, for any process to take
    await redis.flushdb()

    # After the last pass it runs where it lands: a lone worker still fills its slots.
    assert await tasks.import_items({}, step.PASS_ON_TIMES) == 1  # the second page
    assert await _wakeups() == []
    assert await loop == 1


async def test_a_job_the_process_does_not_read_yet_is_claimed_at_once(
    people, site, site_egress, redis
):
    workspace, loop = await _reading_a_slow_job(people, site)
    # A quick add beside the import: its job goes first, here and now.
    site.routes["/news/quick"] = site.page("article.html")
    await services.create_job(workspace, [site.base + "/news/quick"], actor_user_id=None)
    await redis.flushdb()

    started = asyncio.get_running_loop().time()
    reader = asyncio.create_task(tasks.import_items({}))
    for _ in range(100):
        if "/news/quick" in [h.path for h in site.hits]:
            break
        await asyncio.sleep(0.01)
    assert "/news/quick" in [h.path for h in site.hits]
    assert asyncio.get_running_loop().time() - started < 0.9  # not after a slow page
    assert await _wakeups() == []
    await asyncio.gather(reader, loop)


async def test_a_wakeup_reaching_an_idle_process_runs_there(people, site, site_egress, redis):
    workspace = (await people.member("editor")).workspace_id
    site.routes["/news/one"] = site.page("article.html")
    await services.create_job(workspace, [site.base + "/news/one"], actor_user_id=None)
    await redis.flushdb()
    assert not step.reading()
    assert await tasks.import_items({}, 1) == 1
    assert await _wakeups() == []
