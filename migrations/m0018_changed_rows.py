"""Rows changed since a time, found by index: the library's live view asks after every notice.

The library's live view patches the rows a client loaded below its first page when they
change (docs/decisions/live.md): after each notice it reads which articles and analyses
were written since its last read. `updated_at` is set by every write of either table;
these indexes keep that read a small range scan whatever the library's size.
"""

from app.core.db import sql_migration

ID = "2026-12-01T18:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "articles and analyses found by when they were last written"

SQL = """
CREATE INDEX articles_updated ON articles (workspace_id, updated_at);
CREATE INDEX analyses_updated ON analyses (workspace_id, updated_at);
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
