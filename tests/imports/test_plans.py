"""What PostgreSQL reads for one item does not grow with the items read before it.

A worker claims and finishes every item of every job, so a statement of theirs that reads
the items already done slows an import as it goes (a 5,000-URL job: ~12 million rows read)
and every import after it. The plans are taken as for a large table (`rows_read_by_index`).
"""

from __future__ import annotations

import pytest

from app.core import db
from app.imports import policy, queries, services
from app.imports.types import Claim
from tests.plans import rows_read_by_index, rows_written

URLS = 120
# The item itself, those in flight, the next pending one: a few, never the 115 done.
FEW = 8


@pytest.fixture
async def workspace(people) -> int:
    return (await people.member("editor")).workspace_id


async def far_into_a_job(workspace_id: int) -> Claim:
    """A claim in one of two jobs of URLS items each, all but the last few done."""
    for _job in range(2):
        urls = [f"https://news.example/{n}" for n in range(URLS)]
        job_id = await services.create_job(workspace_id, urls, actor_user_id=None)
        await db.fetch(
            """UPDATE import_items SET state = 'error', last_attempt_at = now() - interval '1 minute',
                 finished_at = now() WHERE job_id = $1 AND idx < $2""",
            job_id,
            URLS - 5,
        )
    claim = await services.claim_next("w1")
    assert claim is not None
    return claim


async def test_a_claim_reads_no_item_already_done(workspace):
    await far_into_a_job(workspace)
    claim = lambda: services.claim_next("w2")  # noqa: E731
    assert await rows_read_by_index(workspace, claim, "SKIP LOCKED", "import_items") <= FEW


async def test_finishing_an_item_reads_no_item_already_done(workspace):
    claim = await far_into_a_job(workspace)
    fail = lambda: services.fail(claim, policy.Fail("Gone."))  # noqa: E731
    assert await rows_read_by_index(workspace, fail, "finished_at = now()", "import_items") <= FEW


async def test_a_jobs_view_reads_its_latest_items_not_all(workspace):
    claim = await far_into_a_job(workspace)
    job = lambda: queries.job(workspace, claim.job_id)  # noqa: E731
    # Its first item, those in flight and the latest finished (its pace).
    assert (
        await rows_read_by_index(workspace, job, "first_url", "import_items")
        <= FEW + queries.PACE_ITEMS
    )


async def test_a_jobs_view_reads_no_pending_item_but_the_one_it_names(workspace):
    """ "Waiting for <host>" names one host: the page must not read every pending item (up to
    5,000, up to four times a second) to find out that none waits for one."""
    urls = [f"https://news.example/{n}" for n in range(URLS)]
    job_id = await services.create_job(workspace, urls, actor_user_id=None)
    assert await services.claim_next("w1") is not None  # running, the rest pending and due
    job = lambda: queries.job(workspace, job_id)  # noqa: E731
    assert await rows_read_by_index(workspace, job, "first_url", "import_items") <= FEW


async def test_claims_and_finishes_write_the_job_row_in_place(workspace):
    """Three writes of the job's row per item: with new index entries each time, its dead
    versions would pile up during an import and slow every read of the job."""
    claim = await far_into_a_job(workspace)
    assert await services.claim_next("w2") is not None  # both jobs running now
    # (A job's first claim moves it from queued to running: a new version, once.)
    assert await rows_written(workspace, "import_jobs", lambda: services.claim_next("w3")) == {
        "in place"
    }
    fail = lambda: services.fail(claim, policy.Fail("Gone."))  # noqa: E731
    assert await rows_written(workspace, "import_jobs", fail) == {"in place"}
