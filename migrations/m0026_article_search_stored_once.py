"""Each article's search vector is stored once, in `article_search`; live articles counted by index.

m0024 copied the generated `articles.search` into `article_search`, the table the word
index is read from under row security: every vector was stored twice (~5.5 kB an
article) and each INSERT copied it. Now `articles` has no `search` column: the trigger
computes the vector itself (`newsdesk_search_vector`, the generated column's expression)
into `article_search`, once per INSERT, and again on an UPDATE only when a column it is
made of changed. Everything that read `a.search` reads the vectors through SECURITY
DEFINER functions that take article ids and answer only those of the bound workspace
(all, unbound: system work, as the policy), with the policy's own test, as
`newsdesk_article_matches` does (m0024: an owner that is a superuser or has BYPASSRLS is
held by no policy, so a function must not trust `articles`' inside it):

- `newsdesk_article_vectors(ids)`: (id, vector) of those articles, for ranking a search's
  candidates and the analyser's term counts;
- `newsdesk_article_vector(id)`: one article's vector, for a date order that walks the
  library and matches article after article until its page is full.

The vectors are backfilled (any article whose copy is missing or differs) before the
column is dropped, and the table is rewritten without it (the space comes back), all in
this migration's one transaction.

`articles_live_language`: the analyser's term counts scale their sample to the number of
live articles of the workspace, per language; counted from the table, that read every
article row (~5 us each: 260 ms at 50,000), from this index only its entries.
"""

from app.core.db import sql_migration

ID = "2026-12-02T04:40:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "search: each article's vector stored once; live articles counted by index"

# The functions run as their owner: their search_path is pinned to the schema the tables are
# in, with pg_temp last (a caller's temporary table must not stand in for ours).
SQL = """
INSERT INTO article_search (article_id, workspace_id, vector)
SELECT id, workspace_id, search FROM articles
ON CONFLICT (article_id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, vector = EXCLUDED.vector
WHERE (article_search.workspace_id, article_search.vector)
  IS DISTINCT FROM (EXCLUDED.workspace_id, EXCLUDED.vector);

DROP TRIGGER article_search_update ON articles;  -- its condition reads the column
ALTER TABLE articles DROP COLUMN search;
-- A dropped column's values stay in every row (and TOAST) until the row is written again,
-- and articles are seldom written again: the table is rewritten without them (VACUUM FULL
-- cannot run in a transaction; CLUSTER of one table can). ~2 s per 50,000 articles.
CLUSTER articles USING articles_pkey;
ALTER TABLE articles SET WITHOUT CLUSTER;

DO $migration$
BEGIN
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION newsdesk_article_search_write() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO article_search (article_id, workspace_id, vector)
        VALUES (NEW.id, NEW.workspace_id, newsdesk_search_vector(
          NEW.language, NEW.title, NEW.byline, NEW.site_name, NEW.text));
      ELSE
        UPDATE article_search SET workspace_id = NEW.workspace_id, vector = newsdesk_search_vector(
          NEW.language, NEW.title, NEW.byline, NEW.site_name, NEW.text)
        WHERE article_id = NEW.id;
      END IF;
      RETURN NULL;
    END
    $body$;

    -- The vectors of those of `ids` that are articles of the bound workspace (of any,
    -- unbound), by primary key.
    CREATE FUNCTION newsdesk_article_vectors(ids bigint[])
    RETURNS TABLE (article_id bigint, vector tsvector)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I, pg_temp ROWS 200 AS $body$
      SELECT s.article_id, s.vector FROM article_search s
      WHERE s.article_id = ANY(ids) AND newsdesk_workspace_visible(s.workspace_id)
    $body$;

    -- One article's vector (NULL for another workspace's article).
    CREATE FUNCTION newsdesk_article_vector(id bigint) RETURNS tsvector
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = %I, pg_temp AS $body$
      SELECT s.vector FROM article_search s
      WHERE s.article_id = id AND newsdesk_workspace_visible(s.workspace_id)
    $body$;
  $f$, current_schema(), current_schema(), current_schema());
END
$migration$;

-- Only an update of what the vector is made of, and only when it changed: the analysis's
-- and the trash's updates, and a re-fetch with the same text, write no second row.
CREATE TRIGGER article_search_update
AFTER UPDATE OF workspace_id, language, title, byline, site_name, text ON articles
FOR EACH ROW
WHEN (OLD.workspace_id <> NEW.workspace_id
  OR newsdesk_search_config(OLD.language) <> newsdesk_search_config(NEW.language)
  OR (OLD.title, OLD.byline, OLD.site_name, OLD.text)
     IS DISTINCT FROM (NEW.title, NEW.byline, NEW.site_name, NEW.text))
EXECUTE FUNCTION newsdesk_article_search_write();

CREATE INDEX articles_live_language ON articles (workspace_id, language)
  WHERE deleted_at IS NULL;
"""


forwards = sql_migration(ID, DESCRIPTION, SQL)
