"""Import jobs read and written by index, whatever the size of their history.

`import_jobs_active` was keyed on `last_claim_at`, which each claim sets: every claim then
wrote a new version of the job row with an entry in each of its indexes (no HOT update),
and the row's dead versions piled up during an import, slowing each later read of the job
(three per item). Keyed on the id, a claim's and a finish's writes stay on the row's page.
The claim's fairness still orders the few active jobs by `last_claim_at`, after the index.

`import_items_finished`: a running job's pace is read from its latest finished items (the
job's page asks up to four times a second); without it, each ask read every item of the job.
"""

from app.core.db import sql_migration

ID = "2026-12-02T00:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "import jobs updated in place; a job's latest finished items by index"

SQL = """
DROP INDEX import_jobs_active;
CREATE INDEX import_jobs_active ON import_jobs (id)
  WHERE status IN ('queued', 'running') AND deleted_at IS NULL;
CREATE INDEX import_items_finished ON import_items (job_id, finished_at DESC)
  WHERE finished_at IS NOT NULL;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
