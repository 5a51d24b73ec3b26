"""Piccolo tables of the bulk import. The schema itself lives in migrations/."""

from piccolo.columns import UUID, BigInt, BigSerial, Integer, Text, Timestamptz
from piccolo.table import Table


class ImportJob(Table, tablename="import_jobs"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    created_by = BigInt(null=True, default=None)  # the user who started it
    source = Text(default="import")  # an articles Source value (import, manual, ...) or fetch-again
    status = Text(default="queued")  # queued | running | paused | done | cancelled
    total = Integer()  # number of items
    # Bookkeeping, changed in the same transaction as the item; the items are the truth.
    saved_count = Integer(default=0)  # saved + consent-wall (a stored article)
    duplicate_count = Integer(default=0)
    error_count = Integer(default=0)
    warning_count = Integer(default=0)  # stored with a warning (consent wall, paywall)
    cancelled_count = Integer(default=0)
    leased_by = Text(default="")  # the worker that last claimed an item of this job
    leased_until = Timestamptz(null=True, default=None)  # that claim's lease end
    last_claim_at = Timestamptz(null=True, default=None)  # fairness: least recently served first
    created_at = Timestamptz()
    updated_at = Timestamptz()
    started_at = Timestamptz(null=True, default=None)  # first claim
    finished_at = Timestamptz(null=True, default=None)  # every item terminal, or cancelled
    deleted_at = Timestamptz(null=True, default=None)  # soft delete; its articles stay
    archived_at = Timestamptz(null=True, default=None)  # cleaned up after 30 days: items dropped


class ImportItem(Table, tablename="import_items"):
    id = BigSerial(primary_key=True)
    workspace_id = BigInt()
    job_id = BigInt()
    idx = Integer()  # position in the person's input, from 0
    url = Text()  # as the person gave it (cleaned of brackets and punctuation)
    # pending | extracting | saved | duplicate | consent-wall | error | cancelled
    state = Text(default="pending")
    # For saved, duplicate, consent-wall; a fetch again's item names its article from the start.
    article_id = BigInt(null=True, default=None)
    warning = Text(default="")  # an articles Warning value, e.g. "probable_consent_wall"
    error = Text(default="")  # why it failed (or last failed), for a person
    waiting_for = Text(default="")  # the host whose request budget it waits for
    attempts = Integer(default=0)  # claims that counted (budget waits do not)
    last_attempt_at = Timestamptz(null=True, default=None)
    next_attempt_at = Timestamptz()  # not claimed before this (backoff, Retry-After)
    leased_by = Text(default="")  # worker id "host:pid"
    leased_until = Timestamptz(null=True, default=None)  # the claim expires then
    lease_token = UUID(null=True, default=None)  # results are written only under this claim
    created_at = Timestamptz()
    updated_at = Timestamptz()
    finished_at = Timestamptz(null=True, default=None)  # reached a terminal state
