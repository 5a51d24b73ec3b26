"""Posts keep their own language (issue 12): the tag the platform sent with the post.

One column on feed_items (no new table, so no row-security line): a short BCP 47 tag
("de", "pt-BR"), '' when the platform did not say. Pages put it in the post's `lang`
attribute, so the check keeps it to letters, digits and hyphens. The wall's search then
reads each post with its own language's stemmer, as the library reads articles
(`newsdesk_search_config`, m0005); an unknown language reads as `newsdesk_simple`.
"""

from app.core.db import sql_migration

ID = "2026-12-01T17:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "feed items keep their content language; search stems by it"

SQL = """
ALTER TABLE feed_items ADD COLUMN lang text NOT NULL DEFAULT ''
    CHECK (lang ~ '^[A-Za-z0-9-]{0,35}$');

DROP INDEX feed_items_search;
CREATE INDEX feed_items_search ON feed_items
    USING gin (to_tsvector(newsdesk_search_config(lang), plain_text));
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
