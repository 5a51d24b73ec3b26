"""The wall page: column widths, items saved to the library, search over stored items."""

from app.core.db import sql_migration

ID = "2026-12-01T14:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "wall: column widths, saved feed items, item search"

SQL = """
ALTER TABLE stream_columns ADD COLUMN width text NOT NULL DEFAULT 'medium'
    CHECK (width IN ('narrow', 'medium', 'wide'));

-- "Save to library" on a wall item: the one-URL import job that saves it. The
-- item shows that job's state; the job itself stays the truth.
CREATE TABLE feed_item_saves (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    item_id bigint NOT NULL REFERENCES feed_items ON DELETE CASCADE,
    job_id bigint NOT NULL REFERENCES import_jobs ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id)
);
CREATE INDEX feed_item_saves_job ON feed_item_saves (job_id);
SELECT newsdesk_isolate_workspace('feed_item_saves');

-- The wall's search box reads stored items' plain text.
CREATE INDEX feed_items_search ON feed_items
    USING gin (to_tsvector('simple', plain_text));
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
