"""Who reposted an item: a boost or repost is shown as the original post, "boosted by" kept.

One column on feed_items (no new table, so no row-security line): the first sighting's
reposter stays, as every other field but metrics does.
"""

from app.core.db import sql_migration

ID = "2026-12-01T12:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "feed items remember who reposted them"

SQL = """
ALTER TABLE feed_items ADD COLUMN reposted_by text NOT NULL DEFAULT '';
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
