"""Topic runs may end `partial`: the source was read, some entries could not be stored."""

from app.core.db import sql_migration

ID = "2026-12-01T03:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "topic runs: the partial status"

SQL = """
ALTER TABLE topic_runs DROP CONSTRAINT topic_runs_status_check;
ALTER TABLE topic_runs ADD CONSTRAINT topic_runs_status_check
    CHECK (status IN ('running', 'ok', 'partial', 'not_modified', 'failed'));
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
