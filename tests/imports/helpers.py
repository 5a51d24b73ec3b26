"""Driving import jobs in tests: settings for one test, running the worker loop, reading rows."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from app.core import config, db
from app.imports import queries, step
from app.imports.types import JobView
from tests.fixtures import make_test_settings


@contextlib.contextmanager
def import_settings(**overrides: Any) -> Iterator[None]:
    """This process's settings with import overrides, for one test."""
    before = config.active()
    config.activate(make_test_settings(**overrides))
    try:
        yield
    finally:
        config.activate(before)


async def run_worker(worker: str = "test-worker") -> int:
    """What an arq wake-up runs: items are read until none is due."""
    return await step.run_loop(worker)


async def job_of(workspace_id: int, job_id: int) -> JobView:
    job = await queries.job(workspace_id, job_id)
    assert job is not None
    return job


async def item_rows(job_id: int) -> list[dict[str, Any]]:
    rows = await db.fetch("SELECT * FROM import_items WHERE job_id = $1 ORDER BY idx", job_id)
    return [dict(r) for r in rows]


async def states(job_id: int) -> list[str]:
    return [r["state"] for r in await item_rows(job_id)]


async def make_due(job_id: int) -> None:
    """What time does between attempts: every pending item is due now."""
    await db.fetch(
        "UPDATE import_items SET next_attempt_at = now() WHERE job_id = $1 AND state = 'pending'",
        job_id,
    )


def counters_match_states(job: JobView, counts: dict[str, int]) -> bool:
    c = job.counters
    return (
        c.saved == counts.get("saved", 0) + counts.get("consent-wall", 0)
        and c.duplicates == counts.get("duplicate", 0)
        and c.errors == counts.get("error", 0)
        and c.cancelled == counts.get("cancelled", 0)
    )
