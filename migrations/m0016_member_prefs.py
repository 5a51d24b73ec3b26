"""Column widths are each member's own (issue 11): a narrow column for one reader is not
narrow for the whole desk, and a viewer can size their own wall."""

from app.core.db import sql_migration

ID = "2026-12-01T16:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "wall: column widths per member"

SQL = """
CREATE TABLE wall_column_widths (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    user_id bigint NOT NULL,
    column_id bigint NOT NULL REFERENCES stream_columns ON DELETE CASCADE,
    width text NOT NULL CHECK (width IN ('narrow', 'medium', 'wide')),
    PRIMARY KEY (workspace_id, user_id, column_id),
    -- A member who leaves takes their widths along.
    FOREIGN KEY (workspace_id, user_id) REFERENCES memberships (workspace_id, user_id)
        ON DELETE CASCADE
);
CREATE INDEX wall_column_widths_column ON wall_column_widths (column_id);
SELECT newsdesk_isolate_workspace('wall_column_widths');

-- The widths the desk had set become every member's own, then the shared one goes.
INSERT INTO wall_column_widths (workspace_id, user_id, column_id, width)
SELECT c.workspace_id, m.user_id, c.id, c.width
FROM stream_columns c JOIN memberships m ON m.workspace_id = c.workspace_id
WHERE c.width <> 'medium' AND c.deleted_at IS NULL;
ALTER TABLE stream_columns DROP COLUMN width;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
