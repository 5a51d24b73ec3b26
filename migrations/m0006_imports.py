"""Bulk URL import: jobs and their items (issue 8, seed 001)."""

from app.core.db import sql_migration

ID = "2026-12-01T06:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "import jobs and items"

SQL = """
CREATE TABLE import_jobs (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    created_by bigint REFERENCES users ON DELETE SET NULL,
    source text NOT NULL DEFAULT 'import',
    status text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'paused', 'done', 'cancelled')),
    total integer NOT NULL CHECK (total > 0),
    saved_count integer NOT NULL DEFAULT 0,
    duplicate_count integer NOT NULL DEFAULT 0,
    error_count integer NOT NULL DEFAULT 0,
    warning_count integer NOT NULL DEFAULT 0,
    cancelled_count integer NOT NULL DEFAULT 0,
    leased_by text NOT NULL DEFAULT '',
    leased_until timestamptz,
    last_claim_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    finished_at timestamptz,
    deleted_at timestamptz,
    archived_at timestamptz
);
CREATE INDEX import_jobs_recent ON import_jobs (workspace_id, created_at DESC, id DESC)
    WHERE deleted_at IS NULL;
CREATE INDEX import_jobs_active ON import_jobs (last_claim_at NULLS FIRST)
    WHERE status IN ('queued', 'running') AND deleted_at IS NULL;

CREATE TABLE import_items (
    id bigserial PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    job_id bigint NOT NULL REFERENCES import_jobs ON DELETE CASCADE,
    idx integer NOT NULL,
    url text NOT NULL,
    state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'extracting', 'saved', 'duplicate', 'consent-wall',
                         'error', 'cancelled')),
    article_id bigint REFERENCES articles ON DELETE SET NULL,
    warning text NOT NULL DEFAULT '',
    error text NOT NULL DEFAULT '',
    waiting_for text NOT NULL DEFAULT '',
    attempts integer NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    leased_by text NOT NULL DEFAULT '',
    leased_until timestamptz,
    lease_token uuid,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    UNIQUE (workspace_id, job_id, idx)
);
CREATE INDEX import_items_due ON import_items (job_id, next_attempt_at, idx)
    WHERE state = 'pending';
CREATE INDEX import_items_in_flight ON import_items (job_id, leased_until)
    WHERE state = 'extracting';
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
