"""Live articles counted by index.

`articles_live_language`: the analyser's term counts scale their sample to the number of
live articles of the workspace, per language; counted from the table, that read every
article row (~5 us each: 260 ms at 50,000), from this index only its entries.
"""

from app.core.db import sql_migration

ID = "2026-12-02T04:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "analysis: live articles counted by index"

SQL = """
CREATE INDEX articles_live_language ON articles (workspace_id, language)
  WHERE deleted_at IS NULL;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
