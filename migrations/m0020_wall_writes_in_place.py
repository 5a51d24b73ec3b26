"""A poll writes the rows it sees again in place: no index names a column each poll writes.

Every poll re-sees most of its page (a feed's newest 40 posts) and sets `fetched_at` on each,
and sets `next_poll_at` on its source. Both were indexed (`feed_items_fetched` for the daily
sweep, `stream_sources_due` for the claim), so each of those writes was a new row version with
an entry in every index of its table - for an item, its text's words in the search index too -
and left a dead version behind: 40 per poll, all day. Without them the writes are HOT updates
(on the row's own page, no index touched); a fifth of each new feed_items page is left free so
the page has room for them (fillfactor 80: the newest posts are the ones seen again).

What they served: the daily sweep now reads the table once (it holds 30 days by its own
rule), and the claim reads the active sources (a few per column, not their history), keyed
on the id as `import_jobs_active` (m0019).
"""

from app.core.db import sql_migration

ID = "2026-12-02T01:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "polls update items and sources in place: next_poll_at and fetched_at unindexed"

SQL = """
DROP INDEX feed_items_fetched;
ALTER TABLE feed_items SET (fillfactor = 80);
DROP INDEX stream_sources_due;
CREATE INDEX stream_sources_due ON stream_sources (id)
  WHERE active AND state NOT IN ('disabled', 'unsupported');
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
