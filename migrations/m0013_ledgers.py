"""Rolling ledgers of distinct subjects: Instagram's 30 hashtags per rolling 7 days.

One row per workspace, provider, bucket and subject (a hashtag) with the time
its current use began; a subject counts against the cap until then + 7 days,
and using it again meanwhile is free (docs/decisions/streams.md, "Ledgers").
"""

from app.core.db import sql_migration

ID = "2026-12-01T13:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "rolling ledgers of distinct subjects (Instagram hashtags)"

SQL = """
CREATE TABLE provider_ledger_subjects (
    workspace_id bigint NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    provider text NOT NULL,
    bucket text NOT NULL,
    subject text NOT NULL,
    first_used_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, provider, bucket, subject)
);
SELECT newsdesk_isolate_workspace('provider_ledger_subjects');
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
